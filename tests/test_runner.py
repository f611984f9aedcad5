"""Grid runner: one JSONL record per finished run; restarts skip finished runs (issue 2, section 5)."""

import hashlib
import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from sslkit.experiments import expand_grid, load_results, run_grid, run_key

REPO = Path(__file__).resolve().parents[1]
GRID = {"method": ["a", "b", "c"], "n": [10, 20]}
SEEDS = [0, 1]  # 3 x 2 x 2 = 12 runs
# the thread count is the process's; call: the run function's name (a script's __main__.fn vs this module's)
VOLATILE = ("seconds", "finished_at", "torch_threads", "platform", "call")


def metric_fn(method, n, seed):
    """Deterministic metrics from the config and seed."""
    return {"acc": n * 1.5 + seed + {"a": 0.0, "b": 0.25, "c": 0.5}[method], "method_len": len(method)}


def stable(records):
    return [{k: v for k, v in r.items() if k not in VOLATILE} for r in records]


class Counter:
    def __init__(self):
        self.calls = []

    def __call__(self, **kw):
        self.calls.append(kw)
        return metric_fn(**kw)


def test_expand_grid_cartesian_product_in_key_order():
    configs = expand_grid({"m": ["x", "y"], "n": [1, 2, 3]})
    assert configs == [{"m": m, "n": n} for m in ["x", "y"] for n in [1, 2, 3]]
    assert expand_grid([{"m": "x"}, {"m": "y", "k": 2}]) == [{"m": "x"}, {"m": "y", "k": 2}]


@pytest.mark.parametrize(
    "grid, error, match",
    [
        ({"m": "abc"}, TypeError, "grid\\['m'\\] must be a list"),
        ({"m": []}, ValueError, "empty"),
        ([], ValueError, "empty"),
        ([{"m": 1}, 3], TypeError, "grid\\[1\\]"),
        ({"seed": [1, 2]}, ValueError, "seeds argument"),
        ("abc", TypeError, "grid must be"),
    ],
)
def test_expand_grid_errors(grid, error, match):
    with pytest.raises(error, match=match):
        expand_grid(grid)


def test_run_key_is_stable_and_canonical():
    k = run_key({"method": "a", "n": 10}, 0, "quick")
    payload = '{"config":{"method":"a","n":10},"scale":"quick","seed":0}'
    assert k == hashlib.sha256(payload.encode()).hexdigest()[:16]
    assert k == run_key({"n": 10, "method": "a"}, 0, "quick")  # key order does not matter
    assert k == run_key({"n": np.int64(10), "method": "a"}, 0, "quick")  # numpy ints are ints
    others = {
        run_key({"method": "a", "n": 10}, 1, "quick"),
        run_key({"method": "a", "n": 10}, 0, "paper"),
        run_key({"method": "a", "n": 10.0}, 0, "quick"),
    }
    assert k not in others and len(others) == 3


def test_records_schema_order_and_fsynced_lines(tmp_path):
    path = tmp_path / "sub" / "results.jsonl"
    fn = Counter()
    records = run_grid(fn, GRID, path, seeds=SEEDS, scale="quick", progress=False, extra={"data": "toy"})
    assert len(fn.calls) == 12 and len(records) == 12
    expected_order = [(m, n, s) for m in GRID["method"] for n in GRID["n"] for s in SEEDS]
    assert [(r["config"]["method"], r["config"]["n"], r["seed"]) for r in records] == expected_order
    for r in records:
        assert set(r) == {
            "key",
            "config",
            "seed",
            "scale",
            "metrics",
            "seconds",
            "hardware",
            "torch_threads",
            "sslkit_version",
            "finished_at",
            "extra",
            "platform",
        }
        assert r["torch_threads"] == torch.get_num_threads() == r["platform"]["threads"]
        assert r["platform"]["torch_cpu_capability"] == torch.backends.cpu.get_cpu_capability()
        assert r["key"] == run_key(r["config"], r["seed"], "quick")
        assert r["metrics"] == metric_fn(**r["config"], seed=r["seed"])
        assert r["extra"] == {"data": "toy"} and "torch" in r["hardware"] and r["seconds"] >= 0
    lines = path.read_text().splitlines()
    assert len(lines) == 12 and [json.loads(line) for line in lines] == records
    assert load_results(path) == records


