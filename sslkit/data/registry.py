"""Dataset registry: where each dataset comes from, how it is verified, and :func:`load_dataset`.

Every dataset has one or more *sources* (a file layout plus its parser). Each file of a source lists the
names it may have in the dataset's folder, the sha256 values accepted for its bytes, and the canonical
URLs it can be downloaded from (each with the sha256 of what it must yield).

Lookup order for :func:`load_dataset` (first complete, verified copy wins):

1. ``root`` argument, 2. ``$SSLKIT_DATA_DIR``, 3. the user cache (``$SSLKIT_CACHE_DIR``, else
``$XDG_CACHE_HOME/sslkit``, else ``~/.cache/sslkit``), each with one folder per dataset (``mnist/``,
``banknote/``, ``breast_cancer_wdbc/``, ``cifar10/jpeg/`` ... as in the project's shared data folder);
4. a bundled scikit-learn copy (breast_cancer, digits); 5. a download into the user cache, where allowed
(``download=None`` means allowed unless ``SSLKIT_OFFLINE=1``; ``download=False`` never touches the network).

Every local file is checked against its sha256 on every load, with nothing memoised: each file is read
once, the sha256 of those bytes is checked, and the parser gets the same bytes (it never reopens the
file), so a file edited after a load, or between its check and its parsing, is never passed as verified.
A mismatch raises :class:`ChecksumError` and no data is returned. (Memory: a file is held in memory
while it is parsed, e.g. STL-10's 2.6 GB archive.) A downloaded file is written to
a temporary name and only renamed into the cache once its checksum matches; a bad download is deleted.
A file with no trusted checksum recorded is never downloaded or used.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tarfile
import tempfile
import urllib.error
import urllib.request
import zipfile
from pathlib import Path

from . import parsers as P
from .bundled import sklearn_version
from .dataset import Dataset
from .specs import DATASETS, SPECS, DatasetSpec, Download, FileSpec, Source

_log = logging.getLogger(__name__)


class DatasetNotFoundError(FileNotFoundError):
    """No verified copy of the dataset was found locally and it could not (or may not) be downloaded."""


class ChecksumError(ValueError):
    """A local or downloaded file does not match any accepted sha256; its data is never returned."""


# ------------------------------------------------------------------------------------- lookup


def cache_dir() -> Path:
    """The user cache: ``$SSLKIT_CACHE_DIR``, else ``$XDG_CACHE_HOME/sslkit``, else ``~/.cache/sslkit``."""
    if os.environ.get("SSLKIT_CACHE_DIR"):
        return Path(os.environ["SSLKIT_CACHE_DIR"]).expanduser()
    if os.environ.get("XDG_CACHE_HOME"):
        return Path(os.environ["XDG_CACHE_HOME"]).expanduser() / "sslkit"
    return Path("~/.cache/sslkit").expanduser()


def _lookup_dirs(root) -> list[tuple[str, Path | None]]:
    """(label, directory) in lookup order; directory None = not configured."""
    dirs: list[tuple[str, Path | None]] = []
    if root is not None:
        if not isinstance(root, (str, os.PathLike)):
            raise TypeError(f"root must be a path (str or os.PathLike) or None, got {type(root).__name__}")
        dirs.append(("root argument", Path(root).expanduser()))
    env = os.environ.get("SSLKIT_DATA_DIR")
    dirs.append(("$SSLKIT_DATA_DIR", Path(env).expanduser() if env else None))
    dirs.append(("user cache", cache_dir()))
    return dirs


def sha256_of(path) -> str:
    """sha256 hex digest of a file, computed afresh on every call (no memo: an edited file is seen)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _read_verified(path: Path, spec: FileSpec, dataset: str) -> P.Blob:
    """Read ``path`` once and return its bytes when their sha256 is accepted; :class:`ChecksumError` otherwise.

    The parser is given these very bytes, so nothing that changes the file afterwards can reach it.
    """
    accepted = spec.accepted()
    if not accepted:
        raise ChecksumError(
            f"{dataset}: no trusted checksum recorded for {path.name}; refusing to use unverified data from {path}"
        )
    data = Path(path).read_bytes()
    got = hashlib.sha256(data).hexdigest()
    if got not in accepted:
        raise ChecksumError(
            f"{dataset}: checksum mismatch for {path}: sha256 {got} is not one of the accepted values "
            f"{sorted(accepted)}. The file is corrupt or a different version; delete or replace it "
            f"(canonical URLs: {', '.join(d.url for d in spec.downloads) or 'none recorded'})."
        )
    return P.Blob(str(path), data)


