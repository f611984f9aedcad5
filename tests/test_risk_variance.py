"""Paper A variance theory: Thm 2-5 (asymmetric), Thm 7-9 (symmetric), finite n_U, checked by brute force."""

import numpy as np
import pytest
import torch
from hypothesis import example, given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize, minimize_scalar

import sslkit.risk as risk

SEEDS = st.integers(0, 2**31 - 1)
KS = st.integers(2, 5)
FAST = settings(max_examples=30, deadline=None)


class Discrete:
    """A model with finitely many inputs: loss vector ``points[x]`` at support point x, p_m = ``probs[m]``.

    Everything (R_ij, C_m, C_U) is exact, so the variance of any linear statistic of the empirical
    means is known exactly: Cov(R̂_m.) = C_m / n_m, Cov(R̂_U) = C_U / n_U, independent blocks.
    """

    def __init__(self, seed, k, symmetric=False, P=7):
        rng = np.random.default_rng(seed)
        self.rng, self.k = rng, k
        pts = rng.uniform(0, 2, size=(P, k))
        if symmetric:
            pts[:, -1] = (k - 1.0) - pts[:, :-1].sum(1)
        self.points = pts
        self.probs = rng.dirichlet(np.ones(P), size=k)
        prior = rng.dirichlet(np.full(k, 2.0)) * 0.9 + 0.1 / k
        self.prior = prior / prior.sum()
        self.n = rng.integers(3, 60, size=k)
        self.R = self.probs @ pts
        self.C = np.stack([self._cov(self.probs[m]) for m in range(k)])
        self.mix = self.prior @ self.probs
        self.C_u = self._cov(self.mix)  # directly from the mixture, not via the law of total covariance

    def _cov(self, p):
        c = self.points - p @ self.points
        return (p[:, None] * c).T @ c


def coefficients(prior, a, symmetric=False):
    """Coefficients of R̂_lin^a on (R̂_ij, R̂_Uj), read off by evaluating the (linear) estimator on a basis."""
    k = len(prior)
    f = risk.symmetric_linear_risk if symmetric else risk.linear_risk
    G = np.zeros((k, k))
    for i in range(k):
        for j in range(k):
            E = np.zeros((k, k))
            E[i, j] = 1.0
            G[i, j] = f(E, np.zeros(k), prior, a)
    g_u = np.array([f(np.zeros((k, k)), np.eye(k)[j], prior, a) for j in range(k)])
    return G, g_u


def brute_variance(model, a, n_u=None, symmetric=False):
    """Var of the stacked estimator vector projected on the coefficients (no Q, d_m, C_U formula used)."""
    G, g_u = coefficients(model.prior, a, symmetric)
    var = sum(G[m] @ model.C[m] @ G[m] / model.n[m] for m in range(model.k))
    if n_u is not None:
        var += g_u @ model.C_u @ g_u / n_u
    return var


def rho_cov(rho1, rho2, k):
    return (rho1 - rho2) * np.eye(k) + rho2 * np.ones((k, k))


# ----------------------------------------------------------------------------- Theorem 2 (+ finite n_U)
@FAST
@given(SEEDS, KS)
def test_theorem2_equals_brute_force(seed, k):
    m = Discrete(seed, k)
    a = m.rng.normal(size=k)
    assert risk.estimator_variance(a, m.C, m.prior, m.n) == pytest.approx(brute_variance(m, a), rel=1e-10)
    n_u = int(m.rng.integers(10, 500))
    C_u = risk.mixture_covariance(m.C, m.R, m.prior)
    np.testing.assert_allclose(C_u, m.C_u, atol=1e-12)  # law of total covariance
    got = risk.estimator_variance(a, m.C, m.prior, m.n, n_unlabeled=n_u, unlabeled_covariance=C_u)
    assert got == pytest.approx(brute_variance(m, a, n_u), rel=1e-10)
    # n_U = inf is the paper's asymptotic formula
    assert risk.estimator_variance(a, m.C, m.prior, m.n, n_unlabeled=float("inf")) == pytest.approx(
        risk.estimator_variance(a, m.C, m.prior, m.n)
    )


