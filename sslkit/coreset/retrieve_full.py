"""Retrieve with full-model gradients: the alternative that paper C §3.4 avoids ("By simply using the last-layer
gradients, we achieve significant speedups in Retrieve").

Everything is :class:`~sslkit.coreset.retrieve.Retrieve`'s (eq. (5)-(7), the same greedy variants, the same
candidate draws under a seed) except the parameters that move: all of the model's trainable parameters instead of
its last layer. The unlabeled side is one row per sample, ``G_j = m_j grad_theta l_u(x_j, theta_t)`` over every
trainable parameter (:func:`per_sample_gradients`, ``P`` columns); the labeled side has no closed form, so each
re-linearisation ``grad L_S(theta^S)`` is a forward and backward pass of the labeled set through the model at the
parameters ``theta^S`` (``torch.func.functional_call``). With a model whose only trainable parameters are its last
layer the two selections coincide (tested), which is what makes the cost comparison a comparison of gradients only.

Layout: the parameters in ``model.named_parameters()`` order, each flattened row-major (not the last-layer layout
``[bias | weight]`` of :mod:`.gradients`; the gains do not depend on the order as long as both sides share it).
"""

from __future__ import annotations

import time

import torch

from sslkit._checks import check_budget, check_gradients, check_labels
from sslkit.coreset.retrieve import Retrieve

__all__ = ["per_sample_gradients", "RetrieveFullModel", "trainable_parameters"]


def trainable_parameters(model: torch.nn.Module) -> list[tuple[str, torch.nn.Parameter]]:
    """``[(name, parameter)]`` of ``model``'s parameters that require gradients, in ``named_parameters`` order."""
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    named = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    if not named:
        raise ValueError("the model has no trainable parameter (every requires_grad is False)")
    return named


def _fixed_tensors(model: torch.nn.Module, trainable) -> dict:
    """What ``functional_call`` needs besides the trainable parameters (names in ``trainable``): the frozen
    parameters and the buffers (BatchNorm statistics), detached, as they are."""
    fixed = {name: p.detach() for name, p in model.named_parameters() if name not in trainable}
    fixed.update(dict(model.named_buffers()))
    return fixed


def per_sample_gradients(model: torch.nn.Module, inputs, loss, *extras, batch_size: int = 256) -> torch.Tensor:
    """Per-sample gradients of ``loss`` with respect to every trainable parameter of ``model``, an ``N x P`` tensor.

    Row ``j`` is the gradient (flattened in :func:`trainable_parameters` order) of ``loss(logits_j, *extras_j)``, the
    loss of sample ``j`` alone.

    ``inputs`` (``N x ...``) go through ``model`` one sample at a time under ``torch.func.vmap`` (one vectorised
    pass per batch of ``batch_size``); ``loss`` gets that sample's logits (``1 x C``) and its rows of ``extras``
    (each ``N x ...``: detached targets, masks), each with a leading dimension of 1, and returns a scalar. For an SSL
    algorithm the inputs are what its unlabeled loss feeds the model (for VAT the adversarially perturbed images)
    and the extras what the loss treats as constants (VAT's clean predictions). The model is used as it is (its
    train / eval flags): BatchNorm must not use batch statistics, which couple the samples."""
    if not isinstance(inputs, torch.Tensor) or inputs.ndim < 1 or not len(inputs):
        raise ValueError("inputs must be a non-empty tensor, one row per sample")
    n = inputs.shape[0]
    for e in extras:
        if not isinstance(e, torch.Tensor) or e.ndim < 1 or e.shape[0] != n:
            raise ValueError(f"every extra must be a tensor with one row per input ({n} rows)")
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive int, got {batch_size!r}")
    named = trainable_parameters(model)
    params = {name: p.detach() for name, p in named}
    fixed = _fixed_tensors(model, params)

    def one(params, x, *ex):
        out = torch.func.functional_call(model, {**fixed, **params}, (x.unsqueeze(0),))
        value = loss(out[0] if isinstance(out, tuple) else out, *(e.unsqueeze(0) for e in ex))
        if not isinstance(value, torch.Tensor) or value.ndim != 0:
            raise ValueError("loss must return a scalar tensor (the loss of one sample)")
        return value

    per_sample = torch.func.vmap(torch.func.grad(one), in_dims=(None, 0, *(0 for _ in extras)))
    rows = []
    for start in range(0, n, batch_size):
        chunk = slice(start, min(start + batch_size, n))
        grads = per_sample(params, inputs[chunk], *(e[chunk] for e in extras))
        rows.append(torch.cat([grads[name].reshape(grads[name].shape[0], -1) for name, _ in named], dim=1))
    return torch.cat(rows)


