"""Input validation shared by the whole package (clear errors at the boundary, never silent wrong answers).

The one bottom module of checks: :mod:`sslkit.risk`, :mod:`sslkit.select` and :mod:`sslkit.coreset` (the three
papers' mathematics) import their input checks from here and never from each other. Every check names the
argument and says what was wrong.

* scalars: :func:`check_seed`, :func:`check_count`, :func:`check_bool`, :func:`check_real`,
  :func:`check_positive`, :func:`check_open_unit`;
* arrays: :func:`check_features` (2-D, non-empty, real, finite), :func:`check_gradients` (the same with a
  one-pass finiteness test for large matrices), :func:`check_labels` (integer class indices),
  :func:`check_indices` (integer positions into ``range(n)``: no floats, no negative or wrapped-around
  values, optionally distinct), :func:`check_symmetric`;
* budgets: :func:`check_budget`, :func:`check_batch_size`, :func:`check_labeled_not_empty`.
"""

from __future__ import annotations

import math
import numbers

import numpy as np
import torch

__all__ = [
    "check_seed",
    "check_count",
    "check_bool",
    "check_real",
    "check_positive",
    "check_open_unit",
    "check_features",
    "check_gradients",
    "check_labels",
    "check_indices",
    "check_symmetric",
    "check_budget",
    "check_batch_size",
    "check_labeled_not_empty",
]


# ------------------------------------------------------------------------------------------------ scalars


def check_seed(seed, name: str = "seed") -> int:
    """Return ``seed`` as a Python int; raise ``TypeError`` if it is not an integer (bools are refused)."""
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {seed!r} of type {type(seed).__name__}")
    seed = int(seed)
    if seed < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {seed}")
    return seed


