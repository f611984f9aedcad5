"""Run a grid of experiments (method x setting x seed), one JSON line per finished run.

The results file is JSON Lines: one record per finished run, appended and flushed to disk (``fsync``)
as soon as the run ends. A record is::

    {"key", "config", "seed", "scale", "metrics", "seconds", "hardware", "torch_threads",
     "sslkit_version", "finished_at", "extra", "protocol_version", "platform"}

``key`` is a stable hash of ``(config, seed, scale)``. On restart, runs whose key is already in the file
(with a protocol version, see below: in a record of that version) are skipped, so a sweep killed at any
moment loses no finished run and repeats none. ``platform`` is
:func:`~sslkit.experiments.hardware.platform_fingerprint` when the run started (what decides whether a rerun
elsewhere can be bit-identical; not part of the key; older records lack it). ``torch_threads`` is
``torch.get_num_threads()`` when the run started (the intra-op thread count changes the last bits of some
CPU results, so a replay needs it); records written before it existed lack it
(:data:`LEGACY_MISSING_FIELDS`). It is not part of the key.

Protocol versions (stale results). The key ignores the code, so a record made before a change of the code
that alters results still matches its run. Each experiments module that makes records declares a
``PROTOCOL_VERSION`` (a positive integer, bumped when a change alters its runs' results) and passes it as
``run_grid(..., version=...)``; every new record stores it as ``protocol_version`` (not part of the key, so
the keys of older records are unchanged). A record without the field counts as version 1
(:data:`LEGACY_PROTOCOL_VERSION`): the version of every record written before versions existed. With a
``version``, a stored record of another version is never reused silently: :func:`run_grid` raises
:class:`StaleResultsError`, or with ``on_stale="rerun"`` reruns those runs and appends records of the new
version beside the old ones. When a file holds several records of one key, :func:`load_results` (and a
:func:`run_grid` without ``version``) uses the one of the highest version (among equal versions the first
in the file); :func:`run_grid` with a ``version`` uses the record of exactly that version.

Rules kept deliberately simple:

* A run whose ``fn`` raises records nothing and the exception propagates; the finished runs before it
  stay in the file, and rerunning the sweep retries the failed run.
* The key depends on the JSON value of the config: ``1`` and ``1.0`` are different configs, and a tuple
  and a list with the same items are the same config.
* Every line is strict JSON. A NaN metric (a float or numpy NaN, also inside lists and dicts) is
  written as ``null``: in a record, ``null`` means "no value" whether ``fn`` returned NaN or None (the
  table helpers read both as NaN). An infinite metric is refused (``ValueError`` naming it), since
  ``null`` would lose its sign. Reading still accepts the bare ``NaN`` of files written before.
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
* A results path that is a directory, an unwritable or unreadable path, and a line that is not UTF-8
  text give one clear error naming the file (``OSError`` / ``ValueError``); a non-UTF-8 *last* line is a
  truncated write and is handled like any truncated last line (ignored with a warning, cut off).
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import hashlib
import itertools
import json
import math
import os
import time
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover - not on Linux / macOS: no lock
    fcntl = None

from sslkit._checks import check_seed

RECORD_FIELDS = (
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
    "protocol_version",
    "platform",
)
#: Fields of :data:`RECORD_FIELDS` that records written before they were introduced lack (``protocol_version``
#: also lacks from the records of a :func:`run_grid` called without ``version``).
LEGACY_MISSING_FIELDS = ("torch_threads", "protocol_version", "platform")
#: The protocol version of a record without a ``protocol_version``: every record written before versions
#: existed (all the committed records when they were introduced) implicitly has version 1.
LEGACY_PROTOCOL_VERSION = 1
#: What :func:`run_grid` does with stored records of another protocol version (``on_stale``).
ON_STALE = ("error", "rerun")


class StaleResultsError(ValueError):
    """Stored records of a grid's runs were made by another protocol version than the code's.

    Attributes: ``path`` (the results file), ``keys`` (the run keys without a record of the current
    version), ``found`` (the versions of their stored records) and ``version`` (the current one).
    """

    def __init__(self, path, keys, found, version):
        self.path, self.keys, self.found, self.version = Path(path), list(keys), sorted(found), version
        was = ", ".join(str(v) for v in self.found)
        super().__init__(
            f"{str(self.path)!r}: {len(self.keys)} run{'s' if len(self.keys) != 1 else ''} of this grid "
            f"{'have' if len(self.keys) != 1 else 'has'} records of protocol version {was} only (a record without "
            f"protocol_version counts as {LEGACY_PROTOCOL_VERSION}), but the code is at protocol version {version}, "
            "so they are not reused. "
            "Either rerun into a new results file (another results_dir or name), or pass on_stale='rerun' to "
            f"rerun these runs and append records of version {version} to this file (the newest version then "
            "wins when it is loaded). If the change of the code does not alter results, do not bump the version."
        )


def check_version(version, what: str = "version"):
    """``version`` if it is None or a positive integer (a protocol version); TypeError / ValueError otherwise."""
    if version is None:
        return None
    if isinstance(version, bool) or not isinstance(version, int):
        raise TypeError(f"{what} must be a positive integer (a protocol version) or None, got {version!r}")
    if version < 1:
        raise ValueError(f"{what} must be a positive integer (a protocol version), got {version}")
    return version


def record_version(record: Mapping) -> int:
    """The protocol version of a record: its ``protocol_version``, or :data:`LEGACY_PROTOCOL_VERSION` without one."""
    version = record.get("protocol_version")
    if version is None:
        return LEGACY_PROTOCOL_VERSION
    return check_version(version, f"record {record.get('key')!r}: protocol_version")


def latest_records(records) -> dict:
    """``{key: record}``: per run key, the record of the highest protocol version (ties: the first one)."""
    out = {}
    for rec in records:
        old = out.get(rec["key"])
        if old is None or record_version(rec) > record_version(old):
            out[rec["key"]] = rec
    return out


def versions_note(records) -> str:
    """Which protocol versions ``records`` come from, for a page: ``"records: protocol version 1 (93 runs)"``."""
    counts: dict = {}
    for rec in records:
        v = record_version(rec)
        counts[v] = counts.get(v, 0) + 1
    if not counts:
        return "records: none"
    parts = [f"{v} ({n} run{'s' if n != 1 else ''})" for v, n in sorted(counts.items())]
    return f"records: protocol version{'s' if len(parts) > 1 else ''} " + ", ".join(parts)


def _to_json_value(obj):
    """``json.dumps`` fallback: numpy scalars and arrays become Python numbers and lists."""
    try:
        import numpy as np
    except ImportError:  # pragma: no cover - numpy is a dependency
        np = None
    if np is not None:
        if isinstance(obj, np.generic):
            return obj.item()
        if isinstance(obj, np.ndarray):
            return obj.tolist()
    raise TypeError(f"object of type {type(obj).__name__} is not JSON serialisable")


def _dumps(obj) -> str:
    """Canonical JSON: sorted keys, no spaces, numpy values converted."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), default=_to_json_value)


