"""On-disk cache of extracted features (one ``.npy`` file plus a ``.json`` record per entry).

Location: ``cache_dir`` if given, else ``$SSLKIT_CACHE_DIR/features``, else ``$XDG_CACHE_HOME/sslkit/features``,
else ``sslkit/features`` in the home folder's ``.cache`` (the same user cache as :func:`sslkit.data.load_dataset`).

File name: ``<label>-<extractor>-<digest>.npy`` where ``label`` is the caller's ``cache_key`` (e.g.
``"cifar10-train"``; default ``"images"``) and ``digest`` is the first 20 hex digits of a sha256 over the
extractor's name, its settings (e.g. ``pca_dim``, CLIP output) and the sha256 of the input images (their
shape, dtype and raw uint8 bytes). Changing one pixel, the order of the images or a setting gives a new file;
the label is only there for humans.

The ``.json`` record stores the shape, the dtype and the sha256 of the ``.npy`` file. An entry whose record is
missing or unreadable, or whose file does not match its record, is treated as absent (the caller recomputes
and overwrites it). Both files are written to a temporary name and moved into place, so an interrupted write
never leaves a file that looks valid.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
from pathlib import Path

import numpy as np

_FORMAT = 1


def default_cache_dir() -> Path:
    """``$SSLKIT_CACHE_DIR/features``, else ``$XDG_CACHE_HOME/sslkit/features``, else ``sslkit/features`` in the
    home folder's ``.cache``."""
    if os.environ.get("SSLKIT_CACHE_DIR"):
        return Path(os.environ["SSLKIT_CACHE_DIR"]).expanduser() / "features"
    if os.environ.get("XDG_CACHE_HOME"):
        return Path(os.environ["XDG_CACHE_HOME"]).expanduser() / "sslkit" / "features"
    return Path("~/.cache/sslkit/features").expanduser()


def images_digest(images: np.ndarray) -> str:
    """sha256 (hex) of a uint8 image array: its shape, dtype and bytes in C order."""
    h = hashlib.sha256()
    h.update(f"{images.shape}|{images.dtype.str}|".encode())
    h.update(np.ascontiguousarray(images).data)
    return h.hexdigest()


def entry_path(cache_dir, label: str, extractor: str, settings: dict, data_digest: str) -> Path:
    """Path of the ``.npy`` file for one (images, extractor, settings) triple."""
    if not isinstance(label, str) or not re.fullmatch(r"[A-Za-z0-9_.+=-]{1,80}", label):
        raise ValueError(
            f"cache_key must be 1-80 characters from letters, digits and '_.+=-' (it becomes part of a file "
            f"name), got {label!r}"
        )
    blob = json.dumps(
        {"format": _FORMAT, "extractor": extractor, "settings": settings, "data": data_digest}, sort_keys=True
    )
    digest = hashlib.sha256(blob.encode()).hexdigest()[:20]
    return Path(cache_dir) / f"{label}-{extractor}-{digest}.npy"


def _file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def load(path: Path, expected_rows: int):
    """The cached float32 ``(expected_rows, d)`` array at ``path``, or ``None`` when absent or not valid."""
    record = path.with_suffix(".json")
    if not path.is_file() or not record.is_file():
        return None
    try:
        meta = json.loads(record.read_text())
        data = path.read_bytes()  # one read: the checked bytes are the loaded bytes
        if meta.get("format") != _FORMAT or meta.get("sha256") != hashlib.sha256(data).hexdigest():
            return None
        arr = np.load(io.BytesIO(data), allow_pickle=False)
    except (OSError, ValueError, TypeError, AttributeError):
        return None
    ok = (
        arr.dtype == np.float32
        and arr.ndim == 2
        and list(arr.shape) == meta.get("shape")
        and arr.shape[0] == expected_rows
        and np.isfinite(arr).all()
    )
    return arr if ok else None


def save(path: Path, features: np.ndarray, info: dict) -> None:
    """Write ``features`` and its record atomically (temporary file + rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "wb") as f:
        np.save(f, features, allow_pickle=False)
    meta = dict(info, format=_FORMAT, shape=list(features.shape), dtype=str(features.dtype), sha256=_file_sha256(tmp))
    tmp_record = tmp.with_suffix(".json.tmp")
    tmp_record.write_text(json.dumps(meta, indent=1, sort_keys=True))
    os.replace(tmp, path)
    os.replace(tmp_record, path.with_suffix(".json"))