def _parse_verified(source: Source, found: dict[str, Path], dataset: str, options: dict) -> P.Parsed:
    """Read and verify every file of ``source`` (all before parsing any), then parse those bytes."""
    blobs = {key: _read_verified(path, source.files[key], dataset) for key, path in found.items()}
    return source.parse(blobs, **options)


def _find(source: Source, base: Path) -> tuple[Path, dict[str, Path], list[str]]:
    """Best folder of ``source`` under ``base``: (folder, found files, missing file names)."""
    best = None
    for folder in source.folders:
        d = base / folder
        found, missing = {}, []
        for key, spec in source.files.items():
            hit = next((d / n for n in spec.names if (d / n).is_file()), None)
            if hit is None:
                missing.append(" or ".join(spec.names))
            else:
                found[key] = hit
        if best is None or len(found) > len(best[1]):
            best = (d, found, missing)
    return best


def _check_options(spec: DatasetSpec, options: dict) -> dict:
    unknown = set(options) - set(spec.options)
    if unknown:
        valid = ", ".join(f"{k} in {v}" for k, v in spec.options.items()) or "none"
        raise TypeError(
            f"load_dataset({spec.name!r}) got unexpected option(s) {sorted(unknown)}; valid options: {valid}"
        )
    out = {}
    for k, allowed in spec.options.items():
        v = options.get(k, allowed[0])
        if v not in allowed:
            raise ValueError(f"load_dataset({spec.name!r}): {k} must be one of {allowed}, got {v!r}")
        out[k] = v
    return out


def _candidates(spec: DatasetSpec, options: dict) -> list[Source]:
    variant = options.get("variant")
    if variant is None:
        return list(spec.sources)
    keys = spec.auto if variant == "auto" else (variant,)
    by_key = {s.key: s for s in spec.sources}
    return [by_key[k] for k in keys]


def _download_allowed(download) -> tuple[bool, str]:
    if download is None:
        if os.environ.get("SSLKIT_OFFLINE", "").strip() not in ("", "0"):
            return False, "downloads disabled by SSLKIT_OFFLINE=1"
        return True, ""
    if not isinstance(download, bool):
        raise TypeError(f"download must be True, False or None, got {download!r}")
    return download, "" if download else "downloads disabled (download=False)"


def load_dataset(name: str, root=None, download=None, **options) -> Dataset:
    """Load a dataset by name from a verified local copy, scikit-learn's bundled copy, or a verified download.

    Parameters
    ----------
    name : one of :data:`DATASETS`.
    root : a directory holding one folder per dataset (the layout of the project's shared data folder);
        searched before ``$SSLKIT_DATA_DIR`` and the user cache.
    download : ``None`` (allowed unless ``SSLKIT_OFFLINE=1``), ``True`` or ``False`` (never use the network).
    **options : dataset options, e.g. ``variant="auto"|"python"|"jpeg"|"lossless"`` for cifar10 (auto = the
        official python tarball if found, else the lossy JPEG copy of all 60000 images; lossless = the exact
        4000/1000 subset), ``label_mode="fine"|"coarse"`` for cifar100.

    Raises
    ------
    ValueError : unknown name. TypeError/ValueError : bad option.
    DatasetNotFoundError : no verified copy found and none could be downloaded (the message lists every place
        looked, ``$SSLKIT_DATA_DIR`` and how to supply the files).
    ChecksumError : a file found or downloaded does not match its recorded sha256 (no data is returned).
    """
    if not isinstance(name, str) or name not in SPECS:
        raise ValueError(f"unknown dataset {name!r}; valid names: {', '.join(DATASETS)}")
    spec = SPECS[name]
    options = _check_options(spec, options)
    allowed, why_not = _download_allowed(download)
    candidates = _candidates(spec, options)
    dirs = _lookup_dirs(root)

    looked = []
    for source in candidates:
        seen = set()
        for label, base in dirs:
            if base is None:
                looked.append(f"{label}: not set")
                continue
            if base in seen:
                continue
            seen.add(base)
            folder, found, missing = _find(source, base)
            if not missing:
                parsed = _parse_verified(source, found, name, options)
                return _build(spec, parsed, f"{folder} ({source.key} files, sha256 verified)")
            state = "folder does not exist" if not folder.is_dir() else f"missing {', '.join(missing)}"
            what = f"{source.key} files: " if len(candidates) > 1 else ""
            looked.append(f"{label}: {folder} ({what}{state})")

    if spec.fallback is not None:
        return _build(spec, spec.fallback(), f"scikit-learn {sklearn_version()} bundled copy ({spec.fallback_source})")

    problems = []
    target = cache_dir()
    downloadable = [s for s in candidates if s.downloadable()]
    if allowed:
        for source in downloadable:
            folder = target / source.folders[0]
            try:
                paths, urls = _download_source(spec, source, folder)
            except _DownloadFailed as err:
                problems.append(str(err))
                continue
            return _build(
                spec,
                _parse_verified(source, paths, name, options),  # re-read: parse the bytes verified now
                f"downloaded from {', '.join(urls)} into {folder} (sha256 verified)",
            )
    raise DatasetNotFoundError(_not_found_message(spec, candidates, looked, why_not, problems, target))


