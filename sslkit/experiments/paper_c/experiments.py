"""Paper C's experiments, one :class:`~sslkit.experiments.runs.experiment.Experiment` per results folder (the
catalog, :mod:`sslkit.experiments.catalog`, collects them). Each scale's data is the protocol's dataset
(:data:`.tradeoff.PROTOCOLS`, :data:`.robust.PROTOCOLS`); ``cpu`` is the MNIST stand-in, run with one thread."""

from __future__ import annotations

from ..runs.experiment import DIAGNOSTIC, PAPER_PROTOCOL, QUICK, STAND_IN, Experiment, Reading, Scale
from . import lastlayer as LL
from . import memory as M
from . import robust as R
from . import tradeoff as T
from . import variants as V
from .experiments_cifar10 import ROBUST_CIFAR10
from .readings import MEAN1, MEAN1_NOTE

ALGORITHMS = ("vat", "mean_teacher", "fixmatch")
#: the protocols of each scale of the trade-off grid, with the algorithms the paper runs on them
TRADEOFF_PLANS = {
    "quick": (("quick", ALGORITHMS),),
    "cpu": (("cpu", ALGORITHMS),),
    "paper": (("paper_cifar10", ALGORITHMS), ("paper_svhn", ("vat", "mean_teacher"))),
}
ROBUST_PLANS = {
    "quick": ("quick", "quick_imbalance"),
    "cpu": ("cpu", "cpu_imbalance", "cpu_long", "cpu_val", "cpu_val_em"),
    "paper": ("paper_mnist_ood", "paper_cifar10_ood", "paper_cifar10_imbalance"),
}
#: the single protocol of the experiments that run one (variants, per-class Retrieve, extended and Bayesian runs)
PROTOCOL_OF = {"quick": "quick", "cpu": "cpu", "paper": "paper_cifar10"}
SEEDS = {"quick": (0,), "cpu": range(5), "paper": range(3)}
#: the algorithms of Figure 7 (variants) and Figures 8-9 (extended runs): the paper's VAT and Mean Teacher panels;
#: VAT only at quick scale (CI's budget)
FIGURE7_ALGORITHMS = {"quick": ("vat",), "cpu": ("vat", "mean_teacher"), "paper": ("vat", "mean_teacher")}
#: what the committed CPU records store beside their metrics (they ran on one thread)
_CPU_EXTRA = {"data": "MNIST (full IDX files)", "threads": 1}


def _tradeoff_data(config) -> str:
    return T.PROTOCOLS[config["protocol"]]["dataset"]


def _robust_data(config) -> str:
    return R.PROTOCOLS[config["protocol"]]["dataset"]


def tradeoff_configs(scale: str, algorithms=None, methods=T.METHODS) -> list[dict]:
    """The main grid of the trade-off experiment at ``scale`` (``algorithms``: a subset of each protocol's)."""
    return [
        c
        for protocol, algos in TRADEOFF_PLANS[scale]
        for c in T.tradeoff_grid(
            protocol, tuple(a for a in algos if algorithms is None or a in algorithms), methods=methods
        )
    ]


def mean1_configs(protocol: str = "cpu") -> list[dict]:
    """CRAIG and GradMatch with ``normalize_weights`` at every budget, for every algorithm."""
    return [
        {"protocol": protocol, "algorithm": a, "method": m, "fraction": f, "normalize_weights": True}
        for a in ALGORITHMS
        for f in T.FRACTIONS
        for m in ("craig", "gradmatch")
    ]


def robust_configs(scale: str, protocols=None, methods=None, ratios=None) -> list[dict]:
    """The scale's robust grid; ``protocols`` / ``methods`` / ``ratios`` (a ratio or a list) narrow it (e.g. more
    seeds of one method, or the positive controls' ratio first)."""
    plan = ROBUST_PLANS[scale]
    bad = sorted(set(protocols or ()) - set(plan))
    if bad:
        raise ValueError(f"c_robust at scale {scale!r} has no protocol {bad}; its protocols: {list(plan)}")
    grid = [
        c
        for protocol in protocols or plan
        for c in (R.robust_grid(protocol, methods=methods) if methods else R.robust_grid(protocol))
    ]
    return R.narrow_ratios(grid, ratios)


def robust_mean1_configs(protocol: str = "cpu") -> list[dict]:
    return [dict(c, normalize_weights=True) for c in R.robust_grid(protocol) if c["method"] == "crust"]


#: CRUST without its MixUp on the robust CPU stand-in (§4, Figure 6 d: "the performance gain due to MixUP for coreset
#: selection in the SSL setting is minimal"; claim C-R-mixup)
NO_MIXUP = "CRUST without MixUp"
NO_MIXUP_NOTE = "CRUST's coresets trained with plain VAT instead of VAT on mixed-up unlabeled batches"


