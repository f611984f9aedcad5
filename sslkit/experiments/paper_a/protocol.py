"""Paper A, §6.2 (Tables 1 and 2): the semi-supervised comparison, one run at a time.

* :func:`build_task` -- the data of one run (labeled / unlabeled / validation / test sets, prior θ, model);
* :data:`METHODS` -- the tables' method names -> algorithm factories from :mod:`sslkit.algorithms`;
* :data:`PAPER_TABLE1`, :data:`PAPER_TABLE2` -- the paper's numbers, ``{(dataset, setting): {method: (mean, std)}}``
  (:mod:`sslkit.experiments.paper_numbers`);
* one run (:func:`.runs.run_one`), its variants, the grids and the hyper-parameter choice of PL / VAT:
  :mod:`.runs`.

Data protocol (paper A §6.2 and App. C; where the paper is silent the choice is stated here and in the
notebooks ``a_table1`` / ``a_table2``):

* **Test set.** The official test split when the source has one (Adult, Shuttle, MNIST, CIFAR-10);
  otherwise a seeded, stratified 30 % hold-out of the data (Banknote, Breast Cancer, Credit Default,
  Dry Bean), drawn anew for every seed.
* **Validation set.** ``n_val`` rows (60; 200 for multiclass MNIST) drawn uniformly at random from the
  training pool, independently of the labels (App. C: "independently sampled from the original dataset").
* **Labeled set.** Exact per-class counts ``(n_1, n_2)`` (binary; class 1 = label 0) or the App. C regime
  counts (multiclass), drawn from the pool minus validation. Where a class has fewer rows than the regime
  asks for (Shuttle: classes 'Fpv Close', 'Bpv Close', 'Bpv Open' have 37, 6 and 11 training rows), that
  class gives half of what it has left, so the unlabeled pool keeps some of it; the run records the
  counts actually used (``n_labeled``).
* **Unlabeled set.** ``n_U`` rows (300 binary tabular, 5000 image and multiclass) drawn uniformly at
  random from the training pool minus validation and test, *independently of the labeled set*: U is a
  sample from the marginal p(x), as the risk-rewrite theory treats it (§3, eq. 2), and it may share rows
  with the labeled set. This is needed for Breast Cancer, whose pool (398 rows after the 30 % test split,
  338 after validation) cannot hold 200 labeled + 300 disjoint unlabeled rows; the same rule is used for
  every dataset, where overlaps are rare.
* **Features.** Tabular: z-scores with the mean / std of the training pool (every row not in validation or
  test). Images: ``[0, 1]`` pixels normalised per channel with the pool's mean / std.
* **Prior θ.** Class proportions of the full training data (the paper assumes known priors).

Class order of the binary tasks: label 0 is the paper's class 1 (``n_1``), the positive class of each
tabular source (:data:`POSITIVE_CLASS`): Adult '>50K', Banknote the file's class 1, Breast Cancer
'malignant', Credit 'default'; MNIST digit 4, CIFAR-10 'cat' (the paper does not say which class it calls
class 1).
"""

from __future__ import annotations

import dataclasses
import functools
import re

import numpy as np
import torch

import sslkit.task
from sslkit._checks import check_count, check_seed
from sslkit.experiments.paper_numbers import load as load_paper_numbers
from sslkit.experiments.paper_numbers import mean_std

#: Protocol version of the records that this module's run functions make: notebooks and drivers pass it as
#: ``run_grid(..., version=PROTOCOL_VERSION)`` and each record stores it (``protocol_version``; records without
#: it are version 1). Bump it with a change that alters those runs' results: the runner then refuses to reuse
#: the older records silently (:class:`sslkit.experiments.runs.store.StaleResultsError`).
PROTOCOL_VERSION = 1

# ------------------------------------------------------------------------------------------------------
# datasets and settings
# ------------------------------------------------------------------------------------------------------

