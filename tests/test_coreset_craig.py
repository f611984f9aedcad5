"""Paper C's per-batch CRAIG baseline (App. D, sslkit.coreset.craig), and the budget / gradient / option checks of
the three baselines (CRAIG, GradMatch: test_coreset_gradmatch.py, Random: test_coreset_uniform.py).

References: apricot's FacilityLocationSelection (the library CORDS' CRAIG calls) and a brute-force
greedy for the facility location.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from oracles import check_greedy

from sslkit.coreset import Craig, GradMatch, RandomCoreset, batch_means, craig_similarity, facility_location

pytestmark = pytest.mark.usefixtures("one_thread")  # conftest.py


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
# Bad input (the three baselines)
# --------------------------------------------------------------------------------------------------


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
