"""Gaussian kernel of paper B §6, the median bandwidth heuristic, and blockwise kernel row sums.

Kernel convention
-----------------
``k(x, y) = exp(-||x - y||^2 / sigma^2)`` with ``sigma`` the *bandwidth*.

Paper B §6 typesets the kernel as ``exp(-||x-y||_2^2)/sigma^2``. Read literally, ``sigma`` would only
multiply every kernel value by the constant ``1/sigma^2``: the argmin of Algorithms 1-2 would not depend
on it at all, ``k(x, x) = 1/sigma^2`` would not be 1, and the median heuristic the same paragraph
prescribes would be pointless. So ``sigma^2`` must sit inside the exponent. Of the two common
conventions (``sigma^2`` or ``2 sigma^2`` in the denominator) we take the one the formula prints,
``sigma^2``. With this convention the official code's fixed ``gamma = 0.5``
(``exp(-0.5 ||x-y||^2)``, a defect of RDSS' official code) is ``bandwidth = sqrt(2)``.

Computation
-----------
Every kernel matrix is computed in tiles, never ``n x n`` at once. The features are centred (the
kernel is translation invariant, and centring reduces float32 cancellation) and divided by ``sigma``;
each row becomes ``z = [sqrt(2) x/sigma, -|x/sigma|^2, -1]`` and its partner
``z' = [sqrt(2) y/sigma, 1, |y/sigma|^2]``, so that ``z . z' = -||x - y||^2 / sigma^2`` and one matrix
product gives the exponent of a whole tile. The exponent is clamped at 0 (rounding could otherwise give
``k(x, x)`` slightly above 1).

The kernel sums (:func:`kernel_row_sums`, and the tiles of alpha-MMD) take ``log2 e`` into the partner rows
(:func:`partner_blocks`) and exponentiate with ``exp2``: ``exp(t) = 2^(t log2 e)``, and on a CPU ``exp2`` costs
about a third of ``exp`` (0.28 against 0.82 ns a value on the 2-core AMD EPYC, about 8 % of a tile's time). The
values agree with ``exp`` of the same exponent to float32 rounding (~1e-7 relative).
"""

from __future__ import annotations

import math
import numbers

import numpy as np
import torch

from sslkit._checks import check_count, check_features, check_seed
from sslkit.device import resolve_device, task_pool

__all__ = [
    "gaussian_kernel",
    "median_bandwidth",
    "kernel_row_sums",
    "check_features",
    "check_alpha",
    "check_bandwidth",
    "DEFAULT_BLOCK_SIZE",
]

DEFAULT_BLOCK_SIZE = 2048
#: rows lifted at once: a larger pool is lifted by chunks of this many rows, so lifting needs no full-size
#: temporaries beside the result and each chunk's stay in cache (:func:`lifted`; the same values: every operation
#: is row by row). n = 50 000 x 512 float32: 54 ms by chunks of 2 048 rows, 157 ms at once (2-core AMD EPYC)
LIFT_CHUNK = 2048
#: ``log2 e``: the partner blocks of the kernel sums carry it, so that their tiles are ``exp2`` of the product
LOG2E = 1.0 / math.log(2.0)


# --------------------------------------------------------------------------------------------------
# validation
# --------------------------------------------------------------------------------------------------


def check_alpha(alpha, name: str = "alpha") -> float:
    """Return ``alpha`` as a float in (0, 1] (the trade-off of eq. (6)); raise otherwise.

    ``alpha = 0`` is refused: eq. (5)'s ``lambda = (1 - alpha) / (alpha m)`` is undefined there and
    Algorithm 1's first pick would be an arbitrary tie. A tiny positive alpha is the well-defined limit
    (densest point first, then pure diversity).
    """
    if isinstance(alpha, (bool, np.bool_)) or not isinstance(alpha, numbers.Real):
        raise TypeError(f"{name} must be a number in (0, 1], got {alpha!r}")
    alpha = float(alpha)
    if not (math.isfinite(alpha) and 0.0 < alpha <= 1.0):
        raise ValueError(f"{name} must be in (0, 1], got {alpha!r}")
    return alpha


