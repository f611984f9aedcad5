"""Paper B's experiments, one :class:`~sslkit.experiments.runs.experiment.Experiment` per results folder (the
catalog, :mod:`sslkit.experiments.catalog`, collects them). Where a scale changes the paper's data, learner or
budget it is a CPU stand-in, and ``data`` says what it reads (scikit-learn's digits for Table 4's proxy, the
lossless 4 000-image CIFAR-10 subset for the MLP heads, MNIST for the active-learning loop, synthetic features for
the timings)."""

from __future__ import annotations

from ..runs.experiment import (
    CHAOTIC,
    DETERMINISTIC,
    DIAGNOSTIC,
    PAPER_PROTOCOL,
    QUICK,
    STAND_IN,
    Experiment,
    Reading,
    Scale,
)
from ..runs.replay import KERNEL_SUMS, MEASURED
from . import active as A
from . import runs as R
from . import selection as S
from . import ssal as SA
from . import ssl as L
from .drift import KERNEL_EXP2
from .experiments_lenet import TABLE1_LENET, TABLE3_LENET, TABLE4_LENET
from .grids import table1_full_pool_configs, table1_narrow, table1_paper_configs, table1_quick_configs

# --- Figures 2-3: the selection experiments on synthetic data -----------------------------------------------

#: Figure 2's second reading of "the alpha is set by m/n" (App. D.1): alpha = m/n literally, beside the main
#: grid's alpha = 1 - 1/sqrt(m) (§7.1's rule)
FIGURE2_ALPHA_MN = "alpha = m/n"
FIGURE2_MN_NOTE = "App. D.1 read literally: alpha = m/n (0.01 to 0.2), far below §6's interval [1 - 1/sqrt(m), 1)"

FIGURE2 = Experiment(
    name="b_figure2",
    paper="B",
    notebook="b_figure2",
    title="Figure 2 (App. D.1): GKHR against GKH on the toy distributions",
    run=S.figure2_run,
    scales={
        scale: Scale(
            kind,
            lambda scale=scale: S.figure2_grid(scale)[0],
            tuple(S.figure2_grid(scale)[1]),
            "synthetic",
            readings=(
                Reading(FIGURE2_ALPHA_MN, lambda scale=scale: S.figure2_alpha_grid(scale), note=FIGURE2_MN_NOTE),
            ),
        )
        for scale, kind in (("quick", QUICK), ("paper", PAPER_PROTOCOL))
    },
    version=S.PROTOCOL_VERSION,
    replay=DETERMINISTIC,
    replay_tol=1e-9,
    replay_note=f"GKH / GKHR selections and Gaussian-kernel sums on float64 synthetic data; {MEASURED}: max 7e-15, "
    "the same selections",
    drift=({"D", "D1", "D2"}, 1e-9, KERNEL_SUMS),
    pick_by=("distribution",),
)
FIGURE3 = Experiment(
    name="b_figure3",
    paper="B",
    notebook="b_figure3",
    title="Figure 3 (App. D.3): how representative each selector's 100 of 5 000 points are",
    run=S.figure3_run,
    scales={
        "quick": Scale(QUICK, lambda: [{"selector": s} for s in S.FIGURE3_SELECTORS], (0,), "synthetic"),
        "paper": Scale(PAPER_PROTOCOL, lambda: [{"selector": s} for s in S.FIGURE3_SELECTORS], range(5), "synthetic"),
    },
    version=S.PROTOCOL_VERSION,
    replay=DETERMINISTIC,
    replay_tol=1e-9,
    replay_note=f"every selector on float64 GMM data, then kernel sums; {MEASURED}: max 1.4e-13, the same indices",
    drift=({"alpha_mmd2", "mmd2"}, 1e-9, KERNEL_SUMS),
    pick_by=("selector",),
)

# --- Table 1: selection then FlexMatch / FreeMatch --------------------------------------------------------


def _head_data(config) -> str:
    if config["dataset"] != "cifar10":
        return config["dataset"]
    return "cifar10/jpeg" if config.get("pool") == "full" else "cifar10/lossless"


#: Table 1's CPU stand-in on the paper's whole CIFAR-10 pool (a reading of the cpu scale): the same head, selectors
#: and algorithms on EfficientNet-Lite0 features of all 50 000 training images (the lossy JPEG copy), tested on all
#: 10 000 test images, at the paper's three CIFAR-10 budgets
FULL_POOL = "50 000-image pool"
FULL_POOL_NOTE = (
    "the paper's CIFAR-10 pool (50 000 training images, from the lossy JPEG q75 copy) and budgets 40 / 250 / 4 000; "
    "still an MLP head on frozen EfficientNet-Lite0 features for 300 steps, not a WRN-28-2 for 2^20 steps"
)
#: what a pool record's rerun pays beyond its stored seconds: the pool's features, extracted once per machine
FULL_POOL_COST = (
    "EfficientNet-Lite0 features of the 60 000 JPEG images, extracted once per machine and memoised "
    "(about 45-50 min on two CPU cores, measured)"
)


