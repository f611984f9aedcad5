"""ActiveFT (Xie et al. 2023), a selection baseline of paper B Table 1: its objective and its selector.

Shares GKHR's interface (``ActiveFTSelector(m, seed=0).fit(X).indices_``, int64 numpy, distinct, in selection
order; ``seconds_``) and the baselines' conventions (:mod:`sslkit.select.baselines`). Reimplemented from the
description of the official code, not copied; deviations are listed in the class docstring.
"""

from __future__ import annotations

import math
import numbers
import time

import numpy as np
import torch

from sslkit._checks import check_count, check_real
from sslkit.device import resolve_device
from sslkit.select.baselines import Selector, check_m_le_n
from sslkit.select.kernel import DEFAULT_BLOCK_SIZE, check_block_size, check_features

__all__ = ["ActiveFTSelector", "activeft_loss"]


def _check_activeft_inputs(F, C) -> None:
    for name, t in (("F", F), ("C", C)):
        if not isinstance(t, torch.Tensor) or not t.is_floating_point():
            raise TypeError(f"activeft_loss: {name} must be a floating torch tensor, got {type(t).__name__}")
        if t.ndim != 2 or 0 in t.shape:
            raise ValueError(f"activeft_loss: {name} must be 2-D and non-empty, got shape {tuple(t.shape)}")
    if F.shape[1] != C.shape[1]:
        raise ValueError(f"activeft_loss: F has {F.shape[1]} columns and C {C.shape[1]}; they must match")
    if F.dtype != C.dtype or F.device != C.device:
        raise TypeError(
            f"activeft_loss: F ({F.dtype}, {F.device}) and C ({C.dtype}, {C.device}) must share dtype and device"
        )
    for name, t in (("F", F), ("C", C)):
        if not bool(torch.isfinite(t.detach()).all()):
            raise ValueError(f"activeft_loss: {name} contains NaN or infinite values")


def activeft_loss(F: torch.Tensor, C: torch.Tensor, temperature: float) -> torch.Tensor:
    """ActiveFT's objective (Xie et al. 2023, Eq. 5 as the official code computes it), differentiable in ``C``:

        J = -mean_i log[ e^{f_i.c_k(i)/tau} / (e^{f_i.c_k(i)/tau} + sum_j e^{c_k(i).sg(c_j)/tau}) ],
        k(i) = argmax_k f_i.c_k,

    for L2-normalised rows ``F`` (n, d) and centroids ``C`` (m, d). The ``n x m`` product that finds ``k(i)`` is
    taken without gradient: the max's gradient reaches only the chosen ``c_k(i)``, so the ``n`` chosen dot products
    carry it: the same value and gradient as back-propagating through the product, with one ``n x m`` product
    per step instead of two (forward and backward; measured 1.8x faster at n = 50 000, m = 4 000, d = 1 280).
    Raises ``TypeError`` unless ``F`` and ``C`` are floating tensors of one dtype and device, and ``ValueError``
    unless both are 2-D with the same number of columns, non-empty and finite, and ``temperature > 0``.
    """
    _check_activeft_inputs(F, C)
    return _activeft_loss(F, C, check_real(temperature, "temperature", low=0.0, low_open=True))


def _activeft_loss(F: torch.Tensor, C: torch.Tensor, temperature: float) -> torch.Tensor:
    """:func:`activeft_loss` on inputs already checked (ActiveFTSelector's loop: its features are checked once in
    ``fit``, not at each of its 300 steps)."""
    with torch.no_grad():
        pos0, k = (F @ C.T / temperature).max(dim=1)  # (n,)
    dot = (F * C[k]).sum(dim=1) / temperature  # = pos0 up to rounding, carrying d pos / d C
    pos = pos0 + (dot - dot.detach())  # the max's value, the chosen entries' gradient
    lse_c = torch.logsumexp(C @ C.detach().T / temperature, dim=1)  # (m,)
    return (torch.logaddexp(pos, lse_c[k]) - pos).mean()


class ActiveFTSelector(Selector):
    """ActiveFT (Xie et al. 2023), as its official CIFAR code does it.

    Features are L2-normalised; ``m`` centroids start at ``m`` distinct random samples (seeded) and are
    learned by Adam (``lr = 1e-3``, ``n_iter = 300`` full-batch steps, no schedule), re-normalised
    after every step, minimising with ``tau = 0.07``

        J = -mean_i log[ e^{f_i.c_k(i)/tau} / (e^{f_i.c_k(i)/tau} + sum_j e^{c_k(i).sg(c_j)/tau}) ],

    ``k(i) = argmax_k f_i.c_k``, ``sg`` = stop-gradient, the sum over all centroids ``j`` (``k(i)``
    included). Finally the centroids, in index order, each take their nearest (cosine) *unused* sample.
    Deviations: none intended; the official optional farthest-point initialisation and class-balance
    options are not offered. Time ``O(n_iter n m d)``: one ``n x m`` product per step (:func:`activeft_loss`).
    ``batch_size`` (default: all samples) gives a stochastic, cheaper variant (a deviation, off by default).
    """

    def __init__(
        self,
        m,
        *,
        n_iter: int = 300,
        lr: float = 1e-3,
        temperature: float = 0.07,
        batch_size=None,
        seed=0,
        device="auto",
        block_size: int = DEFAULT_BLOCK_SIZE,
    ):
        super().__init__(m, seed=seed, device=device)
        self.n_iter = check_count(n_iter, "n_iter")
        for name, v in (("lr", lr), ("temperature", temperature)):
            if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real):
                raise TypeError(f"{name} must be a positive finite number, got {v!r}")
            if not (math.isfinite(v) and v > 0):
                raise ValueError(f"{name} must be a positive finite number, got {v!r}")
        self.lr, self.temperature = float(lr), float(temperature)
        self.batch_size = None if batch_size is None else check_count(batch_size, "batch_size", allow_zero=False)
        self.block_size = check_block_size(block_size)

    def fit(self, X, y=None):
        t0 = time.perf_counter()
        X = check_features(X, device=resolve_device(self.device))
        n, m = X.shape[0], self.m
        check_m_le_n(m, n)
        F = torch.nn.functional.normalize(X, dim=1)
        rng = np.random.default_rng(self.seed)
        start = torch.as_tensor(rng.choice(n, size=m, replace=False), device=X.device)
        C = torch.nn.Parameter(F[start].clone())
        opt = torch.optim.Adam([C], lr=self.lr)
        tau = self.temperature
        self.loss_history_ = []
        for _ in range(self.n_iter):
            batch = (
                F
                if self.batch_size is None or self.batch_size >= n
                else F[torch.as_tensor(rng.choice(n, size=self.batch_size, replace=False), device=X.device)]
            )
            loss = _activeft_loss(batch, C, tau)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            with torch.no_grad():
                C.data = torch.nn.functional.normalize(C.data, dim=1)
            self.loss_history_.append(float(loss.detach()))
        C = C.detach()
        taken = torch.zeros(n, dtype=torch.bool, device=X.device)
        out = np.empty(m, dtype=np.int64)
        for c0 in range(0, m, self.block_size):
            sims = C[c0 : c0 + self.block_size] @ F.T  # (block, n)
            for r in range(sims.shape[0]):
                s = sims[r].masked_fill(taken, -float("inf"))
                j = int(torch.argmax(s))
                taken[j] = True
                out[c0 + r] = j
        self.indices_ = out
        self.centroids_ = C.cpu().numpy()
        self.seconds_ = time.perf_counter() - t0
        return self
