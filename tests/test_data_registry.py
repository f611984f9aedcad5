"""Tests of the data loaders: lookup order, checksums, downloads, parsers, preprocessing helpers.

Tests that need the project's real data skip unless ``SSLKIT_DATA_DIR`` points at it. Every other test
runs in an isolated environment: empty user cache in a tmp dir, no ``SSLKIT_DATA_DIR``, and a network
function that fails the test if it is called.
"""

import dataclasses
import gzip
import hashlib
import io
import logging
import os
import pickle
import tarfile
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch

from sslkit.data import registry
from sslkit.data.dataset import Dataset
from sslkit.data.images import images_to_tensor
from sslkit.data.registry import DATASETS, ChecksumError, DatasetNotFoundError, load_dataset
from sslkit.data.tabular import one_hot, standardize

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


class FakeServer:
    """Stands in for ``registry._open_url``: serves fixed bytes per URL and counts requests."""

    def __init__(self, payloads):
        self.payloads, self.calls = payloads, []

    def __call__(self, url):
        self.calls.append(url)
        return io.BytesIO(self.payloads[url])


# ---------------------------------------------------------------------------------- names, options


def test_dataset_names():
    assert DATASETS == (
        "mnist",
        "cifar10",
        "cifar100",
        "svhn",
        "stl10",
        "adult",
        "banknote",
        "breast_cancer",
        "credit_default",
        "covertype",
        "shuttle",
        "dry_bean",
        "digits",
    )


def test_unknown_name_lists_valid_names(env):
    with pytest.raises(ValueError, match="unknown dataset 'mnits'") as e:
        load_dataset("mnits")
    for n in DATASETS:
        assert n in str(e.value)


def test_bad_options(env):
    with pytest.raises(TypeError, match="unexpected option"):
        load_dataset("banknote", variant="jpeg")
    with pytest.raises(ValueError, match="variant must be one of"):
        load_dataset("cifar10", variant="png")
    with pytest.raises(TypeError, match="download must be"):
        load_dataset("banknote", download="yes")
    with pytest.raises(TypeError, match="root must be a path"):
        load_dataset("banknote", root=3)


# ---------------------------------------------------------------------------------- not found


def test_missing_mnist_offline_names_dataset_places_and_env_var(env, tmp_path):
    root = tmp_path / "empty_root"
    root.mkdir()
    with pytest.raises(DatasetNotFoundError) as e:
        load_dataset("mnist", root=root, download=False)
    msg = str(e.value)
    assert isinstance(e.value, FileNotFoundError)
    assert "'mnist'" in msg and "SSLKIT_DATA_DIR" in msg
    assert str(root / "mnist") in msg and str(env / "mnist") in msg  # every place looked
    assert "download=False" in msg
    assert "https://ossci-datasets.s3.amazonaws.com/mnist/train-images-idx3-ubyte.gz" in msg  # how to supply
    assert "mnist/train-images-idx3-ubyte.gz" in msg


def test_missing_dataset_first_line_is_a_plain_sentence(env, tmp_path):
    """Pages print the first line alone (issue 21): it names the dataset, and no path or search log."""
    with pytest.raises(DatasetNotFoundError) as e:
        load_dataset("mnist", root=tmp_path, download=False)
    first, second = str(e.value).splitlines()[:2]
    assert first == "dataset 'mnist' is not on this machine (downloads are off)."
    assert second == "Looked in:" and str(tmp_path) not in first


def test_missing_with_data_dir_set_lists_it(env, tmp_path, monkeypatch):
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    monkeypatch.setenv("SSLKIT_DATA_DIR", str(data_dir))
    with pytest.raises(DatasetNotFoundError) as e:
        load_dataset("mnist", download=False)
    assert f"$SSLKIT_DATA_DIR: {data_dir / 'mnist'}" in str(e.value)


def test_offline_env_blocks_download(env, monkeypatch):
    monkeypatch.setenv("SSLKIT_OFFLINE", "1")
    with pytest.raises(DatasetNotFoundError, match="SSLKIT_OFFLINE=1"):
        load_dataset("banknote")  # download=None + SSLKIT_OFFLINE=1: no network (env fixture)


