"""book/_ext/light_page.py: what it removes from a written page, where it keeps MathJax, and the Font Awesome subset."""

import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "book" / "_ext"))

import light_page  # noqa: E402

HEAD = """  <link rel="preload" as="script" href="../_static/scripts/bootstrap.js?digest=55c2" />
  <!-- So that users can add custom icons -->
  <script defer src="../_static/scripts/fontawesome.js?digest=55c26ed414f5f8a31ebb"></script>
    <script src="../_static/searchtools.js"></script>
    <script src="../searchindex.js"></script>
"""


def test_fontawesome_script_and_search_index_tags_are_removed_and_nothing_else():
    light = light_page._SEARCH_INDEX.sub("", light_page._SCRIPT.sub("", HEAD))
    assert "fontawesome" not in light and "custom icons" not in light and "searchindex" not in light
    assert "bootstrap.js" in light and "searchtools.js" in light  # the other assets stay


@pytest.mark.parametrize(
    "body, has_math",
    [
        (r'<span class="math notranslate nohighlight">\(x\)</span>', True),
        (r'<div class="math notranslate nohighlight">\[ R(g) \]</div>', True),
        ("<p>$$ a^2 $$</p>", True),
        ('<section class="tex2jax_ignore mathjax_ignore"><p>costs $5, see mathematics.html</p></section>', False),
    ],
)
def test_tex_in_a_body_is_found_and_mathjax_class_names_are_not_math(body, has_math):
    assert bool(light_page._TEX.search(body)) is has_math


def test_fontawesome_fonts_are_cut_to_the_icons_a_page_names(tmp_path):
    pydata = pytest.importorskip("pydata_sphinx_theme")
    pytest.importorskip("fontTools")
    from fontTools.ttLib import TTFont

    static = Path(pydata.__file__).parent / "theme" / "pydata_sphinx_theme" / "static"
    out = tmp_path / "html"
    shutil.copytree(static / "styles", out / "_static" / "styles")
    shutil.copytree(static / "vendor", out / "_static" / "vendor")
    (out / "page.html").write_text('<i class="fa-solid fa-bars"></i> <i class="fa-brands fa-github"></i>')
    css = light_page._subset_fontawesome(out)
    assert css.count("@font-face") == 3 and 'font-family:"Font Awesome 6 Free"' in css
    solid = TTFont(out / "_static" / "fa-subset" / "fa-solid-900.woff")
    brands = TTFont(out / "_static" / "fa-subset" / "fa-brands-400.woff")
    assert 0xF0C9 in solid.getBestCmap() and 0xF09B in brands.getBestCmap()  # fa-bars, fa-github
    assert len(solid.getBestCmap()) < 40  # the two named and the stylesheets' own, not the 1 400 of the font
    whole = (out / "_static" / "vendor" / "fontawesome" / "webfonts" / "fa-solid-900.woff2").stat().st_size
    assert (out / "_static" / "fa-subset" / "fa-solid-900.woff").stat().st_size < whole / 20
