r"""Sphinx extension of the book: a light page, without fontawesome's JavaScript.

pydata-sphinx-theme (under sphinx-book-theme) puts ``<script defer src="_static/scripts/fontawesome.js">`` in
every page's head: 1.49 MB that turns ``<i class="fa-...">`` icons into inline SVG, more than the rest of a page
together. The theme's stylesheet already carries Font Awesome's CSS and web fonts (``.fa-solid``, ``.fa-brands``,
``_static/vendor/fontawesome/webfonts``), so the icons of the header and the sidebars render without it. The theme
has no option to leave the script out (it is written by a template macro), so this removes the tag from every
written page and the script from ``_static`` once the build has finished.

Two more things every page loaded and most do not need:

* **MathJax** (0.75 MB with its fonts' data): myst-nb asks Sphinx to put it on every page (outputs may hold math);
  it is kept only on pages whose doctree has equations or whose HTML body holds TeX delimiters (``\(``, ``\[``,
  ``$$``) or a ``math`` element.
* **Font Awesome's fonts** (0.27 MB: all 2 000 icons in fa-solid-900.woff2 and fa-brands-400.woff2, for the dozen
  icons of the header): after the build the fonts are cut down, with fontTools (a dependency of matplotlib), to the
  icons the written pages and the theme's scripts name (``fa-bars``, ``fa-github``, ...) and those the stylesheets
  draw themselves (admonition icons), and declared again in ``_static/fa-subset.css``, which comes after the theme's
  stylesheet, so its ``@font-face`` rules win (an icon missing from the cut fonts makes the browser fetch the
  theme's whole font, as before). Without fontTools the file is empty and the theme's fonts load as before.
* **searchindex.js** (the whole book's search index): pydata-sphinx-theme loads it on every page for a search as
  you type that the theme leaves off (``search_as_you_type = False``); the search page still loads it.
"""

import re
from pathlib import Path

from docutils import nodes

_SCRIPT = re.compile(
    r'[ \t]*(?:<!-- So that users can add custom icons -->\s*)?<script[^>]*src="[^"]*fontawesome\.js[^"]*"[^>]*>'
    r"</script>\n?"
)
_SEARCH_INDEX = re.compile(r'[ \t]*<script[^>]*src="[^"]*searchindex\.js[^"]*"[^>]*></script>\n?')
_TEX = re.compile(r'\\\(|\\\[|\$\$|class="[^"]*\bmath\b')


def _mathjax_where_math(app, pagename, templatename, context, doctree):
    """Leave MathJax (its configuration and startup script) out of a page without math."""
    if app.builder.format != "html" or not app.config.mathjax_path:
        return
    # the page's own doctree, not MathDomain.has_equations (true on a page whose toctree includes one with math)
    if doctree is not None and next(doctree.findall(lambda n: isinstance(n, (nodes.math, nodes.math_block))), None):
        return
    if _TEX.search(context.get("body", "")):
        return
    scripts = context.get("script_files")
    if scripts is None:
        return
    scripts[:] = [
        js
        for js in scripts
        if not str(getattr(js, "filename", "")).endswith(app.config.mathjax_path)
        and not getattr(js, "attributes", {}).get("body", "").startswith("window.MathJax")
    ]


def _drop_fontawesome_js(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    out = Path(app.outdir)
    for page in out.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        light = _SCRIPT.sub("", text)
        if page.name != "search.html":
            light = _SEARCH_INDEX.sub("", light)
        if light != text:
            page.write_text(light, encoding="utf-8")
    for f in (out / "_static" / "scripts").glob("fontawesome.js*"):
        f.unlink()


_FA_RULE = re.compile(r'((?:\.fa-[\w-]+:+before,?)+)\{content:"\\([0-9a-f]+)"\}')
_FA_FACES = {  # family, weight -> the theme's web font
    ("Font Awesome 6 Free", 900): "fa-solid-900",
    ("Font Awesome 6 Free", 400): "fa-regular-400",
    ("Font Awesome 6 Brands", 400): "fa-brands-400",
}


def _subset_fontawesome(out: Path) -> str:
    """Cut the theme's Font Awesome fonts down to the icons used; the CSS that declares them ("" if not possible)."""
    try:
        from fontTools import subset
        from fontTools.ttLib import TTFont
    except ImportError:
        return ""
    static = out / "_static"
    theme_css = static / "styles" / "pydata-sphinx-theme.css"
    fonts = static / "vendor" / "fontawesome" / "webfonts"
    if not theme_css.is_file() or not fonts.is_dir():
        return ""
    codes = {}  # icon name -> code point
    for names, code in _FA_RULE.findall(theme_css.read_text(encoding="utf-8")):
        for name in re.findall(r"\.(fa-[\w-]+):", names):
            codes[name] = int(code, 16)
    used = set()
    for page in [*out.rglob("*.html"), *static.rglob("*.js")]:
        used |= set(re.findall(r"\bfa-[a-z0-9-]+", page.read_text(encoding="utf-8", errors="ignore")))
    wanted = {codes[n] for n in used if n in codes}
    for sheet in static.rglob("*.css"):  # icons the stylesheets draw themselves (admonitions, external links, ...)
        text = sheet.read_text(encoding="utf-8", errors="ignore")
        wanted |= {ord(c) for c in re.findall("[\ue000-\uf8ff]", text)}  # --pst-icon-*: a literal code point
        if sheet != theme_css:  # the theme's own escapes are the .fa-X:before rules above
            wanted |= {int(h, 16) for h in re.findall(r'content:\s*"\\(f[0-9a-f]{3})"', text)}
    (static / "fa-subset").mkdir(exist_ok=True)
    css = []
    for (family, weight), name in _FA_FACES.items():
        source = fonts / f"{name}.ttf"
        if not source.is_file():
            return ""
        font = TTFont(source)
        glyphs = wanted & set(font.getBestCmap())
        options = subset.Options()
        options.flavor = "woff"  # zlib: woff2 needs the brotli package
        sub = subset.Subsetter(options)
        sub.populate(unicodes=sorted(glyphs) or [0x20])
        sub.subset(font)
        subset.save_font(font, str(static / "fa-subset" / f"{name}.woff"), options)
        css.append(
            f'@font-face{{font-display:block;font-family:"{family}";font-style:normal;font-weight:{weight};'
            f'src:url(fa-subset/{name}.woff) format("woff")}}'
        )
    return "/* Font Awesome cut down to the icons of this book (book/_ext/light_page.py) */\n" + "\n".join(css) + "\n"


def _light_fonts(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    out = Path(app.outdir)
    (out / "_static" / "fa-subset.css").write_text(_subset_fontawesome(out), encoding="utf-8")


def setup(app):
    app.add_css_file("fa-subset.css", priority=900)  # after the theme's stylesheet: its @font-face rules win
    app.connect("build-finished", _light_fonts)
    app.connect("build-finished", _drop_fontawesome_js)
    app.connect("html-page-context", _mathjax_where_math, priority=501)  # after sphinx.ext.mathjax's (500)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
