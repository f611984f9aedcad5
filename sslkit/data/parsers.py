"""One parser per dataset file layout.

Every parser takes ``paths`` (logical file key -> :class:`Blob`, a file's verified bytes and its path,
see ``registry.py``; a plain path is accepted too) plus the dataset's options and returns a
:class:`Parsed` tuple. Parsers never download and never check checksums: the registry reads each file
once, checks the sha256 of those bytes and hands the same bytes to the parser, so what is parsed is
exactly what was verified (a parser never reopens the file). Gzip is detected by its magic bytes, so a
file may be stored compressed or not under any of its accepted names.
"""

from __future__ import annotations

import gzip
import io
import json
import pickle
import tarfile
from pathlib import Path
from typing import NamedTuple

import numpy as np

from .tabular import one_hot


class Parsed(NamedTuple):
    X: np.ndarray
    y: np.ndarray
    X_test: np.ndarray | None
    y_test: np.ndarray | None
    classes: tuple[str, ...]
    notes: str = ""


DIGITS = tuple(str(d) for d in range(10))
CIFAR10_CLASSES = ("airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck")
STL10_CLASSES = ("airplane", "bird", "car", "cat", "deer", "dog", "horse", "monkey", "ship", "truck")
SHUTTLE_CLASSES = ("Rad Flow", "Fpv Close", "Fpv Open", "High", "Bypass", "Bpv Close", "Bpv Open")
COVERTYPE_CLASSES = (
    "Spruce/Fir",
    "Lodgepole Pine",
    "Ponderosa Pine",
    "Cottonwood/Willow",
    "Aspen",
    "Douglas-fir",
    "Krummholz",
)


class Blob(NamedTuple):
    """A file's bytes as read (and verified) once by the registry, with its path for messages and suffixes."""

    path: str
    data: bytes

    def __str__(self) -> str:
        return self.path


def raw_bytes(src) -> bytes:
    """The bytes of a :class:`Blob`, or of the file at a path (as stored, not gunzipped)."""
    return src.data if isinstance(src, Blob) else Path(src).read_bytes()


def _file(src) -> io.BytesIO:
    """A binary file object over the bytes of ``src`` (for tarfile, PIL, scipy, pandas)."""
    return io.BytesIO(raw_bytes(src))


def read_bytes(path) -> bytes:
    """The content of a :class:`Blob` or file, gunzipped when it starts with the gzip magic bytes."""
    data = raw_bytes(path)
    if data[:2] == b"\x1f\x8b":
        return gzip.decompress(data)
    if data[:2] == b"\x1f\x9d":
        raise ValueError(
            f"{path} is unix-compress (.Z) data, which Python cannot read; "
            f"decompress it first (`uncompress` or `gzip -d`)"
        )
    return data


def _text(path, encoding="utf-8") -> io.StringIO:
    return io.StringIO(read_bytes(path).decode(encoding))


# ----------------------------------------------------------------------------------------- images


def read_idx(path) -> np.ndarray:
    """An IDX file (MNIST): big-endian magic ``0x0000 08 nd``, then ``nd`` uint32 sizes, then uint8 data."""
    b = read_bytes(path)
    if len(b) < 4 or b[0] != 0 or b[1] != 0 or b[2] != 0x08:
        raise ValueError(f"{path} is not an uint8 IDX file (magic {b[:4].hex()})")
    nd = b[3]
    shape = tuple(int.from_bytes(b[4 + 4 * i : 8 + 4 * i], "big") for i in range(nd))
    expected = 4 + 4 * nd + int(np.prod(shape))
    if len(b) != expected:
        raise ValueError(f"{path}: IDX header says shape {shape} ({expected} bytes) but file has {len(b)} bytes")
    return np.frombuffer(b, np.uint8, offset=4 + 4 * nd).reshape(shape).copy()


