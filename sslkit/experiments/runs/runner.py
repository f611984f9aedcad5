"""Run a grid of experiments (method x setting x seed) into a results file, one record per finished run
(the record's format, its key and reading the file: :mod:`.store`).

Rules kept deliberately simple:

* A run whose ``fn`` raises records nothing and the exception propagates; the finished runs before it
  stay in the file, and rerunning the sweep retries the failed run.
* Runs whose key is already in the file are skipped. With a ``version``, a stored record of another protocol
  version is never reused silently: :func:`run_grid` raises :class:`~.store.StaleResultsError`, or with
  ``on_stale="rerun"`` reruns those runs and appends records of the new version beside the old ones; it
  uses the record of exactly its version (without ``version``: the newest of each key).
* One writer per results file: :func:`run_grid` holds an exclusive ``fcntl.flock`` on the file while it
  repairs and appends; a second process that tries to write the same file meanwhile gets a
  ``BlockingIOError`` (an ``OSError``) at once instead of duplicating records (on systems without
  ``fcntl`` there is no lock). A sweep with nothing left to run only reads the file (no lock, no write
  access needed). With the ray and slurm executors the driver (the process that called :func:`run_grid`)
  is this one writer: it holds the lock for the whole sweep and appends each record as its run ends
  (Slurm jobs leave part files that only the driver merges, also those of a killed driver, under the lock).
* ``executor="ray"`` / ``"slurm"`` (:mod:`.executors`) run the same runs elsewhere and write the same records
  (``torch_threads`` and a default ``hardware`` measured on the worker); there a failing run does not stop
  the others (:class:`~.executors.RunsFailed` is raised at the end).
* Each record stores the run function and its fixed keyword arguments (``call``, :func:`~.store.describe_call`)
  when ``fn`` is a module-level function or a ``functools.partial`` of one.
* A results path that is a directory or cannot be written gives one clear ``OSError`` naming the file; a file
  there that is not a results file (or whose complete last line is corrupt) a ``ValueError``, and it is left as it
  is (:func:`~.store.parse_lines`). A sweep that created the results file and ends (or fails) before its first
  record removes it again, with the folders it made for it: a failed run leaves no empty results file.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import itertools
import json
import os
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover - not on Linux / macOS: no lock
    fcntl = None

from sslkit._checks import check_seed

from .store import (
    ON_STALE,
    StaleResultsError,
    check_json_dict,
    check_version,
    describe_call,
    latest_records,
    parse_lines,
    read_bytes,
    record_version,
    run_key,
    stored_metrics,
    to_json_value,
)


def expand_grid(grid) -> list[dict]:
    """Return the grid as a list of config dicts.

    ``grid`` is either a list of config dicts (used as given) or a dict of lists, expanded to their
    cartesian product in key order (the last key varies fastest)::

        expand_grid({"method": ["a", "b"], "n": [10, 20]})
        # [{"method": "a", "n": 10}, {"method": "a", "n": 20}, {"method": "b", "n": 10}, ...]
    """
    if isinstance(grid, Mapping):
        names = list(grid)
        for name in names:
            values = grid[name]
            if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
                raise TypeError(
                    f"grid[{name!r}] must be a list of values, got {type(values).__name__} {values!r}; "
                    f"write {{{name!r}: [{values!r}]}} for a single value"
                )
        configs = [dict(zip(names, combo)) for combo in itertools.product(*(grid[n] for n in names))]
    elif isinstance(grid, Sequence) and not isinstance(grid, (str, bytes)):
        configs = []
        for i, config in enumerate(grid):
            if not isinstance(config, Mapping):
                raise TypeError(f"grid[{i}] must be a config dict, got {type(config).__name__}")
            configs.append(dict(config))
    else:
        raise TypeError(f"grid must be a list of config dicts or a dict of lists, got {type(grid).__name__}")
    if not configs:
        raise ValueError("grid is empty: it expands to no config")
    for config in configs:
        if "seed" in config:
            raise ValueError(f"config {config!r} has a 'seed' entry; pass seeds through the seeds argument")
    return configs


def _check_seeds(seeds) -> list[int]:
    if isinstance(seeds, (str, bytes)) or not hasattr(seeds, "__iter__"):
        raise TypeError(f"seeds must be a list of integers (e.g. range(5)), got {seeds!r}")
    out = [check_seed(s, "seeds[]") for s in seeds]
    if not out:
        raise ValueError("seeds is empty: give at least one seed")
    if len(set(out)) != len(out):
        raise ValueError(f"seeds contains duplicates: {out}")
    return out


def _load_and_repair(path: Path) -> list[dict]:
    """Load the records; cut off a truncated last line and make sure the file ends with a newline.

    Called with the file's lock held (:func:`_locked`), so no other writer is mid-line.
    """
    data = read_bytes(path)
    records, broken_at = parse_lines(data, path)
    if broken_at is not None:
        with open(path, "r+b") as fh:
            fh.truncate(broken_at)
            fh.flush()
            os.fsync(fh.fileno())
    elif data and not data.endswith(b"\n"):
        with open(path, "ab") as fh:
            fh.write(b"\n")
            fh.flush()
            os.fsync(fh.fileno())
    return records


@contextlib.contextmanager
def _locked(path: Path):
    """Open ``path`` for appending (creating it and its folder) under an exclusive, non-blocking lock.

    Yields the binary file handle. ``OSError`` naming the path when it is a directory or cannot be
    written; ``BlockingIOError`` when another process holds the lock (it is writing the same file).
    """
    if path.is_dir():
        raise IsADirectoryError(f"results path {str(path)!r} is a directory, not a results file (a .jsonl file)")
    new_dirs = [d for d in (path.parent, *path.parent.parents) if not d.exists()]
    created = not path.exists()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fh = open(path, "ab")
    except OSError as exc:
        raise OSError(f"cannot write the results file {str(path)!r}: {exc.strerror or exc}") from exc
    with fh, _removed_if_empty(path, fh, created, new_dirs):
        if fcntl is not None:
            try:
                fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise BlockingIOError(
                    f"results file {str(path)!r} is being written by another process (it holds the file's lock); "
                    "two sweeps appending to one file would duplicate records: wait for the other one to finish, "
                    "or give this one another results file"
                ) from None
        yield fh


@contextlib.contextmanager
def _removed_if_empty(path: Path, fh, created: bool, new_dirs):
    """On leaving (also by an exception): remove the results file this call ``created`` when nothing was written
    to it (a sweep whose first run failed leaves no empty file), and the folders made for it (``new_dirs``)."""
    try:
        yield
    finally:
        if created and fh.tell() == 0:
            path.unlink(missing_ok=True)
            for d in new_dirs:
                with contextlib.suppress(OSError):
                    d.rmdir()  # only an empty folder; stops quietly at the first that is not


def _append(fh, line: str) -> None:
    fh.write(line.encode("utf-8") + b"\n")
    fh.flush()
    os.fsync(fh.fileno())


class _Run:
    """``fn`` and the fixed fields of its records: what a worker (any executor) needs to run one (config, seed).

    The one place records are built: ``torch_threads`` (and, without a ``hardware`` label, the hardware) is
    measured in the process that runs ``fn`` -- a Ray or Slurm worker, or this one.
    """

    def __init__(self, fn, scale, hardware, extra, version=None):
        self.fn, self.scale, self.hardware, self.extra, self.version = fn, scale, hardware, extra, version
        self.call = describe_call(fn)

    def __call__(self, config, seed, key) -> dict:
        """Run ``fn(**config, seed=seed)`` and return its record (strict JSON values: NaN metrics as None).

        The exception of ``fn`` propagates; an infinite metric is a ``ValueError``.
        """
        import torch

        import sslkit

        from .hardware import hardware_summary, platform_fingerprint

        threads = torch.get_num_threads()
        fingerprint = platform_fingerprint()
        start = time.perf_counter()
        metrics = self.fn(**config, seed=seed)
        seconds = time.perf_counter() - start
        metrics = stored_metrics(metrics)
        record = {
            "key": key,
            "config": config,
            "seed": seed,
            "scale": self.scale,
            "metrics": metrics,
            "seconds": round(seconds, 4),
            "hardware": hardware_summary() if self.hardware is None else self.hardware,
            "torch_threads": threads,
            "sslkit_version": sslkit.__version__,
            "finished_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            "extra": self.extra,
            "platform": fingerprint,
        }
        if self.version is not None:
            record["protocol_version"] = self.version
        if self.call is not None:
            record["call"] = self.call
        return json.loads(_record_line(record))


def _record_line(record: dict) -> str:
    """One results-file line: strict JSON (``ValueError`` for a NaN or an infinity left in ``record``)."""
    return json.dumps(record, default=to_json_value, allow_nan=False)


def run_grid(
    fn,
    grid,
    results_path,
    *,
    seeds,
    scale="quick",
    progress=True,
    extra=None,
    hardware=None,
    executor="local",
    version=None,
    on_stale="error",
) -> list[dict]:
    """Run ``fn(**config, seed=seed)`` for every config of ``grid`` and every seed; return the records.

    Parameters
    ----------
    fn : callable
        Returns a dict of metrics (JSON-serialisable values; numpy scalars are converted).
    grid : list of dict or dict of lists
        See :func:`expand_grid`. Configs must not contain ``seed``.
    results_path : path
        JSONL file; created (with its folder) when missing. Runs already in it are skipped.
    seeds : iterable of int
        E.g. ``range(5)``; every config runs once per seed.
    scale : str
        ``"quick"`` or ``"paper"`` (any non-empty label); part of the run key and of each record.
    progress : bool
        Show a tqdm bar on stderr.
    extra : dict, optional
        JSON-serialisable facts stored with each new record (e.g. ``{"data": "CIFAR-10 JPEG q75"}``);
        not part of the key.
    hardware : str, optional
        Hardware label stored with each new record; default ``hardware_summary("auto")``. Pass
        ``hardware_summary(device)`` when ``fn`` runs on another device than "auto" would pick. With the
        ray and slurm executors the default is measured on each run's worker; a string given here is stored
        as given, so describe the workers' hardware, not the driver's.
    executor : str or dict
        ``"local"`` (one run after another here), ``"ray"`` or ``"slurm"``, or a dict with the resources
        of one run, e.g. ``{"name": "ray", "num_gpus": 1}``; see :mod:`sslkit.experiments.executors`.
        The records and keys do not depend on it, so any executor can resume a sweep. Whatever the
        executor, this process (the driver) is the only writer of ``results_path`` and holds its lock.
    version : int, optional
        The protocol version of ``fn`` (its module's ``PROTOCOL_VERSION``), stored in each new record as
        ``protocol_version``; not part of the key. Only records of this version are reused; a record without
        the field counts as version 1. None: no version is stored, and any record of the key is reused (the
        one of the highest version).
    on_stale : {"error", "rerun"}
        What to do when runs of the grid have stored records of other versions only: ``"error"`` raises
        :class:`StaleResultsError` before anything runs; ``"rerun"`` reruns them and appends records of
        ``version`` (the old ones stay in the file; :func:`load_results` then returns the newest).

    Returns
    -------
    list of dict
        One record per (config, seed) of this grid, old and new, in grid order (config-major).
        Records of other grids sharing the file are not returned (use :func:`load_results`).

    Raises
    ------
    StaleResultsError
        With ``version`` and ``on_stale="error"``: runs of this grid have records of other protocol versions
        only (a ``ValueError``; the message names the file, the versions and the ways out).
    OSError
        ``results_path`` is a directory (``IsADirectoryError``), or cannot be read or written (the message
        names it).
    BlockingIOError
        Another process is writing the same results file (it holds the lock); an ``OSError`` too.
    ValueError
        A corrupt line before the last one, or an infinite metric (NaN metrics are stored as ``null``).
    RunsFailed
        With the ray and slurm executors: some runs raised (the others finished and are recorded). The
        local executor lets the first exception propagate instead.
    """
    if not callable(fn):
        raise TypeError(f"fn must be callable, got {type(fn).__name__}")
    configs = [check_json_dict(c, "config") for c in expand_grid(grid)]
    seeds = _check_seeds(seeds)
    if not isinstance(scale, str) or not scale:
        raise ValueError(f"scale must be a non-empty string such as 'quick' or 'paper', got {scale!r}")
    extra = {} if extra is None else check_json_dict(extra, "extra")
    if hardware is not None and not isinstance(hardware, str):
        raise TypeError(f"hardware must be a string, got {type(hardware).__name__}")
    version = check_version(version)
    if on_stale not in ON_STALE:
        raise ValueError(f"on_stale must be one of {ON_STALE}, got {on_stale!r}")
    if on_stale == "rerun" and version is None:
        raise ValueError("on_stale='rerun' needs a version: the protocol version that the rerun records get")
    from . import executors as ex

    name, options = ex.parse_executor(executor)
    path = Path(results_path)
    parts = ex.parts_dir(path)

    jobs = [(config, seed, run_key(config, seed, scale)) for config in configs for seed in seeds]
    keys = [k for _, _, k in jobs]
    if len(set(keys)) != len(keys):
        raise ValueError("grid contains the same config twice")

    if path.exists():  # nothing left to run: read only (no lock, no write access needed)
        done = _reusable(parse_lines(read_bytes(path), path, warn=False)[0], keys, version, on_stale, path)
        # a part file of this grid left by a killed Slurm driver is cleaned up under the lock below
        leftover = parts.is_dir() and not {p.stem for p in parts.glob("*.json")}.isdisjoint(keys)
        if all(k in done for k in keys) and not leftover:
            return [done[k] for k in keys]
    with _locked(path) as fh:  # read again under the lock: another sweep may have finished runs meanwhile
        records = _load_and_repair(path)
        stored = {(rec["key"], record_version(rec)) for rec in records}
        for part, rec in ex.read_parts(parts):  # records of Slurm jobs whose driver was killed
            if (rec["key"], record_version(rec)) not in stored:
                if isinstance(rec.get("metrics"), Mapping):  # a part written before NaN was stored as null
                    rec = {**rec, "metrics": stored_metrics(rec["metrics"])}
                line = _record_line(rec)
                _append(fh, line)
                records.append(json.loads(line))
                stored.add((rec["key"], record_version(rec)))
            part.unlink()
        done = _reusable(records, keys, version, on_stale, path)
        todo = [job for job in jobs if job[2] not in done]
        failures = _run_jobs(
            fn, todo, len(jobs), done, fh, path, scale, hardware, extra, progress, name, options, version
        )
    if failures:
        raise ex.RunsFailed(failures, len(todo)) from failures[0][3]
    return [done[k] for k in keys]


def _reusable(records, keys, version, on_stale, path) -> dict:
    """``{key: record}`` of the stored ``records`` that :func:`run_grid` reuses: without a ``version`` the newest
    of each key (:func:`latest_records`), with one the first record of exactly that version. With
    ``on_stale="error"``, :class:`StaleResultsError` when a key of ``keys`` has records of other versions only."""
    if version is None:
        return latest_records(records)
    done, other = {}, {}
    for rec in records:
        v = record_version(rec)
        if v == version:
            done.setdefault(rec["key"], rec)
        else:
            other.setdefault(rec["key"], set()).add(v)
    stale = [k for k in keys if k in other and k not in done]
    if stale and on_stale == "error":
        raise StaleResultsError(path, stale, set().union(*(other[k] for k in stale)), version)
    return done


def _run_jobs(fn, todo, total, done, fh, path, scale, hardware, extra, progress, name, options, version) -> list:
    """Run the ``(config, seed, key)`` jobs of ``todo`` with executor ``name``, appending one record each to
    ``fh`` (the locked results file) and ``done``. Returns the failures ``(config, seed, key, exception)``
    of the ray and slurm executors; with the local one the first exception propagates at once."""
    from . import executors as ex
    from .hardware import hardware_summary

    if not todo:
        return []
    if hardware is None and name == "local":
        hardware = hardware_summary()  # measured once here; other executors measure it on each worker
    run_one = _Run(fn, scale, hardware, extra, version)
    if name == "local":
        results = ((job, run_one(*job), None) for job in todo)  # an exception propagates at once
    elif name == "ray":
        results = ex.ray_results(run_one, todo, options)
    else:
        results = ex.slurm_results(run_one, todo, options, path)
    parts = ex.parts_dir(path)
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=total, initial=total - len(todo), desc="runs", unit="run")
    failures = []
    try:
        for (config, seed, key), record, error in results:
            if error is not None:
                failures.append((config, seed, key, error))
                continue
            line = _record_line(record)
            _append(fh, line)
            if name == "slurm":
                (parts / f"{key}.json").unlink(missing_ok=True)  # in the file now
            done[key] = json.loads(line)
            if bar is not None:
                bar.update(1)
    finally:
        if bar is not None:
            bar.close()
    return failures
