"""Tests for sslkit.data.synthetic: sample moments and weights match the papers' specifications.

Seeds are fixed, so nothing can flake; tolerances are several standard errors wide yet far smaller than
the gap to a wrong parameter (a swapped mean, a covariance read as a standard deviation, a wrong weight).
"""

import math

import numpy as np
import pytest
from scipy.stats import multivariate_normal

from sslkit.data.synthetic import (
    GAUSSIAN_PAIR_MEANS,
    RDSS_TOY_DISTRIBUTIONS,
    RDSS_TOY_SPECS,
    gaussian_pair,
    gaussian_pair_bayes_error,
    gaussian_pair_posterior,
    gmm10,
    gmm10_means,
    rdss_toy_distribution,
)

# ------------------------------------------------------------------------------------ paper A §6.1


def test_gaussian_pair_labeled_counts_and_moments():
    X, y = gaussian_pair((30, 45), seed=0)
    assert X.shape == (75, 2) and X.dtype == np.float64 and y.dtype == np.int64
    assert (y == 0).sum() == 30 and (y == 1).sum() == 45
    X, y = gaussian_pair((20000, 20000), seed=1)
    assert GAUSSIAN_PAIR_MEANS == ((1.0, 1.0), (0.0, 0.0))
    for label, mean in ((0, [1.0, 1.0]), (1, [0.0, 0.0])):  # standard error ~0.007
        np.testing.assert_allclose(X[y == label].mean(axis=0), mean, atol=0.03)
        np.testing.assert_allclose(np.cov(X[y == label].T), np.eye(2), atol=0.04)


def test_gaussian_pair_mixture_prior():
    for prior in (0.3, 0.5, 0.7):
        X, y = gaussian_pair(50000, prior=prior, seed=2)
        assert X.shape == (50000, 2)
        assert abs((y == 0).mean() - prior) < 0.01  # standard error ~0.002
        np.testing.assert_allclose(X.mean(axis=0), [prior, prior], atol=0.03)
    _, y = gaussian_pair(1000, seed=0)  # default theta_1 = 0.5
    assert 400 < (y == 0).sum() < 600


def test_gaussian_pair_deterministic():
    a, ya = gaussian_pair(100, prior=0.3, seed=5)
    b, yb = gaussian_pair(100, prior=0.3, seed=5)
    c, _ = gaussian_pair(100, prior=0.3, seed=6)
    assert np.array_equal(a, b) and np.array_equal(ya, yb) and not np.array_equal(a, c)


def test_gaussian_pair_posterior_matches_density_ratio():
    X, _ = gaussian_pair(200, seed=3)
    prior = 0.3
    p1 = multivariate_normal(mean=[1, 1], cov=np.eye(2)).pdf(X)
    p2 = multivariate_normal(mean=[0, 0], cov=np.eye(2)).pdf(X)
    brute = prior * p1 / (prior * p1 + (1 - prior) * p2)
    np.testing.assert_allclose(gaussian_pair_posterior(X, prior), brute, rtol=1e-10, atol=1e-12)


def test_gaussian_pair_bayes_error():
    phi = 0.5 * (1 + math.erf(-0.5))  # Phi(-1/sqrt 2)
    assert gaussian_pair_bayes_error(0.5) == pytest.approx(phi, abs=1e-12)
    assert gaussian_pair_bayes_error(0.3) == pytest.approx(gaussian_pair_bayes_error(0.7), abs=1e-12)
    for prior in (0.3, 0.5):
        X, y = gaussian_pair(200000, prior=prior, seed=4)
        pred = np.where(gaussian_pair_posterior(X, prior) > 0.5, 0, 1)
        assert abs((pred != y).mean() - gaussian_pair_bayes_error(prior)) < 0.005  # se ~0.001


def test_gaussian_pair_errors():
    with pytest.raises(ValueError, match="prior applies to mixture samples"):
        gaussian_pair((10, 10), prior=0.5, seed=0)
    with pytest.raises(ValueError, match=r"prior must lie in \(0, 1\)"):
        gaussian_pair(10, prior=1.0, seed=0)
    with pytest.raises(ValueError, match="pair"):
        gaussian_pair((1, 2, 3), seed=0)
    with pytest.raises(ValueError, match="n must be non-negative"):
        gaussian_pair(-1, seed=0)
    with pytest.raises(TypeError, match="seed must be an integer"):
        gaussian_pair(10, seed=0.5)


# ------------------------------------------------------------------------------------ paper B App. D.1


