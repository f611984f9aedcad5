"""sslkit.experiments.paper_a.variance: the vectorised resampler behind paper A's variance experiments
(§6.1, App. B), checked against Theorems 2 and 7 over many trials, and the Gaussian pair of §6.1. The
resampler's own behaviour (sslkit.risk.monte_carlo): test_risk_monte_carlo.py."""

import numpy as np
import pytest
from monte_carlo_problem import PRIOR3, gaussian, pool3

from sslkit.experiments.paper_a.variance import (
    cell_seed,
    comparison_estimators,
    mean_with_se,
    resample_estimates,
    theoretical_variance,
    variance_with_se,
)
from sslkit.risk import equal_covariance_a


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