def test_rerun_skips_finished_runs_and_adds_only_new_ones(tmp_path):
    path = tmp_path / "r.jsonl"
    first = run_grid(Counter(), GRID, path, seeds=SEEDS, progress=False)
    fn = Counter()
    again = run_grid(fn, GRID, path, seeds=SEEDS, progress=False)
    assert fn.calls == [] and again == first
    # one more seed: only the 6 new runs execute; the file holds each key once
    more = run_grid(fn, GRID, path, seeds=[0, 1, 2], progress=False)
    assert sorted(c["seed"] for c in fn.calls) == [2] * 6
    assert len(more) == 18 and len(load_results(path)) == 18
    # another scale is another run
    fn2 = Counter()
    run_grid(fn2, {"method": ["a"], "n": [10]}, path, seeds=[0], scale="paper", progress=False)
    assert len(fn2.calls) == 1


KILL_SCRIPT = textwrap.dedent(
    """
    import os, signal, sys, json
    from sslkit.experiments import run_grid

    results, started_log, finished_log, kill_after = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    state = {"started": 0}

    def fn(method, n, seed):
        with open(started_log, "a") as fh:
            fh.write(json.dumps([method, n, seed]) + "\\n")
        state["started"] += 1
        if kill_after >= 0 and state["started"] == kill_after + 1:
            os.kill(os.getpid(), signal.SIGKILL)  # no cleanup, no atexit, no flush: a hard kill mid-run
        with open(finished_log, "a") as fh:
            fh.write(json.dumps([method, n, seed]) + "\\n")
        return {"acc": n * 1.5 + seed + {"a": 0.0, "b": 0.25, "c": 0.5}[method], "method_len": len(method)}

    run_grid(fn, {"method": ["a", "b", "c"], "n": [10, 20]}, results, seeds=[0, 1], progress=False)
    """
)


def _run_sweep(tmp_path, results, kill_after):
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    args = [
        sys.executable,
        "-c",
        KILL_SCRIPT,
        str(results),
        str(tmp_path / "started.log"),
        str(tmp_path / "finished.log"),
        str(kill_after),
    ]
    return subprocess.run(args, env=env, capture_output=True, text=True, timeout=120)


def _log(path):
    return [tuple(json.loads(line)) for line in path.read_text().splitlines()] if path.exists() else []


def test_killed_sweep_loses_nothing_and_repeats_nothing(tmp_path):
    results = tmp_path / "results.jsonl"
    k = 5
    killed = _run_sweep(tmp_path, results, kill_after=k)
    assert killed.returncode == -9, killed.stderr  # really killed by SIGKILL
    assert len(load_results(results)) == k  # the k finished runs survived the kill
    assert len(_log(tmp_path / "finished.log")) == k

    resumed = _run_sweep(tmp_path, results, kill_after=-1)
    assert resumed.returncode == 0, resumed.stderr
    finished = _log(tmp_path / "finished.log")
    started = _log(tmp_path / "started.log")
    assert len(finished) == 12 and len(set(finished)) == 12  # every run completed exactly once
    # only the run that was killed mid-way was started twice
    assert len(started) == 13 and started.count(started[k]) == 2

    records = load_results(results)
    keys = [r["key"] for r in records]
    assert len(keys) == 12 and len(set(keys)) == 12
    fresh = run_grid(metric_fn, GRID, tmp_path / "fresh.jsonl", seeds=SEEDS, progress=False)
    by_key = {r["key"]: r for r in records}
    assert stable([by_key[r["key"]] for r in fresh]) == stable(fresh)


def test_truncated_last_line_is_ignored_with_warning_and_rerun(tmp_path):
    path = tmp_path / "r.jsonl"
    records = run_grid(metric_fn, GRID, path, seeds=SEEDS, progress=False)
    text = path.read_text()
    last = text.splitlines()[-1]
    path.write_text(text[: len(text) - len(last) - 1] + last[:25])  # killed mid-write: half a line, no newline
    with pytest.warns(RuntimeWarning, match="truncated last line 12"):
        loaded = load_results(path)
    assert loaded == records[:11]

    fn = Counter()
    with pytest.warns(RuntimeWarning, match="truncated"):
        again = run_grid(fn, GRID, path, seeds=SEEDS, progress=False)
    assert fn.calls == [{"method": "c", "n": 20, "seed": 1}]  # only the lost run is redone
    assert stable(again) == stable(records)
    assert load_results(path) == again  # the broken tail was cut off: no corrupt line is left behind


