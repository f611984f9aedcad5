"""The committed records where the repository is not: fetched from the source sslkit was installed from.

In a clone (or an editable install) the committed records are the repository's ``notebooks/results`` folder.
In Colab, a notebook's first cell installs sslkit with ``pip install "sslkit @ git+<repository url>"`` (the url of
``_config.yml``), which brings the package but not ``notebooks/results``. pip records where a package came from
(PEP 610, ``direct_url.json``: the url and the commit), so :func:`committed_results_dir` can fetch
``notebooks/results`` of exactly that commit -- the same source the code came from -- and the evidence sections of
the pages are not empty. Downloads are refused under ``SSLKIT_OFFLINE=1``; without a source or a network the
folder is simply absent and pages say "no committed records" (so they do, with a warning, after a download that is
not a whole tarball: truncated, or an HTML error page).
"""

from __future__ import annotations

import io
import json
import os
import shutil
import tarfile
import urllib.request
import warnings
import zlib
from importlib import metadata
from pathlib import Path

from .store import repo_root

TIMEOUT_S = 60


def install_source() -> tuple[str, str] | None:
    """``(repository url, commit)`` sslkit was installed from with ``pip install "sslkit @ git+URL"`` (PEP 610),
    or None (installed from a folder or a wheel, or not installed at all: running from a clone)."""
    try:
        text = metadata.distribution("sslkit").read_text("direct_url.json")
    except metadata.PackageNotFoundError:
        return None
    info = json.loads(text) if text else {}
    vcs = info.get("vcs_info") or {}
    if vcs.get("vcs") != "git" or not info.get("url"):
        return None
    return info["url"].removesuffix(".git"), vcs.get("commit_id") or vcs.get("requested_revision") or "HEAD"


def tarball_url(url: str, commit: str) -> str:
    """The archive of ``commit`` of a GitHub repository: ``https://codeload.github.com/<org>/<repo>/tar.gz/<commit>``."""
    prefix = "https://github.com/"
    if not url.startswith(prefix) or len(url[len(prefix) :].strip("/").split("/")) != 2:
        raise ValueError(f"committed records can be fetched from a GitHub repository only, not {url!r}")
    return f"https://codeload.github.com/{url[len(prefix) :].strip('/')}/tar.gz/{commit}"


def extract_results(archive: bytes, dest: Path) -> int:
    """Write the ``notebooks/results/**.jsonl`` members of a repository tarball under ``dest``; their number.
    ``ValueError`` when ``archive`` is not a whole gzip tarball (a truncated download, an HTML error page)."""
    try:
        return _extract(archive, dest)
    except (tarfile.TarError, EOFError, zlib.error) as exc:
        head = archive[:15].decode("ascii", "replace")
        raise ValueError(
            f"the download is not a whole gzip tarball ({len(archive)} bytes starting {head!r}: truncated, or an "
            f"HTML page?): {type(exc).__name__}: {exc}"
        ) from None


def _extract(archive: bytes, dest: Path) -> int:
    n = 0
    with tarfile.open(fileobj=io.BytesIO(archive), mode="r:gz") as tar:
        for member in tar.getmembers():
            parts = Path(member.name).parts  # "<repo>-<commit>/notebooks/results/<experiment>/<scale>.jsonl"
            if not (member.isfile() and len(parts) == 5 and parts[1:3] == ("notebooks", "results")):
                continue
            if not parts[4].endswith(".jsonl") or any(p in ("..", "") for p in parts[3:]):
                continue
            target = dest / parts[3] / parts[4]
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(tar.extractfile(member).read())
            n += 1
    return n


def committed_results_dir() -> Path:
    """The folder of committed records: the repository's ``notebooks/results`` when it exists, else a copy of
    that folder fetched once from the install source (:func:`install_source`) into the user cache. When nothing
    can be fetched (offline, no git install source) the repository path is returned as is, absent."""
    here = repo_root() / "notebooks" / "results"
    if here.is_dir():
        return here
    source = install_source()
    if source is None or os.environ.get("SSLKIT_OFFLINE", "").strip() not in ("", "0"):
        return here
    url, commit = source
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    dest = base / "sslkit" / "results" / commit
    if not dest.is_dir():
        try:
            with urllib.request.urlopen(tarball_url(url, commit), timeout=TIMEOUT_S) as response:
                archive = response.read()
        except (OSError, ValueError):
            return here
        tmp = dest.with_name(dest.name + ".part")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True, exist_ok=True)
        try:
            extract_results(archive, tmp)
        except ValueError as exc:
            shutil.rmtree(tmp, ignore_errors=True)
            warnings.warn(f"committed records not fetched from {tarball_url(url, commit)}: {exc}", stacklevel=2)
            return here
        tmp.rename(dest)
    return dest
