"""Bayesian coreset by greedy iterative geodesic ascent (GIGA; Campbell & Broderick, ICML 2018, Algorithm 1),
adapted to SSL for paper C's Figure 5.

Campbell & Broderick approximate a sum of vectors ``L = Σ_n L_n`` (there: log-likelihood functions; here,
paper C's adaptation: the per-sample unlabeled-loss gradients ``L_n = m_n ∇l_u(x_n, θ_t)``, last layer,
:func:`sslkit.coreset.last_layer_gradients`) by a sparse non-negative combination ``Σ_n w_n L_n``. GIGA
works on the unit sphere: ``ℓ_n = L_n / σ_n`` (``σ_n = ‖L_n‖``), ``ℓ = L / ‖L‖``, and the current
direction ``ℓ(w) = Σ_n w_n ℓ_n`` with ``‖ℓ(w)‖ = 1``. Each iteration:

* geodesic directions ``d = ℓ - ⟨ℓ, ℓ(w)⟩ ℓ(w)`` and ``d_n = ℓ_n - ⟨ℓ_n, ℓ(w)⟩ ℓ(w)``;
* ``n* = argmax_n ⟨d / ‖d‖, d_n / ‖d_n‖⟩`` (the vertex best aligned with the ascent direction);
* with ``ζ0 = ⟨ℓ, ℓ_n*⟩``, ``ζ1 = ⟨ℓ, ℓ(w)⟩``, ``ζ2 = ⟨ℓ_n*, ℓ(w)⟩`` the exact geodesic line search
  ``γ = (ζ0 - ζ1 ζ2) / ((ζ0 - ζ1 ζ2) + (ζ1 - ζ0 ζ2))`` (clipped to [0, 1]) maximises
  ``⟨ℓ, normalize((1 - γ) ℓ(w) + γ ℓ_n*)⟩``;
* ``ℓ(w) ← normalize((1 - γ) ℓ(w) + γ ℓ_n*)``, ``w ← ((1 - γ) w + γ 1_n*) / ‖(1 - γ) ℓ(w) + γ ℓ_n*‖``.

The first iteration (``ℓ(w) = 0``) picks ``argmax_n ⟨ℓ, ℓ_n⟩`` with ``γ = 1``. Iterations repeat until the
support holds ``k`` distinct samples (an index may be picked again; its weight grows), at most
``max_iter`` times. Output scaling (Algorithm 1's last line): ``Σ_n w_n L_n ≈ L`` with
``w_n ← ‖L‖ ⟨ℓ(w), ℓ⟩ w_n / σ_n`` -- the orthogonal projection of ``L`` on the direction ``ℓ(w)``. The weights
are non-negative; they sum to about ``N / k`` per chosen sample, like CRAIG's Voronoi cells, and multiply
the chosen samples' unlabeled losses (paper C eq. 2). Samples with a zero gradient are never chosen (they
have no direction) unless nothing else is left; they then get weight 0 and the rest of the coreset is
filled with them in index order (so ``k`` samples are always returned). When *every* gradient is zero (a flat
unlabeled loss, e.g. a model whose predictions have saturated) every weighting approximates ``L = 0`` exactly: the
first ``k`` samples are returned with the uniform weights ``N / k`` (the mean weight GIGA's coresets carry), and
``flat_`` is True. Gradients that are not all zero but sum to zero have no direction: a ``ValueError``.
"""

from __future__ import annotations

import time

import torch

from sslkit._checks import check_budget, check_count, check_gradients
from sslkit.coreset.strategy import CoresetStrategy, SelectionInputs, require

__all__ = ["BayesianCoreset", "giga_step"]

_TINY = 1e-12


def giga_step(ell_n: torch.Tensor, ell: torch.Tensor, ell_w: torch.Tensor | None):
    """One GIGA iteration on unit vectors: ``(n*, γ, alignments)``.

    ``ell_n``: ``N x d`` unit rows (zero rows are never chosen); ``ell``: the unit target; ``ell_w``: the
    current unit direction ``ℓ(w)`` or None (the first iteration). ``alignments``: ``⟨d/‖d‖, d_n/‖d_n‖⟩``
    (``-inf`` for rows with no direction).
    """
    alive = ell_n.norm(dim=1) > 0
    if ell_w is None:
        align = ell_n @ ell
        align = align.masked_fill(~alive, -float("inf"))
        return int(torch.argmax(align)), 1.0, align
    d = ell - (ell @ ell_w) * ell_w
    dn = ell_n - (ell_n @ ell_w)[:, None] * ell_w[None, :]
    dn_norm = dn.norm(dim=1)
    align = (dn @ d) / (dn_norm.clamp_min(_TINY) * d.norm().clamp_min(_TINY))
    align = align.masked_fill(~alive | (dn_norm <= _TINY), -float("inf"))
    n = int(torch.argmax(align))
    z0, z1, z2 = float(ell @ ell_n[n]), float(ell @ ell_w), float(ell_n[n] @ ell_w)
    num, den = z0 - z1 * z2, (z0 - z1 * z2) + (z1 - z0 * z2)
    gamma = 0.0 if abs(den) <= _TINY else min(max(num / den, 0.0), 1.0)
    return n, gamma, align


