"""sslkit.select: kernel, alpha-MMD, GKHR / GKH (paper B eq. (4)-(8), Algorithms 1-2, App. A.1, Thm 5.6).

The references below are dense n x n computations written from the paper's formulas; they exist only
in the tests (the library never builds an n x n matrix).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from sslkit.data import rdss_toy_distribution
from sslkit.select import (
    GKH,
    GKHR,
    alpha_mmd2,
    alpha_mmd2_path,
    auto_alpha,
    gaussian_kernel,
    kernel_row_sums,
    median_bandwidth,
    mmd2,
    theorem_5_6_bound,
)


@pytest.fixture(autouse=True)
def one_thread():
    # tiny tensors on a busy 2-core machine: thread hand-offs cost more than the work
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(old)


def dense_kernel(A, B, sigma):
    d2 = ((A[:, None, :] - B[None, :, :]) ** 2).sum(-1)
    return np.exp(-d2 / sigma**2)


def brute_gkhr(X, m, alpha, sigma, replace=False):
    """Algorithm 1 (replace=False) / Algorithm 2 (replace=True), line by line, with a dense kernel."""
    K = dense_kernel(X, X, sigma)
    n = len(X)
    mu = K.sum(0) / n  # line 1
    S = np.zeros(n)  # line 2
    chosen = []
    for p in range(1, m + 1):
        obj = S - alpha * mu
        if not replace:
            obj[chosen] = np.inf  # argmin over [n] \ I
        i = int(np.argmin(obj))  # line 4
        beta = 1.0 / p
        S = (1 - beta) * S + beta * K[i]  # line 5
        chosen.append(i)
    return np.array(chosen)


def frank_wolfe_herding(X, m, sigma, alpha=1.0):
    """Kernel herding as Frank-Wolfe on the weights (App. A.1; Bach et al. 2012) for alpha = 1.

    w_0 = 0; s_p = argmin_{e_i} e_i^T (K w_p - alpha p), w_{p+1} = p/(p+1) w_p + e_i/(p+1).
    """
    K = dense_kernel(X, X, sigma)
    n = len(X)
    pvec = K @ np.ones(n) / n
    w = np.zeros(n)
    out = []
    for p in range(m):
        i = int(np.argmin(K @ w - alpha * pvec))
        w = p / (p + 1) * w
        w[i] += 1 / (p + 1)
        out.append(i)
    return np.array(out), w


def dense_alpha_mmd2(X, idx, alpha, sigma):
    """eq. (6), second line, dense."""
    K = dense_kernel(X, X, sigma)
    n, m = len(X), len(idx)
    return alpha**2 * K.sum() / n**2 + K[np.ix_(idx, idx)].sum() / m**2 - 2 * alpha * K[:, idx].sum() / (m * n)


@pytest.fixture(scope="module")
def toy():
    X, _ = rdss_toy_distribution("gmm2", 300, seed=1)
    return X


# --------------------------------------------------------------------------------------------------
# kernel
# --------------------------------------------------------------------------------------------------


def test_gaussian_kernel_convention(toy):
    K = gaussian_kernel(toy[:20], toy[:30], bandwidth=1.7).numpy()
    np.testing.assert_allclose(K, dense_kernel(toy[:20], toy[:30], 1.7), rtol=1e-12, atol=1e-14)
    # exp(-||x-y||^2 / sigma^2): at distance sigma the kernel is 1/e
    K2 = gaussian_kernel(np.array([[0.0, 0.0]]), np.array([[3.0, 4.0]]), bandwidth=5.0)
    assert float(K2) == pytest.approx(math.exp(-1.0), rel=1e-12)


def test_median_bandwidth_exact_small_n(toy):
    d = np.sqrt(((toy[:, None] - toy[None]) ** 2).sum(-1))[np.triu_indices(len(toy), 1)]
    assert median_bandwidth(toy) == pytest.approx(float(np.median(d)), rel=1e-10)


def test_median_bandwidth_subsample_seeded(toy):
    a = median_bandwidth(toy, max_samples=50, seed=3)
    assert a == median_bandwidth(toy, max_samples=50, seed=3)
    rows = np.sort(np.random.default_rng(3).choice(len(toy), 50, replace=False))
    sub = toy[rows]
    d = np.sqrt(((sub[:, None] - sub[None]) ** 2).sum(-1))[np.triu_indices(50, 1)]
    assert a == pytest.approx(float(np.median(d)), rel=1e-10)


@pytest.mark.parametrize("block", [3, 7, 64, 1000])
def test_blockwise_row_sums_equal_dense(toy, block):
    r = kernel_row_sums(toy, bandwidth=2.5, block_size=block).numpy()
    np.testing.assert_allclose(r, dense_kernel(toy, toy, 2.5).sum(1), rtol=1e-12)


def test_row_sums_float32_close_to_float64(toy):
    r32 = kernel_row_sums(toy.astype(np.float32), bandwidth=2.5, block_size=64).numpy()
    np.testing.assert_allclose(r32, dense_kernel(toy, toy, 2.5).sum(1), rtol=1e-5)


# --------------------------------------------------------------------------------------------------
# alpha-MMD
# --------------------------------------------------------------------------------------------------


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


# --------------------------------------------------------------------------------------------------
# GKHR / GKH
# --------------------------------------------------------------------------------------------------


def test_gkhr_equals_brute_force_algorithm1(toy):
    for alpha, sigma, m in [(0.9, 2.0, 40), (0.5, 0.7, 60), (1.0, 4.0, 25)]:
        sel = GKHR(m, alpha=alpha, bandwidth=sigma, block_size=37, device="cpu").fit(toy)
        np.testing.assert_array_equal(sel.indices_, brute_gkhr(toy, m, alpha, sigma))
        assert sel.alpha_ == alpha and sel.bandwidth_ == sigma


@pytest.mark.parametrize("lookahead", [1, 2, 7, 500])
def test_gkhr_lookahead_selects_the_same_indices(toy, lookahead):
    """The look-ahead rows are the same kernel rows: any lookahead gives Algorithm 1's selection."""
    for cls, m, kw in ((GKHR, 60, {}), (GKH, 80, {"replace": True})):
        sel = cls(m, alpha=0.7, bandwidth=1.0, lookahead=lookahead, device="cpu").fit(toy)
        np.testing.assert_array_equal(sel.indices_, brute_gkhr(toy, m, 0.7, 1.0, **kw))
    with pytest.raises(ValueError, match="lookahead"):
        GKHR(5, lookahead=0)