class _ModelSide:
    """The labeled side of eq. (5) for the whole model: the parameter vector ``theta^S``, stepped by ``step``,
    and ``grad L_S(theta^S)`` (mean cross-entropy of the labeled set) by a forward / backward pass at it."""

    def __init__(self, model, x, y, dtype):
        named = trainable_parameters(model)
        self.model, self.x, self.y = model, x, y
        self.names = [n for n, _ in named]
        self.shapes = [p.shape for _, p in named]
        self.sizes = [p.numel() for _, p in named]
        self.theta = torch.cat([p.detach().reshape(-1) for _, p in named]).to(dtype)
        self.fixed = _fixed_tensors(model, set(self.names))

    def step(self, vector: torch.Tensor, scale: float) -> None:
        self.theta.sub_(vector, alpha=scale)

    def gradient(self, malformed: bool = False) -> torch.Tensor:
        if malformed:
            raise ValueError("the full-model variant has no CORDS-compatible mode (cords_compatible=False)")
        leaves = [t.reshape(s).clone().requires_grad_(True) for t, s in zip(self.theta.split(self.sizes), self.shapes)]
        params = {**self.fixed, **dict(zip(self.names, leaves))}
        out = torch.func.functional_call(self.model, params, (self.x,))
        logits = out[0] if isinstance(out, tuple) else out
        if logits.dtype in (torch.float16, torch.bfloat16):  # the loss in float32 at least, never below the model's
            logits = logits.float()
        loss = torch.nn.functional.cross_entropy(logits, self.y)
        grads = torch.autograd.grad(loss, leaves)
        return torch.cat([g.reshape(-1) for g in grads]).to(self.theta.dtype)


class RetrieveFullModel(Retrieve):
    """Retrieve's greedy selection with full-model gradients (module docstring).

    ``RetrieveFullModel(k, greedy="stochastic", epsilon=0.01, rounds=15, lr=0.03, lam=1.0, seed=0)
    .fit(unlabeled_grads, model, labeled_inputs, labels)``: ``unlabeled_grads`` ``N x P`` from
    :func:`per_sample_gradients` at the model's current parameters; ``model`` whose forward returns logits (or
    ``(logits, features)``), in the mode the selection should see (e.g. ``eval``); ``labeled_inputs`` and
    ``labels`` the labeled set. Attributes as :class:`~.retrieve.Retrieve`'s. A diagnostic for the cost of
    §3.4's choice, not a training strategy: it has no ``select``.
    """

    needs = ()

    def __init__(self, k, *, greedy="stochastic", epsilon=0.01, rounds=15, lr=0.03, lam=1.0, seed=0):
        super().__init__(k, greedy=greedy, epsilon=epsilon, rounds=rounds, lr=lr, lam=lam, seed=seed)

    def fit(self, unlabeled_grads, model, labeled_inputs, labels):
        t_start = time.perf_counter()
        G = check_gradients(unlabeled_grads)
        N = G.shape[0]
        k = check_budget(self.k, N)
        if not isinstance(labeled_inputs, torch.Tensor) or labeled_inputs.ndim < 1 or not len(labeled_inputs):
            raise ValueError("labeled_inputs must be a non-empty tensor of labeled samples")
        x = labeled_inputs.to(G.device)
        with torch.no_grad():
            out = model(x)
        logits = out[0] if isinstance(out, tuple) else out
        y = check_labels(labels, x.shape[0], logits.shape[1], device=G.device)
        side = _ModelSide(model, x, y, G.dtype)
        if G.shape[1] != side.theta.numel():
            raise ValueError(
                f"unlabeled gradients have width {G.shape[1]}, but the model has {side.theta.numel()} trainable "
                "parameters: compute them with per_sample_gradients on the same model"
            )
        side.step(side.gradient(), self.lr)  # eq. (5): theta^0 = theta_t - a grad L_S(theta_t)
        return self._greedy(G, k, side, self.lr * self.lam, self.lr * self.lam, t_start)

    def fit_inputs(self, inputs):
        raise NotImplementedError("RetrieveFullModel measures §3.4's alternative; it is not a training strategy")

    def __repr__(self):
        return (
            f"RetrieveFullModel(k={self.k}, greedy={self.greedy!r}, epsilon={self.epsilon}, rounds={self.rounds}, "
            f"lr={self.lr}, lam={self.lam}, seed={self.seed})"
        )