def test_variance_monte_carlo_multinomial():
    """Vectorised resampling (multinomial counts) of the whole estimator; mean = R, var = Thm 2 + U term."""
    m = Discrete(11, 3)
    rng, reps, n_u = np.random.default_rng(5), 200_000, 40
    a = np.array([0.3, -0.2, 0.5])
    G, g_u = coefficients(m.prior, a)
    value = sum((rng.multinomial(m.n[c], m.probs[c], size=reps) / m.n[c]) @ m.points @ G[c] for c in range(3))
    value = value + (rng.multinomial(n_u, m.mix, size=reps) / n_u) @ m.points @ g_u
    var = risk.estimator_variance(a, m.C, m.prior, m.n, n_unlabeled=n_u, unlabeled_covariance=m.C_u)
    assert abs(value.mean() - m.prior @ np.diag(m.R)) < 5 * np.sqrt(var / reps)
    assert value.var() == pytest.approx(var, rel=5 * np.sqrt(2 / reps))


@FAST
@given(SEEDS, KS)
def test_theorem2_quadratic_form_and_theorem3_identities(seed, k):
    """eq. (8): Var = aᵀAa - 2bᵀa + c with A = Σ w QC_mQ = QSQ, b = Σ w QC_m d_m = Q(S1 - u)."""
    m = Discrete(seed, k)
    w = m.prior**2 / m.n
    Q = np.diag(1 / m.prior)
    d = 1 - np.eye(k)
    A = sum(w[j] * Q @ m.C[j] @ Q for j in range(k))
    b = sum(w[j] * Q @ m.C[j] @ d[j] for j in range(k))
    c = sum(w[j] * d[j] @ m.C[j] @ d[j] for j in range(k))
    S = sum(w[j] * m.C[j] for j in range(k))
    u = sum(w[j] * m.C[j][:, j] for j in range(k))
    np.testing.assert_allclose(A, Q @ S @ Q, rtol=1e-10)
    np.testing.assert_allclose(b, Q @ (S @ np.ones(k) - u), rtol=1e-10, atol=1e-14)
    for _ in range(3):
        a = m.rng.normal(size=k)
        assert risk.estimator_variance(a, m.C, m.prior, m.n) == pytest.approx(a @ A @ a - 2 * b @ a + c, rel=1e-9)
    np.testing.assert_allclose(risk.optimal_a(m.C, m.prior, m.n), np.linalg.solve(A, b), rtol=1e-8)
    np.testing.assert_allclose(risk.optimal_a(m.C, m.prior, m.n), m.prior * (1 - np.linalg.solve(S, u)), rtol=1e-8)
    assert risk.variance_reduction(m.C, m.prior, m.n) == pytest.approx(u @ np.linalg.solve(S, u), rel=1e-9)


