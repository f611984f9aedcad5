"""Paper B's bounds (sslkit.select.theory): Lemma B.1, Lemma B.2 along GKH runs, App. C's closed form (11), M_alpha^2
on the simplex, and Theorem 5.4's right-hand side (as printed and as its proof gives it)."""

import math

import numpy as np
import pytest

from sslkit.select import (
    GKH,
    affine_minimiser,
    alpha_mmd2,
    alpha_mmd2_path,
    gaussian_kernel,
    lemma_b1_bound,
    lemma_b2_bound,
    simplex_min_alpha_mmd2,
    theorem_5_4_bound,
    theorem_5_6_bound,
    weighted_alpha_mmd2,
)


def _gauss(A, B, s):
    return np.exp(-((A[:, None, :] - B[None, :, :]) ** 2).sum(-1) / s**2)


def test_lemma_b1_worst_case_recursion_is_harmonic_and_below_the_bound():
    A, k = 2.0, np.arange(1, 20001)
    t = np.empty(k.size)
    t[0] = A
    for i in range(1, k.size):  # equality in the recursion: the worst case
        t[i] = (1 - 1 / (i + 1)) * t[i - 1] + A / (i + 1) ** 2
    assert np.allclose(t, A * np.cumsum(1 / k) / k, rtol=1e-12)  # t_k = A H_k / k
    bound = lemma_b1_bound(k, A)
    assert (t[1:] < bound[1:]).all() and math.isclose(t[0], bound[0])
    assert (t[1:] > A * np.log(k[1:]) / (k[1:] + 1)).all()  # a bound without the "2 +" would be wrong
    assert lemma_b1_bound(5, 1.0) == pytest.approx((2 + math.log(5)) / 6)


def test_theorem_5_6_bound_is_c_alpha_plus_lemma_b1():
    assert theorem_5_6_bound(10, 0.5, 0.4) == pytest.approx(0.25 * 0.4 + 2 * (2 + math.log(10)) / 11)
    assert lemma_b2_bound(np.array([10]), 0.1, max_diag=2.0)[0] == pytest.approx(0.1 + 4 * (2 + math.log(10)) / 11)


@pytest.fixture(scope="module")
def points():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    return X, gaussian_kernel(X, bandwidth=1.0).double().numpy()


@pytest.mark.parametrize("alpha", [0.2, 0.7, 1.0])
def test_affine_minimiser_is_equation_11_and_the_kkt_solution(points, alpha):
    _, K = points
    n = K.shape[0]
    p, one = K.mean(axis=1), np.ones(n)
    Ki = np.linalg.inv(K)
    printed = alpha * (Ki - np.outer(Ki @ one, one @ Ki) / (one @ Ki @ one)) @ p + Ki @ one / (one @ Ki @ one)
    kkt = np.linalg.solve(np.block([[2 * K, one[:, None]], [one[None, :], np.zeros((1, 1))]]), np.r_[2 * alpha * p, 1])
    w = affine_minimiser(K, alpha)
    assert np.allclose(w, printed, atol=1e-8) and np.allclose(w, kkt[:n], atol=1e-8)
    assert math.isclose(w.sum(), 1.0)
    value = weighted_alpha_mmd2(K, w, alpha)
    assert value == pytest.approx((1 - alpha) ** 2 / (one @ Ki @ one), abs=1e-10)
    rng = np.random.default_rng(1)
    for _ in range(50):  # no other point of the hyperplane is lower
        v = rng.normal(size=n)
        assert weighted_alpha_mmd2(K, w + 0.1 * (v - v.mean()), alpha) >= value - 1e-12


@pytest.mark.parametrize("alpha", [0.3, 0.9, 1.0])
def test_simplex_minimum_is_certified_and_below_random_simplex_points(points, alpha):
    _, K = points
    value, lower, w = simplex_min_alpha_mmd2(K, alpha)
    assert (w >= 0).all() and math.isclose(w.sum(), 1.0)
    assert lower <= value + 1e-15 and value - lower < 1e-6
    rng = np.random.default_rng(2)
    draws = rng.dirichlet(np.full(K.shape[0], 0.3), size=3000)
    assert min(weighted_alpha_mmd2(K, d, alpha) for d in draws) >= lower - 1e-12
    # the simplex minimum is above the hyperplane's (eq. (11)) and below the uniform weights' C_alpha^2 (Lemma B.6)
    assert weighted_alpha_mmd2(K, affine_minimiser(K, alpha), alpha) <= value + 1e-12
    assert value <= (1 - alpha) ** 2 * K.mean() + 1e-12
    if alpha == 1.0:
        assert value < 1e-12