def _nan_to_null(value, where: str):
    """``value`` (plain JSON values) with every NaN float replaced by None; ValueError for an infinity."""
    if isinstance(value, float):
        if math.isnan(value):
            return None
        if math.isinf(value):
            raise ValueError(
                f"{where} is {value}, which JSON cannot hold; return a finite number, or None / NaN for no value"
            )
        return value
    if isinstance(value, list):
        return [_nan_to_null(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, dict):
        return {k: _nan_to_null(v, f"{where}[{k!r}]") for k, v in value.items()}
    return value


def _check_json_dict(d, what: str, *, nan_to_null: bool = False) -> dict:
    """Return ``d`` round-tripped through JSON; TypeError naming the offending key otherwise.

    NaN and infinities are not JSON: with ``nan_to_null`` (metrics) NaN becomes None and an infinity is a
    ``ValueError``; otherwise (configs, ``extra``, whose values make run keys) both are refused.
    """
    if not isinstance(d, Mapping):
        raise TypeError(f"{what} must be a dict, got {type(d).__name__}")
    for k, v in d.items():
        if not isinstance(k, str):
            raise TypeError(f"{what} keys must be strings, got key {k!r} of type {type(k).__name__}")
        try:
            _dumps(v)
        except (TypeError, ValueError) as exc:
            raise TypeError(
                f"{what}[{k!r}] is not JSON serialisable ({type(v).__name__}: {v!r}); "
                "use numbers, strings, booleans, None, lists or dicts"
            ) from exc
    out = json.loads(_dumps(dict(d)))
    if nan_to_null:
        return {k: _nan_to_null(v, f"{what}[{k!r}]") for k, v in out.items()}
    for k, v in out.items():
        try:
            json.dumps(v, allow_nan=False)
        except ValueError as exc:
            raise ValueError(f"{what}[{k!r}] holds NaN or an infinity ({v!r}), which JSON cannot hold") from exc
    return out


def stored_metrics(metrics) -> dict:
    """``metrics`` as :func:`run_grid` stores them: JSON values (numpy scalars and arrays converted), NaN as
    ``None`` (``null``); ``TypeError`` for a value JSON cannot hold, ``ValueError`` for an infinity."""
    return _check_json_dict(metrics, "metrics", nan_to_null=True)


def run_key(config: Mapping, seed: int, scale: str) -> str:
    """Stable key of one run: the first 16 hex digits of sha256 of canonical JSON of (config, seed, scale)."""
    payload = _dumps({"config": dict(config), "seed": seed, "scale": scale})
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]


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


