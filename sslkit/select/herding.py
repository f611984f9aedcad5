"""GKHR (paper B Algorithm 1) and GKH (Algorithm 2): generalized kernel herding for alpha-MMD.

Both minimise alpha-MMD^2 (eq. (6)) greedily by the Frank-Wolfe step of App. A.1 / eq. (7):

    i*_p in argmin_i  S_{p-1}(x_i) - alpha mu(x_i),
    S_p = (1 - 1/p) S_{p-1} + (1/p) k(x_{i*_p}, .),      S_0 = 0,

with ``mu(x_i) = sum_j k(x_j, x_i) / n`` (line 1; the diagonal ``k(x_i, x_i) = 1`` is included as in
the paper. The official code drops it and still divides by n (defect B3): every mu_i moves by the same
1/n, so the selection is the same). GKHR (eq. (8)) takes the argmin over the not-yet-selected points
only, so it never repeats an index; GKH takes it over all points, so ``indices_`` may repeat (sampling
with replacement; then ``m > n`` is allowed too).

Implementation: ``mu`` by upper-triangular tiles (:func:`kernel_row_sums`),
then each step computes one kernel row ``k(x_{i*}, X)`` (one matrix-vector product) and a masked
argmin. Memory ``O(n d + block_size^2)``; time ``O(n^2 d / 2 + m n d)``. On a CPU one kernel row costs a
full read of the features (memory-bound: ~10 ms for n = 50 000, d = 512 on 2 cores), so by default
(``lookahead=32`` there) the rows of the 32 smallest entries of the objective come from one matrix
product and are reused while the argmin stays among them (the rows are exact kernel rows; the loop of
the n = 50 000 benchmark went from 4.7 s to 3.1 s). On a GPU (``lookahead=1`` by default) each step is
one matrix-vector product. The chosen index stays on the
device (no host synchronisation per step). Ties go to the smallest index (``torch.argmin``), so the
result is deterministic given the features; no randomness is involved except the seeded subsample of
the median bandwidth when ``n > bandwidth_samples``.

Performance note: on an oversubscribed CPU (more busy processes than cores), OpenMP worker threads that
spin after each parallel region slow the m small steps down several-fold; setting the environment
variable ``OMP_WAIT_POLICY=PASSIVE`` before starting Python avoids it (``benchmarks/b_gkhr_speed.py``
does so).
"""

from __future__ import annotations

import math
import time

import numpy as np
import torch

from sslkit._checks import check_count, check_seed
from sslkit.device import resolve_device
from sslkit.select.kernel import (
    DEFAULT_BLOCK_SIZE,
    check_alpha,
    check_bandwidth,
    check_block_size,
    check_features,
    kernel_row,
    lifted,
    median_bandwidth,
    partner,
    symmetric_row_sums,
)

__all__ = ["GKHR", "GKH", "auto_alpha"]


def auto_alpha(m: int) -> float:
    """Paper B §7.1's trade-off ``alpha = 1 - 1/sqrt(m)`` (the left end of §6's interval).

    For ``m = 1`` the formula gives 0, outside (0, 1]; we return 1 there (with one pick every alpha > 0
    selects the same point, the densest one).
    """
    m = check_count(m, "m", allow_zero=False)
    return 1.0 if m == 1 else 1.0 - 1.0 / math.sqrt(m)


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


