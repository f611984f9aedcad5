"""CRAIG for SSL, per batch (paper C App. D, eq. (47)-(50); Mirzasoleiman et al. 2020; CORDS ``CRAIGStrategy``).

CRAIG bounds the gradient-matching error (eq. (45)-(46)) by a k-medoids cost and minimises it as the
facility-location maximisation ``F(S) = sum_i max_{j in S} s_ij`` with the similarity
``s_ij = max(dist) - dist_ij`` (CORDS; ``dist`` = squared Euclidean distance between gradients, CORDS'
choice, or the Euclidean distance of eq. (47)/(49) with ``metric="euclidean"``). ``F`` is monotone
submodular; it is maximised by lazy greedy (Minoux 1978: stale gains are upper bounds, so only the top of
a max-heap is re-evaluated; the same picks as naive greedy, as apricot's ``optimizer='lazy'`` that CORDS
calls). Weights (eq. (48)/(50)): ``gamma_j`` = the size of ``j``'s Voronoi cell, the number of elements
whose most similar selected element is ``j`` (ties go to the earlier pick, as ``np.argmax`` in CORDS).

Per batch (the variant paper C runs, eq. (49)-(50)): the elements are the mini-batch mean gradients
(:mod:`sslkit.coreset.batches`), ``ceil(k / B)`` batches are chosen (CORDS; eq. (49) writes ``floor(k/B)``,
the same when ``B`` divides ``k``), and each index of a chosen batch gets its batch's ``gamma``.
``batch_size=1`` is the per-sample CRAIG of eq. (47)-(48) (an ``N x N`` similarity: small ``N`` only).
"""

from __future__ import annotations

import heapq
import time

import torch

from sslkit._checks import (
    check_batch_size,
    check_budget,
    check_count,
    check_features,
    check_gradients,
    check_symmetric,
)
from sslkit.coreset.batches import batch_means, expand_batches
from sslkit.coreset.strategy import CoresetStrategy, SelectionInputs, require

__all__ = ["Craig", "facility_location", "craig_similarity"]

METRICS = ("sqeuclidean", "euclidean")


def craig_similarity(X, metric: str = "sqeuclidean") -> torch.Tensor:
    """``max(dist) - dist`` for the rows of ``X`` (float64, ``n x n``, symmetric, non-negative)."""
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {METRICS}, got {metric!r}")
    X = check_features(X, "X").to(torch.float64)
    sq = (X * X).sum(dim=1)
    dist = (sq[:, None] + sq[None, :] - 2.0 * (X @ X.T)).clamp_(min=0.0)
    dist.fill_diagonal_(0.0)
    if metric == "euclidean":
        dist.sqrt_()
    return dist.max() - dist


def facility_location(similarity, k: int):
    """Lazy greedy for ``max_{|S| = k} sum_i max_{j in S} s_ij`` on a symmetric non-negative ``n x n`` matrix
    (an asymmetric one is refused: ``|s_ij - s_ji| > 1e-9 + 1e-6 max|s|``).

    Returns ``(order int64, gains float64)``: the picks in order and each pick's marginal gain (their
    cumulative sum is ``F`` of each prefix). A bound is taken only when it is fresh (computed at this step)
    and on top of the heap, where equal bounds pop by smaller index: the same picks as naive greedy with
    ties to the smallest index.
    """
    S = check_features(similarity, "similarity").to(torch.float64)
    n = S.shape[0]
    if S.shape[1] != n:
        raise ValueError(f"similarity must be square, got shape {tuple(S.shape)}")
    if bool((S < 0).any()):
        raise ValueError("similarity must be non-negative (facility location with max(dist) - dist)")
    check_symmetric(S, "similarity")  # the lazy re-evaluation reads row j as column j
    k = check_budget(k, n, what="elements")
    cur = torch.zeros(n, dtype=torch.float64, device=S.device)  # max similarity to S, per element
    heap = [(-g, j) for j, g in enumerate(S.sum(dim=1).tolist())]  # exact gains of the empty set
    heapq.heapify(heap)
    fresh = [0] * n  # the step each bound was computed at
    order, gains = [], []
    while len(order) < k:
        bound, j = heapq.heappop(heap)
        if fresh[j] == len(order):  # exact now and the largest: take it
            order.append(j)
            gains.append(-bound)
            torch.maximum(cur, S[j], out=cur)
        else:  # stale: re-evaluate (S symmetric)
            fresh[j] = len(order)
            heapq.heappush(heap, (-float(torch.clamp(S[j] - cur, min=0.0).sum()), j))
    return torch.tensor(order, dtype=torch.long), torch.tensor(gains, dtype=torch.float64)


class Craig(CoresetStrategy):
    """Per-batch CRAIG: ``Craig(k, batch_size=50, metric="sqeuclidean").fit(unlabeled_grads)``.

    ``unlabeled_grads``: ``N x d`` per-sample gradients ``m_j grad l_u(x_j)`` (any device; rows in the
    unlabeled set's order, cut into consecutive batches). ``k``: the budget in samples; ``ceil(k / B)``
    batches are selected (at most the number of batches).

    Attributes after ``fit``: ``batches_`` (int64, selection order), ``batch_weights_`` (float32, Voronoi
    cell sizes, summing to the number of batches), ``indices_`` / ``weights_`` (the chosen batches' members
    and their batch's weight), ``seconds_``, ``gains_`` (marginal facility-location gains), ``objective_`` (``F``),
    ``timings_``.
    """

    def __init__(self, k, *, batch_size: int = 50, metric: str = "sqeuclidean"):
        self.k = check_count(k, "k", allow_zero=False)
        self.batch_size = check_batch_size(batch_size)
        if metric not in METRICS:
            raise ValueError(f"metric must be one of {METRICS}, got {metric!r}")
        self.metric = metric

    def fit(self, unlabeled_grads):
        t0 = time.perf_counter()
        G = check_gradients(unlabeled_grads)
        n = G.shape[0]
        check_budget(self.k, n)
        X = batch_means(G, self.batch_size)
        kb = check_budget(-(-self.k // self.batch_size), X.shape[0], "ceil(k / batch_size)", "batches")
        S = craig_similarity(X, self.metric)
        order, gains = facility_location(S, kb)
        cell = torch.argmax(S[:, order.to(S.device)], dim=1)  # first maximum: earlier pick
        gamma = torch.bincount(cell.cpu(), minlength=kb).to(torch.float32)
        self.batches_, self.batch_weights_ = order, gamma
        self.gains_, self.objective_ = gains, float(gains.sum())
        self.timings_ = {"total": time.perf_counter() - t0}
        return self._set_result(*expand_batches(order, gamma, n, self.batch_size), t0)

    def fit_inputs(self, inputs: SelectionInputs):
        """:meth:`fit` on ``inputs.gradients``."""
        require(inputs, "Craig", "gradients")
        return self.with_params().fit(inputs.gradients)

    def __repr__(self):
        return f"Craig(k={self.k}, batch_size={self.batch_size}, metric={self.metric!r})"
