"""Paper C's robust-SSL splits (§4.3, App. F): an unlabeled set mixed with out-of-distribution classes
(:func:`ood_split`, Figure 6 (a, b)) and a class-imbalanced one (:func:`imbalanced_split`, Figure 6 (c)), built
from the checks and draws of :mod:`.splits`."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sslkit._checks import check_count, check_seed

from .splits import (
    Split,
    check_class_list,
    check_labels,
    check_ratio,
    draw_per_class,
    draw_random,
    even_counts,
    per_class_counts,
    round_half_up,
)

__all__ = [
    "OODSplit",
    "ood_split",
    "imbalanced_split",
    "OOD_PRESETS",
    "PAPER_C_OOD_RATIOS",
    "IMBALANCE_PRESETS",
    "PAPER_C_IMBALANCE_RATIOS",
]


@dataclass(frozen=True, eq=False)
class OODSplit(Split):
    """A :class:`Split` for paper C's OOD scenario, with the in-distribution label map.

    ``label_map`` maps each in-distribution (ID) class to its new label ``0..len(id_classes)-1`` (in
    the order ``id_classes`` was given); ``unlabeled_is_ood[i]`` says whether ``unlabeled[i]`` is an
    OOD example. ``test`` is empty: paper C evaluates on the official test split restricted to ID
    classes, obtained with ``keep = split.relabel(y_test) >= 0``.
    """

    label_map: dict
    unlabeled_is_ood: np.ndarray

    def relabel(self, y) -> np.ndarray:
        """Map labels to ``0..K_id-1`` for ID classes and ``-1`` for every other class."""
        y = check_labels(y, allow_empty=True)
        out = np.full(y.shape, -1, dtype=np.int64)
        for old, new in self.label_map.items():
            out[y == old] = new
        return out


#: Paper C §4 / App. F Table 3: OOD presets, ``ood_split(y, **OOD_PRESETS[name], ood_ratio=r, seed=s)``.
#: CIFAR-10 ID = bird, cat, deer, dog, frog, horse (indices 2..7), OOD = airplane, automobile, ship,
#: truck (0, 1, 8, 9); MNIST "classes 1-6" (1-based) = digits 0..5 are ID, digits 6..9 OOD.
OOD_PRESETS = {
    "cifar10": dict(
        id_classes=(2, 3, 4, 5, 6, 7), ood_classes=(0, 1, 8, 9), n_labeled_per_class=400, n_unlabeled=20000, n_val=5000
    ),
    "mnist": dict(
        id_classes=(0, 1, 2, 3, 4, 5), ood_classes=(6, 7, 8, 9), n_labeled_per_class=10, n_unlabeled=30000, n_val=10000
    ),
}

#: Paper C §4: OOD ratios of the robust-SSL figure.
PAPER_C_OOD_RATIOS = (0.25, 0.5, 0.75)


def _disjoint_classes(id_classes, ood_classes) -> tuple[np.ndarray, np.ndarray]:
    id_classes = check_class_list(id_classes, "id_classes")
    ood_classes = check_class_list(ood_classes, "ood_classes")
    both = np.intersect1d(id_classes, ood_classes)
    if both.size:
        raise ValueError(f"id_classes and ood_classes overlap in {both.tolist()}")
    return id_classes, ood_classes


def ood_split(y, id_classes, ood_classes, n_labeled_per_class, n_unlabeled, ood_ratio, *, n_val=0, seed) -> OODSplit:
    """Paper C §4 "robust SSL with OOD": labeled data from ID classes, unlabeled data mixed with OOD.

    Interpretation of the paper (terse; App. F Table 3 gives the sizes):

    * OOD ratio = ``|U_ood| / (|U_ood| + |U_in|)``. The unlabeled set has exactly ``n_unlabeled`` examples,
      of which ``round(ood_ratio * n_unlabeled)`` (halves rounded up) are OOD and the rest ID.
    * Labeled examples: ``n_labeled_per_class`` of every ID class, exactly (400 x 6 = 2400 for CIFAR-10,
      10 x 6 = 60 for MNIST); an int, a sequence (one per ID class, in ``id_classes`` order) or a dict.
    * Validation examples (5000 CIFAR-10, 10000 MNIST) come from the ID classes only, drawn uniformly at
      random (not stratified) from the training pool.
    * U_in is drawn uniformly at random from the ID examples left (its class mix follows the data, as
      with real unlabeled data); U_ood uniformly at random from the OOD classes. Labeled examples are
      never part of U.
    * ID labels are remapped to ``0..len(id_classes)-1`` in the order of ``id_classes``; see
      :attr:`OODSplit.label_map` and :meth:`OODSplit.relabel` (OOD -> -1).

    Checked against App. F.1.2 / Table 3 on the real label vectors (tests/test_data_robust_splits.py): CIFAR-10
    2 400 labeled (400 per ID class), 20 000 unlabeled, 5 000 validation; MNIST 60, 30 000, 10 000; OOD
    ratios 25/50/75 % exact. Readings where F.1.2 is silent or ambiguous (DS3L's released
    ``load_dataset.py``, on which paper C builds its robust experiments, differs as noted):

    * MNIST "classes 1-6 ID, 7-10 OOD" counts the ten digits from 1, i.e. digits 0-5 are ID and 6-9 OOD
      (DS3L: ``classes[:6]`` of the sorted digits -- the same).
    * Table 3's "10 000 testing" is the official test split; evaluation uses its ID part
      (:meth:`OODSplit.relabel` ``>= 0``: 6 000 CIFAR-10 images, 6 031 MNIST), as DS3L's ``split_test``.
    * Validation: ``n_val`` ID examples. DS3L takes the first ``n_valid`` of the shuffled training set and
      then keeps its ID part (about 60 % of ``n_valid``).
    * U_in and U_ood are drawn uniformly (class mix as in the data). DS3L draws them class-balanced:
      ``int(n_u (1 - r)) // 6`` per ID class and the remainder ``// 4`` per OOD class (so its totals may
      miss ``n_u`` by a few, e.g. 19 998 at r = 0.75 on CIFAR-10). For CIFAR-10 and MNIST, whose classes
      are (nearly) equal in size, the two agree in expectation.

    Draw order: validation, labeled (class by class), U_in, U_ood; one ``default_rng(seed)`` stream.
    Presets: :data:`OOD_PRESETS`. Raises ``ValueError`` for a ratio outside [0, 1), overlapping class
    lists, or counts larger than what is available (naming the class and the numbers).
    """
    seed = check_seed(seed)
    y = check_labels(y)
    id_classes, ood_classes = _disjoint_classes(id_classes, ood_classes)
    n_unlabeled = check_count(n_unlabeled, "n_unlabeled")
    n_val = check_count(n_val, "n_val")
    ood_ratio = check_ratio(ood_ratio, "ood_ratio", low_closed=True, high=1.0, high_closed=False)
    counts = per_class_counts(n_labeled_per_class, id_classes, "n_labeled_per_class")
    n_ood = round_half_up(ood_ratio * n_unlabeled)
    n_in = n_unlabeled - n_ood
    rng = np.random.default_rng(seed)
    available = np.isin(y, id_classes)
    val = draw_random(rng, available, n_val, "n_val", "in the ID classes")
    labeled = draw_per_class(rng, y, available, counts, "n_labeled_per_class", "after drawing the validation set")
    u_in = draw_random(
        rng,
        available,
        n_in,
        f"the ID part of the unlabeled set ({n_in} = n_unlabeled - {n_ood} OOD)",
        "in the ID classes after drawing validation and labeled sets",
    )
    u_ood = draw_random(
        rng,
        np.isin(y, ood_classes),
        n_ood,
        f"the OOD part of the unlabeled set ({n_ood} = round(ood_ratio * "
        f"n_unlabeled) = round({ood_ratio} * {n_unlabeled}))",
        "in the OOD classes",
    )
    unlabeled = np.sort(np.concatenate([u_in, u_ood]))
    label_map = {int(c): i for i, c in enumerate(id_classes)}
    return OODSplit(
        labeled=labeled,
        unlabeled=unlabeled,
        val=val,
        test=np.zeros(0, dtype=np.int64),
        label_map=label_map,
        unlabeled_is_ood=np.isin(y[unlabeled], ood_classes),
    )


#: Paper C §4 / App. F Table 4: CIFAR-10 class-imbalance preset,
#: ``imbalanced_split(y, **IMBALANCE_PRESETS["cifar10"], imbalance_ratio=r, seed=s)``.
IMBALANCE_PRESETS = {
    "cifar10": dict(imbalanced_classes=(0, 1, 2, 3, 4), n_labeled=2400, n_unlabeled=20000, n_val=5000),
}

#: Paper C §4: class-imbalance ratios of the robust-SSL figure.
PAPER_C_IMBALANCE_RATIOS = (0.1, 0.3, 0.5)


def _imbalance_counts(total: int, ratio: float, minority: np.ndarray, majority: np.ndarray) -> dict:
    n_minor = round_half_up(total * ratio / (1.0 + ratio))
    counts = dict(zip(minority.tolist(), even_counts(n_minor, minority.size)))
    counts.update(zip(majority.tolist(), even_counts(total - n_minor, majority.size)))
    return counts


def imbalanced_split(
    y, imbalance_ratio, *, n_labeled, n_unlabeled, imbalanced_classes=(0, 1, 2, 3, 4), n_val=0, classes=None, seed
) -> Split:
    """Paper C §4 "robust SSL with class imbalance", in both the labeled and the unlabeled set.

    Interpretation of the paper (terse; App. F Table 4 gives the sizes):

    * "classes 1-5" (1-based) are the imbalanced classes, i.e. indices 0..4 by default; the others
      ("classes 6-10") are balanced.
    * class imbalance ratio r = (#examples of imbalanced classes) / (#examples of the other classes),
      applied separately to the labeled set (``n_labeled``, 2400 for CIFAR-10) and the unlabeled set
      (``n_unlabeled``, 20000). So a set of size n gets ``round(n * r / (1 + r))`` (halves up)
      examples of the imbalanced classes and the rest from the others; the ratio is exact whenever
      ``n * r / (1 + r)`` is an integer (e.g. r = 0.5, n = 2400: 800 vs 1600).
    * Inside each group the count is spread evenly over its classes (counts differ by at most one,
      the lower class indices get the extra example); all counts are exact.
    * r must lie in (0, 1]: r = 1 is balanced, smaller r makes the imbalanced classes rarer.
    * The validation set (5000 for CIFAR-10) is drawn uniformly at random from all used classes
      (so it follows the class mix of the data, balanced for CIFAR-10), like paper C's test set.

    Checked against App. F.1.2 / Table 4 on the real CIFAR-10 labels (tests/test_data_robust_splits.py). The
    reading "each imbalanced class has r times the examples of each balanced class" is the same split,
    since both groups hold five classes.

    Draw order: validation, labeled (class by class), unlabeled (class by class); one
    ``default_rng(seed)`` stream. Labels are not remapped. Returns a :class:`Split` with an empty test
    set (the official test split is used).
    """
    seed = check_seed(seed)
    y = check_labels(y)
    classes = np.unique(y) if classes is None else check_class_list(classes, "classes")
    minority = check_class_list(imbalanced_classes, "imbalanced_classes")
    missing = np.setdiff1d(minority, classes)
    if missing.size:
        raise ValueError(f"imbalanced_classes {missing.tolist()} are not among the classes used {classes.tolist()}")
    majority = np.setdiff1d(classes, minority)
    if majority.size == 0:
        raise ValueError("every class is in imbalanced_classes; at least one balanced class is needed")
    ratio = check_ratio(imbalance_ratio, "imbalance_ratio", low_closed=False, high=1.0, high_closed=True)
    n_labeled = check_count(n_labeled, "n_labeled")
    n_unlabeled = check_count(n_unlabeled, "n_unlabeled")
    n_val = check_count(n_val, "n_val")

    rng = np.random.default_rng(seed)
    available = np.isin(y, classes)
    val = draw_random(rng, available, n_val, "n_val", "in the pool")
    labeled = draw_per_class(
        rng,
        y,
        available,
        _imbalance_counts(n_labeled, ratio, minority, majority),
        "labeled set",
        "after drawing the validation set",
    )
    unlabeled = draw_per_class(
        rng,
        y,
        available,
        _imbalance_counts(n_unlabeled, ratio, minority, majority),
        "unlabeled set",
        "after drawing validation and labeled sets",
    )
    return Split(labeled=labeled, unlabeled=unlabeled, val=val, test=np.zeros(0, dtype=np.int64))
