"""Stale results (issue 12, section 5): records carry a protocol version; a run whose code changed (a bumped
``PROTOCOL_VERSION``) is not reused silently; the newest version wins when a file is loaded.

Tiny fake run functions only (no training): each records its calls, so a test sees exactly which runs ran.
"""

import json
import pickle

import pytest

from sslkit.experiments import StaleResultsError, load_results, run_grid, run_key, versions_note
from sslkit.experiments.runs import executors as ex
from sslkit.experiments.runs.store import LEGACY_PROTOCOL_VERSION, record_version

GRID = {"n": [1, 2]}
SEEDS = [0, 1]  # 4 runs


class Fn:
    """``fn(n, seed) -> {"value": ...}`` that remembers its calls; ``offset`` stands for a change of the code."""

    def __init__(self, offset=0):
        self.offset, self.calls = offset, []

    def __call__(self, n, seed):
        self.calls.append((n, seed))
        return {"value": 10 * n + seed + self.offset}


def sweep(path, fn, **kw):
    return run_grid(fn, GRID, path, seeds=SEEDS, scale="quick", progress=False, hardware="test", **kw)


def lines(path):
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_the_version_is_stored_and_not_part_of_the_key(tmp_path):
    path = tmp_path / "r.jsonl"
    records = sweep(path, Fn(), version=3)
    assert [r["protocol_version"] for r in lines(path)] == [3] * 4
    for r in records:
        assert r["protocol_version"] == 3
        assert r["key"] == run_key(r["config"], r["seed"], "quick")  # the keys of records made before versions
    unversioned = sweep(tmp_path / "old.jsonl", Fn())
    assert [r["key"] for r in unversioned] == [r["key"] for r in records]
    assert all("protocol_version" not in r for r in lines(tmp_path / "old.jsonl"))


def test_a_record_of_another_version_is_refused_naming_the_file(tmp_path):
    path = tmp_path / "an_experiment" / "cpu.jsonl"
    sweep(path, Fn(), version=1)
    before = path.read_bytes()
    fn = Fn(offset=100)
    with pytest.raises(StaleResultsError) as err:
        sweep(path, fn, version=2)
    assert isinstance(err.value, ValueError)
    message = str(err.value)
    assert str(path) in message and "4 runs" in message
    assert "protocol version 1 only" in message and "protocol version 2" in message
    assert "on_stale='rerun'" in message and "new results file" in message and "do not bump" in message
    assert (err.value.path, err.value.found, err.value.version, len(err.value.keys)) == (path, [1], 2, 4)
    assert fn.calls == [] and path.read_bytes() == before  # nothing ran, nothing written


def test_only_the_stale_runs_of_the_grid_count(tmp_path):
    path = tmp_path / "r.jsonl"
    run_grid(Fn(), {"n": [1]}, path, seeds=SEEDS, progress=False, hardware="test", version=1)
    fn = Fn()
    with pytest.raises(StaleResultsError, match="2 runs of this grid"):
        sweep(path, fn, version=2)  # n=1 is stale; n=2 has no record (it would simply run)
    assert fn.calls == []
    assert len(run_grid(fn, {"n": [2]}, path, seeds=SEEDS, progress=False, hardware="test", version=2)) == 2


def test_a_record_without_a_version_counts_as_version_1(tmp_path):
    path = tmp_path / "r.jsonl"
    legacy = sweep(path, Fn())  # written as every record was before versions existed
    assert LEGACY_PROTOCOL_VERSION == 1 and all(record_version(r) == 1 for r in legacy)
    fn = Fn()
    assert sweep(path, fn, version=1) == legacy  # reused as they are
    assert fn.calls == []
    with pytest.raises(StaleResultsError, match="protocol version 1 only"):
        sweep(path, fn, version=2)
    assert fn.calls == []


def test_rerun_reruns_exactly_the_stale_runs_then_reuses_them(tmp_path):
    path = tmp_path / "r.jsonl"
    run_grid(Fn(), {"n": [1]}, path, seeds=SEEDS, progress=False, hardware="test")  # legacy records of n=1
    fn = Fn(offset=100)
    records = sweep(path, fn, version=2, on_stale="rerun")
    assert sorted(fn.calls) == [(1, 0), (1, 1), (2, 0), (2, 1)]  # the 2 stale runs and the 2 missing ones
    assert [r["protocol_version"] for r in records] == [2] * 4
    assert [r["metrics"]["value"] for r in records] == [110, 111, 120, 121]
    again = Fn(offset=100)
    assert sweep(path, again, version=2) == records  # the new records are reused, no error for the old ones
    assert sweep(path, again, version=2, on_stale="rerun") == records
    assert again.calls == []
    assert len(lines(path)) == 6  # the old records stay in the file
    old = Fn()
    assert [r["metrics"]["value"] for r in sweep(path, old, version=1, on_stale="rerun")[:2]] == [10, 11]
    assert old.calls == [(2, 0), (2, 1)]  # code at version 1 reuses the version-1 records it finds