def robust_nomixup_configs(protocol: str = "cpu") -> list[dict]:
    return R.robust_grid(protocol, methods=R.ABLATIONS)


#: the schedule-length study of the robust CPU stand-in: Full VAT with T doubled (issue 23)
SCHEDULE = "Full VAT, longer schedules"
SCHEDULE_NOTE = (
    f"Full VAT alone at OOD ratio {R.SCHEDULE_RATIO:g}, trained for T = {', '.join(map(str, R.SCHEDULE_EPOCHS))} "
    "epochs instead of the stand-in's 4 (the cosine schedule spans each T): is the stand-in's VAT converged?"
)


def robust_schedule_configs(protocol: str = "cpu") -> list[dict]:
    return [
        {"protocol": protocol, "method": "vat", "ratio": R.SCHEDULE_RATIO, "fraction": None, "epochs": T}
        for T in R.SCHEDULE_EPOCHS
    ]


def bayesian_configs(scale: str, *, with_shared: bool = True) -> list[dict]:
    """Figure 5: VAT's Full and Retrieve runs at 20 and 30 % and the Bayesian coreset under both readings of its
    weights (raw GIGA weights, and scaled to mean 1); ``with_shared=False`` leaves out Full and Retrieve (at the
    cpu scale they are the trade-off grid's committed runs)."""
    p, fractions = PROTOCOL_OF[scale], (0.2, 0.3)
    grid = [{"protocol": p, "algorithm": "vat", "method": "full", "fraction": 1.0}] if with_shared else []
    if with_shared:
        grid += [{"protocol": p, "algorithm": "vat", "method": "retrieve", "fraction": f} for f in fractions]
    return grid + [
        {"protocol": p, "algorithm": "vat", "method": "bayesian", "fraction": f, **extra}
        for f in fractions
        for extra in ({}, {"normalize_weights": True})
    ]


def memory_configs(scale: str) -> list[dict]:
    """App. I's memory claim: VAT's Full run and Retrieve at every budget of the trade-off grid."""
    p = PROTOCOL_OF[scale]
    return [{"protocol": p, "algorithm": "vat", "method": "full", "fraction": 1.0}] + [
        {"protocol": p, "algorithm": "vat", "method": "retrieve", "fraction": f} for f in T.FRACTIONS
    ]


def lastlayer_configs(scale: str) -> list[dict]:
    """§3.4's last-layer claim: one Retrieve selection per budget of the trade-off grid, made with last-layer and
    with full-model gradients from one model (:mod:`.lastlayer`)."""
    return [{"protocol": PROTOCOL_OF[scale], "fraction": f} for f in T.FRACTIONS]


def _scales(configs, kinds=None, data=_tradeoff_data, readings=None, gpu_paper=True, seeds=SEEDS) -> dict:
    """The quick / cpu / paper scales of a paper-C experiment whose grid at each scale is ``configs(scale)``."""
    kinds = kinds or {"quick": QUICK, "cpu": STAND_IN, "paper": PAPER_PROTOCOL}
    out = {}
    for scale, kind in kinds.items():
        out[scale] = Scale(
            kind=kind,
            grid=lambda scale=scale, **options: configs(scale, **options),
            seeds=tuple(seeds[scale]),
            data=data,
            readings=(readings or {}).get(scale, ()),
            extra=_CPU_EXTRA if scale == "cpu" else {},
            threads=1 if scale != "paper" else None,
            gpu=gpu_paper and scale == "paper",
        )
    return out


TRADEOFF = Experiment(
    name="c_tradeoff",
    paper="C",
    notebook="c_tradeoff",
    title="Figure 4 (a-f), Tables 5-10: accuracy against speed-up of Retrieve and the other coresets",
    run=T.tradeoff_run,
    scales=_scales(
        tradeoff_configs,
        readings={"cpu": (Reading(MEAN1, mean1_configs, note=MEAN1_NOTE),)},
    ),
    version=T.PROTOCOL_VERSION,
    by_seed=True,
    pick_by=("algorithm",),
)

VARIANTS = Experiment(
    name="c_variants",
    paper="C",
    notebook="c_variants",
    title="Figure 7 (App. G.1) and CORDS' choices D3/D4: Retrieve without warm start, with CORDS' equations",
    run=T.tradeoff_run,
    scales=_scales(
        lambda scale, algorithms=None: V.variant_grid(PROTOCOL_OF[scale], algorithms or FIGURE7_ALGORITHMS[scale]),
        kinds={"quick": QUICK, "cpu": STAND_IN},
        seeds={"quick": (0,), "cpu": range(3)},
    ),
    version=T.PROTOCOL_VERSION,
    by_seed=True,
    uses=("c_tradeoff",),
)

