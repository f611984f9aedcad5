"""Virtual Adversarial Training (Miyato et al. 2018) with paper A App. C's settings.

``L = CE(f(x_l), y_l) + lambda_u * KL( p(x_u) || p(x_u + r_adv) )`` -- "supervised cross-entropy plus
KL-divergence-based local distributional smoothness regularization" with ``lambda_u = 1.0``, ξ = 1e-6,
one power iteration, ε from {0.2, 0.5, 1.0, 2.0} (tabular) or {0.5, 1.0, 2.0, 4.0} (images) (App. C).
No entropy-minimisation term and no ramp-up (App. C mentions neither; USB adds both). ``lambda_ent > 0`` adds the
entropy term of Oliver et al.'s and USB's VAT (their 0.06; the perrying/Oliver scripts paper C's VAT builds on,
App. F.3): ``+ lambda_ent · mean_j H(softmax(f(x_j)))`` on the clean unlabeled pass, with its gradient (paper C's
robust stand-in ``cpu_val_em``). It is part of each sample's unlabeled loss,
``l_j = KL_j + (lambda_ent / lambda_u) H_j``, so a reweighting method (DS3L, L2RW) or a coreset weights the whole
term, and the batch loss stays ``CE + lambda_u · mean_j l_j``.

``prior=θ`` replaces the plain cross-entropy of the labeled batch by paper A's PN risk ``Σ_j θ_j R̂_jj``
(the "Sup." risk; :func:`sslkit.algorithms.base.supervised_ce`). App. C says "supervised cross-entropy";
the option is for the diagnosis in notebook a_table2 (when the labeled class counts are not proportional
to θ, the two differ). Default None: plain cross-entropy, as in the tables.

One step:

1. ``p = softmax(f(x_u))`` without gradient (the fixed target; "KL from clean, detached");
2. ``d ~ N(0, I)``, scaled to L2 norm ξ per sample; for each of ``n_power`` iterations
   ``d <- ξ · normalize(∇_d KL(p || softmax(f(x_u + d))))`` with :func:`torch.autograd.grad` w.r.t. ``d``
   only (no parameter gradients are touched; no host round-trip);
3. ``r_adv = ε · normalize(d)``; the regulariser ``KL(p || softmax(f(x_u + r_adv)))`` (batch mean) is
   back-propagated to the parameters.

Every unlabeled pass (1-3) runs inside :func:`sslkit.algorithms.frozen_bn`: "Batch-normalization running
statistics are frozen during the adversarial perturbation computation" (App. C); like USB we also keep
the final adversarial pass out of the running statistics, so they come from labeled batches only. The
model stays in training mode throughout (dropout active in every pass, as in the reference VAT code).
Normalisation is per sample over all non-batch dimensions (images: C·H·W), with a 1e-12 guard.
Logs: ``loss``, ``sup_loss``, ``unsup_loss``; per-sample losses: ``KL(p_j || p(x_j + r_adv,j))`` with the
logits of the perturbed pass (paper C App. C.3); per-sample weights multiply them (paper C eq. 2).

Against USB (``semilearn`` 0.3.2, tests/test_algorithms_vat.py): on images, from the same random start, the probe,
``r_adv`` (1-3 power iterations), the KL, the losses, gradients and BatchNorm statistics agree. Differences, each
shown by a test: (a) USB adds entropy minimisation (0.06) and a linear ramp of the VAT term over 40% of
training; paper A App. C has neither. (b) USB's direction normalisation acts on 3-D and 4-D arrays only, so on
tabular ``(N, d)`` inputs its probe is ``ξ·N(0, I)`` and its ``r_adv`` is ε times the raw gradient, nearly 0 --
USB's VAT is inert on tabular data; here every sample is normalised over all its non-batch dimensions, as
Miyato et al. define it. (c) USB's BatchNorm freezing covers ``BatchNorm2d`` only;
:func:`sslkit.algorithms.frozen_bn` covers every BatchNorm.
Numerics: the KL is computed in float32 (for mixed precision), as USB does for float32 networks; at ξ = 1e-6
the finite difference ``softmax(z + J ξd) − p`` is then close to float32 rounding, in both implementations.
"""