_HEAD_EXTRA = {
    "note": "CPU stand-in (MLP head on frozen features), not the paper's protocol",
    "protocol": L.HEAD_PROTOCOL,
}
TABLE1 = Experiment(
    name="b_table1",
    paper="B",
    notebook="b_table1",
    title="Table 1: the selectors' labeled sets under FlexMatch and FreeMatch",
    run=R.table1_head_run,
    scales={
        "quick": Scale(QUICK, table1_quick_configs, (0,), _head_data, extra=_HEAD_EXTRA),
        "cpu": Scale(
            STAND_IN,
            lambda selectors=None, budgets=None: table1_narrow(
                table1_quick_configs(("cifar10",), "efficientnet_lite0"), selectors, budgets
            ),
            range(5),
            _head_data,
            readings=(Reading(FULL_POOL, table1_full_pool_configs, note=FULL_POOL_NOTE, unstored_cost=FULL_POOL_COST),),
            file="cpu_efficientnet",
            extra=_HEAD_EXTRA,
            threads=2,
            note="an MLP head on frozen EfficientNet-Lite0 features of the lossless CIFAR-10 subset, not a WRN",
        ),
        "paper": Scale(
            PAPER_PROTOCOL,
            table1_paper_configs,
            range(5),
            lambda c: L.TABLE1_DATASETS[c["dataset"]],
            run=R.table1_paper_run,
            gpu=True,
        ),
    },
    version=L.PROTOCOL_VERSION,
    replay_note=(
        "EfficientNet-Lite0 features that each platform extracts itself (float32 convolutions) and a head trained "
        "by SGD on them"
    ),
    drift=({"alpha_mmd2"}, 1e-5, KERNEL_SUMS),
    pick_by=("algorithm",),
)
# --- Table 4: the alpha of RDSS ---------------------------------------------------------------------------

PROXY_BUDGETS = {"quick": (40, 100), "paper": (40, 100, 250)}
PROXY = Experiment(
    name="b_table4_proxy",
    paper="B",
    notebook="b_table4",
    title="Table 4's alphas: the selection measures and a supervised proxy on scikit-learn's digits",
    run=S.table4_proxy_run,
    scales={
        scale: Scale(
            kind,
            lambda scale=scale: [{"alpha": a, "m": m} for a in S.TABLE4_ALPHAS for m in PROXY_BUDGETS[scale]],
            seeds,
            "digits",
            fixed={"dataset": "digits"},
            note="selection measures and a supervised proxy on scikit-learn's 8x8 digits, not FreeMatch on CIFAR",
        )
        for scale, kind, seeds in (("quick", QUICK, range(3)), ("paper", STAND_IN, range(10)))
    },
    version=S.PROTOCOL_VERSION,
    replay=DETERMINISTIC,
    replay_tol=1e-9,
    replay_note=(
        "GKHR on float64 digits features, kernel sums and a logistic-regression proxy accuracy (sklearn, float64); "
        f"{MEASURED}: max 6.4e-13, the same selections and accuracies"
    ),
    drift=({"alpha_mmd2", "alpha_mmd2_rdss", "mmd2"}, 1e-9, KERNEL_SUMS),
    pick_by=("alpha",),
)
#: the head protocol's data per scale (Part 1b of the page): MNIST pixels at quick scale, the lossless CIFAR-10
#: subset with EfficientNet-Lite0 features at paper scale (its budgets that fit a pool of 4 000); the pools are
#: :data:`~.runs.HEAD_DATA`'s
HEAD = {
    "quick": dict(dataset="mnist", extractor="pixels_pca", pca_dim=50),
    "paper": dict(dataset="cifar10", extractor="efficientnet_lite0", pca_dim=50),
}
HEAD_BUDGETS = {"quick": (40,), "paper": (40, 250)}


def _table4_data(config) -> str:
    return "cifar10/jpeg" if config.get("pool") == "full" else "cifar10/lossless"


def table4_full_pool_configs() -> list[dict]:
    """Table 4's stand-in on the paper's whole CIFAR-10 pool (a reading, as Table 1's): every alpha at the
    paper's three CIFAR-10 budgets."""
    return [{"alpha": a, "m": m, "pool": "full"} for a in S.TABLE4_ALPHAS for m in S.TABLE4_BUDGETS["CIFAR-10"]]