def parse_mnist(paths, **_) -> Parsed:
    X, y = read_idx(paths["train_images"]), read_idx(paths["train_labels"])
    Xt, yt = read_idx(paths["test_images"]), read_idx(paths["test_labels"])
    return Parsed(X, y, Xt, yt, DIGITS)


def _unpickle(raw: bytes) -> dict:
    # Only called on archives whose sha256 was verified against the official checksum.
    return pickle.loads(raw, encoding="bytes")


def _chw_to_hwc(data) -> np.ndarray:
    return np.asarray(data, dtype=np.uint8).reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1).copy()


def parse_cifar10_python(paths, **_) -> Parsed:
    """The official ``cifar-10-python.tar.gz`` (pickled batches, rows = 3072 bytes CHW)."""
    batches = {}
    with tarfile.open(fileobj=_file(paths["archive"])) as tf:
        for m in tf.getmembers():
            name = m.name.rsplit("/", 1)[-1]
            if m.isfile() and (name.startswith("data_batch_") or name in ("test_batch", "batches.meta")):
                batches[name] = _unpickle(tf.extractfile(m).read())
    train = [batches[f"data_batch_{i}"] for i in range(1, 6)]
    X = np.concatenate([_chw_to_hwc(b[b"data"]) for b in train])
    y = np.concatenate([np.asarray(b[b"labels"]) for b in train])
    test = batches["test_batch"]
    classes = tuple(c.decode() for c in batches["batches.meta"][b"label_names"])
    return Parsed(
        X,
        y,
        _chw_to_hwc(test[b"data"]),
        np.asarray(test[b"labels"]),
        classes,
        "official CIFAR-10 python batches (lossless)",
    )


def parse_cifar100_python(paths, label_mode="fine", **_) -> Parsed:
    """The official ``cifar-100-python.tar.gz``; ``label_mode`` = ``"fine"`` (100) or ``"coarse"`` (20)."""
    parts = {}
    with tarfile.open(fileobj=_file(paths["archive"])) as tf:
        for m in tf.getmembers():
            name = m.name.rsplit("/", 1)[-1]
            if m.isfile() and name in ("train", "test", "meta"):
                parts[name] = _unpickle(tf.extractfile(m).read())
    key = label_mode.encode() + b"_labels"
    names = parts["meta"][label_mode.encode() + b"_label_names"]
    return Parsed(
        _chw_to_hwc(parts["train"][b"data"]),
        np.asarray(parts["train"][key]),
        _chw_to_hwc(parts["test"][b"data"]),
        np.asarray(parts["test"][key]),
        tuple(c.decode() for c in names),
        f"official CIFAR-100 python batches, {label_mode} labels",
    )


def _cifar_labels_js(path) -> np.ndarray:
    txt = read_bytes(path).decode("ascii")
    return np.asarray(json.loads(txt[txt.index("[") : txt.rindex("]") + 1]), dtype=np.int64)


def parse_cifar10_lossless(paths, **_) -> Parsed:
    """ConvNetJS sprites: each PNG is 1000 rows x 1024 RGB pixels, row k = one 32x32 image (row-major)."""
    from PIL import Image

    def sprite(key):
        with Image.open(_file(paths[key])) as im:
            return np.asarray(im.convert("RGB")).reshape(1000, 32, 32, 3)

    labels = _cifar_labels_js(paths["labels"])
    X = np.concatenate([sprite(f"batch_{i}") for i in range(4)])
    return Parsed(
        X,
        labels[:4000],
        sprite("batch_50"),
        labels[50000:51000],
        CIFAR10_CLASSES,
        "CIFAR-10 lossless SUBSET: train = original train indices 0..3999, "
        "test = original test indices 0..999 (exact pixels)",
    )