class BayesianCoreset(CoresetStrategy):
    """``BayesianCoreset(k, max_iter=None).fit(unlabeled_grads)`` -- GIGA (module docstring).

    ``unlabeled_grads``: ``N x d`` per-sample gradients (any device; float64 inside). ``max_iter``: at most
    this many iterations (default ``10 k``). Attributes after ``fit``: ``indices_`` (int64 numpy, first-pick
    order, ``k`` distinct), ``weights_`` (float32, ≥ 0), ``iterations_``, ``error_`` (``‖L - Σ w_n L_n‖ /
    ‖L‖``), ``flat_`` (every gradient was zero: module docstring), ``seconds_``, ``timings_``.
    """

    def __init__(self, k, *, max_iter=None):
        self.k = check_count(k, "k", allow_zero=False)
        self.max_iter = None if max_iter is None else check_count(max_iter, "max_iter", allow_zero=False)

    def fit(self, unlabeled_grads):
        t0 = time.perf_counter()
        G = check_gradients(unlabeled_grads).to(torch.float64)
        N = G.shape[0]
        k = check_budget(self.k, N)
        sigma = G.norm(dim=1)
        ell_n = G / sigma.clamp_min(_TINY)[:, None]
        ell_n[sigma <= 0] = 0.0
        L = G.sum(dim=0)
        L_norm = float(L.norm())
        if not bool((sigma > 0).any()):  # a flat unlabeled loss (e.g. a saturated model): every weighting is exact
            self.flat_ = True
            self.iterations_, self.error_ = 0, 0.0
            self.timings_ = {"total": time.perf_counter() - t0}
            return self._set_result(torch.arange(k), torch.full((k,), N / k), t0)
        if L_norm <= 0:
            raise ValueError("the gradients sum to zero: there is no direction to approximate")
        ell = L / L_norm
        w = torch.zeros(N, dtype=torch.float64, device=G.device)
        ell_w, order, it = None, [], 0
        n_alive = int((sigma > 0).sum())
        limit = self.max_iter or 10 * k
        while len(order) < min(k, n_alive) and it < limit:
            n, gamma, _ = giga_step(ell_n, ell, ell_w)
            it += 1
            if ell_w is None:
                new = ell_n[n].clone()
                w[n] = 1.0
            else:
                new = (1 - gamma) * ell_w + gamma * ell_n[n]
                norm = float(new.norm())
                if norm <= _TINY:
                    break
                w = (1 - gamma) * w
                w[n] += gamma
                w /= norm
                new = new / norm
            ell_w = new
            if n not in order and w[n] > 0:
                order.append(n)
            order = [j for j in order if w[j] > 0]
        scale = L_norm * float(ell_w @ ell) if ell_w is not None else 0.0
        weights = torch.where(sigma > 0, scale * w / sigma.clamp_min(_TINY), torch.zeros_like(w)).clamp_min(0.0)
        taken = set(order)
        rest = [j for j in range(N) if j not in taken]
        chosen = order + rest[: k - len(order)]
        idx = torch.tensor(chosen, dtype=torch.long, device=G.device)
        self.flat_ = False
        self.iterations_ = it
        self.error_ = float((L - weights @ G).norm()) / L_norm
        self.timings_ = {"total": time.perf_counter() - t0}
        return self._set_result(idx, weights[idx].to(torch.float32), t0)

    def fit_inputs(self, inputs: SelectionInputs):
        """:meth:`fit` on ``inputs.gradients``."""
        require(inputs, "BayesianCoreset", "gradients")
        return self.with_params().fit(inputs.gradients)

    def __repr__(self):
        return f"BayesianCoreset(k={self.k}, max_iter={self.max_iter})"
