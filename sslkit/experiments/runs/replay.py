"""Replay committed results: rerun one record of a results file from its stored config and seed, on the CPU.

Every committed results file ``notebooks/results/<name>/<scale>.jsonl`` is made by one experiment of the
catalog (:mod:`sslkit.experiments.catalog`): its run function with the scale's fixed arguments
(:meth:`~.experiment.Experiment.call`). :func:`replay` reruns a record that way (``device="cpu"``) and returns
its metrics as they would be stored (JSON values); ``tests/test_replay.py`` compares them with the committed
ones (except the wall-clock fields of :data:`TIMING_METRICS`) under one of :func:`thread_counts`.

Where a run needs state built before its grid (a trained classifier g, a feature matrix, a data split), its run
function builds it once per process and thread count (the thread count can change the last bits of that
state). The EfficientNet-Lite0 features of the CIFAR-10 subset come from
:func:`sslkit.features.extract_features` and its on-disk cache: the first replay extracts them (a few minutes
on 2 CPU cores). A new committed results file needs only its experiment's spec.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from .store import stored_metrics

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
#: not (some files hold both), so for those a replay may try each.
THREAD_COUNTS = (1, 2)


def thread_counts(scale, record: Mapping | None = None) -> tuple:
    """The torch thread counts to replay ``record`` of a results file of ``scale`` (a
    :class:`~.experiment.Scale`) with, in the order to try them.

    The recorded ``record["torch_threads"]`` alone when the record has it; otherwise (records written before
    the runner stored it) :data:`THREAD_COUNTS`, the count the scale's sweep ran with (``Scale.threads``) first.
    """
    threads = None if record is None else record.get("torch_threads")
    if isinstance(threads, int) and not isinstance(threads, bool) and threads >= 1:
        return (threads,)
    first = getattr(scale, "threads", None)
    return ((first,) if first else ()) + tuple(t for t in THREAD_COUNTS if t != first)


#: Results files whose records cannot be rerun one at a time, and why (the replay test skips them, saying so).
NOT_REPLAYABLE: dict[str, str] = {}


def file_id(results_path) -> str:
    """``"<name>/<scale>"`` of ``.../<name>/<scale>.jsonl``: how the replay test names a results file."""
    path = Path(results_path)
    return f"{path.parent.name}/{path.stem}"


def comparable(metrics: Mapping) -> dict:
    """``metrics`` without the wall-clock fields of :data:`TIMING_METRICS`; curves reduced to their values."""
    return {
        k: ([point[1] for point in v] if k in CURVE_METRICS else v)
        for k, v in metrics.items()
        if k not in TIMING_METRICS
    }


def replay(experiment, scale: str, record: Mapping, *, threads: int | None = None) -> dict:
    """Rerun ``record`` of ``experiment`` (an :class:`~.experiment.Experiment`) at ``scale`` on the CPU with
    ``threads`` torch threads; its metrics as JSON values (numpy scalars become numbers, as
    :func:`~.runner.run_grid` stores them), timing fields included. ``threads=None``: the first of
    :func:`thread_counts`."""
    if threads is None:
        threads = thread_counts(experiment.scale(scale), record)[0]
    import torch

    fn = experiment.call(scale, device=DEVICE)
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        metrics = fn(**dict(record["config"]), seed=record["seed"])
    finally:
        torch.set_num_threads(before)
    return stored_metrics(metrics)  # as run_grid stores them (numpy values converted, NaN -> null)
