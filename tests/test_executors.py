"""run_grid's executors (issue 13): Ray and submitit give the local executor's records; killed workers and
killed drivers lose nothing and duplicate nothing; a failing run is reported, not retried.

Ray runs on a local cluster of 2 CPUs, Slurm through submitit's local executor (``cluster="local"``): each
job a subprocess of this machine. Both are skipped, with the reason, when the package is not installed.
"""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from sslkit.experiments import load_results, run_grid, run_key
from sslkit.experiments.runs.executors import RunsFailed, parse_executor

REPO = Path(__file__).resolve().parents[1]
GRID = {"n": [10, 20, 30]}
SEEDS = [0, 1]  # 6 runs
# torch_threads is the worker's (a Ray worker's is its num_cpus): checked against fn's own count in the strict tests
# platform: holds the thread count; call: the run function's name (a script's __main__.fn vs this module's fn)
VOLATILE = ("seconds", "finished_at", "torch_threads", "platform", "call")
SLURM = {"name": "slurm", "cluster": "local", "poll_s": 0.2, "timeout_min": 5}

try:  # submitit's jobs and Ray's workers unpickle this file's functions: send them by value
    import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])
except ImportError:
    pass


def fn(n, seed):
    """Deterministic metrics from numpy with the run's seed."""
    x = np.random.default_rng(seed).normal(size=n)
    return {"mean": float(x.mean()), "std": float(x.std()), "n": n}


def stable(records):
    return [{k: v for k, v in r.items() if k not in VOLATILE} for r in records]


def _log(path, entry):
    with open(path, "a") as fh:
        fh.write(json.dumps(entry) + "\n")


def _entries(path):
    return [tuple(json.loads(line)) for line in path.read_text().splitlines()] if path.exists() else []


def _first_time(marker: Path) -> bool:
    """True exactly once per marker file, across processes."""
    try:
        os.close(os.open(marker, os.O_CREAT | os.O_EXCL))
        return True
    except FileExistsError:
        return False


def _check_complete(path, reference):
    """The results file holds each run of ``reference`` exactly once, with the same metrics and keys."""
    records = load_results(path)
    keys = [r["key"] for r in records]
    assert len(keys) == len(set(keys)) == len(reference)
    by_key = {r["key"]: r for r in records}
    assert stable([by_key[r["key"]] for r in reference]) == stable(reference)


def _strict_fn(results):
    """A run function reporting, from the process that runs it, whether ``results`` is locked and its torch
    thread count; with a NaN metric (stored as null). The seed 1 of n=30 returns an infinite metric."""

    def strict(n, seed):
        import fcntl

        import torch

        with open(results, "ab") as fh:
            try:
                fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                locked = True
            else:
                locked = False
                fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
        gain = float("inf") if (n, seed) == (30, 1) else 1.0
        return {**fn(n, seed), "locked": locked, "threads": torch.get_num_threads(), "loss": np.nan, "gain": gain}

    return strict


def _check_strict(path, records, failures):
    """Records of ``_strict_fn``: worker's thread count, lock held by the driver, NaN as null, strict JSON;
    the infinite metric a failed run."""
    assert [(c["n"], s) for c, s, _, _ in failures] == [(30, 1)]
    assert "is inf" in str(failures[0][3])
    assert len(records) == 5
    for r in records:
        assert r["torch_threads"] == r["metrics"]["threads"]  # measured where fn ran
        assert r["metrics"]["locked"] is True  # the driver held the lock while the run ran
        assert r["metrics"]["loss"] is None
    text = path.read_text()
    assert "NaN" not in text and "Infinity" not in text  # strict JSON: null for NaN, no infinity


@pytest.fixture
def local_records(tmp_path):
    return run_grid(fn, GRID, tmp_path / "local.jsonl", seeds=SEEDS, progress=False)


def test_chapter_c_notebooks_take_an_executor_parameter():
    """So that `sslkit reproduce c-tradeoff --scale paper -p executor=ray` is accepted: every notebook of a paper-C
    experiment has an executor parameter."""
    from sslkit.experiments import catalog
    from sslkit.experiments.notebooks import notebook_parameters

    for stem in {e.notebook for e in catalog.experiments("C")}:
        assert notebook_parameters(REPO / "notebooks" / f"{stem}.md")["executor"] == "local"


