"""The Bayesian coreset of paper C's Figure 5 (sslkit.coreset.giga: Campbell & Broderick's GIGA): one geodesic step
against brute force, the weights and the approximation, a flat loss, bad inputs."""

import numpy as np
import pytest
import torch

from sslkit.coreset import BayesianCoreset, giga_step


def test_giga_step_matches_a_brute_force_geodesic_step():
    g = torch.Generator().manual_seed(1)
    G = torch.randn(7, 4, generator=g, dtype=torch.float64) + 0.5
    ell_n, ell = unit(G), unit(G.sum(0))
    ell_w = unit(0.6 * ell_n[2] + 0.4 * ell_n[5])
    n, gamma, _ = giga_step(ell_n, ell, ell_w)
    # direction: the vertex whose tangent at ℓ(w) is best aligned with the target's tangent
    d = ell - (ell @ ell_w) * ell_w
    cos = []
    for j in range(7):
        dj = ell_n[j] - (ell_n[j] @ ell_w) * ell_w
        cos.append(float(dj @ d) / float(dj.norm() * d.norm()))
    assert n == int(np.argmax(cos))
    # step: the exact line search along the geodesic toward ℓ_n
    grid = torch.linspace(0, 1, 200001, dtype=torch.float64)
    path = unit((1 - grid)[:, None] * ell_w + grid[:, None] * ell_n[n])
    assert gamma == pytest.approx(float(grid[torch.argmax(path @ ell)]), abs=2e-5)
    # first iteration: the best-aligned vertex, γ = 1
    n0, g0, _ = giga_step(ell_n, ell, None)
    assert n0 == int(torch.argmax(ell_n @ ell)) and g0 == 1.0


def test_bayesian_coreset_weights_and_approximation():
    g = torch.Generator().manual_seed(0)
    G = torch.randn(200, 40, generator=g) + 0.3
    L = G.sum(0)
    sel = BayesianCoreset(20).fit(G)
    assert sel.indices_.size == 20 and np.unique(sel.indices_).size == 20
    assert bool((sel.weights_ >= 0).all()) and float(sel.weights_.sum()) > 0
    approx = sel.weights_ @ G[sel.indices_]
    err = float((L - approx).norm() / L.norm())
    assert err == pytest.approx(sel.error_, rel=1e-4)
    # the output scaling is the orthogonal projection of L on the coreset's direction
    assert float((L - approx) @ approx) == pytest.approx(0.0, abs=1e-3 * float(L.norm()) ** 2)
    rng = np.random.default_rng(0)
    random_err = np.mean(
        [float((L - 10.0 * G[rng.choice(200, 20, replace=False)].sum(0)).norm() / L.norm()) for _ in range(50)]
    )
    assert err < random_err / 3
    assert BayesianCoreset(60).fit(G).error_ <= err + 1e-6


def test_bayesian_coreset_bad_inputs():
    with pytest.raises(ValueError, match="exceeds"):
        BayesianCoreset(5).fit(torch.randn(4, 2))
    with pytest.raises(ValueError, match="sum to zero"):
        BayesianCoreset(1).fit(torch.tensor([[1.0, 0.0], [-1.0, 0.0]]))


def test_bayesian_coreset_of_a_flat_loss_is_exact_and_says_so():
    """All gradients zero (a saturated model): any weighting is exact; the first k samples with weights N / k,
    error 0 and ``flat_`` set, not a crash in the middle of a training run."""
    bc = BayesianCoreset(3).fit(torch.zeros(12, 4))
    assert bc.indices_.tolist() == [0, 1, 2] and bc.weights_.tolist() == [4.0, 4.0, 4.0]
    assert bc.error_ == 0.0 and bc.iterations_ == 0 and bc.flat_
    assert not BayesianCoreset(3).fit(torch.randn(12, 4, generator=torch.Generator().manual_seed(0))).flat_
    with pytest.raises(ValueError):
        BayesianCoreset(1).fit(torch.tensor([[float("nan"), 0.0]]))
    with pytest.raises(ValueError):
        BayesianCoreset(0)


def unit(v):
    return v / v.norm(dim=-1, keepdim=True)
