"""CoreSet (Sener & Savarese, ICLR 2018, "Active learning for convolutional neural networks: a core-set
approach") and CoreSetSSL, its use inside semi-supervised training (paper B §7.3, Tables 2, 3 and 6).

Sener & Savarese pose batch active learning as the k-center problem: choose ``b`` new centres so that the
largest distance from any pool point to its nearest centre (labeled or new) is as small as possible, and
solve it greedily (their Algorithm 1, *k-Center-Greedy*, a 2-approximation)::

    s = s0                                   (the labeled rows)
    repeat b times:
        u = argmax_{i not in s}  min_{j in s} Δ(x_i, x_j)
        s = s ∪ {u}

with Δ the Euclidean distance between the activations of the network's last layer before the classifier
(their §5: "the l2 distance between activations of the final fully-connected layer"). Their robust variant
(a mixed-integer programme that tolerates outliers) is not reproduced: the baselines paper B compares with are
the greedy one (DISTIL's ``CoreSet``, the comparison papers' code).
"""

from __future__ import annotations

import torch

from sslkit._checks import check_count
from sslkit.active.scoring import as_inputs, check_budget, check_model, penultimate_features
from sslkit.device import resolve_device

__all__ = ["k_center_greedy", "CoreSet", "CoreSetSSL"]

#: Rows x columns of one block of the distance matrix (keeps memory bounded for large pools).
_BLOCK = 1 << 22


def _nearest_distance(F: torch.Tensor, C: torch.Tensor) -> torch.Tensor:
    """``min_j ||F_i - C_j||`` for every row of ``F`` (float64, exact differences, in blocks of C's rows)."""
    out = torch.full((F.shape[0],), float("inf"), dtype=torch.float64, device=F.device)
    step = max(1, _BLOCK // max(1, F.shape[0]))
    for start in range(0, C.shape[0], step):
        d = torch.cdist(F, C[start : start + step], compute_mode="donot_use_mm_for_euclid_dist")
        out = torch.minimum(out, d.min(dim=1).values)
    return out


def k_center_greedy(features, m, labeled_features=None) -> torch.Tensor:
    """Sener & Savarese's Algorithm 1: the rows of ``features`` (the unlabeled pool, ``(n, d)``) picked as
    ``m`` new centres, in order, given the centres ``labeled_features`` (``(n_l, d)``; None = none).

    Each pick is the row farthest (Euclidean, computed in float64) from its nearest centre; ties go to the
    lowest row index. Without labeled centres every distance is infinite, so the first pick is row 0 (as in
    DISTIL's ``CoreSet.furthest_first``). A picked row never returns (its distance is set to -inf), so the
    ``m`` indices are distinct even when the pool holds duplicates. Returns an int64 tensor on the features'
    device.
    """
    F = as_inputs(features, "features").flatten(1).to(torch.float64)
    m = check_budget(m, F.shape[0])
    if labeled_features is None:
        dist = torch.full((F.shape[0],), float("inf"), dtype=torch.float64, device=F.device)
    else:
        L = as_inputs(labeled_features, "labeled_features", device=F.device).flatten(1).to(torch.float64)
        if L.shape[1] != F.shape[1]:
            raise ValueError(f"labeled_features have {L.shape[1]} columns but features have {F.shape[1]}")
        dist = _nearest_distance(F, L)
    picks = torch.empty(m, dtype=torch.int64, device=F.device)
    for t in range(m):
        u = int(torch.argmax(dist))  # first maximum: the lowest index among ties
        picks[t] = u
        dist = torch.minimum(dist, torch.linalg.vector_norm(F - F[u], dim=1))
        dist[u] = float("-inf")  # min(-inf, d) stays -inf: earlier picks stay out too
    return picks


class CoreSet:
    """Core-set selection (Sener & Savarese 2018, Algorithm 1 = :func:`k_center_greedy`) of ``m`` pool rows.

    ``CoreSet(m).fit(X_unlabeled, X_labeled=None, model=None)``: with a ``model`` (returning
    ``(logits, features, ...)``) the rows are embedded by its penultimate features (eval mode, ``batch_size``
    rows at a time), as the paper does; without one, ``X_*`` are the embeddings themselves. Sets ``indices_``
    (int64 rows of ``X_unlabeled``, in pick order, on ``device``) and ``radius_``: the covering radius
    ``max_i min_j Δ(x_i, c_j)`` over the pool after the picks (the quantity k-center minimises).
    """

    def __init__(self, m, *, batch_size: int = 1024, device="auto"):
        self.m = m
        self.batch_size = check_count(batch_size, "batch_size", allow_zero=False)
        self.device = device

    def _embed(self, X, name, model):
        dev = resolve_device(self.device)
        X = as_inputs(X, name, device=dev)
        return X.flatten(1) if model is None else penultimate_features(model, X, self.batch_size)

    def fit(self, X_unlabeled, X_labeled=None, model=None):
        if model is not None:
            check_model(model)
        F = self._embed(X_unlabeled, "X_unlabeled", model)
        L = None if X_labeled is None else self._embed(X_labeled, "X_labeled", model)
        self.indices_ = k_center_greedy(F, self.m, L)
        centres = F[self.indices_] if L is None else torch.cat([L, F[self.indices_]])
        self.radius_ = float(_nearest_distance(F.to(torch.float64), centres.to(torch.float64)).max())
        return self

    def __repr__(self) -> str:
        return f"{type(self).__name__}(m={self.m!r})"


class CoreSetSSL(CoreSet):
    """CoreSet inside semi-supervised training (paper B Table 3's "CoreSetSSL"; the "CoreSet" rows of
    Gao et al.'s SSAL comparison, paper B's [11]): the same k-center-greedy pick (:class:`CoreSet`), on the
    penultimate features of a model trained *semi-supervised* (FlexMatch / FreeMatch) on the current labeled
    and unlabeled data instead of a supervised one. The selection rule is unchanged; what differs is the model
    passed to ``fit``.
    """
