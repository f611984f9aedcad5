"""Sphinx extension of the book: a light page, without fontawesome's JavaScript.

pydata-sphinx-theme (under sphinx-book-theme) puts ``<script defer src="_static/scripts/fontawesome.js">`` in
every page's head: 1.49 MB that turns ``<i class="fa-...">`` icons into inline SVG, more than the rest of a page
together. The theme's stylesheet already carries Font Awesome's CSS and web fonts (``.fa-solid``, ``.fa-brands``,
``_static/vendor/fontawesome/webfonts``), so the icons of the header and the sidebars render without it. The theme
has no option to leave the script out (it is written by a template macro), so this removes the tag from every
written page and the script from ``_static`` once the build has finished.
"""

import re
from pathlib import Path

_SCRIPT = re.compile(
    r'[ \t]*(?:<!-- So that users can add custom icons -->\s*)?<script[^>]*src="[^"]*fontawesome\.js[^"]*"[^>]*>'
    r"</script>\n?"
)


def _drop_fontawesome_js(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    out = Path(app.outdir)
    for page in out.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        light = _SCRIPT.sub("", text)
        if light != text:
            page.write_text(light, encoding="utf-8")
    for f in (out / "_static" / "scripts").glob("fontawesome.js*"):
        f.unlink()


def setup(app):
    app.connect("build-finished", _drop_fontawesome_js)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
