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
import os
import sys
import tarfile
import tempfile
import urllib.error
import urllib.request
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from . import parsers as P
from .dataset import Dataset


class DatasetNotFoundError(FileNotFoundError):
    """No verified copy of the dataset was found locally and it could not (or may not) be downloaded."""


class ChecksumError(ValueError):
    """A local or downloaded file does not match any accepted sha256; its data is never returned."""


@dataclass(frozen=True)
class Download:
    """A canonical URL; ``sha256`` = accepted digests of the file saved (after extracting ``member``)."""

    url: str
    save_as: str
    sha256: tuple[str, ...] = ()
    member: str | None = None  # basename of the file to extract from a zip/tar download


@dataclass(frozen=True)
class FileSpec:
    """One logical file: accepted names in the folder, accepted sha256 values, where to download it."""

    names: tuple[str, ...]
    sha256: tuple[str, ...] = ()
    downloads: tuple[Download, ...] = ()

    def accepted(self) -> frozenset[str]:
        return frozenset(self.sha256).union(*(d.sha256 for d in self.downloads))


@dataclass(frozen=True)
class Source:
    """A file layout of a dataset: ``files`` (key -> spec) under one of ``folders`` of a lookup dir."""

    key: str
    folders: tuple[str, ...]
    files: dict[str, FileSpec]
    parse: Callable[..., P.Parsed]

    def downloadable(self) -> bool:
        return all(f.downloads for f in self.files.values())


@dataclass(frozen=True)
class DatasetSpec:
    name: str
    sources: tuple[Source, ...]
    homepage: str
    options: dict[str, tuple] = field(default_factory=dict)  # option -> allowed values, first = default
    auto: tuple[str, ...] = ()  # source keys tried, in order, for variant="auto"
    fallback: Callable[[], P.Parsed] | None = None
    fallback_source: str = ""


# ------------------------------------------------------------------------------------- the specs

UCI = "https://archive.ics.uci.edu/ml/machine-learning-databases"
MNIST_MIRRORS = (
    "https://ossci-datasets.s3.amazonaws.com/mnist",
    "http://yann.lecun.com/exdb/mnist",
    "https://storage.googleapis.com/cvdf-datasets/mnist",
)


def _mnist_file(stem: str, gz_shared: str, raw: str, gz_official: str) -> FileSpec:
    # The shared copy is re-gzipped (different .gz bytes, bit-exact content): accept it, the official .gz,
    # and the uncompressed file (torchvision's MNIST/raw layout).
    return FileSpec(
        names=(stem + ".gz", stem),
        sha256=(gz_shared, raw),
        downloads=tuple(Download(f"{m}/{stem}.gz", stem + ".gz", (gz_official,)) for m in MNIST_MIRRORS),
    )


def _sklearn_breast_cancer() -> P.Parsed:
    from sklearn.datasets import load_breast_cancer

    b = load_breast_cancer()  # target: 0 = malignant, 1 = benign (same convention as the WDBC parser)
    return P.Parsed(
        np.asarray(b.data, np.float64),
        np.asarray(b.target, np.int64),
        None,
        None,
        P.BREAST_CANCER_CLASSES,
        P.BREAST_CANCER_NOTES,
    )


def _sklearn_digits() -> P.Parsed:
    from sklearn.datasets import load_digits

    d = load_digits()
    return P.Parsed(
        np.asarray(d.data, np.float64),
        np.asarray(d.target, np.int64),
        None,
        None,
        P.DIGITS,
        "scikit-learn's 8x8 digits (UCI optdigits test part): 64 pixel counts 0..16 as float64 "
        "features; no official test split",
    )


def _sklearn_version() -> str:
    import sklearn

    return sklearn.__version__


CIFAR10_LABELS = FileSpec(
    ("lossless/cifar10_labels.js",), ("f8e4cced3cb4ac08bc842380ad30f904622d1faea630a0c7e1a18bf29e39d845",)
)
CIFAR10_SPRITES = {
    0: "0614720d69293a033786d5fe2924c4e9a9b48874f19ca4627c4662a864ee9f2d",
    1: "2927e26ea68602e34a7424826b76b7336ce36b8f6bcc2e9fce0c05568ff6b4c1",
    2: "0b2759e307bb405bb1a6531f8a0f557eaec46d7546050612fdb836f0fa60eae0",
    3: "a4530ff15c83886058a97c352f53f38be07d191de8f410e998e91786b5900a26",
    50: "5cea9e8fb7933540a2236a4bb25c1ed3a8447f345c55ae659143a95a5d8dac5e",
}

