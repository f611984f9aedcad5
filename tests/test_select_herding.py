"""sslkit.select.herding: GKHR / GKH (paper B eq. (7)-(8), Algorithms 1-2, Thm 5.6); the kernel and the alpha-MMD
they rest on: test_select_kernel.py, test_select_mmd.py.

The references (select_reference.py) are dense n x n computations written from the paper's formulas; they exist only
in the tests (the library never builds an n x n matrix).
"""

from __future__ import annotations

import math
import types

import numpy as np
import pytest
import torch
from select_reference import brute_gkhr, dense_kernel, frank_wolfe_herding, toy_data

from sslkit.data import rdss_toy_distribution
from sslkit.select import GKH, GKHR, alpha_mmd2, alpha_mmd2_path, auto_alpha, kernel_row_sums, theorem_5_6_bound

pytestmark = pytest.mark.usefixtures("one_thread")  # conftest.py


@pytest.fixture(scope="module")
def toy():
    return toy_data()


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


def test_herding_loop_runs_single_threaded_and_restores_the_thread_count(monkeypatch):
    """The latency-bound loop runs with one torch thread (a busy machine's other process cannot stall it), mu and
    the caller keep theirs, and the selection is the one the threaded loop makes."""
    import contextlib

    import sslkit.select.herding as herding
    from sslkit.device import single_threaded

    seen = []

    class Spy(GKHR):
        def _loop(self, Z, mu, alpha, pmap=map):
            seen.append(torch.get_num_threads())
            return super()._loop(Z, mu, alpha, pmap)

    X = torch.randn(400, 8, generator=torch.Generator().manual_seed(0))
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        ours = Spy(30, device="cpu").fit(X)
        assert seen == [1] and torch.get_num_threads() == 2
        monkeypatch.setattr(herding, "task_pool", lambda device, tasks: contextlib.nullcontext(map))
        threaded = Spy(30, device="cpu").fit(X)
        assert seen == [1, 2]
        np.testing.assert_array_equal(ours.indices_, threaded.indices_)
        np.testing.assert_array_equal(ours.objective_, threaded.objective_)
        with single_threaded("meta"):  # not a CPU device: nothing to change
            assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


def test_loop_passes_shared_by_a_thread_pool_give_the_same_rows_and_selection(monkeypatch):
    """The loop's passes over the features are split into ROW_CHUNK-row chunks that a pool of torch's thread count
    of Python threads computes (each chunk on one torch thread): the kernel rows are bit-identical to one thread's
    and so is the selection; the pool is used only when a pass has at least two chunks."""
    from concurrent.futures import ThreadPoolExecutor

    import sslkit.device
    import sslkit.select.herding as herding
    from sslkit.select.kernel import kernel_rows, lifted, partner

    Z = lifted(torch.randn(5000, 16, generator=torch.Generator().manual_seed(1)), 3.0)
    P = partner(Z[:32])
    with ThreadPoolExecutor(3) as pool:
        np.testing.assert_array_equal(kernel_rows(Z, P, 700, pool.map).numpy(), kernel_rows(Z, P, 700).numpy())

    pools = []

    class Counting(ThreadPoolExecutor):
        def map(self, fn, *iterables):
            pools.append(self._max_workers)
            return super().map(fn, *iterables)

    monkeypatch.setattr(sslkit.device, "ThreadPoolExecutor", Counting)
    monkeypatch.setattr(herding, "ROW_CHUNK", 500)
    X = torch.randn(1200, 8, generator=torch.Generator().manual_seed(0))
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        one = GKHR(40, device="cpu", bandwidth=2.0).fit(X)
        assert pools == []  # one torch thread: no pool
        torch.set_num_threads(2)
        two = GKHR(40, device="cpu", bandwidth=2.0).fit(X)
        assert pools and set(pools) == {2}
        np.testing.assert_array_equal(one.indices_, two.indices_)
        np.testing.assert_array_equal(
            one.objective_, GKHR(40, device="cpu", bandwidth=2.0).fit(X, mu=one.mu_).objective_
        )
        pools.clear()
        GKHR(40, device="cpu", bandwidth=2.0).fit(X[:999])  # a pass of one chunk (n < 2 ROW_CHUNK): no pool
        assert pools == []
    finally:
        torch.set_num_threads(before)


