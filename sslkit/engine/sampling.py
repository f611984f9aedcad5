"""The batches of a fit: endless streams of seeded random permutations, and the unlabeled pool a coreset
callback may restrict (paper C Algorithm 1)."""

from __future__ import annotations

import torch

from sslkit._checks import check_count


class PermutationStream:
    """Endless stream of index batches cut from successive random permutations of ``range(n)``."""

    def __init__(self, n: int, batch_size: int, generator: torch.Generator, device: torch.device):
        self.n, self.batch_size = n, min(batch_size, n)
        self.generator, self.device = generator, device
        self.buffer = torch.empty(0, dtype=torch.int64, device=device)

    def next(self) -> torch.Tensor:
        while self.buffer.numel() < self.batch_size:
            perm = torch.randperm(self.n, generator=self.generator).to(self.device)
            self.buffer = torch.cat([self.buffer, perm])
        batch, self.buffer = self.buffer[: self.batch_size], self.buffer[self.batch_size :]
        return batch


class UnlabeledSampler:
    """The unlabeled batches of a fit: the full pool ``range(n)`` or a subset with per-sample weights.

    Batches of ``min(batch_size, pool size)`` indices are cut from an endless stream of random permutations
    of the current pool (a seeded CPU generator). :meth:`restrict` switches to a subset (paper C Algorithm 1:
    the coreset, with CRAIG / GradMatch weights); :meth:`reset` returns to the full pool without weights.
    Either starts a fresh permutation. ``next()`` returns ``(indices into X_u, weights or None)``.
    """

    def __init__(self, n: int, batch_size: int, generator: torch.Generator, device: torch.device):
        self.n, self.batch_size = (
            check_count(n, "n", allow_zero=False),
            check_count(batch_size, "batch_size", allow_zero=False),
        )
        self.generator, self.device = generator, device
        self.indices = self.weights = None
        self._stream = PermutationStream(n, batch_size, generator, device)

    @property
    def size(self) -> int:
        """Number of samples in the current pool."""
        return self.n if self.indices is None else int(self.indices.shape[0])

    @property
    def restricted(self) -> bool:
        return self.indices is not None

    def restrict(self, indices, weights=None) -> None:
        """Sample only ``indices`` (distinct, in ``[0, n)``), each with ``weights`` (finite, >= 0, not all 0;
        None = all 1) multiplying its unlabeled loss."""
        idx = torch.as_tensor(indices)
        if idx.dtype == torch.bool or idx.is_floating_point() or idx.dim() != 1 or idx.numel() == 0:
            raise ValueError(
                f"indices must be a non-empty 1-D integer array, got {idx.dtype} of shape {tuple(idx.shape)}"
            )
        idx = idx.to(torch.int64).cpu()
        if int(idx.min()) < 0 or int(idx.max()) >= self.n:
            raise ValueError(
                f"indices must lie in [0, {self.n}) (the unlabeled pool), got [{int(idx.min())}, {int(idx.max())}]"
            )
        if torch.unique(idx).numel() != idx.numel():
            raise ValueError("indices must be distinct (a coreset is a set)")
        w = None
        if weights is not None:
            w = torch.as_tensor(weights, dtype=torch.float32).cpu()
            if w.shape != idx.shape:
                raise ValueError(f"weights must have one entry per index ({idx.numel()}), got shape {tuple(w.shape)}")
            if not bool(torch.isfinite(w).all()) or bool((w < 0).any()) or not bool((w > 0).any()):
                raise ValueError("weights must be finite, non-negative and not all zero")
            w = w.to(self.device)
        self.indices, self.weights = idx.to(self.device), w
        self._stream = PermutationStream(idx.numel(), self.batch_size, self.generator, self.device)

    def reset(self) -> None:
        """Back to the full pool, without weights."""
        self.indices = self.weights = None
        self._stream = PermutationStream(self.n, self.batch_size, self.generator, self.device)

    def next(self) -> tuple[torch.Tensor, torch.Tensor | None]:
        pos = self._stream.next()
        if self.indices is None:
            return pos, None
        return self.indices[pos], (None if self.weights is None else self.weights[pos])