def test_no_trusted_checksum_refuses_download(env, monkeypatch):
    server = FakeServer({})
    monkeypatch.setattr(registry, "_open_url", server)
    for name in ("credit_default", "shuttle"):
        with pytest.raises(DatasetNotFoundError, match="no trusted checksum recorded"):
            load_dataset(name, download=True)
    assert server.calls == []  # refused before any byte was fetched


def test_sklearn_fallbacks_need_no_files(env):
    d = load_dataset("digits", download=False)
    assert d.X.shape == (1797, 64) and d.X.dtype == np.float64 and d.X_test is None
    assert d.classes == tuple("0123456789") and np.bincount(d.y).sum() == 1797
    b = load_dataset("breast_cancer", download=False)
    assert b.X.shape == (569, 30) and b.classes == ("malignant", "benign")
    assert np.bincount(b.y).tolist() == [212, 357] and "scikit-learn" in b.source


# ---------------------------------------------------------------------------------- checksums

BANKNOTE_ROWS = b"3.6216,8.6661,-2.8073,-0.44699,0\r\n-1.3971,3.3191,-1.3927,-1.9948,1\r\n0.5,0.25,-0.5,1.5,1\r\n"


def test_corrupt_local_file_raises_and_returns_nothing(env, tmp_path):
    write(tmp_path / "root" / "banknote" / "data_banknote_authentication.txt", BANKNOTE_ROWS)
    with pytest.raises(ChecksumError, match="checksum mismatch"):
        load_dataset("banknote", root=tmp_path / "root", download=False)


def test_changed_file_is_reverified(env, tmp_path, monkeypatch):
    path = tmp_path / "root" / "banknote" / "data_banknote_authentication.txt"
    trust(monkeypatch, "banknote", write(path, BANKNOTE_ROWS))
    d = load_dataset("banknote", root=tmp_path / "root", download=False)
    assert d.X.shape == (3, 4) and d.y.tolist() == [0, 1, 1]
    corrupted = BANKNOTE_ROWS.replace(b"3.6216", b"3.6217")  # same size, one byte flipped
    path.write_bytes(corrupted)
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 10**9))
    with pytest.raises(ChecksumError):
        load_dataset("banknote", root=tmp_path / "root", download=False)


def test_edit_keeping_size_and_mtime_is_not_passed_as_verified(env, tmp_path, monkeypatch):
    # The old memo, keyed on (path, size, mtime), let an edited file through as "verified" when the edit kept
    # its size and restored its mtime.
    path = tmp_path / "root" / "banknote" / "data_banknote_authentication.txt"
    trust(monkeypatch, "banknote", write(path, BANKNOTE_ROWS))
    assert load_dataset("banknote", root=tmp_path / "root", download=False).X[0, 0] == 3.6216
    st = path.stat()
    path.write_bytes(BANKNOTE_ROWS.replace(b"3.6216", b"9.6216"))  # same size
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))  # same mtime
    assert (path.stat().st_size, path.stat().st_mtime_ns) == (st.st_size, st.st_mtime_ns)
    with pytest.raises(ChecksumError, match="checksum mismatch"):
        load_dataset("banknote", root=tmp_path / "root", download=False)


def test_the_verified_bytes_are_the_parsed_bytes(env, tmp_path, monkeypatch):
    # The file is edited after its checksum was checked and before it is parsed: the parser must see the
    # verified bytes (it used to reopen the file and parse the edited one).
    path = tmp_path / "root" / "banknote" / "data_banknote_authentication.txt"
    trust(monkeypatch, "banknote", write(path, BANKNOTE_ROWS))
    spec = registry.SPECS["banknote"]
    parse = spec.sources[0].parse

    def edit_then_parse(paths, **options):
        path.write_bytes(BANKNOTE_ROWS.replace(b"3.6216", b"9.6216"))  # an edit after verification
        return parse(paths, **options)

    source = dataclasses.replace(spec.sources[0], parse=edit_then_parse)
    monkeypatch.setitem(registry.SPECS, "banknote", dataclasses.replace(spec, sources=(source,)))
    d = load_dataset("banknote", root=tmp_path / "root", download=False)
    assert d.X[0, 0] == 3.6216  # the verified value, not the edited 9.6216
    with pytest.raises(ChecksumError):  # and the edited file itself is refused on the next load
        load_dataset("banknote", root=tmp_path / "root", download=False)


