"""sslkit.select baselines (paper B Table 1 / Fig. 3): Random, Stratified, k-Means, USL, ActiveFT."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from sslkit.data import gmm10
from sslkit.select import (
    ActiveFTSelector,
    KMeansSelector,
    RandomSelector,
    StratifiedSelector,
    USLSelector,
    kmeans,
)

pytestmark = pytest.mark.usefixtures("one_thread")  # conftest's: the selectors' fits on one torch thread


@pytest.fixture(scope="module")
def data():
    X, comp = gmm10(600, seed=0)
    return X, comp


SELECTORS = [
    lambda m, s: RandomSelector(m, seed=s),
    lambda m, s: StratifiedSelector(m, seed=s),
    lambda m, s: KMeansSelector(m, seed=s, device="cpu"),
    lambda m, s: USLSelector(m, knn=20, kmeans_iter=50, seed=s, device="cpu"),
    lambda m, s: ActiveFTSelector(m, n_iter=30, seed=s, device="cpu"),
]


@pytest.mark.parametrize("make", SELECTORS, ids=["random", "stratified", "kmeans", "usl", "activeft"])
def test_size_uniqueness_determinism(data, make):
    X, y = data
    a = make(25, 0).fit(X, y).indices_
    assert a.dtype == np.int64 and a.shape == (25,)
    assert len(np.unique(a)) == 25 and a.min() >= 0 and a.max() < len(X)
    np.testing.assert_array_equal(a, make(25, 0).fit(torch.as_tensor(X), y).indices_)


def test_random_is_numpy_choice(data):
    X, _ = data
    sel = RandomSelector(40, seed=7).fit(X).indices_
    np.testing.assert_array_equal(sel, np.random.default_rng(7).choice(len(X), 40, replace=False))
    assert not np.array_equal(sel, RandomSelector(40, seed=8).fit(X).indices_)
    assert len(RandomSelector(len(X)).fit(X).indices_) == len(X)


def test_stratified_counts(data):
    X, y = data
    sel = StratifiedSelector(30, seed=1).fit(X, y)
    np.testing.assert_array_equal(np.bincount(y[sel.indices_], minlength=10), np.full(10, 3))
    # m not divisible by C: m // C each, m % C classes get one more
    sel = StratifiedSelector(34, seed=1).fit(X, y)
    counts = np.bincount(y[sel.indices_], minlength=10)
    assert counts.sum() == 34 and set(counts) == {3, 4} and (counts == 4).sum() == 4
    np.testing.assert_array_equal(counts, sel.quota_)


def test_stratified_errors(data):
    X, y = data
    with pytest.raises(ValueError, match="y is required"):
        StratifiedSelector(10).fit(X)
    with pytest.raises(ValueError, match="y has 599 labels but X has 600 rows"):
        StratifiedSelector(10).fit(X, y[:-1])
    y_small = np.zeros(len(X), dtype=int)
    y_small[:2] = 1
    with pytest.raises(ValueError, match="has 2 samples but its quota is 5"):
        StratifiedSelector(10).fit(X, y_small)


def test_stratified_refuses_float_nan_and_negative_labels(data):
    # float labels used to reach the selector: a NaN "class" has no members (nan != nan) and 1.0 / 1.5
    # would be two classes. Each must be a clear error.
    X, y = data
    for bad in (
        y.astype(float),
        np.where(np.arange(len(y)) < 5, np.nan, y),
        y + 0.5,
        torch.tensor(y, dtype=torch.float32),
    ):
        with pytest.raises(TypeError, match="integer class labels"):
            StratifiedSelector(10).fit(X, bad)
    marked = y.copy()
    marked[:50] = -1
    with pytest.raises(ValueError, match="negative labels"):
        StratifiedSelector(10).fit(X, marked)


def test_kmeans_nearest_to_centroid(data):
    X, _ = data
    sel = KMeansSelector(12, seed=3, device="cpu").fit(X)
    C = sel.centroids_
    d2 = ((C[:, None, :] - X[None]) ** 2).sum(-1)
    # each centroid's pick is its nearest sample (no collisions on well-separated clusters)
    np.testing.assert_array_equal(sel.indices_, d2.argmin(1))
    # Lloyd fixed point: centroids are the means of their clusters, labels the nearest centroid
    np.testing.assert_array_equal(sel.labels_, ((X[:, None] - C[None]) ** 2).sum(-1).argmin(1))
    for c in range(12):
        np.testing.assert_allclose(C[c], X[sel.labels_ == c].mean(0), rtol=1e-10, atol=1e-10)


def test_kmeans_shared_nearest_sample_is_not_repeated():
    # 3 points, k = 3 but duplicates force two centroids onto one location
    X = np.array([[0.0, 0.0], [0.0, 0.0], [10.0, 0.0]])
    sel = KMeansSelector(3, device="cpu").fit(X)
    np.testing.assert_array_equal(np.sort(sel.indices_), [0, 1, 2])


def test_kmeans_empty_cluster_is_reseeded():
    X = np.array([[0.0], [0.1], [0.2], [10.0], [10.1], [50.0]])
    C, labels, _ = kmeans(X, 3, init="random", seed=0, device="cpu")
    assert len(np.unique(labels.numpy())) == 3


def test_usl_one_pick_per_cluster(data):
    X, _ = data
    sel = USLSelector(10, knn=20, kmeans_iter=50, device="cpu").fit(X)
    assert sorted(sel.labels_[sel.indices_]) == list(range(10))
    # with w = 0 the pick of each cluster is its densest member
    sel0 = USLSelector(10, knn=20, kmeans_iter=50, weight=0.0, device="cpu").fit(X)
    for c, i in enumerate(sel0.indices_):
        members = np.flatnonzero(sel0.labels_ == c)
        assert i == members[np.argmax(sel0.density_[members])]


@pytest.mark.parametrize("cls", [RandomSelector, KMeansSelector, USLSelector, ActiveFTSelector])
def test_bad_input(cls, data):
    X, _ = data
    with pytest.raises(ValueError, match="m must be positive"):
        cls(0)
    with pytest.raises(TypeError, match="m must be an integer"):
        cls(1.5)
    with pytest.raises(ValueError, match="exceeds the number of samples"):
        cls(601).fit(X)
    bad = X.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN or infinite"):
        cls(5).fit(bad)
    with pytest.raises(ValueError, match="must be 2-D"):
        cls(5).fit(X[:, 0])
    with pytest.raises(TypeError, match="seed must be an integer"):
        cls(5, seed=1.5)
