"""Nothing may change in the results (issue 9, section 4): rerun committed records and require identical metrics.

For every committed results file ``notebooks/results/<name>/<scale>.jsonl``, a few of its records are rerun on
the CPU from their stored config and seed (:func:`sslkit.experiments.replay.replay`, which knows the run
function behind each file), and their metrics must equal the stored ones bit for bit (the same JSON text), except
the wall-clock fields (``replay.TIMING_METRICS``) and the few metrics of ``KNOWN_DRIFT``, whose last bits moved
since they were written (each with its reason and a tolerance). A record must match under one of
``replay.thread_counts(path, record)`` (the torch thread count changes last bits: the recorded ``torch_threads`` alone
when the record has it, else each count the older sweeps used). Which records: for each
distinct value of the config fields in ``PICK_BY`` (the fields that choose a code path: method, variant,
selector, ...), the cheapest record by its stored ``seconds`` (ties: the smaller key). Files that cannot be
replayed record by record (``replay.NOT_REPLAYABLE``) are skipped, saying why. Every record's ``key`` must still
be the runner's key of its (config, seed, scale), so a resumed sweep recognises it.

Records whose data is not on this machine are skipped, each with the reason, only when ``SSLKIT_DATA_DIR`` is
unset (CI sets it); with it set, missing data fails. Replays never download (``SSLKIT_OFFLINE=1``).
"""

import json
import math
import os
from pathlib import Path

import pytest

from sslkit.data import DatasetNotFoundError
from sslkit.experiments import load_results, run_key
from sslkit.experiments.replay import NOT_REPLAYABLE, REPLAYERS, comparable, file_id, replay, thread_counts
from sslkit.experiments.runner import LEGACY_MISSING_FIELDS, RECORD_FIELDS, record_version

ROOT = Path(__file__).resolve().parents[1]
RESULTS = sorted((ROOT / "notebooks" / "results").glob("**/*.jsonl"))

#: Per results file: the config fields whose every value gets its cheapest record replayed (() = the cheapest
#: record of the file only).
PICK_BY = {
    "a_table1/paper": ("method",),
    "a_table1_iter/paper": ("variant",),
    "a_table2/paper": ("method",),
    "a_table2_order/paper": ("order",),
    "a_table2_supterm/paper": ("method",),
    "a_ablations/paper": ("experiment", "nn"),
    "a_fixmatch/paper": ("setting",),
    "a_figure1/paper": ("dataset", "loss"),
    "a_appendix_b/paper": ("dataset",),
    "supervised_baseline/paper": ("dataset",),
    "b_figure2/paper": ("distribution",),
    "b_figure3/paper": ("selector",),
    "b_table1/cpu_efficientnet": ("algorithm",),
    "b_table4_proxy/paper": ("alpha",),
    "b_table4_head/paper": (),
    "b_table5/paper": ("part",),
    "c_tradeoff/cpu": ("algorithm",),  # per algorithm its cheapest run (a Random coreset run, ~30 s)
    "c_variants/cpu": (),  # the cheapest Retrieve variant (selection from the model's gradients)
    "c_robust/cpu": (),  # the cheapest robust-SSL run (a 10 % coreset run or Supervised)
    "c_extended/cpu": (),  # the cheapest extended Retrieve run
    "c_perclass/cpu": (),  # the cheapest per-class Retrieve run
    "c_bayesian/cpu": (),  # the cheapest Bayesian-coreset run (GIGA, 20 %)
}


#: Metrics that no longer replay bit for bit on main: file -> (metric names, relative tolerance, why). They are held
#: to that tolerance until their file is regenerated (then delete the entry); every other metric of these files,
#: and every record of the files not listed, is still compared exactly.
_KERNEL_SUMS = (
    "commit d6e6044 (GKHR: BLAS tile sums) changed the summation order of the Gaussian-kernel sums after these "
    "records were written, so the last bits of alpha-MMD^2 / MMD^2 moved: about 1e-14 relative on float64 data, "
    "about 1e-6 on the float32 image features; the selections did not"
)
KNOWN_DRIFT = {
    "b_figure2/paper": ({"D", "D1", "D2"}, 1e-9, _KERNEL_SUMS),
    "b_figure3/paper": ({"alpha_mmd2", "mmd2"}, 1e-9, _KERNEL_SUMS),
    "b_table4_proxy/paper": ({"alpha_mmd2", "alpha_mmd2_rdss", "mmd2"}, 1e-9, _KERNEL_SUMS),
    "b_table1/cpu_efficientnet": ({"alpha_mmd2"}, 1e-5, _KERNEL_SUMS),
    "b_table5/paper": ({"alpha_mmd2", "mmd2"}, 1e-5, _KERNEL_SUMS),
}


