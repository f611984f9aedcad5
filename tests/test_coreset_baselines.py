"""Paper C's selection baselines: per-batch CRAIG (App. D), per-batch GradMatch (App. E), Random.

References: apricot's FacilityLocationSelection (the library CORDS' CRAIG calls) and a brute-force
greedy for the facility location; ``scipy.optimize.nnls`` for GradMatch's non-negative weights.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from oracles import check_greedy
from scipy.optimize import nnls

from sslkit.coreset import (
    Craig,
    GradMatch,
    RandomCoreset,
    batch_means,
    craig_similarity,
    facility_location,
    nonnegative_ridge,
    omp_nonnegative,
)


@pytest.fixture(autouse=True)
def one_thread():
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(old)


def gradients(n=600, d=12, seed=0):
    gen = torch.Generator().manual_seed(seed)
    centres = torch.randn(6, d, generator=gen, dtype=torch.float64) * 3
    return centres[torch.randint(6, (n,), generator=gen)] + torch.randn(n, d, generator=gen, dtype=torch.float64)


def facility_location_gains(S):
    """The oracle's marginal gains: ``gain(prefix)[j] = sum_i max(s_ij - max_{l in prefix} s_il, 0)``."""
    S = np.asarray(S, dtype=np.float64)

    def gain(prefix):
        cur = S[:, prefix].max(axis=1) if prefix else np.zeros(len(S))
        return np.maximum(S - cur[None, :], 0.0).sum(axis=1)

    return gain


def brute_force_facility_location(S, k, forced=None):
    """Naive greedy (ties: the smaller index); ``forced`` {step: j} takes j at that step instead."""
    gain = facility_location_gains(S)
    order, gains = [], []
    for t in range(k):
        g = gain(order)
        g[order] = -np.inf
        j = (forced or {}).get(t, int(np.argmax(g)))
        order.append(j)
        gains.append(g[j])
    return order, gains


# --------------------------------------------------------------------------------------------------
# CRAIG
# --------------------------------------------------------------------------------------------------


def test_similarity_is_max_minus_distance():
    X = gradients(30, 4)
    S = craig_similarity(X).numpy()
    dist = ((X[:, None] - X[None]) ** 2).sum(-1).numpy()
    np.testing.assert_allclose(S, dist.max() - dist, rtol=1e-10, atol=1e-9)
    S2 = craig_similarity(X, "euclidean").numpy()
    np.testing.assert_allclose(S2, np.sqrt(dist).max() - np.sqrt(dist), rtol=1e-10, atol=1e-7)


#: The first near-tie of the greedy on the test problem: at pick 8 (sqeuclidean; 10 for euclidean) batches 3 and 46
#: have equal gains (they improve only each other and themselves, and s is symmetric with a constant diagonal), so
#: which one an implementation takes depends on its tie rule and on the last bits of its sums (another CPU took 46).
FIRST_TIE = {"sqeuclidean": 8, "euclidean": 10}


def craig_problem(metric):
    return craig_similarity(batch_means(gradients(), 10), metric)  # 60 batch gradients


@pytest.mark.parametrize("metric", ["sqeuclidean", "euclidean"])
def test_facility_location_equals_apricot_and_brute_force(metric):
    """The same picks and gains as apricot's lazy greedy (what CORDS calls) and as a brute-force naive greedy up to
    the first near-tie (:data:`FIRST_TIE`); after it, every pick is still a greedy pick with the oracle's gain
    (tests/oracles.py: near-ties may be broken either way on another CPU, a wrong pick fails)."""
    apricot = pytest.importorskip("apricot")
    S = craig_problem(metric)
    gain = facility_location_gains(S.numpy())
    order, gains = facility_location(S, 10)
    ref = apricot.FacilityLocationSelection(10, metric="precomputed", optimizer="lazy").fit(S.numpy())
    compared = check_greedy(order, gains, gain, ref_order=ref.ranking, ref_gains=ref.gains, rtol=1e-9)
    assert compared == FIRST_TIE[metric]  # index for index up to the structural tie, not less
    order30, gains30 = facility_location(S, 30)
    bf_order, bf_gains = brute_force_facility_location(S.numpy(), 30)
    assert check_greedy(order30, gains30, gain, ref_order=bf_order, ref_gains=bf_gains, rtol=1e-12) == FIRST_TIE[metric]
    assert order30[:10].tolist() == order.tolist()  # a prefix of the longer run: the same greedy
    objective = S.numpy()[:, order30.numpy()].max(axis=1).sum()  # F(S) = sum_i max_{j in S} s_ij
    assert float(gains30.sum()) == pytest.approx(objective, rel=1e-12)


