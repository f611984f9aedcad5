"""Nothing may change in the results (issue 9, section 4): rerun committed records and require the stored metrics.

For every committed results file ``notebooks/results/<name>/<scale>.jsonl``, a few of its records are rerun on the
CPU from their stored config and seed (:func:`sslkit.experiments.runs.replay.replay` with the file's experiment from
the catalog, :func:`sslkit.experiments.catalog.for_file`) and judged by
:func:`~sslkit.experiments.runs.replay.replay_rule` (issue 19):

* on the platform that made the record (its ``platform`` fingerprint; ``replay.LEGACY_PLATFORM`` for records
  older than it) the metrics must equal the stored ones bit for bit (the same JSON text), except the wall-clock
  fields (``replay.TIMING_METRICS``) and the few metrics of the experiment's ``drift``, whose last bits moved since
  they were written (each with its reason and a tolerance);
* on another platform (another CPU dispatch level, BLAS kernel, library version) the deterministic files of
  (``Experiment.replay``: closed forms, Monte Carlo over fixed draws, selections) must agree to the experiment's
  ``replay_tol`` -- floats only, integers and selected indices exactly -- and pass with an ``OtherPlatform``
  warning saying so; the chaotic ones (networks trained by SGD) are rerun once and only reported (an
  ``OtherPlatform`` warning with every change, e.g. ``test_acc 96.8 -> 97.12 (+0.32)``): a difference there is
  another training run, not a bug. The metric names must be the same everywhere.

A record must match under one of ``replay.thread_counts(scale, record)`` (the torch thread count changes last bits:
the recorded ``torch_threads`` alone when the record has it, else each count the older sweeps used). Which records:
for each distinct value of the config fields of the experiment's ``pick_by`` (the fields that choose a code path:
method, variant, selector, ...), the cheapest record by its stored ``seconds`` (ties: the smaller key), within a
per-file budget of stored seconds (:func:`budgeted`; one record per file where every replay would only be
reported); the records left out are listed as skipped, each with its reason. Files that cannot be replayed record
by record (``replay.NOT_REPLAYABLE``, or their scale's ``not_replayable``) are skipped, saying why. Every record's
``key`` must still be the runner's key of its (config, seed, scale), so a resumed sweep recognises it.

Records whose data is not on this machine are skipped, each with the reason, only when ``SSLKIT_DATA_DIR`` is unset
(CI sets it); with it set, missing data fails. Replays never download (``SSLKIT_OFFLINE=1``).
"""

import dataclasses
import json
import os
import warnings
from pathlib import Path

import pytest

from sslkit.data import DatasetNotFoundError
from sslkit.experiments import catalog, load_results, run_key
from sslkit.experiments.runs.hardware import platform_fingerprint
from sslkit.experiments.runs.replay import (
    EXACT,
    LEGACY_PLATFORM,
    NOT_REPLAYABLE,
    REPORT,
    WITHIN,
    Rule,
    file_id,
    platform_differences,
    replay,
    replay_differences,
    replay_rule,
    report_line,
    thread_counts,
)
from sslkit.experiments.runs.store import LEGACY_MISSING_FIELDS, METRICS_ADDED, RECORD_FIELDS, record_version

ROOT = Path(__file__).resolve().parents[1]
RESULTS = sorted((ROOT / "notebooks" / "results").glob("**/*.jsonl"))


def cost(rec, scale=None):
    """How a record's replay cost is ranked: records whose reading of ``scale`` declares an ``unstored_cost`` last
    (b_table1 / b_table4_head's 50 000-image pool: its stored 10 s leave out the pool's EfficientNet features,
    extracted once per machine, about 45 minutes on a fresh machine's two cores, which a replay here would pay),
    then stored seconds, then key. Such records replay one by one with ``sslkit replay``."""
    reading = scale.reading_of(rec.get("config", {})) if scale is not None else None
    return (bool(reading and reading.unstored_cost), rec["seconds"], rec["key"])