# --- no engine needed ---------------------------------------------------------------------------------------


def test_executor_spec_is_checked():
    assert parse_executor("local") == ("local", {})
    assert parse_executor({"name": "ray", "num_gpus": 1}) == ("ray", {"num_gpus": 1})
    with pytest.raises(ValueError, match="one of"):
        parse_executor("dask")
    with pytest.raises(ValueError, match="one of"):
        parse_executor({"num_gpus": 1})
    with pytest.raises(ValueError, match="no options"):
        parse_executor({"name": "local", "num_cpus": 2})
    with pytest.raises(TypeError, match="executor must be"):
        parse_executor(3)


@pytest.mark.parametrize("name, module", [("ray", "ray"), ("slurm", "submitit")])
def test_missing_engine_is_a_clear_import_error(tmp_path, monkeypatch, name, module):
    monkeypatch.setitem(sys.modules, module, None)  # makes `import module` fail
    with pytest.raises(ImportError, match=f"pip install {module}"):
        run_grid(fn, GRID, tmp_path / "r.jsonl", seeds=SEEDS, progress=False, executor=name, hardware="x")
    assert not (tmp_path / "r.jsonl").exists() or load_results(tmp_path / "r.jsonl") == []


def test_part_files_of_a_dead_driver_are_merged_once(tmp_path, local_records):
    """A Slurm job that finished after its driver died left its record in <scale>.parts/: any executor's next
    run_grid appends it (not rerunning it) and removes the part; a part already in the file is dropped."""
    path = tmp_path / "quick.jsonl"
    parts = tmp_path / "quick.parts"
    parts.mkdir()
    for rec in local_records[:2]:
        (parts / f"{rec['key']}.json").write_text(json.dumps(rec))
    calls = []
    records = run_grid(lambda **kw: calls.append(kw) or fn(**kw), GRID, path, seeds=SEEDS, progress=False)
    assert len(calls) == 4 and stable(records) == stable(local_records)
    (parts / f"{local_records[0]['key']}.json").write_text(json.dumps(local_records[0]))  # a late duplicate
    run_grid(fn, GRID, path, seeds=SEEDS, progress=False)
    assert list(parts.iterdir()) == []
    _check_complete(path, local_records)


def test_part_files_are_merged_under_the_lock_only(tmp_path, local_records):
    """A leftover part is merged only by a writer holding the lock; a part of another grid does not stop a
    finished sweep from only reading; a part written before NaN was stored as null is merged with null."""
    import fcntl

    path = tmp_path / "quick.jsonl"
    parts = tmp_path / "quick.parts"
    run_grid(fn, GRID, path, seeds=[0], progress=False)
    parts.mkdir()
    late = local_records[1]  # n=10, seed=1
    (parts / f"{late['key']}.json").write_text(json.dumps({**late, "metrics": {**late["metrics"], "x": np.nan}}))
    with open(path, "ab") as other:  # another writer holds the file
        fcntl.flock(other.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        with pytest.raises(BlockingIOError, match="being written by another process"):
            run_grid(fn, GRID, path, seeds=SEEDS, progress=False)
        assert [p.stem for p in parts.iterdir()] == [late["key"]] and len(load_results(path)) == 3
        assert len(run_grid(fn, GRID, path, seeds=[0], progress=False)) == 3  # finished: read only, no lock
        other_grid = run_key({"n": 99}, 0, "quick")
        (parts / f"{other_grid}.json").write_text(json.dumps({**late, "key": other_grid}))
    calls = []
    records = run_grid(lambda **kw: calls.append(kw) or fn(**kw), GRID, path, seeds=SEEDS, progress=False)
    assert len(calls) == 2 and list(parts.iterdir()) == []  # the late part and the other grid's part merged
    assert records[1]["key"] == late["key"] and records[1]["metrics"] == {**late["metrics"], "x": None}
    assert stable(records[:1] + records[2:]) == stable(local_records[:1] + local_records[2:])
    assert "NaN" not in path.read_text()
    assert len(load_results(path)) == 7


# --- Ray --------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def ray_cluster():
    ray = pytest.importorskip("ray", reason="ray is not installed (pip install -r .ci/requirements.txt)")
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])  # Ray ships its own cloudpickle
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


