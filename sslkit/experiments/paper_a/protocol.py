"""Paper A, §6.2 (Tables 1 and 2): the semi-supervised comparison, one run at a time.

* :func:`build_task` -- the data of one run (labeled / unlabeled / validation / test sets, prior θ, model);
* :data:`METHODS` -- the tables' method names -> algorithm factories from :mod:`sslkit.algorithms`;
* :func:`run_one` -- one (dataset, setting, method, seed) with the training protocol of App. C;
* :func:`select_hyper` -- the hyper-parameter choice of PL / VAT (highest mean best-validation accuracy,
  as App. D.1 does for FixMatch);
* :data:`PAPER_TABLE1`, :data:`PAPER_TABLE2` -- the paper's numbers, ``{(dataset, setting): {method: (mean, std)}}``
  (:mod:`sslkit.experiments.paper_numbers`);
* :func:`run_table` -- the paper-scale sweeps (``sslkit sweep-a``).

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
import time
from collections.abc import Callable

import numpy as np
import torch

from sslkit._checks import check_count, check_seed
from sslkit.experiments.paper_numbers import load as load_paper_numbers
from sslkit.experiments.paper_numbers import mean_std

#: Protocol version of the records that this module's run functions make: notebooks and drivers pass it as
#: ``run_grid(..., version=PROTOCOL_VERSION)`` and each record stores it (``protocol_version``; records without
#: it are version 1). Bump it with a change that alters those runs' results: the runner then refuses to reuse
#: the older records silently (:class:`sslkit.experiments.runner.StaleResultsError`).
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
    return _placed(values, order)


def _placed(values, order) -> list:
    """``out[order[r]] = values[r]``: per-class values listed in rank order, placed at class indices."""
    out = [None] * len(values)
    for rank, c in enumerate(order):
        out[c] = values[rank]
    return out


# ------------------------------------------------------------------------------------------------------
# build_task
# ------------------------------------------------------------------------------------------------------


@dataclasses.dataclass
class Task:
    """The data of one run of paper A §6.2, ready for :class:`sslkit.engine.Trainer`.

    ``X_*`` are float32 tensors (tabular ``(N, d)``, images ``(N, C, H, W)``), ``y_*`` int64 tensors.
    ``prior`` is θ (numpy, sums to 1); ``labeled_counts`` the per-class counts actually drawn;
    ``indices`` the rows used (``labeled``, ``unlabeled``, ``val`` index the training data of the source,
    ``test`` the official test split when ``official_test`` else the training data too).
    """

    dataset: str
    X_l: torch.Tensor
    y_l: torch.Tensor
    X_u: torch.Tensor
    X_val: torch.Tensor
    y_val: torch.Tensor
    X_test: torch.Tensor
    y_test: torch.Tensor
    prior: np.ndarray
    num_classes: int
    input_shape: tuple
    labeled_counts: list
    official_test: bool
    indices: dict
    model_factory: Callable = dataclasses.field(repr=False)

    def make_model(self) -> torch.nn.Module:
        """A fresh model of App. C (MLP with the paper's widths, or the LeNet-like CNN); seed torch first."""
        return self.model_factory()


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


def fit_task(task, algorithm, seed: int, *, scale: str = "paper", device="auto", watch_warmup: bool = False):
    """Train ``algorithm`` on ``task`` with App. C's protocol and score the test set; ``(metrics, trainer)``.

    The one place the tables' training protocol lives (:func:`run_one` and the appendix runs use it). Early
    stopping watches only the epochs after an algorithm's ``warmup_epochs`` (Ours (Iter), Pseudo Label):
    otherwise a validation peak in the first epochs ends the run before a* or the pseudo-labels were used.
    ``watch_warmup=True`` lets the warm-up epochs compete for the best checkpoint too (patience still counts
    after them only; :class:`sslkit.engine.EarlyStopping`); the tables use False.
    """
    from sslkit.engine import EarlyStopping, Trainer
    from sslkit.seeding import seed_everything

    if scale not in PROTOCOL:
        raise ValueError(f"scale must be one of {tuple(PROTOCOL)}, got {scale!r}")
    p = PROTOCOL[scale]
    start = time.perf_counter()
    seed_everything(seed)
    model = task.make_model()
    stopping = EarlyStopping(
        patience=p["patience"],
        min_delta=p["min_delta"],
        start_epoch=getattr(algorithm, "warmup_epochs", 0) or 0,
        watch_warmup=watch_warmup,
    )
    trainer = Trainer(
        model,
        algorithm,
        device=device,
        optimizer="adam",
        lr=p["lr"],
        weight_decay=p["weight_decay"],
        epochs=p["epochs"],
        batch_size=p["batch_size"],
        unlabeled_batch_size=p["unlabeled_batch_size"],
        early_stopping=stopping,
        seed=seed,
        progress=False,
        num_classes=task.num_classes,
    )
    trainer.fit(task.X_l, task.y_l, task.X_u, task.X_val, task.y_val)
    metrics = {
        "test_acc": 100.0 * trainer.score(task.X_test, task.y_test),
        "best_val_acc": 100.0 * float(trainer.best_val_acc_),
        "epochs": int(trainer.epochs_run_),
        "best_epoch": int(trainer.best_epoch_),
        "seconds": round(time.perf_counter() - start, 3),
        "n_labeled": task.labeled_counts,
    }
    return metrics, trainer


def run_one(
    dataset: str,
    setting,
    method: str,
    seed: int,
    *,
    scale: str = "paper",
    device="auto",
    hyper=None,
    data_root=None,
    return_trainer: bool = False,
):
    """One run of paper A §6.2: build the task, train ``method`` with App. C's protocol, score the test set.

    Protocol (``scale="paper"``): Adam (lr 1e-3, weight decay 1e-4), at most 200 epochs (an epoch = one pass
    over the labeled set), labeled / unlabeled batches 64 / 256, early stopping on validation accuracy with
    patience 20 and min-delta 1e-4; the best-validation weights are tested; warm-up of Ours (Iter) and PL 20
    epochs, which early stopping does not watch (see :func:`fit_task`; App. C's "20-epoch warm-up ... prior
    to joint optimization"). ``scale="quick"``: at most 30 epochs, patience 8, warm-up 5, n_U = 1000 for
    images and multiclass (binary tabular keeps 300).

    Returns ``{"test_acc", "best_val_acc", "epochs", "best_epoch", "seconds", "n_labeled"}`` (accuracies in %).
    """
    if scale not in PROTOCOL:
        raise ValueError(f"scale must be one of {tuple(PROTOCOL)}, got {scale!r}")
    if method not in METHODS:
        raise ValueError(f"method must be one of {tuple(METHODS)}, got {method!r}")
    if method == "PNU" and dataset not in TABLE1_DATASETS:
        raise ValueError("PNU is binary only (paper A §6.2): use it on a Table 1 dataset")
    if method in ("PL", "VAT") and hyper is None:
        raise ValueError(f"{method} needs hyper= (one of {hyper_grid(dataset, method)})")
    task = build_task(
        dataset, setting, seed, n_unlabeled=n_unlabeled_of(dataset, scale), n_val=n_val_of(dataset), data_root=data_root
    )
    algo = METHODS[method](task.prior, hyper, np.asarray(task.labeled_counts), PROTOCOL[scale]["warmup_epochs"])
    metrics, trainer = fit_task(task, algo, seed, scale=scale, device=device)
    return (metrics, trainer) if return_trainer else metrics


#: Which class gets which count of an imbalanced regime (notebook a_table2): our rule and two alternatives.
REGIME_ORDERS = ("label encoder (the tables)", "data file", "most frequent first")


def run_order_variant(
    dataset: str, setting: str, order: str, seed: int, *, scale: str = "paper", device="auto", data_root=None
) -> dict:
    """Sup. on a Table 2 regime whose counts are placed on the classes in ``order`` (:data:`REGIME_ORDERS`):
    :func:`regime_class_order` (the tables), the data file's class order, or by falling class frequency.
    Same task and protocol as :func:`run_one` otherwise; the metrics of :func:`fit_task` plus ``counts``."""
    if order not in REGIME_ORDERS:
        raise ValueError(f"order must be one of {REGIME_ORDERS}, got {order!r}")
    if dataset not in TABLE2_DATASETS:
        raise ValueError(f"dataset must be a Table 2 dataset {TABLE2_DATASETS}, got {dataset!r}")
    ds = source_dataset(dataset, data_root)
    base = labeled_counts(dataset, setting)
    if order == REGIME_ORDERS[0]:
        ranks = regime_class_order(dataset, ds.classes)
    elif order == REGIME_ORDERS[1]:
        ranks = list(range(ds.num_classes))
    else:
        ranks = [int(c) for c in np.argsort(-np.bincount(np.asarray(ds.y), minlength=ds.num_classes), kind="stable")]
    counts = _placed(base, ranks)
    task = build_task(
        dataset, counts, seed, n_unlabeled=n_unlabeled_of(dataset, scale), n_val=n_val_of(dataset), data_root=data_root
    )
    algo = METHODS["Sup."](task.prior, None, np.asarray(task.labeled_counts), PROTOCOL[scale]["warmup_epochs"])
    metrics, _ = fit_task(task, algo, seed, scale=scale, device=device)
    return {**metrics, "counts": [int(c) for c in counts]}


#: The supervised term of PL / VAT (notebook a_table2): App. C's "supervised cross-entropy" read as the plain
#: batch mean (the tables), or as the PN risk Σ_j θ_j R̂_jj that Sup. minimises (they differ when the labeled
#: class counts are not proportional to the prior θ: every Shuttle row, the imbalanced Dry Beans rows).
SUPERVISED_TERMS = ("cross-entropy (the tables)", "PN risk (Sup.'s)")


def run_supervised_term_variant(
    dataset: str,
    setting,
    method: str,
    hyper,
    term: str,
    seed: int,
    *,
    scale: str = "paper",
    device="auto",
    data_root=None,
) -> dict:
    """PL or VAT (``hyper``: threshold / ε from :func:`hyper_grid`) with the supervised term ``term`` of
    :data:`SUPERVISED_TERMS`; same task and protocol as :func:`run_one` (the first term is exactly run_one)."""
    from sslkit.algorithms.pseudo_label import PseudoLabel
    from sslkit.algorithms.vat import VAT

    if method not in ("PL", "VAT"):
        raise ValueError(f"method must be 'PL' or 'VAT', got {method!r}")
    if term not in SUPERVISED_TERMS:
        raise ValueError(f"term must be one of {SUPERVISED_TERMS}, got {term!r}")
    if hyper not in hyper_grid(dataset, method):
        raise ValueError(f"hyper must be one of {hyper_grid(dataset, method)} for {method} on {dataset}, got {hyper!r}")
    task = build_task(
        dataset, setting, seed, n_unlabeled=n_unlabeled_of(dataset, scale), n_val=n_val_of(dataset), data_root=data_root
    )
    prior = None if term == SUPERVISED_TERMS[0] else task.prior
    if method == "PL":
        algo = PseudoLabel(threshold=float(hyper), warmup_epochs=PROTOCOL[scale]["warmup_epochs"], prior=prior)
    else:
        algo = VAT(eps=float(hyper), prior=prior)
    metrics, _ = fit_task(task, algo, seed, scale=scale, device=device)
    return metrics


#: Diagnosis of Ours (Iter) where it trails Sup. (notebook a_table1): Algorithm 1 as in the tables, then one
#: change at a time (OursIter options, or model selection that may keep a warm-up checkpoint).
ITER_VARIANTS = {
    "Algorithm 1 (as in the tables)": {},
    "nn rule: kiryo": {"nn_rule": "kiryo"},
    "nn rule: clip": {"nn_rule": "clip"},
    "nn correction off": {"nonnegative": False},
    "a* at the actual n_U": {"finite_unlabeled": True},
    "best checkpoint may be a warm-up one": {"watch_warmup": True},
}


def run_iter_variant(
    dataset: str, setting, variant: str, seed: int, *, scale: str = "paper", device="auto", data_root=None
) -> dict:
    """One run of Ours (Iter) under a variant of :data:`ITER_VARIANTS` (same task and protocol as
    :func:`run_one`); the metrics dict of :func:`fit_task` plus ``a_final`` (the last a)."""
    from sslkit.algorithms.risk_rewrite import OursIter

    if variant not in ITER_VARIANTS:
        raise ValueError(f"variant must be one of {tuple(ITER_VARIANTS)}, got {variant!r}")
    options = dict(ITER_VARIANTS[variant])
    watch = options.pop("watch_warmup", False)
    task = build_task(
        dataset, setting, seed, n_unlabeled=n_unlabeled_of(dataset, scale), n_val=n_val_of(dataset), data_root=data_root
    )
    algo = OursIter(
        task.prior,
        n_per_class=np.asarray(task.labeled_counts),
        rare_class_rows="labeled",
        warmup_epochs=PROTOCOL[scale]["warmup_epochs"],
        **options,
    )
    metrics, _ = fit_task(task, algo, seed, scale=scale, device=device, watch_warmup=watch)
    return {**metrics, "a_final": [float(v) for v in algo.a_]}


def grid_of(datasets, settings=None, methods=None, *, hyper=True) -> list:
    """Runner grid ``[{"dataset", "setting", "method", "hyper"}, ...]`` over the paper's rows and methods.

    ``settings`` / ``methods``: None for the paper's; ``hyper=True`` expands PL / VAT over their whole grid,
    ``hyper="first"`` keeps one value each (the middle of the grid; quick scale).
    """
    grid = []
    for d in datasets:
        for s in settings_of(d) if settings is None else [s for s in settings if s in settings_of(d)]:
            for m in methods_of(d) if methods is None else [m for m in methods if m in methods_of(d)]:
                values = hyper_grid(d, m)
                if hyper == "first":
                    values = (values[len(values) // 2],)
                grid += [{"dataset": d, "setting": s, "method": m, "hyper": h} for h in values]
    return grid


def select_hyper(records, metric: str = "best_val_acc") -> list:
    """Keep, per (dataset, setting, method), the hyper value with the highest mean ``metric`` over seeds.

    This is App. D.1's rule (stated there for FixMatch's threshold) applied to PL's threshold and VAT's ε.
    Only seeds that every value of the group has finished are compared and kept (a partial sweep stays
    unbiased). Returns the kept records; each gets ``record["config"]["selected"] = hyper``.
    """
    groups: dict = {}
    for r in records:
        c = r["config"]
        groups.setdefault((c["dataset"], c["setting"], c["method"]), {}).setdefault(
            json_key(c.get("hyper")), []
        ).append(r)
    kept = []
    for _, by_hyper in groups.items():
        # compare the values on the seeds every value has finished (a sweep may be cut off mid-grid)
        common = set.intersection(*({r["seed"] for r in recs} for recs in by_hyper.values()))
        if not common:  # no seed shared by every value yet: use what each value has
            common = {r["seed"] for recs in by_hyper.values() for r in recs}
        score = {
            h: np.mean([r["metrics"][metric] for r in recs if r["seed"] in common] or [-np.inf])
            for h, recs in by_hyper.items()
        }
        best = max(by_hyper, key=lambda h: score[h])
        for r in by_hyper[best]:
            if r["seed"] not in common:
                continue
            r = {**r, "config": {**r["config"], "selected": r["config"].get("hyper")}}
            kept.append(r)
    return kept


def json_key(v):
    return "None" if v is None else repr(float(v))


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


# ------------------------------------------------------------------------------------------------------
# resumable sweeps (the paper-scale runs behind the notebooks a_table1 / a_table2)
# ------------------------------------------------------------------------------------------------------

TABLE_NOTEBOOKS = {1: "a_table1", 2: "a_table2"}


def run_table(
    table: int,
    datasets,
    seeds,
    *,
    scale="paper",
    device="auto",
    settings=None,
    methods=None,
    hyper=True,
    results_dir=None,
    progress=False,
) -> list:
    """Run (or resume) the grid of Table ``table`` (1 or 2) into ``results_path(a_table{table}, scale)``.

    Every finished run is one JSON line (:func:`sslkit.experiments.run_grid`), so a killed sweep loses
    nothing; extending ``seeds`` later only runs the new seeds. Returns the records of this grid.
    """
    import warnings

    from sslkit.experiments import hardware_summary, results_path, run_grid

    if table not in TABLE_NOTEBOOKS:
        raise ValueError(f"table must be 1 or 2, got {table!r}")
    allowed = TABLE1_DATASETS if table == 1 else TABLE2_DATASETS
    bad = [d for d in datasets if d not in allowed]
    if bad:
        raise ValueError(f"datasets {bad} are not rows of Table {table} ({allowed})")
    grid = grid_of(datasets, settings, methods, hyper=hyper)
    path = results_path(TABLE_NOTEBOOKS[table], scale, results_dir=results_dir)

    def fn(dataset, setting, method, hyper, seed):
        return run_one(dataset, setting, method, seed, scale=scale, device=device, hyper=hyper)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        hardware = hardware_summary(device)
        return run_grid(
            fn, grid, path, seeds=seeds, scale=scale, progress=progress, hardware=hardware, version=PROTOCOL_VERSION
        )


# --------------------------------------------------------------------------- the supervised baseline page


@functools.cache
def baseline_dataset(name: str):
    """The dataset of the supervised-baseline page: Breast Cancer as loaded; Banknote with the paper's class 1
    (the positive class, source label 1) as our label 0."""
    from sslkit.data import binary_task, load_dataset

    ds = load_dataset(name)
    return binary_task(ds, 1, 0) if name == "banknote" else ds


def supervised_baseline_run(dataset: str, n1: int, n2: int, seed: int, *, device="auto") -> dict:
    """One run of the supervised-baseline page: an MLP (paper A's hidden sizes, dropout 0.2) trained with
    cross-entropy on ``n1 + n2`` labels (App. C: Adam 1e-3, weight decay 1e-4, batch 64, early stopping with
    patience 20 on 60 validation rows), 30 % of the data held out for test. The model is initialised under
    ``seed`` (``seed_everything`` before it is built), so a run does not depend on the runs before it."""
    from sslkit.algorithms import Supervised
    from sslkit.data import make_split, standardize
    from sslkit.engine import EarlyStopping, Trainer
    from sslkit.models import MLP, PAPER_A_MLP_HIDDEN
    from sslkit.seeding import seed_everything

    ds = baseline_dataset(dataset)
    split = make_split(ds.y, [n1, n2], n_val=60, n_test=int(0.3 * len(ds.y)), seed=seed)
    train_rows = np.concatenate([split.labeled, split.unlabeled])
    _, X_l, X_val, X_test = standardize(ds.X[train_rows], ds.X[split.labeled], ds.X[split.val], ds.X[split.test])
    seed_everything(seed)
    model = MLP(ds.X.shape[1], 2, hidden=PAPER_A_MLP_HIDDEN[dataset], dropout=0.2)
    trainer = Trainer(
        model,
        Supervised(),
        device=device,
        optimizer="adam",
        lr=1e-3,
        weight_decay=1e-4,
        epochs=200,
        batch_size=64,
        early_stopping=EarlyStopping(patience=20, min_delta=1e-4),
        seed=seed,
        progress=False,
    )
    trainer.fit(X_l, ds.y[split.labeled], X_val=X_val, y_val=ds.y[split.val])
    return {
        "test_acc": 100 * trainer.score(X_test, ds.y[split.test]),
        "best_epoch": trainer.best_epoch_,
        "epochs": trainer.epochs_run_,
    }
