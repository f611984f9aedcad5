"""GKHR (paper B Algorithm 1) and GKH (Algorithm 2): generalized kernel herding for alpha-MMD.

Both minimise alpha-MMD^2 (eq. (6)) greedily by the Frank-Wolfe step of App. A.1 / eq. (7):

    i*_p in argmin_i  S_{p-1}(x_i) - alpha mu(x_i),
    S_p = (1 - 1/p) S_{p-1} + (1/p) k(x_{i*_p}, .),      S_0 = 0,

with ``mu(x_i) = sum_j k(x_j, x_i) / n`` (line 1; the diagonal ``k(x_i, x_i) = 1`` is included as in
the paper. The official code drops it and still divides by n (defect B3): every mu_i moves by the same
1/n, so the selection is the same). GKHR (eq. (8)) takes the argmin over the not-yet-selected points
only, so it never repeats an index; GKH takes it over all points, so ``indices_`` may repeat (sampling
with replacement; then ``m > n`` is allowed too).

Implementation: ``mu`` by upper-triangular tiles (:func:`kernel_row_sums`), then each step needs one
kernel row ``k(x_{i*}, X)`` and a masked argmin. Memory ``O(n d + block_size^2)`` (on a CPU plus a cache of
kernel rows and the candidates below); time ``O(n^2 d / 2 + m n d)``. On a GPU (``lookahead=1`` by default)
each step is one matrix-vector product and the chosen index stays on the device (no host synchronisation per
step). On a CPU one kernel row costs a full read of the features (memory-bound: a matrix-vector product over
the 100 MB of the n = 50 000, d = 512 benchmark), while the rows of ``lookahead`` points cost little more in
one pass (:func:`~sslkit.select.kernel.kernel_rows`). So the CPU loop computes rows ``lookahead`` at a time,
for the points most likely to be picked next:

* **Up to** ``CPU_CANDIDATES`` **samples: a cache.** When the argmin's row is not cached, one pass computes it
  together with the rows of the next ``lookahead - 1`` smallest uncached entries of the objective; rows stay
  cached until their point is picked or evicted. The pick of step p ranks about 4th in the objective of step
  p - 1 (90 % within the top 20), but about 80th five steps earlier, so on the benchmark this cache computes
  about eight rows per pick.
* **Beyond: speculation, then verification.** From the exact objective, the loop runs ahead on the
  ``max(CPU_CANDIDATES, n // 64)`` smallest entries alone -- the same steps, with the kernel rows restricted to
  those candidates (a cache as above, over 4 096 rows instead of n = 50 000) -- for ``lookahead`` picks.
  One pass over the features then computes the full rows of those picks, and the loop replays them on the
  whole objective, keeping each pick as long as it is the argmin there. The speculation is exact on the
  candidates, so it is right until a point outside them becomes the argmin; the first pick of each pass is
  the argmin itself, so every pass makes progress. On the benchmark a pass keeps about 13 of its 16 picks:
  30 passes for 400 picks where the cache alone makes 102 of 32 rows, 0.85 s against 2.5 s (2-core AMD EPYC).

Either way every row used is the exact kernel row a pass of at least ``MIN_PASS_ROWS`` rows gives, so the
selection (indices and objective, bit for bit) does not depend on the caching, the speculation or the
candidates: they decide only how many passes it takes (``passes_``).

Ties go to the smallest index (``torch.argmin``), so the result is deterministic given the features; no
randomness is involved except the seeded subsample of the median bandwidth when ``n > bandwidth_samples``.

Threads: mu's bands of tiles are shared among torch's thread count of Python threads, each band on one torch
thread (:func:`sslkit.device.task_pool`: the same bits as one thread, and no barrier a busy machine can stall).
The loop is m steps of small operations, whose parallel regions are too short to gain from a second thread and,
when another process holds a core, wait for a worker thread that is not running (n = 20 000, d = 256, m = 200
beside one busy process on a loaded 2-core machine: the loop 40 s with 2 threads, 3.2 s with one;
``benchmarks/contention.py``). So the loop runs with one thread (the same task pool's block). Its
passes over the features (``lookahead`` rows at a time, large at a million points) are split into chunks of
:data:`ROW_CHUNK` rows that the same kind of pool computes, and so are the speculation's passes over the candidates
(chunks of :data:`CANDIDATE_CHUNK` rows). Each piece is the computation one thread does, so the
thread count does not change mu, the kernel rows, the objective or the selected indices.
"""

