"""sslkit.features.cache: a second call reads the cache without running the extractor, the key changes with the pixels,
their order and the settings, cache=False never touches the disk, the default folder follows the environment, a
damaged cache is detected and recomputed, and what is loaded is the checked bytes."""

from __future__ import annotations

import json

import numpy as np
import pytest
from test_features_extractors import _counting, _images

from sslkit.features import default_cache_dir, extract_features
from sslkit.features import extractors as E

pytestmark = pytest.mark.usefixtures("one_thread")  # conftest.py


def test_second_call_reads_cache_without_running_extractor(tmp_path, monkeypatch):
    X = _images(30)
    calls = _counting(monkeypatch, "pixels_pca")
    a = extract_features(X, "pixels_pca", pca_dim=4, cache_dir=tmp_path, cache_key="toy-train")
    assert calls == [30]
    files = sorted(p.name for p in tmp_path.iterdir())
    assert len(files) == 2 and files[0].startswith("toy-train-pixels_pca-") and files[0].endswith(".json")

    def boom(*args, **kwargs):
        raise AssertionError("the extractor ran although its features are cached")

    monkeypatch.setitem(E._COMPUTE, "pixels_pca", boom)
    b = extract_features(X, "pixels_pca", pca_dim=4, cache_dir=tmp_path, cache_key="toy-train")
    np.testing.assert_array_equal(a, b)
    assert b.dtype == np.float32


def test_cache_key_changes_with_pixels_order_and_settings(tmp_path, monkeypatch):
    X = _images(30)
    calls = _counting(monkeypatch, "pixels_pca")
    extract_features(X, "pixels_pca", pca_dim=4, cache_dir=tmp_path)
    Y = X.copy()
    Y[3, 2, 1, 0] ^= 1  # one pixel, one bit
    extract_features(Y, "pixels_pca", pca_dim=4, cache_dir=tmp_path)
    extract_features(X[::-1].copy(), "pixels_pca", pca_dim=4, cache_dir=tmp_path)
    extract_features(X, "pixels_pca", pca_dim=5, cache_dir=tmp_path)
    extract_features(X, "pixels_pca", pca_dim=4, cache_dir=tmp_path, cache_key="other")
    assert calls == [30] * 5
    assert len(list(tmp_path.glob("*.npy"))) == 5
    extract_features(X, "pixels_pca", pca_dim=4, cache_dir=tmp_path)
    assert len(calls) == 5


def test_cache_false_never_touches_disk(tmp_path, monkeypatch):
    monkeypatch.setenv("SSLKIT_CACHE_DIR", str(tmp_path))
    calls = _counting(monkeypatch, "pixels_pca")
    extract_features(_images(10), "pixels_pca", pca_dim=2, cache=False)
    extract_features(_images(10), "pixels_pca", pca_dim=2, cache=False)
    assert calls == [10, 10] and not any(tmp_path.iterdir())


def test_default_cache_dir_follows_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("SSLKIT_CACHE_DIR", str(tmp_path / "c"))
    assert default_cache_dir() == tmp_path / "c" / "features"
    extract_features(_images(10), "pixels_pca", pca_dim=2)
    assert len(list((tmp_path / "c" / "features").glob("images-pixels_pca-*.npy"))) == 1
    monkeypatch.delenv("SSLKIT_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "x"))
    assert default_cache_dir() == tmp_path / "x" / "sslkit" / "features"


@pytest.mark.parametrize("damage", ["flip_byte", "truncate", "other_array", "no_record", "bad_record"])
def test_corrupted_cache_is_detected_and_recomputed(tmp_path, monkeypatch, damage):
    X = _images(30)
    calls = _counting(monkeypatch, "pixels_pca")
    a = extract_features(X, "pixels_pca", pca_dim=4, cache_dir=tmp_path)
    npy = next(tmp_path.glob("*.npy"))
    record = npy.with_suffix(".json")
    if damage == "flip_byte":
        raw = bytearray(npy.read_bytes())
        raw[-3] ^= 0xFF
        npy.write_bytes(bytes(raw))
    elif damage == "truncate":
        npy.write_bytes(npy.read_bytes()[:100])
    elif damage == "other_array":
        np.save(npy, np.zeros((29, 4), np.float32))
    elif damage == "no_record":
        record.unlink()
    else:
        record.write_text("{not json")
    b = extract_features(X, "pixels_pca", pca_dim=4, cache_dir=tmp_path)
    assert calls == [30, 30]
    np.testing.assert_array_equal(a, b)
    meta = json.loads(record.read_text())  # rewritten, valid again
    assert meta["shape"] == [30, 4] and meta["dtype"] == "float32"
    extract_features(X, "pixels_pca", pca_dim=4, cache_dir=tmp_path)
    assert calls == [30, 30]


def test_cached_features_are_loaded_from_the_checked_bytes(tmp_path, monkeypatch):
    # The .npy file changes after its sha256 was checked: the loaded array must be the checked one (the cache
    # used to hash the file and then reopen it with np.load).
    from sslkit.features import cache as C

    X = _images(30)
    a = extract_features(X, "pixels_pca", pca_dim=4, cache_dir=tmp_path)
    npy = next(tmp_path.glob("*.npy"))
    real_load = np.load

    def edit_then_load(file, *args, **kwargs):
        np.save(npy, np.zeros_like(a))  # an edit between the check and the load
        return real_load(file, *args, **kwargs)

    monkeypatch.setattr(C.np, "load", edit_then_load)
    np.testing.assert_array_equal(C.load(npy, 30), a)
    monkeypatch.setattr(C.np, "load", real_load)
    assert C.load(npy, 30) is None  # the edited file itself fails its check