class _Herding:
    """Shared implementation of GKHR / GKH (``_replace`` says which)."""

    _replace = False

    def __init__(
        self,
        m,
        *,
        alpha="auto",
        bandwidth="median",
        device="auto",
        block_size: int = DEFAULT_BLOCK_SIZE,
        bandwidth_samples: int = 5000,
        seed=0,
        lookahead=None,
    ):
        self.m = check_count(m, "m", allow_zero=False)
        if not (isinstance(alpha, str) and alpha == "auto"):
            check_alpha(alpha)
        if not (isinstance(bandwidth, str) and bandwidth == "median"):
            check_bandwidth(bandwidth)
        self.alpha = alpha
        self.bandwidth = bandwidth
        self.device = device
        self.block_size = check_block_size(block_size)
        self.bandwidth_samples = check_count(bandwidth_samples, "bandwidth_samples", allow_zero=False)
        self.seed = check_seed(seed)
        if lookahead is not None:
            lookahead = check_count(lookahead, "lookahead", allow_zero=False)
        self.lookahead = lookahead

    def fit(self, X, y=None):
        """Select ``m`` samples of ``X`` (``y`` is ignored: the selection is label-free).

        Sets ``indices_`` (int64, selection order), ``alpha_``, ``bandwidth_``, ``mu_`` (float64 numpy,
        ``mu(x_i)``), ``objective_`` (the minimised value ``S_{p-1} - alpha mu`` at each pick) and
        ``timings_`` (seconds: ``bandwidth``, ``mu``, ``loop``, ``total``).
        """
        t_start = time.perf_counter()
        dev = resolve_device(self.device)
        X = check_features(X, device=dev)
        n = X.shape[0]
        if not self._replace and self.m > n:
            raise ValueError(f"m = {self.m} exceeds the number of samples n = {n} (GKHR selects without replacement)")
        alpha = auto_alpha(self.m) if isinstance(self.alpha, str) else check_alpha(self.alpha)
        timings = {}

        t0 = time.perf_counter()
        if isinstance(self.bandwidth, str):
            if n < 2:
                raise ValueError("the median bandwidth needs at least 2 samples; pass an explicit bandwidth")
            bandwidth = median_bandwidth(X, max_samples=self.bandwidth_samples, seed=self.seed, device=dev)
        else:
            bandwidth = check_bandwidth(self.bandwidth)
        timings["bandwidth"] = time.perf_counter() - t0

        t0 = time.perf_counter()
        Z = lifted(X, bandwidth)
        mu = symmetric_row_sums(Z, self.block_size) / n
        _sync(dev)
        timings["mu"] = time.perf_counter() - t0

        t0 = time.perf_counter()
        indices, objective = self._loop(Z, mu, alpha)
        _sync(dev)
        timings["loop"] = time.perf_counter() - t0

        self.indices_ = indices.cpu().numpy().astype(np.int64)
        self.objective_ = objective.cpu().numpy()
        self.mu_ = mu.cpu().numpy()
        self.alpha_ = alpha
        self.bandwidth_ = bandwidth
        self.n_samples_ = n
        timings["total"] = time.perf_counter() - t_start
        self.timings_ = timings
        return self

    def _loop(self, Z: torch.Tensor, mu: torch.Tensor, alpha: float):
        # T = S_{p-1} - alpha mu, kept directly: T_p = (1 - b) T_{p-1} + b (k(x_{i*_p}, .) - alpha mu)
        # with b = 1/p (line 5 minus alpha mu on both sides); selected entries of T are +inf for GKHR
        # ((1 - b) inf stays inf for p >= 2; at p = 1, b = 1 overwrites T, so the pick is re-blocked).
        n, dev = Z.shape[0], Z.device
        amu = alpha * mu
        T = -amu.clone()  # S_0 = 0
        indices = torch.empty(self.m, dtype=torch.long, device=dev)
        objective = torch.empty(self.m, dtype=torch.float64, device=dev)
        lookahead = min(self.lookahead if self.lookahead is not None else (32 if dev.type == "cpu" else 1), n)
        cand, rows = None, None  # look-ahead: kernel rows of the current best candidates
        for p in range(1, self.m + 1):
            i = torch.argmin(T).view(1)  # first index among ties
            indices[p - 1] = i[0]
            objective[p - 1] = T[i][0]
            if lookahead == 1:  # one kernel row per step; the index stays on the device
                row = kernel_row(Z, partner(Z[i])[0])
            else:
                # The rows k(x_c, .) of the `lookahead` smallest entries of T come from one matrix product,
                # which reads Z once (one matrix-vector product per step is bound by reading Z); they are
                # used while the argmin stays among them. Exact: each row is the same kernel row.
                hit = None if cand is None else torch.nonzero(cand == i[0]).flatten()
                if hit is None or hit.numel() == 0:
                    cand = torch.topk(T, lookahead, largest=False, sorted=True).indices
                    if cand[0] != i[0]:  # ties: make sure the argmin itself is a candidate
                        cand[-1] = i[0]
                    rows = (partner(Z[cand]) @ Z.T).clamp_(max=0.0).exp_()
                    hit = torch.nonzero(cand == i[0]).flatten()
                row = rows[hit[0]]
            b = 1.0 / p
            T.mul_(1.0 - b).add_(row, alpha=b).add_(amu, alpha=-b)
            if not self._replace:
                T.index_fill_(0, i, float("inf"))
        return indices, objective

    def __repr__(self):
        return (
            f"{type(self).__name__}(m={self.m}, alpha={self.alpha!r}, bandwidth={self.bandwidth!r}, "
            f"device={self.device!r}, block_size={self.block_size})"
        )


