"""Paper A's experiments, one :class:`~sslkit.experiments.runs.experiment.Experiment` per results folder (the
catalog, :mod:`sslkit.experiments.catalog`, collects them).

Every grid here is what the notebook of the experiment runs at that scale; its options narrow it the way the
notebook's parameters do (``datasets``: the rows whose data can be loaded here). Data: each configuration names
its dataset; the CIFAR-10 tasks read the JPEG q75 copy of the project's data folder (the official archive is
not in it), which :func:`dataset_of` says.
"""

from __future__ import annotations

from ..runs.experiment import DETERMINISTIC, DIAGNOSTIC, PAPER_PROTOCOL, QUICK, Experiment, Reading, Scale
from ..runs.replay import MEASURED, ONE_THREAD_STEPS
from . import appendix as A
from . import variance as V
from .protocol import (
    IMAGE,
    PROTOCOL_VERSION,
    TABLE1_DATASETS,
    TABLE2_DATASETS,
)
from .runs import (
    ITER_VARIANTS,
    REGIME_ORDERS,
    SUPERVISED_TERMS,
    grid_of,
    run_iter_variant,
    run_one,
    run_order_variant,
    run_supervised_term_variant,
    settings_of,
    supervised_baseline_run,
)

#: the copy of a dataset the committed records read, where it is not the paper's
COPIES = {"cifar_cvd": "cifar_cvd/jpeg", "cifar10": "cifar10/jpeg", "digits0-6": "digits"}


def dataset_of(config) -> str:
    """The dataset a paper-A configuration uses (``"<dataset>/<copy>"`` for the JPEG copy of CIFAR-10)."""
    return COPIES.get(config["dataset"], config["dataset"])


def _scales(quick_grid, paper_grid, quick_seeds, paper_seeds, fixed=None, data=dataset_of, **paper) -> dict:
    fixed = fixed or (lambda scale: {"scale": scale})
    return {
        "quick": Scale(QUICK, quick_grid, tuple(quick_seeds), data, fixed=fixed("quick")),
        "paper": Scale(
            paper.pop("kind", PAPER_PROTOCOL), paper_grid, tuple(paper_seeds), data, fixed=fixed("paper"), **paper
        ),
    }


# --- Tables 1-2 ---------------------------------------------------------------------------------------------

TABLE1_QUICK = ("breast_cancer", "banknote")
TABLE2_QUICK = ("dry_bean", "shuttle", "digits")
TABLE2_QUICK_SETTINGS = {
    "dry_bean": ("Sev. (140)",),
    "shuttle": ("Bal. (70)",),
    "digits": ("Bal. (200)",),
    "covertype": ("Bal. (70)",),
    "mnist": ("Bal. (200)",),
}


def _narrow(grid: list[dict], settings, table: str, datasets) -> list[dict]:
    """The rows of ``grid`` whose setting is in ``settings`` (None: all); a setting no row of the table's
    ``datasets`` has is an error naming the table's settings (never an empty grid run silently)."""
    if settings is None:
        return grid
    settings = [settings] if isinstance(settings, str) else list(settings)
    known = sorted({s for d in datasets for s in settings_of(d)})
    bad = sorted(set(settings) - set(known))
    if bad:
        raise ValueError(f"{table} has no setting {bad}; its settings: {known}")
    return [g for g in grid if g["setting"] in settings]


def table1_configs(scale: str, datasets=None, settings=None) -> list[dict]:
    """Table 1: quick -- two settings, PL / VAT's middle value, the image rows at (15,45) only. ``settings`` narrows
    the grid to some of the paper's settings (e.g. more seeds of (100,100) only:
    ``sslkit run a_table1 --scale paper -o 'settings=["(100,100)"]'``); a setting no row has is an error."""
    if scale == "quick":
        grid = grid_of(TABLE1_QUICK if datasets is None else datasets, ("(15,45)", "(100,100)"), hyper="first")
        grid = [g for g in grid if not (g["dataset"] in IMAGE and g["setting"] != "(15,45)")]
    else:
        grid = grid_of(TABLE1_DATASETS if datasets is None else datasets, hyper=True)
    return _narrow(grid, settings, "Table 1", TABLE1_DATASETS)


def table2_configs(scale: str, datasets=None, settings=None) -> list[dict]:
    """Table 2: quick -- one setting per dataset (:data:`TABLE2_QUICK_SETTINGS`), PL / VAT's middle value.
    ``settings`` narrows the grid as Table 1's (e.g. ``-o 'settings=["Bal. (200)"]'``)."""
    if scale == "quick":
        grid = grid_of(TABLE2_QUICK if datasets is None else datasets, hyper="first")
        grid = [g for g in grid if g["setting"] in TABLE2_QUICK_SETTINGS.get(g["dataset"], ())]
    else:
        grid = grid_of(TABLE2_DATASETS if datasets is None else datasets, hyper=True)
    return _narrow(grid, settings, "Table 2", (*TABLE2_DATASETS, *TABLE2_QUICK))


