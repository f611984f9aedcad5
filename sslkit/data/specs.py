"""Where each dataset comes from: its sources (file layouts and parsers), the sha256 values accepted for every
file and the canonical URLs it can be downloaded from (:data:`SPECS`); :mod:`.registry` looks them up, verifies
and loads them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from . import parsers as P
from .bundled import sklearn_breast_cancer, sklearn_digits


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

SPECS: dict[str, DatasetSpec] = {
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
            fallback=sklearn_breast_cancer,
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
            fallback=sklearn_digits,
            fallback_source="sklearn.datasets.load_digits",
        ),
    ]
}

#: every dataset the loaders know, in the order of :data:`SPECS` (images first, then tables)
DATASETS: tuple[str, ...] = tuple(SPECS)
