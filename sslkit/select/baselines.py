"""Selection baselines of paper B Table 1: Random, Stratified, k-Means, USL (ActiveFT: :mod:`.activeft`).

All share GKHR's interface: ``Selector(m, ..., seed=0).fit(X[, y]).indices_`` (int64 numpy, distinct, in
selection order; ``seconds_``: the fit's wall-clock), numpy or torch input, any ``device``; deterministic
given ``seed`` (all randomness comes from ``numpy.random.default_rng(seed)`` or a CPU ``torch.Generator``
seeded with it).

USL and ActiveFT are reimplemented from the descriptions of their official code in the project's
official repositories' code, not from the papers' pseudo-code; the hyper-parameters default to the
official ones and every deviation is listed in the class docstring.
"""

from __future__ import annotations

import time

import numpy as np
import torch

from sslkit._checks import Params, check_bool, check_count, check_real, check_seed
from sslkit.device import resolve_device
from sslkit.select.kernel import DEFAULT_BLOCK_SIZE, check_block_size, check_features

__all__ = [
    "RandomSelector",
    "StratifiedSelector",
    "KMeansSelector",
    "USLSelector",
    "kmeans",
]


# --------------------------------------------------------------------------------------------------
# shared helpers
# --------------------------------------------------------------------------------------------------


def check_m_le_n(m: int, n: int) -> None:
    if m > n:
        raise ValueError(f"m = {m} exceeds the number of samples n = {n}")


def _check_labels(y, n: int) -> np.ndarray:
    """``y`` as a 1-D integer label vector of length ``n``.

    Floats (NaN included: ``nan != nan``, so a NaN "class" has no members), bools and strings are
    refused with ``TypeError``, negative labels (``-1`` marks "unlabeled" in many datasets) with
    ``ValueError``.
    """
    if y is None:
        raise ValueError("y is required: this selector uses the labels")
    y = np.asarray(y.detach().cpu().numpy() if isinstance(y, torch.Tensor) else y)
    if y.ndim != 1:
        raise ValueError(f"y must be 1-D, got shape {y.shape}")
    if y.shape[0] != n:
        raise ValueError(f"y has {y.shape[0]} labels but X has {n} rows")
    if y.dtype.kind not in "iu":
        raise TypeError(f"y must hold integer class labels, got dtype {y.dtype}")
    if y.size and y.min() < 0:
        raise ValueError(f"y holds negative labels (e.g. {int(y.min())}); class labels must be >= 0")
    return y


def _sq_dists(A: torch.Tensor, B: torch.Tensor, B_sq: torch.Tensor | None = None) -> torch.Tensor:
    """Squared Euclidean distances ``||a_i - b_j||^2`` (a tile), clamped at 0."""
    if B_sq is None:
        B_sq = (B * B).sum(dim=1)
    D = torch.addmm(B_sq[None, :], A, B.T, alpha=-2.0)
    D.add_((A * A).sum(dim=1, keepdim=True))
    return D.clamp_(min=0.0)