def check_bandwidth(bandwidth, name: str = "bandwidth") -> float:
    """Return ``bandwidth`` as a positive finite float; raise ``TypeError``/``ValueError`` otherwise."""
    if isinstance(bandwidth, (bool, np.bool_)) or not isinstance(bandwidth, numbers.Real):
        raise TypeError(f"{name} must be a positive number, got {bandwidth!r}")
    bandwidth = float(bandwidth)
    if not (math.isfinite(bandwidth) and bandwidth > 0.0):
        raise ValueError(f"{name} must be a positive finite number, got {bandwidth!r}")
    return bandwidth


def check_block_size(block_size) -> int:
    return check_count(block_size, "block_size", allow_zero=False)


# --------------------------------------------------------------------------------------------------
# tiles
# --------------------------------------------------------------------------------------------------


def lifted(X: torch.Tensor, bandwidth: float, center=None) -> torch.Tensor:
    """Rows ``z = [sqrt(2) x/s, -|x/s|^2, -1]`` of the centred, scaled features (see module docstring).

    Raises ``ValueError`` when the scaled squared norms ``|x/s|^2`` are not finite or exceed a quarter
    of the dtype's largest value (float32: ~8.5e37, i.e. ``|x - mean| / s`` beyond ~9e18; float64:
    ~4.5e307). Below that bound every partial sum of an exponent ``z . z'`` stays finite whatever the
    summation order (``|2 x.y| <= |x|^2 + |y|^2``), so every kernel value is a finite number in [0, 1];
    above it a tiny bandwidth or overflowing features would give NaN kernel values, with which the
    herding loop silently repeats indices.
    """
    if center is None:
        center = X.mean(dim=0)
    if X.shape[0] > LIFT_CHUNK:  # a large pool: Z filled by chunks, no full-size temporaries (same values)
        Z = torch.empty(X.shape[0], X.shape[1] + 2, dtype=X.dtype, device=X.device)
        for s in range(0, X.shape[0], LIFT_CHUNK):
            Z[s : s + LIFT_CHUNK] = lifted(X[s : s + LIFT_CHUNK], bandwidth, center)
        return Z
    Xs = (X - center) / bandwidth
    sq = (Xs * Xs).sum(dim=1, keepdim=True)
    limit = torch.finfo(sq.dtype).max / 4.0
    if not bool((sq <= limit).all()):  # also False for NaN
        raise ValueError(
            f"the kernel is not finite: the features divided by the bandwidth {bandwidth!r} overflow "
            f"{str(sq.dtype).removeprefix('torch.')} (squared norm above {limit:.3g}); "
            "pass a larger bandwidth, rescale the features, or pass float64 features"
        )
    return torch.cat([Xs * math.sqrt(2.0), -sq, -torch.ones_like(sq)], dim=1).contiguous()


def partner(Z: torch.Tensor) -> torch.Tensor:
    """Partner rows ``z' = [sqrt(2) y/s, 1, |y/s|^2]`` of lifted rows, so that ``z . z'`` is the exponent."""
    d = Z.shape[1] - 2
    return torch.cat([Z[..., :d], -Z[..., d + 1 :], -Z[..., d : d + 1]], dim=-1)


def kernel_tile(Za: torch.Tensor, Zb: torch.Tensor) -> torch.Tensor:
    """Kernel tile ``k(a_i, b_j)`` from lifted rows (a fresh tensor, exponentiated in place)."""
    T = Za @ partner(Zb).T
    return T.clamp_(max=0.0).exp_()


def kernel_row(Z: torch.Tensor, z_partner: torch.Tensor) -> torch.Tensor:
    """One kernel row ``k(x_i, b)`` for all lifted rows ``x_i`` of ``Z`` and one partner row."""
    return torch.mv(Z, z_partner).clamp_(max=0.0).exp_()