#: Table 1 (binary) and Table 2 (multiclass) datasets, in the paper's row order.
TABLE1_DATASETS = ("adult", "banknote", "breast_cancer", "credit_default", "mnist_4v9", "cifar_cvd")
TABLE2_DATASETS = ("covertype", "shuttle", "dry_bean", "mnist")
#: Not rows of Tables 1-2: scikit-learn's 8x8 digits (10 classes, 1797 rows, as 64 tabular features), the
#: multiclass stand-in that runs with no data files (quick scale of a_table2), and CIFAR-10 with its 10 classes
#: (App. D.4, Tables 8-10). MNIST's regimes, validation size and n_U apply to both.
EXTRA_DATASETS = ("digits", "cifar10")
TABULAR = ("adult", "banknote", "breast_cancer", "credit_default", "covertype", "shuttle", "dry_bean", "digits")
IMAGE = ("mnist_4v9", "cifar_cvd", "mnist", "cifar10")
#: Multiclass datasets with 10 classes (MNIST's regimes: Table 2's MNIST rows); the others have 7.
TEN_CLASS = ("mnist", "digits", "cifar10")

#: Binary settings ``(n_1, n_2)`` of Table 1, as the table writes them.
TABLE1_SETTINGS = ("(15,45)", "(30,30)", "(50,150)", "(100,100)")
#: Multiclass regimes of Table 2 (7 classes; MNIST uses its own totals, see :data:`TABLE2_SETTINGS_MNIST`).
TABLE2_SETTINGS = ("Bal. (70)", "Bal. (140)", "Bal. (350)", "Mild (140)", "Mild (350)", "Sev. (140)", "Sev. (350)")
TABLE2_SETTINGS_MNIST = (
    "Bal. (200)",
    "Bal. (500)",
    "Bal. (1500)",
    "Mild (500)",
    "Mild (1500)",
    "Sev. (500)",
    "Sev. (1500)",
)

TABLE1_METHODS = ("Sup.", "PNU", "Ours (Iter)", "PL", "VAT")
TABLE2_METHODS = ("Sup.", "Ours (Iter)", "Ours (EC)", "PL", "VAT")

_REGIME_NAMES = {"Bal.": "balanced", "Mild": "mild", "Sev.": "severe"}
_TEST_FRACTION = 0.3

#: Hyper-parameter grids (App. C). PL on binary tabular: the paper gives no set; we use the tabular
#: multiclass set {0.8, 0.9, 0.95}.
PL_THRESHOLDS = {"tabular": (0.8, 0.9, 0.95), "image": (0.9, 0.95, 0.99)}
VAT_EPS = {"tabular": (0.2, 0.5, 1.0, 2.0), "image": (0.5, 1.0, 2.0, 4.0)}

#: Training protocol of App. C, and the shortened one of ``scale="quick"``.
PROTOCOL = {
    "paper": dict(
        epochs=200,
        patience=20,
        min_delta=1e-4,
        warmup_epochs=20,
        lr=1e-3,
        weight_decay=1e-4,
        batch_size=64,
        unlabeled_batch_size=256,
        n_unlabeled_image=5000,
        n_unlabeled_multiclass=5000,
    ),
    "quick": dict(
        epochs=30,
        patience=8,
        min_delta=1e-4,
        warmup_epochs=5,
        lr=1e-3,
        weight_decay=1e-4,
        batch_size=64,
        unlabeled_batch_size=256,
        n_unlabeled_image=1000,
        n_unlabeled_multiclass=1000,
    ),
}


def supervised_config():
    """App. C's protocol for a supervised network (the supervised-baseline page, App. B's held-out losses) as a
    :class:`sslkit.engine.TrainConfig`: Adam (lr 1e-3, weight decay 1e-4), batches of 64, at most 200 epochs,
    early stopping on validation accuracy with patience 20 and min-delta 1e-4."""
    from sslkit.engine import EarlyStopping, TrainConfig

    return TrainConfig(
        optimizer="adam",
        lr=1e-3,
        weight_decay=1e-4,
        epochs=200,
        batch_size=64,
        early_stopping=EarlyStopping(patience=20, min_delta=1e-4),
    )


def settings_of(dataset: str) -> tuple:
    """The paper's settings (table rows) of a dataset."""
    _check_dataset(dataset)
    if dataset in TABLE1_DATASETS:
        return TABLE1_SETTINGS
    return TABLE2_SETTINGS_MNIST if dataset in TEN_CLASS else TABLE2_SETTINGS


