"""Pseudo-Label (self-training) as described in paper A App. C.

"Initially, a supervised classifier is trained, followed by generating predictions on unlabeled data to
create pseudo labels for instances exceeding a specific confidence threshold. The classifier is then
retrained using both the original and pseudo labels." (thresholds {0.8, 0.9, 0.95} tabular,
{0.9, 0.95, 0.99} images).

Implementation:

* epochs 1..``warmup_epochs``: supervised cross-entropy only (the unlabeled batch is ignored);
* after epoch ``warmup_epochs`` an epoch hook (``Hook(start=warmup_epochs, every=relabel_every)``) freezes a copy
  of the current model -- the *teacher*
  (eval mode: dropout off, BatchNorm running statistics). Labelling "all of X_U once" is done lazily: each
  unlabeled sample's pseudo-label is ``argmax`` of the teacher's softmax and it is used only if the
  teacher's maximum probability is ``>= threshold`` -- identical to labelling X_U once at that moment,
  because the teacher never changes (unless ``relabel_every`` is set);
* afterwards the same model keeps training ("retrained") on
  ``CE(labeled) + lambda_u * mean_{x in U-batch}( mask(x) * CE(f(x), ŷ(x)) )`` -- the mean is over the
  *whole* unlabeled batch, not over the confident samples (USB's convention).

``relabel_every=r`` refreshes the teacher every r epochs after the warm-up (iterative self-training);
None (default) labels once. ``warmup_epochs=0`` takes the initial model as teacher.
``prior=θ`` replaces the plain cross-entropy of the labeled batch by paper A's PN risk ``Σ_j θ_j R̂_jj``
(the "Sup." risk, also in the warm-up; :func:`sslkit.algorithms.base.supervised_ce`); default None, as in
the tables (App. C: "standard supervised cross-entropy"); used by the diagnosis in notebook a_table2.
Logs: ``loss``, ``sup_loss``, ``unsup_loss``, ``mask_rate`` (fraction of the unlabeled batch used).

Against USB (``semilearn`` 0.3.2, tests/test_usb_oracle.py): with the teacher equal to the current network the
mask (``max p >= τ``), the hard labels, the losses (mean over the whole unlabeled batch) and gradients agree.
USB's Pseudo-Label is online self-training instead, and the tests show both differences: it labels every batch
with the current network (train mode) where App. C labels with the classifier trained first (the frozen
teacher), and it ramps λ linearly from 0 over 40% of training where App. C trains supervised first and then
uses λ.
"""

from __future__ import annotations

import copy
import numbers

import torch
import torch.nn.functional as F

from sslkit.algorithms.base import (
    Hook,
    LossOutput,
    SSLAlgorithm,
    UnlabeledLosses,
    forward,
    logits_of,
    supervised_ce,
    weighted_mean,
)
from sslkit.algorithms.risk_terms import labeled_class_weights, optional_prior

__all__ = ["PseudoLabel", "pseudo_labels"]


def pseudo_labels(logits: torch.Tensor, threshold: float) -> tuple[torch.Tensor, torch.Tensor]:
    """``(labels, mask)`` from logits: ``labels = argmax softmax``, ``mask = max softmax >= threshold``
    (float 0/1). No gradient."""
    with torch.no_grad():
        probs = torch.softmax(logits.float(), dim=1)
        conf, labels = probs.max(dim=1)
        return labels, (conf >= threshold).float()


def _check_threshold(threshold) -> float:
    if isinstance(threshold, bool) or not isinstance(threshold, numbers.Real) or not 0 <= threshold <= 1:
        raise ValueError(f"threshold must be a probability in [0, 1], got {threshold!r}")
    return float(threshold)


def _check_weight(v, name) -> float:
    if isinstance(v, bool) or not isinstance(v, numbers.Real) or not v >= 0 or v == float("inf"):
        raise ValueError(f"{name} must be a finite number >= 0, got {v!r}")
    return float(v)