def test_gkhr_with_a_precomputed_mu_is_the_same_selection(toy):
    """``fit(X, mu=...)`` skips line 1 of Algorithm 1: with the pool's own mu (kernel_row_sums / n, or another
    fit's mu_) the indices, objective and mu_ are bit for bit those of a fit that computes it; a mu of the wrong
    length, with a NaN, or without the explicit bandwidth it was computed with is refused."""
    n = toy.shape[0]
    mu = kernel_row_sums(toy, bandwidth=1.3, device="cpu") / n
    for alpha, m in ((0.4, 30), (0.95, 70)):
        plain = GKHR(m, alpha=alpha, bandwidth=1.3, device="cpu").fit(toy)
        given = GKHR(m, alpha=alpha, bandwidth=1.3, device="cpu").fit(toy, mu=mu)
        np.testing.assert_array_equal(given.indices_, plain.indices_)
        np.testing.assert_array_equal(given.objective_, plain.objective_)
        np.testing.assert_array_equal(given.mu_, plain.mu_)
    half = GKHR(m, alpha=alpha, bandwidth=1.3, device="cpu").fit(toy, mu=mu * 0.5)  # the mu given is the one used
    assert half.indices_[0] == plain.indices_[0] and half.objective_[0] == pytest.approx(0.5 * plain.objective_[0])
    with pytest.raises(ValueError, match="mu must have shape"):
        GKHR(5, bandwidth=1.3, device="cpu").fit(toy, mu=mu[:-1])
    with pytest.raises(ValueError, match="NaN"):
        GKHR(5, bandwidth=1.3, device="cpu").fit(toy, mu=torch.full((n,), float("nan"), dtype=torch.float64))
    with pytest.raises(ValueError, match="explicit bandwidth"):
        GKHR(5, device="cpu").fit(toy, mu=mu)


def test_gkh_equals_brute_force_algorithm2(toy):
    sel = GKH(80, alpha=0.6, bandwidth=1.0, device="cpu").fit(toy)
    np.testing.assert_array_equal(sel.indices_, brute_gkhr(toy, 80, 0.6, 1.0, replace=True))