def methods_of(dataset: str) -> tuple:
    """The methods (table columns) the paper reports for a dataset."""
    _check_dataset(dataset)
    return TABLE1_METHODS if dataset in TABLE1_DATASETS else TABLE2_METHODS


def hyper_grid(dataset: str, method: str) -> tuple:
    """Values of the method's tuned hyper-parameter (PL threshold, VAT ε), or ``(None,)``."""
    kind = "image" if dataset in IMAGE else "tabular"
    if method == "PL":
        return PL_THRESHOLDS[kind]
    if method == "VAT":
        return VAT_EPS[kind]
    return (None,)


def _check_dataset(dataset) -> None:
    names = TABLE1_DATASETS + TABLE2_DATASETS + EXTRA_DATASETS
    if dataset not in names:
        raise ValueError(f"dataset must be one of {names}, got {dataset!r}")


def labeled_counts(dataset: str, setting) -> list:
    """Per-class labeled counts asked for by a setting: ``"(15,45)"`` or ``(15, 45)`` -> ``[15, 45]``;
    ``"Sev. (140)"`` -> App. C's severe regime with total 140 (7 classes; 10 for ``mnist``)."""
    _check_dataset(dataset)
    from sslkit.data import paper_a_regime

    if dataset in TABLE1_DATASETS:
        if isinstance(setting, (tuple, list)) and len(setting) == 2:
            return [check_count(setting[0], "setting[0]"), check_count(setting[1], "setting[1]")]
        m = re.fullmatch(r"\(\s*(\d+)\s*,\s*(\d+)\s*\)", str(setting))
        if not m:
            raise ValueError(f"setting of binary dataset {dataset!r} must look like '(15,45)', got {setting!r}")
        return [int(m.group(1)), int(m.group(2))]
    m = re.fullmatch(r"(Bal\.|Mild|Sev\.)\s*\(\s*(\d+)\s*\)", str(setting))
    if not m:
        raise ValueError(
            f"setting of multiclass dataset {dataset!r} must look like 'Bal. (70)', 'Mild (140)' or "
            f"'Sev. (350)', got {setting!r}"
        )
    k = 10 if dataset in TEN_CLASS else 7
    return paper_a_regime(k, _REGIME_NAMES[m.group(1)], int(m.group(2)))


#: Datasets whose source files label the classes with strings. A label encoder (``np.unique``, scikit-learn's
#: ``LabelEncoder``) numbers such labels alphabetically; see :func:`regime_class_order`.
STRING_LABEL_DATASETS = ("dry_bean",)


def regime_class_order(dataset: str, classes) -> list:
    """Our class indices in the order paper A's regime vectors list the classes (App. C: "class 1" first).

    The paper does not say which class gets which count of an imbalanced regime (``[57, 34, ..., 3]``), nor
    which skewed prior weight (App. B). We take the order a label encoder gives the source's labels: numeric
    labels (Shuttle's 1..7, Covertype's 1..7, MNIST's digits) keep their order, which is our class order;
    string labels (Dry Bean) sort alphabetically: BARBUNYA, BOMBAY, CALI, DERMASON, HOROZ, SEKER, SIRA.
    :func:`run_order_variant` compares this with two other readings (notebook a_table2).
    """
    classes = [str(c) for c in classes]
    if dataset in STRING_LABEL_DATASETS:
        return sorted(range(len(classes)), key=lambda c: classes[c])
    return list(range(len(classes)))


def to_class_order(dataset: str, classes, values) -> list:
    """Per-class ``values`` listed in the paper's order (a regime's counts, App. B's skewed prior) placed at
    our class indices: ``out[regime_class_order(dataset, classes)[r]] = values[r]``."""
    order = regime_class_order(dataset, classes)
    if len(values) != len(order):
        raise ValueError(f"{len(values)} values for the {len(order)} classes of {dataset}")
    return placed(values, order)


def placed(values, order) -> list:
    """``out[order[r]] = values[r]``: per-class values listed in rank order, placed at class indices."""
    out = [None] * len(values)
    for rank, c in enumerate(order):
        out[c] = values[rank]
    return out