def parse_cifar10_jpeg(paths, **_) -> Parsed:
    """All 60000 CIFAR-10 images stored as JPEG q75 ``{train,test}/<class>/NNNN.jpg``.

    ``NNNN`` is the rank of the image within its class in the original order, so with the 50000 train labels
    (``cifar10_labels.js``) the train set is put back in the original CIFAR order. For test only the first 1000
    labels are known: those 1000 come first in the original order, the other 9000 follow by class, then rank.
    """
    from PIL import Image

    files = {}
    with tarfile.open(fileobj=_file(paths["archive"])) as tf:
        for m in tf:
            if m.isfile() and m.name.endswith(".jpg"):
                files[m.name.lstrip("./")] = tf.extractfile(m).read()

    def decode(name):
        with Image.open(io.BytesIO(files[name])) as im:
            return np.asarray(im if im.mode == "RGB" else im.convert("RGB"))

    labels = _cifar_labels_js(paths["labels"])

    def split(prefix, first_labels, total_per_class):
        names, ys = [], []
        used = np.zeros(10, dtype=np.int64)
        for c in first_labels:  # known original order
            names.append(f"{prefix}/{CIFAR10_CLASSES[c]}/{used[c]:04d}.jpg")
            ys.append(c)
            used[c] += 1
        for c in range(10):  # the rest, by class then within-class rank
            for r in range(used[c], total_per_class):
                names.append(f"{prefix}/{CIFAR10_CLASSES[c]}/{r:04d}.jpg")
                ys.append(c)
        missing = [n for n in names if n not in files]
        if missing:
            raise ValueError(f"{paths['archive']} lacks {len(missing)} expected images, e.g. {missing[0]}")
        X = np.empty((len(names), 32, 32, 3), dtype=np.uint8)
        for i, n in enumerate(names):
            X[i] = decode(n)
        return X, np.asarray(ys, dtype=np.int64)

    X, y = split("train", labels[:50000], 5000)
    Xt, yt = split("test", labels[50000:51000], 1000)
    return Parsed(
        X,
        y,
        Xt,
        yt,
        CIFAR10_CLASSES,
        "CIFAR-10 JPEG q75 (lossy) copy of all 60000 images (mean abs pixel error 5.8/255 vs the "
        "originals); train in original order; test: first 1000 in original order, the other 9000 "
        "by class then original within-class order. Results on it must say so.",
    )


def parse_svhn(paths, **_) -> Parsed:
    """SVHN cropped digits ``{train,test}_32x32.mat``: X (32, 32, 3, N), y (N, 1) with label 10 meaning digit 0."""
    from scipy.io import loadmat

    def part(key):
        m = loadmat(_file(paths[key]))
        X = np.ascontiguousarray(np.asarray(m["X"], dtype=np.uint8).transpose(3, 0, 1, 2))
        y = np.asarray(m["y"]).reshape(-1).astype(np.int64) % 10
        return X, y

    X, y = part("train")
    Xt, yt = part("test")
    return Parsed(X, y, Xt, yt, DIGITS, "SVHN cropped digits (train + test; 'extra' not included); label 10 -> 0")


def parse_stl10(paths, **_) -> Parsed:
    """``stl10_binary.tar.gz``: ``{train,test}_X.bin`` = N x 3 x 96 x 96 uint8 in column-major order, labels 1..10.

    Only the labelled train (5000) and test (8000) images are returned; the 100000 unlabelled images are
    not read.
    """
    want = {"train_X.bin", "train_y.bin", "test_X.bin", "test_y.bin", "class_names.txt"}
    parts = {}
    with tarfile.open(fileobj=_file(paths["archive"])) as tf:
        for m in tf:  # the archive (2.6 GB) is in memory: the verified bytes are the parsed bytes
            name = m.name.rsplit("/", 1)[-1]
            if m.isfile() and name in want:
                parts[name] = tf.extractfile(m).read()
            if len(parts) == len(want):
                break

    def images(raw):
        return np.frombuffer(raw, np.uint8).reshape(-1, 3, 96, 96).transpose(0, 3, 2, 1).copy()

    def labels(raw):
        return np.frombuffer(raw, np.uint8).astype(np.int64) - 1

    classes = STL10_CLASSES
    if "class_names.txt" in parts:
        classes = tuple(parts["class_names.txt"].decode().split())
    return Parsed(
        images(parts["train_X.bin"]),
        labels(parts["train_y.bin"]),
        images(parts["test_X.bin"]),
        labels(parts["test_y.bin"]),
        classes,
        "STL-10 labelled train (5000) and test (8000); the 100000 unlabelled images are not loaded",
    )