@needs_data
def test_flipped_byte_in_real_copy(env, tmp_path, monkeypatch):
    raw = bytearray(Path(SHARED, "mnist", "t10k-labels-idx1-ubyte.gz").read_bytes())
    raw[len(raw) // 2] ^= 0xFF
    for f in ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz", "t10k-images-idx3-ubyte.gz"):
        (tmp_path / "r" / "mnist").mkdir(parents=True, exist_ok=True)
        os.symlink(Path(SHARED, "mnist", f), tmp_path / "r" / "mnist" / f)
    write(tmp_path / "r" / "mnist" / "t10k-labels-idx1-ubyte.gz", bytes(raw))
    monkeypatch.setenv("SSLKIT_DATA_DIR", SHARED)  # a good copy exists later in the lookup order ...
    with pytest.raises(ChecksumError, match="t10k-labels"):  # ... but a bad file found first never yields data
        load_dataset("mnist", root=tmp_path / "r", download=False)


# ---------------------------------------------------------------------------------- downloads


def test_bad_download_raises_and_caches_nothing(env, monkeypatch):
    url = "https://archive.ics.uci.edu/ml/machine-learning-databases/00267/data_banknote_authentication.txt"
    server = FakeServer({url: BANKNOTE_ROWS})  # wrong bytes for the recorded sha256
    monkeypatch.setattr(registry, "_open_url", server)
    with pytest.raises(ChecksumError, match="deleted and nothing was cached"):
        load_dataset("banknote", download=True)
    assert server.calls == [url]
    assert [p for p in env.rglob("*") if p.is_file()] == []


def test_good_download_is_cached_and_reused(env, monkeypatch, capfd, caplog):
    spec = registry.SPECS["banknote"]
    f = spec.sources[0].files["table"]
    url = f.downloads[0].url
    fake = dataclasses.replace(f, downloads=(dataclasses.replace(f.downloads[0], sha256=(sha(BANKNOTE_ROWS),)),))
    source = dataclasses.replace(spec.sources[0], files={"table": fake})
    monkeypatch.setitem(registry.SPECS, "banknote", dataclasses.replace(spec, sources=(source,)))
    server = FakeServer({url: BANKNOTE_ROWS})
    monkeypatch.setattr(registry, "_open_url", server)

    with caplog.at_level(logging.INFO, logger="sslkit.data"):
        first = load_dataset("banknote")  # download=None: allowed (SSLKIT_OFFLINE unset)
    assert server.calls == [url] and "downloaded from" in first.source
    assert capfd.readouterr().err == ""  # a notebook shows stderr: the download is logged, never printed
    assert [r.getMessage() for r in caplog.records] == [f"sslkit: downloading {url} into the sslkit data cache"]
    cached = env / "banknote" / "data_banknote_authentication.txt"
    assert cached.read_bytes() == BANKNOTE_ROWS
    assert sorted(p.name for p in env.rglob("*") if p.is_file()) == [cached.name]  # no temporary left

    second = load_dataset("banknote", download=False)
    assert server.calls == [url]  # not downloaded again
    assert str(env / "banknote") in second.source
    np.testing.assert_array_equal(first.X, second.X)
    np.testing.assert_array_equal(second.X[1], [-1.3971, 3.3191, -1.3927, -1.9948])


@needs_data
def test_real_download_checksums_accept_official_bytes(env, monkeypatch):
    """The recorded sha256 of the official (uncompressed) UCI files match the verified shared copies."""
    urls = {
        d.url: gzip.decompress(Path(SHARED, folder, gz).read_bytes())
        for name, folder, gz in [
            ("banknote", "banknote", "data_banknote_authentication.txt.gz"),
            ("adult", "adult", "adult.data.gz"),
            ("adult", "adult", "adult.test.gz"),
        ]
        for f in registry.SPECS[name].sources[0].files.values()
        for d in f.downloads
        if d.save_as == gz[:-3]
    }
    arff = gzip.decompress(Path(SHARED, "dry_bean", "Dry_Bean_Dataset.arff.gz").read_bytes())
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:  # the UCI zip holds the ARFF in a sub-folder
        z.writestr("DryBeanDataset/Dry_Bean_Dataset.arff", arff)
    urls[registry.SPECS["dry_bean"].sources[0].files["table"].downloads[0].url] = buf.getvalue()
    server = FakeServer(urls)
    monkeypatch.setattr(registry, "_open_url", server)
    assert len(load_dataset("banknote", download=True).y) == 1372
    assert load_dataset("adult", download=True).X_test.shape[0] == 16281
    bean = load_dataset("dry_bean", download=True)
    assert bean.X.shape == (13611, 16)
    assert (env / "dry_bean" / "Dry_Bean_Dataset.arff").read_bytes() == arff
    assert len(server.calls) == 4


# ---------------------------------------------------------------------------------- parsers on synthetic files


def _cifar_rows(rng, n):
    return rng.integers(0, 256, size=(n, 3072), dtype=np.uint8)


def _tar(members: dict) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as t:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def test_cifar10_python_tarball_preferred_by_auto(env, tmp_path, monkeypatch):
    rng = np.random.default_rng(0)
    batches = {f"data_batch_{i}": {b"data": _cifar_rows(rng, 3), b"labels": [i, i + 1, 9]} for i in range(1, 6)}
    batches["test_batch"] = {b"data": _cifar_rows(rng, 2), b"labels": [4, 2]}
    batches["batches.meta"] = {b"label_names": [c.encode() for c in registry.P.CIFAR10_CLASSES]}
    blob = _tar({f"cifar-10-batches-py/{k}": pickle.dumps(v) for k, v in batches.items()})
    trust(monkeypatch, "cifar10", write(tmp_path / "r" / "cifar10" / "cifar-10-python.tar.gz", blob))
    if SHARED:
        monkeypatch.setenv("SSLKIT_DATA_DIR", SHARED)  # the JPEG copy is there, but the tarball wins
    d = load_dataset("cifar10", root=tmp_path / "r", download=False)
    assert d.X.shape == (15, 32, 32, 3) and d.X_test.shape == (2, 32, 32, 3) and d.X.dtype == np.uint8
    assert d.y[:3].tolist() == [1, 2, 9] and d.y_test.tolist() == [4, 2] and d.classes[3] == "cat"
    row = batches["data_batch_1"][b"data"][0]
    assert d.X[0, 1, 2].tolist() == [row[32 + 2], row[1024 + 32 + 2], row[2048 + 32 + 2]]  # CHW -> HWC
    assert "JPEG" not in d.notes


def test_cifar100_labels_modes(env, tmp_path, monkeypatch):
    rng = np.random.default_rng(1)
    parts = {
        "train": {b"data": _cifar_rows(rng, 4), b"fine_labels": [0, 99, 5, 7], b"coarse_labels": [0, 19, 3, 3]},
        "test": {b"data": _cifar_rows(rng, 2), b"fine_labels": [1, 2], b"coarse_labels": [4, 5]},
        "meta": {
            b"fine_label_names": [f"f{i}".encode() for i in range(100)],
            b"coarse_label_names": [f"c{i}".encode() for i in range(20)],
        },
    }
    blob = _tar({f"cifar-100-python/{k}": pickle.dumps(v) for k, v in parts.items()})
    trust(monkeypatch, "cifar100", write(tmp_path / "r" / "cifar100" / "cifar-100-python.tar.gz", blob))
    fine = load_dataset("cifar100", root=tmp_path / "r", download=False)
    coarse = load_dataset("cifar100", root=tmp_path / "r", download=False, label_mode="coarse")
    assert fine.num_classes == 100 and fine.y.tolist() == [0, 99, 5, 7] and fine.classes[99] == "f99"
    assert coarse.num_classes == 20 and coarse.y_test.tolist() == [4, 5]
    np.testing.assert_array_equal(fine.X, coarse.X)
    assert fine.X[1, 0, 0].tolist() == parts["train"][b"data"][1][[0, 1024, 2048]].tolist()


def test_svhn_mat_layout_and_label_10_is_zero(env, tmp_path, monkeypatch):
    from scipy.io import savemat

    rng = np.random.default_rng(2)
    blobs = []
    for part, n, labels in (("train", 3, [10, 1, 9]), ("test", 2, [10, 10])):
        X = rng.integers(0, 256, size=(32, 32, 3, n), dtype=np.uint8)
        buf = io.BytesIO()
        savemat(buf, {"X": X, "y": np.asarray(labels, np.uint8).reshape(-1, 1)})
        blobs.append(write(tmp_path / "r" / "svhn" / f"{part}_32x32.mat", buf.getvalue()))
        if part == "train":
            X_train = X
    trust(monkeypatch, "svhn", *blobs)
    d = load_dataset("svhn", root=tmp_path / "r", download=False)
    assert d.X.shape == (3, 32, 32, 3) and d.y.tolist() == [0, 1, 9] and d.y_test.tolist() == [0, 0]
    np.testing.assert_array_equal(d.X[1], X_train[:, :, :, 1])


def test_stl10_column_major_binary(env, tmp_path, monkeypatch):
    rng = np.random.default_rng(3)
    imgs = rng.integers(0, 256, size=(2, 96, 96, 3), dtype=np.uint8)  # (N, row, col, channel)
    test_imgs = rng.integers(0, 256, size=(1, 96, 96, 3), dtype=np.uint8)

    def col_major(a):  # channel, column, row
        return np.ascontiguousarray(a.transpose(0, 3, 2, 1)).tobytes()

    blob = _tar(
        {
            "stl10_binary/train_X.bin": col_major(imgs),
            "stl10_binary/train_y.bin": bytes([1, 10]),
            "stl10_binary/test_X.bin": col_major(test_imgs),
            "stl10_binary/test_y.bin": bytes([8]),
            "stl10_binary/class_names.txt": "\n".join(registry.P.STL10_CLASSES).encode(),
        }
    )
    trust(monkeypatch, "stl10", write(tmp_path / "r" / "stl10" / "stl10_binary.tar.gz", blob))
    d = load_dataset("stl10", root=tmp_path / "r", download=False)
    np.testing.assert_array_equal(d.X, imgs)
    np.testing.assert_array_equal(d.X_test, test_imgs)
    assert d.y.tolist() == [0, 9] and d.y_test.tolist() == [7] and d.classes[7] == "monkey"


def test_covertype_gz_csv(env, tmp_path, monkeypatch):
    rows = np.zeros((3, 55), dtype=np.int64)
    rows[:, 0] = [2596, 2590, 2804]
    rows[:, 54] = [5, 1, 7]
    text = "\n".join(",".join(map(str, r)) for r in rows).encode() + b"\n"
    trust(monkeypatch, "covertype", write(tmp_path / "r" / "covertype" / "covtype.data.gz", gzip.compress(text)))
    d = load_dataset("covertype", root=tmp_path / "r", download=False)
    assert d.X.shape == (3, 54) and d.X.dtype == np.float64 and d.X_test is None
    assert d.y.tolist() == [4, 0, 6] and d.X[:, 0].tolist() == [2596, 2590, 2804] and d.num_classes == 7


# ---------------------------------------------------------------------------------- the real shared data


@pytest.fixture
def shared(env, monkeypatch):
    monkeypatch.setenv("SSLKIT_DATA_DIR", SHARED)


@needs_data
def test_mnist_full(shared):
    d = load_dataset("mnist", download=False)
    assert d.X.shape == (60000, 28, 28) and d.X_test.shape == (10000, 28, 28) and d.X.dtype == np.uint8
    assert d.classes == tuple("0123456789")
    assert np.bincount(d.y).tolist() == [5923, 6742, 5958, 6131, 5842, 5421, 5918, 6265, 5851, 5949]
    assert np.bincount(d.y_test).tolist() == [980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009]
    assert abs(d.X.mean() / 255 - 0.1307) < 1e-4


@needs_data
@pytest.mark.parametrize(
    "name, shape, test_shape, counts",
    [
        ("banknote", (1372, 4), None, [762, 610]),
        ("breast_cancer", (569, 30), None, [212, 357]),
        ("adult", (32561, 105), (16281, 105), [24720, 7841]),
        ("credit_default", (30000, 33), None, [23364, 6636]),
        ("shuttle", (43500, 9), (14500, 9), [34108, 37, 132, 6748, 2458, 6, 11]),
        ("dry_bean", (13611, 16), None, [2027, 1322, 522, 1630, 1928, 2636, 3546]),
    ],
)
def test_shared_tabular(shared, name, shape, test_shape, counts):
    d = load_dataset(name, download=False)
    assert d.X.shape == shape and d.X.dtype == np.float64 and np.isfinite(d.X).all()
    assert (None if d.X_test is None else d.X_test.shape) == test_shape
    assert np.bincount(d.y).tolist() == counts and d.num_classes == len(counts)
    assert "sha256 verified" in d.source


@needs_data
def test_shared_tabular_details(shared):
    adult = load_dataset("adult", download=False)
    assert adult.classes == ("<=50K", ">50K") and np.bincount(adult.y_test).tolist() == [12435, 3846]
    assert adult.X[0, 0] == 39 and adult.X[0, 1] == 77516  # age, fnlwgt of the first row
    onehot = adult.X[:, 6:]
    assert set(np.unique(onehot)) == {0.0, 1.0}
    assert int((onehot.sum(axis=1) < 8).sum()) == 32561 - 30162  # rows with a '?' lack one indicator
    credit = load_dataset("credit_default", download=False)
    assert credit.X[0, 0] == 20000 and credit.classes == ("no default", "default")
    assert (credit.X[:, 20:].sum(axis=1) == 3).all()  # SEX, EDUCATION, MARRIAGE one-hot
    shuttle = load_dataset("shuttle", download=False)
    assert shuttle.X_test[0].tolist() == [55, 0, 81, 0, -6, 11, 25, 88, 64] and shuttle.y_test[0] == 3
    bean = load_dataset("dry_bean", download=False)
    assert bean.classes == ("SEKER", "BARBUNYA", "BOMBAY", "CALI", "HOROZ", "SIRA", "DERMASON")


@needs_data
def test_breast_cancer_file_equals_sklearn(env):
    from_file = load_dataset("breast_cancer", root=SHARED, download=False)
    from_sklearn = load_dataset("breast_cancer", download=False)
    assert "breast_cancer_wdbc" in from_file.source and "scikit-learn" in from_sklearn.source
    np.testing.assert_array_equal(from_file.X, from_sklearn.X)
    np.testing.assert_array_equal(from_file.y, from_sklearn.y)
    assert from_file.classes == from_sklearn.classes == ("malignant", "benign")


@needs_data
def test_cifar10_lossless_subset(shared):
    d = load_dataset("cifar10", variant="lossless", download=False)
    assert d.X.shape == (4000, 32, 32, 3) and d.X_test.shape == (1000, 32, 32, 3) and d.X.dtype == np.uint8
    assert d.X[0, 0, 0].tolist() == [59, 62, 63] and d.X_test[0, 0, 0].tolist() == [158, 112, 49]
    assert d.y[:10].tolist() == [6, 9, 9, 4, 1, 1, 2, 7, 8, 3]
    assert d.y_test[:10].tolist() == [3, 8, 8, 0, 6, 6, 1, 6, 3, 1]
    assert np.bincount(d.y).tolist() == [396, 366, 420, 384, 422, 393, 414, 385, 407, 413]
    assert "SUBSET" in d.notes and "0..3999" in d.notes and d.classes[5] == "dog"


@needs_data
def test_cifar10_auto_is_the_jpeg_copy_in_original_order(shared):
    """Full JPEG load (about 6-8 s: 60000 decodes); checked against the lossless subset."""
    d = load_dataset("cifar10", download=False)  # no python tarball in the shared folder
    assert "JPEG q75 (lossy) copy" in d.notes
    assert d.X.shape == (50000, 32, 32, 3) and d.X_test.shape == (10000, 32, 32, 3)
    assert np.bincount(d.y).tolist() == [5000] * 10 and np.bincount(d.y_test).tolist() == [1000] * 10
    exact = load_dataset("cifar10", variant="lossless", download=False)
    np.testing.assert_array_equal(d.y[:4000], exact.y)
    np.testing.assert_array_equal(d.y_test[:1000], exact.y_test)
    err = np.abs(d.X[:4000].astype(np.int16) - exact.X).mean()
    assert 4.0 < err < 8.0  # JPEG error 5.8/255 on the same images, not other images


# ---------------------------------------------------------------------------------- Dataset, helpers


def test_dataset_validates():
    X = np.zeros((3, 2))
    d = Dataset(
        name="t", X=X, y=np.array([0, 1, 1], np.int32), X_test=None, y_test=None, classes=("a", "b"), source="test"
    )
    assert d.num_classes == 2 and d.y.dtype == np.int64 and "X=(3, 2)" in repr(d)
    with pytest.raises(ValueError, match="X has 3 rows but y has 2"):
        Dataset(name="t", X=X, y=np.array([0, 1]), X_test=None, y_test=None, classes=("a", "b"), source="")
    with pytest.raises(ValueError, match=r"y must be in 0..1"):
        Dataset(name="t", X=X, y=np.array([0, 1, 2]), X_test=None, y_test=None, classes=("a", "b"), source="")
    with pytest.raises(ValueError, match="both be None"):
        Dataset(name="t", X=X, y=np.array([0, 1, 1]), X_test=X, y_test=None, classes=("a", "b"), source="")


def test_standardize_uses_train_statistics_only():
    X_train = np.array([[1.0, 5.0], [3.0, 5.0]])  # column 1 is constant
    X_test = np.array([[2.0, 7.0], [100.0, 5.0]])
    Z_train, Z_test, none = standardize(X_train, X_test, None)
    np.testing.assert_allclose(Z_train, [[-1.0, 0.0], [1.0, 0.0]])
    np.testing.assert_allclose(Z_test, [[0.0, 2.0], [98.0, 0.0]])  # mean 2, std 1; constant col: std -> 1
    assert none is None
    (Z_again,) = standardize(X_train)
    np.testing.assert_array_equal(Z_again, Z_train)


def test_standardize_errors():
    good = np.ones((2, 2))
    with pytest.raises(ValueError, match="X_train contains NaN"):
        standardize(np.array([[1.0, np.nan], [0.0, 1.0]]))
    with pytest.raises(ValueError, match=r"others\[1\] contains NaN or infinite"):
        standardize(good, good, np.array([[np.inf, 0.0]]))
    with pytest.raises(ValueError, match=r"others\[0\] has 3 columns"):
        standardize(good, np.ones((1, 3)))
    with pytest.raises(ValueError, match="X_train must be 2-D"):
        standardize(np.ones(3))


def test_one_hot_unknown_is_zero():
    np.testing.assert_array_equal(one_hot(["b", None, "a"], ["a", "b"]), [[0, 1], [0, 0], [1, 0]])


def test_images_to_tensor():
    X = np.arange(2 * 2 * 3 * 3, dtype=np.uint8).reshape(2, 2, 3, 3)  # (N, H, W, C)
    t = images_to_tensor(X)
    assert t.shape == (2, 3, 2, 3) and t.dtype == torch.float32
    assert t[1, 2, 0, 1].item() == pytest.approx(X[1, 0, 1, 2] / 255)
    g = images_to_tensor(np.full((4, 5, 6), 255, np.uint8), mean=0.5, std=0.25)
    assert g.shape == (4, 1, 5, 6) and torch.allclose(g, torch.full_like(g, 2.0))
    n = images_to_tensor(X, mean=(0.0, 0.5, 1.0), std=(1.0, 1.0, 0.5))
    assert n[0, 2, 0, 0].item() == pytest.approx((X[0, 0, 0, 2] / 255 - 1.0) / 0.5)
    assert torch.equal(images_to_tensor(torch.from_numpy(X)), t)
    with pytest.raises(TypeError, match="uint8"):
        images_to_tensor(X.astype(np.float32))
    with pytest.raises(ValueError, match="1 or 3 values"):
        images_to_tensor(X, mean=(0.1, 0.2), std=1.0)
    with pytest.raises(ValueError, match="std must be positive"):
        images_to_tensor(X, mean=0.0, std=0.0)