def test_rdss_toy_names_and_shapes():
    assert RDSS_TOY_DISTRIBUTIONS == ("gmm1", "gmm2", "uniform1", "uniform2")
    for name in RDSS_TOY_DISTRIBUTIONS:
        X, comp = rdss_toy_distribution(name, 1000, seed=0)
        assert X.shape == (1000, 2) and X.dtype == np.float64 and comp.dtype == np.int64
        X2, _ = rdss_toy_distribution(name, 1000, seed=0)
        X3, _ = rdss_toy_distribution(name, 1000, seed=1)
        assert np.array_equal(X, X2) and not np.array_equal(X, X3)
    with pytest.raises(ValueError, match="unknown distribution 'gmm3'"):
        rdss_toy_distribution("gmm3", 10, seed=0)
    with pytest.raises(TypeError, match="seed must be an integer"):
        rdss_toy_distribution("gmm1", 10, seed=None)


def test_rdss_gmm_weights_as_printed():
    assert RDSS_TOY_SPECS["gmm1"]["weights"] == (0.95, 0.01, 0.02, 0.02)
    assert RDSS_TOY_SPECS["gmm2"]["weights"] == (0.3, 0.2, 0.15, 0.35)
    n = 100000
    for name, tol in (("gmm1", 0.003), ("gmm2", 0.008)):  # standard errors <= 0.0007 / 0.0016
        _, comp = rdss_toy_distribution(name, n, seed=0)
        freq = np.bincount(comp, minlength=4) / n
        np.testing.assert_allclose(freq, RDSS_TOY_SPECS[name]["weights"], atol=tol)


def test_rdss_gmm_component_means_and_covariances():
    means = [(1, 2), (-3, -5), (-5, 4), (15, 10)]
    cov_diags = [(2, 5), (1, 2), (8, 6), (4, 9)]  # printed matrices read as covariances
    X, comp = rdss_toy_distribution("gmm2", 100000, seed=1)  # >= 15000 points per component
    for k in range(4):
        Xk = X[comp == k]
        np.testing.assert_allclose(Xk.mean(axis=0), means[k], atol=0.1)
        cov = np.cov(Xk.T)
        np.testing.assert_allclose(np.diag(cov), cov_diags[k], rtol=0.06)
        assert abs(cov[0, 1]) < 0.15
    X, comp = rdss_toy_distribution("gmm1", 100000, seed=1)  # same G_1..G_4 in gmm1
    np.testing.assert_allclose(X[comp == 0].mean(axis=0), means[0], atol=0.05)
    np.testing.assert_allclose(X[comp == 3].mean(axis=0), means[3], atol=0.3)  # ~2000 points


def test_rdss_uniform1_disk_and_annulus():
    X, comp = rdss_toy_distribution("uniform1", 40000, seed=2)
    r = np.linalg.norm(X, axis=1)
    assert abs(comp.mean() - 0.5) < 0.02  # our documented choice: equal weights
    assert r[comp == 0].max() <= 0.5
    assert r[comp == 1].min() >= 4.0 and r[comp == 1].max() <= 6.0
    # uniform in area: P(r < 0.25 | disk) = 1/4, P(r < 5 | annulus) = (25 - 16) / (36 - 16) = 0.45
    assert abs((r[comp == 0] < 0.25).mean() - 0.25) < 0.02
    assert abs((r[comp == 1] < 5.0).mean() - 0.45) < 0.02
    np.testing.assert_allclose(X.mean(axis=0), [0, 0], atol=0.1)  # centred at the origin


def test_rdss_uniform2_box():
    X, comp = rdss_toy_distribution("uniform2", 40000, seed=3)
    assert (comp == 0).all()
    assert X.min() >= -10 and X.max() <= 10
    np.testing.assert_allclose(X.mean(axis=0), [0, 0], atol=0.15)
    np.testing.assert_allclose(X.var(axis=0), [400 / 12] * 2, rtol=0.03)


# ------------------------------------------------------------------------------------ paper B App. D.3


def test_gmm10_default_size_uniform_weights_and_means():
    X, comp = gmm10(seed=0)
    assert X.shape == (5000, 2) and X.dtype == np.float64 and comp.dtype == np.int64
    counts = np.bincount(comp, minlength=10)
    assert counts.sum() == 5000 and np.all(np.abs(counts - 500) < 80)  # multinomial sd ~21
    means = gmm10_means()
    np.testing.assert_allclose(np.linalg.norm(means, axis=1), 8.0)
    for k in range(10):
        np.testing.assert_allclose(X[comp == k].mean(axis=0), means[k], atol=0.2)
        np.testing.assert_allclose(X[comp == k].std(axis=0), [1.0, 1.0], atol=0.1)
    X2, _ = gmm10(200, radius=3.0, std=0.5, seed=1)
    assert X2.shape == (200, 2)
    assert not np.array_equal(gmm10(seed=0)[0], gmm10(seed=1)[0])
    assert np.array_equal(gmm10(seed=0)[0], X)


def test_gmm10_errors():
    with pytest.raises(ValueError, match="std must be a positive number"):
        gmm10(10, std=0.0, seed=0)
    with pytest.raises(TypeError, match="radius must be a positive number"):
        gmm10(10, radius="8", seed=0)
    with pytest.raises(TypeError, match="seed must be an integer"):
        gmm10(10, seed=1.0)