# ----------------------------------------------------------------------------- Theorem 3
@settings(max_examples=15, deadline=None)
@given(SEEDS, KS, st.booleans())
@example(seed=31511, k=5, finite_u=False)  # BFGS stopped 1.6e-4 from a* along a nearly flat direction
def test_optimal_a_equals_numerical_minimiser(seed, k, finite_u):
    m = Discrete(seed, k)
    kw = dict(n_unlabeled=50, unlabeled_covariance=m.C_u) if finite_u else {}
    a_star = risk.optimal_a(m.C, m.prior, m.n, **kw)
    res = minimize(
        lambda a: risk.estimator_variance(a, m.C, m.prior, m.n, **kw), m.prior, method="BFGS", options={"gtol": 1e-12}
    )
    f = lambda a: risk.estimator_variance(a, m.C, m.prior, m.n, **kw)  # noqa: E731
    f_star = f(a_star)
    assert f_star <= res.fun * (1 + 1e-9)
    assert f_star == pytest.approx(res.fun, rel=1e-6)
    # Var is quadratic in a (eq. 8): with g(d) = f(a* + d) - f(a*), unit steps give its Hessian 2A exactly (up to
    # rounding) and its gradient 2(A a* - b), which must vanish at the minimiser. BFGS stops anywhere along a
    # nearly flat direction, so its point is compared in A's metric, (x - a*)ᵀ A (x - a*) = f(x) - f(a*), not
    # coordinate by coordinate (a flat direction let a correct a* differ from it by 1.6e-4 at seed 31511).
    eye = np.eye(k)
    g = lambda d: f(a_star + d) - f_star  # noqa: E731
    A = np.array([[(g(eye[i] + eye[j]) - g(eye[i]) - g(eye[j])) / 2 for j in range(k)] for i in range(k)])
    grad = np.array([(g(eye[i]) - g(-eye[i])) / 2 for i in range(k)])  # = 2 (A a* - b)
    assert np.abs(grad).max() <= 1e-9 * np.abs(A).max() * (1 + np.abs(a_star).max())
    gap = res.x - a_star
    assert gap @ A @ gap <= 1e-6 * f_star
    # eq. (10) (and its finite-n_U version) = Var at a*
    assert risk.minimum_variance(m.C, m.prior, m.n, **kw) == pytest.approx(f_star, rel=1e-9)
    # a* never does worse than the supervised a = θ; the gap is uᵀS⁻¹u (eq. 10)
    sup = risk.estimator_variance(m.prior, m.C, m.prior, m.n)
    assert sup - risk.minimum_variance(m.C, m.prior, m.n) == pytest.approx(
        risk.variance_reduction(m.C, m.prior, m.n), rel=1e-8
    )
    assert sup == pytest.approx(np.sum(m.prior**2 / m.n * m.C[np.arange(k), np.arange(k), np.arange(k)]))


def test_finite_unlabeled_variance_decreases_to_asymptote():
    m = Discrete(3, 3)
    a = risk.optimal_a(m.C, m.prior, m.n)
    vals = [
        risk.estimator_variance(a, m.C, m.prior, m.n, n_unlabeled=nu, unlabeled_covariance=m.C_u)
        for nu in (10, 100, 1000, 10**6)
    ]
    assert all(x > y for x, y in zip(vals, vals[1:]))
    assert vals[-1] == pytest.approx(risk.estimator_variance(a, m.C, m.prior, m.n), rel=1e-4)
    mins = [
        risk.minimum_variance(m.C, m.prior, m.n, n_unlabeled=nu, unlabeled_covariance=m.C_u) for nu in (10, 100, 1000)
    ]
    assert all(x > y for x, y in zip(mins, mins[1:]))


def test_ridge_matches_paper_app_c_and_singular_error():
    m = Discrete(4, 3)
    w = m.prior**2 / m.n
    Q = np.diag(1 / m.prior)
    A = sum(w[j] * Q @ m.C[j] @ Q for j in range(3))
    b = sum(w[j] * Q @ m.C[j] @ (1 - np.eye(3)[j]) for j in range(3))
    np.testing.assert_allclose(risk.optimal_a(m.C, m.prior, m.n, ridge=1e-4), np.linalg.solve(A + 1e-4 * np.eye(3), b))
    with pytest.raises(ValueError, match="singular.*pass ridge > 0"):
        risk.optimal_a(np.zeros((3, 3, 3)), m.prior, m.n)
    with pytest.raises(ValueError, match="ridge must be a finite number >= 0"):
        risk.optimal_a(m.C, m.prior, m.n, ridge=-1.0)