def test_complete_last_line_without_newline_is_kept(tmp_path):
    path = tmp_path / "r.jsonl"
    records = run_grid(metric_fn, {"method": ["a"], "n": [10]}, path, seeds=[0, 1], progress=False)
    path.write_text(path.read_text().rstrip("\n"))
    fn = Counter()
    run_grid(fn, {"method": ["a"], "n": [10]}, path, seeds=[0, 1, 2], progress=False)
    assert [c["seed"] for c in fn.calls] == [2]
    assert load_results(path)[:2] == records and len(load_results(path)) == 3


def test_corrupt_middle_line_is_an_error_naming_the_line(tmp_path):
    path = tmp_path / "r.jsonl"
    run_grid(metric_fn, GRID, path, seeds=SEEDS, progress=False)
    lines = path.read_text().splitlines()
    lines[3] = lines[3][:20]
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError, match="line 4 is not valid JSON"):
        load_results(path)
    fn = Counter()
    with pytest.raises(ValueError, match="line 4"):
        run_grid(fn, GRID, path, seeds=SEEDS, progress=False)
    assert fn.calls == []


def _line(key, **fields):
    return json.dumps({"key": key, "config": {}, "seed": 0, "metrics": {}, **fields}) + "\n"


def test_blank_lines_ignored_and_non_records_rejected(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text(_line("k1", x=1) + "\n" + _line("k2"))
    assert [r["key"] for r in load_results(path)] == ["k1", "k2"]
    path.write_text(_line("k1") + "[1, 2]\n" + _line("k2"))
    with pytest.raises(ValueError, match="line 2 is not a run record"):
        load_results(path)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        load_results(tmp_path / "missing.jsonl")


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("metrics", [1, 2], "field 'metrics' must be a JSON object \\(dict\\), got list \\[1, 2\\]"),
        ("metrics", "acc=3", "field 'metrics' must be a JSON object \\(dict\\), got str"),
        ("key", 17, "field 'key' must be a string, got int 17"),
        ("config", None, "field 'config' must be a JSON object \\(dict\\), got NoneType null"),
        ("seed", "3", "field 'seed' must be an integer, got str \"3\""),
        ("seed", 1.0, "field 'seed' must be an integer, got float 1.0"),
        ("seed", True, "field 'seed' must be an integer, got bool true"),
        ("scale", 1, "field 'scale' must be a string"),
        ("torch_threads", "2", "field 'torch_threads' must be an integer or null"),
        ("platform", "AVX2", "field 'platform' must be a JSON object \\(dict\\) or null"),
        ("protocol_version", "v1", "protocol_version must be a positive integer"),
    ],
)
def test_a_record_of_the_wrong_type_is_refused_naming_file_and_line(tmp_path, field, value, message):
    """A results file edited by hand or written by other code: one clear error naming the file, the line and the
    field, from every reader (load_results, and run_grid before it runs anything) -- also on the last line."""
    path = tmp_path / "r.jsonl"
    run_grid(metric_fn, GRID, path, seeds=SEEDS, progress=False)
    lines = path.read_text().splitlines(keepends=True)
    for at in (3, len(lines) - 1):
        bad = list(lines)
        bad[at] = json.dumps({**json.loads(lines[at]), field: value}) + "\n"
        path.write_text("".join(bad))
        with pytest.raises(ValueError, match=f"r\\.jsonl: line {at + 1}: record '?\\w+'?: {message}"):
            load_results(path)
        fn = Counter()
        with pytest.raises(ValueError, match=f"line {at + 1}: .*{message}"):
            run_grid(fn, {**GRID, "n": [30]}, path, seeds=SEEDS, progress=False)
        assert fn.calls == [] and path.read_text() == "".join(bad)  # nothing ran, nothing was "repaired"


@pytest.mark.parametrize("field", ["config", "seed", "metrics"])
def test_a_record_without_a_required_field_is_refused(tmp_path, field):
    path = tmp_path / "r.jsonl"
    record = json.loads(_line("k1"))
    del record[field]
    path.write_text(_line("k0") + json.dumps(record) + "\n")
    with pytest.raises(ValueError, match=f"line 2: record 'k1' lacks the field \\['{field}'\\]"):
        load_results(path)


