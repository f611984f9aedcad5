"""Replay committed results: rerun one record of a results file from its stored config and seed, on the CPU.

Every committed results file ``notebooks/results/<name>/<scale>.jsonl`` (written by
:func:`sslkit.experiments.run_grid`) was produced by one run function, called by a notebook as
``run_grid(fn, grid, path, seeds=...)``. :data:`REPLAYERS` maps each file, by ``"<name>/<scale>"``, to that
function, called exactly as its notebook calls it (``device="cpu"``). :func:`replay` reruns a record and
returns its metrics as they would be stored (JSON values); ``tests/test_replay.py`` requires them to equal the
committed ones bit for bit (except the wall-clock fields of :data:`TIMING_METRICS`, and the drifts it lists) under
one of :data:`THREAD_COUNTS`.

Where a notebook builds state before its grid (a trained classifier g, a feature matrix), the replayer
rebuilds it the same way, once per process and thread count (``functools.cache``; the thread count is part of
the key because it can change the last bits of that state). The EfficientNet-Lite0 features of the CIFAR-10
subset (b_table1, b_table4 head, b_table5 defects) come from :func:`sslkit.features.extract_features` and its
on-disk cache, as in the notebooks: the first replay extracts them (a few minutes on 2 CPU cores). A new
committed results file needs an entry here, next to the notebook cell that writes it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from pathlib import Path

from .runner import stored_metrics

#: Metrics that are wall-clock times: they differ from run to run and are not compared.
TIMING_METRICS = frozenset(
    {
        "seconds",
        "select_seconds",
        "train_seconds",
        "gkh_seconds",
        "gkhr_seconds",
        "cpu_seconds",
        "selection_seconds",
        "selection_cpu_seconds",
    }
)
#: Metrics that are lists of ``[wall-clock, value, CPU time]`` points (paper C's per-epoch curves): only the
#: values are compared.
CURVE_METRICS = frozenset({"curve"})

DEVICE = "cpu"

#: torch intra-op thread counts the committed sweeps ran with, in the order a replay tries them. Some CPU kernels
#: (matrix products, reductions) sum in an order that depends on the thread count, and so do the last bits of their
#: results. Records written since the runner stores ``torch_threads`` say which count made them; older records do
#: not (a_appendix_b holds both), so for those a replay may try each.
THREAD_COUNTS = (1, 2)
#: Files made with 2 threads (measured): tried in that order first, so no replay is run twice for nothing.
_TWO_THREADS_FIRST = ("b_table1/cpu_efficientnet",)


def thread_counts(results_path, record: Mapping | None = None) -> tuple:
    """The torch thread counts to replay ``record`` of ``results_path`` with, in the order to try them.

    The recorded ``record["torch_threads"]`` alone when the record has it; otherwise (records written before
    the runner stored it) :data:`THREAD_COUNTS`, in the order measured for the file.
    """
    threads = None if record is None else record.get("torch_threads")
    if isinstance(threads, int) and not isinstance(threads, bool) and threads >= 1:
        return (threads,)
    return tuple(sorted(THREAD_COUNTS, reverse=True)) if file_id(results_path) in _TWO_THREADS_FIRST else THREAD_COUNTS


# --- paper A: notebooks a_table1, a_table2, a_ablations, a_fixmatch --------------------------------------------


def _paper_a_run_one(config, seed, scale):
    from . import paper_a

    c = config
    return paper_a.run_one(c["dataset"], c["setting"], c["method"], seed, scale=scale, device=DEVICE, hyper=c["hyper"])


def _paper_a_iter(config, seed, scale):
    from . import paper_a

    c = config
    return paper_a.run_iter_variant(c["dataset"], c["setting"], c["variant"], seed, scale=scale, device=DEVICE)


def _paper_a_order(config, seed, scale):
    from . import paper_a

    c = config
    return paper_a.run_order_variant(c["dataset"], c["setting"], c["order"], seed, scale=scale, device=DEVICE)


def _paper_a_supterm(config, seed, scale):
    from . import paper_a

    c = config
    return paper_a.run_supervised_term_variant(
        c["dataset"], c["setting"], c["method"], c["hyper"], c["term"], seed, scale=scale, device=DEVICE
    )


def _paper_a_appendix(config, seed, scale):
    from . import paper_a_appendix

    return paper_a_appendix.run_config(seed=seed, scale=scale, device=DEVICE, **config)


# --- paper A: notebook a_figure1 (its cell "The grid") ----------------------------------------------------------

#: Resampling trials per point, as notebooks a_figure1 and a_appendix_b set them from their ``scale``.
_TRIALS = {"quick": 1000, "paper": 5000}


def _threads():
    import torch

    return torch.get_num_threads()


@functools.cache
def _figure1_sampler(dataset, loss, seed, threads):
    from sslkit.data import load_dataset

    from .variance import figure1_samplers

    data = None if dataset == "gaussian" else load_dataset(dataset)
    return figure1_samplers({dataset: data}, (loss,), seed=seed)[(dataset, loss)]


def _a_figure1(config, seed, scale):
    from .variance import figure1_cell

    c = config
    samplers = {(c["dataset"], c["loss"]): _figure1_sampler(c["dataset"], c["loss"], seed, _threads())}
    return figure1_cell(
        samplers, c["dataset"], c["loss"], c["theta1"], c["n_unlabeled"], trials=_TRIALS[scale], seed=seed
    )


# --- paper A: notebook a_appendix_b (its cells "digits_0_to_6" and "The grid") ---------------------------------


def _appendix_b_dataset(name):
    import dataclasses

    from sslkit.data import load_dataset

    if name == "digits0-6":
        ds = load_dataset("digits")
        keep = ds.y < 7
        return dataclasses.replace(ds, name="digits0-6", X=ds.X[keep], y=ds.y[keep], classes=ds.classes[:7])
    return load_dataset(name, **({"download": False} if name == "covertype" else {}))


@functools.cache
def _appendix_b_sampler(name, seed, threads):
    from .variance import PoolSampler, heldout_losses_multiclass

    ds = _appendix_b_dataset(name)
    losses, y_pool, accuracy = heldout_losses_multiclass(ds, seed=seed, device=DEVICE)
    return ds.classes, PoolSampler(losses, y_pool), accuracy


def _a_appendix_b(config, seed, scale):
    from .paper_a import to_class_order
    from .variance import APPENDIX_B_N_PER_CLASS, APPENDIX_B_PRIORS, cell_seed, comparison_cell

    dataset, prior, n_unlabeled = config["dataset"], config["prior"], config["n_unlabeled"]
    classes, sampler, accuracy = _appendix_b_sampler(dataset, seed, _threads())
    theta = to_class_order(dataset, classes, APPENDIX_B_PRIORS[prior])
    out = comparison_cell(
        sampler,
        "ce",
        theta,
        APPENDIX_B_N_PER_CLASS,
        n_unlabeled,
        trials=_TRIALS[scale],
        seed=cell_seed(seed, "appendix-b", dataset, prior, n_unlabeled),
        pnu=False,
    )
    return {**out, "pool_accuracy": accuracy}


# --- paper A: notebook supervised_baseline (its cell "One run") -------------------------------------------------


def _supervised_baseline(config, seed, scale):
    from sslkit.experiments.paper_a import supervised_baseline_run

    return supervised_baseline_run(config["dataset"], config["n1"], config["n2"], seed, device=DEVICE)


# --- paper B: notebooks b_figure2, b_figure3, b_table1, b_table4, b_table5 ---------------------------------------


def _b_figure2(config, seed, scale):
    from .paper_b import figure2_run

    return figure2_run(config["distribution"], config["n"], config["fraction"], seed, device=DEVICE)


def _b_figure3(config, seed, scale):
    from .paper_b import figure3_run

    return figure3_run(config["selector"], seed, device=DEVICE)


#: b_table1's ``QUICK_DATA`` (the CPU head protocol); the committed cpu_efficientnet run is its cifar10 row with
#: ``cifar_extractor = "efficientnet_lite0"``.
_B_TABLE1_HEAD_DATA = {
    "mnist": {"n_pool": 4000, "n_test": 2000, "variant": None},
    "cifar10": {"n_pool": None, "n_test": None, "variant": "lossless"},
}


def _b_table1_head(config, seed, scale):
    from .paper_b_ssl import table1_run

    c = config
    return table1_run(
        c["dataset"],
        c["selector"],
        c["algorithm"],
        c["m"],
        seed,
        protocol="head",
        extractor=c["extractor"],
        device=DEVICE,
        **_B_TABLE1_HEAD_DATA[c["dataset"]],
    )


def _b_table4_proxy(config, seed, scale):
    from .paper_b import table4_proxy_run

    return table4_proxy_run(config["alpha"], config["m"], seed, dataset="digits")


#: b_table4's ``HEAD`` data (Part 1b) per scale.
_B_TABLE4_HEAD_DATA = {
    "quick": dict(dataset="mnist", extractor="pixels_pca", pca_dim=50, n_pool=4000, n_test=2000, variant=None),
    "paper": dict(
        dataset="cifar10", extractor="efficientnet_lite0", pca_dim=50, n_pool=None, n_test=None, variant="lossless"
    ),
}


def _b_table4_head(config, seed, scale):
    from .paper_b import table4_ssl_run

    return table4_ssl_run(
        config["alpha"], config["m"], seed, protocol="head", device=DEVICE, **_B_TABLE4_HEAD_DATA[scale]
    )


@functools.cache
def _defect_features(n_pool, random_init, threads):
    """b_table5's ``load_defect_features()`` at paper scale; the random-init features only when asked for
    (``defects_run`` reads them only for ``features="random_init"``)."""
    from sslkit.data import load_dataset
    from sslkit.features import extract_features

    from .paper_b_ssl import random_init_features

    ds = load_dataset("cifar10", variant="lossless")
    P = extract_features(ds.X, "efficientnet_lite0", cache_key="cifar10-lossless-train")[:n_pool]
    Pt = extract_features(ds.X_test, "efficientnet_lite0", cache_key="cifar10-lossless-test")
    R = random_init_features(ds.X[:n_pool], seed=0) if random_init else None
    return {"pretrained": P, "random_init": R, "y_pool": ds.y[:n_pool], "pretrained_test": Pt, "y_test": ds.y_test}


def _b_table5(config, seed, scale):
    from .paper_b_ssl import defects_run, table5_timing_run

    c = config
    if c["part"] == "timing":
        return table5_timing_run(c["selector"], c["n"], c["m"], seed, d=c["d"], device=DEVICE)
    if scale != "paper":
        raise ValueError(f"b_table5 defects: only the paper-scale features are rebuilt here, got scale {scale!r}")
    features = _defect_features(c["n_pool"], c["features"] == "random_init", _threads())
    return defects_run(c["features"], c["bandwidth"], c["m"], seed, device=DEVICE, **features)


# --- paper C: notebooks c_tradeoff, c_variants, c_robust, c_bayesian ------------------------------------


def _c_tradeoff(config, seed, scale):
    from sslkit.experiments.paper_c import tradeoff_run

    return tradeoff_run(**config, seed=seed, device=DEVICE)


def _c_robust(config, seed, scale):
    from sslkit.experiments.paper_c_robust import robust_run

    return robust_run(**config, seed=seed, device=DEVICE)


#: Results files whose records cannot be rerun one at a time, and why (the replay test skips them, saying so).
NOT_REPLAYABLE: dict[str, str] = {}

#: ``"<name>/<scale>"`` of every committed results file -> ``fn(config, seed, scale) -> metrics``.
REPLAYERS: dict[str, Callable[[dict, int, str], dict]] = {
    "a_table1/paper": _paper_a_run_one,  # a_table1: paper_a.run_one
    "a_table1_iter/paper": _paper_a_iter,  # a_table1: paper_a.run_iter_variant
    "a_table2/paper": _paper_a_run_one,  # a_table2: paper_a.run_one
    "a_table2_order/paper": _paper_a_order,  # a_table2: paper_a.run_order_variant
    "a_table2_supterm/paper": _paper_a_supterm,  # a_table2: paper_a.run_supervised_term_variant
    "a_ablations/paper": _paper_a_appendix,  # a_ablations: paper_a_appendix.run_config
    "a_fixmatch/paper": _paper_a_appendix,  # a_fixmatch: paper_a_appendix.run_config
    "a_figure1/paper": _a_figure1,  # a_figure1: variance.figure1_cell
    "a_appendix_b/paper": _a_appendix_b,  # a_appendix_b: variance.comparison_cell
    "supervised_baseline/paper": _supervised_baseline,  # supervised_baseline: the notebook's run_one
    "b_figure2/paper": _b_figure2,  # b_figure2: paper_b.figure2_run
    "b_figure3/paper": _b_figure3,  # b_figure3: paper_b.figure3_run
    "b_table1/cpu_efficientnet": _b_table1_head,  # b_table1: paper_b_ssl.table1_run, head protocol
    "b_table4_proxy/paper": _b_table4_proxy,  # b_table4: paper_b.table4_proxy_run
    "b_table4_head/paper": _b_table4_head,  # b_table4: paper_b.table4_ssl_run, head protocol
    "b_table5/paper": _b_table5,  # b_table5: paper_b_ssl.table5_timing_run / defects_run
    "c_tradeoff/cpu": _c_tradeoff,  # c_tradeoff: paper_c.tradeoff_run (one thread)
    "c_variants/cpu": _c_tradeoff,  # c_variants: paper_c.tradeoff_run (one thread)
    "c_robust/cpu": _c_robust,  # c_robust: paper_c_robust.robust_run (one thread)
    "c_extended/cpu": _c_tradeoff,  # c_tradeoff's extended runs: paper_c.tradeoff_run with extend (one thread)
    "c_perclass/cpu": _c_tradeoff,  # c_variants' per-class Retrieve: paper_c.tradeoff_run (one thread)
    "c_bayesian/cpu": _c_tradeoff,  # c_bayesian: paper_c.tradeoff_run with method "bayesian" (one thread)
}


def file_id(results_path) -> str:
    """``"<name>/<scale>"`` of ``.../<name>/<scale>.jsonl``: the key of :data:`REPLAYERS`."""
    path = Path(results_path)
    return f"{path.parent.name}/{path.stem}"


def comparable(metrics: Mapping) -> dict:
    """``metrics`` without the wall-clock fields of :data:`TIMING_METRICS`; curves reduced to their values."""
    return {
        k: ([point[1] for point in v] if k in CURVE_METRICS else v)
        for k, v in metrics.items()
        if k not in TIMING_METRICS
    }


def replay(results_path, record: Mapping, *, threads: int | None = None) -> dict:
    """Rerun ``record`` of the results file ``results_path`` on the CPU with ``threads`` torch threads; its
    metrics as JSON values (numpy scalars become numbers, as :func:`sslkit.experiments.run_grid` stores them),
    timing fields included. ``threads=None``: the first of :func:`thread_counts` (the recorded count when the
    record has one)."""
    if threads is None:
        threads = thread_counts(results_path, record)[0]
    name = file_id(results_path)
    if name not in REPLAYERS:
        raise KeyError(
            f"no replayer for {name!r}: add the run function that writes it to sslkit.experiments.replay.REPLAYERS"
        )
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        metrics = REPLAYERS[name](dict(record["config"]), record["seed"], record["scale"])
    finally:
        torch.set_num_threads(before)
    return stored_metrics(metrics)  # as run_grid stores them (numpy values converted, NaN -> null)
