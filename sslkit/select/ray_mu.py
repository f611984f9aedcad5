"""Algorithm 1's line 1 beyond one machine: the exact ``mu`` with its tiles spread over Ray workers.

``mu_i = sum_j k(x_i, x_j) / n`` costs ``O(n^2 d)``: the one part of RDSS that grows with the square of the pool
(the herding loop is ``O(n m d)``). :func:`kernel_row_sums` computes it by upper-triangular tiles on one process;
here the same tiles are computed by Ray tasks (the engine the experiment sweeps already use), one task per band of
tiles, and the driver adds their float64 sums in the single-process order (:func:`~.kernel.accumulate_bands`). So
the result equals :func:`kernel_row_sums` bit for bit where the workers' matrix products round as the driver's do
(the same machine and torch build; tested on a local cluster), and never depends on which task ends first.

Use it with an explicit bandwidth (the median heuristic needs only a sample: :func:`~.kernel.median_bandwidth`)::

    h = median_bandwidth(X)
    mu = ray_kernel_row_sums(X, bandwidth=h) / len(X)
    GKHR(m=1000, bandwidth=h).fit(X, mu=mu)

Ray is imported only here (``pip install 'sslkit[clusters]'``).
"""

from __future__ import annotations

import torch

from sslkit._checks import check_count
from sslkit.device import task_pool
from sslkit.select.kernel import (
    DEFAULT_BLOCK_SIZE,
    accumulate_bands,
    band_sums,
    check_bandwidth,
    check_block_size,
    check_features,
    lifted,
    partner_blocks,
)

__all__ = ["ray_kernel_row_sums"]


def _bands(Z: torch.Tensor, block_size: int, first: int, last: int, threads: int) -> list:
    """Bands ``first .. last - 1`` of the tiles of ``Z`` (run inside a Ray task, on CPU), shared among ``threads``
    Python threads with each band on one torch thread, as :func:`~.kernel.symmetric_row_sums` computes them (a
    tile's float32 sums round differently with another torch thread count)."""
    torch.set_num_threads(threads)
    blocks = partner_blocks(Z, block_size)

    def band(bi: int) -> list:
        return band_sums(Z, blocks, bi, block_size)

    with task_pool("cpu", last - first) as pmap:
        return list(pmap(band, range(first, last)))


def ray_kernel_row_sums(
    X,
    *,
    bandwidth,
    block_size: int = DEFAULT_BLOCK_SIZE,
    bands_per_task: int = 1,
    address=None,
    num_cpus: float = 1,
    threads=None,
) -> torch.Tensor:
    """``r_i = sum_j k(x_i, x_j)`` (float64, CPU), as :func:`~.kernel.kernel_row_sums`, by Ray tasks.

    Parameters: ``bandwidth`` (explicit, > 0) and ``block_size`` as for :func:`~.kernel.kernel_row_sums`;
    ``bands_per_task`` bands of tiles per task (band ``b`` holds the tiles ``(b, b'), b' >= b``; there are
    ``ceil(n / block_size)`` bands, the first the heaviest); ``address`` for ``ray.init`` when Ray is not running
    in this process yet (None: ``RAY_ADDRESS`` or a new local cluster); ``num_cpus`` per task; ``threads``: the
    Python threads of each task, each band on one torch thread (None: this process's ``torch.get_num_threads()``;
    the sums do not depend on it). The lifted
    features are put in Ray's object store once. ``r / n`` is the ``mu`` that :meth:`GKHR.fit <sslkit.select.GKHR.fit>`
    accepts.
    """
    try:
        import ray
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("ray_kernel_row_sums needs Ray: pip install 'sslkit[clusters]'") from exc
    bandwidth = check_bandwidth(bandwidth)
    block_size = check_block_size(block_size)
    per_task = check_count(bands_per_task, "bands_per_task", allow_zero=False)
    threads = torch.get_num_threads() if threads is None else check_count(threads, "threads", allow_zero=False)
    X = check_features(X, device=torch.device("cpu"))
    Z = lifted(X, bandwidth)
    n = Z.shape[0]
    n_bands = -(-n // block_size)
    if not ray.is_initialized():
        ray.init(address=address, include_dashboard=False, log_to_driver=False)
    task = ray.remote(_bands).options(num_cpus=num_cpus)
    z_ref = ray.put(Z)
    refs = [task.remote(z_ref, block_size, b, min(b + per_task, n_bands), threads) for b in range(0, n_bands, per_task)]
    # fetched in band order (whatever order the tasks end in), one task's bands in memory at a time
    bands = (band for ref in refs for band in ray.get(ref))
    return accumulate_bands(n, bands, block_size)
