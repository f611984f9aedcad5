"""The results store: one JSON line per finished run, its key, its fields, and reading a results file.

The results file is JSON Lines: one record per finished run, appended and flushed to disk (``fsync``)
as soon as the run ends (:func:`sslkit.experiments.runs.runner.run_grid`). A record is::

    {"key", "config", "seed", "scale", "metrics", "seconds", "hardware", "torch_threads",
     "sslkit_version", "finished_at", "extra", "protocol_version", "platform", "call"}

``key`` is a stable hash of ``(config, seed, scale)`` (:func:`run_key`). On restart, runs whose key is already
in the file (with a protocol version, see below: in a record of that version) are skipped, so a sweep killed
at any moment loses no finished run and repeats none. ``platform`` is
:func:`~sslkit.experiments.runs.hardware.platform_fingerprint` when the run started (what decides whether a
rerun elsewhere can be bit-identical; not part of the key; older records lack it). ``torch_threads`` is
``torch.get_num_threads()`` when the run started (the intra-op thread count changes the last bits of some
CPU results, so a replay needs it); records written before it existed lack it
(:data:`LEGACY_MISSING_FIELDS`). It is not part of the key. ``call`` names the run function and the
keyword arguments it got besides the config and the seed (``{"function": "sslkit.experiments...run",
"arguments": {...}}``, :func:`describe_call`); not part of the key, and records written before it lack it.

Protocol versions (stale results). The key ignores the code, so a record made before a change of the code
that alters results still matches its run. Each experiments module that makes records declares a
``PROTOCOL_VERSION`` (a positive integer, bumped when a change alters its runs' results) and passes it as
``run_grid(..., version=...)``; every new record stores it as ``protocol_version`` (not part of the key, so
the keys of older records are unchanged). A record without the field counts as version 1
(:data:`LEGACY_PROTOCOL_VERSION`): the version of every record written before versions existed. When a file
holds several records of one key, :func:`load_results` uses the one of the highest version (among equal
versions the first in the file).

* The key depends on the JSON value of the config: ``1`` and ``1.0`` are different configs, and a tuple
  and a list with the same items are the same config.
* Every line is strict JSON. A NaN metric (a float or numpy NaN, also inside lists and dicts) is
  written as ``null``: in a record, ``null`` means "no value" whether ``fn`` returned NaN or None (the
  table helpers read both as NaN). An infinite metric is refused (``ValueError`` naming it), since
  ``null`` would lose its sign. Reading still accepts the bare ``NaN`` of files written before.
* A results path that is a directory, an unreadable path, and a line that is not UTF-8 text give one clear
  error naming the file (``OSError`` / ``ValueError``); a non-UTF-8 *last* line is a truncated write and is
  handled like any truncated last line (ignored with a warning, cut off by the next writer).
* Only a last line that a killed writer can leave is a truncated write: one without its newline that begins
  like a record (``{``). A last line that ends with its newline (a complete line: corrupted, not cut short), or
  a file whose last line does not begin with ``{`` (not a results file: a wrong path, a symlink to another
  file), is a ``ValueError`` naming the file, so no writer ever cuts it off.
* A line that is a JSON object but not a run record of the right types (no ``config`` / ``seed`` /
  ``metrics``, ``metrics`` not an object, ``key`` not a string, ...; :func:`check_record`) is a ``ValueError``
  naming the file, the line and the field, from every reader -- also on the last line (valid JSON is not a
  truncated write).
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import warnings
from collections.abc import Mapping
from pathlib import Path

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
    "call",
)
#: Fields of :data:`RECORD_FIELDS` that records written before they were introduced lack (``protocol_version``
#: also lacks from the records of a :func:`run_grid` called without ``version``).
LEGACY_MISSING_FIELDS = ("torch_threads", "protocol_version", "platform", "call")
#: Metrics a run function began to record after records were committed, with the day (UTC, ISO) it began: a
#: record finished before that day lacks the metric, and its replay may add it.
METRICS_ADDED = {"n_flat_selections": "2026-12-04"}
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


#: The fields every stored run record has (:func:`check_record`).
REQUIRED_FIELDS = ("key", "config", "seed", "metrics")
#: The JSON type of each record field that :func:`check_record` checks (when present: older records lack some).
_FIELD_TYPES = {
    "key": (str, "a string"),
    "config": (dict, "a JSON object (dict)"),
    "seed": (int, "an integer"),
    "scale": (str, "a string"),
    "metrics": (dict, "a JSON object (dict)"),
    "torch_threads": ((int, type(None)), "an integer or null"),
    "platform": ((dict, type(None)), "a JSON object (dict) or null"),
    "call": ((dict, type(None)), "a JSON object (dict) or null"),
}


def check_record(record: Mapping) -> Mapping:
    """``record`` if it is a run record with fields of the right JSON types: the :data:`REQUIRED_FIELDS` present,
    ``key`` and ``scale`` strings, ``config``, ``metrics`` (and ``platform``) objects, ``seed`` (and
    ``torch_threads``) integers, ``protocol_version`` a positive integer. ``ValueError`` naming the first field
    that is missing or of another type (a results file edited or written by other code), instead of a crash
    deep inside a table or a replay."""
    missing = [f for f in REQUIRED_FIELDS if f not in record]
    if missing:
        raise ValueError(f"record {record.get('key')!r} lacks the field{'s' if len(missing) > 1 else ''} {missing}")
    for field, (types, what) in _FIELD_TYPES.items():
        if field in record:
            value = record[field]
            if isinstance(value, bool) or not isinstance(value, types):
                shown = json.dumps(value)
                shown = shown if len(shown) <= 60 else shown[:57] + "..."
                raise ValueError(
                    f"record {record.get('key')!r}: field {field!r} must be {what}, got {type(value).__name__} {shown}"
                )
    try:
        record_version(record)
    except TypeError as exc:
        raise ValueError(str(exc)) from None
    return record


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


def to_json_value(obj):
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
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), default=to_json_value)


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


def check_json_dict(d, what: str, *, nan_to_null: bool = False) -> dict:
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
    return check_json_dict(metrics, "metrics", nan_to_null=True)


def run_key(config: Mapping, seed: int, scale: str) -> str:
    """Stable key of one run: the first 16 hex digits of sha256 of canonical JSON of (config, seed, scale)."""
    payload = _dumps({"config": dict(config), "seed": seed, "scale": scale})
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]


def parse_lines(data: bytes, path, *, warn: bool = True) -> tuple[list[dict], int | None]:
    """Parse JSONL bytes. Returns (records, byte offset where a broken last line starts, or None).

    A last line that is not UTF-8 text or not valid JSON, has no newline after it and begins with ``{`` is a
    write cut short (a run killed while writing its record): it is ignored (with a ``RuntimeWarning`` when
    ``warn``). Any other such line -- one before the last, a complete last line (it ends with its newline), a
    last line that does not begin like a record -- is a ``ValueError`` naming it.
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
            if i == len(lines) - 1 and line.lstrip().startswith(b"{"):  # no newline after it: cut short
                if warn:
                    warnings.warn(
                        f"{path}: ignoring the truncated last line {i + 1} ({why}; a run killed while writing "
                        f"its record?): {line[:80]!r}",
                        RuntimeWarning,
                        stacklevel=3,
                    )
                broken_at = starts[i]
                break
            if i == nonblank[-1] and not line.lstrip().startswith(b"{"):
                what = "it is not a results file (one JSON record per line), or it is corrupt; it is left as it is"
            else:
                what = "the file is corrupt (only a last line without its newline is a truncated write)"
            raise ValueError(f"{path}: line {i + 1} is {why}; {what}") from exc
        if not isinstance(rec, dict) or "key" not in rec:
            raise ValueError(f"{path}: line {i + 1} is not a run record (a JSON object with a 'key')")
        try:
            check_record(rec)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{path}: line {i + 1}: {exc}") from None
        records.append(rec)
    return records, broken_at


def read_bytes(path: Path) -> bytes:
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
    records, _ = parse_lines(read_bytes(path), path)
    if all_versions:
        return records
    latest = latest_records(records)
    return [rec for rec in records if latest[rec["key"]] is rec]


def results_path(name: str, scale: str, *, results_dir=None) -> Path:
    """Conventional results file of an experiment: ``<dir>/<name>/<scale>.jsonl``.

    Without ``results_dir``, paper-scale results and CPU stand-ins of the paper's protocol (scales ``"cpu"``,
    ``"cpu_..."``) go to ``notebooks/results/`` of the repository (committed, so the book and the scorecard
    show them without rerunning) and every other scale (``"quick"``) to ``_build/results/`` (never committed).
    The repository root is the folder holding the ``sslkit`` package; when that is not a checkout (no
    ``pyproject.toml``, e.g. a wheel install) the current working directory is used instead.
    """
    if not isinstance(name, str) or not name or "/" in name or "\\" in name or name.startswith("."):
        raise ValueError(f"name must be a plain file name such as 'my_experiment', got {name!r}")
    if not isinstance(scale, str) or not scale or "/" in scale:
        raise ValueError(f"scale must be a non-empty string such as 'quick' or 'paper', got {scale!r}")
    if results_dir is None:
        root = repo_root() if (repo_root() / "pyproject.toml").is_file() else Path.cwd()
        committed = scale == "paper" or scale == "cpu" or scale.startswith("cpu_")
        results_dir = root / "notebooks" / "results" if committed else root / "_build" / "results"
    return Path(results_dir) / name / f"{scale}.jsonl"


def repo_root() -> Path:
    """The folder that holds the ``sslkit`` package: the repository root for an editable install or a clone."""
    import sslkit

    return Path(sslkit.__file__).resolve().parent.parent


def describe_call(fn) -> dict | None:
    """``{"function": "module.qualname", "arguments": {...}}`` of a run function: a module-level function, or a
    ``functools.partial`` of one whose keyword arguments are JSON values (what a record stores as ``call``).
    None for anything else (a lambda, a local function, a partial with positional or non-JSON arguments)."""
    args = {}
    if isinstance(fn, functools.partial):
        if fn.args:
            return None
        try:
            args = check_json_dict(fn.keywords, "arguments")
        except (TypeError, ValueError):
            return None
        fn = fn.func
    name = getattr(fn, "__qualname__", "")
    module = getattr(fn, "__module__", None)
    if not module or not name or "<" in name:
        return None
    return {"function": f"{module}.{name}", "arguments": args}
