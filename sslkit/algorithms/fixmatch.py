"""FixMatch (Sohn et al. 2020) with paper A App. D.1's augmentations.

``L = CE(f(weak(x_l)), y_l) + lambda_u * mean_{x in U-batch}( 1[max p(x) >= τ] * CE(f(strong(x)), argmax p(x)) )``
with ``p = softmax(f(weak(x)))`` detached (hard pseudo-labels; the mean is over the *whole* unlabeled
batch, reference notes §6 item 4). App. D.1: τ swept over {0.8, 0.9, 0.95}, ``lambda_u = 1.0``.

Augmentations (:mod:`sslkit.data.augment`): ``augment="auto"`` picks by input shape -- 2-D ``(N, d)``
tabular (noise σ 0.1 / σ 0.2 + feature dropout 0.1), ``(N, 1, H, W)`` MNIST-family, ``(N, 3, H, W)``
CIFAR-family; or name one of ``"tabular"``, ``"mnist"``, ``"cifar"``; ``weak=`` / ``strong=`` callables
override. The labeled batch gets the weak view too (standard FixMatch). Labeled, weak and strong batches
go through the model in one concatenated forward (USB's ``use_cat``).

Images must reach the augmentations in ``[0, 1]``. If the inputs given to the trainer were normalised
(``images_to_tensor(X, mean, std)``), pass the same ``mean`` / ``std``: views are computed as
``normalize(aug(denormalize(x)))`` -- App. D.1's "followed by normalization" -- and prediction on
normalised test images stays consistent. Logs: ``loss``, ``sup_loss``, ``unsup_loss``, ``mask_rate``.
"""

from __future__ import annotations

import math
import numbers

import torch
import torch.nn.functional as F

from sslkit.algorithms.base import LossOutput, SSLAlgorithm, logits_of
from sslkit.data.augment import AUGMENTATIONS

__all__ = ["FixMatch", "fixmatch_unsup_loss"]


def fixmatch_unsup_loss(logits_weak: torch.Tensor, logits_strong: torch.Tensor, threshold: float):
    """``(loss, mask)``: ``mean(mask * CE(logits_strong, argmax p_w))`` over the whole batch, with
    ``p_w = softmax(logits_weak)`` detached and ``mask = max p_w >= threshold`` (float 0/1)."""
    with torch.no_grad():
        conf, labels = torch.softmax(logits_weak.detach().float(), dim=1).max(dim=1)
        mask = (conf >= threshold).float()
    loss = (F.cross_entropy(logits_strong.float(), labels, reduction="none") * mask).mean()
    return loss, mask


def _per_channel(v, name):
    if v is None:
        return None
    t = torch.as_tensor(v, dtype=torch.float32).reshape(-1)
    if not torch.isfinite(t).all():
        raise ValueError(f"{name} must be finite, got {v!r}")
    return t


class FixMatch(SSLAlgorithm):
    """FixMatch (module docstring). ``threshold`` τ in [0, 1]; ``lambda_u`` >= 0; ``augment`` in
    ("auto", "tabular", "mnist", "cifar"); ``weak`` / ``strong``: optional callables batch -> batch;
    ``mean`` / ``std``: per-channel normalisation the image inputs carry (None: inputs in [0, 1])."""

    name = "fixmatch"
    uses_unlabeled = True

    def __init__(self, threshold=0.95, *, lambda_u=1.0, augment="auto", weak=None, strong=None, mean=None, std=None):
        if isinstance(threshold, bool) or not isinstance(threshold, numbers.Real) or not 0 <= threshold <= 1:
            raise ValueError(f"threshold must be a probability in [0, 1], got {threshold!r}")
        if isinstance(lambda_u, bool) or not isinstance(lambda_u, numbers.Real) or not math.isfinite(lambda_u) \
                or lambda_u < 0:
            raise ValueError(f"lambda_u must be a finite number >= 0, got {lambda_u!r}")
        if augment != "auto" and augment not in AUGMENTATIONS:
            raise ValueError(f"augment must be 'auto' or one of {tuple(AUGMENTATIONS)}, got {augment!r}")
        for f, nm in ((weak, "weak"), (strong, "strong")):
            if f is not None and not callable(f):
                raise TypeError(f"{nm} must be callable (batch -> batch) or None, got {type(f).__name__}")
        if (mean is None) != (std is None):
            raise ValueError("give both mean and std, or neither")
        self.threshold, self.lambda_u, self.augment = float(threshold), float(lambda_u), augment
        self.weak, self.strong = weak, strong
        self.mean, self.std = _per_channel(mean, "mean"), _per_channel(std, "std")
        if self.std is not None and (self.std <= 0).any():
            raise ValueError(f"std must be positive, got {std!r}")

    def resolve_augment(self, x: torch.Tensor) -> str:
        """The augmentation family for a batch shape (``augment="auto"``)."""
        if self.augment != "auto":
            return self.augment
        if x.dim() == 2:
            return "tabular"
        if x.dim() == 4 and x.shape[1] in (1, 3):
            return "mnist" if x.shape[1] == 1 else "cifar"
        raise ValueError(f"cannot pick augmentations for inputs of shape {tuple(x.shape)}: pass augment= "
                         "or weak=/strong= callables")

    def _functions(self, x: torch.Tensor):
        weak_fn, strong_fn = (None, None)
        if self.weak is None or self.strong is None:
            weak_fn, strong_fn = AUGMENTATIONS[self.resolve_augment(x)]
        return self.weak or weak_fn, self.strong or strong_fn

    def _apply(self, fn, x: torch.Tensor) -> torch.Tensor:
        if self.mean is None:
            return fn(x)
        shape = (1, -1) + (1,) * (x.dim() - 2)
        m, s = self.mean.to(x.device, x.dtype).view(shape), self.std.to(x.device, x.dtype).view(shape)
        return (fn(x * s + m) - m) / s

    def views(self, x: torch.Tensor):
        """``(weak(x), strong(x))``, de-/re-normalised around the augmentation when mean/std are set."""
        weak_fn, strong_fn = self._functions(x)
        return self._apply(weak_fn, x), self._apply(strong_fn, x)

    def loss(self, model, x_l, y_l, x_u=None, *, step):
        n_l, n_u = x_l.shape[0], x_u.shape[0]
        x_lw = self._apply(self._functions(x_l)[0], x_l)
        x_uw, x_us = self.views(x_u)
        logits = logits_of(model, torch.cat([x_lw, x_uw, x_us])).float()
        z_l, z_w, z_s = logits[:n_l], logits[n_l:n_l + n_u], logits[n_l + n_u:]
        sup = F.cross_entropy(z_l, y_l)
        unsup, mask = fixmatch_unsup_loss(z_w, z_s, self.threshold)
        total = sup + self.lambda_u * unsup
        return LossOutput(total, {"loss": total.detach(), "sup_loss": sup.detach(), "unsup_loss": unsup.detach(),
                                  "mask_rate": mask.mean()})

    def __repr__(self) -> str:
        return f"FixMatch(threshold={self.threshold}, lambda_u={self.lambda_u}, augment={self.augment!r})"
