"""The book's figure helpers: the panel grid, and the paper's values marked at the right coordinates."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
from matplotlib.colors import to_rgba  # noqa: E402

from sslkit.experiments.report.figures import legend_with_paper, mark_paper, panels, paper_marks  # noqa: E402


def test_panels_at_most_two_per_row():
    fig, axes = panels(3)
    assert len(axes) == 3 and len(fig.axes) == 3
    assert len({round(ax.get_position().x0, 3) for ax in axes}) == 2  # two columns, the third panel below
    with pytest.raises(ValueError, match="per_row"):
        panels(2, per_row=3)
    plt.close("all")


def test_hollow_markers_at_the_papers_points():
    fig, ax = plt.subplots()
    ax.plot([1, 2, 3], [5, 6, 7], "o-", color="C2", label="ours")
    drawn = mark_paper(ax, [1.5, 2.5], [4.0, 6.5], color="C2", connect=True)
    assert paper_marks(ax) == [(1.5, 4.0), (2.5, 6.5)]
    (line,) = drawn
    assert line.get_markerfacecolor() == "none" and line.get_linestyle() == "--"
    assert to_rgba(line.get_color()) == to_rgba("C2")
    leg = legend_with_paper(ax)
    assert [t.get_text() for t in leg.get_texts()] == ["ours", "paper"]
    plt.close(fig)


def test_short_lines_centred_on_the_bars():
    fig, ax = plt.subplots()
    ax.bar([0, 1], [80, 90], 0.4, color="C1", label="ours")
    mark_paper(ax, [0, 1], [85.5, 91.25], color="C1", width=0.4)
    assert paper_marks(ax) == [(0.0, 85.5), (1.0, 91.25)]
    for line in ax.get_lines():
        xs, ys = line.get_data()
        assert xs[1] - xs[0] == pytest.approx(0.4) and ys[0] == ys[1]
    plt.close(fig)


def test_no_marks_no_paper_entry_and_bad_input():
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1], label="ours")
    assert paper_marks(ax) == []
    assert [t.get_text() for t in legend_with_paper(ax).get_texts()] == ["ours"]
    with pytest.raises(ValueError, match="same length"):
        mark_paper(ax, [0, 1], [1], color="k")
    with pytest.raises(ValueError, match="width"):
        mark_paper(ax, [0], [1], color="k", width=0)
    plt.close(fig)