from __future__ import annotations

import math
import os
import time

import numpy as np
import torch

from sslkit._checks import Params, check_bool, check_count, check_seed
from sslkit.device import resolve_device, task_pool
from sslkit.select.kernel import (
    DEFAULT_BLOCK_SIZE,
    check_alpha,
    check_bandwidth,
    check_block_size,
    check_features,
    kernel_row,
    kernel_rows,
    lifted,
    median_bandwidth,
    partner,
    symmetric_row_sums,
)
from sslkit.select.kernel_mean import check_mu_method, lifted_mu
from sslkit.select.mmd import check_mu

__all__ = ["GKHR", "GKH", "auto_alpha"]


#: Kernel rows per pass over the features in the CPU loop: the picks speculated per pass (past ``CPU_CANDIDATES``
#: samples) or the rows cached per pass (module docstring). On the n = 50 000, d = 512 benchmark 16 takes 30 passes
#: and 0.85 s, 32 takes 29 dearer passes and 1.14 s, 8 takes 52 passes (2-core AMD EPYC, AVX-512, 2026-12-06)
CPU_LOOKAHEAD = 16
#: Candidates of the CPU loop's speculation: past this many samples each pass over the features computes the rows of
#: the picks speculated on the objective's ``max(CPU_CANDIDATES, n // 64)`` smallest entries (module docstring; on the
#: n = 50 000 benchmark 2048 takes 37 passes, 4096 30, 8192 22 whose speculation costs more: 0.96, 0.85, 1.43 s; at
#: a million, where a pass reads 2 GB, 16 384 took 158 passes and 61 s, 4096 230 and 71-75 s, 65 536 101 and 69 s)
CPU_CANDIDATES = 4096
#: Rows of the candidates' kernel cache filled per pass over the candidates in the speculation
CANDIDATE_LOOKAHEAD = 32
#: Fewest partner rows in a pass over the features: BLAS rounds a product with fewer columns differently, so a pass
#: pads its picks to this many and every kernel row has the bits of the cached loop's (``tests/test_select_herding``)
MIN_PASS_ROWS = 16
#: Rows of the features per chunk of a pass in the CPU loop (:func:`~sslkit.select.kernel.kernel_rows`); a pass over
#: at least two chunks is shared among torch's thread count of Python threads (module docstring, "Threads")
ROW_CHUNK = 4096
#: Rows of the candidates per chunk of a pass in the speculation (shared by the same pool)
CANDIDATE_CHUNK = 1024


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


