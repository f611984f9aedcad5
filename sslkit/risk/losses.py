"""Loss matrices l(g(x), j) for every label j (paper A §2 and §4.1).

The estimators of :mod:`sslkit.risk` need, for each sample, the loss at *every* label, not only at the
true one: ``loss_matrix(outputs, loss)[s, j] = l(g(x_s), j)``. Labels are 0-based (paper A's class
``j`` is column ``j - 1``); in the binary case column 0 is paper A's class 1 (the positive class, as
in :func:`sslkit.data.binary_task`) and column 1 its class 2 (negative).

Losses
------
``"ce"``        softmax cross-entropy, ``l(g, j) = -log softmax(g)_j`` (asymmetric). outputs (n, k).
``"bce"``       binary cross-entropy of a real score g (paper A §6.1, ``-y log σ(g) - (1-y) log(1-σ(g))``):
                ``l(g, class 1) = softplus(-g)``, ``l(g, class 2) = softplus(g)`` -- a positive score
                means "class 1" (column 0). outputs (n,) or (n, 1); returns (n, 2). Asymmetric.
``"zero_one"``  ``l(g, j) = 1[argmax_c g_c != j]`` (ties go to the lowest index). Symmetric with
                α = k - 1 (Def. 1, eq. 13): each row has exactly one 0 and k - 1 ones. A 1-D score g
                is read as the logits (g/2, -g/2): g >= 0 predicts column 0. Not differentiable.
``"ramp"``      ``l(g, j) = 1 - sparsemax(g)_j``. sparsemax (Martins & Astudillo 2016) is the Euclidean
                projection of g onto the probability simplex, so the loss is piecewise linear, bounded
                in [0, 1] and symmetric with α = k - 1. For k = 2 and a score g (logits (g/2, -g/2)) it
                is exactly the binary ramp loss ``l(g, class 1) = clip((1 - g)/2, 0, 1)``,
                ``l(g, class 2) = clip((1 + g)/2, 0, 1)`` (Charoenphakdee et al. 2019, paper A ref. [6]).

numpy in -> numpy out (float64); torch in -> torch out (same device, autograd kept).
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

__all__ = ["LOSSES", "loss_matrix", "is_symmetric", "symmetric_constant"]

LOSSES = ("ce", "bce", "zero_one", "ramp")
_SYMMETRIC = {"ce": False, "bce": False, "zero_one": True, "ramp": True}


def _check_loss_name(loss):
    if not isinstance(loss, str) or loss not in _SYMMETRIC:
        raise ValueError(f"loss must be one of {LOSSES}, got {loss!r}")
    return loss


def is_symmetric(loss) -> bool:
    """True if ``loss`` satisfies paper A Def. 1 (Σ_j l(g(x), j) is constant): "zero_one" and "ramp"."""
    return _SYMMETRIC[_check_loss_name(loss)]


def symmetric_constant(loss, num_classes) -> float:
    """The constant α of Def. 1 (eq. 13) for a symmetric loss: k - 1 for both "zero_one" and "ramp"."""
    if not is_symmetric(loss):
        raise ValueError(f"loss {loss!r} is not symmetric; α (eq. 13) exists only for {('zero_one', 'ramp')}")
    if int(num_classes) < 2:
        raise ValueError(f"num_classes must be at least 2, got {num_classes}")
    return float(int(num_classes) - 1)


def _sparsemax(z):
    """Row-wise sparsemax of an (n, k) tensor (projection onto the simplex)."""
    k = z.shape[1]
    zs, _ = torch.sort(z, dim=1, descending=True)
    cs = zs.cumsum(dim=1)
    r = torch.arange(1, k + 1, device=z.device, dtype=z.dtype)
    support = (1 + r * zs) > cs
    k_z = support.sum(dim=1, keepdim=True)
    tau = (cs.gather(1, k_z - 1) - 1) / k_z.to(z.dtype)
    return torch.clamp(z - tau, min=0)


def loss_matrix(outputs, loss):
    """The (n, k) matrix ``L[s, j] = l(g(x_s), j)`` of paper A §2 for model outputs ``g(x_s)``.

    See the module docstring for the four losses and their label conventions.
    """
    loss = _check_loss_name(loss)
    numpy_in = not isinstance(outputs, torch.Tensor)
    if numpy_in:
        try:
            g = torch.from_numpy(np.asarray(outputs, dtype=np.float64))
        except (TypeError, ValueError) as err:
            raise TypeError(f"outputs must be an array of numbers, got {type(outputs).__name__}") from err
    else:
        g = outputs if outputs.is_floating_point() else outputs.to(torch.float32)
    if not bool(torch.isfinite(g.detach()).all()):
        raise ValueError("outputs contains NaN or infinite values")
    if g.ndim == 2 and g.shape[1] == 1:
        g = g[:, 0]
    if loss == "bce":
        if g.ndim != 1:
            raise ValueError(
                f"loss 'bce' needs a binary score of shape (n,) or (n, 1), got {tuple(outputs.shape)}; "
                "use 'ce' for (n, k) logits"
            )
        L = torch.stack([F.softplus(-g), F.softplus(g)], dim=1)
    else:
        if g.ndim == 1:
            if loss == "ce":
                raise ValueError(
                    f"loss 'ce' needs (n, k) logits with k >= 2, got shape {tuple(outputs.shape)}; "
                    "use 'bce' for a score"
                )
            g = torch.stack([g / 2, -g / 2], dim=1)
        if g.ndim != 2 or g.shape[1] < 2:
            raise ValueError(f"outputs must have shape (n, k) with k >= 2, got {tuple(outputs.shape)}")
        if loss == "ce":
            L = -F.log_softmax(g, dim=1)
        elif loss == "zero_one":
            pred = g.argmax(dim=1)
            L = 1 - F.one_hot(pred, g.shape[1]).to(g.dtype)
        else:  # ramp
            L = 1 - _sparsemax(g)
    return L.detach().numpy() if numpy_in else L