def kernel_rows(Z: torch.Tensor, partners: torch.Tensor, chunk: int = 4096, pmap=map) -> torch.Tensor:
    """Kernel rows ``k(b_r, x_i)`` (``len(partners) x n``) of partner rows ``b_r`` against all lifted rows of ``Z``.

    One pass over ``Z`` in chunks of ``chunk`` rows: each chunk's exponents come from one matrix product
    ``Z_chunk @ partners.T`` (with the partners transposed once, contiguous: on a CPU the tall product is about
    a quarter faster than ``partners @ Z_chunk.T`` and gives the same bits) and are exponentiated while they
    are in cache. The chunks split the rows of ``Z``, not the sums, so every value is the one
    ``kernel_tile`` gives.

    ``pmap``: the ``map`` the chunks run with, e.g. a :func:`~sslkit.device.task_pool`'s (concurrently, each on one
    torch thread); each chunk is the same computation either way, so the rows are bit-identical.
    """
    out = torch.empty(partners.shape[0], Z.shape[0], dtype=Z.dtype, device=Z.device)
    PT = partners.T.contiguous()

    def fill(s: int) -> None:
        out[:, s : s + chunk] = (Z[s : s + chunk] @ PT).clamp_(max=0.0).exp_().T

    for _ in pmap(fill, range(0, Z.shape[0], chunk)):
        pass
    return out


def _tile_sums(T: torch.Tensor, dim: int) -> torch.Tensor:
    """Row (``dim=1``) or column (``dim=0``) sums of one float tile as float64.

    A matrix-vector product with a ones vector (BLAS, in the tile's dtype: a float32 tile sum of at most
    ``block`` terms in (0, 1] has relative error ~1e-7) is ~25x faster on a CPU than ``T.sum(dtype=float64)``,
    which converts every element; the tiles are then accumulated in float64.
    """
    ones = torch.ones(T.shape[dim], dtype=T.dtype, device=T.device)
    return (T @ ones if dim == 1 else ones @ T).to(torch.float64)


def partner_blocks(Z: torch.Tensor, block_size: int) -> list[torch.Tensor]:
    """The partner rows of ``Z`` (:func:`partner`) times ``log2 e`` by blocks of ``block_size`` rows, each
    transposed and contiguous (``(d + 2) x block``): a tile of kernel values is then ``exp2(Za @ block)``
    (:func:`_exp2_tile`; the transposed block runs about 10-20 % faster on a CPU than ``Za @ partner(Zb).T`` on a
    transposed view). Memory: one more copy of ``Z``."""
    return [partner(Z[j : j + block_size]).mul_(LOG2E).T.contiguous() for j in range(0, Z.shape[0], block_size)]


def _exp2_tile(T: torch.Tensor) -> torch.Tensor:
    """Kernel values from a tile of base-2 exponents (a product with :func:`partner_blocks`), in place."""
    return T.clamp_(max=0.0).exp2_()


def _diagonal_sums(Zi: torch.Tensor, block: torch.Tensor, tile: torch.Tensor) -> torch.Tensor:
    """Row sums (float64) of the symmetric diagonal tile ``exp2(Zi @ block)``, from three of its four quarters: the
    two on the diagonal and the upper-right one, whose column sums stand for the lower-left one's row sums (the
    same values: 3/4 of the tile's multiply-adds instead of all of them)."""
    m = Zi.shape[0]
    h = (m + 1) // 2
    sums = torch.zeros(m, dtype=torch.float64, device=Zi.device)
    for a0, a1, b0, b1 in ((0, h, 0, h), (0, h, h, m), (h, m, h, m)):
        if a1 > a0 and b1 > b0:
            T = torch.mm(Zi[a0:a1], block[:, b0:b1], out=tile[: (a1 - a0) * (b1 - b0)].view(a1 - a0, b1 - b0))
            _exp2_tile(T)
            sums[a0:a1] += _tile_sums(T, 1)
            if a0 != b0:
                sums[b0:b1] += _tile_sums(T, 0)
    return sums