# ----------------------------------------------------------------------------- equal covariance (§5.2, Thm 4)
@FAST
@given(SEEDS, KS)
def test_equal_covariance_a_is_optimal_for_any_common_covariance(seed, k):
    rng = np.random.default_rng(seed)
    prior = rng.dirichlet(np.full(k, 2.0)) * 0.9 + 0.1 / k
    prior /= prior.sum()
    n = rng.integers(2, 100, size=k)
    B = rng.normal(size=(k, k))
    C = B @ B.T + 0.1 * np.eye(k)  # any common SPD covariance, not only the ρ1/ρ2 form
    ec = risk.equal_covariance_a(prior, n)
    np.testing.assert_allclose(ec, risk.optimal_a(np.stack([C] * k), prior, n), rtol=1e-7, atol=1e-10)
    np.testing.assert_allclose(ec, risk.optimal_a(np.stack([rho_cov(1.0, -0.3 / k, k)] * k), prior, n), rtol=1e-8)
    w = prior**2 / n
    np.testing.assert_allclose(ec, prior * (1 - w / w.sum()))
    # ... but not when the classes' covariances differ (even only by a scale)
    scales = rng.uniform(0.2, 5, size=k)
    if np.ptp(scales * w) > 1e-3 * w.max():
        assert not np.allclose(ec, risk.optimal_a(scales[:, None, None] * C, prior, n), rtol=1e-6)


@FAST
@given(SEEDS, KS, st.floats(0.1, 3.0), st.floats(0.05, 0.95))
def test_theorem4_closed_form_and_bound(seed, k, rho1, frac):
    rng = np.random.default_rng(seed)
    prior = rng.dirichlet(np.full(k, 2.0)) * 0.9 + 0.1 / k
    prior /= prior.sum()
    n = rng.integers(2, 100, size=k)
    rho2 = -frac * rho1 / (k - 1)  # keeps C positive definite
    C = np.stack([rho_cov(rho1, rho2, k)] * k)
    closed = risk.variance_reduction_equal_cov(rho1, rho2, prior, n)
    assert closed == pytest.approx(risk.variance_reduction(C, prior, n), rel=1e-9)
    assert closed <= risk.variance_reduction_upper_bound(rho1, rho2, prior, n) * (1 + 1e-12)
    w = prior**2 / n
    assert risk.minimum_variance(C, prior, n) == pytest.approx(rho1 * w.sum() - closed, rel=1e-9)


# ----------------------------------------------------------------------------- PNU (Thm 5)
@FAST
@given(SEEDS, st.floats(0.1, 3.0), st.floats(-0.95, 0.95))
def test_theorem5_gap_closed_form(seed, rho1, frac):
    rng = np.random.default_rng(seed)
    t1 = rng.uniform(0.1, 0.9)
    prior, n = np.array([t1, 1 - t1]), rng.integers(2, 200, size=2)
    rho2 = frac * rho1
    C = np.stack([rho_cov(rho1, rho2, 2)] * 2)
    gap = risk.pnu_minimum_variance(C, prior, n) - risk.minimum_variance(C, prior, n)
    assert risk.pnu_variance_gap(rho1, rho2, prior, n) == pytest.approx(gap, rel=1e-7, abs=1e-14)
    w = prior**2 / n
    # closed-form η*_PU of the proof of Thm 5: (w1 ρ2 + w2 ρ1) / ((w1 + w2) ρ1)
    assert risk.pnu_optimal_eta(C, prior, n, "pu") == pytest.approx((w[0] * rho2 + w[1] * rho1) / (w.sum() * rho1))


