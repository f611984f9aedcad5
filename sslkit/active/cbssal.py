"""CBSSAL (Gao, Zhang, Yu, Arık, Davis & Pfister, ECCV 2020, "Consistency-based semi-supervised active
learning: towards minimizing labeling cost").

The model is trained semi-supervised with a consistency loss; the samples to label are those whose predictions
are the *least consistent* under random augmentation, a selection coherent with that training objective. For
a sample ``x``, its ``N`` random augmentations ``x̃_1 .. x̃_N`` and ``J`` classes (§3.2)::

    E(x) = Σ_{l=1..J} Var[ P(ŷ = l | x), P(ŷ = l | x̃_1), ..., P(ŷ = l | x̃_N) ]

(the variance over the ``N + 1`` predictions, per class, summed over classes) and the ``m`` samples with the
**largest** ``E`` are labeled. The first labeled set is drawn at random (the paper's answer to its cold-start
question), as in paper B's "20 random + 20 selected". ``Var`` here is the population variance (dividing by
``N + 1``); the ranking does not depend on that choice. ``N = 5`` by default (a parameter).
"""

from __future__ import annotations

import torch

from sslkit.active.scoring import ViewSelection

__all__ = ["inconsistency", "CBSSAL"]


def inconsistency(probabilities) -> torch.Tensor:
    """CBSSAL's ``E(x)`` from probabilities ``(N + 1, n, J)`` (the original and N views): per-class
    population variance over the first axis, summed over classes (shape ``(n,)``)."""
    if probabilities.dim() != 3 or probabilities.shape[0] < 2:
        raise ValueError(f"probabilities must be (N + 1 >= 2, n, J), got {tuple(probabilities.shape)}")
    return probabilities.var(dim=0, unbiased=False).sum(dim=1)


class CBSSAL(ViewSelection):
    """CBSSAL sampling: ``CBSSAL(m).fit(model, X_unlabeled)`` -- the ``m`` rows with the largest
    :func:`inconsistency` of the model's predictions on the row and ``n_views`` random views of it
    (``augment``: :func:`view_function`; seeded with ``seed``). Sets ``indices_`` (int64, least consistent
    first) and ``scores_``."""

    include_original = True

    def __init__(self, m, *, n_views: int = 5, augment="auto", mean=None, std=None, batch_size: int = 1024, seed=0):
        super().__init__(m, n_views=n_views, augment=augment, mean=mean, std=std, batch_size=batch_size, seed=seed)

    def view_scores(self, probabilities):
        return inconsistency(probabilities)