def test_gkhr_no_repeats_densest_first_and_permutation_at_m_equals_n(toy):
    sel = GKHR(120, device="cpu").fit(toy)
    assert sel.indices_.dtype == np.int64 and len(np.unique(sel.indices_)) == 120
    mu = dense_kernel(toy, toy, sel.bandwidth_).mean(1)
    np.testing.assert_allclose(sel.mu_, mu, rtol=1e-12)
    assert sel.indices_[0] == int(np.argmax(mu))
    full = GKHR(len(toy), bandwidth=2.0, device="cpu").fit(toy).indices_
    np.testing.assert_array_equal(np.sort(full), np.arange(len(toy)))
    assert set(sel.timings_) == {"bandwidth", "mu", "loop", "total", "mu_cpu", "loop_cpu"}


def test_gkh_alpha_one_is_kernel_herding(toy):
    sel = GKH(50, alpha=1.0, bandwidth=1.5, device="cpu").fit(toy)
    ref, w = frank_wolfe_herding(toy, 50, 1.5)
    np.testing.assert_array_equal(sel.indices_, ref)
    # the herding weights are the multiplicities / m: alpha_mmd2 of the multiset = w^T K_* w
    assert np.allclose(np.bincount(sel.indices_, minlength=len(toy)) / 50, w)
    assert len(np.unique(sel.indices_)) <= 50


def test_gkh_may_repeat_and_allows_m_above_n():
    X = np.array([[0.0, 0.0], [0.0, 0.1], [5.0, 5.0]])
    sel = GKH(7, alpha=1.0, bandwidth=1.0, device="cpu").fit(X)
    assert len(sel.indices_) == 7 and len(np.unique(sel.indices_)) < 7


def test_auto_alpha_and_determinism(toy):
    assert auto_alpha(400) == pytest.approx(0.95)
    assert auto_alpha(1) == 1.0
    a = GKHR(30, device="cpu").fit(toy)
    b = GKHR(30, device="cpu").fit(torch.as_tensor(toy))
    assert a.alpha_ == pytest.approx(1 - 1 / math.sqrt(30))
    np.testing.assert_array_equal(a.indices_, b.indices_)
    c = GKHR(30, bandwidth_samples=100, seed=5, device="cpu").fit(toy)
    d = GKHR(30, bandwidth_samples=100, seed=5, device="cpu").fit(toy)
    np.testing.assert_array_equal(c.indices_, d.indices_)
    assert c.bandwidth_ == d.bandwidth_


@pytest.mark.parametrize("name", ["gmm1", "gmm2", "uniform1", "uniform2"])
def test_theorem_5_6_bound_holds_on_appendix_d1_data(name):
    X, _ = rdss_toy_distribution(name, 1000, seed=0)
    m = 100
    sel = GKHR(m, device="cpu").fit(X)
    path = alpha_mmd2_path(X, sel.indices_, sel.alpha_, sel.bandwidth_, mu=sel.mu_)
    Kbar = float(sel.mu_.mean())
    bound = theorem_5_6_bound(np.arange(1, m + 1), sel.alpha_, Kbar)  # C^2 + 2K(2 + log p)/(p + 1), K = 1
    assert bound[0] == pytest.approx((1 - sel.alpha_) ** 2 * Kbar + 2.0)
    assert np.all(path <= bound + 1e-12)
    assert path[-1] == pytest.approx(alpha_mmd2(X, sel.indices_, sel.alpha_, sel.bandwidth_), rel=1e-9)
    # and GKHR beats a random selection of the same size on its own criterion
    rnd = np.random.default_rng(0).choice(len(X), m, replace=False)
    assert path[-1] < alpha_mmd2(X, rnd, sel.alpha_, sel.bandwidth_, mu=sel.mu_)


def test_float32_input_selects_like_float64(toy):
    a = GKHR(30, bandwidth=2.0, device="cpu").fit(toy).indices_
    b = GKHR(30, bandwidth=2.0, device="cpu").fit(toy.astype(np.float32)).indices_
    assert (a == b).mean() >= 0.9  # float32 rounding may swap near-ties late in the run


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_cpu_and_gpu_select_the_same_indices(toy):
    for cls in (GKHR, GKH):
        a = cls(60, device="cpu").fit(toy)
        b = cls(60, device="cuda").fit(toy)
        np.testing.assert_array_equal(a.indices_, b.indices_)
        assert a.bandwidth_ == pytest.approx(b.bandwidth_, rel=1e-12)