@settings(max_examples=15, deadline=None)
@given(SEEDS, st.booleans())
def test_pnu_optimal_eta_numerical_and_dominance(seed, finite_u):
    m = Discrete(seed, 2)
    kw = dict(n_unlabeled=80, unlabeled_covariance=m.C_u) if finite_u else {}
    for family, to_a in (
        ("pu", lambda e: [m.prior[0], m.prior[1] * (1 - e)]),
        ("nu", lambda e: [m.prior[0] * (1 - e), m.prior[1]]),
    ):
        res = minimize_scalar(lambda e, to_a=to_a: risk.estimator_variance(to_a(e), m.C, m.prior, m.n, **kw))
        eta = risk.pnu_optimal_eta(m.C, m.prior, m.n, family, **kw)
        assert eta == pytest.approx(res.x, abs=1e-5)
    # eq. (11): the linear family is never worse than the best PNU
    assert risk.minimum_variance(m.C, m.prior, m.n, **kw) <= risk.pnu_minimum_variance(m.C, m.prior, m.n, **kw) * (
        1 + 1e-12
    )


# ----------------------------------------------------------------------------- symmetric loss (Thm 7-9)
@FAST
@given(SEEDS, KS)
def test_theorem7_equals_brute_force(seed, k):
    """Thm 7 with ď_k = 2·1 is correct: it matches the stacked-covariance variance of eq. (14)."""
    m = Discrete(seed, k, symmetric=True)
    a = m.rng.normal(size=k - 1)
    got = risk.symmetric_estimator_variance(a, m.C, m.prior, m.n)
    assert got == pytest.approx(brute_variance(m, a, symmetric=True), rel=1e-9)
    # truncated covariances suffice
    assert risk.symmetric_estimator_variance(a, m.C[:, :-1, :-1], m.prior, m.n) == pytest.approx(got, rel=1e-12)
    # finite n_U
    got_u = risk.symmetric_estimator_variance(a, m.C, m.prior, m.n, n_unlabeled=30, unlabeled_covariance=m.C_u)
    assert got_u == pytest.approx(brute_variance(m, a, 30, symmetric=True), rel=1e-9)
    # Thm 2 with the full a (any loss) agrees with Thm 7 after the reduction of Thm 6
    a_full = m.rng.normal(size=k)
    assert risk.estimator_variance(a_full, m.C, m.prior, m.n) == pytest.approx(
        risk.symmetric_estimator_variance(risk.symmetric_reduce_a(a_full, m.prior), m.C, m.prior, m.n), rel=1e-8
    )
    # a wrong ď_k (e.g. 1 - e_k truncated = 1, the asymmetric pattern) gives a different value
    w = m.prior**2 / m.n
    qa = a / m.prior[:-1]
    wrong = sum(
        w[j] * (qa - (1 - np.eye(k)[j, :-1])) @ m.C[j, :-1, :-1] @ (qa - (1 - np.eye(k)[j, :-1])) for j in range(k)
    )
    assert wrong != pytest.approx(got, rel=1e-6)


@settings(max_examples=15, deadline=None)
@given(SEEDS, KS)
def test_theorem8_minimum_and_numerical_minimiser(seed, k):
    m = Discrete(seed, k, symmetric=True)
    a_star = risk.symmetric_optimal_a(m.C, m.prior, m.n)
    f = lambda a: risk.symmetric_estimator_variance(a, m.C, m.prior, m.n)  # noqa: E731
    res = minimize(f, m.prior[:-1], method="BFGS", options={"gtol": 1e-12})
    assert f(a_star) == pytest.approx(res.fun, rel=1e-6)
    assert f(a_star) <= res.fun * (1 + 1e-9)
    assert risk.symmetric_minimum_variance(m.C, m.prior, m.n) == pytest.approx(f(a_star), rel=1e-9)
    # eq. (15) written out with the paper's Š, ǔ and Σ_m w_m (C_m)_mm
    w = m.prior**2 / m.n
    Cc = m.C[:, :-1, :-1]
    S = sum(w[j] * Cc[j] for j in range(k))
    u = sum(w[j] * Cc[j][:, j] for j in range(k - 1)) - w[-1] * Cc[-1] @ np.ones(k - 1)
    eq15 = sum(w[j] * m.C[j, j, j] for j in range(k)) - u @ np.linalg.solve(S, u)
    assert risk.symmetric_minimum_variance(m.C, m.prior, m.n) == pytest.approx(eq15, rel=1e-9)
    # the full k-parameter problem is singular for a symmetric loss; with a ridge it approaches Thm 8
    with pytest.raises(ValueError, match="singular"):
        risk.optimal_a(m.C, m.prior, m.n)
    with pytest.raises(ValueError, match="singular"):
        risk.minimum_variance(m.C, m.prior, m.n)
    a_ridge = risk.optimal_a(m.C, m.prior, m.n, ridge=1e-9)
    assert risk.estimator_variance(a_ridge, m.C, m.prior, m.n) == pytest.approx(f(a_star), rel=1e-4)


