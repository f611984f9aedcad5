"""sslkit.select.mmd: the alpha-MMD of paper B eq. (4)-(6) against the dense quadratic form, the eq. (4)+(5) rewriting,
Lemma B.6 on the full set, the precomputed mean embedding and the path; input checks and a non-finite kernel."""

from __future__ import annotations

import numpy as np
import pytest
from select_reference import dense_alpha_mmd2, dense_kernel, toy_data

from sslkit.select import alpha_mmd2, alpha_mmd2_path, kernel_row_sums, median_bandwidth, mmd2


@pytest.mark.parametrize("alpha", [0.3, 0.9, 1.0])
def test_alpha_mmd2_is_eq6_and_weighted_quadratic_form(toy, alpha):
    sigma = 2.0
    idx = np.array([3, 17, 17, 250, 99, 5])  # a multiset (GKH may repeat)
    value = alpha_mmd2(toy, idx, alpha, sigma, block_size=32)
    assert value == pytest.approx(dense_alpha_mmd2(toy, idx, alpha, sigma), rel=1e-10)
    # App. A.1: w^T K_* w with K_* = K - 2 alpha p 1^T + alpha^2 Kbar 1 1^T, w = multiplicities / m
    K = dense_kernel(toy, toy, sigma)
    n = len(toy)
    p = K.sum(1) / n
    Kbar = K.sum() / n**2
    one = np.ones(n)
    K_star = K - 2 * alpha * np.outer(p, one) + alpha**2 * Kbar * np.outer(one, one)
    w = np.bincount(idx, minlength=n) / len(idx)
    assert value == pytest.approx(w @ K_star @ w, rel=1e-10)


pytestmark = pytest.mark.usefixtures("one_thread")  # conftest.py


@pytest.fixture(scope="module")
def toy():
    return toy_data()


def test_alpha_mmd2_equals_eq4_plus_eq5_rewriting(toy):
    """alpha [MMD^2 (4) + lambda S_k (2)] + alpha(alpha-1)/n^2 sum K = eq. (6), second line.

    The identity needs alpha * lambda * S_k = (1 - alpha) S_k, i.e. lambda = (1-alpha)/alpha with S_k
    of eq. (2). The paper prints lambda = (1-alpha)/(alpha m) and "(1-alpha)/m S_k" in (6), which is off
    by the factor m unless S_k is read as (1/m) sum_{i,j in I} k (see sslkit.select.mmd).
    """
    sigma, alpha = 1.5, 0.7
    idx = np.array([0, 10, 20, 30, 40, 55, 61])
    m = len(idx)
    K = dense_kernel(toy, toy, sigma)
    n = len(toy)
    mmd_eq4 = K.sum() / n**2 + K[np.ix_(idx, idx)].sum() / m**2 - 2 * K[:, idx].sum() / (m * n)
    S_k = K[np.ix_(idx, idx)].sum() / m**2  # eq. (2)
    const = alpha * (alpha - 1) / n**2 * K.sum()
    value = alpha_mmd2(toy, idx, alpha, sigma)
    lam = (1 - alpha) / alpha
    assert value == pytest.approx(alpha * (mmd_eq4 + lam * S_k) + const, rel=1e-10)
    # the printed lambda works with S_k' = (1/m) sum_{I x I} k = m S_k ...
    lam_paper = (1 - alpha) / (alpha * m)
    assert value == pytest.approx(alpha * (mmd_eq4 + lam_paper * m * S_k) + const, rel=1e-10)
    # ... and not with S_k of eq. (2) (m > 1)
    assert abs(value - (alpha * (mmd_eq4 + lam_paper * S_k) + const)) > 1e-3
    assert mmd2(toy, idx, sigma) == pytest.approx(mmd_eq4, rel=1e-10)


def test_alpha_mmd2_full_set_is_lemma_b6(toy):
    sigma, alpha = 2.0, 0.6
    Kbar = dense_kernel(toy, toy, sigma).mean()
    assert alpha_mmd2(toy, np.arange(len(toy)), alpha, sigma) == pytest.approx((1 - alpha) ** 2 * Kbar, rel=1e-10)


def test_alpha_mmd2_with_precomputed_mu_and_path(toy):
    sigma, alpha = 2.0, 0.8
    idx = np.array([5, 1, 200, 7, 150])
    mu = dense_kernel(toy, toy, sigma).mean(1)
    assert alpha_mmd2(toy, idx, alpha, sigma, mu=mu) == pytest.approx(
        dense_alpha_mmd2(toy, idx, alpha, sigma), rel=1e-10
    )
    path = alpha_mmd2_path(toy, idx, alpha, sigma, block_size=2)
    expected = [dense_alpha_mmd2(toy, idx[:p], alpha, sigma) for p in range(1, len(idx) + 1)]
    np.testing.assert_allclose(path, expected, rtol=1e-10)


def test_alpha_mmd2_refuses_non_finite_kernel():
    X = np.random.default_rng(0).normal(size=(50, 4)).astype(np.float32)
    for fn in (alpha_mmd2, alpha_mmd2_path):
        with pytest.raises(ValueError, match="kernel is not finite"):
            fn(X, np.arange(5), 0.5, 1e-20, device="cpu")
    with pytest.raises(ValueError, match="kernel is not finite"):
        mmd2(X * np.float32(1e20), np.arange(5), 1.0, device="cpu")
    with pytest.raises(ValueError, match="kernel is not finite"):
        kernel_row_sums(X, bandwidth=1e-20, device="cpu")


def test_alpha_mmd2_errors(toy):
    with pytest.raises(ValueError, match=r"indices must lie in \[0, n\)"):
        alpha_mmd2(toy, [0, 300], 0.5, 1.0)
    with pytest.raises(ValueError, match=r"indices must lie in \[0, n\)"):
        alpha_mmd2(toy, [-1, 2], 0.5, 1.0)
    with pytest.raises(ValueError, match="at least one"):
        alpha_mmd2(toy, [], 0.5, 1.0)
    with pytest.raises(TypeError, match="indices must be integers"):
        alpha_mmd2(toy, [0.5, 1.0], 0.5, 1.0)
    with pytest.raises(ValueError, match=r"alpha must be in \(0, 1\]"):
        alpha_mmd2(toy, [0, 1], 1.5, 1.0)
    with pytest.raises(ValueError, match="bandwidth must be a positive"):
        alpha_mmd2(toy, [0, 1], 0.5, -2.0)
    with pytest.raises(ValueError, match="mu must have shape"):
        alpha_mmd2(toy, [0, 1], 0.5, 1.0, mu=np.ones(5))
    with pytest.raises(ValueError, match="block_size must be positive"):
        kernel_row_sums(toy, bandwidth=1.0, block_size=0)
    with pytest.raises(ValueError, match="at least 2"):
        median_bandwidth(toy, max_samples=1)