# ------------------------------------------------------------------------------------------------------
# build_task
# ------------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, kw_only=True)
class Task(sslkit.task.Task):
    """The data of one run of paper A §6.2: a :class:`sslkit.task.Task` (trained by :func:`sslkit.engine.fit`) with
    the prior and provenance the tables' methods and records read.

    ``X_*`` are float32 tensors (tabular ``(N, d)``, images ``(N, C, H, W)``), ``y_*`` int64 tensors.
    ``prior`` is θ (numpy, sums to 1); ``labeled_counts`` the per-class counts actually drawn;
    ``indices`` the rows used (``labeled``, ``unlabeled``, ``val`` index the training data of the source,
    ``test`` the official test split when ``official_test`` else the training data too); ``make_model()`` builds
    a fresh model of App. C (MLP with the paper's widths, or the LeNet-like CNN).
    """

    dataset: str
    prior: np.ndarray
    input_shape: tuple
    labeled_counts: list
    official_test: bool
    indices: dict


@functools.lru_cache(maxsize=8)
def source_dataset(dataset: str, data_root=None):
    """The loaded (binary-restricted) :class:`~sslkit.data.Dataset` of a table dataset (cached)."""
    from sslkit.data import binary_task, load_dataset

    if dataset == "mnist_4v9":
        return binary_task(load_dataset("mnist", root=data_root), 4, 9)
    if dataset == "cifar_cvd":
        return binary_task(load_dataset("cifar10", root=data_root), "cat", "dog")
    if dataset in POSITIVE_CLASS:  # paper A's "class 1" (n_1, θ_1) = the positive class of the source
        ds = load_dataset(dataset, root=data_root)
        pos = POSITIVE_CLASS[dataset]
        return binary_task(ds, pos, 1 - pos)
    return load_dataset(dataset, root=data_root)


#: Binary tabular datasets: the source label of paper A's "class 1" (n_1 labeled samples, prior θ_1), which
#: becomes label 0 here. The paper does not say; the positive class of each UCI task (>50K income, default,
#: forged note, malignant) -- the minority class in all four -- is what reproduces Table 3's imbalanced
#: FixMatch rows (Adult Imb. (60), 30 seeds: 79.3 with this order vs 55.5 with the majority class first; paper
#: 79.0 -- the class-order probe of notebooks/a_fixmatch, records in notebooks/results/a_fixmatch/paper.jsonl).
POSITIVE_CLASS = {"adult": 1, "credit_default": 1, "banknote": 1, "breast_cancer": 0}


def _stratified_holdout(y: np.ndarray, fraction: float, seed: int) -> np.ndarray:
    """Seeded stratified hold-out: round(fraction * n_c) rows of every class c (sorted indices)."""
    rng = np.random.default_rng([seed, 30])
    out = []
    for c in np.unique(y):
        rows = np.flatnonzero(y == c)
        out.append(rng.choice(rows, size=int(round(fraction * rows.size)), replace=False))
    return np.sort(np.concatenate(out)).astype(np.int64)