def test_the_greedy_oracle_fails_on_a_wrong_selection_and_not_on_a_tie():
    """tests/oracles.py keeps its power: perturbed selections fail; the other side of the near-tie passes."""
    S = craig_problem("sqeuclidean").numpy()
    gain = facility_location_gains(S)
    order, gains = brute_force_facility_location(S, 20)
    tie = FIRST_TIE["sqeuclidean"]
    assert check_greedy(order, gains, gain, ref_order=order, ref_gains=gains) == tie
    swapped = order[:2] + [order[3], order[2]] + order[4:]  # two picks of separated gains, swapped
    with pytest.raises(AssertionError, match="pick 2: .* not a greedy pick"):
        check_greedy(swapped, None, gain)
    worse = order[:5] + [int(np.argsort(gain(order[:5]))[len(S) // 2])] + order[6:]  # a middling candidate at 5
    with pytest.raises(AssertionError, match="pick 5"):
        check_greedy(worse, None, gain)
    with pytest.raises(AssertionError, match="pick 3: reported gain"):
        check_greedy(order, [g * (1 + 1e-6) if t == 3 else g for t, g in enumerate(gains)], gain)
    with pytest.raises(AssertionError, match="pick 2: .* the reference took"):
        check_greedy(order, gains, gain, ref_order=swapped)  # a reference that disagrees before any tie
    with pytest.raises(AssertionError, match="already taken"):
        check_greedy(order[:6] + [order[1]], None, gain)
    # the other candidate of the tie, then greedy from there: a different selection, and a correct one
    other = order[tie]
    alternative = [j for j in np.argsort(-gain(order[:tie]), kind="stable") if j not in order[:tie] and j != other][0]
    flipped, flipped_gains = brute_force_facility_location(S, 20, forced={tie: int(alternative)})
    assert flipped != order and flipped_gains[tie] == pytest.approx(gains[tie], rel=1e-12)
    assert check_greedy(flipped, flipped_gains, gain, ref_order=order, ref_gains=gains) == tie


def test_craig_per_batch_weights_are_voronoi_cell_sizes():
    G = gradients()
    sel = Craig(100, batch_size=10).fit(G)  # ceil(100 / 10) = 10 of 60 batches
    assert sel.batches_.shape == (10,) and len(set(sel.batches_.tolist())) == 10
    M = batch_means(G, 10).numpy()
    dist = ((M[:, None] - M[None]) ** 2).sum(-1)
    nearest = np.argmin(dist[:, sel.batches_.numpy()], axis=1)  # most similar = least distant
    np.testing.assert_array_equal(sel.batch_weights_.numpy(), np.bincount(nearest, minlength=10))
    assert float(sel.batch_weights_.sum()) == 60 and (sel.batch_weights_ >= 1).all()
    b0, w0 = int(sel.batches_[0]), float(sel.batch_weights_[0])
    np.testing.assert_array_equal(sel.indices_[:10], np.arange(b0 * 10, b0 * 10 + 10))
    assert sel.weights_[:10].tolist() == [w0] * 10 and sel.indices_.shape == (100,)
    assert sel.objective_ == pytest.approx((dist.max() - dist)[:, sel.batches_.numpy()].max(1).sum(), rel=1e-9)


def test_craig_batch_size_one_is_per_sample_and_covers_clusters():
    G = gradients(120, 6)
    sel = Craig(6, batch_size=1).fit(G)
    assert sel.indices_.tolist() == sel.batches_.tolist() and float(sel.weights_.sum()) == 120


# --------------------------------------------------------------------------------------------------
# GradMatch
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("lam", [0.0, 0.5, 3.0])
def test_nonnegative_ridge_equals_scipy_nnls_on_augmented_system(lam):
    rng = np.random.default_rng(1)
    for m, d in [(5, 20), (12, 8), (30, 40)]:
        A = rng.normal(size=(m, d))
        b = rng.normal(size=d) + A[:3].sum(0)
        w = nonnegative_ridge(torch.as_tensor(A), torch.as_tensor(b), lam).numpy()
        M = np.vstack([A.T, np.sqrt(lam) * np.eye(m)])
        ref, _ = nnls(M, np.concatenate([b, np.zeros(m)]))
        np.testing.assert_allclose(w, ref, rtol=1e-7, atol=1e-9)
        assert (w >= 0).all() and (w == 0).any()  # the constraint is active somewhere


@pytest.mark.parametrize("lam", [0.0, 0.5])
def test_gradmatch_weights_are_nnls_on_the_chosen_support(lam):
    G = gradients(600, 12)
    sel = GradMatch(120, batch_size=10, lam=lam).fit(G)
    M = batch_means(G, 10).numpy()
    b = M.sum(0)
    S = sel.batches_[: sel.n_omp_].numpy()
    A = M[S]
    ref, _ = nnls(np.vstack([A.T, np.sqrt(lam) * np.eye(len(S))]), np.concatenate([b, np.zeros(len(S))]))
    np.testing.assert_allclose(sel.batch_weights_[: sel.n_omp_].numpy(), ref, rtol=1e-4, atol=1e-6)
    assert (sel.batch_weights_[: sel.n_omp_] > 0).all()
    assert sel.residual_ == pytest.approx(np.linalg.norm(b - A.T @ ref) / np.linalg.norm(b), rel=1e-4)
    assert sel.indices_.shape == (120,) and len(set(sel.indices_.tolist())) == 120


def test_omp_recovers_a_sparse_nonnegative_combination():
    gen = torch.Generator().manual_seed(0)
    A = torch.randn(50, 200, generator=gen, dtype=torch.float64)
    b = 2.0 * A[7] + 0.5 * A[31] + 1.5 * A[40]
    support, w = omp_nonnegative(A, b, 10, lam=0.0, tol=1e-10)
    assert sorted(support.tolist()) == [7, 31, 40]
    np.testing.assert_allclose(w[np.argsort(support.numpy())].numpy(), [2.0, 0.5, 1.5], rtol=1e-8)


def test_gradmatch_fills_up_at_random_when_omp_stops_early():
    G = gradients(600, 12)
    sel = GradMatch(300, batch_size=10, lam=0.0, tol=0.5, seed=1).fit(G)  # a loose tol stops OMP early
    assert 0 < sel.n_omp_ < 30 and sel.residual_ <= 0.5
    assert sel.batches_.shape == (30,) and len(set(sel.batches_.tolist())) == 30
    assert sel.batch_weights_[sel.n_omp_ :].tolist() == [1.0] * (30 - sel.n_omp_)
    again = GradMatch(300, batch_size=10, lam=0.0, tol=0.5, seed=1).fit(G)
    assert again.batches_.tolist() == sel.batches_.tolist()
    other = GradMatch(300, batch_size=10, lam=0.0, tol=0.5, seed=2).fit(G)
    assert other.batches_.tolist() != sel.batches_.tolist()


def test_gradmatch_custom_target():
    G = gradients(200, 5)
    M = batch_means(G, 10)
    target = 3.0 * M[4] + 0.5 * M[9]
    sel = GradMatch(100, batch_size=10, lam=0.0, tol=1e-9).fit(G, target=target)  # 10 of 20 batches, d = 5
    assert sel.residual_ < 1e-6  # an exact non-negative combination exists
    A = M[sel.batches_[: sel.n_omp_]]
    fit = A.T @ sel.batch_weights_[: sel.n_omp_].double()
    torch.testing.assert_close(fit, target, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="target has 4 entries"):
        GradMatch(10, batch_size=10).fit(G, target=torch.zeros(4))


# --------------------------------------------------------------------------------------------------
# Random, bad input
# --------------------------------------------------------------------------------------------------


def test_random_coreset_seeded_and_redrawn():
    a = RandomCoreset(30, seed=5).fit(100).indices_
    assert len(set(a.tolist())) == 30 and int(a.max()) < 100 and a.dtype == np.int64
    assert a.tolist() == RandomCoreset(30, seed=5).fit(torch.zeros(100, 3)).indices_.tolist()
    assert a.tolist() != RandomCoreset(30, seed=5).fit(100, draw=1).indices_.tolist()
    assert a.tolist() != RandomCoreset(30, seed=6).fit(100).indices_.tolist()
    assert RandomCoreset(30).fit(100).weights_.tolist() == [1.0] * 30


@pytest.mark.parametrize(
    "make",
    [lambda k: Craig(k, batch_size=10), lambda k: GradMatch(k, batch_size=10), lambda k: RandomCoreset(k)],
    ids=["craig", "gradmatch", "random"],
)
def test_bad_budget(make):
    G = gradients(100, 4)
    with pytest.raises(ValueError, match="k must be positive"):
        make(0)
    with pytest.raises(ValueError, match="k = 101 exceeds the number of unlabeled samples"):
        make(101).fit(G)


@pytest.mark.parametrize("cls", [Craig, GradMatch])
def test_bad_gradients_and_batch_size(cls):
    G = gradients(100, 4)
    with pytest.raises(ValueError, match="batch_size must be positive"):
        cls(10, batch_size=0)
    G[5, 1] = float("nan")
    with pytest.raises(ValueError, match="NaN or infinite"):
        cls(10, batch_size=10).fit(G)
    with pytest.raises(ValueError, match="2-D"):
        cls(10, batch_size=10).fit(G[0])


def test_bad_options():
    with pytest.raises(ValueError, match="metric must be one of"):
        Craig(10, metric="cosine")
    with pytest.raises(ValueError, match="lam must be non-negative"):
        GradMatch(10, lam=-0.1)
    with pytest.raises(ValueError, match="square"):
        facility_location(torch.ones(3, 4), 2)
    with pytest.raises(ValueError, match="non-negative"):
        facility_location(-torch.ones(3, 3), 2)
