"""Random coreset baseline (paper C §4 "Random"; re-drawn at every selection round, CORDS ``Random``)."""

from __future__ import annotations

import time

import numpy as np
import torch

from sslkit._checks import check_budget, check_count, check_seed
from sslkit.coreset.strategy import CoresetStrategy, SelectionInputs, require

__all__ = ["RandomCoreset"]


class RandomCoreset(CoresetStrategy):
    """``k`` distinct points uniformly at random: ``RandomCoreset(k, seed=0).fit(n_or_grads, draw=0)``.

    ``fit`` takes the number of unlabeled points ``N`` or any tensor with ``N`` rows. ``draw`` numbers the
    selection round (Algorithm 1 re-selects every ``R`` epochs): each ``(seed, draw)`` pair gives its own
    subset, reproducibly (a CPU ``torch.Generator`` seeded from ``numpy.random.SeedSequence([seed, draw])``).

    Attributes after ``fit``: ``indices_`` (int64 numpy, distinct), ``weights_`` (ones, float32), ``seconds_``.
    ``select(inputs)``: the subset of round ``inputs.draw`` of a pool of ``inputs.n`` (no gradients needed).
    """

    needs = ()

    def __init__(self, k, *, seed=0):
        self.k = check_count(k, "k", allow_zero=False)
        self.seed = check_seed(seed)

    def fit(self, X, draw: int = 0):
        t0 = time.perf_counter()
        n = X.shape[0] if hasattr(X, "shape") else check_count(X, "n")
        k = check_budget(self.k, n)
        state = np.random.SeedSequence([self.seed, check_count(draw, "draw")]).generate_state(2, np.uint32)
        gen = torch.Generator().manual_seed(int(state[0]) << 32 | int(state[1]))
        return self._set_result(torch.randperm(n, generator=gen)[:k], torch.ones(k), t0)

    def fit_inputs(self, inputs: SelectionInputs):
        require(inputs, "RandomCoreset")
        return self.with_params().fit(inputs.n, draw=inputs.draw)

    def __repr__(self):
        return f"RandomCoreset(k={self.k}, seed={self.seed})"
