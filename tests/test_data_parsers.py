"""sslkit.data.parsers on synthetic files in each dataset's real layout, loaded through the registry: CIFAR-10/100
python pickles (CHW -> HWC, fine and coarse labels), SVHN's .mat (label 10 is digit 0), STL-10's column-major
binary, Covertype's gzipped CSV. Isolated lookup: tests/data_problem.py."""

import gzip
import io
import pickle
import tarfile

import data_problem
import numpy as np
from data_problem import SHARED, trust, write

from sslkit.data import registry
from sslkit.data.registry import load_dataset

env = data_problem.env  # the isolated lookup (a fixture)


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