# ---------------------------------------------------------------------------------------- tabular


def parse_banknote(paths, **_) -> Parsed:
    a = np.loadtxt(_text(paths["table"]), delimiter=",", dtype=np.float64)
    return Parsed(
        a[:, :4],
        a[:, 4].astype(np.int64),
        None,
        None,
        ("class 0", "class 1"),
        "features: variance, skewness, curtosis, entropy of the wavelet-transformed image; "
        "UCI does not name the classes (0/1 as in the file)",
    )


def parse_breast_cancer_wdbc(paths, **_) -> Parsed:
    """WDBC: ID, diagnosis M/B, 30 features. Label convention = scikit-learn's: 0 = malignant, 1 = benign."""
    import pandas as pd

    df = pd.read_csv(_text(paths["table"]), header=None)
    diag = df[1].to_numpy()
    if not set(diag) <= {"M", "B"}:
        raise ValueError(f"{paths['table']}: diagnosis column must be 'M' or 'B', got {sorted(set(diag))}")
    return Parsed(
        df.iloc[:, 2:].to_numpy(np.float64),
        (diag == "B").astype(np.int64),
        None,
        None,
        BREAST_CANCER_CLASSES,
        BREAST_CANCER_NOTES,
    )


BREAST_CANCER_CLASSES = ("malignant", "benign")
BREAST_CANCER_NOTES = "label 0 = malignant, 1 = benign (scikit-learn's convention); 30 WDBC features"

ADULT_COLUMNS = [
    "age",
    "workclass",
    "fnlwgt",
    "education",
    "education-num",
    "marital-status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "capital-gain",
    "capital-loss",
    "hours-per-week",
    "native-country",
    "income",
]
ADULT_NUMERIC = ["age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week"]
ADULT_CATEGORICAL = [
    "workclass",
    "education",
    "marital-status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "native-country",
]


def parse_adult(paths, **_) -> Parsed:
    """Adult: 6 numeric columns then one-hot of the 8 categoricals (categories = those seen in adult.data).

    Missing values ('?', only in workclass, occupation, native-country) are kept as rows and encoded as an
    all-zero indicator group; label 1 = income >50K.
    """
    import pandas as pd

    def read(key, skip):
        df = pd.read_csv(
            _text(paths[key], "latin-1"),
            header=None,
            names=ADULT_COLUMNS,
            skipinitialspace=True,
            na_values="?",
            skiprows=skip,
        )
        df = df.dropna(subset=["income"])  # the trailing empty line of adult.test, if any
        return df, df["income"].str.rstrip(".")

    tr, ytr = read("train", 0)
    te, yte = read("test", 1)  # adult.test starts with "|1x3 Cross validator"
    cats = {c: sorted(tr[c].dropna().unique()) for c in ADULT_CATEGORICAL}

    def encode(df):
        blocks = [df[ADULT_NUMERIC].to_numpy(np.float64)]
        blocks += [one_hot(df[c].to_numpy(), cats[c]) for c in ADULT_CATEGORICAL]
        return np.hstack(blocks)

    for labels, key in ((ytr, "train"), (yte, "test")):
        if not set(labels) <= {"<=50K", ">50K"}:
            raise ValueError(f"adult {key}: unexpected income labels {sorted(set(labels))}")
    d = len(ADULT_NUMERIC) + sum(len(v) for v in cats.values())
    return Parsed(
        encode(tr),
        (ytr == ">50K").to_numpy(np.int64),
        encode(te),
        (yte == ">50K").to_numpy(np.int64),
        ("<=50K", ">50K"),
        f"{d} features: 6 numeric ({', '.join(ADULT_NUMERIC)}) + one-hot of 8 categoricals "
        f"(categories from the training file); missing '?' = all-zero indicator group, rows kept; "
        f"label 1 = income >50K",
    )


