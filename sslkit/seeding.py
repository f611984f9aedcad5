"""Seeding: one integer seed controls every random number generator a run touches.

``seed_everything`` seeds Python's :mod:`random`, NumPy's legacy global generator and torch (CPU and
every CUDA device). ``make_generator`` returns an independent, explicitly seeded
:class:`torch.Generator` (used by the training loop to draw batch indices, so batch order does not depend
on how many random numbers the model or the algorithm consumed). ``derive_seeds`` turns one seed into
several statistically independent ones (via :class:`numpy.random.SeedSequence`).

On CPU, the same seed gives bit-identical training runs. On GPU, some cuDNN/cuBLAS kernels are not
deterministic; ``seed_everything(seed, deterministic=True)`` asks torch for deterministic algorithms
(slower, and it raises on operations that have no deterministic implementation).
"""

from __future__ import annotations

import os
import random

import numpy as np
import torch

from sslkit._checks import check_count, check_seed

__all__ = ["seed_everything", "make_generator", "derive_seeds"]


def seed_everything(seed: int, *, deterministic: bool = False) -> int:
    """Seed ``random``, ``numpy.random`` and ``torch`` (all devices) with ``seed``; return it as an int.

    With ``deterministic=True`` also call ``torch.use_deterministic_algorithms(True)``, turn off the
    cuDNN autotuner and set ``CUBLAS_WORKSPACE_CONFIG`` (needed for deterministic cuBLAS); this changes
    global torch state for the rest of the process.
    """
    seed = check_seed(seed)
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)  # also seeds every CUDA device
    if deterministic:
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
        torch.use_deterministic_algorithms(True)
        torch.backends.cudnn.benchmark = False
    return seed


def make_generator(seed: int, device: str | torch.device = "cpu") -> torch.Generator:
    """Return a new :class:`torch.Generator` on ``device`` seeded with ``seed``."""
    seed = check_seed(seed)
    gen = torch.Generator(device=device)
    gen.manual_seed(seed)
    return gen


def derive_seeds(seed: int, n: int) -> list[int]:
    """Return ``n`` independent 63-bit seeds derived from ``seed`` (deterministic in ``seed``)."""
    seed = check_seed(seed)
    n = check_count(n, "n")
    state = np.random.SeedSequence(seed).generate_state(2 * n, dtype=np.uint32).astype(np.uint64)
    return [int(((hi << np.uint64(32)) | lo) >> np.uint64(1)) for hi, lo in zip(state[0::2], state[1::2])]