def picked(records, fields):
    """The cheapest record (stored seconds, then key) of each distinct value of ``fields``, in that order."""
    best = {}
    for rec in sorted(records, key=lambda r: (r["seconds"], r["key"])):
        best.setdefault(json.dumps([rec["config"].get(f) for f in fields]), rec)
    return list(best.values())


def _cases():
    for path in RESULTS:
        name = file_id(path)
        if name in NOT_REPLAYABLE:
            yield pytest.param(
                path,
                None,
                id=f"{name}[not replayable]",
                marks=pytest.mark.skip(reason=f"{name} cannot be replayed: {NOT_REPLAYABLE[name]}"),
            )
            continue
        for rec in picked(load_results(path), PICK_BY.get(name, ())):
            label = ",".join(f"{rec['config'].get(f)}" for f in PICK_BY.get(name, ())) or "cheapest"
            yield pytest.param(path, rec, id=f"{name}[{label}]-seed{rec['seed']}")


def test_every_results_file_has_a_replayer_and_a_pick_rule():
    names = {file_id(p) for p in RESULTS}
    assert names, "no committed results file found under notebooks/results/"
    assert names == set(REPLAYERS), (
        f"results files without a replayer: {sorted(names - set(REPLAYERS))}; "
        f"replayers without a results file: {sorted(set(REPLAYERS) - names)}"
    )
    assert names == set(PICK_BY), f"PICK_BY differs from the results files: {sorted(names ^ set(PICK_BY))}"


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


def _same(a, b) -> bool:
    """The same JSON text: bit-for-bit equal floats, 1 and 1.0 differ, NaN equals NaN."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


@pytest.fixture
def offline(monkeypatch):
    monkeypatch.setenv("SSLKIT_OFFLINE", "1")


def _diff(old, new, drifted=(), rel_tol=0.0) -> dict:
    """``{metric: (stored, replayed)}`` of the compared metrics that differ (``drifted`` ones: by more than
    ``rel_tol``)."""
    old, new = comparable(old), comparable(new)

    def close(a, b):
        return isinstance(a, float) and isinstance(b, float) and math.isclose(a, b, rel_tol=rel_tol, abs_tol=1e-15)

    return {
        k: (old[k], new.get(k, "<missing>"))
        for k in old
        if not (_same(old[k], new.get(k)) or (k in drifted and close(old[k], new.get(k))))
    }


@pytest.mark.parametrize(("path", "record"), list(_cases()))
def test_replay_gives_identical_metrics(path, record, offline):
    tried = {}
    for threads in thread_counts(path, record):
        try:
            new = replay(path, record, threads=threads)
        except DatasetNotFoundError as err:
            if os.environ.get("SSLKIT_DATA_DIR"):
                raise
            pytest.skip(f"needs real data and SSLKIT_DATA_DIR is unset: {str(err).splitlines()[0]}")
        except ImportError as err:  # an optional package (the pretrained extractor's) is missing; sslkit's own: fail
            if (err.name or "").startswith("sslkit"):
                raise
            pytest.skip(f"needs an optional package that is not installed here: {str(err).splitlines()[0]}")
        assert set(new) == set(record["metrics"]), (
            f"metric names changed: lost {sorted(set(record['metrics']) - set(new))}, "
            f"new {sorted(set(new) - set(record['metrics']))}"
        )
        drifted, rel_tol, _ = KNOWN_DRIFT.get(file_id(path), ((), 0.0, ""))
        tried[threads] = _diff(record["metrics"], new, drifted, rel_tol)
        if not tried[threads]:
            return
    pytest.fail(
        f"{file_id(path)} key {record['key']} (config {record['config']}, seed {record['seed']}; recorded "
        f"on {record['hardware']}): metrics differ under every thread count, (stored, now): {tried}"
    )


def test_replay_uses_the_recorded_thread_count(monkeypatch):
    import torch

    from sslkit.experiments import replay as replay_module

    assert thread_counts("r/a_table1/paper.jsonl", {"torch_threads": 3}) == (3,)
    assert thread_counts("r/a_table1/paper.jsonl", {"key": "old"}) == (1, 2)  # an old record: try each
    assert thread_counts("r/b_table1/cpu_efficientnet.jsonl", {"key": "old"}) == (2, 1)
    monkeypatch.setitem(replay_module.REPLAYERS, "t/quick", lambda c, s, sc: {"threads": torch.get_num_threads()})
    record = {"config": {}, "seed": 0, "scale": "quick", "torch_threads": 3}
    before = torch.get_num_threads()
    assert replay("results/t/quick.jsonl", record) == {"threads": 3}
    assert replay("results/t/quick.jsonl", {**record, "torch_threads": None}) == {"threads": 1}
    assert torch.get_num_threads() == before
