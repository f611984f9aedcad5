"""Sphinx extension of the book: launch buttons (Colab) only on pages Colab can open.

sphinx-book-theme adds a launch button to every page with a kernelspec; the book's own ``book/*.md`` pages have
one (they execute small glue cells) but no ``.ipynb`` twin, so their Colab link would open a ``.md`` file, which
Colab cannot open. This removes the launch buttons from every page without a committed ``.ipynb`` beside its
source (issue 21).
"""

from pathlib import Path


def _drop_launch_buttons(app, pagename, templatename, context, doctree):
    if Path(app.srcdir, pagename).with_suffix(".ipynb").is_file():
        return
    buttons = context.get("header_buttons")
    if buttons:
        buttons[:] = [b for b in buttons if b.get("label") != "launch-buttons"]


def setup(app):
    app.connect("html-page-context", _drop_launch_buttons, priority=502)  # after the theme's (501)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
