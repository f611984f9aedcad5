"""CRUST's training side in SSL (paper C §4): mixup of the chosen unlabeled samples, then the base SSL loss.

CRUST (Mirzasoleiman et al., NeurIPS 2020) trains on its per-class coresets with mixup (Zhang et al. 2018,
``mixup_data`` with one ``λ ~ Beta(α, α)`` per batch). The selection is
:class:`sslkit.callbacks.CoresetSelection` with ``strategy="crust"`` (:class:`sslkit.coreset.Crust`); this
wrapper mixes the unlabeled batch -- the coreset's samples, as the sampler is restricted to them --
``x̃_j = λ x_j + (1 - λ) x_π(j)`` and hands ``x̃`` to the base algorithm (paper C: VAT). The labeled batch is
not mixed (it is not part of the selection).

Adaptation choice (documented): CRUST mixes inputs *and* labels. VAT's unlabeled term has no label; its
target is the model's own prediction on the input (the "hypothesized label", §4), so mixing the inputs
makes the target the prediction on the mixed sample. Sample ``j``'s weight ``Batch.u_weight[j]`` (CRUST's
cluster size) stays with the mixed sample ``x̃_j`` of which ``x_j`` is the first component; the per-sample
losses and the weighted mean are the base's, so the contract holds unchanged. ``alpha=1.0``: Zhang et
al.'s CIFAR-10 setting. :meth:`CrustMixup.unlabeled_losses` (the selection's gradient pass) is the base's,
unmixed: CRUST selects from the samples' own gradients. Logs: the base's, plus ``mixup_lambda``.
"""

from __future__ import annotations

from sslkit.algorithms.base import Batch, LossOutput
from sslkit.algorithms.meta_step import RobustWrapper, check_step_size
from sslkit.coreset.crust import mixup

__all__ = ["CrustMixup"]


class CrustMixup(RobustWrapper):
    """``CrustMixup(base, alpha=1.0)``: mixup of the unlabeled batch, then ``base.loss`` (module docstring)."""

    name = "crust"

    def __init__(self, base, *, alpha=1.0):
        super().__init__(base)
        self.alpha = check_step_size(alpha, "alpha")

    def unlabeled_losses(self, model, x_u, u_idx=None):
        """The base's per-sample losses of the samples themselves (unmixed)."""
        return self.base.unlabeled_losses(model, x_u, u_idx)

    def loss(self, model, batch):
        if batch.x_u is None:
            raise ValueError("CrustMixup needs an unlabeled batch (batch.x_u is None)")
        x_mix, _, lam = mixup(batch.x_u, self.alpha)
        out = self.base.loss(
            model, Batch(batch.x_l, batch.y_l, x_mix, batch.u_idx, batch.u_weight, step=batch.step, epoch=batch.epoch)
        )
        return LossOutput(out.loss, {**out.logs, "mixup_lambda": lam}, out.unlabeled)

    def __repr__(self):
        return f"CrustMixup({self.base!r}, alpha={self.alpha})"
