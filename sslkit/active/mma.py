"""MMA (Song, Berthelot & Rostamizadeh 2019, "Combining MixMatch and active learning for better accuracy with
fewer labels").

MixMatch is trained on the labeled and unlabeled data; every few thousand steps the labeled set grows by the
samples the current model is least sure about. Of the uncertainty measures the paper compares (max, entropy,
std and the margin "diff2", each with or without augmentation, with or without diversification), its
recommended one, ``diff2.aug-direct``, averages the model's class probabilities over two random augmentations
of each unlabeled sample and takes the gap between the two largest averaged probabilities::

    p̄(x) = (1/A) Σ_{a=1..A} p(y | aug_a(x)),     diff2(x) = p̄_(1)(x) - p̄_(2)(x),     A = 2

("direct": no diversification); the ``m`` samples with the **smallest** gap are labeled.

The official code (``google-research/mma``) parses ``grow_by`` so that the ``.aug`` suffix is stripped before
it is tested, so its runs score the un-augmented image; here the paper's definition is used (``n_views = 2``
augmentations; ``n_views`` and the view are parameters).
"""

from __future__ import annotations

import torch

from sslkit.active.scoring import ViewSelection

__all__ = ["augmented_margin", "MMA"]


def augmented_margin(probabilities) -> torch.Tensor:
    """MMA's ``diff2.aug``: from probabilities ``(A, n, K)`` of A views, the gap between the two largest
    entries of their mean over the views (shape ``(n,)``; small = uncertain). Needs K >= 2."""
    if probabilities.dim() != 3 or probabilities.shape[2] < 2:
        raise ValueError(f"probabilities must be (views, n, K >= 2), got {tuple(probabilities.shape)}")
    top2 = probabilities.mean(dim=0).topk(2, dim=1).values
    return top2[:, 0] - top2[:, 1]


class MMA(ViewSelection):
    """MMA sampling (``diff2.aug-direct``): ``MMA(m).fit(model, X_unlabeled)`` -- the ``m`` rows with the
    smallest :func:`augmented_margin` over ``n_views`` random views (``augment``: :func:`view_function`;
    seeded with ``seed``). Sets ``indices_`` (int64, most uncertain first) and ``scores_`` (the margins)."""

    largest = False

    def __init__(self, m, *, n_views: int = 2, augment="auto", mean=None, std=None, batch_size: int = 1024, seed=0):
        super().__init__(m, n_views=n_views, augment=augment, mean=mean, std=std, batch_size=batch_size, seed=seed)

    def view_scores(self, probabilities):
        return augmented_margin(probabilities)
