"""Input validation for :mod:`sslkit.coreset` (clear errors at the boundary, naming the problem).

Matrices go through :func:`sslkit.select.kernel.check_features` (2-D, non-empty, real, finite);
this module adds the checks specific to coresets: budgets, labels, probabilities, step sizes.
"""

from __future__ import annotations

import math
import numbers

import numpy as np
import torch

from sslkit._checks import check_count
from sslkit.select.kernel import check_features  # re-exported: 2-D, non-empty, real, finite

__all__ = [
    "check_features",
    "check_gradients",
    "check_labeled_not_empty",
    "check_budget",
    "check_labels",
    "check_open_unit",
    "check_positive",
    "check_batch_size",
]


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


def check_labeled_not_empty(logits) -> None:
    """A clear error for an empty labeled set (before the generic "at least one row" of the matrix check)."""
    shape = getattr(logits, "shape", None)
    if shape is not None and len(shape) == 2 and shape[0] == 0:
        raise ValueError("the labeled set is empty: L_S (the labeled loss) needs at least one labeled sample")


def check_budget(k, n: int, name: str = "k", what: str = "unlabeled samples") -> int:
    """A positive int ``k <= n`` (a coreset never repeats an element)."""
    k = check_count(k, name, allow_zero=False)
    if k > n:
        raise ValueError(f"{name} = {k} exceeds the number of {what} ({n}); a coreset has distinct elements")
    return k


def check_labels(y, n: int, n_classes: int, *, device=None) -> torch.Tensor:
    """``y`` as a 1-D int64 tensor of ``n`` class indices in ``[0, n_classes)``."""
    if isinstance(y, torch.Tensor):
        t = y.detach()
    else:
        arr = np.asarray(y)
        if arr.dtype == object or not np.issubdtype(arr.dtype, np.number):
            raise TypeError(f"labels must be integers, got dtype {arr.dtype}")
        t = torch.from_numpy(np.ascontiguousarray(arr))
    if t.dtype.is_floating_point or t.is_complex() or t.dtype == torch.bool:
        raise TypeError(f"labels must be integer class indices, got dtype {t.dtype}")
    if t.ndim != 1:
        raise ValueError(f"labels must be 1-D, got shape {tuple(t.shape)}")
    if t.shape[0] != n:
        raise ValueError(f"got {t.shape[0]} labels for {n} labeled logits rows")
    t = t.to(device=device if device is not None else t.device, dtype=torch.long)
    if n and (int(t.min()) < 0 or int(t.max()) >= n_classes):
        raise ValueError(
            f"labels must lie in [0, {n_classes}) (the number of logit columns), "
            f"got range [{int(t.min())}, {int(t.max())}]"
        )
    return t


def _check_real(value, name: str) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {value!r}")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value}")
    return value


def check_open_unit(value, name: str) -> float:
    """A float in the open interval (0, 1)."""
    value = _check_real(value, name)
    if not 0.0 < value < 1.0:
        raise ValueError(f"{name} must lie in the open interval (0, 1), got {value}")
    return value


def check_positive(value, name: str, *, allow_zero: bool = False) -> float:
    """A finite float > 0 (or >= 0 with ``allow_zero``)."""
    value = _check_real(value, name)
    if value < 0.0 or (value == 0.0 and not allow_zero):
        raise ValueError(f"{name} must be {'non-negative' if allow_zero else 'positive'}, got {value}")
    return value


def check_batch_size(batch_size) -> int:
    """A positive int mini-batch size."""
    return check_count(batch_size, "batch_size", allow_zero=False)
