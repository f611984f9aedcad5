"""Where the runs of :func:`sslkit.experiments.runs.runner.run_grid` execute: here, on a Ray cluster, or on Slurm.

``run_grid(..., executor=...)`` takes

* ``"local"`` (the default): one run after another in this process;
* ``"ray"``: each run is a Ray task (``ray.remote``), by default ``num_cpus=1``; the driver (the process that
  called ``run_grid``) writes every record, as each task finishes;
* ``"slurm"``: the runs are a Slurm job array submitted with submitit; each job writes its record to its own
  file, ``<results folder>/<scale>.parts/<key>.json``, and the driver appends those to the results file.

or a dict ``{"name": "ray" | "slurm", ...options}`` naming the resources of one run. The options are passed
through to the engine unchanged, except for the few read here:

* Ray: ``address`` (for ``ray.init`` when Ray is not initialised yet; None: ``RAY_ADDRESS`` or a new local
  cluster) and ``retries`` (``max_retries``: how often a run whose worker died is restarted, default 3); every
  other key is a ``ray.remote`` option, e.g. ``{"name": "ray", "num_cpus": 4, "num_gpus": 1}``.
* Slurm: ``folder`` (submitit's logs and pickles, default ``<results folder>/<scale>.slurm/``; on a cluster it
  must be on a file system the nodes share), ``cluster`` (None: Slurm when ``sbatch`` is there; ``"local"``:
  submitit's local executor, what the tests use), ``retries`` (how often a job that ended without a record --
  killed, node failure, time limit -- is resubmitted, default 2) and ``poll_s`` (seconds between checks,
  default 5); every other key goes to ``AutoExecutor.update_parameters``, e.g. ``{"name": "slurm",
  "gpus_per_node": 1, "cpus_per_task": 4, "timeout_min": 720, "slurm_partition": "gpu"}``.

Exactly once: a run's record is written once, by the driver, keyed by :func:`~.runner.run_key`. A run whose
worker is killed is retried (Ray's ``max_retries``; a resubmitted Slurm job); a run whose ``fn`` raises is not
retried: the other runs finish and are recorded, then ``run_grid`` raises :class:`RunsFailed` naming each failed
run and its error. A killed driver loses only the runs in flight; the next ``run_grid`` on the same file (with
any executor) first merges the part files that finished jobs left behind, then runs only what is missing.
The driver holds the results file's lock (:func:`~.runner.run_grid`) for the whole sweep, merging included, so a
second driver on the same file gets a ``BlockingIOError`` instead of submitting the same runs again. Records are
built on the worker by one function for every executor (``torch_threads``, and ``hardware`` unless given, are the
worker's) and written as strict JSON (NaN metrics as ``null``, an infinite metric a failed run).

Ray and submitit are imported only when chosen (``pip install ray submitit``).
"""

from __future__ import annotations

import json
import os
import pickle
import re
import shutil
import time
from collections.abc import Mapping
from pathlib import Path

EXECUTORS = ("local", "ray", "slurm")
#: Options of either engine that are counts or amounts (:func:`parse_executor` checks them before anything starts).
NUMERIC_OPTIONS = frozenset(
    ("num_cpus", "num_gpus", "memory", "resource_wait_s", "retries", "poll_s", "gpus_per_node", "cpus_per_task")
    + ("timeout_min", "mem_gb", "nodes", "tasks_per_node")
)


class RunsFailed(RuntimeError):
    """Some runs of a grid raised; ``failures`` lists ``(config, seed, key, exception)`` of each."""

    def __init__(self, failures, total: int):
        self.failures = failures
        done = total - len(failures)
        lines = [f"{len(failures)} of {total} runs failed ({done} finished and are recorded); rerun to retry them:"]
        for config, seed, key, exc in failures:
            lines.append(f"  {key} {config} seed={seed}: {short_error(exc)}")
        super().__init__("\n".join(lines))


def short_error(exc) -> str:
    """One line for an exception: the last ``SomeError: message`` line of its text (a remote traceback ends
    with the original error), else its type and first line; capped at 300 characters."""
    lines = str(exc).strip().splitlines()
    errors = [line for line in lines if re.match(r"[A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt)\b", line)]
    text = errors[-1] if errors else f"{type(exc).__name__}: {lines[0] if lines else ''}"
    return text[:300]


