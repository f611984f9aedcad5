"""Per-sample last-layer gradients in closed form (paper C §3.4, "Last-layer gradients").

For a last layer ``z = W h + b`` (``nn.Linear(D, C)``: ``W`` is ``C x D``, ``b`` has ``C`` entries) and
any per-sample loss ``l_j(z_j)``, the chain rule gives, with ``g0_j = dl_j/dz_j`` (a ``C``-vector)::

    dl_j/db = g0_j,            dl_j/dW = g0_j h_j^T      (C x D, the outer product g0_j (x) h_j)

**Layout.** One row per sample: ``[dl/db (C entries), dl/dW flattened row-major (C*D entries)]``, i.e.
entry ``C + c*D + d`` is ``g0_c h_d``. This is ``torch.cat([lin.bias.grad, lin.weight.grad.flatten()])``
for ``lin = nn.Linear(D, C)`` and also CORDS' layout (``repeat_interleave(g0, D) * h.repeat(C)``, reference
notes §1.3), so rows can be checked against autograd and against CORDS. Width: ``C`` (bias only, CORDS'
``linear_layer=False``) or ``C (1 + D)`` (bias + weight; ``d = 10 * 129 = 1290`` for WRN-28-2 on CIFAR-10).

**Per class** (GradMatch's ``PerClassPerGradient``): for class ``c`` keep bias entry ``c`` and weight row
``c``: ``[g0_c, g0_c h]`` (width ``1 + D``, or 1 without features).

The gradients Retrieve uses (eq. (3)-(7)) are ``m_j grad l_u(x_j, theta_t)`` for the unlabeled side; pass
the per-sample *masked* losses ``m_j l_u(x_j)`` to :func:`logit_gradients`, then to
:func:`last_layer_gradients`. The labeled side, ``grad L_S`` with ``L_S`` the *mean* cross-entropy over the
labeled set (App. C: "L_S is the mean cross-entropy loss"), is :func:`labeled_gradient`.
"""

from __future__ import annotations

import torch

from sslkit._checks import check_features, check_labeled_not_empty, check_labels

__all__ = [
    "logit_gradients",
    "last_layer_gradients",
    "labeled_gradient",
    "cross_entropy_logit_gradients",
    "split_last_layer",
]


def logit_gradients(losses: torch.Tensor, logits: torch.Tensor, *, retain_graph: bool = False) -> torch.Tensor:
    """``g0 = dl_j/dz_j`` for every sample (``N x C``) by autograd: ``torch.autograd.grad(losses.sum(), logits)``.

    Works for any SSL algorithm that exposes its per-sample unlabeled losses (mask included, e.g.
    ``mask * ce``) and the logits tensor they were computed from (for VAT: the logits of the perturbed
    forward). Row ``j`` is sample ``j``'s own gradient because ``l_j`` depends only on ``z_j``: targets must
    be detached (teacher / weak-view / clean-view predictions), as the SSL losses treat them anyway.
    """
    if not isinstance(losses, torch.Tensor) or not isinstance(logits, torch.Tensor):
        raise TypeError("losses and logits must be torch tensors")
    if logits.ndim != 2:
        raise ValueError(f"logits must be 2-D (n_samples, n_classes), got shape {tuple(logits.shape)}")
    if losses.ndim != 1 or losses.shape[0] != logits.shape[0]:
        raise ValueError(
            f"losses must be 1-D with one entry per logits row ({logits.shape[0]}), "
            f"got shape {tuple(losses.shape)}: pass per-sample losses (reduction='none')"
        )
    if not losses.requires_grad or not logits.requires_grad:
        raise ValueError(
            "losses must be computed from logits with autograd on (logits.requires_grad is False "
            "or the losses were detached)"
        )
    try:
        (g0,) = torch.autograd.grad(losses.sum(), logits, retain_graph=retain_graph)
    except RuntimeError as exc:
        raise ValueError(f"losses do not depend on logits through autograd: {exc}") from exc
    g0 = g0.detach()
    if not bool(torch.isfinite(g0).all()):
        raise ValueError("the loss gradients w.r.t. the logits contain NaN or infinite values")
    return g0