def test_failing_run_propagates_and_records_nothing(tmp_path):
    path = tmp_path / "r.jsonl"

    def fn(method, n, seed):
        if method == "b":
            raise RuntimeError("boom")
        return metric_fn(method, n, seed)

    with pytest.raises(RuntimeError, match="boom"):
        run_grid(fn, GRID, path, seeds=SEEDS, progress=False)
    assert [r["config"]["method"] for r in load_results(path)] == ["a"] * 4
    counter = Counter()
    run_grid(counter, GRID, path, seeds=SEEDS, progress=False)  # rerun retries from the failed run
    assert len(counter.calls) == 8 and counter.calls[0]["method"] == "b"


def test_non_serialisable_metric_is_a_type_error_naming_the_key(tmp_path):
    path = tmp_path / "r.jsonl"
    with pytest.raises(TypeError, match="metrics\\['model'\\] is not JSON serialisable"):
        run_grid(lambda seed: {"acc": 1.0, "model": object()}, [{}], path, seeds=[0], progress=False)
    assert not path.exists() or path.read_text() == ""
    with pytest.raises(TypeError, match="metrics must be a dict"):
        run_grid(lambda seed: 0.5, [{}], path, seeds=[0], progress=False)
    # numpy scalars and arrays are converted
    recs = run_grid(
        lambda seed: {"acc": np.float32(0.5), "n": np.int64(3), "curve": np.arange(3)},
        [{}],
        path,
        seeds=[0],
        progress=False,
    )
    assert recs[0]["metrics"] == {"acc": 0.5, "n": 3, "curve": [0, 1, 2]}


def test_argument_validation(tmp_path):
    path = tmp_path / "r.jsonl"
    with pytest.raises(TypeError, match="seed"):
        run_grid(metric_fn, GRID, path, seeds=[0, 1.5], progress=False)
    with pytest.raises(ValueError, match="duplicates"):
        run_grid(metric_fn, GRID, path, seeds=[0, 0], progress=False)
    with pytest.raises(ValueError, match="seeds is empty"):
        run_grid(metric_fn, GRID, path, seeds=[], progress=False)
    with pytest.raises(ValueError, match="scale"):
        run_grid(metric_fn, GRID, path, seeds=[0], scale="", progress=False)
    with pytest.raises(TypeError, match="config\\['obj'\\]"):
        run_grid(metric_fn, [{"obj": object()}], path, seeds=[0], progress=False)
    with pytest.raises(ValueError, match="same config twice"):
        run_grid(metric_fn, [{"method": "a", "n": 1}, {"n": 1, "method": "a"}], path, seeds=[0], progress=False)
    with pytest.raises(TypeError, match="fn must be callable"):
        run_grid(None, GRID, path, seeds=[0], progress=False)
    assert not path.exists()


def test_records_of_other_grids_in_the_same_file_are_kept_but_not_returned(tmp_path):
    path = tmp_path / "r.jsonl"
    run_grid(metric_fn, {"method": ["a"], "n": [10]}, path, seeds=[0], progress=False)
    recs = run_grid(metric_fn, {"method": ["b"], "n": [10]}, path, seeds=[0], progress=False)
    assert [r["config"]["method"] for r in recs] == ["b"]
    assert [r["config"]["method"] for r in load_results(path)] == ["a", "b"]


def test_hardware_label_and_results_path(tmp_path):
    from sslkit.experiments import hardware_summary, repo_root, results_path

    recs = run_grid(
        metric_fn, {"method": ["a"], "n": [1]}, tmp_path / "r.jsonl", seeds=[0], progress=False, hardware="test rig"
    )
    assert recs[0]["hardware"] == "test rig"
    with pytest.raises(TypeError, match="hardware must be a string"):
        run_grid(metric_fn, {"method": ["a"], "n": [2]}, tmp_path / "r.jsonl", seeds=[0], hardware=1)
    summary = hardware_summary("cpu")
    assert "\n" not in summary and summary.endswith(f"torch {__import__('torch').__version__}") and "cores" in summary

    assert results_path("exp", "quick", results_dir=tmp_path) == tmp_path / "exp" / "quick.jsonl"
    assert results_path("exp", "paper") == repo_root() / "notebooks" / "results" / "exp" / "paper.jsonl"
    assert results_path("exp", "quick") == repo_root() / "_build" / "results" / "exp" / "quick.jsonl"
    assert results_path("exp", "cpu") == repo_root() / "notebooks" / "results" / "exp" / "cpu.jsonl"  # a stand-in
    assert results_path("exp", "cpuish").parent.parent == repo_root() / "_build" / "results"
    with pytest.raises(ValueError, match="plain file name"):
        results_path("../exp", "quick")