def picked(records, fields, scale=None):
    """The cheapest record (:func:`cost` under ``scale``) of each distinct value of ``fields``, in that order."""
    best = {}
    for rec in sorted(records, key=lambda r: cost(r, scale)):
        best.setdefault(json.dumps([rec["config"].get(f) for f in fields]), rec)
    return list(best.values())


#: Stored seconds of training one file's replays may cost beyond its cheapest record (which always runs): the
#: picked records are taken cheapest first while their cumulative ``seconds`` stay within it. The expensive files
#: (b_table2's active-learning loops: 250-510 s per record) would otherwise dominate the test suite; the methods
#: whose records are left out are covered by their own unit tests (tests/test_active_core_set.py against DISTIL and the
#: defining equations) and their records stay replayable one by one (``sslkit replay``).
REPLAY_BUDGET_SECONDS = 300.0


def budgeted(records, chaotic_elsewhere: bool, scale=None):
    """``records`` (cheapest first, as :func:`picked` orders them) split into (replayed, left out with a reason).

    Always the cheapest record; then the next ones while the cumulative stored seconds stay within
    :data:`REPLAY_BUDGET_SECONDS`. When every record would be only reported (a chaotic experiment whose records
    were made on another platform than this one: :data:`REPORT`), the cheapest one alone: a report shows that the
    code path still runs and how far a training run moved, which one record shows as well as six.
    """
    records = sorted(records, key=lambda r: cost(r, scale))
    if chaotic_elsewhere:
        return records[:1], [
            (
                r,
                "made on another platform: a chaotic run is only reported, the cheapest record "
                "of the file stands for the others",
            )
            for r in records[1:]
        ]
    kept, left, total = [], [], 0.0
    for rec in records:
        if kept and total + rec["seconds"] > REPLAY_BUDGET_SECONDS:
            left.append((rec, f"over the file's replay budget of {REPLAY_BUDGET_SECONDS:g} stored seconds"))
            continue
        kept.append(rec)
        total += rec["seconds"]
    return kept, left


def _cases():
    current = platform_fingerprint()
    for path in RESULTS:
        name = file_id(path)
        experiment, scale = catalog.for_file(path)
        fields, scale = experiment.pick_by, experiment.scale(scale)
        why = NOT_REPLAYABLE.get(name) or scale.not_replayable  # the file's spec says why (Scale.not_replayable)
        if why:
            yield pytest.param(
                path,
                None,
                id=f"{name}[not replayable]",
                marks=pytest.mark.skip(reason=f"{name} cannot be replayed: {why}"),
            )
            continue
        records = picked(load_results(path), fields, scale)
        elsewhere = all(replay_rule(experiment, r, current).verdict == REPORT for r in records)
        kept, left = budgeted(records, elsewhere, scale)
        for rec, reason in [(r, None) for r in kept] + left:
            label = ",".join(f"{rec['config'].get(f)}" for f in fields) or "cheapest"
            marks = [pytest.mark.slow] + ([pytest.mark.skip(reason=reason)] if reason else [])
            yield pytest.param(path, rec, id=f"{name}[{label}]-seed{rec['seed']}", marks=marks)


def test_every_results_file_has_an_experiment():
    assert RESULTS, "no committed results file found under notebooks/results/"
    assert catalog.uncatalogued() == []


@pytest.mark.parametrize("path", RESULTS, ids=file_id)
def test_every_record_keeps_its_run_key(path):
    records = load_results(path, all_versions=True)
    changed = [r["key"] for r in records if run_key(r["config"], r["seed"], r["scale"]) != r["key"]]
    assert not changed, f"{len(changed)} of {len(records)} records no longer have their run key: {changed[:5]}"
    required = set(RECORD_FIELDS) - set(LEGACY_MISSING_FIELDS)  # records written before a field existed lack it
    odd = [r["key"] for r in records if not required <= set(r) <= set(RECORD_FIELDS)]
    assert not odd, f"records whose fields are not the runner's {RECORD_FIELDS}: {odd[:5]}"
    keys = [(r["key"], record_version(r)) for r in records]  # a run rerun at a new protocol version: once per version
    assert len(set(keys)) == len(keys), "the same run is recorded twice at one protocol version"