class PseudoLabel(SSLAlgorithm):
    """Pseudo-Label per paper A App. C (module docstring). ``threshold`` in [0, 1]; ``warmup_epochs`` of
    supervised training first (default 20, like OursIter's warm-up; the paper does not give it); ``prior``:
    None (plain cross-entropy) or θ (the PN risk as the supervised term)."""

    name = "pseudo_label"
    uses_unlabeled = True

    def __init__(self, threshold=0.95, *, warmup_epochs=20, lambda_u=1.0, relabel_every=None, prior=None):
        self.threshold = _check_threshold(threshold)
        if isinstance(warmup_epochs, bool) or not isinstance(warmup_epochs, numbers.Integral) or warmup_epochs < 0:
            raise ValueError(f"warmup_epochs must be an integer >= 0, got {warmup_epochs!r}")
        if relabel_every is not None and (
            isinstance(relabel_every, bool) or not isinstance(relabel_every, numbers.Integral) or relabel_every < 1
        ):
            raise ValueError(f"relabel_every must be None or an integer >= 1, got {relabel_every!r}")
        self.warmup_epochs, self.relabel_every = int(warmup_epochs), relabel_every
        self.lambda_u = _check_weight(lambda_u, "lambda_u")
        self.teacher_ = None
        self.prior = optional_prior(prior)
        self.class_weights_ = None

    def setup(self, model, ctx):
        self.teacher_ = self._freeze(model) if self.warmup_epochs == 0 else None
        self.teacher_epochs_ = [0] if self.teacher_ is not None else []
        self.class_weights_ = labeled_class_weights(self.prior, ctx)

    @staticmethod
    def _freeze(model):
        return copy.deepcopy(model).requires_grad_(False).eval()

    def _refresh_teacher(self, trainer) -> None:
        self.teacher_ = self._freeze(trainer.model)
        self.teacher_epochs_.append(trainer.epoch)

    def hooks(self):
        if self.warmup_epochs == 0 and self.relabel_every is None:
            return []  # the initial model is the teacher (setup), never refreshed
        return [
            Hook(
                self._refresh_teacher,
                start=self.warmup_epochs,
                every=self.relabel_every,
                unit="epoch",
                name="pseudo_label_teacher",
            )
        ]

    def unlabeled_losses(self, model, x_u, u_idx=None):
        """Per-sample masked CE of ``x_u`` against the teacher's confident pseudo-labels."""
        if self.teacher_ is None:
            raise ValueError(
                "PseudoLabel has no unlabeled term before its teacher exists (after warmup_epochs="
                f"{self.warmup_epochs} epochs): there are no per-sample unlabeled losses yet"
            )
        with torch.no_grad():
            labels, mask = pseudo_labels(logits_of(self.teacher_, x_u), self.threshold)
        z_u, h_u = forward(model, x_u)
        z_u = z_u.float()
        return UnlabeledLosses(F.cross_entropy(z_u, labels, reduction="none"), mask, z_u, h_u)

    def loss(self, model, batch):
        x_l, y_l, x_u = batch.x_l, batch.y_l, batch.x_u
        if self.teacher_ is None or x_u is None:
            sup = supervised_ce(logits_of(model, x_l), y_l, self.class_weights_)
            zero = torch.zeros((), device=sup.device)
            return LossOutput(
                sup, {"loss": sup.detach(), "sup_loss": sup.detach(), "unsup_loss": zero, "mask_rate": zero}
            )
        with torch.no_grad():
            labels, mask = pseudo_labels(logits_of(self.teacher_, x_u), self.threshold)
        logits, feats = forward(model, torch.cat([x_l, x_u]))
        logits = logits.float()
        z_l, z_u = logits[: x_l.shape[0]], logits[x_l.shape[0] :]
        sup = supervised_ce(z_l, y_l, self.class_weights_)
        ce = F.cross_entropy(z_u, labels, reduction="none")
        unsup = weighted_mean(ce * mask, batch.u_weight)
        total = sup + self.lambda_u * unsup
        h_u = None if feats is None else feats[x_l.shape[0] :]
        return LossOutput(
            total,
            {"loss": total.detach(), "sup_loss": sup.detach(), "unsup_loss": unsup.detach(), "mask_rate": mask.mean()},
            UnlabeledLosses(ce, mask, z_u, h_u),
        )

    def __repr__(self) -> str:
        extra = "" if self.prior is None else f", prior={list(map(float, self.prior))}"
        return (
            f"PseudoLabel(threshold={self.threshold}, warmup_epochs={self.warmup_epochs}, "
            f"lambda_u={self.lambda_u}{extra})"
        )
