"""Replay committed results: rerun one record of a results file from its stored config and seed, on the CPU.

Every committed results file ``notebooks/results/<name>/<scale>.jsonl`` is made by one experiment of the
catalog (:mod:`sslkit.experiments.catalog`): its run function with the scale's fixed arguments
(:meth:`~.experiment.Experiment.call`). :func:`replay` reruns a record that way (``device="cpu"``) and returns
its metrics as they would be stored (JSON values), under one of :func:`thread_counts`.

What the rerun must reproduce depends on where it runs (:func:`replay_rule`, the section "portability"): on the
platform that made the record (its ``platform`` fingerprint; :data:`LEGACY_PLATFORM` for records older than the
fingerprint) the metrics must equal the stored ones bit for bit (except the wall-clock fields of
:data:`TIMING_METRICS` and the ``drift`` its experiment declares); on another platform (another CPU dispatch
level, BLAS kernel or library version) deterministic experiments must agree to their ``replay_tol`` and chaotic
ones (networks trained by SGD) are only reported. ``tests/test_replay.py`` applies it.

Where a run needs state built before its grid (a trained classifier g, a feature matrix, a data split), its run
function builds it once per process and thread count (the thread count can change the last bits of that
state). The EfficientNet-Lite0 features of the CIFAR-10 subset come from
:func:`sslkit.features.extract_features` and its on-disk cache: the first replay extracts them (a few minutes
on 2 CPU cores). A new committed results file needs only its experiment's spec.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from .hardware import FINGERPRINT_FIELDS, cpu_model
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


def is_timing(name: str) -> bool:
    """A wall-clock, CPU-time or memory measurement: one of :data:`TIMING_METRICS`, any name ending in ``seconds``
    (``label_seconds``, ``coreset_cpu_seconds``, ...) or in ``_mb`` (``peak_memory_mb``: megabytes measured, see
    :mod:`.memory`): they differ from run to run and are never compared."""
    return name in TIMING_METRICS or name.endswith("seconds") or name.endswith("_mb")


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


# --- portability: what a replay must reproduce, here and on other platforms -------------------------------------
# The one place that decides the verdict of a replay: which platform made a record; whether the results are
# deterministic computations or chaotic training runs, with tolerances and reasons, is the experiment's spec
# (``Experiment.replay``, ``replay_tol``, ``replay_note``, ``drift``). tests/test_replay.py applies it.

#: Verdict rules of :func:`replay_rule`.
EXACT = "exact"  # the record's platform: bit for bit (the experiment's drift: to its tolerance)
WITHIN = "within"  # another platform, a deterministic computation: floats to the file's tolerance, the rest exactly
REPORT = "report"  # another platform, a chaotic training run: rerun, its differences reported, never a failure

#: The platform of every record written before the runner stored ``platform`` (all records committed before issue
#: 19, ``hardware`` "AMD EPYC (2 cores), torch 2.14.1+cu130"): the machine that made them, as
#: :func:`~sslkit.experiments.runs.hardware.platform_fingerprint` measures it there (torch and numpy at AVX512,
#: OpenBLAS' SkylakeX kernels, the pinned torch and numpy). Assumed, not recorded: a legacy record is replayed bit
#: for bit only where the current platform equals this one in every field of :data:`PLATFORM_FIELDS`.
LEGACY_PLATFORM = {
    "torch_cpu_capability": "AVX512",
    "numpy_simd": "X86_V3,X86_V4,AVX512_ICL",
    "blas": "openblas 0.3.31.188.0 SkylakeX",
    "blas_coretype": "",
    "torch": "2.14.1+cu130",
    "numpy": "2.4.6",
}
#: The fingerprint fields that must be equal for "the same platform": all of
#: :data:`~sslkit.experiments.runs.hardware.FINGERPRINT_FIELDS` but the thread count (a replay runs with the record's
#: own count, :func:`thread_counts`).
PLATFORM_FIELDS = tuple(f for f in FINGERPRINT_FIELDS if f != "threads")
#: Values this close to zero are compared absolutely under :data:`WITHIN` (e.g. an MMD^2 of exactly 0.0).
ABS_TOL = 1e-12


#: Why a chaotic experiment (``Experiment.replay``) is only reported on another platform, unless its spec says more.
CHAOTIC_REASON = (
    "a network trained by SGD: a last-bit difference in one kernel changes one step, and training amplifies it into "
    "another run (a committed FixMatch record of paper C's trade-off gave 97.12 % on an AVX2 EPYC, 96.80 % stored)"
)
#: How the tolerances of the specs' ``replay_note`` were measured: the cheapest records of each file (the replay
#: test's picks) rerun here with torch at ATEN_CPU_CAPABILITY=avx2 and =default, numpy without its AVX512 (and AVX2)
#: dispatch and OpenBLAS' Haswell (Prescott) kernels; ``max`` is the largest relative difference of any metric.
MEASURED = "measured with lowered torch / numpy / OpenBLAS dispatch (issue 19)"
#: The drift of the Gaussian-kernel sums (specs' ``drift``).
KERNEL_SUMS = (
    "commit d6e6044 (GKHR: BLAS tile sums) changed the summation order of the Gaussian-kernel sums after these "
    "records were written, so the last bits of alpha-MMD^2 / MMD^2 moved: about 1e-14 relative on float64 data, "
    "about 1e-6 on the float32 image features; the selections did not; "
    "later the base-2 exponentials moved them again (paper B's KERNEL_EXP2)"
)

#: The drift of small networks trained on two torch threads before the Trainer's ``threads="auto"`` (specs' drift).
ONE_THREAD_STEPS = (
    "commit 98c2d51 (Trainer threads='auto': a step under 1e8 forward FLOPs trains on one torch thread) changed the "
    "thread count of these small float32 networks after the records were written with two threads (they predate the "
    "stored torch_threads), so their float32 training, and the Monte Carlo sums and the a* solve that read it, moved "
    "in the last bits: about 1e-8 relative on the records of the same platform (found by bisection on an AMD EPYC); "
    "the discrete results (accuracies, the chosen a of PN) did not"
)


@dataclass(frozen=True)
class Rule:
    """How a replay of one record here is judged (:func:`replay_rule`): ``verdict`` (:data:`EXACT`,
    :data:`WITHIN` or :data:`REPORT`), the float tolerance of the metrics it names (``rel_tol`` for ``metrics``;
    ``metrics=None``: every metric), and why."""

    verdict: str
    rel_tol: float
    metrics: frozenset | None
    reason: str


def record_platform(record: Mapping) -> dict:
    """The platform fingerprint of the machine that made ``record``: its ``platform``, or
    :data:`LEGACY_PLATFORM` for a record written before the runner stored it."""
    stored = record.get("platform")
    return dict(LEGACY_PLATFORM) if stored is None else dict(stored)


def platform_differences(record: Mapping, current: Mapping) -> dict:
    """``{field: (recorded, current)}`` of the :data:`PLATFORM_FIELDS` in which the platform that made ``record``
    differs from ``current`` (a :func:`~sslkit.experiments.runs.hardware.platform_fingerprint`; a recorded ``blas`` that
    is one of ``current``'s ``blas_loaded`` counts as equal), plus ``"device"`` when
    the record's ``hardware`` label does not name this CPU model (a GPU run, another CPU). Empty: the same
    platform, where a replay must be bit-identical."""
    made = record_platform(record)
    out = {f: (made.get(f), current.get(f)) for f in PLATFORM_FIELDS if made.get(f) != current.get(f)}
    if "blas" in out and made.get("blas") in current.get("blas_loaded", ()):
        del out["blas"]  # a library of this process: records made before "blas" named numpy's own may name scipy's
    label, cpu = str(record.get("hardware", "")), cpu_model()
    if not label.startswith(f"{cpu} ("):  # hardware_summary's "<CPU model> (<n> cores), torch ..."
        out["device"] = (label, cpu)
    return out


def replay_rule(experiment, record: Mapping, current: Mapping) -> Rule:
    """How a replay of ``record`` of ``experiment`` (an :class:`~.experiment.Experiment`) on the platform
    ``current`` must compare with it.

    * the record's own platform (:func:`platform_differences` empty): :data:`EXACT` -- bit for bit, except the
      metrics of the experiment's ``drift``, held to its tolerance;
    * another platform, a deterministic experiment: :data:`WITHIN` -- every float metric to the experiment's
      ``replay_tol`` (and :data:`ABS_TOL` near zero), every other value exactly;
    * another platform, a chaotic one: :data:`REPORT` -- the metric names must be the same, the values may differ
      (training amplifies last bits into another run): the differences are reported, not failed.
    """
    from .experiment import DETERMINISTIC

    moved = platform_differences(record, current)
    if not moved:
        if experiment.drift:
            metrics, rel_tol, why = experiment.drift
            return Rule(EXACT, rel_tol, frozenset(metrics), why)
        return Rule(EXACT, 0.0, None, "bit for bit on the records' platform")
    where = "other platform (" + ", ".join(f"{f}: {a} -> {b}" for f, (a, b) in moved.items()) + ")"
    if experiment.replay == DETERMINISTIC:
        return Rule(WITHIN, experiment.replay_tol, None, f"{where}; {experiment.replay_note}")
    return Rule(REPORT, 0.0, None, f"{where}; {experiment.replay_note or CHAOTIC_REASON}")


def _same_json(a, b) -> bool:
    """The same JSON text: bit-for-bit equal floats, 1 and 1.0 differ, NaN (null) equals NaN."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def _close(a, b, rel_tol: float) -> bool:
    """``a`` and ``b`` are equal JSON values except that floats (also inside lists and dicts) may differ by
    ``rel_tol`` relative (:data:`ABS_TOL` absolute near zero)."""
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=rel_tol, abs_tol=ABS_TOL)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_close(x, y, rel_tol) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k], rel_tol) for k in a)
    return _same_json(a, b)