CREDIT_CATEGORICAL = ["SEX", "EDUCATION", "MARRIAGE"]


def parse_credit_default(paths, **_) -> Parsed:
    """Default of credit card clients: drop ID; one-hot SEX, EDUCATION, MARRIAGE (every code present, including
    the undocumented EDUCATION 0/5/6 and MARRIAGE 0); the other 20 columns numeric as given (PAY_* are
    ordinal repayment status); label 1 = default payment next month."""
    import pandas as pd

    path = paths["table"]
    if Path(str(path)).suffix == ".xls":  # the original UCI file (needs the optional xlrd package)
        df = pd.read_excel(_file(path), header=1)
    else:
        df = pd.read_csv(_text(path))
    target = "default payment next month"
    if target not in df.columns:
        raise ValueError(f"{path}: no column {target!r}; columns are {list(df.columns)}")
    y = df[target].to_numpy(np.int64)
    rest = df.drop(columns=["ID", target])
    numeric = [c for c in rest.columns if c not in CREDIT_CATEGORICAL]
    blocks = [rest[numeric].to_numpy(np.float64)]
    levels = []
    for c in CREDIT_CATEGORICAL:
        cats = sorted(int(v) for v in rest[c].unique())
        levels.append(f"{c} {cats}")
        blocks.append(one_hot(rest[c].to_numpy(), cats))
    X = np.hstack(blocks)
    return Parsed(
        X,
        y,
        None,
        None,
        ("no default", "default"),
        f"{X.shape[1]} features: {len(numeric)} numeric (LIMIT_BAL, AGE, PAY_*, BILL_AMT*, PAY_AMT*) + "
        f"one-hot {'; '.join(levels)}; ID dropped; label 1 = default payment next month",
    )


def parse_shuttle(paths, **_) -> Parsed:
    def part(key):
        a = np.loadtxt(_text(paths[key]), dtype=np.int64)
        return a[:, :9].astype(np.float64), a[:, 9] - 1

    X, y = part("train")
    Xt, yt = part("test")
    return Parsed(X, y, Xt, yt, SHUTTLE_CLASSES, "9 integer features; UCI classes 1..7 -> labels 0..6")


def parse_dry_bean(paths, **_) -> Parsed:
    """Dry Bean ARFF: 16 numeric shape features + nominal Class; labels follow the ARFF declaration order."""
    from scipy.io import arff

    data, meta = arff.loadarff(_text(paths["table"], "latin-1"))
    classes = tuple(meta["Class"][1])
    features = [n for n in meta.names() if n != "Class"]
    X = np.column_stack([data[n].astype(np.float64) for n in features])
    labels = np.char.decode(data["Class"].astype(bytes), "ascii")
    index = {c: i for i, c in enumerate(classes)}
    y = np.asarray([index[c] for c in labels], dtype=np.int64)
    return Parsed(X, y, None, None, classes, f"{len(features)} numeric features; classes in ARFF order")


def parse_covertype(paths, **_) -> Parsed:
    """``covtype.data(.gz)``: 54 integer columns (10 quantitative, 4 wilderness + 40 soil one-hots), class 1..7."""
    import pandas as pd

    a = pd.read_csv(_text(paths["table"]), header=None, dtype=np.int64).to_numpy()
    if a.shape[1] != 55:
        raise ValueError(f"{paths['table']}: expected 55 columns, got {a.shape[1]}")
    return Parsed(
        a[:, :54].astype(np.float64),
        a[:, 54] - 1,
        None,
        None,
        COVERTYPE_CLASSES,
        "54 features (10 quantitative + 4 wilderness + 40 soil-type indicators); classes 1..7 -> 0..6; "
        "no official test split",
    )