from __future__ import annotations

import math
import numbers

import torch
import torch.nn.functional as F

from sslkit._checks import check_positive
from sslkit.algorithms.base import (
    LossOutput,
    SSLAlgorithm,
    UnlabeledLosses,
    forward,
    frozen_bn,
    logits_of,
    supervised_ce,
    weighted_mean,
)
from sslkit.algorithms.risk_terms import labeled_class_weights, optional_prior

__all__ = ["VAT", "VAT_EPS_GRID"]

#: paper A App. C: ε grids.
VAT_EPS_GRID = {"tabular": (0.2, 0.5, 1.0, 2.0), "image": (0.5, 1.0, 2.0, 4.0)}


def _l2_normalize(d: torch.Tensor) -> torch.Tensor:
    norm = d.flatten(1).norm(dim=1).view(-1, *([1] * (d.dim() - 1)))
    return d / (norm + 1e-12)


def _kl(p: torch.Tensor, logits_q: torch.Tensor) -> torch.Tensor:
    """Batch mean of KL(p || softmax(logits_q))."""
    return F.kl_div(F.log_softmax(logits_q.float(), dim=1), p, reduction="batchmean")


def kl_per_sample(p: torch.Tensor, logits_q: torch.Tensor) -> torch.Tensor:
    """Per-sample KL(p_j || softmax(logits_q_j)) (B,); its mean is :func:`_kl`'s batch mean."""
    return F.kl_div(F.log_softmax(logits_q.float(), dim=1), p, reduction="none").sum(dim=1)


def _positive(v, name):
    if isinstance(v, bool) or not isinstance(v, numbers.Real) or not math.isfinite(v) or v <= 0:
        raise ValueError(f"{name} must be a positive finite number, got {v!r}")
    return float(v)