def parse_executor(executor) -> tuple[str, dict]:
    """``"ray"`` or ``{"name": "ray", ...}`` -> ``("ray", {...options})``; ValueError/TypeError otherwise."""
    if isinstance(executor, str):
        name, options = executor, {}
    elif isinstance(executor, Mapping):
        options = dict(executor)
        name = options.pop("name", None)
    else:
        raise TypeError(f"executor must be 'local', 'ray', 'slurm' or a dict with a 'name', got {executor!r}")
    if name not in EXECUTORS:
        raise ValueError(f"executor name must be one of {EXECUTORS}, got {name!r}")
    if name == "local" and options:
        raise ValueError(f"the local executor takes no options, got {options}")
    for key in NUMERIC_OPTIONS.intersection(options):
        value = options[key]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < float("inf"):
            raise ValueError(f"executor option {key!r} must be a non-negative number, got {value!r}")
    return name, options


def _require(module: str):
    """Import ``ray`` or ``submitit``, or say how to install it."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(
            f"executor {'ray' if module == 'ray' else 'slurm'!r} needs {module}: pip install {module} "
            "(the pinned version is in .ci/requirements.txt)"
        ) from exc


def check_address(address, timeout_s: float = 5.0) -> None:
    """An explicit Ray address (``"host:port"``, ``"ray://host:port"``) must accept a TCP connection within
    ``timeout_s``: ``ray.init`` would retry for minutes. ``ConnectionError`` saying so; None, ``"auto"`` and
    ``"local"`` are left to Ray."""
    import socket

    if address in (None, "auto", "local"):
        return
    host, sep, port = str(address).removeprefix("ray://").rpartition(":")
    if not sep or not port.isdigit():
        raise ValueError(f"Ray address must look like 'host:port' or 'ray://host:port', got {address!r}")
    try:
        socket.create_connection((host, int(port)), timeout=timeout_s).close()
    except OSError as exc:
        raise ConnectionError(
            f"no Ray cluster answers at {address!r} ({exc.strerror or exc}); start one there with `ray start --head`, "
            "or leave out 'address' to start a local one"
        ) from None


def check_resources(ray, options: dict, wait_s: float) -> None:
    """Some live node of the Ray cluster must have what one run asks for (``num_cpus``, ``num_gpus``, ``memory``,
    ``resources``) within ``wait_s`` seconds (an autoscaler may add one meanwhile); else ``ValueError``: Ray would
    queue the runs forever."""
    need = {"CPU": options.get("num_cpus", 1), "GPU": options.get("num_gpus", 0), "memory": options.get("memory", 0)}
    need.update(options.get("resources") or {})
    need = {k: v for k, v in need.items() if v}
    deadline = time.monotonic() + wait_s
    while True:
        nodes = [n.get("Resources", {}) for n in ray.nodes() if n.get("Alive")]
        if any(all(res.get(k, 0) >= v for k, v in need.items()) for res in nodes):
            return
        if time.monotonic() >= deadline:
            have = ", ".join(
                f"{{{', '.join(f'{k}: {v:g}' for k, v in sorted(r.items()) if '.' not in k and 'node:' not in k)}}}"
                for r in nodes
            )
            raise ValueError(
                f"no node of the Ray cluster can run one run: each asks for {need}, the nodes have {have or 'nothing'} "
                f"(waited {wait_s:g} s); ask for what a node has (e.g. no 'num_gpus' on a CPU machine)"
            )
        time.sleep(min(1.0, max(0.0, deadline - time.monotonic())))


def ray_results(run_one, jobs, options):
    """Run ``run_one(config, seed, key)`` for each job as a Ray task; yield ``(job, record, error)`` as they end.

    ``run_one`` is a picklable callable carrying ``fn`` and the record's fixed fields (see ``runner``). An
    unreachable ``address`` or a request no node can meet is an error within ``resource_wait_s`` (default 60)
    seconds (:func:`check_address`, :func:`check_resources`), not a sweep that waits forever.
    """
    ray = _require("ray")
    options = dict(options)
    address = options.pop("address", None)
    retries = options.pop("retries", 3)
    wait_s = options.pop("resource_wait_s", 60)
    options.setdefault("num_cpus", 1)
    if not ray.is_initialized():
        check_address(address)
        ray.init(address=address)
    check_resources(ray, options, wait_s)
    task = ray.remote(_call).options(max_retries=retries, retry_exceptions=False, **options)
    run_ref = ray.put(run_one)  # shipped once, not once per run
    pending = {task.remote(run_ref, config, seed, key): (config, seed, key) for config, seed, key in jobs}
    while pending:
        ready, _ = ray.wait(list(pending), num_returns=1)
        job = pending.pop(ready[0])
        try:
            record = ray.get(ready[0])
        except Exception as exc:  # the run raised, or its worker died more than `retries` times
            yield job, None, exc
        else:
            yield job, record, None


def _call(run_one, config, seed, key):
    return run_one(config, seed, key)


def parts_dir(path: Path) -> Path:
    """Folder where Slurm jobs leave one record each: ``<results folder>/<scale>.parts/``."""
    return path.parent / f"{path.stem}.parts"


def write_part(folder: Path, record: dict) -> None:
    """Write one record to ``<folder>/<key>.json`` atomically (temporary file, fsync, rename)."""
    folder.mkdir(parents=True, exist_ok=True)
    final = folder / f"{record['key']}.json"
    tmp = folder / f".{record['key']}.{os.getpid()}.tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(json.dumps(record, allow_nan=False))
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, final)


def read_parts(folder: Path) -> list[tuple[Path, dict]]:
    """Every ``(file, record)`` a job left in ``folder`` (whole files only: they are renamed into place)."""
    if not folder.is_dir():
        return []
    out = []
    for part in sorted(folder.glob("*.json")):
        try:
            record = json.loads(part.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ValueError(f"{part}: a Slurm job's part file that is not a JSON record ({exc}); remove it") from None
        if not isinstance(record, dict) or record.get("key") != part.stem:
            raise ValueError(f"{part}: not the record of run {part.stem}")
        out.append((part, record))
    return out


def _slurm_job(run_file: str, config, seed, key, parts: str) -> str:
    """One Slurm job: load the pickled ``run_one``, run it, leave its record in ``parts``."""
    with open(run_file, "rb") as fh:
        run_one = pickle.load(fh)
    write_part(Path(parts), run_one(config, seed, key))
    return key


def slurm_results(run_one, jobs, options, path: Path):
    """Run the jobs as a submitit job array; yield ``(job, record, error)`` as jobs end.

    A job that ended without a record and without an error of its own (killed, node failure, time limit:
    submitit's ``UncompletedJobError``) is resubmitted up to ``retries`` times; one whose ``fn`` raised
    (``FailedJobError``, a subclass) is not.
    """
    submitit = _require("submitit")
    import cloudpickle
    from submitit.core.utils import FailedJobError, UncompletedJobError

    options = dict(options)
    folder = Path(options.pop("folder", path.parent / f"{path.stem}.slurm"))
    retries = options.pop("retries", 2)
    poll_s = options.pop("poll_s", 5)
    cluster = options.pop("cluster", None)
    if cluster is None and shutil.which("sbatch") is None:
        raise FileNotFoundError(
            "executor 'slurm' needs Slurm, and sbatch is not on PATH here; to run its jobs as subprocesses of this "
            "machine (tests), ask for it: {'name': 'slurm', 'cluster': 'local'}"
        )
    executor = submitit.AutoExecutor(folder=folder / "jobs", cluster=cluster)
    executor.update_parameters(**options)
    folder.mkdir(parents=True, exist_ok=True)
    run_file = folder / f"run_one.{os.getpid()}.pkl"  # fn and its data, pickled once for every job
    with open(run_file, "wb") as fh:
        cloudpickle.dump(run_one, fh)
    parts = parts_dir(path)
    parts.mkdir(parents=True, exist_ok=True)

    def submit(batch):
        n = len(batch)
        configs, seeds, keys = ([job[i] for job in batch] for i in range(3))
        return executor.map_array(_slurm_job, [str(run_file)] * n, configs, seeds, keys, [str(parts)] * n)

    running = {job[2]: (job, handle) for job, handle in zip(jobs, submit(jobs))}
    tries = dict.fromkeys(running, 1)
    while running:
        finished = [key for key, (_, handle) in running.items() if handle.done()]
        if not finished:
            time.sleep(poll_s)
        for key in finished:
            job, handle = running.pop(key)
            part = parts / f"{key}.json"
            if part.exists():
                yield job, json.loads(part.read_text(encoding="utf-8")), None
                continue
            error = handle.exception() or RuntimeError(f"job {handle.job_id} ended without a record")
            died = isinstance(error, UncompletedJobError) and not isinstance(error, FailedJobError)
            if died and tries[key] <= retries:
                tries[key] += 1
                running[key] = (job, submit([job])[0])
            else:
                yield job, None, error
    run_file.unlink(missing_ok=True)