def replay_differences(stored: Mapping, new: Mapping, rule: Rule) -> dict:
    """``{metric: (stored, replayed)}`` of the compared metrics (:func:`comparable`) that break ``rule``: under
    :data:`EXACT` a different JSON text (the rule's ``metrics``: a float beyond its ``rel_tol``), under
    :data:`WITHIN` a float beyond the rule's ``rel_tol`` or any other value changed. Under :data:`REPORT` nothing
    breaks the rule: every metric that differs at all is returned, for the report. A metric missing from ``new``
    always differs."""
    old, new = comparable(stored), comparable(new)
    tolerated = rule.verdict == WITHIN or rule.verdict == EXACT and rule.metrics is not None

    def same(k, a, b):
        if tolerated and (rule.metrics is None or k in rule.metrics):
            return _close(a, b, rule.rel_tol)
        return _same_json(a, b)

    return {k: (v, new.get(k, "<missing>")) for k, v in old.items() if k not in new or not same(k, v, new[k])}


def report_line(stored: Mapping, new: Mapping) -> str:
    """One line for people: how the replayed metrics differ from the stored ones (numbers: the change)."""

    def number(x):
        return isinstance(x, (int, float)) and not isinstance(x, bool)

    parts = []
    for k, (a, b) in replay_differences(stored, new, Rule(REPORT, 0.0, None, "")).items():
        if number(a) and number(b):
            parts.append(f"{k} {a:.6g} -> {b:.6g} ({b - a:+.3g})")
        elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b) and all(map(number, a + b)):
            parts.append(f"{k} changed by up to {max(abs(y - x) for x, y in zip(a, b)):.3g}")
        else:
            parts.append(f"{k} changed")
    return "; ".join(parts) or "identical"


def file_id(results_path) -> str:
    """``"<name>/<scale>"`` of ``.../<name>/<scale>.jsonl``: how the replay test names a results file."""
    path = Path(results_path)
    return f"{path.parent.name}/{path.stem}"


def comparable(metrics: Mapping) -> dict:
    """``metrics`` without the measured fields, times and megabytes (:func:`is_timing`); curves reduced to their
    values."""
    return {k: ([point[1] for point in v] if k in CURVE_METRICS else v) for k, v in metrics.items() if not is_timing(k)}


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
