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
    "make_split",
    "binary_task",
    "paper_a_regime",
    "PAPER_A_REGIMES",
    "PAPER_A_BINARY_SETTINGS",
    "PAPER_A_N_UNLABELED",
    "PAPER_A_N_VAL",
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


def check_labels(y, *, allow_empty: bool = False) -> np.ndarray:
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


def check_class_list(classes, name: str) -> np.ndarray:
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


def per_class_counts(spec, classes: np.ndarray, name: str) -> dict:
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


def check_ratio(value, name: str, *, low_closed: bool, high: float, high_closed: bool) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {value!r}")
    value = float(value)
    ok_low = value >= 0.0 if low_closed else value > 0.0
    ok_high = value <= high if high_closed else value < high
    if not (np.isfinite(value) and ok_low and ok_high):
        interval = ("[" if low_closed else "(") + f"0, {high:g}" + ("]" if high_closed else ")")
        raise ValueError(f"{name} must lie in {interval}, got {value}")
    return value


def round_half_up(x: float) -> int:
    return int(np.floor(x + 0.5))


def even_counts(total: int, k: int) -> list:
    """Split ``total`` into ``k`` integers differing by at most one; the first ones get the extra."""
    base, extra = divmod(total, k)
    return [base + 1 if i < extra else base for i in range(k)]


# --------------------------------------------------------------------------------------------------
# Drawing primitives: each one removes what it draws from the boolean mask ``available``
# --------------------------------------------------------------------------------------------------


def draw_random(rng, available: np.ndarray, n: int, name: str, stage: str) -> np.ndarray:
    """Draw ``n`` of the available indices; ``name`` describes ``n`` in the error (an argument name, or
    a phrase that already contains the number)."""
    candidates = np.flatnonzero(available)
    if n > candidates.size:
        what = name if " " in name else f"{name}={n}"
        raise ValueError(f"{what} is larger than what is left: only {candidates.size} examples remain {stage}")
    drawn = np.sort(rng.choice(candidates, size=n, replace=False)) if n else candidates[:0]
    available[drawn] = False
    return drawn.astype(np.int64)


def draw_per_class(rng, y, available: np.ndarray, counts: dict, name: str, stage: str) -> np.ndarray:
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
    y = check_labels(y)
    classes = np.unique(y) if classes is None else check_class_list(classes, "classes")
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
        None if labeled_per_class is None else per_class_counts(labeled_per_class, classes, "labeled_per_class")
    )
    val_counts = None if val_per_class is None else per_class_counts(val_per_class, classes, "val_per_class")
    return {
        "n_unlabeled": n_unlabeled,
        "n_val": n_val,
        "n_test": n_test,
        "label_counts": label_counts,
        "val_counts": val_counts,
    }


def _draw_split(rng, y, available, labeled, *, n_unlabeled, n_val, n_test, label_counts, val_counts) -> Split:
    """:func:`make_split`'s draws in its documented order: test, validation, labeled (unless given), unlabeled."""
    test = draw_random(rng, available, n_test, "n_test", "in the pool")
    if val_counts is None:
        val = draw_random(rng, available, n_val, "n_val", "after drawing the test set")
    else:
        val = draw_per_class(rng, y, available, val_counts, "val_per_class", "after drawing the test set")
    if labeled is None:
        labeled = draw_per_class(
            rng, y, available, label_counts, "labeled_per_class", "after drawing test and validation sets"
        )
    if n_unlabeled is None:
        unlabeled = np.flatnonzero(available).astype(np.int64)
    else:
        unlabeled = draw_random(
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
#: total (checked in tests/test_data_splits.py).
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
