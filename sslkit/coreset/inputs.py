"""A coreset strategy's inputs from the user's own PyTorch training loop: :func:`selection_inputs`.

sslkit's :class:`~sslkit.callbacks.CoresetSelection` builds a :class:`~sslkit.coreset.SelectionInputs` inside its
own trainer. A loop written by hand (its own ``DataLoader``\\ s, optimiser and loss) gets the same record from one
call at the current model: the per-sample last-layer gradients of the unlabeled loss (paper C §3.4, closed form
from the gradients with respect to the logits, :func:`~sslkit.coreset.last_layer_gradients`), the labeled set's
logits, labels and penultimate features, the pool's pseudo-labels, and the round's step size ``α_t`` and weight
``λ_t`` of eq. (5). Then ``strategy.select(inputs)`` returns the coreset's indices (rows of the unlabeled pool, in
the order the pool was given) and weights.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from sslkit._checks import check_count, from_torch_data
from sslkit.coreset.gradients import last_layer_gradients, logit_gradients
from sslkit.coreset.strategy import NEEDS, SelectionInputs

__all__ = ["selection_inputs", "pseudo_label_losses"]

#: the gradient layouts: the bias part only, or the bias and the weights of the last linear layer
GRADIENTS = ("bias", "bias_weight")


def pseudo_label_losses(logits: torch.Tensor) -> torch.Tensor:
    """Per-sample cross-entropy against the model's own hard pseudo-labels (``argmax``, detached): the default
    unlabeled loss of :func:`selection_inputs` (Pseudo-Label's loss without its confidence mask)."""
    return F.cross_entropy(logits, logits.detach().argmax(dim=1), reduction="none")


def selection_inputs(
    model,
    X_u,
    X_l=None,
    y_l=None,
    *,
    lr,
    lam: float = 1.0,
    unlabeled_loss=None,
    needs=NEEDS,
    gradients: str = "bias",
    chunk: int = 512,
    draw: int = 0,
) -> SelectionInputs:
    """The :class:`~sslkit.coreset.SelectionInputs` of one selection round at ``model``'s current weights.

    Parameters
    ----------
    model : torch.nn.Module returning logits, or ``(logits, penultimate features)`` (needed for
        ``gradients="bias_weight"``); evaluated in eval mode (dropout off, BatchNorm running statistics, its
        train/eval flags restored after) on the device of its parameters.
    X_u : the unlabeled pool: a tensor, numpy array, ``Dataset`` or ``DataLoader`` (of ``x`` or ``(x, y)``,
        ``y`` ignored; read once, in order: do not shuffle it). The selected indices are rows of it.
    X_l, y_l : the labeled set (arrays, or ``X_l`` a ``Dataset`` / ``DataLoader`` of ``(x, y)`` and ``y_l`` None);
        needed for ``"labeled"`` (Retrieve's ``∇L_S``).
    lr : ``α_t``, the optimiser's current learning rate (``optimizer.param_groups[0]["lr"]``).
    lam : ``λ_t``, the weight of the unlabeled loss in the training objective (eq. (2)).
    unlabeled_loss : a function ``logits -> per-sample losses`` (shape ``(n,)``, differentiable in the logits,
        targets detached), the unlabeled term of the user's loss; default :func:`pseudo_label_losses`.
    needs : which fields to compute (``strategy.needs``; default all of ``"gradients"``, ``"labeled"``,
        ``"pseudo_labels"``).
    gradients : ``"bias"`` (the last layer's bias part, width C) or ``"bias_weight"`` (``[g0 | g0 ⊗ h]``).
    chunk : rows per forward pass. draw : the selection round (seeds a strategy's random parts).
    """
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    if gradients not in GRADIENTS:
        raise ValueError(f"gradients must be one of {GRADIENTS}, got {gradients!r}")
    needs = tuple(needs)
    unknown = sorted(set(needs) - set(NEEDS))
    if unknown:
        raise ValueError(f"needs must be a subset of {NEEDS}, got {unknown}")
    chunk = check_count(chunk, "chunk", allow_zero=False)
    loss_fn = pseudo_label_losses if unlabeled_loss is None else unlabeled_loss
    if not callable(loss_fn):
        raise TypeError(f"unlabeled_loss must be a function logits -> per-sample losses, got {loss_fn!r}")
    param = next(model.parameters(), None)
    device = param.device if param is not None else torch.device("cpu")
    Xu = _features(from_torch_data(X_u, "X_u", labels=False)[0], "X_u", device)
    n = Xu.shape[0]
    G = Z = y = H = pseudo = None
    flags = [(m, m.training) for m in model.modules()]
    model.eval()
    try:
        if "gradients" in needs:
            G = torch.cat([_gradients(model, Xu[i : i + chunk], loss_fn, gradients) for i in range(0, n, chunk)])
        if "labeled" in needs:
            X_l, pairs = from_torch_data(X_l, "X_l")
            y_l = pairs if pairs is not None else y_l
            if X_l is None or y_l is None:
                raise ValueError("the labeled side ('labeled' in needs) needs X_l and y_l")
            Xl = _features(X_l, "X_l", device)
            y = torch.as_tensor(y_l, device=device).long()
            if y.shape != (Xl.shape[0],):
                raise ValueError(f"y_l must have one label per row of X_l ({Xl.shape[0]}), got shape {tuple(y.shape)}")
            with torch.no_grad():
                outs = [_logits_features(model, Xl[i : i + chunk]) for i in range(0, Xl.shape[0], chunk)]
            Z = torch.cat([z.float() for z, _ in outs])
            H = torch.cat([_need_features(h).float() for _, h in outs]) if gradients == "bias_weight" else None
        if "pseudo_labels" in needs:
            with torch.no_grad():
                pseudo = torch.cat(
                    [_logits_features(model, Xu[i : i + chunk])[0].argmax(1) for i in range(0, n, chunk)]
                )
    finally:
        for m, flag in flags:
            m.training = flag
    return SelectionInputs(n, G, Z, y, H, pseudo, lr=lr, base_lr=lr, lam=lam, draw=draw)


def _features(X, name: str, device) -> torch.Tensor:
    t = torch.as_tensor(X)
    if not t.is_floating_point() or t.dim() < 2 or t.shape[0] == 0:
        raise ValueError(
            f"{name} must be floating (n_samples, ...) data with n_samples >= 1, got {t.dtype} {tuple(t.shape)}"
        )
    return t.to(device=device, dtype=torch.float32)


def _logits_features(model, x):
    out = model(x)
    return (out[0], out[1]) if isinstance(out, (tuple, list)) else (out, None)


def _need_features(h):
    if h is None:
        raise ValueError(
            "gradients='bias_weight' needs the penultimate features: the model must return (logits, features)"
        )
    return h


def _gradients(model, x, loss_fn, gradients: str) -> torch.Tensor:
    with torch.enable_grad():
        logits, h = _logits_features(model, x)
        losses = loss_fn(logits)
        g0 = logit_gradients(losses, logits)
    return last_layer_gradients(g0, _need_features(h).detach() if gradients == "bias_weight" else None)
