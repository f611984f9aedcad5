"""Learning to Reweight Examples (L2RW; Ren et al., ICML 2018, Algorithm 1) adapted to SSL (paper C §4, F.3).

L2RW treats the per-example weights as hyper-parameters and sets them, at every step, from the
meta-gradient of a clean loss after a one-step look-ahead. Paper C reweights the *unlabeled* term of a base
SSL method (VAT) and uses the labeled batch as the clean set ("estimate ... based on a clean labeled set
(which could also be the original labeled set)", F.3). One step, with ``l_j = m_j l_u(x_j, θ)`` the base's
per-sample unlabeled losses and ``u_j`` the batch's own weights (``Batch.u_weight``, 1 when None):

1. ``ε = 0`` (B,), requiring a gradient;
2. ``θ'(ε) = θ - α ∇_θ [L_0(θ) + λ Σ_j ε_j u_j l_j(θ)]`` -- one functional SGD step
   (:func:`sslkit.algorithms.meta_step.one_step`, ``torch.func.functional_call``);
3. ``w̃_j = max(-∂ L_S(θ'(ε)) / ∂ε_j |_{ε=0}, 0)`` with ``L_S`` the mean cross-entropy of the labeled batch;
4. ``w_j = w̃_j / Σ_k w̃_k`` (all 0 when the sum is 0), Ren et al.'s normalisation over the batch;
5. the returned loss ``L_0(θ) + λ Σ_j w_j u_j l_j(θ)`` (``w`` detached), back-propagated by the trainer.

**Adaptation choice (documented).** Ren et al.'s look-ahead steps on the whole training loss. In SSL the
training loss is ``L_S + λ L_U(w)`` (paper C eq. 1 and its one-step form ``θ - α∇L_S - αλ∇L_U(w)``), so
the inner step includes the supervised term ``L_0`` (``inner_supervised=True``, default; it shifts the
point ``θ' = θ - α∇L_S`` at which the labeled gradient is taken). With ``inner_supervised=False`` the step
is Ren et al.'s literal ``θ - α ∇ Σ ε_j l_j`` (then ``θ' = θ`` at ``ε = 0`` and ``w̃_j ∝ max(∇L_Sᵀ∇l_j, 0)``).
At ``ε = 0``: ``∂L_S(θ')/∂ε_j = -α λ u_j ∇L_S(θ')ᵀ ∇l_j(θ)``, so α and λ only scale ``w̃`` (which the
normalisation removes) and move ``θ'``. ``L_0`` is the base's loss with all unlabeled weights 0 (VAT: the
supervised cross-entropy).

Contract: ``LossOutput.unlabeled`` carries the base's per-sample losses ``m_j l_j`` with the mask
``B w_j`` (paper C §2: robust SSL "replaces the mask vector m with a weight vector w"; the factor B makes
the batch mean ``mean_j(u_j B w_j l_j)`` equal the weighted sum), so ``unsup_loss`` is their weighted mean.
Cost: one forward of the base (shared by steps 2 and 5), one double backward, one labeled forward at θ'.
Logs: ``loss``, ``sup_loss`` (``L_0``), ``unsup_loss``, ``meta_loss`` (``L_S(θ')``), ``weight_nonzero``
(fraction of the batch with ``w_j > 0``).
"""

from __future__ import annotations

import torch

from sslkit.algorithms.base import LossOutput, UnlabeledLosses, weighted_mean
from sslkit.algorithms.meta_step import RobustWrapper, check_step_size, labeled_loss_at, one_step, split_base_loss

__all__ = ["L2RW", "l2rw_weights"]


def l2rw_weights(meta_grad: torch.Tensor) -> torch.Tensor:
    """Ren et al. Algorithm 1, lines 10-11: ``w̃ = max(-g, 0)``, ``w = w̃ / Σ w̃`` (all 0 when ``Σ w̃ = 0``)."""
    if not isinstance(meta_grad, torch.Tensor) or meta_grad.dim() != 1:
        raise ValueError("meta_grad must be a 1-D tensor (one meta-gradient per sample)")
    if not bool(torch.isfinite(meta_grad).all()):
        raise ValueError("the meta-gradient contains NaN or infinite values")
    w = torch.clamp(-meta_grad.detach(), min=0.0)
    total = w.sum()
    return w / total if float(total) > 0 else w


class L2RW(RobustWrapper):
    """``L2RW(base, inner_lr=1e-3, inner_supervised=True)`` (module docstring).

    ``base``: an SSL algorithm with per-sample unlabeled losses and ``lambda_u`` (paper C: :class:`VAT`).
    ``inner_lr``: α of the look-ahead step; Ren et al.'s code uses the optimiser's learning rate (set it to
    the trainer's ``lr``). Attribute after each step: ``weights_`` (the last batch's ``w``, detached).
    """

    name = "l2rw"

    def __init__(self, base, *, inner_lr=1e-3, inner_supervised=True):
        super().__init__(base)
        self.inner_lr = check_step_size(inner_lr, "inner_lr")
        if not isinstance(inner_supervised, bool):
            raise TypeError(f"inner_supervised must be a bool, got {inner_supervised!r}")
        self.inner_supervised = inner_supervised
        self.weights_ = None

    def unlabeled_losses(self, model, x_u, u_idx=None):
        """The base's per-sample losses, unweighted: L2RW's weights are meta-gradients against a labeled
        batch (the clean set), which an inspection of unlabeled rows alone does not have."""
        return self.base.unlabeled_losses(model, x_u, u_idx)

    def meta_weights(self, model, batch, sup, losses):
        """``(w, L_S(θ'))`` for the batch: steps 1-4 of the module docstring (``w`` detached, sums to 1 or is 0)."""
        u = torch.ones_like(losses) if batch.u_weight is None else batch.u_weight.to(losses.dtype)
        eps = torch.zeros_like(losses, requires_grad=True)
        inner = self.base.lambda_u * (eps * u * losses).sum()
        if self.inner_supervised:
            inner = sup + inner
        theta = one_step(model, inner, self.inner_lr)
        meta = labeled_loss_at(model, theta, batch.x_l, batch.y_l)
        (g,) = torch.autograd.grad(meta, eps, retain_graph=True)
        if not bool(torch.isfinite(g).all()):  # the run diverged (a bad input would have failed earlier): say so
            raise FloatingPointError(
                f"L2RW's meta-gradient is NaN or infinite (look-ahead step at inner_lr={self.inner_lr}, meta-loss "
                f"{float(meta.detach()):.4g}): training diverged; lower the learning rate"
            )
        return l2rw_weights(g), meta.detach()

    def loss(self, model, batch):
        sup, losses, base_out = split_base_loss(self.base, model, batch)
        w, meta = self.meta_weights(model, batch, sup, losses)
        self.weights_ = w
        mask = w * losses.shape[0]
        unsup = weighted_mean(losses * mask, batch.u_weight)
        total = sup + self.base.lambda_u * unsup
        u = base_out.unlabeled
        return LossOutput(
            total,
            {
                "loss": total.detach(),
                "sup_loss": sup.detach(),
                "unsup_loss": unsup.detach(),
                "meta_loss": meta,
                "weight_nonzero": (w > 0).float().mean(),
            },
            UnlabeledLosses(losses, mask, u.logits, u.features),
        )

    def __repr__(self):
        return f"L2RW({self.base!r}, inner_lr={self.inner_lr}, inner_supervised={self.inner_supervised})"