EXTENDED = Experiment(
    name="c_extended",
    paper="C",
    notebook="c_tradeoff",
    title="Figure 4 (g-h), Figures 8-9 (App. G.3): Retrieve trained twice as long as its budget",
    run=T.tradeoff_run,
    scales=_scales(
        lambda scale: V.extended_grid(PROTOCOL_OF[scale], FIGURE7_ALGORITHMS[scale]),
        kinds={"quick": QUICK, "cpu": STAND_IN, "paper": PAPER_PROTOCOL},
        seeds={"quick": (0,), "cpu": range(3), "paper": range(3)},
    ),
    version=T.PROTOCOL_VERSION,
    by_seed=True,
    uses=("c_tradeoff",),
)

PER_CLASS = Experiment(
    name="c_perclass",
    paper="C",
    notebook="c_variants",
    title="Per-class Retrieve (not in the paper): one selection per class of the pseudo-labels",
    run=T.tradeoff_run,
    scales=_scales(
        lambda scale: [
            {"protocol": PROTOCOL_OF[scale], "algorithm": "vat", "method": "retrieve_per_class", "fraction": f}
            for f in T.FRACTIONS
        ],
        kinds={"quick": QUICK, "cpu": DIAGNOSTIC},
        seeds={"quick": (0,), "cpu": range(3)},
    ),
    version=T.PROTOCOL_VERSION,
    by_seed=True,
    uses=("c_tradeoff",),
)

BAYESIAN = Experiment(
    name="c_bayesian",
    paper="C",
    notebook="c_bayesian",
    title="Figure 5: the SSL extension of the Bayesian coreset (GIGA), raw and normalised weights",
    run=T.tradeoff_run,
    scales=_scales(
        lambda scale, with_shared=None: bayesian_configs(
            scale, with_shared=scale != "cpu" if with_shared is None else with_shared
        ),
        seeds={"quick": (0, 1, 2), "cpu": range(3), "paper": range(3)},
    ),
    version=T.PROTOCOL_VERSION,
    by_seed=True,
    uses=("c_tradeoff",),
)

ROBUST = Experiment(
    name="c_robust",
    paper="C",
    notebook="c_robust",
    title="Figure 6, Tables 11-13: robust SSL with OOD and imbalanced unlabeled data",
    run=R.robust_run,
    scales=_scales(
        robust_configs,
        data=_robust_data,
        readings={
            "cpu": (
                Reading(MEAN1, robust_mean1_configs, note=MEAN1_NOTE),
                Reading(NO_MIXUP, robust_nomixup_configs, note=NO_MIXUP_NOTE),
                Reading(SCHEDULE, robust_schedule_configs, kind=DIAGNOSTIC, note=SCHEDULE_NOTE),
            )
        },
        seeds={"quick": (0, 1, 2), "cpu": range(5), "paper": range(3)},
    ),
    version=R.PROTOCOL_VERSION,
    by_seed=True,
)

MEMORY = Experiment(
    name="c_memory",
    paper="C",
    notebook="c_tradeoff",
    title="App. I: peak memory of Retrieve against Full (VAT), each run in a fresh process",
    run=M.memory_run,
    scales=_scales(
        memory_configs,
        kinds={"quick": QUICK, "cpu": STAND_IN, "paper": PAPER_PROTOCOL},
        seeds={**SEEDS, "cpu": range(3)},
    ),
    version=T.PROTOCOL_VERSION,
    by_seed=True,
    uses=("c_tradeoff",),
)

LASTLAYER = Experiment(
    name="c_lastlayer",
    paper="C",
    notebook="c_tradeoff",
    title="§3.4: Retrieve's selection time with last-layer against full-model gradients, one model per seed",
    run=LL.lastlayer_run,
    # no paper scale: WRN-28-2's 1.5 M parameters for 50 000 CIFAR-10 images are ~300 GB of per-sample gradients,
    # the cost the paper's choice avoids; the MNIST CNN's 20 490 for 10 000 images are 0.8 GB
    scales=_scales(lastlayer_configs, kinds={"quick": QUICK, "cpu": STAND_IN}, seeds={**SEEDS, "cpu": range(3)}),
    version=T.PROTOCOL_VERSION,
    by_seed=True,
)

EXPERIMENTS = (TRADEOFF, VARIANTS, EXTENDED, PER_CLASS, BAYESIAN, ROBUST, ROBUST_CIFAR10, MEMORY, LASTLAYER)