def test_load_results_returns_the_newest_version_of_each_run(tmp_path):
    path = tmp_path / "r.jsonl"
    sweep(path, Fn())  # version 1 (no field)
    sweep(path, Fn(offset=100), version=3, on_stale="rerun")
    sweep(path, Fn(offset=50), version=2, on_stale="rerun")  # an older version appended later: still not newest
    loaded = load_results(path)
    assert len(loaded) == 4 and len({r["key"] for r in loaded}) == 4
    assert {r["protocol_version"] for r in loaded} == {3}
    assert [r["metrics"]["value"] for r in loaded] == [110, 111, 120, 121]
    assert len(load_results(path, all_versions=True)) == 12
    newest = Fn()
    assert sweep(path, newest) == loaded and newest.calls == []  # without a version: the newest is reused
    assert versions_note(loaded) == "records: protocol version 3 (4 runs)"


def test_versions_note():
    assert versions_note([{"key": "a"}, {"key": "b", "protocol_version": 1}]) == "records: protocol version 1 (2 runs)"
    mixed = [{"key": "a"}, {"key": "b", "protocol_version": 2}, {"key": "c", "protocol_version": 2}]
    assert versions_note(mixed) == "records: protocol versions 1 (1 run), 2 (2 runs)"
    assert versions_note([]) == "records: none"


@pytest.mark.parametrize(
    ("kw", "error", "match"),
    [
        ({"version": "2"}, TypeError, "version must be a positive integer"),
        ({"version": 1.0}, TypeError, "version must be a positive integer"),
        ({"version": True}, TypeError, "version must be a positive integer"),
        ({"version": 0}, ValueError, "version must be a positive integer"),
        ({"version": 1, "on_stale": "ignore"}, ValueError, "on_stale must be one of"),
        ({"on_stale": "rerun"}, ValueError, "needs a version"),
    ],
)
def test_bad_version_or_on_stale_is_a_clear_error(tmp_path, kw, error, match):
    fn = Fn()
    with pytest.raises(error, match=match):
        sweep(tmp_path / "r.jsonl", fn, **kw)
    assert fn.calls == [] and not (tmp_path / "r.jsonl").exists()


def test_a_stored_bad_version_names_the_line(tmp_path):
    path = tmp_path / "r.jsonl"
    sweep(path, Fn(), version=1)
    recs = lines(path)
    recs[1]["protocol_version"] = "v1"
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    with pytest.raises(ValueError, match=r"r\.jsonl: line 2: .*protocol_version must be a positive integer"):
        load_results(path)


def test_ray_path_records_carry_the_version(tmp_path, monkeypatch):
    """The driver path of executor="ray": the run object is shipped (pickled) to a worker that builds the record."""

    def fake_ray_results(run_one, jobs, options):
        worker = pickle.loads(pickle.dumps(run_one))
        for job in jobs:
            yield job, worker(*job), None

    monkeypatch.setattr(ex, "ray_results", fake_ray_results)
    path = tmp_path / "r.jsonl"
    sweep(path, Fn())
    with pytest.raises(StaleResultsError):
        sweep(path, Fn(), version=2, executor="ray")
    records = sweep(path, Fn(offset=100), version=2, on_stale="rerun", executor="ray")
    assert [r["protocol_version"] for r in records] == [2] * 4
    assert load_results(path) == records


def test_slurm_parts_are_merged_by_key_and_version(tmp_path, monkeypatch):
    """A killed Slurm driver's part files: one of a version the file lacks is merged, a duplicate is dropped."""
    path = tmp_path / "r.jsonl"
    legacy = sweep(path, Fn())
    parts = ex.parts_dir(path)
    ex.write_part(parts, dict(legacy[0]))  # same key and version as a stored record: dropped
    ex.write_part(parts, {**legacy[1], "protocol_version": 2, "metrics": {"value": -1}})  # a v2 record: merged

    def fake_slurm_results(run_one, jobs, options, path):
        for job in jobs:
            ex.write_part(parts, run_one(*job))
            yield job, json.loads((parts / f"{job[2]}.json").read_text()), None

    monkeypatch.setattr(ex, "slurm_results", fake_slurm_results)
    fn = Fn(offset=100)
    records = sweep(path, fn, version=2, on_stale="rerun", executor="slurm")
    assert len(fn.calls) == 3  # the merged part's run is not rerun
    assert [r["metrics"]["value"] for r in records] == [110, -1, 120, 121]
    assert len(lines(path)) == 4 + 1 + 3 and not list(parts.glob("*.json"))
    by_key = {r["key"]: r for r in load_results(path)}  # file order: the merged part comes first
    assert [by_key[r["key"]] for r in records] == records and len(by_key) == 4


def test_catalog_runs_store_their_module_version(tmp_path, monkeypatch):
    """catalog.run (behind `sslkit run` and the notebooks) stores each experiment's protocol version (fake runs)."""
    import dataclasses

    from sslkit.experiments import catalog

    for e in [e for e in catalog.experiments() if any(not s.gpu for s in e.scales.values())]:
        fake = dataclasses.replace(e, run=fake_run, version=e.version + 6)
        monkeypatch.setattr(catalog, "EXPERIMENTS", (fake,))
        scale = next(name for name, s in fake.scales.items() if not s.gpu)
        seeds = [fake.scales[scale].seeds[0]]
        records = catalog.run(e.name, scale, seeds=seeds, device="cpu", results_dir=tmp_path / e.name)
        assert records and {r["protocol_version"] for r in records} == {e.version + 6}, e.name


def fake_run(seed, device="cpu", **config):
    return {"test_acc": 1.0}