@FAST
@given(SEEDS)
def test_theorem9_pnpu_pnnu_and_linear_share_minimum(seed):
    """k = 2, symmetric loss: S_lin = S_PNPU = S_PNNU, so the three minimum variances coincide."""
    m = Discrete(seed, 2, symmetric=True)
    lin = risk.symmetric_minimum_variance(m.C, m.prior, m.n)
    for family in ("pu", "nu"):
        eta = risk.pnu_optimal_eta(m.C, m.prior, m.n, family)
        a = [m.prior[0], m.prior[1] * (1 - eta)] if family == "pu" else [m.prior[0] * (1 - eta), m.prior[1]]
        assert risk.estimator_variance(a, m.C, m.prior, m.n) == pytest.approx(lin, rel=1e-8, abs=1e-15)
    assert risk.pnu_minimum_variance(m.C, m.prior, m.n) == pytest.approx(lin, rel=1e-8, abs=1e-15)
    # ... while for an asymmetric loss the linear family can be strictly better (Thm 5)
    C = np.stack([rho_cov(1.0, -0.5, 2)] * 2)
    assert risk.pnu_minimum_variance(C, [0.5, 0.5], [30, 30]) > risk.minimum_variance(C, [0.5, 0.5], [30, 30]) * 1.01


# ----------------------------------------------------------------------------- estimation, backends, errors
def test_loss_covariances_and_shrinkage():
    rng = np.random.default_rng(0)
    L = rng.normal(size=(60, 3))
    y = np.concatenate([np.arange(3), rng.integers(0, 3, 57)])
    C = risk.loss_covariances(L, y, 3)
    for m in range(3):
        np.testing.assert_allclose(C[m], np.cov(L[y == m].T), atol=1e-12)
    Cs = risk.loss_covariances(L, y, 3, shrinkage=0.5)
    for m in range(3):
        np.testing.assert_allclose(Cs[m], 0.5 * C[m] + 0.5 * np.diag(np.diag(C[m])), atol=1e-12)
    C0 = risk.loss_covariances(L, y, 3, ddof=0)
    np.testing.assert_allclose(C0[0], np.cov(L[y == 0].T, ddof=0), atol=1e-12)
    Ct = risk.loss_covariances(torch.tensor(L, dtype=torch.float32), torch.tensor(y), 3)
    assert Ct.dtype == torch.float32
    np.testing.assert_allclose(Ct.numpy(), C, atol=1e-5)
    with pytest.raises(ValueError, match="shrinkage must be a number in"):
        risk.loss_covariances(L, y, 3, shrinkage=1.5)
    with pytest.raises(ValueError, match=r"class\(es\) \[2\] have \[1\] samples"):
        risk.loss_covariances(L[:5], np.array([0, 0, 1, 1, 2]), 3)