_SPECS: dict[str, DatasetSpec] = {
    s.name: s
    for s in [
        DatasetSpec(
            "mnist",
            homepage="http://yann.lecun.com/exdb/mnist/",
            sources=(
                Source(
                    "idx",
                    ("mnist", "MNIST/raw"),
                    {
                        "train_images": _mnist_file(
                            "train-images-idx3-ubyte",
                            "0b367032e93c5d0cea0925647cfdb18614af8ee15f83e6f2fc2ad904a6835971",
                            "ba891046e6505d7aadcbbe25680a0738ad16aec93bde7f9b65e87a2fc25776db",
                            "440fcabf73cc546fa21475e81ea370265605f56be210a4024d2ca8f203523609",
                        ),
                        "train_labels": _mnist_file(
                            "train-labels-idx1-ubyte",
                            "1787548bbe0bff1ec2ecdc0ef292b02df999e2d1a6002d27500982c652b17203",
                            "65a50cbbf4e906d70832878ad85ccda5333a97f0f4c3dd2ef09a8a9eef7101c5",
                            "3552534a0a558bbed6aed32b30c495cca23d567ec52cac8be1a0730e8010255c",
                        ),
                        "test_images": _mnist_file(
                            "t10k-images-idx3-ubyte",
                            "1a1a05eab793c14bb050b398624a11b0ffd1a2953baed553b1b9bd079e2a20be",
                            "0fa7898d509279e482958e8ce81c8e77db3f2f8254e26661ceb7762c4d494ce7",
                            "8d422c7b0a1c1c79245a5bcf07fe86e33eeafee792b84584aec276f5a2dbc4e6",
                        ),
                        "test_labels": _mnist_file(
                            "t10k-labels-idx1-ubyte",
                            "b91679a0acfe4ba0e50a2437a903084cba1f5f92592b016a25a7dfd00455798b",
                            "ff7bcfd416de33731a308c3f266cc351222c34898ecbeaf847f06e48f7ec33f2",
                            "f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6",
                        ),
                    },
                    P.parse_mnist,
                ),
            ),
        ),
        DatasetSpec(
            "cifar10",
            homepage="https://www.cs.toronto.edu/~kriz/cifar.html",
            options={"variant": ("auto", "python", "jpeg", "lossless")},
            auto=("python", "jpeg"),
            sources=(
                Source(
                    "python",
                    ("cifar10",),
                    {
                        "archive": FileSpec(
                            ("cifar-10-python.tar.gz",),
                            downloads=(
                                Download(
                                    "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz",
                                    "cifar-10-python.tar.gz",
                                    ("6d958be074577803d12ecdefd02955f39262c83c16fe9348329d7fe0b5c001ce",),
                                ),
                            ),
                        )
                    },
                    P.parse_cifar10_python,
                ),
                Source(
                    "jpeg",
                    ("cifar10",),
                    {
                        "archive": FileSpec(
                            ("jpeg/cifar10_jpeg.tar.gz",),
                            ("1f7bbb2957e605778d10e4af799306b5ca3036818b3d6e7dcc2cbbe83c912b11",),
                        ),
                        "labels": CIFAR10_LABELS,
                    },
                    P.parse_cifar10_jpeg,
                ),
                Source(
                    "lossless",
                    ("cifar10",),
                    {
                        **{
                            f"batch_{i}": FileSpec((f"lossless/cifar10_batch_{i}.png",), (h,))
                            for i, h in CIFAR10_SPRITES.items()
                        },
                        "labels": CIFAR10_LABELS,
                    },
                    P.parse_cifar10_lossless,
                ),
            ),
        ),
        DatasetSpec(
            "cifar100",
            homepage="https://www.cs.toronto.edu/~kriz/cifar.html",
            options={"label_mode": ("fine", "coarse")},
            sources=(
                Source(
                    "python",
                    ("cifar100",),
                    {
                        "archive": FileSpec(
                            ("cifar-100-python.tar.gz",),
                            downloads=(
                                Download(
                                    "https://www.cs.toronto.edu/~kriz/cifar-100-python.tar.gz",
                                    "cifar-100-python.tar.gz",
                                    ("85cd44d02ba6437773c5bbd22e183051d648de2e7d6b014e1ef29b855ba677a7",),
                                ),
                            ),
                        )
                    },
                    P.parse_cifar100_python,
                ),
            ),
        ),
        DatasetSpec(
            "svhn",
            homepage="http://ufldl.stanford.edu/housenumbers/",
            sources=(
                Source(
                    "mat",
                    ("svhn",),
                    {
                        "train": FileSpec(
                            ("train_32x32.mat",),
                            downloads=(
                                Download(
                                    "http://ufldl.stanford.edu/housenumbers/train_32x32.mat",
                                    "train_32x32.mat",
                                    ("435e94d69a87fde4fd4d7f3dd208dfc32cb6ae8af2240d066de1df7508d083b8",),
                                ),
                            ),
                        ),
                        "test": FileSpec(
                            ("test_32x32.mat",),
                            downloads=(
                                Download(
                                    "http://ufldl.stanford.edu/housenumbers/test_32x32.mat",
                                    "test_32x32.mat",
                                    ("cdce80dfb2a2c4c6160906d0bd7c68ec5a99d7ca4831afa54f09182025b6a75b",),
                                ),
                            ),
                        ),
                    },
                    P.parse_svhn,
                ),
            ),
        ),
        DatasetSpec(
            "stl10",
            homepage="https://cs.stanford.edu/~acoates/stl10/",
            sources=(
                Source(
                    "binary",
                    ("stl10",),
                    {
                        "archive": FileSpec(
                            ("stl10_binary.tar.gz",),
                            downloads=(
                                Download(
                                    "http://ai.stanford.edu/~acoates/stl10/stl10_binary.tar.gz",
                                    "stl10_binary.tar.gz",
                                    ("f31fd99273a1acb8609c8db427cebb1de3f71de77758cdc0e22956e1289b9866",),
                                ),
                            ),
                        )
                    },
                    P.parse_stl10,
                ),
            ),
        ),
        DatasetSpec(
            "adult",
            homepage="https://archive.ics.uci.edu/dataset/2/adult",
            sources=(
                Source(
                    "uci",
                    ("adult",),
                    {
                        "train": FileSpec(
                            ("adult.data.gz", "adult.data"),
                            ("c7a2b4716a97f930123e0baf879188d701e798172631a654fc703d4b082907f3",),
                            (
                                Download(
                                    f"{UCI}/adult/adult.data",
                                    "adult.data",
                                    ("5b00264637dbfec36bdeaab5676b0b309ff9eb788d63554ca0a249491c86603d",),
                                ),
                            ),
                        ),
                        "test": FileSpec(
                            ("adult.test.gz", "adult.test"),
                            ("8a2c1bffa6e7ce5abfa43881ae5e87c4311ebc2b3cd526c9c40a43f19f06f799",),
                            (
                                Download(
                                    f"{UCI}/adult/adult.test",
                                    "adult.test",
                                    ("a2a9044bc167a35b2361efbabec64e89d69ce82d9790d2980119aac5fd7e9c05",),
                                ),
                            ),
                        ),
                    },
                    P.parse_adult,
                ),
            ),
        ),
        DatasetSpec(
            "banknote",
            homepage="https://archive.ics.uci.edu/dataset/267/banknote+authentication",
            sources=(
                Source(
                    "uci",
                    ("banknote",),
                    {
                        "table": FileSpec(
                            ("data_banknote_authentication.txt.gz", "data_banknote_authentication.txt"),
                            ("b81f1e54fc6f864cee13f404f95aa58f7d4d552dce7a5109429b5b533c7b110d",),
                            (
                                Download(
                                    f"{UCI}/00267/data_banknote_authentication.txt",
                                    "data_banknote_authentication.txt",
                                    ("d0539aaed2139ba7a587b3e34fb345ce503ff7d5d33dbf9912d8e195ce425cb9",),
                                ),
                            ),
                        )
                    },
                    P.parse_banknote,
                ),
            ),
        ),
        DatasetSpec(
            "breast_cancer",
            homepage="https://archive.ics.uci.edu/dataset/17/breast+cancer+wisconsin+diagnostic",
            fallback=_sklearn_breast_cancer,
            fallback_source="sklearn.datasets.load_breast_cancer",
            sources=(
                Source(
                    "uci",
                    ("breast_cancer_wdbc", "breast_cancer"),
                    {
                        "table": FileSpec(
                            ("wdbc.data.gz", "wdbc.data"),
                            ("2c5ba985a0a4a45dd98834594720ece1362c436c78f1fa57b23a5499db66a420",),
                            (
                                Download(
                                    f"{UCI}/breast-cancer-wisconsin/wdbc.data",
                                    "wdbc.data",
                                    ("d606af411f3e5be8a317a5a8b652b425aaf0ff38ca683d5327ffff94c3695f4a",),
                                ),
                            ),
                        )
                    },
                    P.parse_breast_cancer_wdbc,
                ),
            ),
        ),
        DatasetSpec(
            "credit_default",
            homepage="https://archive.ics.uci.edu/dataset/350/default+of+credit+card+clients",
            sources=(
                Source(
                    "csv",
                    ("credit_default",),
                    {
                        "table": FileSpec(
                            ("default_of_credit_card_clients.csv.gz", "default_of_credit_card_clients.csv"),
                            (
                                "ed85506229a0669f3a34480c4510695d13adef86122feacb17970cbcd2b99f9f",
                                "4edce6da569b2c30788a85fd98a9bafb1a983e8ca1a7aac875dd7ff853cbd0bb",
                            ),
                            # The official file is an .xls whose sha256 is not known here: no trusted checksum ->
                            # refused.
                            (
                                Download(
                                    f"{UCI}/00350/default%20of%20credit%20card%20clients.xls",
                                    "default of credit card clients.xls",
                                ),
                            ),
                        )
                    },
                    P.parse_credit_default,
                ),
            ),
        ),
        DatasetSpec(
            "covertype",
            homepage="https://archive.ics.uci.edu/dataset/31/covertype",
            sources=(
                Source(
                    "uci",
                    ("covertype",),
                    {
                        "table": FileSpec(
                            ("covtype.data.gz", "covtype.data"),
                            downloads=tuple(
                                # sha256 as pinned by scikit-learn's fetch_covtype for its mirror of the UCI
                                # covtype.data.gz
                                Download(
                                    u,
                                    "covtype.data.gz",
                                    ("614360d0257557dd1792834a85a1cdebfadc3c4f30b011d56afee7ffb5b15771",),
                                )
                                for u in (
                                    "https://ndownloader.figshare.com/files/5976039",
                                    f"{UCI}/covtype/covtype.data.gz",
                                )
                            ),
                        )
                    },
                    P.parse_covertype,
                ),
            ),
        ),
        DatasetSpec(
            "shuttle",
            homepage="https://archive.ics.uci.edu/dataset/148/statlog+shuttle",
            sources=(
                Source(
                    "uci",
                    ("shuttle",),
                    {
                        # Official files: shuttle.trn.Z (unix compress) and shuttle.tst; their sha256 are not known
                        # here, so
                        # downloads are refused; the accepted local copies are the verified regenerated text files.
                        "train": FileSpec(
                            ("shuttle.trn.gz", "shuttle.trn"),
                            (
                                "ff3778467b03397df8bfe6a61bb7ad24e658f3a0e45cd406d9b28aac36fb6509",
                                "87b24ee9fb5137e1d417659cf905d84d0e15342bbaa60770f1ae83da1a38200a",
                            ),
                            (Download(f"{UCI}/statlog/shuttle/shuttle.trn.Z", "shuttle.trn.Z"),),
                        ),
                        "test": FileSpec(
                            ("shuttle.tst.gz", "shuttle.tst"),
                            (
                                "dbc31bf45cd6252d8ed9e65dcdd7eb48d3eb20181fcdc37e32829ccab7c0b0e7",
                                "f776934a628d9b94c482cb058a76ddaa63823e0f74aec065813c9dff3b89d661",
                            ),
                            (Download(f"{UCI}/statlog/shuttle/shuttle.tst", "shuttle.tst"),),
                        ),
                    },
                    P.parse_shuttle,
                ),
            ),
        ),
        DatasetSpec(
            "dry_bean",
            homepage="https://archive.ics.uci.edu/dataset/602/dry+bean+dataset",
            sources=(
                Source(
                    "uci",
                    ("dry_bean",),
                    {
                        "table": FileSpec(
                            ("Dry_Bean_Dataset.arff.gz", "Dry_Bean_Dataset.arff"),
                            ("eb9fbf6ae13509739546ea213caf0deec51c1520922f01930cd550a93cbb742e",),
                            # The zip's own checksum is not known; the extracted ARFF is verified against the UCI
                            # ARFF's sha256.
                            tuple(
                                Download(
                                    u,
                                    "Dry_Bean_Dataset.arff",
                                    ("b2a4a76a2aedfb8ed415adfc1bfc70b5f202cb00cb72e500766e364c14834014",),
                                    member="Dry_Bean_Dataset.arff",
                                )
                                for u in (
                                    f"{UCI}/00602/DryBeanDataset.zip",
                                    "https://archive.ics.uci.edu/static/public/602/dry+bean+dataset.zip",
                                )
                            ),
                        )
                    },
                    P.parse_dry_bean,
                ),
            ),
        ),
        DatasetSpec(
            "digits",
            homepage="https://archive.ics.uci.edu/dataset/80/optical+recognition+of+handwritten+digits",
            sources=(),
            fallback=_sklearn_digits,
            fallback_source="sklearn.datasets.load_digits",
        ),
    ]
}

DATASETS: tuple[str, ...] = (
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
assert set(DATASETS) == set(_SPECS)


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
    if not isinstance(name, str) or name not in _SPECS:
        raise ValueError(f"unknown dataset {name!r}; valid names: {', '.join(DATASETS)}")
    spec = _SPECS[name]
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
        return _build(spec, spec.fallback(), f"scikit-learn {_sklearn_version()} bundled copy ({spec.fallback_source})")

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
        # (["breast_cancer"], "The quick scale could not run on mnist: its data is not on this machine ...")
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
    print(f"sslkit: downloading {d.url} into the sslkit data cache", file=sys.stderr)  # the path is in .source
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
