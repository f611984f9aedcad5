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


PAPER_LABEL = "paper"  # the legend entry of every mark :func:`mark_paper` draws
PAPER_GID = "paper"  # the artists' gid, so a test (or a page) can find the marks: :func:`paper_marks`


def mark_paper(ax, x, y, *, color, width: float | None = None, connect: bool = False):
    """Mark the paper's printed values on ``ax`` in ``color`` (the colour of our curve or bar they belong to).

    ``width=None``: a hollow circle at each ``(x[i], y[i])``, joined by a dashed line when ``connect``.
    ``width=w``: a short dashed horizontal line from ``x[i] - w/2`` to ``x[i] + w/2`` at height ``y[i]`` (a bar's
    printed value, over the bar). The artists carry the gid :data:`PAPER_GID` and no legend label:
    :func:`legend_with_paper` adds one "paper" entry. Returns the list of artists drawn."""
    x, y = list(map(float, x)), list(map(float, y))
    if len(x) != len(y):
        raise ValueError(f"x and y must have the same length, got {len(x)} and {len(y)}")
    if width is not None and not width > 0:
        raise ValueError(f"width must be positive (or None for markers), got {width!r}")
    if width is None:
        (line,) = ax.plot(
            x, y, "o", ls="--" if connect else "none", color=color, mfc="none", mew=1.5, ms=7, zorder=3, label="_paper"
        )
        artists = [line]
    else:
        style = {"ls": "--", "color": color, "lw": 1.8, "zorder": 3, "label": "_paper"}
        artists = [ax.plot([xi - width / 2, xi + width / 2], [yi, yi], **style)[0] for xi, yi in zip(x, y)]
    for a in artists:
        a.set_gid(PAPER_GID)
    return artists


def paper_marks(ax) -> list[tuple[float, float]]:
    """The ``(x, y)`` of every paper value marked on ``ax`` by :func:`mark_paper` (a short line: its centre)."""
    out = []
    for line in ax.get_lines():
        if line.get_gid() != PAPER_GID:
            continue
        xs, ys = (list(map(float, v)) for v in line.get_data())
        if line.get_marker() in ("o",):
            out += list(zip(xs, ys))
        else:
            out.append(((xs[0] + xs[-1]) / 2, ys[0]))
    return out


def legend_with_paper(ax, *, where=None, **legend_kw):
    """``ax``'s legend (or, with ``where`` a figure, a figure legend of ``ax``'s entries) with one more entry,
    "paper", drawn in grey as :func:`mark_paper` draws (hollow circle or dashed line), when ``ax`` has marks."""
    from matplotlib.lines import Line2D

    handles, labels = ax.get_legend_handles_labels()
    marks = [a for a in ax.get_lines() if a.get_gid() == PAPER_GID]
    if marks:
        hollow = marks[0].get_marker() == "o"
        handles.append(
            Line2D([], [], color="0.3", marker="o" if hollow else None, mfc="none", ls="none" if hollow else "--")
        )
        labels.append(PAPER_LABEL)
    return (where or ax).legend(handles, labels, **legend_kw)
