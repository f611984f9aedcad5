"""TOD-Semi (Huang, Wang, Xiong, Huan & Dou, ICCV 2021, "Semi-supervised active learning with temporal output
discrepancy").

The *temporal output discrepancy* of a sample is how far the model's output moved between two moments of
training, ``D_t^T(x) = ||f(x; w_{t+T}) - f(x; w_t)||`` (eq. 4), which the paper shows to be a lower bound of the
sample's accumulated loss (Theorem 1) -- a proxy for the loss of unlabeled samples. Between active-learning
cycles it becomes the *cyclic output discrepancy* (eq. 7)::

    COD_c(x) = || f(x; w_c) - f(x; w_{c-1}) ||_2

with ``w_c`` the model after the training of cycle ``c`` and ``w_{c-1}`` that of the previous cycle (before
the first training: the initial weights); the ``m`` unlabeled samples with the **largest** COD are labeled,
from a random candidate subset of the pool (10 000 in the paper). ``f`` is the softmax output. "-Semi" is the
paper's semi-supervised training with an unsupervised TOD loss; paper B keeps only the selection and trains
FlexMatch / FreeMatch, and so does this module.

The official code (``siyuhuang/TOD``) scores ``||·||_2^2 / 2`` (same ranking) and, in the first cycle
only, takes the *smallest* COD; here the paper's rule (largest) is used in every cycle.
"""

from __future__ import annotations

import torch

from sslkit._checks import check_seed
from sslkit.active.scoring import as_inputs, candidate_rows, check_budget, check_model, class_probabilities, top_m

__all__ = ["temporal_output_discrepancy", "TODSemi"]


def temporal_output_discrepancy(p_now, p_before) -> torch.Tensor:
    """``||p_now - p_before||_2`` per row of two output matrices ``(n, K)`` (shape ``(n,)``)."""
    if p_now.shape != p_before.shape or p_now.dim() != 2:
        raise ValueError(
            f"outputs must be (n, K) of the same shape, got {tuple(p_now.shape)} and {tuple(p_before.shape)}"
        )
    return torch.linalg.vector_norm(p_now - p_before, dim=1)


class TODSemi:
    """TOD sampling: ``TODSemi(m).fit(model, previous_model, X_unlabeled)`` -- the ``m`` rows (of a random
    ``subset`` of candidates drawn with ``seed``; all when None) with the largest cyclic output discrepancy
    between the softmax outputs of ``model`` (``w_c``) and ``previous_model`` (``w_{c-1}``), both in eval mode.
    Sets ``indices_`` (int64 rows of ``X_unlabeled``, largest first), ``scores_`` and ``candidates_``."""

    def __init__(self, m, *, subset=None, batch_size: int = 1024, seed=0):
        self.m, self.subset, self.batch_size, self.seed = m, subset, batch_size, seed

    def fit(self, model, previous_model, X_unlabeled):
        check_model(model), check_model(previous_model, "previous_model")
        X = as_inputs(X_unlabeled, "X_unlabeled", device=next(model.parameters()).device)
        cand = candidate_rows(X.shape[0], self.subset, check_seed(self.seed)).to(X.device)
        m = check_budget(self.m, cand.shape[0], "candidate rows")
        Xc = X[cand]
        p_now = class_probabilities(model, Xc, self.batch_size)
        p_before = class_probabilities(previous_model, Xc.to(next(previous_model.parameters()).device), self.batch_size)
        self.candidates_ = cand
        self.scores_ = temporal_output_discrepancy(p_now, p_before.to(p_now.device))
        self.indices_ = cand[top_m(self.scores_, m)]
        return self

    def __repr__(self) -> str:
        return f"TODSemi(m={self.m!r}, subset={self.subset!r})"
