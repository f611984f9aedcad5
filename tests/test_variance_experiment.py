"""sslkit.experiments.paper_a.variance: the vectorised resampler behind paper A's variance experiments
(§6.1, App. B)."""

import math

import numpy as np
import pytest
import torch

from sslkit.experiments.paper_a.variance import (
    LinearGaussianSampler,
    PoolSampler,
    cell_seed,
    comparison_estimators,
    linear_coefficients,
    mean_with_se,
    naive_resample_estimates,
    resample_estimates,
    resample_risks,
    theoretical_variance,
    variance_ratio,
    variance_with_se,
)
from sslkit.risk import equal_covariance_a, linear_risk, symmetric_linear_risk

PRIOR3 = np.array([0.5, 0.3, 0.2])


def pool3(seed=0, N=600):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, N)
    losses = rng.exponential(size=(N, 3)) + 0.5 * np.eye(3)[y]  # class-dependent, correlated with y
    return PoolSampler(losses, y)


def gaussian(loss):
    return LinearGaussianSampler([0.7, 1.2], -1.1, [[1.0, 1.0], [0.0, 0.0]], loss, support_size=200_000)


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


@pytest.mark.parametrize("n_unlabeled", [25, None])
def test_empirical_mean_and_variance_agree_with_theorem_2(n_unlabeled):
    sampler = pool3(seed=3)
    pop = sampler.population()
    n = [4, 5, 6]
    est = {"PN": PRIOR3, "EC": np.asarray(equal_covariance_a(PRIOR3, n)), "far": np.array([0.1, 0.6, 0.5])}
    T = 6000
    values = resample_estimates(sampler, PRIOR3, n, n_unlabeled, est, trials=T, seed=cell_seed(0, "thm2", n_unlabeled))
    for name, a in est.items():
        mean, mean_se = mean_with_se(values[name])
        var, var_se = variance_with_se(values[name])
        theory = theoretical_variance(pop, PRIOR3, n, n_unlabeled, a)
        assert abs(mean - pop.risk(PRIOR3)) < 4 * mean_se, name
        assert abs(var - theory) < 4 * var_se, (name, var, theory, var_se)
        assert var_se < 0.1 * theory  # the check has power


def test_empirical_variance_agrees_with_theorem_7_zero_one():
    sampler = gaussian("zero_one")
    pop = sampler.population()
    prior, n = [0.3, 0.7], [30, 30]
    est = comparison_estimators(pop, prior, n, 200, "zero_one")
    assert len(est["lin"]) == 1  # Thm 8: k - 1 parameters
    values = resample_estimates(sampler, prior, n, 200, est, trials=6000, seed=4)
    for name, a in est.items():
        var, var_se = variance_with_se(values[name])
        assert abs(var - theoretical_variance(pop, prior, n, 200, a)) < 4 * var_se, name
    # Thm 9: for k = 2 and a symmetric loss the best PNU estimator and a* coincide
    np.testing.assert_allclose(values["PNU"], values["lin"], atol=1e-10)


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


# ---- notebooks/a_monte_carlo's checks on the Gaussian pair of §6.1 (they lived in the page as asserts) --------------

PAIR_PRIOR, PAIR_N = np.array([0.3, 0.7]), np.array([30, 30])


@pytest.fixture(scope="module")
def pair_samples():
    """g of §6.1 and 400 000 fresh draws of the mixture under the prior θ = (0.3, 0.7): (w, b, X, y)."""
    from sslkit.data import gaussian_pair
    from sslkit.experiments.paper_a.variance import gaussian_pair_model

    w, b = gaussian_pair_model(0)
    X, y = gaussian_pair(400_000, prior=PAIR_PRIOR[0], seed=1)
    return w, b, X, y


