"""Shared helpers of the data loaders' tests (not a test module): the isolated lookup fixture ``env`` (no
``SSLKIT_DATA_DIR``, an empty cache, no network), ``trust`` (accept the sha256 of synthetic files), ``write`` and the
``needs_data`` mark for tests that read the project's real data (``SSLKIT_DATA_DIR``)."""

import dataclasses
import hashlib
import os
from pathlib import Path

import pytest

from sslkit.data import registry

SHARED = os.environ.get("SSLKIT_DATA_DIR")


needs_data = pytest.mark.skipif(
    not SHARED or not Path(SHARED, "mnist").is_dir(), reason="real data: set SSLKIT_DATA_DIR to the shared data folder"
)


@pytest.fixture
def env(tmp_path, monkeypatch):
    """Isolated lookup: no SSLKIT_DATA_DIR, an empty cache, and no network (a call fails the test)."""
    cache = tmp_path / "cache"
    monkeypatch.delenv("SSLKIT_DATA_DIR", raising=False)
    monkeypatch.delenv("SSLKIT_OFFLINE", raising=False)
    monkeypatch.setenv("SSLKIT_CACHE_DIR", str(cache))

    def no_network(url):
        raise AssertionError(f"the network was touched: {url}")

    monkeypatch.setattr(registry, "_open_url", no_network)
    return cache


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def trust(monkeypatch, name, *blobs):
    """Make every file of dataset ``name`` also accept the sha256 of the given bytes (synthetic test files)."""
    spec = registry.SPECS[name]
    extra = tuple(sha(b) for b in blobs)
    sources = tuple(
        dataclasses.replace(s, files={k: dataclasses.replace(f, sha256=f.sha256 + extra) for k, f in s.files.items()})
        for s in spec.sources
    )
    monkeypatch.setitem(registry.SPECS, name, dataclasses.replace(spec, sources=sources))


def write(path: Path, data: bytes) -> bytes:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return data