@pytest.fixture
def offline(monkeypatch):
    monkeypatch.setenv("SSLKIT_OFFLINE", "1")


class OtherPlatform(UserWarning):
    """A replay on another platform than the record's: compared to a tolerance, or (training runs) only reported."""


@pytest.fixture(scope="module")
def here() -> dict:
    return platform_fingerprint()


def _replay(experiment, scale, record, threads) -> dict:
    """:func:`replay`, skipping (saying why) where data or an optional package is missing (module docstring)."""
    try:
        return replay(experiment, scale, record, threads=threads)
    except DatasetNotFoundError as err:
        if os.environ.get("SSLKIT_DATA_DIR"):
            raise
        pytest.skip(f"needs real data and SSLKIT_DATA_DIR is unset: {str(err).splitlines()[0]}")
    except ImportError as err:  # an optional package (the pretrained extractor's) is missing; sslkit's own: fail
        if (err.name or "").startswith("sslkit"):
            raise
        pytest.skip(f"needs an optional package that is not installed here: {str(err).splitlines()[0]}")


@pytest.mark.parametrize(("path", "record"), list(_cases()))
def test_replay_gives_identical_metrics(path, record, offline, here):
    """Identical on the record's platform; elsewhere as :func:`replay_rule` says (module docstring)."""
    experiment, scale = catalog.for_file(path)
    rule = replay_rule(experiment, record, here)
    where = f"{file_id(path)} key {record['key']} (config {record['config']}, seed {record['seed']})"
    tried = {}
    for threads in thread_counts(experiment.scale(scale), record):
        new = _replay(experiment, scale, record, threads)
        added = {m for m, day in METRICS_ADDED.items() if record["finished_at"] < day}  # not recorded back then
        assert set(new) - (added - set(record["metrics"])) == set(record["metrics"]), (
            f"metric names changed: lost {sorted(set(record['metrics']) - set(new))}, "
            f"new {sorted(set(new) - set(record['metrics']))}"
        )
        tried[threads] = replay_differences(record["metrics"], new, rule)
        if rule.verdict == REPORT:  # a training run elsewhere: another run, not a bug -- say how far it moved
            warnings.warn(
                OtherPlatform(f"{where}, {threads} thread(s): {report_line(record['metrics'], new)} -- {rule.reason}"),
                stacklevel=1,
            )
            return
        if not tried[threads]:
            if rule.verdict == WITHIN:
                warnings.warn(
                    OtherPlatform(
                        f"{where}: within {rule.rel_tol:g} relative, not compared bit for bit -- {rule.reason}"
                    ),
                    stacklevel=1,
                )
            return
    tolerated = f" for {sorted(rule.metrics)}" if rule.metrics else ""
    pytest.fail(
        f"{where}, recorded on {record['hardware']}: metrics differ under every thread count ({rule.verdict}, "
        f"relative tolerance {rule.rel_tol:g}{tolerated}: {rule.reason}), (stored, now): {tried}"
    )


def test_replay_uses_the_recorded_thread_count():
    import functools

    import torch

    from sslkit.experiments.runs.experiment import QUICK, Experiment, Scale

    one, two = Scale(QUICK, list, (0,), "x"), Scale(QUICK, list, (0,), "x", threads=2)
    assert thread_counts(one, {"torch_threads": 3}) == (3,)
    assert thread_counts(one, {"key": "old"}) == (1, 2)  # an old record: try each
    assert thread_counts(two, {"key": "old"}) == (2, 1)  # the scale's own count first

    def threads_now(seed, device):
        return {"threads": torch.get_num_threads(), "seed": seed}

    e = Experiment("t", "A", "t", "a test", functools.partial(threads_now), {"quick": one}, 1)
    record = {"config": {}, "seed": 0, "scale": "quick", "torch_threads": 3}
    before = torch.get_num_threads()
    assert replay(e, "quick", record) == {"threads": 3, "seed": 0}
    assert replay(e, "quick", {**record, "torch_threads": None}) == {"threads": 1, "seed": 0}
    assert torch.get_num_threads() == before


