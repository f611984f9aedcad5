"""sslkit.risk.monte_carlo: the vectorised resampler of paper A's variance experiments (§6.1, App. B) equals a naive
loop, is deterministic under a seed and independent of chunking; the pool's population is the pool's distribution;
the linear coefficients reproduce linear_risk; the variance statistics and the input checks. Its agreement with
Theorems 2 and 7 over many trials: test_variance_experiment.py."""

import math

import numpy as np
import pytest
import torch
from monte_carlo_problem import PRIOR3, gaussian, pool3

from sslkit.risk import equal_covariance_a, linear_risk, symmetric_linear_risk
from sslkit.risk.monte_carlo import (
    LinearGaussianSampler,
    PoolSampler,
    linear_coefficients,
    naive_resample_estimates,
    resample_estimates,
    resample_risks,
    variance_ratio,
    variance_with_se,
)


def test_linear_coefficients_reproduce_linear_risk():
    rng = np.random.default_rng(1)
    a_full, a_sym = rng.normal(size=3), rng.normal(size=2)
    for a, fn in ((a_full, linear_risk), (a_sym, symmetric_linear_risk)):
        alpha, beta = linear_coefficients(PRIOR3, a)
        for _ in range(5):
            R, R_u = rng.random((3, 3)), rng.random(3)
            assert np.isclose((alpha * R).sum() + beta @ R_u, fn(R, R_u, PRIOR3, a), rtol=0, atol=1e-12)


@pytest.mark.parametrize("n_unlabeled", [17, None])
def test_vectorised_equals_naive_loop_pool(n_unlabeled):
    sampler = pool3()
    est = {"PN": PRIOR3, "EC": equal_covariance_a(PRIOR3, [3, 4, 5]), "sym": np.array([0.2, 0.6])}
    fast = resample_estimates(sampler, PRIOR3, [3, 4, 5], n_unlabeled, est, trials=9, seed=11, chunk_size=4)
    slow = naive_resample_estimates(sampler, PRIOR3, [3, 4, 5], n_unlabeled, est, trials=9, seed=11)
    for name in est:
        np.testing.assert_allclose(fast[name], slow[name], rtol=0, atol=1e-12)


@pytest.mark.parametrize("loss", ["bce", "zero_one"])
def test_vectorised_equals_naive_loop_gaussian(loss):
    sampler = gaussian(loss)
    prior = [0.3, 0.7]
    est = {"PN": np.array(prior), "other": np.array([0.1, 0.4])}
    fast = resample_estimates(sampler, prior, [6, 5], 40, est, trials=7, seed=2, chunk_size=3)
    slow = naive_resample_estimates(sampler, prior, [6, 5], 40, est, trials=7, seed=2)
    for name in est:
        np.testing.assert_allclose(fast[name], slow[name], rtol=0, atol=1e-12)


def test_deterministic_under_seed_and_independent_of_chunking():
    sampler = pool3()
    R1, U1 = resample_risks(sampler, PRIOR3, 4, 30, trials=50, seed=5)
    R2, U2 = resample_risks(sampler, PRIOR3, 4, 30, trials=50, seed=5, chunk_size=7)
    R3, U3 = resample_risks(sampler, PRIOR3, 4, 30, trials=50, seed=6)
    assert torch.equal(R1, R2) and torch.equal(U1, U2)
    assert not torch.equal(R1, R3) and not torch.equal(U1, U3)
    assert R1.shape == (50, 3, 3) and U1.shape == (50, 3)
    # n_U -> infinity: R_U is the exact mixture mean in every trial
    _, U_inf = resample_risks(sampler, PRIOR3, 4, None, trials=3, seed=5)
    np.testing.assert_allclose(U_inf.numpy(), np.tile(sampler.population().unlabeled_risks(PRIOR3), (3, 1)))


def test_pool_population_is_the_pool_distribution():
    sampler = pool3(N=300)
    pop = sampler.population()
    L, y = sampler.losses.numpy(), sampler.y.numpy()
    for m in range(3):
        np.testing.assert_allclose(pop.component_risks[m], L[y == m].mean(0), atol=1e-12)
        np.testing.assert_allclose(pop.covariances[m], np.cov(L[y == m].T, bias=True), atol=1e-12)
    # C_U of the mixture = weighted covariance of the pool with weights θ_m / N_m
    weights = PRIOR3[y] / np.bincount(y)[y]
    np.testing.assert_allclose(pop.unlabeled_covariance(PRIOR3), np.cov(L.T, aweights=weights, bias=True), atol=1e-12)
    assert math.isclose(pop.risk(PRIOR3), float(PRIOR3 @ np.diag(pop.component_risks)))


def test_unlabeled_draws_follow_the_mixture():
    sampler = pool3(N=300)
    # with one column of losses equal to the class label, R̂_U estimates Σ_m θ_m m
    L = np.tile(sampler.y.numpy()[:, None].astype(float), (1, 3))
    tagged = PoolSampler(L, sampler.y.numpy())
    _, R_u = resample_risks(tagged, PRIOR3, 1, 2000, trials=20, seed=0)
    expected = PRIOR3 @ np.arange(3)
    assert abs(R_u[:, 0].mean().item() - expected) < 4 * math.sqrt(PRIOR3 @ (np.arange(3) - expected) ** 2 / 40000)


def test_variance_statistics():
    rng = np.random.default_rng(0)
    x = rng.normal(size=200_000)
    var, se = variance_with_se(x)
    assert abs(se - var * math.sqrt(2 / x.size)) < 0.05 * se  # Gaussian: var·sqrt(2/T)
    ratio, ratio_se = variance_ratio(2 * x, x)
    assert math.isclose(ratio, 4.0) and ratio_se < 1e-12  # perfectly correlated: exact
    with pytest.raises(ValueError, match="paired"):
        variance_ratio(x, x[:10])


def test_bad_inputs_raise_clear_errors():
    sampler = pool3()
    with pytest.raises(ValueError, match="prior"):
        resample_risks(sampler, [0.5, 0.5], 3, 10, trials=2, seed=0)
    with pytest.raises(ValueError, match="prior"):
        resample_risks(sampler, [0.5, 0.6, -0.1], 3, 10, trials=2, seed=0)
    with pytest.raises(ValueError, match="n_per_class"):
        resample_risks(sampler, PRIOR3, [3, 3], 10, trials=2, seed=0)
    with pytest.raises(ValueError, match="n_per_class"):
        resample_risks(sampler, PRIOR3, [3, 0, 3], 10, trials=2, seed=0)
    with pytest.raises(ValueError, match="n_unlabeled"):
        resample_risks(sampler, PRIOR3, 3, 0, trials=2, seed=0)
    with pytest.raises(ValueError, match="trials"):
        resample_risks(sampler, PRIOR3, 3, 10, trials=0, seed=0)
    with pytest.raises(TypeError, match="seed"):
        resample_risks(sampler, PRIOR3, 3, 10, trials=2, seed=1.5)
    with pytest.raises(ValueError, match=r"estimators\['bad'\]"):
        resample_estimates(sampler, PRIOR3, 3, 10, {"bad": [1.0]}, trials=2, seed=0)
    with pytest.raises(ValueError, match="at least 2 pool rows"):
        PoolSampler(np.ones((3, 2)), [0, 0, 1])
    with pytest.raises(ValueError, match="NaN"):
        PoolSampler(np.array([[np.nan, 1.0], [1, 1], [1, 1], [1, 1]]), [0, 0, 1, 1])
    with pytest.raises(ValueError, match="2 rows"):
        LinearGaussianSampler([1.0, 1.0], 0.0, [[0, 0], [1, 1], [2, 2]], "bce")