def band_sums(Z: torch.Tensor, blocks: list[torch.Tensor], bi: int, block_size: int) -> list[tuple]:
    """The tiles of band ``bi`` of :func:`symmetric_row_sums` (tiles ``(bi, bj)``, ``bj >= bi``): for each, its
    float64 row sums and (off the diagonal) column sums, in ``bj`` order, its tiles computed into one buffer (a new
    tile each time would let a pool's threads grow the process by hundreds of MB of freed, unreturned memory: glibc's
    per-thread arenas, ``b_gkhr_speed.py``). A band is independent of the others, so
    bands can be computed anywhere (:func:`sslkit.select.ray_mu.ray_kernel_row_sums` spreads them over Ray workers);
    :func:`accumulate_bands` adds them up in one fixed order."""
    i = bi * block_size
    Zi = Z[i : i + block_size]
    tile = torch.empty(Zi.shape[0] * blocks[bi].shape[1], dtype=Z.dtype, device=Z.device)  # one buffer per band
    out = [(_diagonal_sums(Zi, blocks[bi], tile), None)]
    for bj in range(bi + 1, len(blocks)):
        T = torch.mm(Zi, blocks[bj], out=tile[: Zi.shape[0] * blocks[bj].shape[1]].view(Zi.shape[0], -1))
        _exp2_tile(T)
        out.append((_tile_sums(T, 1), _tile_sums(T, 0)))
    return out


def accumulate_bands(n: int, bands, block_size: int, device=None) -> torch.Tensor:
    """``sum_j k(x_i, x_j)`` from the bands of :func:`band_sums`, given in band order: each tile's row sums go to
    its row block, its column sums to its column block, in the order of the tiles -- one fixed order of float64
    additions, so the result does not depend on where (or in what order) the bands were computed."""
    sums = torch.zeros(n, dtype=torch.float64, device=device)
    for bi, band in enumerate(bands):
        i = bi * block_size
        for k, (rows, cols) in enumerate(band):
            j = (bi + k) * block_size
            sums[i : i + block_size] += rows.to(sums.device)
            if cols is not None:
                sums[j : j + block_size] += cols.to(sums.device)
    return sums


def symmetric_row_sums(Z: torch.Tensor, block_size: int) -> torch.Tensor:
    """``sum_j k(x_i, x_j)`` (diagonal included) by upper-triangular tiles, accumulated in float64.

    Each off-diagonal tile is computed once and used twice (its row sums and its column sums), and each diagonal
    tile from three of its quarters (:func:`_diagonal_sums`), which about halves the work of the dense ``n x n``
    computation; memory is one ``block x block`` tile plus the
    transposed partner rows (:func:`partner_blocks`) and one band's sums (``n`` floats) per worker.

    On a CPU the bands are shared among torch's thread count of Python threads, each band on one torch thread
    (:func:`sslkit.device.task_pool`): the sums are the one-thread sums whatever the thread count (a tile's float32
    sums would otherwise round differently with another count), and a busy machine cannot stall a barrier.
    """
    blocks = partner_blocks(Z, block_size)

    def band(bi: int) -> list[tuple]:
        return band_sums(Z, blocks, bi, block_size)

    with task_pool(Z.device, len(blocks)) as pmap:  # each band on one torch thread, added in band order
        return accumulate_bands(Z.shape[0], pmap(band, range(len(blocks))), block_size, Z.device)


def cross_row_sums(Za: torch.Tensor, Zb: torch.Tensor, block_size: int) -> torch.Tensor:
    """``sum_j k(a_i, b_j)`` for every row of ``Za`` (accumulated in float64), by tiles of ``block x block``; on a CPU
    the row blocks are shared by a :func:`~sslkit.device.task_pool`, each on one torch thread, as in
    :func:`symmetric_row_sums`."""
    blocks = partner_blocks(Zb, block_size)
    sums = torch.zeros(Za.shape[0], dtype=torch.float64, device=Za.device)

    def row_block(i: int) -> None:  # its own rows of sums, its tiles in one order: independent of the others
        Zi = Za[i : i + block_size]
        tile = torch.empty(Zi.shape[0] * blocks[0].shape[1], dtype=Za.dtype, device=Za.device)  # one buffer each
        for block in blocks:
            T = torch.mm(Zi, block, out=tile[: Zi.shape[0] * block.shape[1]].view(Zi.shape[0], -1))
            sums[i : i + block_size] += _tile_sums(_exp2_tile(T), 1)

    starts = range(0, Za.shape[0], block_size)
    with task_pool(Za.device, len(starts)) as pmap:  # each block on one torch thread
        for _ in pmap(row_block, starts):
            pass
    return sums


