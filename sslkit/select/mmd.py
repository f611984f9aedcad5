"""alpha-MMD (paper B eq. (6)) and plain MMD (eq. (4)), blockwise, never n x n (the bounds: :mod:`.theory`).

For a selection ``I`` of size ``m`` (a multiset: repeated indices count repeatedly, as GKH's output
needs) of ``X_n`` the exact quantity of eq. (6), second line, is

    alpha-MMD^2 = alpha^2/n^2 sum_{i,j<=n} k(x_i, x_j) + 1/m^2 sum_{i,j in I} k(x_i, x_j)
                  - 2 alpha/(m n) sum_{i<=n} sum_{j in I} k(x_i, x_j)
                = alpha^2 K-bar + 1/m^2 sum_{i,j in I} k(x_i, x_j) - 2 alpha/m sum_{j in I} mu_j,

with ``mu_j = sum_i k(x_i, x_j) / n`` (Algorithm 1, line 1) and ``K-bar = mean(mu)`` (Lemma B.6).
``alpha = 1`` gives the classical empirical MMD^2 of eq. (4). In the weight form of App. A.1 it is
``w^T K_* w`` with ``w_i = (multiplicity of i in I) / m``.

Note on eq. (5)-(6): ``alpha [MMD^2 + lambda S_k] + alpha (alpha - 1)/n^2 sum k`` equals the line above
only if ``alpha lambda S_k = (1 - alpha) S_k``, i.e. ``lambda = (1 - alpha)/alpha`` with ``S_k`` of
eq. (2). The paper prints ``lambda = (1 - alpha)/(alpha m)`` and ``(1 - alpha)/m S_k``, which is off by
the factor ``m`` unless ``S_k`` is read as ``(1/m) sum_{i,j in I} k``. The criterion itself (the second
line of (6), and its RKHS form in the third) is unaffected; it is what we compute.
"""

from __future__ import annotations

import numpy as np
import torch

from sslkit.device import resolve_device
from sslkit.select.kernel import (
    DEFAULT_BLOCK_SIZE,
    check_alpha,
    check_bandwidth,
    check_block_size,
    check_features,
    cross_row_sums,
    kernel_tile,
    lifted,
    partner,
    symmetric_row_sums,
)

__all__ = ["alpha_mmd2", "mmd2", "alpha_mmd2_path"]


def _check_indices(indices, n: int) -> np.ndarray:
    idx = np.asarray(indices.detach().cpu().numpy() if isinstance(indices, torch.Tensor) else indices)
    if idx.ndim != 1:
        raise ValueError(f"indices must be 1-D, got shape {idx.shape}")
    if idx.size == 0:
        raise ValueError("indices must select at least one sample, got an empty array")
    if not (np.issubdtype(idx.dtype, np.integer)):
        raise TypeError(f"indices must be integers, got dtype {idx.dtype}")
    bad = (idx < 0) | (idx >= n)
    if bad.any():
        raise ValueError(f"indices must lie in [0, n) = [0, {n}); got {int(idx[bad][0])}")
    return idx.astype(np.int64)


def check_mu(mu, n: int, device) -> torch.Tensor:
    """``mu`` as a float64 tensor on ``device``; a wrong length or a NaN / infinite entry is a ``ValueError``."""
    mu = torch.as_tensor(
        np.asarray(mu.detach().cpu() if isinstance(mu, torch.Tensor) else mu, dtype=np.float64), device=device
    )
    if mu.shape != (n,):
        raise ValueError(f"mu must have shape ({n},), got {tuple(mu.shape)}")
    if not bool(torch.isfinite(mu).all()):
        raise ValueError("mu contains NaN or infinite values")
    return mu


def _prepare(X, indices, bandwidth, mu, block_size, device):
    bandwidth = check_bandwidth(bandwidth)
    block_size = check_block_size(block_size)
    dev = resolve_device(device)
    X = check_features(X, device=dev)
    n = X.shape[0]
    idx = _check_indices(indices, n)
    Z = lifted(X, bandwidth)
    mu = symmetric_row_sums(Z, block_size) / n if mu is None else check_mu(mu, n, dev)
    return Z, idx, mu, block_size, dev