def check_count(value, name: str, *, allow_zero: bool = True) -> int:
    """Return ``value`` as a non-negative (or positive) int, with an error naming ``name`` otherwise."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {value!r}")
    value = int(value)
    if value < 0 or (value == 0 and not allow_zero):
        bound = "non-negative" if allow_zero else "positive"
        raise ValueError(f"{name} must be {bound}, got {value}")
    return value


def check_bool(value, name: str) -> bool:
    """``value`` if it is True or False (numpy bools accepted); ``TypeError`` for anything else (1, "yes")."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def check_real(value, name: str, *, low=None, high=None, low_open: bool = False, high_open: bool = False) -> float:
    """A finite real number (bools refused) in the interval given by ``low`` / ``high`` (None: unbounded;
    ``low_open`` / ``high_open``: the bound itself is excluded)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {value!r}")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value}")
    below = low is not None and (value < low or (low_open and value == low))
    above = high is not None and (value > high or (high_open and value == high))
    if below or above:
        lo = "(-inf" if low is None else ("(" if low_open else "[") + f"{low:g}"
        hi = "inf)" if high is None else f"{high:g}" + (")" if high_open else "]")
        raise ValueError(f"{name} must lie in {lo}, {hi}, got {value}")
    return value


def check_positive(value, name: str, *, allow_zero: bool = False) -> float:
    """A finite float > 0 (or >= 0 with ``allow_zero``)."""
    value = check_real(value, name)
    if value < 0.0 or (value == 0.0 and not allow_zero):
        raise ValueError(f"{name} must be {'non-negative' if allow_zero else 'positive'}, got {value}")
    return value


def check_open_unit(value, name: str) -> float:
    """A float in the open interval (0, 1)."""
    value = check_real(value, name)
    if not 0.0 < value < 1.0:
        raise ValueError(f"{name} must lie in the open interval (0, 1), got {value}")
    return value


# ------------------------------------------------------------------------------------------------- arrays


def check_features(X, name: str = "X", *, device=None, dtype=None) -> torch.Tensor:
    """Return ``X`` as a 2-D floating tensor on ``device`` (numpy arrays, tensors and lists accepted).

    float64 input stays float64; every other input becomes float32 unless ``dtype`` says otherwise.
    Raises ``TypeError`` for non-numeric input and ``ValueError`` when ``X`` is not 2-D, has no rows or
    columns, or contains NaN or infinite values.
    """
    if isinstance(X, torch.Tensor):
        t = X.detach()
    else:
        try:
            arr = np.asarray(X)
        except Exception as exc:  # pragma: no cover - exotic inputs
            raise TypeError(f"{name} must be a numpy array or torch tensor, got {type(X).__name__}") from exc
        if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == np.bool_):
            raise TypeError(f"{name} must hold numbers, got dtype {arr.dtype}")
        t = torch.from_numpy(np.ascontiguousarray(arr))
    if t.is_complex():
        raise TypeError(f"{name} must be real, got dtype {t.dtype}")
    if t.ndim != 2:
        raise ValueError(f"{name} must be 2-D (n_samples, n_features), got shape {tuple(t.shape)}")
    if t.shape[0] == 0 or t.shape[1] == 0:
        raise ValueError(f"{name} must have at least one row and one column, got shape {tuple(t.shape)}")
    if dtype is None:
        dtype = torch.float64 if t.dtype == torch.float64 else torch.float32
    t = t.to(device=device if device is not None else t.device, dtype=dtype)
    if not bool(torch.isfinite(t).all()):
        raise ValueError(f"{name} contains NaN or infinite values")
    return t


def check_gradients(G, name: str = "unlabeled gradients", *, device=None, dtype=None) -> torch.Tensor:
    """Like :func:`check_features` for a large gradient matrix, with a one-pass finiteness test.

    ``isfinite(G).all()`` makes several full-size temporaries (0.5 s for a 50 000 x 1290 matrix on the
    2-core CPU); a NaN or an infinity makes the sum non-finite, so the exact test runs only when the sum is
    not finite (an overflow of the sum of finite entries is then told apart from a real NaN/inf).
    """
    if isinstance(G, torch.Tensor) and G.dtype.is_floating_point and G.ndim == 2 and G.numel():
        G = G.detach().to(
            device=device if device is not None else G.device,
            dtype=dtype if dtype is not None else (torch.float64 if G.dtype == torch.float64 else torch.float32),
        )
        if bool(torch.isfinite(G.sum())):
            return G
    return check_features(G, name, device=device, dtype=dtype)


def check_labels(y, n: int, n_classes: int, *, device=None, name: str = "labels") -> torch.Tensor:
    """``y`` as a 1-D int64 tensor of ``n`` class indices in ``[0, n_classes)`` (floats, bools refused)."""
    if isinstance(y, torch.Tensor):
        t = y.detach()
    else:
        arr = np.asarray(y)
        if arr.dtype == object or not np.issubdtype(arr.dtype, np.number):
            raise TypeError(f"{name} must be integers, got dtype {arr.dtype}")
        t = torch.from_numpy(np.ascontiguousarray(arr))
    if t.dtype.is_floating_point or t.is_complex() or t.dtype == torch.bool:
        raise TypeError(f"{name} must be integer class indices, got dtype {t.dtype}")
    if t.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {tuple(t.shape)}")
    if t.shape[0] != n:
        raise ValueError(f"got {t.shape[0]} {name} for {n} rows")
    t = t.to(device=device if device is not None else t.device, dtype=torch.long)
    if n and (int(t.min()) < 0 or int(t.max()) >= n_classes):
        raise ValueError(
            f"{name} must lie in [0, {n_classes}) (the number of classes), got range [{int(t.min())}, {int(t.max())}]"
        )
    return t


def check_indices(indices, n: int, name: str = "indices", *, distinct: bool = False, allow_empty: bool = False):
    """``indices`` as a 1-D int64 numpy array of positions in ``[0, n)``.

    Refused, each with an error naming ``name``: floats (even whole-valued ones: they would be truncated),
    bools (a mask is not a list of positions), anything not 1-D, negative positions (Python and torch would
    wrap them around to the end), positions ``>= n``, an empty array (unless ``allow_empty``) and, with
    ``distinct``, a repeated position.
    """
    if isinstance(indices, torch.Tensor):
        arr = indices.detach().cpu().numpy()
    else:
        arr = np.asarray(indices)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {arr.shape}")
    if arr.size == 0:  # an empty list has no integer dtype of its own
        if not allow_empty:
            raise ValueError(f"{name} is empty: select at least one position")
        return np.zeros(0, dtype=np.int64)
    if arr.dtype == object or arr.dtype.kind not in "iu" or arr.dtype == np.bool_:
        raise TypeError(f"{name} must be integer positions, got dtype {arr.dtype} (floats would be truncated)")
    lo, hi = int(arr.min()), int(arr.max())
    if lo < 0 or hi >= n:
        raise ValueError(f"{name} must lie in [0, {n}), got values in [{lo}, {hi}] (negative values are not wrapped)")
    arr = arr.astype(np.int64, copy=False)
    if distinct:
        uniq, counts = np.unique(arr, return_counts=True)
        if uniq.size != arr.size:
            raise ValueError(f"{name} must be distinct, but {uniq[counts > 1][:5].tolist()} occur more than once")
    return arr


def check_symmetric(S: torch.Tensor, name: str = "similarity", *, rtol: float = 1e-6, atol: float = 1e-9) -> None:
    """Raise unless the square matrix ``S`` equals its transpose up to ``atol + rtol max|S|``."""
    if S.ndim != 2 or S.shape[0] != S.shape[1]:
        raise ValueError(f"{name} must be a square matrix, got shape {tuple(S.shape)}")
    gap = float((S - S.T).abs().max()) if S.numel() else 0.0
    scale = float(S.abs().max()) if S.numel() else 0.0
    if gap > atol + rtol * scale:
        raise ValueError(
            f"{name} must be symmetric (s_ij = s_ji): the largest |s_ij - s_ji| is {gap:.3g} "
            f"(tolerance {atol + rtol * scale:.3g})"
        )


# ------------------------------------------------------------------------------------------------ budgets


def check_budget(k, n: int, name: str = "k", what: str = "unlabeled samples") -> int:
    """A positive int ``k <= n`` (a coreset never repeats an element)."""
    k = check_count(k, name, allow_zero=False)
    if k > n:
        raise ValueError(f"{name} = {k} exceeds the number of {what} ({n}); a coreset has distinct elements")
    return k


def check_batch_size(batch_size, name: str = "batch_size") -> int:
    """A positive int mini-batch size."""
    return check_count(batch_size, name, allow_zero=False)


def check_labeled_not_empty(logits) -> None:
    """A clear error for an empty labeled set (before the generic "at least one row" of the matrix check)."""
    if isinstance(logits, (torch.Tensor, np.ndarray)) and logits.ndim == 2 and logits.shape[0] == 0:
        raise ValueError("the labeled set is empty: L_S (the labeled loss) needs at least one labeled sample")
