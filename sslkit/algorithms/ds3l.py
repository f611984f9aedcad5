"""DS3L / Safe-SSL (Guo et al., ICML 2020, "Safe deep semi-supervised learning for unseen-class unlabeled
data"): a meta-network weights each unlabeled sample; paper C eq. (1) with one-step approximations.

Paper C eq. (1): ``w* = argmin_w L_S(D, argmin_θ [L_S(D, θ) + λ L_U(U, θ, w)])`` with the weights produced
by a small network ``w_j = g_φ(x_j)``; both levels are solved by one gradient step ("Safe-SSL also uses a
single-step gradient approximation to solve the outer level problem as well"). One training step, with
``l_j = m_j l_u(x_j, θ)`` the base's per-sample unlabeled losses (paper C: VAT), ``u_j`` the batch's own
weights (``Batch.u_weight``, 1 when None) and ``L_0`` the base's loss with all unlabeled weights 0 (the
supervised term):

1. ``v_j = g_φ(p_j)``, ``p_j = softmax(z_j)`` -- the meta-network (DS3L's ``WNet``: Linear(C, 100), ReLU,
   Linear(100, 1), sigmoid) on the model's class probabilities; ``ŵ_j = v_j / Σ_k v_k`` (DS3L's
   normalisation by the sum of the weights);
2. inner level: ``θ'(φ) = θ - α ∇_θ [L_0(θ) + λ Σ_j ŵ_j(φ) u_j l_j(θ)]`` -- one functional SGD step
   (:func:`sslkit.algorithms.meta_step.one_step`, ``torch.func.functional_call``), ``α = inner_lr``;
3. outer level: one step of the meta-network's own optimiser on ``∇_φ L_S(θ'(φ))`` (``L_S``: mean
   cross-entropy of the labeled batch, the clean set of F.3);
4. the model's loss ``L_0(θ) + λ Σ_j ŵ_j u_j l_j(θ)`` with the *updated* meta-network's weights (detached),
   as DS3L's code recomputes them after the meta step; the trainer back-propagates it.

Settings from DS3L's released code (github.com/guolz-ml/DS3L, ``train.py``): meta-network optimiser Adam
with lr 3e-4 (``meta_lr``), inner step ``α = 1e-3`` (its ``--meta_lr``, used as ``lr_inner``), hidden
width 100. Differences (documented): the meta-network's input ``p_j`` is the softmax of the logits the base's
per-sample losses come from, detached (VAT: the perturbed pass; DS3L's code feeds the clean pass and lets
the gradient of the inner step flow through ``p_j`` into θ); no extra forward is made for it. DS3L's code
divides the meta step's weighted loss by the weight vector instead of its sum (``/ weight``); we use the sum
at both levels, as its model update does. DS3L's own consistency loss (an MSE Π-model with a ramp-up to 10)
is replaced by the base algorithm's (paper C runs DS3L with VAT). :meth:`DS3L.unlabeled_losses` (an
inspection, e.g. a coreset selection) weights the base's per-sample losses with the current meta-network and
makes no meta step.

Contract: as :class:`~sslkit.algorithms.l2rw.L2RW`, ``LossOutput.unlabeled`` carries ``m_j l_j`` with the
mask ``B ŵ_j``. Logs: ``loss``, ``sup_loss``, ``unsup_loss``, ``meta_loss`` (``L_S(θ')`` before the meta
step), ``weight_mean`` (mean raw ``v_j``).
"""

from __future__ import annotations

import numbers

import torch
from torch import nn

from sslkit.algorithms.base import LossOutput, UnlabeledLosses, weighted_mean
from sslkit.algorithms.meta_step import RobustWrapper, check_step_size, labeled_loss_at, one_step, split_base_loss

__all__ = ["DS3L", "MetaWeightNet"]