def test_speculative_loop_is_the_cached_loop_bit_for_bit(monkeypatch):
    """Past CPU_CANDIDATES samples the CPU loop speculates on the candidates and verifies on the whole objective:
    the indices and objective are the cached loop's bit for bit (GKHR and GKH, several lookaheads), in fewer passes
    over the features than picks; a tiny candidate set (50 of 3000: speculation wrong almost every step) still gives
    them."""
    import sslkit.select.herding as herding
    from sslkit.select.kernel import kernel_rows, lifted, partner

    gen = torch.Generator().manual_seed(3)
    X = torch.cat([torch.randn(2500, 12, generator=gen), 0.3 * torch.randn(500, 12, generator=gen) + 2.0])
    Z = lifted(X, 4.0)
    few, many = kernel_rows(Z, partner(Z[:16])), kernel_rows(Z, partner(Z[:40]))
    same_bits = torch.equal(few, many[:16])  # this BLAS rounds 16- and 40-row products alike (MIN_PASS_ROWS)
    for cls, m in ((GKHR, 150), (GKH, 200)):
        for lookahead in (3, 16):
            kw = dict(alpha=0.8, bandwidth=4.0, lookahead=lookahead, device="cpu")
            monkeypatch.setattr(herding, "CPU_CANDIDATES", 10**9)
            cached = cls(m, **kw).fit(X)
            for candidates in (300, 50):  # (at least n // 64 = 46)
                monkeypatch.setattr(herding, "CPU_CANDIDATES", candidates)
                spec = cls(m, **kw).fit(X, mu=cached.mu_)
                np.testing.assert_array_equal(spec.indices_, cached.indices_)
                if same_bits and lookahead >= herding.MIN_PASS_ROWS:
                    np.testing.assert_array_equal(spec.objective_, cached.objective_)
                else:  # the cached loop's 3-row products round differently from a pass's 16 rows
                    np.testing.assert_allclose(spec.objective_, cached.objective_, rtol=0, atol=1e-6)
                assert spec.passes_ <= m
                if candidates == 300 and lookahead == 16:
                    assert spec.passes_ < m / 3 < cached.passes_ + m / 3  # the speculation pays
    assert cls is GKH and len(np.unique(spec.indices_)) < m  # GKH repeats picks through the speculation too


def test_speculation_keeps_the_argmin_among_tied_candidates(monkeypatch):
    """Exact ties at the candidates' boundary can leave the argmin out of them (here a topk that breaks ties towards
    the largest index): the pass then computes the argmin's row alone, so every pass still makes progress and the
    selection is the cached loop's."""
    import sslkit.select.herding as herding

    X = torch.randn(1200, 5, generator=torch.Generator().manual_seed(0))
    flat = np.full(1200, 0.5)  # every mu equal: the first step is a 1200-way tie, the argmin is index 0
    monkeypatch.setattr(herding, "CPU_CANDIDATES", 10**9)
    cached = GKHR(60, bandwidth=2.0, device="cpu").fit(X, mu=flat)
    left_out = []

    def topk_last_among_ties(T, k, **kw):  # the k smallest, ties broken towards the largest index
        order = torch.from_numpy(np.lexsort((-np.arange(len(T)), T.numpy()))[:k])
        left_out.append(int(torch.argmin(T)) not in order)
        return types.SimpleNamespace(values=T[order], indices=order)

    monkeypatch.setattr(herding.torch, "topk", topk_last_among_ties)
    monkeypatch.setattr(herding, "CPU_CANDIDATES", 7)
    spec = GKHR(60, bandwidth=2.0, device="cpu").fit(X, mu=flat)
    assert left_out[0]  # the first step's candidates came without the argmin
    np.testing.assert_array_equal(spec.indices_, cached.indices_)
    assert spec.indices_[0] == 0 and spec.passes_ <= 60
