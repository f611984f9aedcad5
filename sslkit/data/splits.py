"""Seeded, reproducible index splits for the three papers.

Every function here takes a label vector ``y`` (one integer per example) and returns *indices* into it,
so one split can be applied to images, tabular rows or features alike. All draws come from one
``numpy.random.default_rng(seed)`` stream in a fixed, documented order, so the same ``seed`` always gives
the same split and different seeds give different ones. Index arrays are int64 and sorted, except a
user-given ``labeled_indices``, which is kept exactly as given.

Contents
--------
* :class:`Split` and :func:`make_split` -- exact labeled counts per class, an unlabeled set of a given
  size, a validation set and a test set; or a user-given labeled index set (selection methods such as
  RDSS, paper B) with the unlabeled set built explicitly around it.
* :func:`binary_task` -- paper A's binary image tasks (MNIST 4 vs 9, CIFAR-10 cat vs dog).
* :func:`paper_a_regime` and the ``PAPER_A_*`` constants -- paper A §6.2 and Appendix C settings.
* :class:`OODSplit`, :func:`ood_split`, :data:`OOD_PRESETS` -- paper C's OOD unlabeled sets (§4).
* :func:`imbalanced_split`, :data:`IMBALANCE_PRESETS` -- paper C's class-imbalance scenario (§4).
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from sslkit._checks import check_count, check_seed

__all__ = [
    "Split",
    "OODSplit",
    "make_split",
    "binary_task",
    "paper_a_regime",
    "ood_split",
    "imbalanced_split",
    "PAPER_A_REGIMES",
    "PAPER_A_BINARY_SETTINGS",
    "PAPER_A_N_UNLABELED",
    "PAPER_A_N_VAL",
    "OOD_PRESETS",
    "PAPER_C_OOD_RATIOS",
    "IMBALANCE_PRESETS",
    "PAPER_C_IMBALANCE_RATIOS",
]


# --------------------------------------------------------------------------------------------------
# Split container
# --------------------------------------------------------------------------------------------------


def _as_index_array(values, name: str) -> np.ndarray:
    arr = np.asarray(values)
    if arr.size == 0:
        return np.zeros(0, dtype=np.int64)
    if arr.ndim != 1 or arr.dtype.kind not in "iu":
        raise TypeError(f"{name} must be a 1-D array of integer indices, got dtype {arr.dtype} and shape {arr.shape}")
    if arr.dtype.kind == "i" and arr.min() < 0:
        raise ValueError(
            f"{name} has {int((arr < 0).sum())} index(es) out of range (negative, e.g. {int(arr.min())}): "
            "indices are >= 0, never wrapped around"
        )
    return arr.astype(np.int64, copy=False)


@dataclass(frozen=True, eq=False)
class Split:
    """Disjoint index arrays into one label vector ``y``.

    ``labeled``: examples whose labels may be used; ``unlabeled``: examples used without labels;
    ``val``: validation examples (labels used for model selection / early stopping only);
    ``test``: held-out examples (empty when the dataset's official test split is used instead).
    All four are int64 and pairwise disjoint (checked at construction).
    """

    labeled: np.ndarray
    unlabeled: np.ndarray
    val: np.ndarray
    test: np.ndarray

    def __post_init__(self):
        parts = {}
        for name in ("labeled", "unlabeled", "val", "test"):
            arr = _as_index_array(getattr(self, name), name)
            object.__setattr__(self, name, arr)
            parts[name] = arr
        seen = np.concatenate(list(parts.values()))
        if np.unique(seen).size != seen.size:
            raise ValueError("Split index arrays must be disjoint and free of duplicates")

    def sizes(self) -> dict:
        """Number of indices in each part, e.g. ``{"labeled": 60, "unlabeled": 300, ...}``."""
        return {name: int(getattr(self, name).size) for name in ("labeled", "unlabeled", "val", "test")}


# --------------------------------------------------------------------------------------------------
# Input validation
# --------------------------------------------------------------------------------------------------


def _check_labels(y, *, allow_empty: bool = False) -> np.ndarray:
    """Return ``y`` as an int64 vector of class labels ``>= 0``; raise a clear error otherwise.

    Refused: a non-1-D array, non-integer labels (floats, NaN, bools, strings), an empty array (unless
    ``allow_empty``: there is nothing to split) and negative labels -- ``-1`` is a common "unlabeled"
    marker, and treating it as a class would silently draw "labeled" examples from it.
    """
    arr = np.asarray(y)
    if arr.ndim != 1:
        raise ValueError(f"y must be a 1-D array of class labels, got shape {arr.shape}")
    if arr.size == 0:
        if not allow_empty:
            raise ValueError("y is empty: there are no labels to split")
        return arr.astype(np.int64)
    if arr.dtype.kind not in "iu":
        raise TypeError(f"y must hold integer class labels, got dtype {arr.dtype}")
    if arr.dtype.kind == "i" and arr.min() < 0:
        raise ValueError(
            f"y holds negative labels ({int((arr < 0).sum())} of them, e.g. {int(arr.min())}); class labels "
            "must be >= 0 (a negative label such as -1 usually marks an unlabeled example: leave those out)"
        )
    return arr.astype(np.int64, copy=False)


def _check_class_list(classes, name: str) -> np.ndarray:
    if isinstance(classes, (numbers.Integral, str)) or not isinstance(classes, (Sequence, np.ndarray)):
        raise TypeError(f"{name} must be a sequence of integer class labels, got {classes!r}")
    out = []
    for c in classes:
        if isinstance(c, (bool, np.bool_)) or not isinstance(c, numbers.Integral):
            raise TypeError(f"{name} must contain integer class labels, got {c!r}")
        out.append(int(c))
    if not out:
        raise ValueError(f"{name} must not be empty")
    if len(set(out)) != len(out):
        raise ValueError(f"{name} contains duplicate classes: {out}")
    return np.asarray(out, dtype=np.int64)


def _per_class_counts(spec, classes: np.ndarray, name: str) -> dict:
    """Turn an int / sequence / dict count specification into ``{class: count}`` over ``classes``."""
    if isinstance(spec, Mapping):
        known = set(classes.tolist())
        unknown = [k for k in spec if not isinstance(k, numbers.Integral) or int(k) not in known]
        if unknown:
            raise ValueError(f"{name} has keys {unknown} that are not among the classes used {classes.tolist()}")
        counts = {int(c): 0 for c in classes}
        for c, v in spec.items():
            counts[int(c)] = check_count(v, f"{name}[class {int(c)}]")
        return counts
    if isinstance(spec, (numbers.Integral, np.integer)) and not isinstance(spec, (bool, np.bool_)):
        value = check_count(spec, name)
        return {int(c): value for c in classes}
    if isinstance(spec, (Sequence, np.ndarray)) and not isinstance(spec, str):
        spec = list(spec)
        if len(spec) != len(classes):
            raise ValueError(
                f"{name} has {len(spec)} entries but {len(classes)} classes are used "
                f"({classes.tolist()}); give one count per class"
            )
        return {int(c): check_count(v, f"{name}[class {int(c)}]") for c, v in zip(classes, spec)}
    raise TypeError(f"{name} must be an int, a sequence of ints (one per class) or a dict class -> int, got {spec!r}")


def _check_ratio(value, name: str, *, low_closed: bool, high: float, high_closed: bool) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {value!r}")
    value = float(value)
    ok_low = value >= 0.0 if low_closed else value > 0.0
    ok_high = value <= high if high_closed else value < high
    if not (np.isfinite(value) and ok_low and ok_high):
        interval = ("[" if low_closed else "(") + f"0, {high:g}" + ("]" if high_closed else ")")
        raise ValueError(f"{name} must lie in {interval}, got {value}")
    return value


def _round_half_up(x: float) -> int:
    return int(np.floor(x + 0.5))


def _even_counts(total: int, k: int) -> list:
    """Split ``total`` into ``k`` integers differing by at most one; the first ones get the extra."""
    base, extra = divmod(total, k)
    return [base + 1 if i < extra else base for i in range(k)]


# --------------------------------------------------------------------------------------------------
# Drawing primitives: each one removes what it draws from the boolean mask ``available``
# --------------------------------------------------------------------------------------------------


def _draw_random(rng, available: np.ndarray, n: int, name: str, stage: str) -> np.ndarray:
    """Draw ``n`` of the available indices; ``name`` describes ``n`` in the error (an argument name, or
    a phrase that already contains the number)."""
    candidates = np.flatnonzero(available)
    if n > candidates.size:
        what = name if " " in name else f"{name}={n}"
        raise ValueError(f"{what} is larger than what is left: only {candidates.size} examples remain {stage}")
    drawn = np.sort(rng.choice(candidates, size=n, replace=False)) if n else candidates[:0]
    available[drawn] = False
    return drawn.astype(np.int64)


def _draw_per_class(rng, y, available: np.ndarray, counts: dict, name: str, stage: str) -> np.ndarray:
    # Check every class before drawing anything, so the error names the first class that fails.
    pools = {}
    for c, n in counts.items():
        pool = np.flatnonzero(available & (y == c))
        if n > 0 and pool.size == 0:
            raise ValueError(f"{name}: class {c} has 0 examples available {stage} but {n} were requested")
        if n > pool.size:
            raise ValueError(
                f"{name}: class {c} has only {pool.size} examples available {stage} but {n} were requested"
            )
        pools[c] = pool
    drawn = [rng.choice(pools[c], size=n, replace=False) for c, n in counts.items() if n > 0]
    out = np.sort(np.concatenate(drawn)) if drawn else np.zeros(0, dtype=np.int64)
    available[out] = False
    return out.astype(np.int64)


# --------------------------------------------------------------------------------------------------
# make_split
# --------------------------------------------------------------------------------------------------


def make_split(
    y,
    labeled_per_class=None,
    *,
    n_unlabeled=None,
    n_val=0,
    n_test=0,
    val_per_class=None,
    labeled_indices=None,
    classes=None,
    seed,
) -> Split:
    """Draw a labeled / unlabeled / validation / test split of ``y`` with exact per-class labeled counts.

    Parameters
    ----------
    y : array of int, shape (N,)
        Class label of every example.
    labeled_per_class : int, sequence of int or dict {class: int}
        Number of labeled examples of each class, drawn exactly (an int means the same for every
        class; a sequence gives one count per class, in the order of ``classes`` (sorted labels when
        ``classes`` is None); a dict gives a count per class, classes it leaves out get 0). Give either this or
        ``labeled_indices``.
    n_unlabeled : int or None
        Size of the unlabeled set, drawn uniformly at random from what is left; ``None`` = all of it.
    n_val : int
        Size of the validation set, drawn uniformly at random (not stratified) from the pool: paper A,
        App. C, "the validation set is independently sampled from the original dataset".
    n_test : int
        Size of a test set drawn uniformly at random from the pool (0 when an official test split
        exists).
    val_per_class : int, sequence or dict, optional
        Stratified validation set with exact per-class counts instead of ``n_val`` (give only one).
    labeled_indices : sequence of int, optional
        A user-given labeled set (e.g. chosen by a selection method such as RDSS, paper B). Used
        exactly, in the given order; every index must be in range, unique, and of a used class. The
        unlabeled set is then built explicitly around it and never contains any of these indices.
    classes : sequence of int, optional
        Restrict the split to examples of these classes (default: every class present in ``y``).
    seed : int
        Seed of the single ``numpy.random.default_rng`` stream used for all draws.

    Draw order
    ----------
    The pool is every example whose class is in ``classes``. From it, in this order:
    (0) a user-given ``labeled_indices`` is removed first; (1) the test set; (2) the validation set;
    (3) the labeled set, class by class in the order of ``classes``; (4) the unlabeled set from the rest.
    Test and validation sets are therefore sampled independently of the labeled set.

    Returns
    -------
    Split
        ``labeled``, ``unlabeled``, ``val``, ``test``: disjoint int64 index arrays into ``y``.

    Raises
    ------
    TypeError
        Non-integer seed or counts; labels that are not integers (floats, NaN, bools).
    ValueError
        An empty ``y``, negative labels (``-1`` is not a class: drop unlabeled examples first),
        negative counts, a per-class count larger than what the class has left (the message names the
        class and both numbers), a per-class sequence of the wrong length, ``n_unlabeled`` (or
        ``n_val``, ``n_test``) larger than what is left, a labeled index out of range, duplicated or
        of an unused class.
    """
    seed = check_seed(seed)
    y = _check_labels(y)
    classes = np.unique(y) if classes is None else _check_class_list(classes, "classes")
    counts = _split_counts(classes, labeled_per_class, labeled_indices, n_unlabeled, n_val, n_test, val_per_class)
    rng = np.random.default_rng(seed)
    available = np.isin(y, classes)
    labeled = None
    if labeled_indices is not None:
        labeled = _check_labeled_indices(labeled_indices, y, available)
        available[labeled] = False
    return _draw_split(rng, y, available, labeled, **counts)


def _split_counts(classes, labeled_per_class, labeled_indices, n_unlabeled, n_val, n_test, val_per_class) -> dict:
    """:func:`make_split`'s counts, checked: ``n_unlabeled``, ``n_val``, ``n_test`` and the per-class
    ``label_counts`` / ``val_counts`` dicts (None when not given)."""
    n_val = check_count(n_val, "n_val")
    n_test = check_count(n_test, "n_test")
    if n_unlabeled is not None:
        n_unlabeled = check_count(n_unlabeled, "n_unlabeled")
    if val_per_class is not None and n_val:
        raise ValueError(f"give either n_val ({n_val}) or val_per_class, not both")
    if (labeled_per_class is None) == (labeled_indices is None):
        raise ValueError("give exactly one of labeled_per_class and labeled_indices")
    label_counts = (
        None if labeled_per_class is None else _per_class_counts(labeled_per_class, classes, "labeled_per_class")
    )
    val_counts = None if val_per_class is None else _per_class_counts(val_per_class, classes, "val_per_class")
    return {
        "n_unlabeled": n_unlabeled,
        "n_val": n_val,
        "n_test": n_test,
        "label_counts": label_counts,
        "val_counts": val_counts,
    }


def _draw_split(rng, y, available, labeled, *, n_unlabeled, n_val, n_test, label_counts, val_counts) -> Split:
    """:func:`make_split`'s draws in its documented order: test, validation, labeled (unless given), unlabeled."""
    test = _draw_random(rng, available, n_test, "n_test", "in the pool")
    if val_counts is None:
        val = _draw_random(rng, available, n_val, "n_val", "after drawing the test set")
    else:
        val = _draw_per_class(rng, y, available, val_counts, "val_per_class", "after drawing the test set")
    if labeled is None:
        labeled = _draw_per_class(
            rng, y, available, label_counts, "labeled_per_class", "after drawing test and validation sets"
        )
    if n_unlabeled is None:
        unlabeled = np.flatnonzero(available).astype(np.int64)
    else:
        unlabeled = _draw_random(
            rng, available, n_unlabeled, "n_unlabeled", "after drawing test, validation and labeled sets"
        )
    return Split(labeled=labeled, unlabeled=unlabeled, val=val, test=test)


def _check_labeled_indices(indices, y: np.ndarray, in_pool: np.ndarray) -> np.ndarray:
    idx = _as_index_array(indices, "labeled_indices")
    bad = idx[(idx < 0) | (idx >= y.size)]
    if bad.size:
        raise ValueError(f"labeled_indices has {bad.size} index(es) out of range [0, {y.size}), e.g. {int(bad[0])}")
    values, counts = np.unique(idx, return_counts=True)
    if (counts > 1).any():
        dup = values[counts > 1]
        raise ValueError(f"labeled_indices has {dup.size} duplicated index(es), e.g. {int(dup[0])}")
    outside = idx[~in_pool[idx]]
    if outside.size:
        raise ValueError(
            f"labeled_indices contains index {int(outside[0])} of class "
            f"{int(y[outside[0]])}, which is not among the classes used"
        )
    return idx.copy()


# --------------------------------------------------------------------------------------------------
# Paper A: binary tasks and label regimes
# --------------------------------------------------------------------------------------------------


def binary_task(dataset, positive, negative):
    """Restrict a multiclass :class:`~sslkit.data.dataset.Dataset` to a two-class task.

    Paper A §6.2 uses MNIST digits 4 vs 9 (``binary_task(mnist, 4, 9)``) and CIFAR-10 cat vs dog
    (``binary_task(cifar10, "cat", "dog")``). Classes can be given by index or by name.

    Label convention: ``positive`` becomes label 0 and ``negative`` label 1. Label 0 is paper A's
    class 1 (y = 1, the positive class, prior theta_1, labeled count n_1 in the settings
    ``(n_1, n_2)``), label 1 is its class 2. ``classes`` of the result is
    ``(name of positive, name of negative)``. Rows keep their original order; train and test
    splits are both filtered (a missing test split stays ``None``).
    """
    from sslkit.data.dataset import Dataset  # local import: DATA-LOAD owns the Dataset class

    pos = _class_index(dataset, positive, "positive")
    neg = _class_index(dataset, negative, "negative")
    if pos == neg:
        raise ValueError(f"positive and negative must be different classes, both are {pos}")

    def subset(X, y):
        if X is None or y is None:
            return None, None
        y = np.asarray(y)
        keep = (y == pos) | (y == neg)
        return X[keep], np.where(y[keep] == pos, 0, 1).astype(np.int64)

    X, y = subset(dataset.X, dataset.y)
    X_test, y_test = subset(dataset.X_test, dataset.y_test)
    names = (dataset.classes[pos], dataset.classes[neg])
    note = f"binary task: {names[0]} (label 0, paper A class 1) vs {names[1]} (label 1, class 2)."
    previous = dataset.notes.rstrip()
    notes = note if not previous else f"{previous}{' ' if previous.endswith('.') else '; '}{note}"
    return Dataset(
        name=f"{dataset.name}_{names[0]}v{names[1]}",
        X=X,
        y=y,
        X_test=X_test,
        y_test=y_test,
        classes=names,
        source=dataset.source,
        notes=notes,
    )


def _class_index(dataset, cls, name: str) -> int:
    classes = tuple(dataset.classes)
    if isinstance(cls, str):
        if cls not in classes:
            raise ValueError(f"{name}={cls!r} is not a class of {dataset.name}; classes are {classes}")
        return classes.index(cls)
    if isinstance(cls, (bool, np.bool_)) or not isinstance(cls, numbers.Integral):
        raise TypeError(f"{name} must be a class index or class name, got {cls!r}")
    if not 0 <= int(cls) < len(classes):
        raise ValueError(f"{name}={cls} is out of range: {dataset.name} has {len(classes)} classes")
    return int(cls)


#: Paper A, App. C: labeled counts per class, ``PAPER_A_REGIMES[num_classes][regime][total]``.
#: 7-class tasks are Covertype, Shuttle, Dry Beans; 10-class is MNIST. Every list sums to its stated
#: total (checked in tests/test_splits.py).
PAPER_A_REGIMES = {
    7: {
        "balanced": {70: [10] * 7, 140: [20] * 7, 350: [50] * 7},
        "mild": {140: [33, 26, 23, 19, 16, 13, 10], 350: [81, 65, 57, 49, 41, 33, 24]},
        "severe": {140: [57, 34, 21, 13, 7, 5, 3], 350: [143, 86, 52, 32, 19, 11, 7]},
    },
    10: {
        "balanced": {200: [20] * 10, 500: [50] * 10, 1500: [150] * 10},
        "mild": {500: [102, 82, 71, 61, 51, 41, 31, 26, 20, 15], 1500: [306, 245, 214, 184, 153, 122, 92, 77, 61, 46]},
        "severe": {500: [200, 120, 72, 44, 26, 16, 10, 6, 4, 2], 1500: [600, 360, 216, 132, 78, 48, 30, 18, 12, 6]},
    },
}

#: Paper A §6.2: binary labeled settings ``(n_1, n_2)`` (n_1 = class 1 = label 0 of :func:`binary_task`).
PAPER_A_BINARY_SETTINGS = ((15, 45), (30, 30), (50, 150), (100, 100))

#: Paper A §6.2 / App. C: unlabeled set sizes n_U.
PAPER_A_N_UNLABELED = {"binary_tabular": 300, "binary_image": 5000, "multiclass": 5000}

#: Paper A §6.2: validation set sizes (60 everywhere except multiclass image, i.e. MNIST, with 200).
PAPER_A_N_VAL = {"default": 60, "multiclass_image": 200}


def paper_a_regime(num_classes: int, regime: str, total: int) -> list:
    """Per-class labeled counts of paper A, App. C, e.g. ``paper_a_regime(10, "severe", 500)``.

    ``num_classes`` is 7 (Covertype, Shuttle, Dry Beans) or 10 (MNIST); ``regime`` is ``"balanced"``,
    ``"mild"`` or ``"severe"``; ``total`` is the stated total (70/140/350 or 200/500/1500 for balanced,
    140/350 or 500/1500 otherwise). Returns a new list (class 0 first), ready for
    ``make_split(y, labeled_per_class=...)``.
    """
    if num_classes not in PAPER_A_REGIMES:
        raise ValueError(f"num_classes must be one of {sorted(PAPER_A_REGIMES)}, got {num_classes!r}")
    regimes = PAPER_A_REGIMES[num_classes]
    if regime not in regimes:
        raise ValueError(f"regime must be one of {sorted(regimes)}, got {regime!r}")
    if total not in regimes[regime]:
        raise ValueError(
            f"paper A has no {regime} regime with total {total!r} for {num_classes} classes; "
            f"totals are {sorted(regimes[regime])}"
        )
    return list(regimes[regime][total])


# --------------------------------------------------------------------------------------------------
# Paper C: OOD unlabeled sets and class imbalance
# --------------------------------------------------------------------------------------------------


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
        y = _check_labels(y, allow_empty=True)
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
    id_classes = _check_class_list(id_classes, "id_classes")
    ood_classes = _check_class_list(ood_classes, "ood_classes")
    both = np.intersect1d(id_classes, ood_classes)
    if both.size:
        raise ValueError(f"id_classes and ood_classes overlap in {both.tolist()}")
    return id_classes, ood_classes


def ood_split(y, id_classes, ood_classes, n_labeled_per_class, n_unlabeled, ood_ratio, *, n_val=0, seed) -> OODSplit:
    """Paper C §4 "robust SSL with OOD": labeled data from ID classes, unlabeled data mixed with OOD.

    Interpretation of the paper (terse; App. F Table 3 gives the sizes):

    * OOD ratio = |U_ood| / (|U_ood| + |U_in|). The unlabeled set has exactly ``n_unlabeled`` examples,
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

    Checked against App. F.1.2 / Table 3 on the real label vectors (tests/test_robust_splits.py): CIFAR-10
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
    y = _check_labels(y)
    id_classes, ood_classes = _disjoint_classes(id_classes, ood_classes)
    n_unlabeled = check_count(n_unlabeled, "n_unlabeled")
    n_val = check_count(n_val, "n_val")
    ood_ratio = _check_ratio(ood_ratio, "ood_ratio", low_closed=True, high=1.0, high_closed=False)
    counts = _per_class_counts(n_labeled_per_class, id_classes, "n_labeled_per_class")
    n_ood = _round_half_up(ood_ratio * n_unlabeled)
    n_in = n_unlabeled - n_ood
    rng = np.random.default_rng(seed)
    available = np.isin(y, id_classes)
    val = _draw_random(rng, available, n_val, "n_val", "in the ID classes")
    labeled = _draw_per_class(rng, y, available, counts, "n_labeled_per_class", "after drawing the validation set")
    u_in = _draw_random(
        rng,
        available,
        n_in,
        f"the ID part of the unlabeled set ({n_in} = n_unlabeled - {n_ood} OOD)",
        "in the ID classes after drawing validation and labeled sets",
    )
    u_ood = _draw_random(
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
    n_minor = _round_half_up(total * ratio / (1.0 + ratio))
    counts = dict(zip(minority.tolist(), _even_counts(n_minor, minority.size)))
    counts.update(zip(majority.tolist(), _even_counts(total - n_minor, majority.size)))
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

    Checked against App. F.1.2 / Table 4 on the real CIFAR-10 labels (tests/test_robust_splits.py). The
    reading "each imbalanced class has r times the examples of each balanced class" is the same split,
    since both groups hold five classes.

    Draw order: validation, labeled (class by class), unlabeled (class by class); one
    ``default_rng(seed)`` stream. Labels are not remapped. Returns a :class:`Split` with an empty test
    set (the official test split is used).
    """
    seed = check_seed(seed)
    y = _check_labels(y)
    classes = np.unique(y) if classes is None else _check_class_list(classes, "classes")
    minority = _check_class_list(imbalanced_classes, "imbalanced_classes")
    missing = np.setdiff1d(minority, classes)
    if missing.size:
        raise ValueError(f"imbalanced_classes {missing.tolist()} are not among the classes used {classes.tolist()}")
    majority = np.setdiff1d(classes, minority)
    if majority.size == 0:
        raise ValueError("every class is in imbalanced_classes; at least one balanced class is needed")
    ratio = _check_ratio(imbalance_ratio, "imbalance_ratio", low_closed=False, high=1.0, high_closed=True)
    n_labeled = check_count(n_labeled, "n_labeled")
    n_unlabeled = check_count(n_unlabeled, "n_unlabeled")
    n_val = check_count(n_val, "n_val")

    rng = np.random.default_rng(seed)
    available = np.isin(y, classes)
    val = _draw_random(rng, available, n_val, "n_val", "in the pool")
    labeled = _draw_per_class(
        rng,
        y,
        available,
        _imbalance_counts(n_labeled, ratio, minority, majority),
        "labeled set",
        "after drawing the validation set",
    )
    unlabeled = _draw_per_class(
        rng,
        y,
        available,
        _imbalance_counts(n_unlabeled, ratio, minority, majority),
        "unlabeled set",
        "after drawing validation and labeled sets",
    )
    return Split(labeled=labeled, unlabeled=unlabeled, val=val, test=np.zeros(0, dtype=np.int64))