def test_torch_matches_numpy_for_variance_functions():
    m = Discrete(9, 3)
    a = np.array([0.2, 0.1, 0.4])
    t = lambda x: torch.tensor(x, dtype=torch.float64)  # noqa: E731
    pairs = [
        (risk.estimator_variance(a, m.C, m.prior, m.n), risk.estimator_variance(t(a), t(m.C), m.prior, m.n)),
        (
            risk.estimator_variance(a, m.C, m.prior, m.n, n_unlabeled=20, unlabeled_covariance=m.C_u),
            risk.estimator_variance(a, t(m.C), m.prior, m.n, n_unlabeled=20, unlabeled_covariance=t(m.C_u)),
        ),
        (risk.optimal_a(m.C, m.prior, m.n, ridge=1e-4), risk.optimal_a(t(m.C), m.prior, m.n, ridge=1e-4)),
        (risk.minimum_variance(m.C, m.prior, m.n), risk.minimum_variance(t(m.C), m.prior, m.n)),
        (risk.mixture_covariance(m.C, m.R, m.prior), risk.mixture_covariance(t(m.C), t(m.R), m.prior)),
        (risk.equal_covariance_a(m.prior, m.n), risk.equal_covariance_a(t(m.prior), m.n)),
        (risk.symmetric_optimal_a(m.C, m.prior, m.n), risk.symmetric_optimal_a(t(m.C), m.prior, m.n)),
        (risk.symmetric_minimum_variance(m.C, m.prior, m.n), risk.symmetric_minimum_variance(t(m.C), m.prior, m.n)),
        (risk.pnu_to_a([0.3, 0.7], -0.4), risk.pnu_to_a(t([0.3, 0.7]), -0.4)),
        (risk.pnu_eta([0.3, 0.7], [10, 50]), risk.pnu_eta(t([0.3, 0.7]), [10, 50])),
    ]
    for np_val, t_val in pairs:
        assert isinstance(t_val, torch.Tensor) and not isinstance(np_val, torch.Tensor)
        np.testing.assert_allclose(t_val.numpy(), np_val, rtol=1e-10)
    # float32 covariances give a float32 a*
    assert risk.optimal_a(t(m.C).float(), m.prior, m.n).dtype == torch.float32


def test_variance_errors():
    m = Discrete(2, 3)
    with pytest.raises(ValueError, match="prior must sum to 1"):
        risk.estimator_variance([0, 0, 0], m.C, [0.3, 0.3, 0.3], m.n)
    with pytest.raises(ValueError, match="strictly positive entries"):
        risk.optimal_a(m.C, [1.2, -0.2, 0.0], m.n)
    with pytest.raises(ValueError, match=r"covariances must have shape \(3, 3, 3\)"):
        risk.optimal_a(m.C[:2], m.prior, m.n)
    with pytest.raises(ValueError, match=r"n_per_class must have shape \(3,\)"):
        risk.minimum_variance(m.C, m.prior, [10, 10])
    with pytest.raises(ValueError, match="n_per_class must be strictly positive"):
        risk.equal_covariance_a(m.prior, [10, 0, 10])
    with pytest.raises(ValueError, match=r"a must have shape \(3,\)"):
        risk.estimator_variance([0.1, 0.2], m.C, m.prior, m.n)
    with pytest.raises(ValueError, match=r"a must have shape \(2,\)"):
        risk.symmetric_estimator_variance([0.1, 0.2, 0.3], m.C, m.prior, m.n)
    with pytest.raises(ValueError, match="covariances contains NaN"):
        risk.optimal_a(np.full((3, 3, 3), np.nan), m.prior, m.n)
    with pytest.raises(ValueError, match="unlabeled_covariance is required"):
        risk.estimator_variance(m.prior, m.C, m.prior, m.n, n_unlabeled=10)
    with pytest.raises(ValueError, match="n_unlabeled must be a positive number"):
        risk.estimator_variance(m.prior, m.C, m.prior, m.n, n_unlabeled=0, unlabeled_covariance=m.C_u)
    with pytest.raises(ValueError, match=r"unlabeled_covariance must be a \(3, 3\) matrix"):
        risk.optimal_a(m.C, m.prior, m.n, n_unlabeled=10, unlabeled_covariance=np.eye(4))
    with pytest.raises(ValueError, match=r"class_means must have shape \(3, 3\)"):
        risk.mixture_covariance(m.C, m.R[:2], m.prior)
    with pytest.raises(ValueError, match="PNU is binary"):
        risk.pnu_optimal_eta(m.C, m.prior, m.n, "pu")
    with pytest.raises(ValueError, match="family must be 'pu'"):
        risk.pnu_optimal_eta(m.C[:2, :2, :2], [0.5, 0.5], [5, 5], "pn")
    with pytest.raises(ValueError, match="rho1 must exceed rho2"):
        risk.variance_reduction_equal_cov(1.0, 2.0, [0.5, 0.5], [5, 5])
    with pytest.raises(ValueError, match=r"rho1 \(the common variance"):
        risk.variance_reduction_upper_bound(-1.0, -2.0, [0.5, 0.5], [5, 5])
    with pytest.raises(ValueError, match="Theorem 5 is binary"):
        risk.pnu_variance_gap(1.0, -0.2, m.prior, m.n)
    with pytest.raises(ValueError, match="C is singular"):
        risk.variance_reduction_equal_cov(1.0, -0.5, m.prior, m.n)