@pytest.mark.slow
def test_ray_gives_the_local_records(ray_cluster, tmp_path, local_records):
    records = run_grid(fn, GRID, tmp_path / "ray.jsonl", seeds=SEEDS, progress=False, executor="ray")
    assert stable(records) == stable(local_records)  # metrics, keys, hardware, version, config order
    assert load_results(tmp_path / "ray.jsonl") != [] and len(load_results(tmp_path / "ray.jsonl")) == 6


@pytest.mark.slow
def test_ray_records_are_built_on_the_worker_and_written_strictly_under_the_lock(ray_cluster, tmp_path):
    path = tmp_path / "r.jsonl"
    with pytest.raises(RunsFailed, match="1 of 6 runs failed") as info:
        run_grid(_strict_fn(path), GRID, path, seeds=SEEDS, progress=False, executor="ray")
    _check_strict(path, load_results(path), info.value.failures)


@pytest.mark.slow
def test_ray_failing_run_is_reported_not_retried(ray_cluster, tmp_path):
    attempts = tmp_path / "attempts.log"

    def failing(n, seed):
        _log(attempts, [n, seed])
        if n == 20:
            raise ValueError(f"n={n} is not allowed")
        return fn(n, seed)

    with pytest.raises(RunsFailed, match="n=20 is not allowed") as info:
        run_grid(failing, GRID, tmp_path / "r.jsonl", seeds=SEEDS, progress=False, executor="ray", hardware="x")
    assert sorted((c["n"], s) for c, s, _, _ in info.value.failures) == [(20, 0), (20, 1)]
    assert sorted(r["config"]["n"] for r in load_results(tmp_path / "r.jsonl")) == [10, 10, 30, 30]
    assert sorted(_entries(attempts)) == sorted((n, s) for n in GRID["n"] for s in SEEDS)  # each tried once


@pytest.mark.slow
def test_ray_killed_worker_is_retried(ray_cluster, tmp_path, local_records):
    attempts = tmp_path / "attempts.log"

    def killed_once(n, seed):
        _log(attempts, [n, seed])
        if (n, seed) == (20, 1) and _first_time(tmp_path / "killed"):
            os.kill(os.getpid(), signal.SIGKILL)  # the Ray worker process dies mid-run
        return fn(n, seed)

    path = tmp_path / "r.jsonl"
    run_grid(killed_once, GRID, path, seeds=SEEDS, progress=False, executor="ray")
    _check_complete(path, local_records)
    started = _entries(attempts)
    assert started.count((20, 1)) == 2 and len(started) == 7  # only the killed run ran twice


@pytest.mark.slow
def test_ray_worker_that_always_dies_is_reported(ray_cluster, tmp_path):
    def always_killed(n, seed):
        if n == 30:
            os.kill(os.getpid(), signal.SIGKILL)
        return fn(n, seed)

    with pytest.raises(RunsFailed, match="2 of 6 runs failed") as info:
        run_grid(
            always_killed,
            GRID,
            tmp_path / "r.jsonl",
            seeds=SEEDS,
            progress=False,
            hardware="x",
            executor={"name": "ray", "retries": 1},
        )
    assert {c["n"] for c, _, _, _ in info.value.failures} == {30}
    assert len(load_results(tmp_path / "r.jsonl")) == 4


DRIVER = textwrap.dedent(
    """
    import json, sys, time
    import numpy as np
    from sslkit.experiments import run_grid

    results, started, executor = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])

    def fn(n, seed):
        with open(started, "a") as fh:
            fh.write(json.dumps([n, seed]) + "\\n")
        time.sleep(0.5)
        x = np.random.default_rng(seed).normal(size=n)
        return {"mean": float(x.mean()), "std": float(x.std()), "n": n}

    if (executor if isinstance(executor, str) else executor["name"]) == "ray":
        import ray
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    run_grid(fn, {"n": [10, 20, 30, 40]}, results, seeds=[0, 1, 2], progress=False, executor=executor,
             hardware="test rig")
    """
)
DRIVER_GRID = {"n": [10, 20, 30, 40]}
DRIVER_SEEDS = [0, 1, 2]  # 12 runs