def iter_configs(scale: str) -> list[dict]:
    rows = [("breast_cancer", "(30,30)")] if scale == "quick" else [("adult", "(100,100)"), ("adult", "(50,150)")]
    return [{"dataset": d, "setting": s, "variant": v} for d, s in rows for v in ITER_VARIANTS]


def order_configs(scale: str) -> list[dict]:
    rows = ("Sev. (140)",) if scale == "quick" else ("Sev. (140)", "Sev. (350)")
    return [{"dataset": "dry_bean", "setting": s, "order": o} for s in rows for o in REGIME_ORDERS]


def supterm_configs(scale: str, datasets=None) -> list[dict]:
    """PL and VAT with the PN risk as their supervised term: Table 2's Shuttle and Dry Bean rows of the scale's
    grid, and Table 1's balanced rows of Credit (quick) / Adult and Credit (paper)."""
    term = SUPERVISED_TERMS[1]
    t2 = [
        g
        for g in table2_configs(scale, datasets)
        if g["method"] in ("PL", "VAT") and g["dataset"] in ("shuttle", "dry_bean")
    ]
    quick = scale == "quick"
    t1 = [
        d for d in (("credit_default",) if quick else ("adult", "credit_default")) if datasets is None or d in datasets
    ]
    settings = ("(30,30)",) if quick else ("(30,30)", "(100,100)")
    t1_grid = grid_of(t1, settings, ("PL", "VAT"), hyper="first" if quick else True)
    return [{**g, "term": term} for g in t2 + t1_grid]


TABLE1 = Experiment(
    name="a_table1",
    paper="A",
    notebook="a_table1",
    title="Table 1: binary tasks, Sup. / PNU / Ours (Iter) / PL / VAT",
    run=run_one,
    scales=_scales(
        lambda datasets=None, settings=None: table1_configs("quick", datasets, settings),
        lambda datasets=None, settings=None: table1_configs("paper", datasets, settings),
        range(2),
        range(30),
    ),
    version=PROTOCOL_VERSION,
    pick_by=("method",),
)
TABLE1_ITER = Experiment(
    name="a_table1_iter",
    paper="A",
    notebook="a_table1",
    title="Ours (Iter) on Adult under one change at a time (correction rules, a* at the actual n_U, warm-up kept)",
    run=run_iter_variant,
    scales=_scales(lambda: iter_configs("quick"), lambda: iter_configs("paper"), range(1), range(10), kind=DIAGNOSTIC),
    version=PROTOCOL_VERSION,
    pick_by=("variant",),
)
TABLE2 = Experiment(
    name="a_table2",
    paper="A",
    notebook="a_table2",
    title="Table 2: multiclass tasks, Sup. / Ours (Iter) / Ours (EC) / PL / VAT",
    run=run_one,
    scales=_scales(
        lambda datasets=None, settings=None: table2_configs("quick", datasets, settings),
        lambda datasets=None, settings=None: table2_configs("paper", datasets, settings),
        range(2),
        range(30),
    ),
    version=PROTOCOL_VERSION,
    pick_by=("method",),
)
TABLE2_ORDER = Experiment(
    name="a_table2_order",
    paper="A",
    notebook="a_table2",
    title="Sup. on Dry Bean's severe rows under three class orders",
    run=run_order_variant,
    scales=_scales(lambda: order_configs("quick"), lambda: order_configs("paper"), range(1), range(5), kind=DIAGNOSTIC),
    version=PROTOCOL_VERSION,
    pick_by=("order",),
)
TABLE2_SUPTERM = Experiment(
    name="a_table2_supterm",
    paper="A",
    notebook="a_table2",
    title="PL and VAT with the prior-weighted PN risk as their supervised term",
    run=run_supervised_term_variant,
    scales=_scales(
        lambda datasets=None: supterm_configs("quick", datasets),
        lambda datasets=None: supterm_configs("paper", datasets),
        range(2),
        range(30),
        kind=DIAGNOSTIC,
    ),
    version=PROTOCOL_VERSION,
    pick_by=("method",),
)

# --- Appendix D: FixMatch (Table 3), ablations (Tables 4-10) -----------------------------------------------

FIXMATCH_QUICK = ("breast_cancer", "banknote", "digits")
FIXMATCH_QUICK_SETTINGS = {
    "breast_cancer": ("Imb. (60)",),
    "banknote": ("Imb. (60)",),
    "digits": ("Bal. (200)",),
    "adult": ("Imb. (60)",),
    "credit_default": ("Imb. (60)",),
    "mnist_4v9": ("Imb. (60)",),
    "mnist": ("Bal. (200)",),
}
CLASS_ORDER_PROBE = "class-order probe"


