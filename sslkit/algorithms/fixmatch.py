"""FixMatch (Sohn et al. 2020) with paper A App. D.1's augmentations (paper C App. C.5).

``L = CE(f(weak(x_l)), y_l) + lambda_u * mean_{x in U-batch}( w(x) 1[max p(x) >= τ] CE(f(strong(x)), argmax p(x)) )``
with ``p = softmax(f(weak(x)))`` detached (hard pseudo-labels; the mean is over the *whole* unlabeled
batch, as USB does; ``w`` the per-sample weights of the batch, 1 by default). App. D.1: τ
swept over {0.8, 0.9, 0.95}, ``lambda_u = 1.0``.

Views (:class:`sslkit.algorithms.views.Views`): ``augment="auto"`` picks by input shape, or name a
family, or pass ``weak=`` / ``strong=`` callables; ``mean`` / ``std`` when the inputs are normalised. The
labeled batch gets the weak view too (standard FixMatch). Labeled, weak and strong batches go through the
model in one concatenated forward (USB's ``use_cat``). Logs: ``loss``, ``sup_loss``, ``unsup_loss``,
``mask_rate``; per-sample losses: the masked CE on the strong view (``LossOutput.unlabeled``).

Checked against USB (``semilearn`` 0.3.2, tests/test_usb_oracle.py): mask, pseudo-labels, losses, gradients
and BatchNorm statistics of a step agree with USB's ``train_step`` (``hard_label=True``, its default). Pseudo-labels
are hard only, as in Sohn et al. (eq. 2) and App. D.1; USB's soft-label option (``hard_label=False``) does not
sharpen with its temperature T (its hook is handed probabilities with ``softmax=False`` and returns them as
they are), so sslkit has no T.
"""

from __future__ import annotations

import math
import numbers

import torch
import torch.nn.functional as F

from sslkit.algorithms.base import LossOutput, SSLAlgorithm, UnlabeledLosses, masked_ce, weighted_mean
from sslkit.algorithms.views import Views, unlabeled_forward, weak_strong_forward

__all__ = ["FixMatch", "fixmatch_unsup_loss", "confident_labels"]


def confident_labels(logits_weak: torch.Tensor, threshold) -> tuple[torch.Tensor, torch.Tensor]:
    """``(labels, mask)``: ``argmax`` of the detached weak-view softmax and the float 0/1 mask
    ``max p >= threshold`` (a float, or a per-sample tensor of thresholds)."""
    with torch.no_grad():
        conf, labels = torch.softmax(logits_weak.detach().float(), dim=1).max(dim=1)
        return labels, (conf >= threshold).float()


def fixmatch_unsup_loss(logits_weak: torch.Tensor, logits_strong: torch.Tensor, threshold: float):
    """``(loss, mask)``: ``mean(mask * CE(logits_strong, argmax p_w))`` over the whole batch, with
    ``p_w = softmax(logits_weak)`` detached and ``mask = max p_w >= threshold`` (float 0/1)."""
    labels, mask = confident_labels(logits_weak, threshold)
    return masked_ce(logits_strong, labels, mask).mean(), mask


def check_lambda(value, name="lambda_u") -> float:
    """A finite weight >= 0."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value) or value < 0:
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
    return float(value)


class FixMatch(SSLAlgorithm):
    """FixMatch (module docstring). ``threshold`` τ in [0, 1]; ``lambda_u`` >= 0; ``augment`` in
    ("auto", "tabular", "mnist", "cifar"); ``weak`` / ``strong``: optional callables batch -> batch;
    ``mean`` / ``std``: per-channel normalisation the image inputs carry (None: inputs in [0, 1]).
    ``views``: the :class:`~sslkit.algorithms.views.Views` built from them."""

    name = "fixmatch"
    uses_unlabeled = True

    def __init__(self, threshold=0.95, *, lambda_u=1.0, augment="auto", weak=None, strong=None, mean=None, std=None):
        if isinstance(threshold, bool) or not isinstance(threshold, numbers.Real) or not 0 <= threshold <= 1:
            raise ValueError(f"threshold must be a probability in [0, 1], got {threshold!r}")
        self.threshold, self.lambda_u, self.augment = float(threshold), check_lambda(lambda_u), augment
        self.views = Views(augment, weak=weak, strong=strong, mean=mean, std=std)

    def targets(self, z_w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(labels, mask)`` from weak-view logits with the current threshold(s), changing no state
        (FixMatch: the fixed τ; FlexMatch overrides it with its class-wise thresholds)."""
        return confident_labels(z_w, self.threshold)

    def unlabeled_mask(self, z_w: torch.Tensor, batch) -> tuple[torch.Tensor, torch.Tensor]:
        """``(labels, mask)`` of a training step's unlabeled batch: :meth:`targets` (FlexMatch then updates
        its state from the batch)."""
        return self.targets(z_w)

    def unlabeled_losses(self, model, x_u, u_idx=None):
        """Per-sample masked CE on the strong view of ``x_u`` with the current threshold(s); no state changes."""
        z_w, z_s, h_s = unlabeled_forward(model, self.views, x_u)
        labels, mask = self.targets(z_w)
        return UnlabeledLosses(F.cross_entropy(z_s, labels, reduction="none"), mask, z_s, h_s)

    def loss(self, model, batch):
        z_l, z_w, z_s, h_s = weak_strong_forward(model, self.views, batch.x_l, batch.x_u)
        sup = F.cross_entropy(z_l, batch.y_l)
        labels, mask = self.unlabeled_mask(z_w, batch)
        ce = F.cross_entropy(z_s, labels, reduction="none")
        unsup = weighted_mean(ce * mask, batch.u_weight)
        total = sup + self.lambda_u * unsup
        logs = {
            "loss": total.detach(),
            "sup_loss": sup.detach(),
            "unsup_loss": unsup.detach(),
            "mask_rate": mask.mean(),
        }
        logs.update(self.extra_logs())
        return LossOutput(total, logs, UnlabeledLosses(ce, mask, z_s, h_s))

    def extra_logs(self) -> dict:
        """Logs a subclass adds after its step (FlexMatch: ``unused_rate``). Default: none."""
        return {}

    def __repr__(self) -> str:
        return f"FixMatch(threshold={self.threshold}, lambda_u={self.lambda_u}, augment={self.augment!r})"