def alpha_mmd2(X, indices, alpha, bandwidth, *, mu=None, block_size: int = DEFAULT_BLOCK_SIZE, device="auto") -> float:
    """Exact alpha-MMD^2 of the selection ``X[indices]`` against ``X`` (paper B eq. (6)).

    ``indices`` may repeat (GKH). ``mu`` (optional, length n): precomputed ``mu_i = sum_j k(x_i,x_j)/n``
    for the same ``bandwidth`` (e.g. ``GKHR.mu_``), which skips the ``O(n^2 d)`` pass; otherwise it is
    computed blockwise. Memory ``O(n d + block_size^2)``. Raises ``ValueError`` when the kernel would
    not be finite (features divided by the bandwidth overflow; see :func:`sslkit.select.kernel.lifted`)
    or ``mu`` holds NaN or infinite values. Non-float64 features are computed in float32 (see
    :class:`sslkit.select.GKHR` for where that changes a selection).
    """
    alpha = check_alpha(alpha)
    Z, idx, mu, block_size, dev = _prepare(X, indices, bandwidth, mu, block_size, device)
    m = idx.size
    sel = torch.as_tensor(idx, device=dev)
    Zs = Z[sel]
    kbar = float(mu.mean())
    quad = float(cross_row_sums(Zs, Zs, block_size).sum())
    lin = float(mu[sel].sum())
    return alpha * alpha * kbar + quad / (m * m) - 2.0 * alpha * lin / m


def mmd2(X, indices, bandwidth, *, mu=None, block_size: int = DEFAULT_BLOCK_SIZE, device="auto") -> float:
    """Classical empirical MMD^2 of eq. (4) between ``X[indices]`` and ``X``: ``alpha_mmd2`` at alpha = 1."""
    return alpha_mmd2(X, indices, 1.0, bandwidth, mu=mu, block_size=block_size, device=device)


def alpha_mmd2_path(
    X, indices, alpha, bandwidth, *, mu=None, block_size: int = DEFAULT_BLOCK_SIZE, device="auto"
) -> np.ndarray:
    """alpha-MMD^2 of every prefix: entry ``p - 1`` is ``alpha_mmd2(X, indices[:p], alpha, bandwidth)``.

    For drawing a selection run against Theorem 5.6's bound (:func:`sslkit.select.theory.theorem_5_6_bound`).
    One pass over the ``m x m`` kernel of the selection by row tiles (memory ``O(block_size * m)``), plus ``mu``.
    """
    alpha = check_alpha(alpha)
    Z, idx, mu, block_size, dev = _prepare(X, indices, bandwidth, mu, block_size, device)
    m = idx.size
    sel = torch.as_tensor(idx, device=dev)
    Zs = Z[sel]
    # lower[p] = sum_{q < p} k(s_q, s_p); diag[p] = k(s_p, s_p)
    lower = torch.zeros(m, dtype=torch.float64, device=dev)
    for i in range(0, m, block_size):
        T = kernel_tile(Zs[i : i + block_size], Zs[: i + block_size]).to(torch.float64)
        rows = torch.arange(i, i + T.shape[0], device=dev)[:, None]
        cols = torch.arange(T.shape[1], device=dev)[None, :]
        lower[i : i + T.shape[0]] = (T * (cols < rows)).sum(dim=1)
    diag = (Zs * partner(Zs)).sum(dim=1).clamp_(max=0.0).exp_().to(torch.float64)
    quad = torch.cumsum(2.0 * lower + diag, dim=0)
    lin = torch.cumsum(mu[sel], dim=0)
    p = torch.arange(1, m + 1, dtype=torch.float64, device=dev)
    kbar = mu.mean()
    return (alpha * alpha * kbar + quad / (p * p) - 2.0 * alpha * lin / p).cpu().numpy()