def fixmatch_configs(scale: str, datasets=None) -> list[dict]:
    """Table 3: every threshold on the paper's rows (quick: one row per dataset)."""
    if datasets is None:
        datasets = FIXMATCH_QUICK if scale == "quick" else A.TABLE3_DATASETS
    grid = []
    for d in datasets:
        rows = [s for (dd, s) in A.PAPER_TABLE3 if dd == d]
        if scale == "quick":
            rows = list(FIXMATCH_QUICK_SETTINGS.get(d, rows[:1]))
        grid += [
            {"experiment": "fixmatch", "dataset": d, "setting": s, "threshold": t}
            for s in rows
            for t in A.FIXMATCH_THRESHOLDS
        ]
    return grid


def probe_configs(datasets=None) -> list[dict]:
    """FixMatch's Imb. (60) row with both class orders ([15, 45] ours, [45, 15] the loader's), τ = 0.95."""
    return [
        {"experiment": "fixmatch", "dataset": d, "setting": counts, "threshold": 0.95}
        for d in ("adult", "credit_default")
        if datasets is None or d in datasets
        for counts in ([15, 45], [45, 15])
    ]


#: quick scale of the ablations: (dataset, setting) rows per table (digits stands in for MNIST)
ABLATION_QUICK_ROWS = {
    4: (("digits", "Bal. (200)"),),
    5: (("dry_bean", "Sev. (140)"),),
    6: (("breast_cancer", "(15,45)"), ("banknote", "(15,45)")),
    7: (),
    8: (("digits", "Bal. (200)"),),
    9: (),
    10: (("dry_bean", "Sev. (140)"),),
}
ABLATION_QUICK_COV_SIZES = (1, 5)


def ablation_configs(scale: str, tables=None, datasets=None) -> list[dict]:
    """Tables 4-10 (``tables``: a subset); quick: :data:`ABLATION_QUICK_ROWS`, where Table 5's Dry Bean row
    becomes digits when ``datasets`` (those that load here) lacks Dry Bean."""
    unknown = [t for t in tables or () if t not in range(4, 11)]
    if unknown:
        raise ValueError(f"tables must be among the ablation tables 4-10, got {unknown}")
    grid = []
    for table in tables or range(4, 11):
        if scale != "quick":
            grid += [g for g in A.table_grid(table) if datasets is None or g["dataset"] in datasets]
            continue
        rows = ABLATION_QUICK_ROWS[table]
        if table == 5 and datasets is not None and "dry_bean" not in datasets:
            rows = (("digits", "Bal. (200)"),)
        for d, s in rows:
            if datasets is not None and d not in datasets:
                continue
            if table == 4:
                grid += [
                    {"experiment": "cov_size", "dataset": d, "setting": s, "cov_per_class": c}
                    for c in ABLATION_QUICK_COV_SIZES
                ]
            elif table == 5:
                grid.append({"experiment": "ec_diag", "dataset": d, "setting": s})
            else:
                grid += [{"experiment": "nn", "dataset": d, "setting": s, "nn": m} for m in A.NN_MODES]
    return grid


FIXMATCH = Experiment(
    name="a_fixmatch",
    paper="A",
    notebook="a_fixmatch",
    title="Table 3 (App. D.1): FixMatch and its threshold",
    run=A.run_config,
    scales=_scales(
        lambda datasets=None: fixmatch_configs("quick", datasets),
        lambda datasets=None: fixmatch_configs("paper", datasets),
        range(2),
        range(30),
        readings=(
            Reading(CLASS_ORDER_PROBE, probe_configs, kind=DIAGNOSTIC, note="labeled counts in both class orders"),
        ),
    ),
    version=A.PROTOCOL_VERSION,
    pick_by=("setting",),
)
ABLATIONS = Experiment(
    name="a_ablations",
    paper="A",
    notebook="a_ablations",
    title="Tables 4-10 (App. D.2-D.4): covariance-set size, equal-covariance diagnostic, the nn correction",
    run=A.run_config,
    scales=_scales(
        lambda tables=None, datasets=None: ablation_configs("quick", tables, datasets),
        lambda tables=None, datasets=None: ablation_configs("paper", tables, datasets),
        range(2),
        range(30),
    ),
    version=A.PROTOCOL_VERSION,
    pick_by=("experiment", "nn"),
)

# --- §6.1 Figure 1, Appendix B, the supervised baseline ----------------------------------------------------