def _parse_lines(data: bytes, path, *, warn: bool = True) -> tuple[list[dict], int | None]:
    """Parse JSONL bytes. Returns (records, byte offset where a broken last line starts, or None).

    A last line that is not UTF-8 text or not valid JSON is a write cut short (a run killed while writing
    its record): it is ignored (with a ``RuntimeWarning`` when ``warn``). Such a line anywhere else is a
    ``ValueError`` naming it.
    """
    lines = data.split(b"\n")
    nonblank = [i for i, line in enumerate(lines) if line.strip()]
    records = []
    broken_at = None
    offset = 0
    starts = []
    for line in lines:
        starts.append(offset)
        offset += len(line) + 1
    for i in nonblank:
        line = lines[i]
        try:
            rec = json.loads(line.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            why = "not UTF-8 text" if isinstance(exc, UnicodeDecodeError) else f"not valid JSON ({exc.msg})"
            if i == nonblank[-1]:
                if warn:
                    warnings.warn(
                        f"{path}: ignoring the truncated last line {i + 1} ({why}; a run killed while writing "
                        f"its record?): {line[:80]!r}",
                        RuntimeWarning,
                        stacklevel=3,
                    )
                broken_at = starts[i]
                break
            raise ValueError(f"{path}: line {i + 1} is {why}; the file is corrupt") from exc
        if not isinstance(rec, dict) or "key" not in rec:
            raise ValueError(f"{path}: line {i + 1} is not a run record (a JSON object with a 'key')")
        try:
            record_version(rec)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{path}: line {i + 1}: {exc}") from None
        records.append(rec)
    return records, broken_at


def _read_bytes(path: Path) -> bytes:
    """The bytes of a results file, with one clear ``OSError`` for a directory or an unreadable file."""
    if path.is_dir():
        raise IsADirectoryError(f"results path {str(path)!r} is a directory, not a results file (a .jsonl file)")
    try:
        return path.read_bytes()
    except OSError as exc:
        raise OSError(f"cannot read the results file {str(path)!r}: {exc.strerror or exc}") from exc


def load_results(path, *, all_versions: bool = False) -> list[dict]:
    """Read the records of a JSONL results file, in file order.

    One record per run key: where the file holds several (a run rerun at a new protocol version,
    ``run_grid(..., on_stale="rerun")``), the one of the highest ``protocol_version`` (a record without it
    counts as version 1; among equal versions the first). ``all_versions=True``: every record of the file.

    A truncated last line (a run killed while its record was being written; also a last line that is not
    UTF-8 text) is ignored with a ``RuntimeWarning``; an unreadable line anywhere else raises ``ValueError``
    naming its line number. Blank lines are ignored. A missing file is a ``FileNotFoundError``, a
    directory an ``IsADirectoryError``, an unreadable file an ``OSError``, each naming the path.
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"results file {str(path)!r} does not exist")
    records, _ = _parse_lines(_read_bytes(path), path)
    if all_versions:
        return records
    latest = latest_records(records)
    return [rec for rec in records if latest[rec["key"]] is rec]


def _load_and_repair(path: Path) -> list[dict]:
    """Load the records; cut off a truncated last line and make sure the file ends with a newline.

    Called with the file's lock held (:func:`_locked`), so no other writer is mid-line.
    """
    data = _read_bytes(path)
    records, broken_at = _parse_lines(data, path)
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
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fh = open(path, "ab")
    except OSError as exc:
        raise OSError(f"cannot write the results file {str(path)!r}: {exc.strerror or exc}") from exc
    with fh:
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


def _append(fh, line: str) -> None:
    fh.write(line.encode("utf-8") + b"\n")
    fh.flush()
    os.fsync(fh.fileno())


def results_path(name: str, scale: str, *, results_dir=None) -> Path:
    """Conventional results file of an experiment: ``<dir>/<name>/<scale>.jsonl``.

    Without ``results_dir``, paper-scale results and CPU stand-ins of the paper's protocol (scales ``"cpu"``,
    ``"cpu_..."``) go to ``notebooks/results/`` of the repository (committed, so the book and the scorecard
    show them without rerunning) and every other scale (``"quick"``) to ``_build/results/`` (never committed).
    The repository root is the folder holding the ``sslkit`` package; when that is not a checkout (no
    ``pyproject.toml``, e.g. a wheel install) the current working directory is used instead.
    """
    if not isinstance(name, str) or not name or "/" in name or "\\" in name or name.startswith("."):
        raise ValueError(f"name must be a plain file name such as 'supervised_baseline', got {name!r}")
    if not isinstance(scale, str) or not scale or "/" in scale:
        raise ValueError(f"scale must be a non-empty string such as 'quick' or 'paper', got {scale!r}")
    if results_dir is None:
        from .notebooks import repo_root

        root = repo_root() if (repo_root() / "pyproject.toml").is_file() else Path.cwd()
        committed = scale == "paper" or scale == "cpu" or scale.startswith("cpu_")
        results_dir = root / "notebooks" / "results" if committed else root / "_build" / "results"
    return Path(results_dir) / name / f"{scale}.jsonl"


class _Run:
    """``fn`` and the fixed fields of its records: what a worker (any executor) needs to run one (config, seed).

    The one place records are built: ``torch_threads`` (and, without a ``hardware`` label, the hardware) is
    measured in the process that runs ``fn`` -- a Ray or Slurm worker, or this one.
    """

    def __init__(self, fn, scale, hardware, extra, version=None):
        self.fn, self.scale, self.hardware, self.extra, self.version = fn, scale, hardware, extra, version

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
        return json.loads(_record_line(record))


def _record_line(record: dict) -> str:
    """One results-file line: strict JSON (``ValueError`` for a NaN or an infinity left in ``record``)."""
    return json.dumps(record, default=_to_json_value, allow_nan=False)


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
    configs = [_check_json_dict(c, "config") for c in expand_grid(grid)]
    seeds = _check_seeds(seeds)
    if not isinstance(scale, str) or not scale:
        raise ValueError(f"scale must be a non-empty string such as 'quick' or 'paper', got {scale!r}")
    extra = {} if extra is None else _check_json_dict(extra, "extra")
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
        done = _reusable(_parse_lines(_read_bytes(path), path, warn=False)[0], keys, version, on_stale, path)
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
