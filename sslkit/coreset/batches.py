"""Per-batch selection (paper C App. D eq. (49)-(50), App. E eq. (52); CORDS ``PerBatch``).

The unlabeled set, in its stored order, is cut into consecutive mini-batches of ``batch_size``
(``b_i = {iB, ..., iB + B - 1}``; the last one holds the remainder when ``B`` does not divide ``N``, as
CORDS' sequential loader does). A per-batch selector works on one gradient per batch, the **mean** of its
members' gradients (:func:`batch_means`; CORDS uses means; eq. (49) writes sums, which for full batches is
the same up to the factor ``B``, which cancels in the facility-location argmin and rescales OMP's weights
by ``1/B``), picks whole batches, and every index of a chosen batch inherits its batch's weight
(:func:`expand_batches`).
"""

from __future__ import annotations

import torch

from sslkit._checks import check_batch_size, check_count, check_features, check_indices

__all__ = ["batch_means", "expand_batches", "n_batches"]


def n_batches(n: int, batch_size: int) -> int:
    """``ceil(n / batch_size)``: the number of consecutive mini-batches of ``n`` samples."""
    return -(-check_count(n, "n") // check_batch_size(batch_size))


def batch_means(G, batch_size: int) -> torch.Tensor:
    """Means of the rows of ``G`` (``N x d``) over consecutive mini-batches: ``ceil(N / B) x d``."""
    G = check_features(G, "gradients")
    B = check_batch_size(batch_size)
    n, d = G.shape
    nb = n_batches(n, B)
    full = (n // B) * B
    out = torch.empty(nb, d, dtype=G.dtype, device=G.device)
    out[: n // B] = G[:full].reshape(n // B, B, d).mean(dim=1)
    if full < n:
        out[-1] = G[full:].mean(dim=0)
    return out


def expand_batches(batches, batch_weights, n: int, batch_size: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Sample indices and weights of the chosen batches, batch by batch in the given order.

    ``batches``: distinct batch ids (``0 <= b < ceil(n / B)``; integers, never wrapped or truncated),
    ``batch_weights``: one weight per batch. Returns ``(indices int64, weights float32)`` on the CPU; each
    index of batch ``b`` gets ``batch_weights[b]``.
    """
    B = check_batch_size(batch_size)
    nb = n_batches(n, B)
    b = torch.from_numpy(
        check_indices(batches, nb, f"batch ids (n = {n}, batch_size = {B})", distinct=True, allow_empty=True)
    )
    w = torch.as_tensor(batch_weights, dtype=torch.float32).cpu().reshape(-1)
    if b.shape != w.shape:
        raise ValueError(f"got {b.numel()} batches but {w.numel()} batch weights")
    parts = [torch.arange(i * B, min((i + 1) * B, n)) for i in b.tolist()]
    idx = torch.cat(parts) if parts else torch.empty(0, dtype=torch.long)
    sizes = torch.tensor([len(p) for p in parts], dtype=torch.long)
    return idx, w.repeat_interleave(sizes)