# --------------------------------------------------------------------------------------------------
# public functions
# --------------------------------------------------------------------------------------------------


def gaussian_kernel(A, B=None, *, bandwidth, device="auto") -> torch.Tensor:
    """Dense Gaussian kernel matrix ``k(a_i, b_j) = exp(-||a_i - b_j||^2 / bandwidth^2)`` (paper B §6).

    For small inputs (plots, tests): the result is ``len(A) x len(B)`` in memory. ``B=None`` means
    ``B = A``. Returned on ``device`` in the features' dtype.
    """
    bandwidth = check_bandwidth(bandwidth)
    dev = resolve_device(device)
    A = check_features(A, "A", device=dev)
    B = A if B is None else check_features(B, "B", device=dev, dtype=A.dtype)
    if A.shape[1] != B.shape[1]:
        raise ValueError(f"A and B must have the same number of features, got {A.shape[1]} and {B.shape[1]}")
    center = A.mean(dim=0)
    return kernel_tile(lifted(A, bandwidth, center), lifted(B, bandwidth, center))


def median_bandwidth(X, *, max_samples: int = 5000, seed=0, device="auto") -> float:
    """Median heuristic of paper B §6: ``sigma = median{ ||x_i - x_j|| : i < j }``.

    Exact (all ``n (n-1) / 2`` distinct pairs) when ``n <= max_samples``; otherwise computed on
    ``max_samples`` rows drawn without replacement by ``numpy.random.default_rng(seed)``. The median of
    an even number of distances is the mean of the two middle ones (``numpy.median``). Distinct pairs
    only: the ``n`` zero self-distances are not counted. Raises ``ValueError`` when the median is 0 (more
    than half the pairs are duplicates), since no bandwidth can be derived from it.
    """
    max_samples = check_count(max_samples, "max_samples", allow_zero=False)
    if max_samples < 2:
        raise ValueError(f"max_samples must be at least 2, got {max_samples}")
    seed = check_seed(seed)
    dev = resolve_device(device)
    X = check_features(X, device=dev)
    n = X.shape[0]
    if n < 2:
        raise ValueError(f"median_bandwidth needs at least 2 samples, got {n}")
    if n > max_samples:
        rows = np.sort(np.random.default_rng(seed).choice(n, size=max_samples, replace=False))
        X = X[torch.as_tensor(rows, device=dev)]
    Z = lifted(X, 1.0)
    parts = []
    block = 1024
    for i in range(0, Z.shape[0], block):
        neg_d2 = Z[i : i + block] @ partner(Z[i + 1 :]).T if i + 1 < Z.shape[0] else None
        if neg_d2 is None:
            break
        # keep pairs (i + r, j) with j > i + r: column c of the tile is row i + 1 + c
        mask = torch.ones(neg_d2.shape, dtype=torch.bool, device=dev).triu_(0)
        parts.append((-neg_d2[mask]).clamp_(min=0.0).sqrt_().cpu())
    dists = torch.cat(parts).numpy()
    sigma = float(np.median(dists))
    if not sigma > 0.0:
        raise ValueError(
            "the median pairwise distance is 0 (more than half the pairs coincide); "
            "pass an explicit positive bandwidth instead"
        )
    return sigma


def kernel_row_sums(X, *, bandwidth, block_size: int = DEFAULT_BLOCK_SIZE, device="auto") -> torch.Tensor:
    """``r_i = sum_{j=1}^n k(x_i, x_j)`` for every i, diagonal included (float64 tensor on ``device``).

    ``r / n`` is Algorithm 1's ``mu(x_i)`` (line 1) and the vector ``p`` of App. A.1; ``r.sum() / n^2``
    is ``K-bar`` of Lemma B.6. Computed blockwise over upper-triangular tiles: memory
    ``O(n d + block_size^2)``, never ``n x n``.
    """
    bandwidth = check_bandwidth(bandwidth)
    block_size = check_block_size(block_size)
    dev = resolve_device(device)
    X = check_features(X, device=dev)
    return symmetric_row_sums(lifted(X, bandwidth), block_size)
