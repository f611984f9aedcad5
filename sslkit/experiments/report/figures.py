"""The book's figures: at most two panels per row, labels of at least 9 pt at the content column's width.

The content column of the book is about 7.5 inches wide at 1280 px, so a figure made 7.5 inches wide is shown at
about its own size and its 10 pt labels stay 10 pt. Pages glue the figure (``myst_nb.glue``) and show it with a
numbered caption (``{glue:figure}``)."""

from __future__ import annotations

import math

WIDTH_IN = 7.5  # the content column at 1280 px, in inches at the notebook's 100 dpi (with margins)
STYLE = {
    "font.size": 10,
    "axes.titlesize": 10,
    "axes.labelsize": 10,
    "legend.fontsize": 9,
    "xtick.labelsize": 9,
    "ytick.labelsize": 9,
}


def panels(n: int, *, per_row: int = 2, height: float = 3.2, **subplot_kw):
    """A figure of ``n`` panels, at most ``per_row`` (≤ 2) per row, ``WIDTH_IN`` wide, the book's font sizes.

    Returns ``(fig, axes)`` with ``axes`` a flat list of the ``n`` panels in reading order (unused grid cells are
    removed). ``subplot_kw`` goes to :func:`matplotlib.pyplot.subplots` (e.g. ``sharey=True``)."""
    import matplotlib.pyplot as plt

    if not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be a positive number of panels, got {n!r}")
    if per_row not in (1, 2):
        raise ValueError(f"per_row must be 1 or 2 (the book's rule: at most two panels per row), got {per_row!r}")
    cols = min(per_row, n)
    rows = math.ceil(n / cols)
    with plt.rc_context(STYLE):
        fig, grid = plt.subplots(
            rows, cols, figsize=(WIDTH_IN if cols == 2 else WIDTH_IN * 0.7, height * rows), squeeze=False, **subplot_kw
        )
    axes = list(grid.ravel())
    for ax in axes[n:]:
        fig.delaxes(ax)
    for ax in axes[:n]:  # the style applies to what is drawn later too
        ax.title.set_fontsize(STYLE["axes.titlesize"])
        ax.xaxis.label.set_fontsize(STYLE["axes.labelsize"])
        ax.yaxis.label.set_fontsize(STYLE["axes.labelsize"])
        ax.tick_params(labelsize=STYLE["xtick.labelsize"])
    return fig, axes[:n]
