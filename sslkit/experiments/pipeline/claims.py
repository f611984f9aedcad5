"""The chapter's claims (:class:`~sslkit.experiments.report.ledger.Claim`): not a paper's, the book's own about the
three stages chained (issue 24), tested on the records of :data:`.experiments.PIPELINE` by the one verdict rule
(:mod:`sslkit.experiments.report.stats`). The arms and methods of one seed share their data and initial weights,
so every comparison is paired by seed. Each claim is judged per method (FreeMatch, Ours (Iter), Ours (EC)): it
holds when it holds for every method that ran."""

from __future__ import annotations

import functools

from ..report.ledger import NOT_RUN, Claim, all_of, pairs_verdict, per_seed
from ..report.stats import not_below
from .experiments import PAPER, PIPELINE

#: the scorecard item of the chapter (its notebook's target)
ITEM = "All three together"
#: "not less accurate": the 95 % interval of (arm − none) must lie above −MARGIN points
MARGIN = 2.0


def arm_values(records, metric: str = "test_acc") -> dict:
    """``{method: {arm: {seed: metric}}}`` of the records."""
    return {m: arms for (m,), arms in per_seed(records, ("method",), "arm", metric).items()}


def higher(records, a: str, b: str, metric: str, what: str, *, lower_is_better: bool = False):
    """Arm ``a`` significantly above arm ``b`` in ``metric`` for every method (below, with ``lower_is_better``)."""
    rows = arm_values(records, metric)
    pairs = [(m, *((v[b], v[a]) if lower_is_better else (v[a], v[b]))) for m, v in rows.items() if a in v and b in v]
    return pairs_verdict(pairs, what)


def not_less_accurate(records, arm: str):
    """Arm ``arm``'s accuracy not below ``none``'s, per method -- the book's one margin rule
    (:func:`~sslkit.experiments.report.stats.not_below`): holds when for every method the 95 % interval of the
    difference lies above −:data:`MARGIN` points, does not hold when for some method it lies wholly below it, not
    resolved otherwise. A significant drop inside the margin is what "not less accurate" at that margin allows."""
    rows = arm_values(records)
    judged = [(m, *not_below(v[arm], v["none"], MARGIN, label=m)) for m, v in rows.items() if arm in v and "none" in v]
    if not judged:
        return NOT_RUN, f"no {arm} run beside a none run"
    verdict = all_of(v for _, v, _ in judged)
    text = f"{arm} minus none, test accuracy (points), margin {MARGIN:g}: " + "; ".join(
        f"{m} {c.short()} [{v}]" for m, v, c in judged
    )
    return verdict, text


def _claim(id_, quote, test, fn) -> Claim:
    return Claim(id_, PAPER, ITEM, "", "this chapter", quote, test, (PIPELINE,), fn)


CLAIMS = (
    _claim(
        "P-B-acc",
        "Labels chosen by RDSS give a more accurate model than random labels.",
        "B against none: test accuracy significantly higher, for every method",
        functools.partial(higher, a="B", b="none", metric="test_acc", what="RDSS labels against random labels"),
    ),
    _claim(
        "P-C-time",
        "Training on Retrieve's coreset takes less CPU time than training on the full unlabeled set.",
        "C against none: CPU seconds (selections included) significantly lower, for every method",
        functools.partial(
            higher, a="C", b="none", metric="cpu_seconds", what="CPU seconds, C below none", lower_is_better=True
        ),
    ),
    _claim(
        "P-BC-acc",
        "All three together (B+C) are not less accurate than none of the stages.",
        f"B+C against none: the 95 % interval of the test accuracy difference above −{MARGIN:g} points for every "
        "method (non-inferiority, the book's one margin rule)",
        functools.partial(not_less_accurate, arm="B+C"),
    ),
    _claim(
        "P-BC-time",
        "All three together (B+C) take less CPU time than none of the stages, selections included.",
        "B+C against none: CPU seconds (label and coreset selections included) significantly lower, for every method",
        functools.partial(
            higher, a="B+C", b="none", metric="cpu_seconds", what="CPU seconds, B+C below none", lower_is_better=True
        ),
    ),
)
OPEN_ITEMS: tuple = ()
