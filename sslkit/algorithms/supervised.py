"""Supervised baseline: cross-entropy on the labeled batch only (paper A App. C "Supervised" rows)."""

from __future__ import annotations

import torch.nn.functional as F

from sslkit.algorithms.base import LossOutput, SSLAlgorithm, logits_of

__all__ = ["Supervised"]


class Supervised(SSLAlgorithm):
    """Minimise the empirical cross-entropy ``mean_i CE(f(x_i), y_i)`` over the labeled batch.

    Ignores unlabeled data (``uses_unlabeled = False``). Logs ``loss`` (the same cross-entropy).
    """

    name = "supervised"
    uses_unlabeled = False

    def loss(self, model, batch):
        ce = F.cross_entropy(logits_of(model, batch.x_l).float(), batch.y_l)
        return LossOutput(loss=ce, logs={"loss": ce.detach()})