def test_non_psd_covariances_are_refused():
    # A covariance with a negative eigenvalue used to be accepted: estimator_variance could then return a
    # negative "variance" and optimal_a a saddle point. Round-off (a symmetric loss's singular C_m) passes.
    m = Discrete(4, 3)
    bad = m.C.copy()
    bad[1] = bad[1] - 2.0 * np.linalg.eigvalsh(bad[1])[-1] * np.eye(3)  # shift below 0
    for call in (
        lambda: risk.estimator_variance(m.prior, bad, m.prior, m.n),
        lambda: risk.optimal_a(bad, m.prior, m.n, ridge=1e-4),
        lambda: risk.minimum_variance(bad, m.prior, m.n),
        lambda: risk.optimal_a(torch.tensor(bad), m.prior, m.n),
        lambda: risk.symmetric_optimal_a(bad, m.prior, m.n),
    ):
        with pytest.raises(ValueError, match=r"covariances\[1\] is not positive semidefinite"):
            call()
    asym = m.C.copy()
    asym[0, 0, 1] += 0.1
    with pytest.raises(ValueError, match=r"covariances\[0\] is not symmetric"):
        risk.estimator_variance(m.prior, asym, m.prior, m.n)
    with pytest.raises(ValueError, match="unlabeled_covariance is not positive semidefinite"):
        risk.optimal_a(m.C, m.prior, m.n, n_unlabeled=10, unlabeled_covariance=-np.eye(3))
    # round-off is tolerated: a symmetric loss's covariances are singular (C_m 1 = 0)
    s = Discrete(5, 3, symmetric=True)
    jitter = s.C + 1e-13 * np.random.default_rng(0).normal(size=s.C.shape)
    jitter = (jitter + jitter.transpose(0, 2, 1)) / 2
    assert np.isfinite(risk.estimator_variance(s.prior, jitter, s.prior, s.n))
    risk.optimal_a(jitter, s.prior, s.n, ridge=1e-4)


def test_equal_covariance_a_refuses_fractional_counts_like_ours_ec():
    from sslkit.algorithms import OursEC

    prior = [0.3, 0.7]
    with pytest.raises(ValueError, match="n_per_class must be whole class counts"):
        risk.equal_covariance_a(prior, [10.5, 20])
    with pytest.raises(ValueError, match="n_per_class must be whole class counts"):
        risk.equal_covariance_a(torch.tensor(prior, dtype=torch.float64), torch.tensor([10.0, 0.25]))
    with pytest.raises(ValueError, match="integer class counts"):
        OursEC(prior, n_per_class=[10.5, 20]).initial_a()
    # whole counts, as ints or as floats, give the same a
    np.testing.assert_allclose(risk.equal_covariance_a(prior, [10.0, 20.0]), risk.equal_covariance_a(prior, [10, 20]))