# --------------------------------------------------------------------------------------------------
# bad input
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("cls", [GKHR, GKH])
def test_constructor_errors(cls):
    with pytest.raises(ValueError, match="m must be positive"):
        cls(0)
    with pytest.raises(ValueError, match="m must be"):
        cls(-3)
    with pytest.raises(TypeError, match="m must be an integer"):
        cls(2.5)
    for bad in (0, 0.0, -0.1, 1.01, float("nan")):
        with pytest.raises(ValueError, match=r"alpha must be in \(0, 1\]"):
            cls(5, alpha=bad)
    with pytest.raises(TypeError, match="alpha"):
        cls(5, alpha="half")
    for bad in (0, -1.0, float("inf")):
        with pytest.raises(ValueError, match="bandwidth must be a positive"):
            cls(5, bandwidth=bad)
    with pytest.raises(TypeError, match="bandwidth"):
        cls(5, bandwidth="mean")


def test_fit_errors(toy):
    with pytest.raises(ValueError, match="exceeds the number of samples"):
        GKHR(301, device="cpu").fit(toy)
    bad = toy.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN or infinite"):
        GKHR(5, device="cpu").fit(bad)
    bad[3, 1] = np.inf
    with pytest.raises(ValueError, match="NaN or infinite"):
        GKH(5, device="cpu").fit(bad)
    with pytest.raises(ValueError, match="must be 2-D"):
        GKHR(5, device="cpu").fit(toy[:, 0])
    with pytest.raises(ValueError, match="must be 2-D"):
        GKHR(5, device="cpu").fit(toy[None])
    with pytest.raises(TypeError, match="must hold numbers"):
        GKHR(5, device="cpu").fit(np.array([["a", "b"]]))
    with pytest.raises(ValueError, match="median pairwise distance is 0"):
        GKHR(2, device="cpu").fit(np.zeros((5, 3)))


@pytest.mark.parametrize("cls", [GKHR, GKH])
def test_non_finite_kernel_is_refused(cls):
    # A tiny bandwidth (or overflowing features) made every kernel value NaN in float32, and the loop
    # then returned repeated indices (GKHR gave 0, 1, 0, 1, ...). It must refuse instead.
    X = np.random.default_rng(0).normal(size=(50, 4)).astype(np.float32)
    with pytest.raises(ValueError, match="kernel is not finite"):
        cls(10, bandwidth=1e-20, device="cpu").fit(X)
    with pytest.raises(ValueError, match="kernel is not finite"):
        cls(10, bandwidth=1.0, device="cpu").fit(X * np.float32(1e20))
    with pytest.raises(ValueError, match="kernel is not finite"):
        cls(10, device="cpu").fit(X * np.float32(1e20))  # the median bandwidth said "pairs coincide"
    # the same scale in float64 is fine and selects distinct points
    idx = GKHR(10, bandwidth=1e-20, device="cpu").fit(X.astype(np.float64)).indices_
    assert len(set(idx.tolist())) == 10


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


def test_herding_loop_runs_single_threaded_and_restores_the_thread_count(monkeypatch):
    """The latency-bound loop runs with one torch thread (a busy machine's other process cannot stall it), mu and
    the caller keep theirs, and the selection is the one the threaded loop makes."""
    import contextlib

    import sslkit.select.herding as herding
    from sslkit.device import single_threaded

    seen = []

    class Spy(GKHR):
        def _loop(self, Z, mu, alpha):
            seen.append(torch.get_num_threads())
            return super()._loop(Z, mu, alpha)

    X = torch.randn(400, 8, generator=torch.Generator().manual_seed(0))
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        ours = Spy(30, device="cpu").fit(X)
        assert seen == [1] and torch.get_num_threads() == 2
        monkeypatch.setattr(herding, "single_threaded", lambda device: contextlib.nullcontext())
        threaded = Spy(30, device="cpu").fit(X)
        assert seen == [1, 2]
        np.testing.assert_array_equal(ours.indices_, threaded.indices_)
        np.testing.assert_array_equal(ours.objective_, threaded.objective_)
        with single_threaded("meta"):  # not a CPU device: nothing to change
            assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)