def available_datasets(names, load=None, *, what="this run") -> tuple[list[str], str]:
    """Which of ``names`` load here, and one plain line about those that do not.

    ``load(name)`` is called for each name (default :func:`load_dataset`; a page may pass its own task builder,
    e.g. ``lambda n: build_task(n, ...)``); only :class:`DatasetNotFoundError` counts as "not here" -- any other
    error propagates. Returns ``(loaded, note)``: the names that loaded, in the given order, and ``note``, one
    sentence naming the others without the loader's search log or any path (``""`` when everything loaded), for
    pages that must read cleanly on a machine without the data folder::

        names, note = available_datasets(["breast_cancer", "mnist"], what="the quick scale")
        # names: ["breast_cancer"]
        # note: "The quick scale could not run on mnist: its data is not on this machine ..."
    """
    load = load_dataset if load is None else load
    loaded, missing = [], []
    for name in names:
        try:
            load(name)
        except DatasetNotFoundError:
            missing.append(str(name))
        else:
            loaded.append(name)
    if not missing:
        return loaded, ""
    its = "its data is" if len(missing) == 1 else "their data are"
    note = (
        f"{what[:1].upper()}{what[1:]} could not run on {', '.join(missing)}: {its} not on this machine "
        "(set SSLKIT_DATA_DIR to a data folder, or allow downloads, to run them); the committed records below "
        "are unaffected."
    )
    return loaded, note


def _build(spec: DatasetSpec, parsed: P.Parsed, source: str) -> Dataset:
    return Dataset(
        name=spec.name,
        X=parsed.X,
        y=parsed.y,
        X_test=parsed.X_test,
        y_test=parsed.y_test,
        classes=parsed.classes,
        source=source,
        notes=parsed.notes,
    )


def _not_found_message(spec, candidates, looked, why_not, problems, target) -> str:
    # the first line is a plain sentence without paths (pages print it alone); the search log follows
    how = " (downloads are off)" if why_not else " (the download failed)" if problems else ""
    lines = [f"dataset {spec.name!r} is not on this machine{how}.", "Looked in:"]
    lines += [f"  - {entry}" for entry in looked]
    if why_not:
        lines.append(f"Download: {why_not}.")
    lines += [f"Download failed: {p}" for p in problems]
    if not any(s.downloadable() for s in candidates) and not why_not:
        lines.append("Download: no canonical download is recorded for this dataset.")
    lines.append(
        "To supply it, put these files in <DIR>/<folder>/ and set SSLKIT_DATA_DIR=<DIR> "
        f"(or pass root=<DIR>, or use the user cache {target}):"
    )
    for s in candidates:
        folder = s.folders[0]
        for f in s.files.values():
            urls = [
                d.url
                + (f" (extract {d.member})" if d.member else "")
                + ("" if d.sha256 else " [no trusted checksum recorded: download refused]")
                for d in f.downloads
            ]
            where = f"from {', '.join(urls)}" if urls else "no download URL recorded"
            lines.append(f"  - {folder}/{f.names[0]}  ({where})")
    trusted = any(d.sha256 for s in candidates for f in s.files.values() for d in f.downloads)
    lines.append(
        f"Homepage: {spec.homepage}."
        + (
            " Or allow downloads (download=True, SSLKIT_OFFLINE unset) where a network exists."
            if trusted and why_not
            else ""
        )
    )
    return "\n".join(lines)