# --- the rule itself, on made-up records and platforms (fast) -----------------------------------------------------


def _legacy():
    """A record as the committed ones are: no ``platform``, made on this CPU model."""
    from sslkit.experiments.runs.hardware import cpu_model

    return {"key": "k", "config": {}, "seed": 0, "scale": "paper", "hardware": f"{cpu_model()} (2 cores), torch x"}


def test_every_experiment_says_how_it_replays_elsewhere():
    from sslkit.experiments.runs.experiment import CHAOTIC, DETERMINISTIC

    rules = {e.name: e for e in catalog.experiments()}
    for e in rules.values():
        if e.replay == DETERMINISTIC:
            assert e.replay_note and 0 < e.replay_tol <= 1e-5, e.name
        else:
            assert e.replay == CHAOTIC and e.replay_tol is None, e.name
    assert rules["a_figure1"].replay == DETERMINISTIC and rules["c_tradeoff"].replay == CHAOTIC
    assert rules["b_table5"].replay == CHAOTIC  # selections on features each platform extracts itself
    with pytest.raises(ValueError, match="replay_tol is required"):
        dataclasses.replace(rules["a_figure1"], replay_tol=None)
    with pytest.raises(ValueError, match="drift must be"):
        dataclasses.replace(rules["c_tradeoff"], drift=({"x"}, 1e-9))


def test_the_platform_decides_exact_within_or_report():
    e = {x.name: x for x in catalog.experiments()}
    legacy = _legacy()
    made_here = {**LEGACY_PLATFORM, "threads": 1, "python": "3.11.7"}  # the records' machine
    assert replay_rule(e["a_figure1"], legacy, made_here).verdict == EXACT
    assert replay_rule(e["c_tradeoff"], legacy, {**made_here, "threads": 2}).verdict == EXACT
    drift = replay_rule(e["b_figure3"], legacy, made_here)
    assert drift.verdict == EXACT and drift.metrics == {"alpha_mmd2", "mmd2"} and drift.rel_tol == 1e-9
    avx2 = {**made_here, "torch_cpu_capability": "AVX2", "numpy_simd": "X86_V3", "blas": "openblas 0.3.31 Zen"}
    within = replay_rule(e["a_figure1"], legacy, avx2)
    assert within.verdict == WITHIN and within.rel_tol == 1e-6 and "AVX512 -> AVX2" in within.reason
    assert replay_rule(e["c_tradeoff"], legacy, avx2).verdict == REPORT
    # a new record stores its platform: equal to this one -> exact, whatever LEGACY_PLATFORM says
    assert replay_rule(e["a_figure1"], {**legacy, "platform": avx2}, avx2).verdict == EXACT
    assert replay_rule(e["a_figure1"], {**legacy, "platform": made_here}, avx2).verdict == WITHIN
    for field, value in [("torch", "2.15.0"), ("numpy", "2.5.0"), ("blas_coretype", "Haswell")]:
        assert platform_differences(legacy, {**made_here, field: value}) == {field: (made_here[field], value)}
    # made on a GPU, or on another CPU model: never bit for bit here
    gpu = {**legacy, "hardware": "NVIDIA H200, torch 2.14.1+cu130"}
    assert set(platform_differences(gpu, made_here)) == {"device"}
    assert replay_rule(e["a_figure1"], gpu, made_here).verdict == WITHIN