def _row_block(n_cols: int, block_size: int) -> int:
    """Rows per tile so that a ``rows x n_cols`` tile stays near ``block_size^2`` entries."""
    return max(1, min(block_size, (block_size * block_size) // max(n_cols, 1)))


def _nearest(X: torch.Tensor, C: torch.Tensor, block_size: int):
    """For every row of X: index of and squared distance to its nearest row of C (ties: smallest)."""
    rows = _row_block(C.shape[0], block_size)
    C_sq = (C * C).sum(dim=1)
    labels = torch.empty(X.shape[0], dtype=torch.long, device=X.device)
    dist = torch.empty(X.shape[0], dtype=X.dtype, device=X.device)
    for i in range(0, X.shape[0], rows):
        d, j = _sq_dists(X[i : i + rows], C, C_sq).min(dim=1)
        labels[i : i + rows], dist[i : i + rows] = j, d
    return labels, dist


def _kmeanspp(X: torch.Tensor, k: int, rng: np.random.Generator) -> torch.Tensor:
    """k-means++ seeding (Arthur & Vassilvitskii 2007): D^2 sampling, one candidate per centre.

    Returns the indices of the k seed rows (distinct). If every remaining point coincides with a
    chosen centre (D^2 = 0 everywhere), the next seed is drawn uniformly among unchosen rows.
    """
    n = X.shape[0]
    chosen = [int(rng.integers(n))]
    d2 = ((X - X[chosen[0]]) ** 2).sum(dim=1)
    for _ in range(1, k):
        w = d2.to(torch.float64).cpu().numpy()
        w[chosen] = 0.0
        total = w.sum()
        if total > 0:
            nxt = int(np.searchsorted(np.cumsum(w), rng.random() * total, side="right"))
            nxt = min(nxt, n - 1)
            while w[nxt] == 0.0:  # guard against rounding at the edges of the cumulative sum
                nxt = (nxt + 1) % n
        else:
            free = np.setdiff1d(np.arange(n), chosen)
            nxt = int(rng.choice(free))
        chosen.append(nxt)
        d2 = torch.minimum(d2, ((X - X[nxt]) ** 2).sum(dim=1))
    return torch.as_tensor(chosen, device=X.device)


def kmeans(
    X,
    k: int,
    *,
    init: str = "k-means++",
    max_iter: int = 100,
    seed=0,
    block_size: int = DEFAULT_BLOCK_SIZE,
    device="auto",
):
    """Lloyd's k-means on the rows of ``X``; returns ``(centroids, labels, n_iter)``.

    * ``init``: ``"k-means++"`` (D^2 seeding) or ``"random"`` (k distinct rows, uniform), drawn with
      ``numpy.random.default_rng(seed)``.
    * Lloyd iterations (assign to the nearest centroid, ties to the smaller index; move each centroid
      to its cluster's mean) until the assignment no longer changes or ``max_iter`` is reached.
    * Empty clusters: the centroid is moved to the point farthest from its own centroid (a different
      point for each empty cluster), as scikit-learn does.
    * Vectorised, blockwise (memory ``O(n d + block_size^2)``), on any device.
    """
    k = check_count(k, "k", allow_zero=False)
    max_iter = check_count(max_iter, "max_iter", allow_zero=False)
    if init not in ("k-means++", "random"):
        raise ValueError(f"init must be 'k-means++' or 'random', got {init!r}")
    block_size = check_block_size(block_size)
    rng = np.random.default_rng(check_seed(seed))
    X = check_features(X, device=resolve_device(device))
    n = X.shape[0]
    check_m_le_n(k, n)
    if init == "random":
        seeds = torch.as_tensor(np.sort(rng.choice(n, size=k, replace=False)), device=X.device)
    else:
        seeds = _kmeanspp(X, k, rng)
    C = X[seeds].clone()
    labels = None
    n_iter = 0
    for n_iter in range(1, max_iter + 1):  # noqa: B007 (returned: the iterations run)
        new_labels, dist = _nearest(X, C, block_size)
        if labels is not None and bool((new_labels == labels).all()):
            break
        labels = new_labels
        counts = torch.bincount(labels, minlength=k)
        sums = torch.zeros_like(C).index_add_(0, labels, X)
        empty = torch.nonzero(counts == 0).flatten()
        C = sums / counts.clamp(min=1).to(X.dtype)[:, None]
        if empty.numel():
            far = torch.argsort(dist, descending=True, stable=True)[: empty.numel()]
            C[empty] = X[far]
    labels, _ = _nearest(X, C, block_size)
    return C, labels, n_iter


class Selector(Params):
    """The shared constructor of the label selectors here and in :mod:`.activeft`."""

    def __init__(self, m, *, seed=0, device="auto"):
        self.m = check_count(m, "m", allow_zero=False)
        self.seed = check_seed(seed)
        self.device = device

    def __repr__(self):
        return f"{type(self).__name__}(m={self.m}, seed={self.seed})"


# --------------------------------------------------------------------------------------------------
# Random and Stratified
# --------------------------------------------------------------------------------------------------


class RandomSelector(Selector):
    """Uniform sampling of ``m`` distinct indices without replacement (paper B "Random").

    ``numpy.random.default_rng(seed).choice(n, m, replace=False)``; ``m <= n``. Needs no labels.
    """

    def fit(self, X, y=None):
        t0 = time.perf_counter()
        n = check_features(X, device="cpu").shape[0]
        check_m_le_n(self.m, n)
        self.indices_ = np.random.default_rng(self.seed).choice(n, size=self.m, replace=False).astype(np.int64)
        self.seconds_ = time.perf_counter() - t0
        return self


class StratifiedSelector(Selector):
    """Class-balanced random sampling, ``m / C`` per class (paper B "Stratified", USB's default sampler).

    **An oracle**: it reads the labels ``y`` of the very samples it is choosing to label, which a real
    selection cannot; paper B excludes it from the ranking for that reason. Classes are the distinct
    values of ``y``. When ``C`` does not divide ``m``, every class gets ``m // C`` and the remaining
    ``m % C`` samples go to ``m % C`` classes drawn at random (seeded). A class with fewer samples than
    its quota raises ``ValueError``. Order of ``indices_``: classes in sorted order, each in draw order.
    """

    def fit(self, X, y=None):
        t0 = time.perf_counter()
        n = check_features(X, device="cpu").shape[0]
        y = _check_labels(y, n)
        check_m_le_n(self.m, n)
        rng = np.random.default_rng(self.seed)
        classes = np.unique(y)
        quota = np.full(len(classes), self.m // len(classes))
        quota[rng.choice(len(classes), size=self.m % len(classes), replace=False)] += 1
        picks = []
        for c, q in zip(classes, quota):
            members = np.flatnonzero(y == c)
            if q > len(members):
                raise ValueError(f"class {c!r} has {len(members)} samples but its quota is {q}")
            picks.append(rng.choice(members, size=q, replace=False))
        self.indices_ = np.concatenate(picks).astype(np.int64)
        self.classes_ = classes
        self.quota_ = quota
        self.seconds_ = time.perf_counter() - t0
        return self


# --------------------------------------------------------------------------------------------------
# k-Means
# --------------------------------------------------------------------------------------------------


def _unique_nearest(X: torch.Tensor, C: torch.Tensor, order: torch.Tensor) -> np.ndarray:
    """Give each centroid (visited in ``order``) its nearest sample not taken by an earlier one."""
    taken = torch.zeros(X.shape[0], dtype=torch.bool, device=X.device)
    X_sq = (X * X).sum(dim=1)
    out = np.empty(C.shape[0], dtype=np.int64)
    for c in order.tolist():
        d = _sq_dists(C[c : c + 1], X, X_sq)[0]
        d[taken] = float("inf")
        j = int(torch.argmin(d))
        taken[j] = True
        out[c] = j
    return out


class KMeansSelector(Selector):
    """k-Means with ``K = m``, then the sample nearest each centroid (paper B "k-Means").

    Paper B gives no details; ours: :func:`kmeans` with k-means++ seeding (``init``), at most
    ``max_iter = 100`` Lloyd iterations (stop when the assignment is stable), empty clusters re-seeded
    at the farthest point, all randomness from ``seed``. Each centroid then takes its nearest sample;
    when two centroids share a nearest sample, centroids are served in order of increasing distance to
    their nearest sample and a later one takes its nearest *unused* sample, so no index repeats.
    ``indices_[c]`` belongs to centroid ``c``. Attributes: ``centroids_``, ``labels_``, ``n_iter_``.
    """

    def __init__(
        self, m, *, init="k-means++", max_iter: int = 100, seed=0, device="auto", block_size: int = DEFAULT_BLOCK_SIZE
    ):
        super().__init__(m, seed=seed, device=device)
        if init not in ("k-means++", "random"):
            raise ValueError(f"init must be 'k-means++' or 'random', got {init!r}")
        self.init = init
        self.max_iter = check_count(max_iter, "max_iter", allow_zero=False)
        self.block_size = check_block_size(block_size)

    def fit(self, X, y=None):
        t0 = time.perf_counter()
        X = check_features(X, device=resolve_device(self.device))
        check_m_le_n(self.m, X.shape[0])
        C, labels, n_iter = kmeans(
            X,
            self.m,
            init=self.init,
            max_iter=self.max_iter,
            seed=self.seed,
            block_size=self.block_size,
            device=X.device,
        )
        _, dist = _nearest(C, X, self.block_size)  # each centroid's distance to its nearest sample
        order = torch.argsort(dist, stable=True)
        self.indices_ = _unique_nearest(X, C, order)
        self.centroids_ = C.cpu().numpy()
        self.labels_ = labels.cpu().numpy()
        self.n_iter_ = n_iter
        self.seconds_ = time.perf_counter() - t0
        return self


# --------------------------------------------------------------------------------------------------
# USL
# --------------------------------------------------------------------------------------------------


def _segment_argmax(score: torch.Tensor, labels: torch.Tensor, k: int) -> torch.Tensor:
    """For each cluster c < k: the member with the largest score (smallest index on ties; -1 if empty)."""
    n = score.shape[0]
    best = torch.full((k,), -float("inf"), dtype=score.dtype, device=score.device)
    best = best.scatter_reduce(0, labels, score, reduce="amax")
    idx = torch.where(score == best[labels], torch.arange(n, device=score.device), torch.full_like(labels, n))
    pick = torch.full((k,), n, dtype=torch.long, device=score.device).scatter_reduce(0, labels, idx, reduce="amin")
    return torch.where(pick == n, torch.full_like(pick, -1), pick)


class USLSelector(Selector):
    """Unsupervised Selective Labeling, USL (Wang et al. 2022), as its official CIFAR code does it.

    Steps (as its official code runs them):

    1. features L2-normalised (``normalize=True``; the official features are unit vectors, and the
       horizon below, 4 = the largest squared distance between unit vectors, assumes it);
    2. density ``1 / dbar_i`` with ``dbar_i`` the mean squared-L2 distance to the ``knn = 400`` nearest
       samples, the sample itself included (``knn = n`` when ``n < 400``);
    3. k-means with ``K = m``: random init, at most ``kmeans_iter = 200`` Lloyd iterations
       (:func:`kmeans`; empty clusters re-seeded, so no extra centroid is needed);
    4. ``n_iter = 10`` rounds of regularised selection: each cluster picks ``argmax [density_i - w R_i]``
       (``w = 0.5``); between rounds ``R_i <- 0.9 R_i + 0.1 sum_s d2(i, s)^(-a)`` over the current picks
       ``s`` of *other* clusters with ``d2(i, s) < horizon = 4`` (``a = 0.5``; ``d2`` floored at 1e-12).

    Deviations: our own k-means and k-NN (exact, blockwise; the official code uses KeOps and FAISS);
    a cluster left empty after k-means contributes no pick and the missing picks are filled with the
    highest-scoring unpicked samples. ``indices_`` is in cluster order. Time ``O(n^2 d)`` for the k-NN.
    """

    def __init__(
        self,
        m,
        *,
        knn: int = 400,
        kmeans_iter: int = 200,
        n_iter: int = 10,
        weight: float = 0.5,
        momentum: float = 0.9,
        power: float = 0.5,
        horizon: float = 4.0,
        normalize: bool = True,
        seed=0,
        device="auto",
        block_size: int = DEFAULT_BLOCK_SIZE,
    ):
        super().__init__(m, seed=seed, device=device)
        self.knn = check_count(knn, "knn", allow_zero=False)
        self.kmeans_iter = check_count(kmeans_iter, "kmeans_iter", allow_zero=False)
        self.n_iter = check_count(n_iter, "n_iter", allow_zero=False)
        self.weight, self.power, self.horizon = (
            check_real(v, name, low=0.0) for v, name in ((weight, "weight"), (power, "power"), (horizon, "horizon"))
        )
        self.momentum = check_real(momentum, "momentum", low=0.0, high=1.0)
        self.normalize = check_bool(normalize, "normalize")
        self.block_size = check_block_size(block_size)

    def _density(self, X: torch.Tensor) -> torch.Tensor:
        n = X.shape[0]
        K = min(self.knn, n)
        rows = _row_block(n, self.block_size)
        X_sq = (X * X).sum(dim=1)
        dbar = torch.empty(n, dtype=X.dtype, device=X.device)
        for i in range(0, n, rows):
            D = _sq_dists(X[i : i + rows], X, X_sq)
            dbar[i : i + rows] = torch.topk(D, K, dim=1, largest=False).values.mean(dim=1)
        return 1.0 / dbar.clamp(min=1e-12)

    def fit(self, X, y=None):
        t0 = time.perf_counter()
        X = check_features(X, device=resolve_device(self.device))
        n, m = X.shape[0], self.m
        check_m_le_n(m, n)
        if self.normalize:
            X = torch.nn.functional.normalize(X, dim=1)
        density = self._density(X)
        _, labels, _ = kmeans(
            X, m, init="random", max_iter=self.kmeans_iter, seed=self.seed, block_size=self.block_size, device=X.device
        )
        R = torch.zeros(n, dtype=X.dtype, device=X.device)
        picks = _segment_argmax(density, labels, m)
        rows = _row_block(m, self.block_size)
        for _ in range(1, self.n_iter):
            valid = picks[picks >= 0]
            S = X[valid]
            S_sq = (S * S).sum(dim=1)
            new = torch.empty(n, dtype=X.dtype, device=X.device)
            for i in range(0, n, rows):
                d2 = _sq_dists(X[i : i + rows], S, S_sq).clamp_(min=1e-12)
                keep = (d2 < self.horizon) & (labels[i : i + rows, None] != labels[valid][None, :])
                new[i : i + rows] = torch.where(keep, d2.pow(-self.power), torch.zeros_like(d2)).sum(dim=1)
            R = self.momentum * R + (1.0 - self.momentum) * new
            picks = _segment_argmax(density - self.weight * R, labels, m)
        score = density - self.weight * R
        chosen = picks[picks >= 0]
        if chosen.numel() < m:  # empty clusters: fill with the best unpicked samples
            s = score.clone()
            s[chosen] = -float("inf")
            extra = torch.argsort(s, descending=True, stable=True)[: m - chosen.numel()]
            chosen = torch.cat([chosen, extra])
        self.indices_ = chosen.cpu().numpy().astype(np.int64)
        self.labels_ = labels.cpu().numpy()
        self.density_ = density.cpu().numpy()
        self.seconds_ = time.perf_counter() - t0
        return self