class GKHR(_Herding):
    """Generalized Kernel Herding without Replacement (paper B Algorithm 1, eq. (8)): RDSS's sampler.

    ``GKHR(m, alpha="auto", bandwidth="median", device="auto", block_size=2048).fit(X).indices_``.

    * ``alpha``: ``"auto"`` = ``1 - 1/sqrt(m)`` (§7.1) or a number in (0, 1].
    * ``bandwidth``: ``"median"`` = :func:`median_bandwidth` (§6; exact for ``n <= bandwidth_samples``,
      else on a subsample drawn with ``seed``) or a positive number ``sigma`` of
      ``k(x,y) = exp(-||x-y||^2 / sigma^2)``.
    * ``m <= n``; ``m = n`` returns a permutation of all samples.
    * ``lookahead``: kernel rows computed per matrix product in the greedy loop (``None`` = 32 on a CPU,
      1 on a GPU; any value selects the same indices up to float rounding of near-ties).

    Attributes after ``fit``: ``indices_`` (int64, distinct, selection order; the first is
    ``argmax mu``, the densest point), ``alpha_``, ``bandwidth_``, ``mu_``, ``objective_``, ``timings_``.

    Non-finite kernels are refused: when the features divided by the bandwidth overflow (a tiny
    bandwidth, huge feature values) ``fit`` raises ``ValueError`` instead of returning the repeated
    indices NaN kernel values would give (see :func:`sslkit.select.kernel.lifted`).

    Where float32 changes the selection path: features that are not float64 are computed in float32
    (float64 features stay float64). The kernel rows are then exact to ~1e-7 relative (``mu`` and the
    objective are accumulated in float64 from them), so two candidates whose objectives differ by less
    than that may be picked in the other order than with float64 features, and every later pick follows
    from that one. float32 also overflows earlier (``|x - mean| / bandwidth`` beyond ~9e18, refused) and
    underflows earlier: an off-diagonal kernel value is 0 once ``||x - y||^2 / bandwidth^2`` exceeds ~104
    (float64: ~745); when all of them are 0 the objective is flat and the picks go in index order.
    """

    _replace = False


class GKH(_Herding):
    """Generalized Kernel Herding (paper B Algorithm 2, eq. (7)): GKHR without the exclusion.

    Same interface as :class:`GKHR`. The argmin runs over all n points, so ``indices_`` **may repeat**
    (sampling with replacement; the alpha-MMD of the multiset counts repeats, see
    :func:`sslkit.select.alpha_mmd2`), and ``m > n`` is allowed. With ``alpha = 1`` this is kernel
    herding in its Frank-Wolfe form (Bach et al. 2012: step ``1/(p+1)``, first pick ``argmax mu``).
    Chen et al.'s original herding (``w_0 = mu_p``) normalises the sum by ``1/p`` instead of
    ``1/(p-1)``, i.e. it equals this update with a step-dependent ``alpha_p = p / (p - 1)``.
    """

    _replace = True
