"""sslkit.data.registry: lookup order, checksums, downloads and the real shared data. The parsers on synthetic files:
test_data_parsers.py; Dataset, the image and tabular helpers, the specs: test_data_<module>.py.

Tests that need the project's real data skip unless ``SSLKIT_DATA_DIR`` points at it. Every other test
runs in an isolated environment: empty user cache in a tmp dir, no ``SSLKIT_DATA_DIR``, and a network
function that fails the test if it is called.
"""

import dataclasses
import gzip
import io
import logging
import os
import zipfile
from pathlib import Path

import data_problem
import numpy as np
import pytest
from data_problem import SHARED, needs_data, sha, trust, write

from sslkit.data import registry
from sslkit.data.registry import DATASETS, ChecksumError, DatasetNotFoundError, load_dataset

env = data_problem.env  # the isolated lookup (a fixture)


class FakeServer:
    """Stands in for ``registry._open_url``: serves fixed bytes per URL and counts requests."""

    def __init__(self, payloads):
        self.payloads, self.calls = payloads, []

    def __call__(self, url):
        self.calls.append(url)
        return io.BytesIO(self.payloads[url])


# ---------------------------------------------------------------------------------- names, options


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