def test_records_hardware_lists_each_machine_once_unambiguously():
    from sslkit.experiments import records_hardware

    recs = [{"hardware": h} for h in ("B (2 cores), torch 2, 1 thread", "A (2 cores), torch 2", "A (2 cores), torch 2")]
    assert records_hardware(recs) == "A (2 cores), torch 2; B (2 cores), torch 2, 1 thread"
    assert records_hardware([]) == "none" and records_hardware([], empty="") == ""


# ------------------------------------------------------------------ reliability (issue 12, section 5)


def test_torch_threads_is_recorded_but_not_part_of_the_key(tmp_path):
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        one = run_grid(metric_fn, {"method": ["a"], "n": [1]}, tmp_path / "r.jsonl", seeds=[0], progress=False)
        torch.set_num_threads(2)
        two = run_grid(metric_fn, {"method": ["a"], "n": [1]}, tmp_path / "s.jsonl", seeds=[0], progress=False)
        again = run_grid(metric_fn, {"method": ["a"], "n": [1]}, tmp_path / "r.jsonl", seeds=[0], progress=False)
    finally:
        torch.set_num_threads(before)
    assert one[0]["torch_threads"] == 1 and two[0]["torch_threads"] == 2
    assert one[0]["key"] == two[0]["key"] == run_key({"method": "a", "n": 1}, 0, "quick")
    assert again == one  # another thread count is not another run


def test_nan_metric_is_written_as_valid_json_null(tmp_path):
    path = tmp_path / "r.jsonl"
    recs = run_grid(
        lambda seed: {"loss": float("nan"), "acc": np.float32("nan"), "curve": [1.0, np.nan], "ok": 0.5},
        [{}],
        path,
        seeds=[0],
        progress=False,
    )
    line = path.read_text().strip()
    json.loads(line, parse_constant=lambda c: pytest.fail(f"bare {c} in the results file"))  # strict JSON
    assert recs[0]["metrics"] == {"loss": None, "acc": None, "curve": [1.0, None], "ok": 0.5}
    assert load_results(path) == recs
    with pytest.raises(ValueError, match=r"metrics\['gain'\]\[1\] is inf"):
        run_grid(lambda seed: {"gain": [0.0, float("inf")]}, [{}], tmp_path / "inf.jsonl", seeds=[0], progress=False)
    with pytest.raises(ValueError, match=r"config\['lr'\] holds NaN"):
        run_grid(lambda lr, seed: {}, [{"lr": float("nan")}], tmp_path / "c.jsonl", seeds=[0], progress=False)


def test_non_utf8_lines_give_clear_errors(tmp_path):
    path = tmp_path / "r.jsonl"
    records = run_grid(metric_fn, GRID, path, seeds=SEEDS, progress=False)
    data = path.read_bytes()
    cut = data[: len(data) - len(data.splitlines()[-1]) - 1]
    path.write_bytes(cut + b'{"key": "\xe2\x82')  # killed mid-way through a multi-byte character
    with pytest.warns(RuntimeWarning, match="truncated last line 12 \\(not UTF-8 text"):
        assert load_results(path) == records[:11]
    fn = Counter()
    with pytest.warns(RuntimeWarning, match="not UTF-8 text"):
        again = run_grid(fn, GRID, path, seeds=SEEDS, progress=False)
    assert len(fn.calls) == 1 and stable(again) == stable(records)
    lines = path.read_bytes().split(b"\n")
    lines[2] = b"\xff\xfe" + lines[2]
    path.write_bytes(b"\n".join(lines))
    with pytest.raises(ValueError, match="line 3 is not UTF-8 text; the file is corrupt"):
        load_results(path)
    with pytest.raises(ValueError, match="line 3 is not UTF-8 text"):
        run_grid(metric_fn, GRID, path, seeds=SEEDS, progress=False)


def test_directory_and_unwritable_paths_give_clear_errors(tmp_path):
    with pytest.raises(IsADirectoryError, match="is a directory, not a results file"):
        run_grid(metric_fn, GRID, tmp_path, seeds=SEEDS, progress=False)
    with pytest.raises(IsADirectoryError, match="is a directory, not a results file"):
        load_results(tmp_path)
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(OSError, match="cannot write the results file"):
        run_grid(metric_fn, GRID, blocker / "sub" / "r.jsonl", seeds=SEEDS, progress=False)
    if Path("/proc").is_dir():  # not writable even for root
        with pytest.raises(OSError, match="cannot write the results file '/proc/"):
            run_grid(metric_fn, GRID, "/proc/sslkit-test/r.jsonl", seeds=SEEDS, progress=False)