def test_replay_differences_follow_the_rule():
    stored = {"risk": 0.5, "D": 0.0, "a": [0.25, 0.75], "indices": [3, 46], "name": "x", "seconds": 1.0}
    exact = Rule(EXACT, 0.0, None, "")
    assert replay_differences(stored, {**stored, "seconds": 9.0}, exact) == {}  # wall-clock: not compared
    timed = {**stored, "coreset_cpu_seconds": 1.0, "label_seconds": 0.1}
    assert replay_differences(timed, {**timed, "coreset_cpu_seconds": 1.3, "label_seconds": 0.2}, exact) == {}
    assert replay_differences(stored, {**stored, "risk": 0.5 + 1e-16}, exact) == {"risk": (0.5, 0.5 + 1e-16)}
    assert replay_differences(stored, {**stored, "risk": 1}, exact) == {"risk": (0.5, 1)}  # 1 is not 0.5
    drift = Rule(EXACT, 1e-9, frozenset({"risk"}), "")
    assert replay_differences(stored, {**stored, "risk": 0.5 * (1 + 1e-12)}, drift) == {}
    assert replay_differences(stored, {**stored, "D": 1e-16, "a": [0.25, 0.75 + 1e-16]}, drift).keys() == {"D", "a"}
    within = Rule(WITHIN, 1e-6, None, "")
    near = {**stored, "risk": 0.5 * (1 + 1e-9), "D": 1e-15, "a": [0.25 * (1 - 1e-8), 0.75]}
    assert replay_differences(stored, near, within) == {}
    assert replay_differences(stored, {**stored, "risk": 0.5 * (1 + 1e-4)}, within).keys() == {"risk"}
    assert replay_differences(stored, {**stored, "a": [0.25, 0.76]}, within).keys() == {"a"}
    assert replay_differences(stored, {**stored, "indices": [46, 3]}, within).keys() == {"indices"}  # exactly
    assert replay_differences(stored, {**stored, "name": "y"}, within).keys() == {"name"}
    assert replay_differences(stored, {k: v for k, v in stored.items() if k != "D"}, within) == {
        "D": (0.0, "<missing>")
    }
    report = Rule(REPORT, 0.0, None, "")
    moved = {**stored, "risk": 0.6, "indices": [3, 47], "name": "y"}
    assert replay_differences(stored, moved, report).keys() == {"risk", "indices", "name"}  # reported, not failed
    assert report_line(stored, moved) == "risk 0.5 -> 0.6 (+0.1); indices changed by up to 1; name changed"
    assert report_line(stored, stored) == "identical"
    assert report_line(stored, {**stored, "a": [0.25, 0.5]}) == "a changed by up to 0.25"


def test_a_record_with_an_unstored_cost_is_picked_last_whatever_its_stored_seconds():
    e, scale_name = catalog.for_file(ROOT / "notebooks" / "results" / "b_table4_head" / "paper.jsonl")
    scale = e.scale(scale_name)
    pool_config = next(c for c in scale.configs() if scale.reading_of(c) is not None)
    subset_config = next(c for c in scale.configs() if scale.reading_of(c) is None)
    assert scale.reading_of(pool_config).unstored_cost  # declared by the experiment, not guessed here
    pool = {"key": "p", "seconds": 10.0, "config": pool_config}
    subset = {"key": "s", "seconds": 60.0, "config": subset_config}
    assert picked([pool, subset], (), scale) == [subset]
    assert picked([pool], (), scale) == [pool]  # alone, it still stands for its file
    assert picked([pool, subset], ()) == [pool]  # without the declaration, stored seconds alone decide
    kept, _ = budgeted([pool, subset], chaotic_elsewhere=True, scale=scale)
    assert kept == [subset]


def test_the_budget_keeps_the_cheapest_and_stops_at_the_limit():
    recs = [{"key": k, "seconds": s} for k, s in [("c", 250.0), ("a", 10.0), ("b", 100.0), ("d", 5.0)]]
    kept, left = budgeted(recs, chaotic_elsewhere=False)
    assert [r["key"] for r in kept] == ["d", "a", "b"] and [r["key"] for r, _ in left] == ["c"]
    assert "budget" in left[0][1]
    big = [{"key": "x", "seconds": 900.0}, {"key": "y", "seconds": 950.0}]
    kept, left = budgeted(big, chaotic_elsewhere=False)
    assert [r["key"] for r in kept] == ["x"] and len(left) == 1  # the cheapest always runs
    kept, left = budgeted(recs, chaotic_elsewhere=True)
    assert [r["key"] for r in kept] == ["d"] and len(left) == 3 and "another platform" in left[0][1]