TABLE4_HEAD = Experiment(
    name="b_table4_head",
    paper="B",
    notebook="b_table4",
    title="Table 4's alphas under FreeMatch on frozen features (an MLP head on a CPU)",
    run=R.table4_head_run,
    scales={
        scale: Scale(
            kind,
            lambda scale=scale: [{"alpha": a, "m": m} for a in S.TABLE4_ALPHAS for m in HEAD_BUDGETS[scale]],
            seeds,
            "mnist" if scale == "quick" else _table4_data,
            fixed=HEAD[scale],
            readings=()
            if scale == "quick"
            else (Reading(FULL_POOL, table4_full_pool_configs, note=FULL_POOL_NOTE, unstored_cost=FULL_POOL_COST),),
            note="an MLP head on frozen EfficientNet features trained by FreeMatch, not a WRN",
        )
        for scale, kind, seeds in (("quick", QUICK, range(1)), ("paper", STAND_IN, range(5)))
    },
    version=S.PROTOCOL_VERSION,
    replay_note=(
        "EfficientNet-Lite0 features that each platform extracts itself (float32 convolutions) and a head trained "
        "by SGD on them"
    ),
    drift=({"alpha_mmd2", "mmd2"}, 1e-6, KERNEL_EXP2),
)
TABLE4_SSL = Experiment(
    name="b_table4_ssl",
    paper="B",
    notebook="b_table4",
    title="Table 4 at the paper's protocol: FreeMatch on WRN-28-2 (a GPU job)",
    run=S.table4_ssl_run,
    scales={
        "paper": Scale(
            PAPER_PROTOCOL,
            lambda: [{"alpha": a, "m": m} for a in S.TABLE4_ALPHAS for m in S.TABLE4_BUDGETS["CIFAR-10"]],
            range(5),
            "cifar10",
            gpu=True,
        )
    },
    version=S.PROTOCOL_VERSION,
)

# --- Table 5: timings, and the official code's defects ----------------------------------------------------

TIMING = {"quick": {"n": 5000, "m": 400, "d": 512}, "paper": {"n": 50000, "m": 400, "d": 512}}
TIMING_ORDER = ("Random", "Stratified", "RDSS", "k-Means", "USL", "ActiveFT")  # cheapest first
DEFECTS_READING = "the official code's defects B1 / B2"


def timing_configs(scale: str) -> list[dict]:
    return [{"part": "timing", "selector": s, **TIMING[scale]} for s in TIMING_ORDER]


def defect_configs(scale: str) -> list[dict]:
    d = R.DEFECTS[scale]
    return [
        {"part": "defects", "features": f, "bandwidth": b, "m": m, "n_pool": d["n_pool"]}
        for m in d["budgets"]
        for f in ("pretrained", "random_init")
        for b in ("median", "fixed")
    ]


def _table5_data(config) -> str:
    return "synthetic" if config["part"] == "timing" else "cifar10/lossless"


TABLE5 = Experiment(
    name="b_table5",
    paper="B",
    notebook="b_table5",
    title="Table 5 (App. D.4): selection times, and what the official code's defects do to a selection",
    run=R.table5_run,
    scales={
        scale: Scale(
            kind,
            lambda scale=scale: timing_configs(scale),
            (0, 1, 2),  # the paper averages three runs
            _table5_data,
            fixed={"scale": scale},
            readings=(Reading(DEFECTS_READING, lambda scale=scale: defect_configs(scale), kind=DIAGNOSTIC),),
            note="synthetic 512-d features, three runs per selector on the 2-core CPU" if scale == "paper" else "",
        )
        for scale, kind in (("quick", QUICK), ("paper", STAND_IN))
    },
    version=L.PROTOCOL_VERSION,
    replay=CHAOTIC,
    replay_note=(
        "GKHR selections on EfficientNet-Lite0 features that each platform extracts itself (float32 convolutions, "
        "about 1e-6 relative), where one flipped near-tie changes the selection and every metric after it (its "
        "timing records store only sizes)"
    ),
    drift=({"alpha_mmd2", "mmd2"}, 1e-5, KERNEL_SUMS),
    pick_by=("part",),
)

# --- Tables 2, 3, 6 (§7.3, App. D.5-D.6): RDSS against active learning and semi-supervised active learning ------

WHOLE_READING = "the whole pool"
_AL_SEEDS = {"quick": (0, 1), "cpu": range(5), "paper": range(3)}
_AL_DATA = {"quick": "digits", "cpu": "mnist", "paper": "cifar10"}
_AL_NOTE = (
    "MNIST (pool: the first 10 000 training images; test: all 10 000) and paper A's LeNet trained from scratch "
    "at lr 0.01, budgets 60 -> 90 -> 120 (the paper's ratio 1 : 1.5 : 2), RDSS on 50 principal components of the "
    "pixels, a smaller VAAL; not ResNet-18 on CIFAR-10 at 5 000 -> 7 500 -> 10 000"
)


