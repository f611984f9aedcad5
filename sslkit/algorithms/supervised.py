"""Supervised baseline: cross-entropy on the labeled batch only (paper A App. C "Supervised" rows)."""

from __future__ import annotations

import torch.nn.functional as F

from sslkit.algorithms.base import LossOutput, SSLAlgorithm, logits_of
from sslkit.algorithms.views import Views

__all__ = ["Supervised"]


class Supervised(SSLAlgorithm):
    """Minimise the empirical cross-entropy ``mean_i CE(f(x_i), y_i)`` over the labeled batch.

    Ignores unlabeled data (``uses_unlabeled = False``). Logs ``loss`` (the same cross-entropy).
    ``augment``: None (default: the inputs as given) or an augmentation family / "auto" whose *weak* view
    (:class:`~sslkit.algorithms.Views`, with the inputs' ``mean`` / ``std``) each labeled batch is replaced by,
    e.g. flip-and-crop for the supervised CIFAR training of paper B's active-learning comparison.
    """

    name = "supervised"
    uses_unlabeled = False

    def __init__(self, *, augment=None, mean=None, std=None):
        self.views = None if augment is None else Views(augment, mean=mean, std=std)

    def loss(self, model, batch):
        x = batch.x_l if self.views is None else self.views.weak(batch.x_l)
        ce = F.cross_entropy(logits_of(model, x).float(), batch.y_l)
        return LossOutput(loss=ce, logs={"loss": ce.detach()})
