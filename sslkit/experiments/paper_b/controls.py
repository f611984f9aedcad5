"""Paper B's positive controls: the orderings of its own tables that each CPU stand-in of its experiments must show
before it may decide a claim (:mod:`sslkit.experiments.report.controls` says the rule and the gate). Chosen from
the paper's tables (numbers read from :mod:`sslkit.experiments.paper_numbers`), the uncontested effects only: the
SSL learner's, never RDSS's own claims."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from ..report.controls import Control, key, printed, shared
from . import ssl as L
from .experiments import PROXY, TABLE1, TABLE2, TABLE3, TABLE4_HEAD, TABLE5, TABLE6
from .experiments_lenet import TABLE1_LENET, TABLE3_LENET, TABLE4_LENET
from .ssl_protocols import LENET_CONFIRM_SEEDS, LENET_SEEDS


def _b1(algorithm, selector, m, **extra) -> dict:
    return printed("b_table1", algorithm=algorithm, selector=selector, dataset="CIFAR-10", m=m, **extra)


#: paper B's SSL learners (FlexMatch / FreeMatch): Table 1's uncontested orderings, and SSL above supervised
#: learning on more labels (Table 1's FlexMatch on 4 000 random labels against Table 2's supervised SL + RDSS on
#: 7 500): the arm ``algorithm = "Supervised"`` is a supervised learner on the same labels
_B_SSL = (
    Control(
        "B-ctl-freematch",
        "FreeMatch above FlexMatch at m = 40 (random labels)",
        "Table 1 (CIFAR-10, m = 40, Random)",
        {"algorithm": "FreeMatch", "selector": "Random", "m": 40},
        {"algorithm": "FlexMatch", "selector": "Random", "m": 40},
        (_b1("FreeMatch", "Random", 40), _b1("FlexMatch", "Random", 40)),
    ),
    Control(
        "B-ctl-ssl",
        "FlexMatch above a supervised learner on the same 40 random labels",
        "Table 1 (FlexMatch, 4 000 random labels) vs Table 2 (supervised SL + RDSS, 7 500 labels)",
        {"algorithm": "FlexMatch", "selector": "Random", "m": 40},
        {"algorithm": "Supervised", "selector": "Random", "m": 40},
        (
            _b1("FlexMatch", "Random", 4000),
            printed("b_table2", "acc", method="SL+RDSS", dataset="CIFAR-10", budget=7500),
        ),
    ),
    Control(
        "B-ctl-budget",
        "FlexMatch with 250 random labels above 40",
        "Table 1 (CIFAR-10, Random)",
        {"algorithm": "FlexMatch", "selector": "Random", "m": 250},
        {"algorithm": "FlexMatch", "selector": "Random", "m": 40},
        (_b1("FlexMatch", "Random", 250), _b1("FlexMatch", "Random", 40)),
    ),
)


def _b3(method, algorithm) -> float:
    return printed("b_table3", "acc", method=method, algorithm=algorithm)


_B_TABLE3 = tuple(
    Control(
        f"B3-ctl-freematch-{method.lower()}",
        f"FreeMatch above FlexMatch on {labels}",
        "Table 3 (CIFAR-10, 40 labels)",
        {"algorithm": "FreeMatch", "method": method},
        {"algorithm": "FlexMatch", "method": method},
        (_b3(method, "FreeMatch"), _b3(method, "FlexMatch")),
        scope={"protocol": "cpu"},
    )
    for method, labels in (("Random", "40 random labels"), ("MMA", "MMA's 40 labels"))
) + (
    replace(
        _B_SSL[1],
        id="B3-ctl-ssl",
        higher={"algorithm": "FlexMatch", "method": "Random"},
        lower={"algorithm": "Supervised", "method": "Random"},
        scope={"protocol": "cpu"},
    ),
)


def _b4(alpha, m) -> float:
    return printed("b_table4", alpha=alpha, dataset="CIFAR-10", m=m)


def _table4(metric: str, what: str, scope: Mapping) -> tuple:
    """More labels above fewer on Table 4's grid (``metric``: the records' accuracy, called ``what``), at RDSS's
    α and at α = 1 (plain kernel herding)."""
    return tuple(
        Control(
            f"B4-ctl-budget-{tag}",
            f"{what} at α = {alpha}: 250 labels above 40",
            f"Table 4 (CIFAR-10, α = {alpha})",
            {"alpha": alpha, "m": 250},
            {"alpha": alpha, "m": 40},
            (_b4(alpha, 250), _b4(alpha, 40)),
            scope=scope,
            metric=metric,
        )
        for tag, alpha in (("rdss", "1-1/sqrt(m)"), ("herding", "1"))
    )


#: Table 1's and Table 4's MLP heads run on two pools, each its own stand-in: the lossless 4 000-image subset (the
#: main grid, no ``pool`` key) and the paper's 50 000-image pool (the reading with ``pool = "full"``)
SUBSET, POOL = "4 000-image subset", "50 000-image pool"
_POOLS = ((SUBSET, None), (POOL, "full"))


def _pooled(controls: tuple, label: str, pool, **scope) -> tuple:
    return tuple(
        replace(c, id=f"{c.id}-{'pool' if pool else 'subset'}", scope={**scope, "pool": pool}, stand_in=label)
        for c in controls
    )


#: Table 1's stand-ins: FreeMatch above FlexMatch and SSL above supervised on each pool, more labels above fewer on
#: the pool that has Table 1's budgets (the subset's are 40 and 100; Table 1 has no 100 on CIFAR-10)
_B_TABLE1 = _pooled(_B_SSL[:2], SUBSET, None, dataset="cifar10") + _pooled(_B_SSL, POOL, "full", dataset="cifar10")
_B_TABLE4_HEAD = tuple(
    c
    for label, pool in _POOLS
    for c in shared(_pooled(_B_SSL[:2], label, pool, dataset="cifar10"), TABLE1, "cpu")
    + _pooled(_table4("test_acc", "accuracy", {}), label, pool)
)


# --- the LeNet stand-in of Table 1 (experiments.TABLE1_LENET) ----------------------------------------------


def _arm(algorithm: str, selector: str = "Random", m: int = 40) -> dict:
    return {"algorithm": algorithm, "selector": selector, "m": m}


def _t1(algorithm, selector, m) -> float:
    return L.PAPER_TABLE1_B[(algorithm, selector, f"CIFAR-10 @ {m}")][0]


def _t2(method, budget) -> float:
    from sslkit.experiments.paper_numbers import load

    (row,) = [r for r in load("b_table2") if (r["method"], r["dataset"], r["budget"]) == (method, "CIFAR-10", budget)]
    return row["acc"]


_SUPERVISED_7500 = "supervised SL + RDSS, 7 500 labels"
#: The LeNet stand-in's positive controls, chosen from the paper's tables before its records were read: orderings
#: any faithful SSL setup shows, each ``{id, text, where, higher, lower, paper}`` -- the data of a
#: :class:`sslkit.experiments.report.controls.Control`: the arm ``higher``'s test accuracy significantly above the
#: arm ``lower``'s, paired by seed (5 %), as the paper prints ``paper = (higher's number, lower's)`` (read from its
#: tables) at ``where``.
#:
#: FreeMatch's control was first FreeMatch above FlexMatch at m = 40 on random labels (Table 1's own cell). With
#: 14 seeds it was not shown (-0.00 points, 95 % CI -2.1 to +2.1): 40 labels are not scarce on MNIST (the
#: supervised arm reaches 70 % there; on CIFAR-10 it is far lower), so the gap the paper reports where labels are
#: scarcest has no room. The control was then moved -- before any record at m = 10 existed for the classes-balanced
#: labels -- to the stand-in's smallest budget, one label per class (Stratified, as paper B's Table 1 prints for
#: m = 40), the budget scaled to MNIST's ease that issue 44 asks for; random labels at m = 10 leave classes unlabeled
#: (4 and 7 of the 10 on the first two seeds, seen before the move) and so test class coverage, not the SSL
#: algorithm. The m = 40 ordering is still shown on the page.
LENET_CONTROLS = tuple(
    dict(zip(("id", "text", "where", "higher", "lower", "paper"), c))
    for c in (
        (
            "B-lenet-ctl-ssl",
            "FlexMatch above the supervised arm on the same 40 random labels",
            f"Table 1 (FlexMatch, 4 000 random labels) vs Table 2 ({_SUPERVISED_7500})",
            _arm("FlexMatch"),
            _arm("Supervised"),
            (_t1("FlexMatch", "Random", 4000), _t2("SL+RDSS", 7500)),
        ),
        (
            "B-lenet-ctl-ssl-rdss",
            "FreeMatch above the supervised arm on the same 40 RDSS labels",
            f"Table 6 (CIFAR-10: FreeMatch + RDSS, 40 labels) vs Table 2 ({_SUPERVISED_7500})",
            _arm("FreeMatch", "RDSS"),
            _arm("Supervised", "RDSS"),
            (_t1("FreeMatch", "RDSS", 40), _t2("SL+RDSS", 7500)),
        ),
        (
            "B-lenet-ctl-freematch",
            "FreeMatch above FlexMatch at the smallest budget, m = 10 (one label per class)",
            "Table 1 (CIFAR-10, m = 40, Stratified)",
            _arm("FreeMatch", "Stratified", 10),
            _arm("FlexMatch", "Stratified", 10),
            (_t1("FreeMatch", "Stratified", 40), _t1("FlexMatch", "Stratified", 40)),
        ),
        (
            "B-lenet-ctl-budget",
            "FlexMatch with 250 random labels above 40",
            "Table 1 (CIFAR-10, Random)",
            _arm("FlexMatch", m=250),
            _arm("FlexMatch"),
            (_t1("FlexMatch", "Random", 250), _t1("FlexMatch", "Random", 40)),
        ),
    )
)


#: the label of the LeNet stand-in's main reading (FreeMatch as USB runs it, its EMA momentum 0.999)
LENET_MAIN_STAND_IN = "main"
#: the label of the LeNet stand-in's second reading of FreeMatch (the reading ``freematch_ema`` of its grid)
LENET_EMA_STAND_IN = "freematch_ema"


def _with_ema(values: dict) -> dict:
    ema = L.LENET_FREEMATCH_EMA if values["algorithm"] == "FreeMatch" else None
    return {**values, "freematch_ema": ema}


#: The reading's controls: the same four orderings, its FreeMatch arms those with FreeMatch's EMA at
#: :data:`~.ssl.LENET_FREEMATCH_EMA` (FlexMatch and the supervised arm have no such EMA: their records are shared)
LENET_EMA_CONTROLS = tuple(
    {
        **c,
        "id": f"{c['id']}-ema",
        "higher": _with_ema(c["higher"]),
        "lower": _with_ema(c["lower"]),
        "seeds": LENET_CONFIRM_SEEDS if c["id"] == "B-lenet-ctl-freematch" else LENET_SEEDS,
    }
    for c in LENET_CONTROLS
)

#: Tables 3 and 4 on the LeNet stand-in train the learner of the reading ``freematch_ema`` (the same network, views,
#: schedule, pool and FreeMatch): they share its four controls, read on ``b_table1_lenet``'s records; Table 4 keeps
#: its three SSL controls and puts more labels above fewer on its own grid (at two alphas) in place of the fourth
_LENET_LEARNER = shared(tuple(Control(**c) for c in LENET_EMA_CONTROLS), TABLE1_LENET, "cpu")


#: the controls of paper B's stand-ins, by ``"<experiment>/<scale>"`` (:func:`~..report.controls.key`)
CONTROLS: dict = {
    key(TABLE1, "cpu"): _B_TABLE1,
    # the end-to-end LeNet stand-in (MNIST): its controls are the data LENET_CONTROLS above
    # labelled "main", and its reading "freematch_ema" (FreeMatch's EMA scaled to the schedule) as a stand-in of its own
    key(TABLE1_LENET, "cpu"): tuple(
        Control(**c, scope={"freematch_ema": None}, seeds=LENET_SEEDS, stand_in=LENET_MAIN_STAND_IN)
        for c in LENET_CONTROLS
    )
    + tuple(Control(**c, stand_in=LENET_EMA_STAND_IN) for c in LENET_EMA_CONTROLS),
    key(TABLE3_LENET, "cpu"): _LENET_LEARNER,
    key(TABLE4_LENET, "cpu"): _LENET_LEARNER[:3] + _table4("test_acc", "accuracy", {}),
    key(TABLE2, "cpu"): tuple(
        Control(
            f"B2-ctl-{m.lower()}",
            f"{m} above CoreSet at the largest budget",
            "Table 2 (CIFAR-10, 10 000 labels)",
            {"method": m},
            {"method": "CoreSet"},
            tuple(printed("b_table2", "acc", method=x, dataset="CIFAR-10", budget=10000) for x in (m, "CoreSet")),
            scope={"protocol": "cpu"},
        )
        for m in ("MCDAL", "VAAL")
    ),
    key(TABLE3, "cpu"): _B_TABLE3,
    # Table 4's heads are Table 1's learner: Table 1's SSL controls, and more labels above fewer on its own records
    key(TABLE4_HEAD, "paper"): _B_TABLE4_HEAD,
    key(PROXY, "paper"): _table4("proxy_acc", "proxy accuracy", {}),
    # a timing stand-in: the orderings Table 5's complexity column makes certain (an O(mn) or O(mnT) selector
    # against an O(n) one), not the ones that depend on each implementation's constants
    key(TABLE5, "paper"): tuple(
        Control(
            f"B5-ctl-{slow.lower()}-{fast.lower()}",
            f"{slow} selection slower than {fast}",
            "Table 5 (n = 50 000, m = 400)",
            {"selector": slow},
            {"selector": fast},
            (printed("b_table5", "seconds", selector=slow), printed("b_table5", "seconds", selector=fast)),
            scope={"part": "timing", "n": 50000, "m": 400},
            metric="seconds",
        )
        for slow, fast in (("RDSS", "Random"), ("k-Means", "Stratified"))
    ),
    key(TABLE6, "cpu"): tuple(replace(c, scope={"dataset": "mnist"}) for c in _B_SSL[:2]),
}