def test_a_finished_sweep_does_not_open_its_file_for_writing(tmp_path, monkeypatch):
    from sslkit.experiments.runs import runner

    path = tmp_path / "r.jsonl"
    done = run_grid(metric_fn, GRID, path, seeds=SEEDS, progress=False)

    def no_write(path):
        raise AssertionError("opened for writing")

    monkeypatch.setattr(runner, "_locked", no_write)
    assert run_grid(metric_fn, GRID, path, seeds=SEEDS, progress=False) == done


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write to a read-only folder")
def test_read_only_results_file(tmp_path):
    locked = tmp_path / "ro"
    locked.mkdir()
    done = run_grid(metric_fn, {"method": ["a"], "n": [1]}, locked / "r.jsonl", seeds=[0], progress=False)
    locked.chmod(0o500)
    (locked / "r.jsonl").chmod(0o400)
    try:
        # nothing left to run: reading a read-only file is enough
        assert run_grid(metric_fn, {"method": ["a"], "n": [1]}, locked / "r.jsonl", seeds=[0], progress=False) == done
        with pytest.raises(OSError, match="cannot write the results file .*Permission denied"):
            run_grid(metric_fn, {"method": ["a"], "n": [1]}, locked / "r.jsonl", seeds=[0, 1], progress=False)
        with pytest.raises(OSError, match="cannot write the results file"):
            run_grid(metric_fn, GRID, locked / "new.jsonl", seeds=SEEDS, progress=False)
    finally:
        locked.chmod(0o700)
        (locked / "r.jsonl").chmod(0o600)


LOCK_SCRIPT = textwrap.dedent(
    """
    import sys, time
    from sslkit.experiments import run_grid

    results, ready = sys.argv[1], sys.argv[2]

    def fn(method, n, seed):
        open(ready, "w").close()
        time.sleep(30)  # hold the file while the test's second writer tries it
        return {"acc": 1.0}

    run_grid(fn, {"method": ["slow"], "n": [1]}, results, seeds=[0], progress=False)
    """
)


def test_second_writer_on_the_same_file_is_refused(tmp_path):
    results, ready = tmp_path / "r.jsonl", tmp_path / "ready"
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    first = subprocess.Popen([sys.executable, "-c", LOCK_SCRIPT, str(results), str(ready)], env=env)
    try:
        for _ in range(3000):  # a loaded machine takes long to import torch in the subprocess
            if ready.exists() or first.poll() is not None:
                break
            time.sleep(0.05)
        assert ready.exists(), "the first writer did not start its run"
        fn = Counter()
        with pytest.raises(BlockingIOError, match="being written by another process"):
            run_grid(fn, GRID, results, seeds=SEEDS, progress=False)
        assert fn.calls == [] and results.read_text() == ""
    finally:
        first.kill()
        first.wait()
    # once the first writer is gone its lock is released
    assert len(run_grid(Counter(), GRID, results, seeds=SEEDS, progress=False)) == 12


def test_records_store_their_run_function_and_its_fixed_arguments(tmp_path):
    """Issue 20: each new record names its run function and the keyword arguments it got besides config and seed
    (not part of the key); a lambda or a local function has no importable name, so nothing is stored."""
    import functools

    from sslkit.experiments.runs.store import describe_call

    fn = functools.partial(metric_fn_scaled, factor=2.0)
    rec = run_grid(fn, {"method": ["a"], "n": [10]}, tmp_path / "r.jsonl", seeds=[0], progress=False)[0]
    assert rec["call"] == {"function": f"{__name__}.metric_fn_scaled", "arguments": {"factor": 2.0}}
    assert rec["key"] == run_key({"method": "a", "n": 10}, 0, "quick") and rec["metrics"]["acc"] == 30.0
    lam = run_grid(
        lambda **kw: metric_fn(**kw), {"method": ["a"], "n": [10]}, tmp_path / "l.jsonl", seeds=[0], progress=False
    )[0]
    assert "call" not in lam
    assert describe_call(functools.partial(metric_fn_scaled, object())) is None  # positional: not described
    assert describe_call(functools.partial(metric_fn_scaled, factor=object())) is None  # not JSON


def metric_fn_scaled(method, n, seed, *, factor=1.0):
    return {"acc": factor * metric_fn(method, n, seed)["acc"]}