def test_weighted_alpha_mmd2_on_w_p_is_the_selection_alpha_mmd2(points):
    X, K = points
    idx = np.array([3, 7, 3, 12, 3])  # GKH-style repeats
    w = np.bincount(idx, minlength=len(X)) / idx.size
    assert weighted_alpha_mmd2(K, w, 0.6) == pytest.approx(alpha_mmd2(X, idx, 0.6, 1.0), abs=1e-6)


@pytest.mark.parametrize("alpha", [0.3, 0.8, 1.0])
def test_lemma_b2_holds_along_a_gkh_run_and_needs_m_alpha(alpha):
    rng = np.random.default_rng(3)
    X = np.vstack([rng.normal(size=(150, 2)), rng.normal(4, 0.5, size=(30, 2))])
    K = gaussian_kernel(X, bandwidth=2.0).double().numpy()
    run = GKH(300, alpha=alpha, bandwidth=2.0).fit(X)
    path = alpha_mmd2_path(X, run.indices_, alpha, 2.0, mu=run.mu_)
    _, lower, _ = simplex_min_alpha_mmd2(K, alpha)
    ps = np.arange(1, 301)
    assert (path <= lemma_b2_bound(ps, lower)).all()
    if alpha == 0.3:  # without M_alpha^2 the rate term alone is crossed at large p: the M_alpha^2 term matters
        assert (path > lemma_b1_bound(ps, 2.0)).any()


def _rkhs_case(rng, n, scale_h=0.5):
    T = rng.normal(size=(n, 2))
    C = [rng.normal(size=(5, 2)) for _ in range(3)]
    a, b, c = rng.normal(size=5) * scale_h, rng.normal(size=5), rng.uniform(0.1, 0.3, size=5)
    s = (1.0, 1.5, 2.0)
    norms = [math.sqrt(v @ _gauss(Ci, Ci, si) @ v) for v, Ci, si in zip((a, b, c), C, s)]
    h, m, var = (_gauss(T, Ci, si) @ v for v, Ci, si in zip((a, b, c), C, s))
    f = var + (m - h) ** 2  # E[(Y - h(x))^2 | x] for Y | x with mean m(x), variance var(x)
    k1, k2, k3 = (_gauss(T, T, si) for si in s)
    return f, norms, k1**2 + k1 * k2 + k3, k1**2 + k1 * k2 + k2**2 + k3


def _mmd_alpha(K, idx, alpha):
    return math.sqrt(max(alpha**2 * K.mean() + K[np.ix_(idx, idx)].mean() - 2 * alpha * K[:, idx].mean(), 0.0))


def test_theorem_5_4_proof_form_holds_and_the_printed_form_fails():
    rng = np.random.default_rng(0)
    f, (Kh, Km, Ks), k_printed, k_proof = _rkhs_case(rng, 300)
    worst_proof = worst_printed = 0.0
    for _ in range(200):
        idx = rng.choice(300, size=int(rng.integers(1, 300)), replace=False)
        alpha = float(rng.choice([0.5, 0.9, 1.0]))
        gap = abs(f.mean() - f[idx].mean())
        proof = theorem_5_4_bound(_mmd_alpha(k_proof, idx, alpha), alpha, Kh, Km, Ks, max_diag=4.0)
        printed = theorem_5_4_bound(_mmd_alpha(k_printed, idx, alpha), alpha, Kh, Km, Ks, max_diag=3.0, form="printed")
        worst_proof, worst_printed = max(worst_proof, gap / proof), max(worst_printed, gap / printed)
    assert worst_proof <= 1.0 < worst_printed


def test_theorem_5_4_bound_values_and_errors():
    assert theorem_5_4_bound(0.1, 0.5, 1.0, 2.0, 0.5, max_diag=4.0) == pytest.approx(9.5 * (0.1 + 0.5 * 2.0))
    assert theorem_5_4_bound(0.1, 1.0, 1.0, 2.0, 0.5, max_diag=3.0, form="printed") == pytest.approx(5.5 * 0.01)
    with pytest.raises(ValueError, match="form"):
        theorem_5_4_bound(0.1, 1.0, 1.0, 1.0, 1.0, max_diag=1.0, form="squared")
    with pytest.raises(ValueError, match="mmd_alpha"):
        theorem_5_4_bound(-0.1, 1.0, 1.0, 1.0, 1.0, max_diag=1.0)


def test_dense_inputs_are_validated():
    with pytest.raises(ValueError, match="square"):
        simplex_min_alpha_mmd2(np.ones((3, 2)), 0.5)
    with pytest.raises(ValueError, match="symmetric"):
        weighted_alpha_mmd2(np.array([[1.0, 0.2], [0.5, 1.0]]), np.array([0.5, 0.5]), 0.5)
    with pytest.raises(ValueError, match="singular"):
        affine_minimiser(np.ones((3, 3)), 0.5)
    with pytest.raises(TypeError, match="integer"):
        lemma_b1_bound(2.5, 1.0)