def build_task(dataset: str, labeled_per_class, seed: int, *, n_unlabeled: int, n_val: int, data_root=None) -> Task:
    """Draw the data of one run (paper A §6.2, App. C); see the module docstring for every choice.

    Parameters
    ----------
    dataset : one of :data:`TABLE1_DATASETS` + :data:`TABLE2_DATASETS`.
    labeled_per_class : sequence of int (one count per class, class 0 first), or a setting string
        such as ``"(15,45)"`` / ``"Sev. (140)"`` (see :func:`labeled_counts`; a multiclass regime's counts
        are placed on the classes in :func:`regime_class_order`).
    seed : int -- every draw (hold-out test set, validation, labeled, unlabeled) follows from it.
    n_unlabeled, n_val : sizes of the unlabeled and validation sets.
    data_root : folder with the datasets (default: ``$SSLKIT_DATA_DIR`` / cache, see ``load_dataset``).

    Raises ``DatasetNotFoundError`` when the data cannot be found, ``ValueError`` for an unknown dataset,
    a bad count or an unlabeled set larger than the pool.
    """
    _check_dataset(dataset)
    seed = check_seed(seed)
    n_unlabeled = check_count(n_unlabeled, "n_unlabeled")
    n_val = check_count(n_val, "n_val")
    from sslkit.data import image_stats, images_to_tensor, make_split, standardize
    from sslkit.models import MLP, PAPER_A_MLP_HIDDEN, LeNetCIFAR, LeNetMNIST

    ds = source_dataset(dataset, data_root)
    k = ds.num_classes
    if isinstance(labeled_per_class, str):
        counts = labeled_counts(dataset, labeled_per_class)
        if dataset in TABLE2_DATASETS and len(counts) == k:  # the regime's "class 1" -> our class index
            counts = to_class_order(dataset, ds.classes, counts)
    else:
        counts = [check_count(c, "labeled_per_class[]") for c in labeled_per_class]
    if len(counts) != k:
        raise ValueError(f"labeled_per_class has {len(counts)} counts but {dataset} has {k} classes")
    y_all = np.asarray(ds.y, dtype=np.int64)
    prior = np.bincount(y_all, minlength=k) / y_all.size

    official = ds.X_test is not None
    test_rows = np.zeros(0, np.int64) if official else _stratified_holdout(y_all, _TEST_FRACTION, seed)
    pool = np.setdiff1d(np.arange(y_all.size), test_rows)
    y_pool = y_all[pool]
    rng = np.random.default_rng([seed, 1])
    val = np.sort(rng.choice(pool.size, size=n_val, replace=False)) if n_val <= pool.size else None
    if val is None:
        raise ValueError(f"n_val={n_val} is larger than the training pool of {dataset} ({pool.size} rows)")
    rest = np.setdiff1d(np.arange(pool.size), val)
    have = np.bincount(y_pool[rest], minlength=k)
    # a class with fewer rows than asked (Shuttle) gives half of what it has: the rest stays for U
    used = [c if c <= h else max(1, int(h) // 2) for c, h in zip(counts, have)]
    # labeled: exact per-class counts from the pool minus validation (make_split on the remaining rows)
    lab_split = make_split(y_pool[rest], used, seed=int(np.random.default_rng([seed, 2]).integers(2**31)))
    labeled = rest[lab_split.labeled]
    if n_unlabeled > rest.size:
        raise ValueError(
            f"n_unlabeled={n_unlabeled} is larger than the unlabeled pool of {dataset} "
            f"({rest.size} rows after the validation and test sets)"
        )
    unlabeled = np.sort(np.random.default_rng([seed, 3]).choice(rest, size=n_unlabeled, replace=False))
    idx = {"labeled": pool[labeled], "unlabeled": pool[unlabeled], "val": pool[val], "test": test_rows}

    X = ds.X
    X_test_src, y_test = (ds.X_test, np.asarray(ds.y_test, np.int64)) if official else (X[test_rows], y_all[test_rows])
    if dataset in TABULAR:
        _, Xl, Xu, Xv, Xt = standardize(
            X[pool[rest]], X[idx["labeled"]], X[idx["unlabeled"]], X[idx["val"]], X_test_src
        )
        to = lambda a: torch.as_tensor(a, dtype=torch.float32)  # noqa: E731
        Xl, Xu, Xv, Xt = to(Xl), to(Xu), to(Xv), to(Xt)
        d = X.shape[1]
        hidden = PAPER_A_MLP_HIDDEN.get(dataset, (256, 256))
        factory = functools.partial(MLP, d, k, hidden=hidden, dropout=0.2)
        shape = (d,)
    else:
        train = X[pool[rest]]
        mean, std = image_stats(train)
        conv = lambda a: images_to_tensor(a, mean, std)  # noqa: E731
        Xl, Xu, Xv, Xt = conv(X[idx["labeled"]]), conv(X[idx["unlabeled"]]), conv(X[idx["val"]]), conv(X_test_src)
        net = LeNetCIFAR if dataset in ("cifar_cvd", "cifar10") else LeNetMNIST
        factory = functools.partial(net, k)
        shape = tuple(Xl.shape[1:])
    lab = lambda a: torch.as_tensor(np.asarray(a, np.int64))  # noqa: E731
    return Task(
        dataset=dataset,
        X_l=Xl,
        y_l=lab(y_all[idx["labeled"]]),
        X_u=Xu,
        X_val=Xv,
        y_val=lab(y_all[idx["val"]]),
        X_test=Xt,
        y_test=lab(y_test),
        prior=prior,
        num_classes=k,
        input_shape=shape,
        labeled_counts=[int(c) for c in np.bincount(y_all[idx["labeled"]], minlength=k)],
        official_test=official,
        indices=idx,
        model_factory=factory,
    )


# ------------------------------------------------------------------------------------------------------
# methods and one run
# ------------------------------------------------------------------------------------------------------


def _sup(prior, hyper, n_per_class, warmup_epochs=20):
    from sslkit.algorithms.risk_rewrite import SupervisedRisk

    return SupervisedRisk(prior, n_per_class=n_per_class)


def _pnu(prior, hyper, n_per_class, warmup_epochs=20):
    from sslkit.algorithms.risk_rewrite import PNU

    return PNU(prior, n_per_class=n_per_class)


def _iter(prior, hyper, n_per_class, warmup_epochs=20):
    """Ours (Iter) of Tables 1-2: Algorithm 1, plus ``rare_class_rows="labeled"`` (a class with fewer than 2
    validation rows also uses its labeled rows for C_m; Shuttle needs it, see :class:`OursIter`)."""
    from sslkit.algorithms.risk_rewrite import OursIter

    return OursIter(prior, n_per_class=n_per_class, warmup_epochs=warmup_epochs, rare_class_rows="labeled")


def _ec(prior, hyper, n_per_class, warmup_epochs=20):
    from sslkit.algorithms.risk_rewrite import OursEC

    return OursEC(prior, n_per_class=n_per_class)


def _pl(prior, hyper, n_per_class, warmup_epochs=20):
    from sslkit.algorithms.pseudo_label import PseudoLabel

    return PseudoLabel(threshold=float(hyper), warmup_epochs=warmup_epochs)


def _vat(prior, hyper, n_per_class, warmup_epochs=20):
    from sslkit.algorithms.vat import VAT

    return VAT(eps=float(hyper))


#: The display labels of the tables (method names such as "Sup.", settings, and the variants, orders and terms
#: below) are also the ids: they enter the run keys of the committed records under notebooks/results/, so
#: renaming one would orphan those records.
#: Table method name -> ``factory(prior, hyper, n_per_class, warmup_epochs) -> SSLAlgorithm`` (hyper: PL
#: threshold / VAT ε / None; n_per_class: the labeled set's class counts, used by the risk-rewrite methods;
#: warmup_epochs: supervised epochs before Ours (Iter) estimates a* / before PL labels U -- 20 in App. C).
#: "Sup." is the PN risk (linear risk with a = θ), which for cross-entropy is class-prior-weighted CE.
METHODS = {"Sup.": _sup, "PNU": _pnu, "Ours (Iter)": _iter, "Ours (EC)": _ec, "PL": _pl, "VAT": _vat}


def n_unlabeled_of(dataset: str, scale: str) -> int:
    """n_U of paper A §6.2 (300 binary tabular, 5000 otherwise), shortened at quick scale for images/multiclass."""
    p = PROTOCOL[scale]
    if dataset in TABLE1_DATASETS and dataset in TABULAR:
        return 300
    return p["n_unlabeled_image"] if dataset in IMAGE else p["n_unlabeled_multiclass"]


def n_val_of(dataset: str) -> int:
    """Validation size of §6.2: 60, except 200 for the multiclass image tasks (MNIST; CIFAR-10 as MNIST)."""
    return 200 if dataset in ("mnist", "cifar10") else 60


# ------------------------------------------------------------------------------------------------------
# the paper's numbers
# ------------------------------------------------------------------------------------------------------


def _method_cells(name: str) -> dict:
    out: dict = {}
    for r in load_paper_numbers(name):
        out.setdefault((r["dataset"], r["setting"]), {})[r["method"]] = mean_std(r)
    return out


#: Paper A, Table 1 (binary; test accuracy %, mean ± std over 30 seeds): ``{(dataset, setting): {method: (mean,
#: std)}}``.
PAPER_TABLE1 = _method_cells("a_table1")
#: Paper A, Table 2 (multiclass; test accuracy %, mean ± std over 30 seeds).
PAPER_TABLE2 = _method_cells("a_table2")