class _Herding(Params):
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
        progress=False,
        mu_method="exact",
        mu_size: int = 8192,
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
        self.progress = check_bool(progress, "progress")
        self.mu_method = check_mu_method(mu_method)
        self.mu_size = check_count(mu_size, "mu_size", allow_zero=False)

    def fit(self, X, y=None, *, mu=None):
        """Select ``m`` samples of ``X`` (``y`` is ignored: the selection is label-free).

        ``mu`` (optional, length n): Algorithm 1's line 1, ``mu_i = sum_j k(x_i, x_j) / n``, precomputed for the
        same ``X`` and an explicit ``bandwidth`` (e.g. ``kernel_row_sums(X, bandwidth=h) / n``, or another fit's
        ``mu_``): it skips the ``O(n^2 d)`` pass, so a sweep over ``alpha`` or ``m`` on one pool (Table 4) pays
        for it once. The selection is the same as without it.

        Sets ``indices_`` (int64, selection order), ``alpha_``, ``bandwidth_``, ``mu_`` (float64 numpy,
        ``mu(x_i)``), ``objective_`` (the minimised value ``S_{p-1} - alpha mu`` at each pick) and
        ``timings_`` (wall-clock seconds: ``bandwidth``, ``mu``, ``loop``, ``total``; and the process CPU
        seconds of mu and of the loop, all threads: ``mu_cpu``, ``loop_cpu`` -- on a shared machine the
        steadier measure of the work).
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

        if mu is not None and isinstance(self.bandwidth, str):
            raise ValueError("a precomputed mu needs the explicit bandwidth it was computed with, not 'median'")
        t0, c0 = time.perf_counter(), time.process_time()
        Z = lifted(X, bandwidth)
        if mu is not None:
            mu = check_mu(mu, n, dev)
        elif self.mu_method == "exact":
            mu = symmetric_row_sums(Z, self.block_size) / n
        else:  # an unbiased estimate from mu_size kernel samples per row (sslkit.select.kernel_mean)
            mu = lifted_mu(Z, self.mu_method, self.mu_size, self.seed, self.block_size)
        _sync(dev)
        timings["mu"], timings["mu_cpu"] = time.perf_counter() - t0, time.process_time() - c0

        t0, c0 = time.perf_counter(), time.process_time()
        # latency-bound: many small steps on one torch thread, its passes over the features shared by a task pool
        with task_pool(dev, n // ROW_CHUNK) as pmap:  # (module docstring, "Threads")
            indices, objective = self._loop(Z, mu, alpha, pmap)
        _sync(dev)
        timings["loop"], timings["loop_cpu"] = time.perf_counter() - t0, time.process_time() - c0

        self.indices_ = indices.cpu().numpy().astype(np.int64)
        self.objective_ = objective.cpu().numpy()
        self.mu_ = mu.cpu().numpy()
        self.alpha_ = alpha
        self.bandwidth_ = bandwidth
        self.n_samples_ = n
        timings["total"] = time.perf_counter() - t_start
        self.timings_ = timings
        self.seconds_ = timings["total"]
        return self

    def _loop(self, Z: torch.Tensor, mu: torch.Tensor, alpha: float, pmap=map):
        # T = S_{p-1} - alpha mu, kept directly: T_p = (1 - b) T_{p-1} + b (k(x_{i*_p}, .) - alpha mu)
        # with b = 1/p (line 5 minus alpha mu on both sides); selected entries of T are +inf for GKHR
        # ((1 - b) inf stays inf for p >= 2; at p = 1, b = 1 overwrites T, so the pick is re-blocked).
        n, dev = Z.shape[0], Z.device
        amu = alpha * mu
        T = -amu.clone()  # S_0 = 0
        lookahead = min(
            self.lookahead if self.lookahead is not None else (CPU_LOOKAHEAD if dev.type == "cpu" else 1), n
        )
        if lookahead == 1:  # one kernel row per step; the index stays on the device (no host sync)
            indices = torch.empty(self.m, dtype=torch.long, device=dev)
            objective = torch.empty(self.m, dtype=torch.float64, device=dev)
            self.passes_ = self.m
            for p in self._steps():
                i = torch.argmin(T).view(1)  # first index among ties
                indices[p - 1] = i[0]
                objective[p - 1] = T[i][0]
                self._update(T, kernel_row(Z, partner(Z[i])[0]), amu, p, i)
            return indices, objective
        if n <= CPU_CANDIDATES:  # a small pool: the cache of full kernel rows is all it takes
            return self._cached_loop(Z, T, amu, lookahead, pmap)
        return self._speculative_loop(Z, T, amu, lookahead, pmap)

    def _cached_loop(self, Z, T, amu, lookahead, pmap=map):
        """Each step's row from a :class:`_RowCache` of full kernel rows (module docstring)."""
        rows = _RowCache(Z, lookahead, pmap)
        indices = np.empty(self.m, dtype=np.int64)
        objective = np.empty(self.m, dtype=np.float64)
        for p in self._steps():
            i = int(torch.argmin(T))  # first index among ties
            indices[p - 1], objective[p - 1] = i, float(T[i])
            self._update(T, rows.get(i, T), amu, p, i)
            if not self._replace:
                rows.drop(i)  # GKHR never picks i again
        self.passes_ = rows.passes
        return torch.from_numpy(indices), torch.from_numpy(objective)

    def _speculative_loop(self, Z, T, amu, lookahead, pmap=map):
        """Speculate up to ``lookahead`` picks on the candidates, compute their full rows in one pass, keep the
        picks the exact objective confirms (module docstring). The same steps, rows and bits as the cached loop."""
        indices = np.empty(self.m, dtype=np.int64)
        objective = np.empty(self.m, dtype=np.float64)
        steps, p = iter(self._steps()), 1
        self.passes_ = 0
        while p <= self.m:
            picks = self._speculate(Z, T, amu, p, min(lookahead, self.m - p + 1), pmap)
            cols = picks + picks[-1:] * (MIN_PASS_ROWS - len(picks))  # >= MIN_PASS_ROWS partners: the same bits
            rows = kernel_rows(Z, partner(Z[torch.tensor(cols, device=Z.device)]), ROW_CHUNK, pmap)
            self.passes_ += 1
            for k, i in enumerate(picks):
                if k and int(torch.argmin(T)) != i:  # (the first is the argmin by construction)
                    break  # the speculation left the candidates: the next pass starts from here
                indices[p - 1], objective[p - 1] = i, float(T[i])
                self._update(T, rows[k], amu, p, i)
                p += 1
                next(steps, None)
        next(steps, None)  # (closes a progress bar)
        return torch.from_numpy(indices), torch.from_numpy(objective)

    def _speculate(self, Z, T, amu, p, depth, pmap=map) -> list[int]:
        """The next ``depth`` picks as the loop would make them if they all came from the ``max(CPU_CANDIDATES,
        n // 64)`` smallest entries of the objective: the first is its argmin (alone, when a tie left it out of the
        candidates); the rest are exact on the candidates (their kernel rows restricted to them, from a
        :class:`_RowCache` of ``Z``'s candidate rows)."""
        first = int(torch.argmin(T))  # first index among ties
        n = T.shape[0]
        c = min(max(CPU_CANDIDATES, n // 64), n if self._replace else n - p + 1)  # at most the finite entries
        cand = torch.topk(T, c, largest=False, sorted=False).indices
        cand = torch.sort(cand).values  # index order, so argmin's ties go to the smallest index as on all of T
        j = int(torch.searchsorted(cand, first))  # the argmin's position among the candidates
        if j == c or int(cand[j]) != first:  # a tie at the boundary left it out: this pass computes its row alone
            return [first]
        Tc, amuc = T[cand], amu[cand]
        rows = _RowCache(torch.index_select(Z, 0, cand), CANDIDATE_LOOKAHEAD, pmap, CANDIDATE_CHUNK)
        picks = [first]
        for k in range(depth):
            if k:
                j = int(torch.argmin(Tc))
                if not math.isfinite(float(Tc[j])):
                    break
                picks.append(int(cand[j]))
            if k + 1 < depth:
                self._update(Tc, rows.get(j, Tc), amuc, p + k, j)
                if not self._replace:
                    rows.drop(j)
        return picks

    def _steps(self):
        """The picks 1..m, under a ``tqdm`` bar with ``progress=True`` (silenced by ``SSLKIT_PROGRESS=0``)."""
        steps = range(1, self.m + 1)
        if not self.progress or os.environ.get("SSLKIT_PROGRESS", "").strip().lower() in ("0", "false", "no", "off"):
            return steps
        from tqdm.auto import tqdm

        return tqdm(steps, desc=type(self).__name__, unit="pick")

    def _update(self, T, row, amu, p, i):
        b = 1.0 / p
        T.mul_(1.0 - b).add_(row, alpha=b).add_(amu, alpha=-b)
        if not self._replace:
            T[i] = math.inf

    def __repr__(self):
        return (
            f"{type(self).__name__}(m={self.m}, alpha={self.alpha!r}, bandwidth={self.bandwidth!r}, "
            f"device={self.device!r}, block_size={self.block_size}"
            + (f", mu_method={self.mu_method!r}, mu_size={self.mu_size})" if self.mu_method != "exact" else ")")
        )


class GKHR(_Herding):
    """Generalized Kernel Herding without Replacement (paper B Algorithm 1, eq. (8)): RDSS's sampler.

    ``GKHR(m, alpha="auto", bandwidth="median", device="auto", block_size=2048).fit(X).indices_``.

    * ``alpha``: ``"auto"`` = ``1 - 1/sqrt(m)`` (§7.1) or a number in (0, 1].
    * ``bandwidth``: ``"median"`` = :func:`median_bandwidth` (§6; exact for ``n <= bandwidth_samples``,
      else on a subsample drawn with ``seed``) or a positive number ``sigma`` of
      ``k(x,y) = exp(-||x-y||^2 / sigma^2)``.
    * ``m <= n``; ``m = n`` returns a permutation of all samples.
    * ``lookahead``: kernel rows computed per pass over the features in the greedy loop (module docstring:
      the picks speculated per pass, or the rows cached; ``None`` = 16 on a CPU, 1 on a GPU: one row per
      step, no cache). Any value selects the same indices up to float rounding of near-ties (BLAS may round
      a product of fewer than ``MIN_PASS_ROWS`` rows differently).
    * ``progress``: a ``tqdm`` bar over the ``m`` picks (``SSLKIT_PROGRESS=0`` silences it).
    * ``mu_method``: ``"exact"`` (Algorithm 1's line 1, ``O(n^2 d)``) or an unbiased estimate from ``mu_size``
      kernel samples per row, ``O(n mu_size d)``: ``"landmarks"`` or ``"rff"`` (:mod:`sslkit.select.kernel_mean`,
      with the error bound and what it means for alpha-MMD^2), for pools of a million. Seeded by ``seed``.

    scikit-learn's ``get_params`` / ``set_params`` (so :func:`sklearn.base.clone`); ``fit`` always starts afresh.

    Attributes after ``fit``: ``indices_`` (int64, distinct, selection order; the first is
    ``argmax mu``, the densest point), ``alpha_``, ``bandwidth_``, ``mu_``, ``objective_``, ``timings_``,
    ``seconds_`` (``timings_["total"]``), ``passes_`` (passes over the features the greedy loop made).

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


class _RowCache:
    """Kernel rows ``k(x_c, .)`` of up to ``8 lookahead`` points (at most ``max(lookahead, d + 2)``: no larger
    than ``Z`` unless ``lookahead`` is), filled ``lookahead`` rows per pass over ``Z``.

    On a CPU one kernel row costs a full read of ``Z`` (memory-bound), while ``lookahead`` rows computed in
    one pass (:func:`~sslkit.select.kernel.kernel_rows`) cost about the same. When the loop needs the row of
    a point that is not cached, one pass computes it together with the rows of the ``lookahead - 1`` smallest
    uncached entries of the objective (the likeliest next picks); rows stay cached until the point is picked
    (GKHR) or evicted to make room (largest objective first). Every row is the same kernel row whichever pass
    computed it, so the selection does not depend on the caching. ``pmap`` / ``chunk``: the passes' map and rows
    per chunk (:func:`~sslkit.select.kernel.kernel_rows`; ``0`` = ``ROW_CHUNK``); ``passes`` counts them.
    """

    def __init__(self, Z: torch.Tensor, lookahead: int, pmap=map, chunk: int = 0):
        n = Z.shape[0]
        self.Z, self.lookahead, self.pmap, self.chunk = Z, lookahead, pmap, chunk or ROW_CHUNK
        cap = min(max(lookahead, min(8 * lookahead, Z.shape[1])), n)
        self.rows = torch.empty(cap, n, dtype=Z.dtype, device=Z.device)
        self.slot = np.full(n, -1, dtype=np.int64)  # row slot of each point, -1 = not cached
        self.owner = np.full(cap, -1, dtype=np.int64)  # point held by each slot, -1 = free
        self.passes = 0

    def get(self, i: int, T: torch.Tensor) -> torch.Tensor:
        if self.slot[i] < 0:
            self._fill(i, T)
        return self.rows[self.slot[i]]

    def drop(self, i: int) -> None:
        s = self.slot[i]
        if s >= 0:
            self.owner[s], self.slot[i] = -1, -1

    def _fill(self, i: int, T: torch.Tensor) -> None:
        dev = T.device
        held = self.owner[self.owner >= 0]
        Tm = T.clone()
        if held.size:
            Tm[torch.from_numpy(held).to(dev)] = math.inf
        # candidates: the smallest uncached, unselected entries of the objective (i is the smallest)
        want = min(self.lookahead, int(torch.isfinite(Tm).sum()))
        cand = torch.topk(Tm, want, largest=False, sorted=True).indices.cpu().numpy()
        if i not in cand:  # ties: make sure the point asked for is computed
            cand[-1] = i
        free = np.flatnonzero(self.owner < 0)
        if free.size < want:  # evict the cached points least likely to be picked (largest objective)
            worst = torch.topk(T[torch.from_numpy(held).to(dev)], want - free.size).indices.cpu().numpy()
            for c in held[worst]:
                self.drop(int(c))
            free = np.flatnonzero(self.owner < 0)
        slots = free[:want]
        zc = self.Z[torch.from_numpy(cand).to(dev)]
        self.rows[torch.from_numpy(slots).to(dev)] = kernel_rows(self.Z, partner(zc), self.chunk, self.pmap)
        self.owner[slots], self.slot[cand] = cand, slots
        self.passes += 1