class VAT(SSLAlgorithm):
    """VAT (module docstring). ``eps``: perturbation radius ε (required, from :data:`VAT_EPS_GRID`);
    ``xi``: finite-difference step ξ; ``n_power``: power iterations; ``lambda_u``: weight of the KL term;
    ``prior``: None (plain cross-entropy) or θ (the PN risk as the supervised term); ``lambda_ent``: weight of
    the entropy of the clean unlabeled predictions (0: none, as paper A; USB and Oliver et al.: 0.06)."""

    name = "vat"
    uses_unlabeled = True

    def __init__(self, eps, *, xi=1e-6, n_power=1, lambda_u=1.0, prior=None, lambda_ent=0.0):
        self.eps = _positive(eps, "eps")
        self.xi = _positive(xi, "xi")
        if isinstance(n_power, bool) or not isinstance(n_power, numbers.Integral) or n_power < 1:
            raise ValueError(f"n_power must be an integer >= 1, got {n_power!r}")
        self.n_power = int(n_power)
        self.lambda_u = check_positive(lambda_u, "lambda_u", allow_zero=True)
        self.lambda_ent = check_positive(lambda_ent, "lambda_ent", allow_zero=True)
        if self.lambda_ent > 0 and self.lambda_u == 0:
            raise ValueError("lambda_ent > 0 needs lambda_u > 0: the entropy is part of each sample's unlabeled loss")
        self.prior = optional_prior(prior)
        self.class_weights_ = None

    def setup(self, model, ctx):
        self.class_weights_ = labeled_class_weights(self.prior, ctx)

    def adversarial_perturbation(self, model, x_u: torch.Tensor, p: torch.Tensor) -> torch.Tensor:
        """r_adv (same shape as ``x_u``, per-sample L2 norm ε) by ``n_power`` power iterations."""
        d = _l2_normalize(torch.randn_like(x_u)) * self.xi
        for _ in range(self.n_power):
            d.requires_grad_(True)
            kl = _kl(p, logits_of(model, x_u + d))
            (grad,) = torch.autograd.grad(kl, d)
            d = _l2_normalize(grad.detach()) * self.xi
        return self.eps * _l2_normalize(d)

    def perturbed_inputs(self, model, x_u: torch.Tensor):
        """``(p, x_u + r_adv)``: steps 1-3 of the module docstring -- the clean prediction ``p`` (detached) and
        the adversarially perturbed inputs (``r_adv`` a constant) -- with BatchNorm statistics frozen."""
        with frozen_bn(model):
            with torch.no_grad():
                p = torch.softmax(logits_of(model, x_u).float(), dim=1)
            r_adv = self.adversarial_perturbation(model, x_u, p)
        return p, x_u + r_adv

    def perturbed(self, model, x_u: torch.Tensor):
        """``(p, z_adv, h_adv)``: :meth:`perturbed_inputs`, then the logits and features of the perturbed inputs
        (the pass the loss differentiates), with BatchNorm statistics frozen."""
        with frozen_bn(model):
            p, x_adv = self.perturbed_inputs(model, x_u)
            z_adv, h_adv = forward(model, x_adv)
        return p, z_adv, h_adv

    def _with_entropy(self, model, x_u):
        """``(per_sample, z_adv, h_adv, entropy)`` with the entropy term (``lambda_ent > 0``): the clean pass keeps
        its graph (``H_j`` is differentiated), ``p`` is its detached softmax; BatchNorm frozen throughout. The
        per-sample loss is ``KL_j + (lambda_ent / lambda_u) H_j`` (module docstring)."""
        with frozen_bn(model):
            z = logits_of(model, x_u).float()
            p = torch.softmax(z.detach(), dim=1)
            r_adv = self.adversarial_perturbation(model, x_u, p)
            z_adv, h_adv = forward(model, x_u + r_adv)
        entropy = -(torch.softmax(z, dim=1) * F.log_softmax(z, dim=1)).sum(dim=1)
        per_sample = kl_per_sample(p, z_adv) + (self.lambda_ent / self.lambda_u) * entropy
        return per_sample, z_adv, h_adv, entropy

    def unlabeled_losses(self, model, x_u, u_idx=None):
        """Per-sample ``KL(p_j || p(x_j + r_adv,j))`` (plus ``(lambda_ent / lambda_u) H_j``) with the perturbed
        pass's logits and features."""
        if self.lambda_ent > 0:
            per_sample, z_adv, h_adv, _ = self._with_entropy(model, x_u)
            return UnlabeledLosses(per_sample, None, z_adv, h_adv)
        p, z_adv, h_adv = self.perturbed(model, x_u)
        return UnlabeledLosses(kl_per_sample(p, z_adv), None, z_adv, h_adv)

    def loss(self, model, batch):
        sup = supervised_ce(logits_of(model, batch.x_l), batch.y_l, self.class_weights_)
        logs = {}
        if self.lambda_ent > 0:
            per_sample, z_adv, h_adv, entropy = self._with_entropy(model, batch.x_u)
            unsup = weighted_mean(per_sample, batch.u_weight)
            logs["entropy"] = entropy.mean().detach()
        else:
            p, z_adv, h_adv = self.perturbed(model, batch.x_u)
            per_sample = kl_per_sample(p, z_adv)
            # unweighted: the batch-mean KL exactly as before the weights existed (same summation order)
            unsup = _kl(p, z_adv) if batch.u_weight is None else weighted_mean(per_sample, batch.u_weight)
        total = sup + self.lambda_u * unsup
        return LossOutput(
            total,
            {"loss": total.detach(), "sup_loss": sup.detach(), "unsup_loss": unsup.detach(), **logs},
            UnlabeledLosses(per_sample, None, z_adv, h_adv),
        )

    def __repr__(self) -> str:
        extra = "" if self.prior is None else f", prior={list(map(float, self.prior))}"
        extra += f", lambda_ent={self.lambda_ent}" if self.lambda_ent else ""
        return f"VAT(eps={self.eps}, xi={self.xi}, n_power={self.n_power}, lambda_u={self.lambda_u}{extra})"
