"""Run a grid of experiments (method x setting x seed), one JSON line per finished run.

The results file is JSON Lines: one record per finished run, appended and flushed to disk (``fsync``)
as soon as the run ends. A record is::

    {"key", "config", "seed", "scale", "metrics", "seconds", "hardware", "sslkit_version",
     "finished_at", "extra"}

``key`` is a stable hash of ``(config, seed, scale)``. On restart, runs whose key is already in the file
are skipped, so a sweep killed at any moment loses no finished run and repeats none.

Rules kept deliberately simple:

* A run whose ``fn`` raises records nothing and the exception propagates; the finished runs before it
  stay in the file, and rerunning the sweep retries the failed run.
* The key depends on the JSON value of the config: ``1`` and ``1.0`` are different configs, and a tuple
  and a list with the same items are the same config.
* One process per results file: two processes appending to the same file at once are not coordinated.
* ``executor="ray"`` / ``"slurm"`` (:mod:`.executors`) run the same runs elsewhere and write the same records;
  there a failing run does not stop the others (:class:`~.executors.RunsFailed` is raised at the end).
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import itertools
import json
import os
import time
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path

from sslkit._checks import check_seed

RECORD_FIELDS = (
    "key",
    "config",
    "seed",
    "scale",
    "metrics",
    "seconds",
    "hardware",
    "sslkit_version",
    "finished_at",
    "extra",
)


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


def _check_json_dict(d, what: str) -> dict:
    """Return ``d`` round-tripped through JSON; TypeError naming the offending key otherwise."""
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
    return json.loads(_dumps(dict(d)))


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


def _parse_lines(text: str, path) -> tuple[list[dict], int | None]:
    """Parse JSONL text. Returns (records, byte offset where a broken last line starts, or None)."""
    lines = text.split("\n")
    nonblank = [i for i, line in enumerate(lines) if line.strip()]
    records = []
    broken_at = None
    offset = 0
    starts = []
    for line in lines:
        starts.append(offset)
        offset += len(line.encode("utf-8")) + 1
    for i in nonblank:
        line = lines[i]
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            if i == nonblank[-1]:
                warnings.warn(
                    f"{path}: ignoring the truncated last line {i + 1} (a run killed while writing "
                    f"its record?): {line[:80]!r}",
                    RuntimeWarning,
                    stacklevel=3,
                )
                broken_at = starts[i]
                break
            raise ValueError(f"{path}: line {i + 1} is not valid JSON ({exc.msg}); the file is corrupt") from exc
        if not isinstance(rec, dict) or "key" not in rec:
            raise ValueError(f"{path}: line {i + 1} is not a run record (a JSON object with a 'key')")
        records.append(rec)
    return records, broken_at


def load_results(path) -> list[dict]:
    """Read every record of a JSONL results file, in file order.

    A truncated last line (a run killed while its record was being written) is ignored with a
    ``RuntimeWarning``; an unreadable line anywhere else raises ``ValueError`` naming its line number.
    Blank lines are ignored.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"results file {str(path)!r} does not exist")
    records, _ = _parse_lines(path.read_text(encoding="utf-8"), path)
    return records


def _load_and_repair(path: Path) -> list[dict]:
    """Load the records; cut off a truncated last line and make sure the file ends with a newline."""
    if not path.exists():
        return []
    text = path.read_text(encoding="utf-8")
    records, broken_at = _parse_lines(text, path)
    if broken_at is not None:
        with open(path, "r+b") as fh:
            fh.truncate(broken_at)
            fh.flush()
            os.fsync(fh.fileno())
    elif text and not text.endswith("\n"):
        with open(path, "a", encoding="utf-8") as fh:
            fh.write("\n")
            fh.flush()
            os.fsync(fh.fileno())
    return records


def _append(path: Path, line: str) -> None:
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(line + "\n")
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
    """``fn`` and the fixed fields of its records: what a worker (any executor) needs to run one (config, seed)."""

    def __init__(self, fn, scale, hardware, extra):
        self.fn, self.scale, self.hardware, self.extra = fn, scale, hardware, extra

    def __call__(self, config, seed, key) -> dict:
        """Run ``fn(**config, seed=seed)`` and return its record (JSON values only)."""
        import sslkit

        from .hardware import hardware_summary

        start = time.perf_counter()
        metrics = self.fn(**config, seed=seed)
        seconds = time.perf_counter() - start
        metrics = _check_json_dict(metrics, "metrics")
        record = {
            "key": key,
            "config": config,
            "seed": seed,
            "scale": self.scale,
            "metrics": metrics,
            "seconds": round(seconds, 4),
            "hardware": hardware_summary() if self.hardware is None else self.hardware,
            "sslkit_version": sslkit.__version__,
            "finished_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            "extra": self.extra,
        }
        return json.loads(json.dumps(record, default=_to_json_value))


def run_grid(
    fn, grid, results_path, *, seeds, scale="quick", progress=True, extra=None, hardware=None, executor="local"
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
        The records and keys do not depend on it, so any executor can resume a sweep.

    Returns
    -------
    list of dict
        One record per (config, seed) of this grid, old and new, in grid order (config-major).
        Records of other grids sharing the file are not returned (use :func:`load_results`).
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
    from . import executors as ex
    from .hardware import hardware_summary

    name, options = ex.parse_executor(executor)
    path = Path(results_path)
    path.parent.mkdir(parents=True, exist_ok=True)

    done = {}
    for rec in _load_and_repair(path):
        done.setdefault(rec["key"], rec)
    parts = ex.parts_dir(path)
    for part, rec in ex.read_parts(parts):  # records of Slurm jobs whose driver was killed
        if rec["key"] not in done:
            _append(path, json.dumps(rec))
            done[rec["key"]] = rec
        part.unlink()

    jobs = [(config, seed, run_key(config, seed, scale)) for config in configs for seed in seeds]
    keys = [k for _, _, k in jobs]
    if len(set(keys)) != len(keys):
        raise ValueError("grid contains the same config twice")
    todo = [job for job in jobs if job[2] not in done]

    if hardware is None and todo and name == "local":
        hardware = hardware_summary()
    run_one = _Run(fn, scale, hardware, extra)
    if name == "local":
        results = ((job, run_one(*job), None) for job in todo)  # an exception propagates at once
    elif name == "ray":
        results = ex.ray_results(run_one, todo, options) if todo else iter(())
    else:
        results = ex.slurm_results(run_one, todo, options, path) if todo else iter(())
    bar = None
    if progress and todo:
        from tqdm import tqdm

        bar = tqdm(total=len(jobs), initial=len(jobs) - len(todo), desc="runs", unit="run")
    failures = []
    try:
        for (config, seed, key), record, error in results:
            if error is not None:
                failures.append((config, seed, key, error))
                continue
            line = json.dumps(record)
            _append(path, line)
            (parts / f"{key}.json").unlink(missing_ok=True)
            done[key] = json.loads(line)
            if bar is not None:
                bar.update(1)
    finally:
        if bar is not None:
            bar.close()
    if failures:
        raise ex.RunsFailed(failures, len(todo)) from failures[0][3]
    return [done[k] for k in keys]