def _pair_estimators(pop, loss):
    from sslkit.risk import optimal_a, pnu_eta, pnu_to_a, symmetric_optimal_a, symmetric_reduce_a

    a = {
        "EC": np.asarray(equal_covariance_a(PAIR_PRIOR, PAIR_N)),
        "PNU": np.asarray(pnu_to_a(PAIR_PRIOR, pnu_eta(PAIR_PRIOR, PAIR_N))),
    }
    if loss == "zero_one":  # Thm 6-8: k - 1 = 1 parameter
        a = {name: np.asarray(symmetric_reduce_a(v, PAIR_PRIOR)) for name, v in a.items()}
        a["a*"] = np.asarray(symmetric_optimal_a(pop.covariances, PAIR_PRIOR, PAIR_N))
    else:
        a["a*"] = np.asarray(optimal_a(pop.covariances, PAIR_PRIOR, PAIR_N))
    return a


@pytest.mark.parametrize("loss", ["bce", "zero_one"])
def test_gaussian_pair_risk_by_quadrature_matches_fresh_samples(pair_samples, loss):
    from sslkit.experiments.paper_a.variance import gaussian_pair_sampler
    from sslkit.risk import loss_matrix

    w, b, X, y = pair_samples
    pop = gaussian_pair_sampler(loss, w, b).population()
    L = np.asarray(loss_matrix(X @ w + b, loss))
    big = L[np.arange(len(y)), y]
    se = big.std() / np.sqrt(big.size)
    assert abs(big.mean() - pop.risk(PAIR_PRIOR)) < 4 * se
    assert abs(big.mean() - pop.risk(PAIR_PRIOR[::-1])) > 4 * se  # the prior the wrong way round fails


@pytest.mark.parametrize("loss", ["bce", "zero_one"])
def test_finite_unlabeled_term_is_the_mixture_variance(pair_samples, loss):
    """n_U (Var_{n_U} - Var_inf) = vᵀ C_U v, against the sample variance of vᵀ ℓ(g(x)) over fresh mixture draws;
    C_U without its between-class part (the mean of the class covariances) fails."""
    from sslkit.experiments.paper_a.variance import gaussian_pair_sampler
    from sslkit.risk import loss_matrix

    w, b, X, y = pair_samples
    pop = gaussian_pair_sampler(loss, w, b).population()
    L = np.asarray(loss_matrix(X @ w + b, loss))
    for name, a in _pair_estimators(pop, loss).items():
        v = 1 - a / PAIR_PRIOR[: len(a)]  # Thm 2: k entries; Thm 7: the k - 1 free ones
        u = L[:, : len(a)] @ v
        sample_var, sample_se = variance_with_se(u)
        for n_u in (25, 2000):
            term = n_u * (
                theoretical_variance(pop, PAIR_PRIOR, PAIR_N, n_u, a)
                - theoretical_variance(pop, PAIR_PRIOR, PAIR_N, None, a)
            )
            assert abs(term - sample_var) < 4 * sample_se, (name, n_u, term, sample_var)
        within = sum(p * u[y == m].var() for m, p in enumerate(PAIR_PRIOR))
        assert abs(within - sample_var) > 4 * sample_se, name


def test_gaussian_pair_variance_falls_with_the_unlabeled_sample():
    """For every estimator that uses unlabeled data (not PN), 2000 unlabeled samples give a clearly smaller
    empirical variance than 25; PN's does not change."""
    from sslkit.experiments.paper_a.variance import gaussian_pair_model, gaussian_pair_sampler

    w, b = gaussian_pair_model(0)
    sampler = gaussian_pair_sampler("bce", w, b)
    est = {"PN": PAIR_PRIOR, **_pair_estimators(sampler.population(), "bce")}
    var = {}
    for n_u in (25, 2000):
        values = resample_estimates(sampler, PAIR_PRIOR, PAIR_N, n_u, est, trials=5000, seed=cell_seed(0, "fall", n_u))
        var[n_u] = {name: variance_with_se(v) for name, v in values.items()}
    for name in est:
        (v25, se25), (v2000, se2000) = var[25][name], var[2000][name]
        if name == "PN":
            assert abs(v25 - v2000) < 4 * np.hypot(se25, se2000)
        else:
            assert v2000 + 4 * se2000 < v25 - 4 * se25, (name, v25, v2000)