# ------------------------------------------------------------------------------------- download


class _DownloadFailed(Exception):
    pass


def _open_url(url: str):
    """Open a URL for reading (urllib only). Tests replace this function."""
    req = urllib.request.Request(url, headers={"User-Agent": "sslkit (+https://pypi.org/project/sslkit)"})
    return urllib.request.urlopen(req, timeout=60)


def _download_source(spec: DatasetSpec, source: Source, folder: Path) -> tuple[dict[str, Path], list[str]]:
    for f in source.files.values():
        if not any(d.sha256 for d in f.downloads):
            raise _DownloadFailed(
                f"no trusted checksum recorded for {', '.join(d.url for d in f.downloads)}; refusing to "
                f"download unverified data for {spec.name} ({f.names[0]})"
            )
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise _DownloadFailed(f"cannot create the cache folder {folder}: {err}") from None
    paths, urls = {}, []
    for key, f in source.files.items():
        existing = next((folder / n for n in f.names if (folder / n).is_file()), None)
        if existing is not None:  # e.g. an earlier partial download of this source
            _read_verified(existing, f, spec.name)  # fail early; it is read and verified again to be parsed
            paths[key] = existing
            continue
        errors = []
        for d in f.downloads:
            if not d.sha256:
                continue
            try:
                paths[key] = _fetch_verified(d, folder, spec.name)
                urls.append(d.url)
                break
            except (urllib.error.URLError, OSError, zipfile.BadZipFile, tarfile.TarError) as err:
                errors.append(f"{d.url}: {err}")
        else:
            raise _DownloadFailed("; ".join(errors))
    return paths, urls


def _fetch_verified(d: Download, folder: Path, dataset: str) -> Path:
    """Download ``d`` to a temporary file in ``folder``, extract its member, check sha256, rename into place."""
    final = folder / d.save_as
    final.parent.mkdir(parents=True, exist_ok=True)
    # logged, not printed: a notebook (and so the book) shows whatever reaches stderr, and a download is no result.
    # INFO is silent unless the caller configures logging (logging.basicConfig(level=logging.INFO) shows it).
    _log.info("sslkit: downloading %s into the sslkit data cache", d.url)  # the path is in .source
    tmp_paths = []
    try:
        fd, tmp = tempfile.mkstemp(dir=final.parent, prefix=f".{final.name}.", suffix=".part")
        tmp_paths.append(tmp)
        h = hashlib.sha256()
        with os.fdopen(fd, "wb") as out, _open_url(d.url) as response:
            for chunk in iter(lambda: response.read(1 << 20), b""):
                out.write(chunk)
                h.update(chunk)
        digest = h.hexdigest()
        if d.member is not None:
            fd2, tmp2 = tempfile.mkstemp(dir=final.parent, prefix=f".{final.name}.", suffix=".member")
            tmp_paths.append(tmp2)
            with os.fdopen(fd2, "wb") as out:
                out.write(_extract_member(tmp, d.member, d.url))
            tmp = tmp2
            digest = sha256_of(tmp)
        if digest not in d.sha256:
            raise ChecksumError(
                f"{dataset}: downloaded file from {d.url} has sha256 {digest}, not one of the "
                f"accepted values {sorted(d.sha256)}; it was deleted and nothing was cached"
            )
        os.replace(tmp, final)
        tmp_paths.remove(tmp)
        return final
    finally:
        for p in tmp_paths:
            try:
                os.unlink(p)
            except FileNotFoundError:
                pass


def _extract_member(archive: str, member: str, url: str) -> bytes:
    if zipfile.is_zipfile(archive):
        with zipfile.ZipFile(archive) as z:
            for info in z.infolist():
                if info.filename.rsplit("/", 1)[-1] == member:
                    return z.read(info)
    else:
        with tarfile.open(archive) as t:
            for m in t:
                if m.isfile() and m.name.rsplit("/", 1)[-1] == member:
                    return t.extractfile(m).read()
    raise OSError(f"{url} does not contain {member}")