def _driver(tmp_path, results, executor):
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    args = [sys.executable, "-c", DRIVER, str(results), str(tmp_path / "started.log"), json.dumps(executor)]
    return subprocess.Popen(args, env=env, start_new_session=True, stderr=subprocess.PIPE, text=True)


def _kill_driver_mid_sweep(tmp_path, results, executor, after=3, session=True, limit_s=240):
    """Start a driver; SIGKILL it once ``after`` records are written, and (``session``) what it started."""
    proc = _driver(tmp_path, results, executor)
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline and proc.poll() is None:
        if results.exists() and len(results.read_text().splitlines()) >= after:
            break
        time.sleep(0.05)
    assert proc.poll() is None, f"the driver ended before it was killed: {proc.stderr.read()[-2000:]}"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    if session:
        _kill_session(proc.pid)
    proc.stderr.close()
    assert proc.returncode == -9
    return len(load_results(results)), proc.pid


def _kill_session(pid):
    """SIGKILL what a driver started in its session (Ray's local cluster, submitit's local jobs)."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _resume(tmp_path, results, executor):
    proc = _driver(tmp_path, results, executor)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err[-3000:]


@pytest.mark.parametrize("resume_with", ["ray", "local"])
@pytest.mark.slow
def test_killed_ray_driver_resumes_nothing_lost_nothing_duplicated(tmp_path, resume_with):
    pytest.importorskip("ray", reason="ray is not installed (pip install -r .ci/requirements.txt)")
    results = tmp_path / "r.jsonl"
    kept, _ = _kill_driver_mid_sweep(tmp_path, results, "ray")
    assert 3 <= kept < 12
    before = {r["key"] for r in load_results(results)}
    n_started = len(_entries(tmp_path / "started.log"))
    _resume(tmp_path, results, resume_with)  # a sweep is resumable by any executor
    reference = run_grid(
        fn, DRIVER_GRID, tmp_path / "ref.jsonl", seeds=DRIVER_SEEDS, progress=False, hardware="test rig"
    )
    _check_complete(results, reference)
    restarted = {run_key({"n": n}, s, "quick") for n, s in _entries(tmp_path / "started.log")[n_started:]}
    assert not restarted & before  # runs recorded before the kill were not run again


# --- Slurm through submitit ---------------------------------------------------------------------------------


@pytest.fixture
def submitit():
    return pytest.importorskip("submitit", reason="submitit is not installed (pip install -r .ci/requirements.txt)")


@pytest.mark.slow
def test_slurm_gives_the_local_records(submitit, tmp_path, local_records):
    path = tmp_path / "quick.jsonl"
    records = run_grid(fn, GRID, path, seeds=SEEDS, progress=False, executor=SLURM)
    assert stable(records) == stable(local_records)
    assert list((tmp_path / "quick.parts").iterdir()) == []  # every part merged into the results file
    assert (tmp_path / "quick.slurm" / "jobs").is_dir()  # submitit's logs, one set per job


@pytest.mark.slow
def test_slurm_records_are_built_in_the_job_and_written_strictly_under_the_lock(submitit, tmp_path):
    path = tmp_path / "quick.jsonl"
    with pytest.raises(RunsFailed, match="1 of 6 runs failed") as info:
        run_grid(_strict_fn(path), GRID, path, seeds=SEEDS, progress=False, executor=SLURM)
    _check_strict(path, load_results(path), info.value.failures)
    assert list((tmp_path / "quick.parts").iterdir()) == []


@pytest.mark.slow
def test_slurm_killed_job_is_resubmitted_failing_job_reported(submitit, tmp_path, local_records):
    attempts = tmp_path / "attempts.log"

    def flaky(n, seed):
        _log(attempts, [n, seed])
        if (n, seed) == (10, 0) and _first_time(tmp_path / "killed"):
            os.kill(os.getpid(), signal.SIGKILL)  # the job's process dies: no result, no record
        if n == 30:
            raise ValueError("n=30 diverged")
        return fn(n, seed)

    path = tmp_path / "quick.jsonl"
    with pytest.raises(RunsFailed, match="n=30 diverged") as info:
        run_grid(flaky, GRID, path, seeds=SEEDS, progress=False, executor=SLURM)
    assert sorted((c["n"], s) for c, s, _, _ in info.value.failures) == [(30, 0), (30, 1)]
    started = _entries(attempts)
    assert started.count((10, 0)) == 2 and started.count((30, 0)) == started.count((30, 1)) == 1
    _check_complete(path, [r for r in local_records if r["config"]["n"] != 30])


@pytest.mark.slow
def test_killed_slurm_driver_its_jobs_records_are_merged_not_rerun(submitit, tmp_path):
    """The driver dies, its jobs do not: they leave their records in quick.parts/, and the next run_grid
    (here the local executor) appends them and runs nothing again."""
    results, parts = tmp_path / "quick.jsonl", tmp_path / "quick.parts"
    _, session = _kill_driver_mid_sweep(tmp_path, results, SLURM, after=1, session=False)
    try:
        kept = {r["key"] for r in load_results(results)}

        def finished():  # a part may also be in the file: the driver died between appending and removing it
            return kept | {p.stem for p in parts.glob("*.json")}

        deadline = time.monotonic() + 240
        while len(finished()) < 12 and time.monotonic() < deadline:
            time.sleep(0.2)  # the orphaned jobs finish
        assert len(finished()) == 12 and finished() != kept
        n_started = len(_entries(tmp_path / "started.log"))
        _resume(tmp_path, results, "local")
        assert len(_entries(tmp_path / "started.log")) == n_started  # nothing ran again
        reference = run_grid(
            fn, DRIVER_GRID, tmp_path / "ref.jsonl", seeds=DRIVER_SEEDS, progress=False, hardware="test rig"
        )
        _check_complete(results, reference)
        assert list(parts.iterdir()) == []
    finally:
        _kill_session(session)


# --- bad requests fail fast (issue 19 §6) ----------------------------------------------------------------------


@pytest.mark.slow
def test_ray_request_no_node_can_meet_fails_within_the_wait(ray_cluster, tmp_path):
    """A GPU asked of a CPU-only cluster used to queue forever; now an error naming the request and the nodes."""
    start = time.monotonic()
    executor = {"name": "ray", "num_gpus": 1, "resource_wait_s": 2}
    with pytest.raises(ValueError, match="no node of the Ray cluster can run one run: each asks for .*GPU"):
        run_grid(fn, GRID, tmp_path / "r.jsonl", seeds=SEEDS, progress=False, executor=executor)
    assert time.monotonic() - start < 60
    path = tmp_path / "r.jsonl"  # nothing ran: a sweep that fails before its first record leaves no results file
    assert not path.exists() or not load_results(path)


def test_unreachable_ray_address_fails_at_once():
    from sslkit.experiments.runs.executors import check_address

    start = time.monotonic()
    with pytest.raises(ConnectionError, match="no Ray cluster answers at '127.0.0.1:1'"):
        check_address("127.0.0.1:1", timeout_s=5)
    with pytest.raises(ValueError, match="host:port"):
        check_address("nowhere")
    check_address(None)  # left to Ray: RAY_ADDRESS or a new local cluster
    assert time.monotonic() - start < 30


@pytest.mark.slow
def test_unreachable_ray_address_stops_a_sweep_within_a_minute(tmp_path):
    """In a fresh process (Ray not initialised): run_grid with an address where nothing listens."""
    script = (
        "import sys; from sslkit.experiments import run_grid\n"
        "run_grid(lambda n, seed: {'n': n}, {'n': [1]}, sys.argv[1], seeds=[0], progress=False,\n"
        "         executor={'name': 'ray', 'address': '127.0.0.1:1'})\n"
    )
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    start = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "r.jsonl")], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode != 0 and "no Ray cluster answers at '127.0.0.1:1'" in done.stderr, done.stderr[-2000:]
    assert time.monotonic() - start < 90  # Python and Ray's import included


def test_slurm_without_sbatch_is_an_error_unless_a_local_cluster_is_asked_for(tmp_path, monkeypatch):
    pytest.importorskip("submitit", reason="submitit is not installed")
    import shutil

    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(FileNotFoundError, match="sbatch is not on PATH.*'cluster': 'local'"):
        run_grid(fn, GRID, tmp_path / "s.jsonl", seeds=SEEDS, progress=False, executor={"name": "slurm"})
    assert not (tmp_path / "s.jsonl").exists()  # it did not run locally instead (and left no empty file)