def figure1_configs(scale: str, datasets=("gaussian", "credit_default")) -> list[dict]:
    n_u = (50, 200, 1000) if scale == "quick" else V.FIGURE1_N_UNLABELED
    losses = ("bce", "zero_one")
    return [
        {"dataset": d, "loss": loss, "theta1": th, "n_unlabeled": n}
        for d in datasets
        for loss in losses
        for th in V.FIGURE1_THETAS
        for n in n_u
    ]


def appendix_b_configs(scale: str, datasets=("dry_bean", "covertype", "digits0-6")) -> list[dict]:
    n_u = (100, 2000) if scale == "quick" else V.APPENDIX_B_N_UNLABELED
    return [{"dataset": d, "prior": p, "n_unlabeled": n} for d in datasets for p in V.APPENDIX_B_PRIORS for n in n_u]


def _trials(scale: str) -> dict:
    return {"trials": 1000 if scale == "quick" else V.FIGURE1_TRIALS}


FIGURE1 = Experiment(
    name="a_figure1",
    paper="A",
    notebook="a_figure1",
    title="Figure 1 (§6.1): variance ratios of PNU and lin(a*) against PN, by Monte Carlo",
    run=V.figure1_run,
    scales=_scales(
        lambda datasets=("gaussian", "credit_default"): figure1_configs("quick", datasets),
        lambda datasets=("gaussian", "credit_default"): figure1_configs("paper", datasets),
        (0,),
        (0,),
        fixed=_trials,
    ),
    version=V.PROTOCOL_VERSION,
    replay=DETERMINISTIC,
    replay_tol=1e-6,
    replay_note=(
        "g is a logistic regression fitted by float64 SGD over a seeded permutation (convex, 100 epochs), then "
        "Monte Carlo sums over fixed numpy draws and the closed-form a*: float64 rounding only; "
        f"{MEASURED}: max 2e-15; about 1e-9 on another AVX2 EPYC"
    ),
    pick_by=("dataset", "loss"),
)
#: App. B's metrics computed from the float32 network's losses (the ones that moved: :data:`ONE_THREAD_STEPS`); the
#: chosen ``PN_a``, ``pool_accuracy`` and ``trials`` stay exact
APPENDIX_B_DRIFT = frozenset(
    [f"PN_{m}" for m in ("mean", "mean_se", "var", "var_se", "var_theory", "var_theory_inf")]
    + [
        f"{est}_{m}"
        for est in ("lin", "lin_nU")
        for m in ("a", "mean", "mean_se", "ratio", "ratio_se", "ratio_theory", "var", "var_se", "var_theory")
        + ("var_theory_inf",)
    ]
    + ["risk"]
)
APPENDIX_B = Experiment(
    name="a_appendix_b",
    paper="A",
    notebook="a_appendix_b",
    title="Appendix B: lin(a*)/PN of cross-entropy on multiclass data, uniform and skewed priors",
    run=V.appendix_b_run,
    scales=_scales(
        lambda datasets=("dry_bean", "covertype", "digits0-6"): appendix_b_configs("quick", datasets),
        lambda datasets=("dry_bean", "covertype", "digits0-6"): appendix_b_configs("paper", datasets),
        (0,),
        (0,),
        fixed=_trials,
    ),
    version=V.PROTOCOL_VERSION,
    replay=DETERMINISTIC,
    replay_tol=1e-5,
    replay_note=(
        "g is a float32 MLP (Adam; early stopping on the accuracy of 60 validation rows, a discrete rule that "
        "rounding does not reach); its losses move by float32 rounding (about 1e-7 relative) and the Monte Carlo "
        f"sums and the a* solve carry that: {MEASURED}: max 1.1e-7 (dry_bean, no SIMD)"
    ),
    drift=(APPENDIX_B_DRIFT, 1e-6, ONE_THREAD_STEPS),
    pick_by=("dataset",),
)
BASELINE_SETTINGS = ((5, 5), (10, 10), (15, 45), (30, 30), (50, 150), (100, 100))


def baseline_configs(datasets=("breast_cancer", "banknote")) -> list[dict]:
    return [{"dataset": d, "n1": n1, "n2": n2} for d in datasets for n1, n2 in BASELINE_SETTINGS]


SUPERVISED_BASELINE = Experiment(
    name="supervised_baseline",
    paper="A",
    notebook="supervised_baseline",
    title="A supervised MLP on a few labels: the baseline of Table 1's tabular rows",
    run=supervised_baseline_run,
    scales=_scales(baseline_configs, baseline_configs, range(5), range(30), fixed=lambda scale: {}),
    version=PROTOCOL_VERSION,
    pick_by=("dataset",),
)

EXPERIMENTS = (
    TABLE1,
    TABLE1_ITER,
    TABLE2,
    TABLE2_ORDER,
    TABLE2_SUPTERM,
    FIXMATCH,
    ABLATIONS,
    FIGURE1,
    APPENDIX_B,
    SUPERVISED_BASELINE,
)
