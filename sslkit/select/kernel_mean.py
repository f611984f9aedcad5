"""An approximate ``mu`` (Algorithm 1, line 1) for pools too large for the exact ``O(n^2 d)`` pass.

Algorithm 1 of paper B starts from the kernel mean at every sample, ``mu_i = (1/n) sum_j k(x_i, x_j)``. Exactly
(:func:`~sslkit.select.kernel_row_sums`) it costs ``n^2 d / 2`` multiply-adds: 6.6e12 at n = 50 000, d = 512 (about
ten seconds here), but 2.6e14 at n = 1 000 000, where paper B selects from ImageNet (tens of minutes on two cores).
Two unbiased estimates cost ``n s d`` instead, for ``s`` samples of the kernel:

* ``"landmarks"``: ``mu_i ~ (1/s) sum_{j in J} k(x_i, x_j)`` over ``s`` landmarks ``J`` drawn uniformly without
  replacement from the pool (seeded). Every term is an exact kernel value in ``[0, 1]``, so by Hoeffding's inequality
  (which holds for sampling without replacement too, Hoeffding 1963 §6) ``P(|mu~_i - mu_i| >= t) <= 2 exp(-2 s t^2)``.
* ``"rff"``: random Fourier features (Rahimi & Recht 2007). For ``k(x, y) = exp(-||x - y||^2 / sigma^2)`` the
  frequencies are ``w ~ N(0, (2 / sigma^2) I)`` and ``k(x, y) = E_w cos(w . (x - y))``; with ``r = s / 2``
  frequencies, ``mu~_i = (1/r) sum_w [cos(w . x_i) c_w + sin(w . x_i) s_w]`` where ``c_w, s_w`` are the means of
  ``cos(w . x_j)``, ``sin(w . x_j)`` over the pool. Each frequency's term lies in ``[-1, 1]``, so
  ``P(|mu~_i - mu_i| >= t) <= 2 exp(-r t^2 / 2) = 2 exp(-s t^2 / 4)``: for the same ``s`` (the same cost), a bound
  ``2 sqrt(2)`` times wider than the landmarks' and estimates that can be negative.

:func:`mu_error_bound` turns these into a bound on all ``n`` entries at once (a union bound):
``max_i |mu~_i - mu_i| <= eps`` with probability at least ``1 - delta``. What that means for the selection: every
alpha-MMD^2 computed with ``mu~`` (eq. (6): ``alpha^2 mean(mu) + (1/m^2) sum_{I x I} k - (2 alpha / m) sum_I mu``)
is within ``alpha (2 + alpha) eps`` of the exact one, for every selection ``I`` at once; so the selection that is
best for the approximate criterion is within ``2 alpha (2 + alpha) eps`` of the best for the exact one. The bound is
a worst case; ``benchmarks/b_gkhr_million.py`` measures the pick agreement and the alpha-MMD^2 gap against the exact
path at n = 50 000 and 200 000.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from sslkit._checks import check_count, check_seed
from sslkit.device import resolve_device
from sslkit.select.kernel import DEFAULT_BLOCK_SIZE, check_bandwidth, check_features, cross_row_sums, lifted

__all__ = ["approximate_mu", "mu_error_bound"]

#: how ``mu`` can be computed: exactly, or estimated from ``s`` kernel samples (module docstring)
MU_METHODS = ("exact", "landmarks", "rff")


def check_mu_method(method) -> str:
    if not isinstance(method, str) or method not in MU_METHODS:
        raise ValueError(f"mu_method must be one of {', '.join(map(repr, MU_METHODS))}, got {method!r}")
    return method


def mu_error_bound(n: int, size: int, method: str = "landmarks", delta: float = 0.05) -> float:
    """``eps`` with ``P(max_i |mu~_i - mu_i| >= eps) <= delta`` for ``n`` entries estimated from ``size`` kernel samples
    (module docstring): ``sqrt(log(2 n / delta) / (2 s))`` for landmarks, ``sqrt(4 log(2 n / delta) / s)`` for random
    Fourier features. ``size >= n`` landmarks are every sample: the estimate is exact (0)."""
    n = check_count(n, "n", allow_zero=False)
    size = check_count(size, "size", allow_zero=False)
    method = check_mu_method(method)
    if method == "exact":
        return 0.0
    if not (isinstance(delta, float | int) and 0.0 < delta < 1.0):
        raise ValueError(f"delta must be in (0, 1), got {delta!r}")
    log_term = math.log(2.0 * n / delta)
    if method == "landmarks":
        return 0.0 if size >= n else math.sqrt(log_term / (2.0 * size))
    return math.sqrt(4.0 * log_term / size)


def lifted_mu(Z: torch.Tensor, method: str, size: int, seed, block_size: int = DEFAULT_BLOCK_SIZE) -> torch.Tensor:
    """``mu~`` (float64, length n) from the lifted rows ``Z`` of :func:`~sslkit.select.kernel.lifted` (the centred
    features over the bandwidth, times sqrt(2), in the first ``d`` columns). ``"landmarks"`` with ``size >= n`` is the
    exact ``mu``."""
    method = check_mu_method(method)
    size = check_count(size, "size", allow_zero=False)
    n, d = Z.shape[0], Z.shape[1] - 2
    gen = np.random.default_rng(check_seed(seed))
    if method == "landmarks":
        if size >= n:
            landmarks = torch.arange(n, device=Z.device)
        else:
            landmarks = torch.as_tensor(np.sort(gen.choice(n, size=size, replace=False)), device=Z.device)
        return cross_row_sums(Z, Z[landmarks], block_size) / landmarks.numel()
    if method == "rff":
        r = max(1, size // 2)
        # u = x / sigma (centred) = Z[:, :d] / sqrt(2); k = E cos(w . (u_i - u_j)) with w ~ N(0, 2 I)
        W = torch.from_numpy(gen.standard_normal((d, r))).to(device=Z.device, dtype=Z.dtype)
        cos_mean = torch.zeros(r, dtype=torch.float64, device=Z.device)
        sin_mean = torch.zeros(r, dtype=torch.float64, device=Z.device)
        for s in range(0, n, block_size):
            P = Z[s : s + block_size, :d] @ W  # (sqrt(2) u) . w' with w' ~ N(0, I): w . u with w ~ N(0, 2 I)
            cos_mean += torch.cos(P).sum(dim=0, dtype=torch.float64)
            sin_mean += torch.sin(P).sum(dim=0, dtype=torch.float64)
        cos_mean, sin_mean = (cos_mean / n).to(Z.dtype), (sin_mean / n).to(Z.dtype)
        mu = torch.empty(n, dtype=torch.float64, device=Z.device)
        for s in range(0, n, block_size):
            P = Z[s : s + block_size, :d] @ W
            mu[s : s + block_size] = (torch.cos(P) @ cos_mean + torch.sin(P) @ sin_mean).to(torch.float64) / r
        return mu
    raise ValueError("lifted_mu estimates mu: the exact one is kernel_row_sums(X, bandwidth=h) / n")


def approximate_mu(X, *, bandwidth, method: str = "landmarks", size: int = 8192, seed=0, device="auto"):
    """Algorithm 1's ``mu_i = (1/n) sum_j k(x_i, x_j)`` estimated from ``size`` kernel samples per row (float64 tensor
    on ``device``): ``"landmarks"`` (exact kernel values against ``size`` random samples of the pool) or ``"rff"``
    (``size`` random Fourier features). Both are unbiased; :func:`mu_error_bound` bounds their error on all entries at
    once. Cost ``O(n size d)`` instead of ``O(n^2 d)``. Pass the result to ``GKHR(..., bandwidth=h).fit(X, mu=...)``,
    or let ``GKHR(mu_method=...)`` compute it."""
    bandwidth = check_bandwidth(bandwidth)
    method = check_mu_method(method)
    if method == "exact":
        raise ValueError("method='exact' is kernel_row_sums(X, bandwidth=h) / n; approximate_mu estimates it")
    dev = resolve_device(device)
    X = check_features(X, device=dev)
    return lifted_mu(lifted(X, bandwidth), method, size, seed)
