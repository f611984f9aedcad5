"""Paper C, App. I: "it does not reduce the memory requirement. Furthermore, the memory requirement is a little
higher". A trade-off run (:func:`.tradeoff.tradeoff_run`) in a fresh process, with its peak memory: on a CPU the
peak resident set above the process's just before the run, on CUDA the device's peak allocation
(:mod:`sslkit.experiments.runs.memory`). Retrieve keeps the model, the optimiser and the batches of Full, and adds
the selection's per-sample gradients (§3.4): the claim is that this costs a little memory, not that it saves any."""

from __future__ import annotations

from ..runs.memory import in_fresh_process
from .tradeoff import tradeoff_run

__all__ = ["memory_run"]


def memory_run(*, protocol, algorithm, method, fraction, seed, device="auto") -> dict:
    """:func:`~.tradeoff.tradeoff_run` of these arguments in a fresh process: its metrics, ``peak_memory_mb`` (the
    peak above ``baseline_memory_mb``, the process's resident set before the run: torch imported, no data) and
    ``baseline_memory_mb``. A fresh process per run: the allocator keeps what earlier runs freed, so runs measured
    one after another in one process would not pay the same costs."""
    metrics, peak, baseline = in_fresh_process(
        tradeoff_run, protocol=protocol, algorithm=algorithm, method=method, fraction=fraction, seed=seed, device=device
    )
    return {**metrics, "peak_memory_mb": peak, "baseline_memory_mb": baseline}
