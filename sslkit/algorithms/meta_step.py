"""The one-step approximation shared by the meta-reweighting baselines of paper C §2 / §4 (L2RW, DS3L).

Paper C §2 ("Robust semi-supervised loss"): robust SSL replaces the mask ``m`` of the unlabeled loss by a
learned weight vector ``w`` and solves the bi-level problem of eq. (1),

    w* = argmin_w L_S(D, θ*(w)),    θ*(w) = argmin_θ L_S(D, θ) + λ L_U(U, θ, w),

with the inner argmin replaced by one gradient step (Safe-SSL / DS3L, Guo et al. 2020; L2RW, Ren et al.
2018): ``θ'(w) = θ - α ∇_θ [L_S(D, θ) + λ L_U(U, θ, w)]`` and the outer loss ``L_S(D, θ'(w))`` on the
labeled batch.

Pieces (tensors in, tensors out, any device):

* :class:`RobustWrapper` -- the base class of the robust-SSL wrappers (L2RW, DS3L, CRUST's mixup): it holds
  the base algorithm, takes its ``lambda_u`` and ``warmup_epochs``, forwards ``setup`` and ``hooks`` to it;
* :func:`check_reweightable` -- the base SSL algorithm must use unlabeled data, declare a valid ``lambda_u``
  and not be a robust wrapper itself (``DS3L(DS3L(VAT()))`` would reweight twice; refused).
* :func:`split_base_loss` -- one call of the base algorithm with unlabeled weights 0 gives the part of its
  loss that no unlabeled weight touches, ``L_0`` (the supervised term), and the per-sample unlabeled
  losses ``m_j l_j`` with their graph; then ``L_0 + λ mean_j(v_j m_j l_j)`` is the base loss with any
  weights ``v`` (the contract: weights multiply the per-sample losses in a batch mean), so the inner and
  the final objective share this single forward pass (no redundant passes).
* :func:`one_step` -- ``θ' = θ - α ∇_θ L`` as a dict of tensors, differentiable (``create_graph=True``),
  applied with :func:`torch.func.functional_call` (no copied module, no hand-copied parameters).
* :func:`labeled_loss_at` -- ``L_S(θ') = CE(f_θ'(x_l), y_l)`` through ``functional_call``, with BatchNorm
  running statistics frozen (the meta pass must not move them; DS3L / L2RW run it on a throw-away copy).
"""

from __future__ import annotations

import math
import numbers

import torch
import torch.nn.functional as F
from torch import nn
from torch.func import functional_call

from sslkit.algorithms.base import Batch, SSLAlgorithm, frozen_bn, logits_of

__all__ = [
    "RobustWrapper",
    "check_reweightable",
    "split_base_loss",
    "one_step",
    "labeled_loss_at",
    "check_step_size",
    "trainable_parameters",
]


def check_step_size(value, name: str) -> float:
    """A positive finite float (an inner or meta learning rate)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a positive finite number, got {value!r}")
    return float(value)


def check_reweightable(base) -> SSLAlgorithm:
    """``base`` as an SSL algorithm whose unlabeled term can be reweighted per sample (clear errors)."""
    if not isinstance(base, SSLAlgorithm):
        raise TypeError(f"base must be an SSLAlgorithm (e.g. VAT(eps=...)), got {type(base).__name__}")
    if isinstance(base, RobustWrapper):
        raise ValueError(
            f"base {base!r} is itself a robust-SSL wrapper: wrap the SSL method once "
            "(e.g. DS3L(VAT(eps=2.0)), not DS3L(DS3L(...)) or L2RW(DS3L(...)))"
        )
    if not base.uses_unlabeled:
        raise ValueError(f"base {type(base).__name__} uses no unlabeled data: there is nothing to reweight")
    lam = base.lambda_u
    if isinstance(lam, bool) or not isinstance(lam, numbers.Real) or not math.isfinite(lam) or lam < 0:
        raise ValueError(
            f"base {type(base).__name__} must declare a finite lambda_u >= 0 (the unlabeled-loss "
            f"coefficient λ of paper C eq. 1), got {lam!r}"
        )
    return base


class RobustWrapper(SSLAlgorithm):
    """A robust-SSL method around a base SSL algorithm (module docstring): ``self.base`` (checked by
    :func:`check_reweightable`), its ``lambda_u`` and ``warmup_epochs``, its ``setup`` and ``hooks``."""

    uses_unlabeled = True

    def __init__(self, base):
        self.base = check_reweightable(base)
        self.lambda_u = base.lambda_u
        self.warmup_epochs = base.warmup_epochs

    def setup(self, model, ctx):
        self.base.setup(model, ctx)

    def hooks(self):
        return self.base.hooks()

    def has_unlabeled_losses(self) -> bool:
        return self.base.has_unlabeled_losses()


def split_base_loss(base: SSLAlgorithm, model: nn.Module, batch: Batch):
    """``(L_0, losses, out)``: the base loss with all unlabeled weights 0 (graph kept), the per-sample masked
    unlabeled losses ``m_j l_j`` (B,) with their graph, and the base's :class:`LossOutput`."""
    if batch.x_u is None:
        raise ValueError("a reweighting method needs an unlabeled batch (batch.x_u is None)")
    zero = torch.zeros(batch.x_u.shape[0], device=batch.x_u.device)
    out = base.loss(
        model, Batch(batch.x_l, batch.y_l, batch.x_u, batch.u_idx, zero, step=batch.step, epoch=batch.epoch)
    )
    if out.unlabeled is None:
        raise ValueError(
            f"base {type(base).__name__} returned no per-sample unlabeled losses "
            "(LossOutput.unlabeled): it cannot be reweighted"
        )
    losses = out.unlabeled.masked()
    if losses.shape[0] != batch.x_u.shape[0]:
        raise ValueError(f"base returned {losses.shape[0]} per-sample losses for {batch.x_u.shape[0]} unlabeled inputs")
    return out.loss, losses, out


def trainable_parameters(model: nn.Module) -> dict:
    """``name -> parameter`` of every parameter that requires a gradient."""
    params = {n: p for n, p in model.named_parameters() if p.requires_grad}
    if not params:
        raise ValueError("the model has no trainable parameters")
    return params


def one_step(model: nn.Module, loss: torch.Tensor, lr: float, params: dict | None = None) -> dict:
    """``θ' = θ - lr ∇_θ loss`` for the trainable parameters (a dict for :func:`functional_call`), kept
    differentiable (``create_graph=True``) so ``L_S(θ')`` can be differentiated with respect to whatever the
    loss depends on (L2RW's ε, DS3L's meta-network). The graph of ``loss`` is retained."""
    params = trainable_parameters(model) if params is None else params
    grads = torch.autograd.grad(loss, list(params.values()), create_graph=True, allow_unused=True)
    return {n: p if g is None else p - lr * g for (n, p), g in zip(params.items(), grads)}


def labeled_loss_at(model: nn.Module, params: dict, x_l: torch.Tensor, y_l: torch.Tensor) -> torch.Tensor:
    """``L_S(θ')``: the mean cross-entropy of the labeled batch under ``params`` (``functional_call``), with
    the BatchNorm running statistics left untouched."""
    with frozen_bn(model):
        z = logits_of(lambda x: functional_call(model, params, (x,)), x_l)
    return F.cross_entropy(z.float(), y_l)