def _al_scale(scale: str, kind: str) -> Scale:
    return Scale(
        kind,
        lambda scale=scale: A.table2_grid(scale),
        _AL_SEEDS[scale],
        _AL_DATA[scale],
        readings=(
            Reading(
                WHOLE_READING,
                lambda scale=scale: A.table2_grid(scale, (A.WHOLE,)),
                note="the paper's last row: the model trained on every pool image (the upper bound, not a selection)",
            ),
        ),
        threads=None if scale == "paper" else 1,
        gpu=scale == "paper",
        note=_AL_NOTE if kind == STAND_IN else "",
    )


TABLE2 = Experiment(
    name="b_table2",
    paper="B",
    notebook="b_table2",
    title="Table 2 (§7.3, App. D.5): SL + RDSS against CoreSet, VAAL, LearnLoss and MCDAL",
    run=A.table2_run,
    scales={s: _al_scale(s, k) for s, k in (("quick", QUICK), ("cpu", STAND_IN), ("paper", PAPER_PROTOCOL))},
    version=A.PROTOCOL_VERSION,
    replay_note="a LeNet trained by SGD from scratch in every AL round, each round's pick made by that model",
    pick_by=("method",),
    by_seed=True,
)

_SSAL_SEEDS = {"quick": (0, 1), "cpu": range(10), "paper": range(3)}
_SSAL_DATA = {"quick": "digits", "cpu": "cifar10/lossless", "paper": "cifar10"}
TABLE3 = Experiment(
    name="b_table3",
    paper="B",
    notebook="b_table3",
    title="Table 3 (§7.3): RDSS against CoreSetSSL, MMA, CBSSAL and TOD-Semi at 40 labels (20 random + 20 selected)",
    run=SA.table3_run,
    scales={
        s: Scale(
            k,
            lambda s=s: SA.table3_grid(s),
            _SSAL_SEEDS[s],
            _SSAL_DATA[s],
            threads=None if s == "paper" else 1,
            gpu=s == "paper",
            note="Table 1's CPU stand-in: an MLP head on frozen EfficientNet-Lite0 features of the lossless CIFAR-10 "
            "subset (4 000 pool / 1 000 test images), 300 SGD steps; not WRN-28-2 for 2^20 steps on 50 000 images"
            if k == STAND_IN
            else "",
        )
        for s, k in (("quick", QUICK), ("cpu", STAND_IN), ("paper", PAPER_PROTOCOL))
    },
    version=A.PROTOCOL_VERSION,
    replay_note="SSL heads trained by SGD, and the SSAL picks made by the first one",
    pick_by=("method",),
    by_seed=True,
)


def table6_configs(dataset: str, al_methods=()) -> list[dict]:
    """SSL with 40 labels (RDSS or Random) on ``dataset``, then the AL runs of ``al_methods`` (quick scale)."""
    ssl = [
        {"dataset": dataset, "algorithm": a, "selector": s, "m": SA.TABLE6_BUDGET}
        for a in SA.SSL_ALGORITHMS
        for s in ("RDSS", "Random")
    ]
    return ssl + [{"dataset": dataset, "method": m} for m in al_methods]


TABLE6 = Experiment(
    name="b_table6",
    paper="B",
    notebook="b_table6",
    title="Table 6 and Figures 4-5 (App. D.6): SSL + RDSS with 40 labels beside the AL runs of Table 2",
    run=SA.table6_run,
    scales={
        "quick": Scale(QUICK, lambda: table6_configs("digits", ("CoreSet", "MCDAL")), (0, 1), "digits", threads=1),
        "cpu": Scale(
            STAND_IN,
            lambda: table6_configs("mnist"),
            range(5),
            "mnist",
            threads=1,
            note="FlexMatch / FreeMatch as an MLP head on 50 principal components of MNIST's pixels (Table 1's head "
            "protocol) on Table 2's CPU pool, beside its LeNet AL runs; not WRN-28-2 on CIFAR-10",
        ),
        "paper": Scale(
            PAPER_PROTOCOL,
            lambda: [
                {"dataset": "CIFAR-10", "extractor": "clip_vit_b32", "selector": s, "algorithm": a, "m": 40}
                for a in SA.SSL_ALGORITHMS
                for s in ("RDSS", "Random")
            ],
            range(5),
            "cifar10",
            run=R.table1_paper_run,
            gpu=True,
            note="Table 1's paper protocol at 40 CIFAR-10 labels (the SSL cells of Table 6)",
        ),
    },
    version=A.PROTOCOL_VERSION,
    replay_note="SSL heads trained by SGD",
    drift=({"alpha_mmd2"}, 1e-5, KERNEL_EXP2),
    pick_by=("selector",),
    uses=("b_table2",),
)

EXPERIMENTS = (FIGURE2, FIGURE3, TABLE1, TABLE1_LENET, TABLE2, TABLE3, PROXY, TABLE4_HEAD, TABLE4_SSL)
EXPERIMENTS += (TABLE3_LENET, TABLE4_LENET, TABLE5, TABLE6)