class MetaWeightNet(nn.Module):
    """DS3L's ``WNet``: ``sigmoid(Linear(hidden, 1)(relu(Linear(n_in, hidden)(p))))``, one weight in (0, 1)
    per row of ``p`` (returned as a 1-D tensor)."""

    def __init__(self, n_in: int, hidden: int = 100):
        super().__init__()
        for v, name in ((n_in, "n_in"), (hidden, "hidden")):
            if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 1:
                raise ValueError(f"{name} must be a positive integer, got {v!r}")
        self.net = nn.Sequential(nn.Linear(int(n_in), int(hidden)), nn.ReLU(), nn.Linear(int(hidden), 1))

    def forward(self, p: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(self.net(p)).squeeze(1)


def normalized(v: torch.Tensor) -> torch.Tensor:
    """``v / Σ v`` (DS3L), or ``v`` itself when the sum is 0."""
    total = v.sum()
    return v / total if float(total.detach()) > 0 else v


class DS3L(RobustWrapper):
    """``DS3L(base, inner_lr=1e-3, meta_lr=3e-4, hidden=100)`` (module docstring).

    ``base``: an SSL algorithm with per-sample unlabeled losses and ``lambda_u`` (paper C: :class:`VAT`).
    The meta-network (:class:`MetaWeightNet`) and its Adam optimiser are created at :meth:`setup` on the
    fit's device (from the global RNG, which the trainer seeds). Attributes: ``meta_net_``,
    ``meta_optimizer_``, ``weights_`` (the last batch's normalised weights ``ŵ``, detached).
    """

    name = "ds3l"

    def __init__(self, base, *, inner_lr=1e-3, meta_lr=3e-4, hidden=100):
        super().__init__(base)
        self.inner_lr = check_step_size(inner_lr, "inner_lr")
        self.meta_lr = check_step_size(meta_lr, "meta_lr")
        if isinstance(hidden, bool) or not isinstance(hidden, numbers.Integral) or hidden < 1:
            raise ValueError(f"hidden must be a positive integer, got {hidden!r}")
        self.hidden = int(hidden)
        self.meta_net_ = self.meta_optimizer_ = self.weights_ = None

    def setup(self, model, ctx):
        super().setup(model, ctx)
        self.meta_net_ = MetaWeightNet(ctx.num_classes, self.hidden).to(ctx.device)
        self.meta_optimizer_ = torch.optim.Adam(self.meta_net_.parameters(), lr=self.meta_lr)

    def _net(self):
        if self.meta_net_ is None:
            raise RuntimeError("DS3L.setup(model, ctx) must run before loss() (the trainer calls it in fit)")
        return self.meta_net_

    def _probs(self, u: UnlabeledLosses) -> torch.Tensor:
        """The meta-network's input: the detached softmax of the logits the base's losses come from."""
        if u.logits is None:
            raise ValueError(
                f"base {type(self.base).__name__} returns no logits with its per-sample losses: "
                "the meta-network has no input"
            )
        return torch.softmax(u.logits.detach().float(), dim=1)

    def meta_objective(self, model, batch, sup, losses, probs):
        """``L_S(θ'(φ))`` (steps 1-2), differentiable with respect to the meta-network's parameters φ."""
        u = torch.ones_like(losses) if batch.u_weight is None else batch.u_weight.to(losses.dtype)
        w = normalized(self._net()(probs))
        theta = one_step(model, sup + self.base.lambda_u * (w * u * losses).sum(), self.inner_lr)
        return labeled_loss_at(model, theta, batch.x_l, batch.y_l)

    def unlabeled_losses(self, model, x_u, u_idx=None):
        """The base's per-sample losses ``m_j l_j`` with the mask ``B ŵ_j`` of the current meta-network (no
        meta step)."""
        u = self.base.unlabeled_losses(model, x_u, u_idx)
        losses = u.masked()
        with torch.no_grad():
            w = normalized(self._net()(self._probs(u))).to(losses.dtype)
        return UnlabeledLosses(losses, w * losses.shape[0], u.logits, u.features)

    def loss(self, model, batch):
        net = self._net()
        sup, losses, base_out = split_base_loss(self.base, model, batch)
        u = base_out.unlabeled
        probs = self._probs(u)
        meta = self.meta_objective(model, batch, sup, losses, probs)
        params = list(net.parameters())
        grads = torch.autograd.grad(meta, params, retain_graph=True)
        self.meta_optimizer_.zero_grad(set_to_none=True)
        for p, g in zip(params, grads):
            p.grad = g.detach()
        self.meta_optimizer_.step()
        with torch.no_grad():
            v = net(probs)
        w = normalized(v).to(losses.dtype)
        self.weights_ = w
        mask = w * losses.shape[0]
        unsup = weighted_mean(losses * mask, batch.u_weight)
        total = sup + self.base.lambda_u * unsup
        logs = {
            "loss": total.detach(),
            "sup_loss": sup.detach(),
            "unsup_loss": unsup.detach(),
            "meta_loss": meta.detach(),
            "weight_mean": v.mean(),
        }
        return LossOutput(total, logs, UnlabeledLosses(losses, mask, u.logits, u.features))

    def __repr__(self):
        return f"DS3L({self.base!r}, inner_lr={self.inner_lr}, meta_lr={self.meta_lr}, hidden={self.hidden})"
