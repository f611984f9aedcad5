"""Tabular preprocessing: z-score standardisation fitted on training rows, one-hot encoding.

Paper A (App. C) trains MLPs on standardised UCI features; the statistics must come from the
training rows only, so :func:`standardize` is applied *after* splitting, never inside the loaders.
"""

from __future__ import annotations

import numpy as np


def standardize(X_train, *others):
    """Z-score every column with the mean and standard deviation of ``X_train``'s rows only.

    Returns a tuple ``(X_train_std, *others_std)`` of ``float64`` arrays; an entry of ``others`` that is
    ``None`` (e.g. a missing test split) is passed through as ``None``. A constant training column has
    standard deviation 0; it is divided by 1 instead (it becomes 0 on the training rows).

    Raises ``ValueError`` naming the array when one is not 2-D, has a different number of columns than
    ``X_train``, or contains NaN or infinite values.
    """
    X_train = _matrix(X_train, "X_train")
    if len(X_train) == 0:
        raise ValueError("X_train has no rows; cannot fit standardisation statistics")
    mean = X_train.mean(axis=0)
    std = X_train.std(axis=0)
    std[std == 0] = 1.0
    out = [(X_train - mean) / std]
    for i, X in enumerate(others):
        if X is None:
            out.append(None)
            continue
        X = _matrix(X, f"others[{i}]")
        if X.shape[1] != X_train.shape[1]:
            raise ValueError(f"others[{i}] has {X.shape[1]} columns but X_train has {X_train.shape[1]}")
        out.append((X - mean) / std)
    return tuple(out)


def one_hot(values, categories) -> np.ndarray:
    """``(N, len(categories))`` float64 indicator matrix; a value not in ``categories`` (e.g. missing) is all zeros."""
    values = np.asarray(values, dtype=object)
    categories = list(categories)
    out = np.zeros((len(values), len(categories)), dtype=np.float64)
    for j, c in enumerate(categories):
        out[:, j] = values == c
    return out


def _matrix(X, name: str) -> np.ndarray:
    try:
        X = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise ValueError(f"{name} must be a numeric array: {err}") from None
    if X.ndim != 2:
        raise ValueError(f"{name} must be 2-D (rows x features), got shape {X.shape}")
    bad = ~np.isfinite(X)
    if bad.any():
        r, c = np.argwhere(bad)[0]
        raise ValueError(
            f"{name} contains NaN or infinite values ({int(bad.sum())} entries, first at row {r}, "
            f"column {c}); impute or drop them before standardising"
        )
    return X