def last_layer_gradients(g0, features=None, *, classes=None) -> torch.Tensor:
    """Per-sample last-layer gradients ``[g0 | g0 (x) h]`` in closed form (layout: module docstring).

    * ``g0``: ``N x C`` logit gradients (:func:`logit_gradients`).
    * ``features``: ``N x D`` penultimate features ``h`` (the input of the last ``nn.Linear``), or ``None``
      for the bias part only (width ``C``).
    * ``classes``: ``None`` (all classes), an int ``c`` or an ``N``-vector of ints (one class per row, e.g.
      pseudo-labels): keep bias entry ``c`` and weight row ``c`` only (width ``1`` or ``1 + D``).

    Returns an ``N x width`` tensor on ``g0``'s device and dtype (float32 unless ``g0`` is float64).
    """
    g0 = check_features(g0, "g0")
    n, C = g0.shape
    h = None
    if features is not None:
        h = check_features(features, "features", device=g0.device, dtype=g0.dtype)
        if h.shape[0] != n:
            raise ValueError(f"features has {h.shape[0]} rows but g0 has {n}")
    if classes is not None:
        if isinstance(classes, int) and not isinstance(classes, bool):
            c = torch.full((n,), classes, dtype=torch.long, device=g0.device)
        else:
            c = torch.as_tensor(classes, device=g0.device)
            if c.ndim != 1:
                raise ValueError(f"classes must be an int or a 1-D tensor of class indices, got shape {tuple(c.shape)}")
        c = check_labels(c, n, C, device=g0.device)
        g0 = g0.gather(1, c[:, None])  # N x 1: bias entry c; weight row c = g0_c h
        C = 1
    if h is None:
        return g0.clone()
    return torch.cat([g0, (g0[:, :, None] * h[:, None, :]).reshape(n, C * h.shape[1])], dim=1)


def cross_entropy_logit_gradients(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """``d CE(z_i, y_i) / d z_i = softmax(z_i) - onehot(y_i)`` for every row (no reduction)."""
    r = torch.softmax(logits, dim=1)
    r[torch.arange(r.shape[0], device=r.device), labels] -= 1.0
    return r


def _mean_last_layer(g0: torch.Tensor, h: torch.Tensor | None) -> torch.Tensor:
    """Mean over rows of ``[g0 | g0 (x) h]`` without forming the ``N x C x D`` tensor: ``[mean g0, g0^T h / N]``."""
    n = g0.shape[0]
    bias = g0.mean(dim=0)
    if h is None:
        return bias
    return torch.cat([bias, (g0.T @ h).reshape(-1) / n])


def labeled_gradient(logits, labels, features=None) -> torch.Tensor:
    """``grad_theta L_S`` of the mean cross-entropy over the labeled set, last layer only (eq. (3), (5)).

    ``logits``: ``n x C`` labeled logits, ``labels``: ``n`` class indices, ``features``: ``n x D`` labeled
    penultimate features or ``None`` (bias part only). Returns a vector of width ``C`` or ``C (1 + D)`` in
    the layout of :func:`last_layer_gradients`; it equals the autograd gradient of
    ``F.cross_entropy(lin(features), labels)`` w.r.t. ``(lin.bias, lin.weight)``.
    """
    check_labeled_not_empty(logits)
    z = check_features(logits, "labeled logits")
    y = check_labels(labels, z.shape[0], z.shape[1], device=z.device)
    h = None
    if features is not None:
        h = check_features(features, "labeled features", device=z.device, dtype=z.dtype)
        if h.shape[0] != z.shape[0]:
            raise ValueError(f"labeled features has {h.shape[0]} rows but labeled logits has {z.shape[0]}")
    return _mean_last_layer(cross_entropy_logit_gradients(z, y), h)


def split_last_layer(vector: torch.Tensor, n_classes: int) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Split gradient rows (shape ``(..., width)``) into the bias part ``(..., C)`` and the weight part ``(..., C, D)``.

    The inverse of the layout above; the weight part is ``None`` when ``width == C``.
    """
    width = vector.shape[-1]
    if width == n_classes:
        return vector, None
    if width <= n_classes or (width - n_classes) % n_classes:
        raise ValueError(f"gradient width {width} is neither C = {n_classes} nor C (1 + D)")
    D = (width - n_classes) // n_classes
    return vector[..., :n_classes], vector[..., n_classes:].reshape(*vector.shape[:-1], n_classes, D)
