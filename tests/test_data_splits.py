"""Tests for sslkit.data.splits: exact counts, disjointness, determinism, the papers' settings, errors."""

import os

import numpy as np
import pytest

from sslkit.data import (
    IMBALANCE_PRESETS,
    OOD_PRESETS,
    PAPER_A_BINARY_SETTINGS,
    PAPER_A_N_UNLABELED,
    PAPER_A_N_VAL,
    PAPER_A_REGIMES,
    PAPER_C_IMBALANCE_RATIOS,
    PAPER_C_OOD_RATIOS,
    OODSplit,
    Split,
    binary_task,
    imbalanced_split,
    make_split,
    ood_split,
    paper_a_regime,
)
from sslkit.data.dataset import Dataset

CLASS_SIZES = [100, 80, 60, 40, 20]
# Real MNIST training-set class sizes (digits 0..9), so the OOD preset is tested at its true scale.
MNIST_SIZES = [5923, 6742, 5958, 6131, 5842, 5421, 5918, 6265, 5851, 5949]


def labels(sizes, seed=123):
    y = np.repeat(np.arange(len(sizes)), sizes)
    return np.random.default_rng(seed).permutation(y)


@pytest.fixture
def y():
    return labels(CLASS_SIZES)


def per_class(y, idx, k):
    return np.bincount(y[idx], minlength=k).tolist()


def assert_disjoint(split, n_total=None):
    parts = [split.labeled, split.unlabeled, split.val, split.test]
    allidx = np.concatenate(parts)
    assert np.unique(allidx).size == allidx.size
    for part in parts:
        assert part.dtype == np.int64
    if n_total is not None:
        assert allidx.min() >= 0 and allidx.max() < n_total


# ------------------------------------------------------------------------------------------ make_split


def test_exact_labeled_counts_int_sequence_dict(y):
    s = make_split(y, 7, seed=0)
    assert per_class(y, s.labeled, 5) == [7] * 5
    s = make_split(y, [1, 2, 3, 4, 5], seed=0)
    assert per_class(y, s.labeled, 5) == [1, 2, 3, 4, 5]
    s = make_split(y, {4: 20, 0: 3}, seed=0)  # all of class 4; classes left out get 0
    assert per_class(y, s.labeled, 5) == [3, 0, 0, 0, 20]


def test_unlabeled_default_is_everything_left_and_parts_are_disjoint(y):
    s = make_split(y, 5, n_val=30, n_test=40, seed=1)
    assert isinstance(s, Split)
    assert_disjoint(s, y.size)
    assert s.sizes() == {"labeled": 25, "unlabeled": 300 - 25 - 30 - 40, "val": 30, "test": 40}
    assert np.array_equal(np.sort(np.concatenate([s.labeled, s.unlabeled, s.val, s.test])), np.arange(300))


def test_given_sizes_are_exact(y):
    s = make_split(y, 2, n_unlabeled=123, n_val=17, n_test=9, seed=3)
    assert s.sizes() == {"labeled": 10, "unlabeled": 123, "val": 17, "test": 9}
    assert_disjoint(s, y.size)


def test_val_per_class_is_exact_and_stratified(y):
    s = make_split(y, 3, val_per_class=[10, 9, 8, 7, 6], seed=0)
    assert per_class(y, s.val, 5) == [10, 9, 8, 7, 6]
    assert_disjoint(s)


def test_deterministic_under_seed_and_different_across_seeds(y):
    a = make_split(y, 4, n_unlabeled=50, n_val=20, seed=7)
    b = make_split(y, 4, n_unlabeled=50, n_val=20, seed=7)
    c = make_split(y, 4, n_unlabeled=50, n_val=20, seed=8)
    for name in ("labeled", "unlabeled", "val", "test"):
        assert np.array_equal(getattr(a, name), getattr(b, name))
    assert not np.array_equal(a.labeled, c.labeled)
    assert not np.array_equal(a.unlabeled, c.unlabeled)


def test_draw_order_test_and_val_do_not_depend_on_labeled_counts(y):
    # Documented order: test, then val, then labeled -> val/test are sampled independently of labels.
    a = make_split(y, 1, n_val=25, n_test=10, seed=5)
    b = make_split(y, [9, 8, 7, 6, 5], n_val=25, n_test=10, seed=5)
    assert np.array_equal(a.test, b.test) and np.array_equal(a.val, b.val)


def test_classes_restricts_every_part(y):
    s = make_split(y, 5, n_val=10, n_test=10, classes=[1, 3], seed=0)
    for part in (s.labeled, s.unlabeled, s.val, s.test):
        assert set(np.unique(y[part]).tolist()) <= {1, 3}
    assert per_class(y, s.labeled, 5) == [0, 5, 0, 5, 0]
    assert s.sizes()["unlabeled"] == 80 + 40 - 10 - 10 - 10  # classes 1, 3 minus val, test, labeled


def test_labeled_indices_used_exactly_and_unlabeled_built_around_them(y):
    given = [250, 3, 17, 99, 42, 120]
    s = make_split(y, labeled_indices=given, n_val=20, seed=0)
    assert s.labeled.tolist() == given  # exactly, in the given order
    assert_disjoint(s, y.size)
    assert np.intersect1d(s.unlabeled, given).size == 0
    assert np.unique(s.unlabeled).size == s.unlabeled.size
    assert s.unlabeled.size == y.size - len(given) - 20
    t = make_split(y, labeled_indices=np.array(given), n_unlabeled=100, n_test=5, seed=0)
    assert t.unlabeled.size == 100 and np.intersect1d(t.unlabeled, given).size == 0
    assert np.intersect1d(t.test, given).size == 0


def test_split_refuses_overlapping_parts():
    with pytest.raises(ValueError, match="disjoint"):
        Split(labeled=[1, 2], unlabeled=[2, 3], val=[], test=[])


# ------------------------------------------------------------------------------------------ errors


def test_count_larger_than_class(y):
    with pytest.raises(ValueError, match=r"class 4 has only 20 examples available .* 25 were requested"):
        make_split(y, 25, seed=0)
    # what is left after val/test counts
    with pytest.raises(ValueError, match=r"class 4 has only \d+ examples available after drawing"):
        make_split(y, {4: 20}, n_val=100, seed=0)


def test_class_with_zero_available(y):
    with pytest.raises(ValueError, match=r"class 9 has 0 examples available .* 2 were requested"):
        make_split(y, 2, classes=[0, 9], seed=0)
    s = make_split(y, {0: 2}, classes=[0, 9], seed=0)  # count 0 for an empty class is fine
    assert per_class(y, s.labeled, 5) == [2, 0, 0, 0, 0]


def test_negative_counts(y):
    with pytest.raises(ValueError, match=r"labeled_per_class must be non-negative, got -1"):
        make_split(y, -1, seed=0)
    with pytest.raises(ValueError, match=r"labeled_per_class\[class 2\] must be non-negative, got -3"):
        make_split(y, [1, 1, -3, 1, 1], seed=0)
    with pytest.raises(ValueError, match="n_val must be non-negative"):
        make_split(y, 1, n_val=-5, seed=0)
    with pytest.raises(ValueError, match="n_unlabeled must be non-negative"):
        make_split(y, 1, n_unlabeled=-5, seed=0)


def test_wrong_sequence_length(y):
    with pytest.raises(ValueError, match=r"3 entries but 5 classes"):
        make_split(y, [1, 2, 3], seed=0)
    with pytest.raises(ValueError, match=r"keys \[7\] that are not among the classes"):
        make_split(y, {7: 1}, seed=0)


def test_unlabeled_larger_than_what_is_left(y):
    with pytest.raises(ValueError, match=r"n_unlabeled=276 is larger than what is left: only 275"):
        make_split(y, 5, n_unlabeled=276, seed=0)
    with pytest.raises(ValueError, match=r"n_test=301 is larger than what is left: only 300"):
        make_split(y, 0, n_test=301, seed=0)


def test_bad_labeled_indices(y):
    with pytest.raises(ValueError, match=r"out of range \[0, 300\), e\.g\. 300"):
        make_split(y, labeled_indices=[0, 300], seed=0)
    with pytest.raises(ValueError, match=r"out of range"):
        make_split(y, labeled_indices=[-1, 5], seed=0)
    with pytest.raises(ValueError, match=r"duplicated index\(es\), e\.g\. 5"):
        make_split(y, labeled_indices=[5, 6, 5], seed=0)
    outside = int(np.flatnonzero(y == 0)[0])
    with pytest.raises(ValueError, match="not among the classes used"):
        make_split(y, labeled_indices=[outside], classes=[1, 2], seed=0)
    with pytest.raises(TypeError, match="labeled_indices must be a 1-D array of integer"):
        make_split(y, labeled_indices=[0.5, 1.0], seed=0)


def test_argument_combinations_and_seed(y):
    with pytest.raises(ValueError, match="exactly one of labeled_per_class and labeled_indices"):
        make_split(y, 2, labeled_indices=[1, 2], seed=0)
    with pytest.raises(ValueError, match="exactly one of labeled_per_class and labeled_indices"):
        make_split(y, seed=0)
    with pytest.raises(ValueError, match="either n_val"):
        make_split(y, 2, n_val=3, val_per_class=1, seed=0)
    for bad in (1.5, "0", None, True):
        with pytest.raises(TypeError, match="seed must be an integer"):
            make_split(y, 2, seed=bad)
    with pytest.raises(TypeError, match="labeled_per_class"):
        make_split(y, 2.0, seed=0)
    with pytest.raises(TypeError, match="integer class labels"):
        make_split(y.astype(float), 2, seed=0)


def test_unlabeled_marker_and_empty_labels_are_refused(y):
    # -1 (a common "unlabeled" marker) used to be drawn as a class of its own, and an empty y gave an
    # empty split; both must be refused with a clear message.
    marked = y.copy()
    marked[:30] = -1
    with pytest.raises(ValueError, match="negative labels .*30 of them"):
        make_split(marked, 2, seed=0)
    with pytest.raises(ValueError, match="negative labels"):
        ood_split(marked, (0, 1), (2, 3), 2, 10, 0.5, seed=0)
    with pytest.raises(ValueError, match="negative labels"):
        imbalanced_split(marked, 0.5, n_labeled=10, n_unlabeled=10, imbalanced_classes=[0], seed=0)
    for empty in ([], np.zeros(0, dtype=np.int64), np.zeros(0)):
        with pytest.raises(ValueError, match="y is empty"):
            make_split(empty, labeled_indices=[], seed=0)
    for bad in (np.array([0.0, 1.0, 1.0]), np.array([0, np.nan, 1])):
        with pytest.raises(TypeError, match="integer class labels"):
            make_split(bad, 1, seed=0)


# ------------------------------------------------------------------------------------------ paper A


def test_paper_a_regimes_sum_to_their_stated_totals():
    for k, regimes in PAPER_A_REGIMES.items():
        for regime, by_total in regimes.items():
            for total, counts in by_total.items():
                assert len(counts) == k
                assert sum(counts) == total, (k, regime, total)
                if regime != "balanced":
                    assert counts == sorted(counts, reverse=True)
    assert sorted(PAPER_A_REGIMES[7]["balanced"]) == [70, 140, 350]
    assert sorted(PAPER_A_REGIMES[10]["balanced"]) == [200, 500, 1500]
    assert paper_a_regime(10, "severe", 500) == [200, 120, 72, 44, 26, 16, 10, 6, 4, 2]
    assert paper_a_regime(7, "mild", 350) == [81, 65, 57, 49, 41, 33, 24]
    assert paper_a_regime(7, "balanced", 140) == [20] * 7
    # paper A App. B's skewed prior is the severe 140 regime divided by 140
    assert np.allclose(
        np.array(paper_a_regime(7, "severe", 140)) / 140, [0.41, 0.24, 0.15, 0.09, 0.05, 0.04, 0.02], atol=0.006
    )


def test_paper_a_regime_errors_and_copy():
    with pytest.raises(ValueError, match="num_classes must be one of"):
        paper_a_regime(5, "mild", 140)
    with pytest.raises(ValueError, match="regime must be one of"):
        paper_a_regime(7, "extreme", 140)
    with pytest.raises(ValueError, match="totals are \\[140, 350\\]"):
        paper_a_regime(7, "severe", 70)
    counts = paper_a_regime(10, "mild", 500)
    counts[0] = 0
    assert PAPER_A_REGIMES[10]["mild"][500][0] == 102


def test_paper_a_regime_feeds_make_split():
    y = labels(MNIST_SIZES)
    s = make_split(
        y,
        paper_a_regime(10, "mild", 1500),
        n_unlabeled=PAPER_A_N_UNLABELED["multiclass"],
        n_val=PAPER_A_N_VAL["multiclass_image"],
        seed=0,
    )
    assert per_class(y, s.labeled, 10) == PAPER_A_REGIMES[10]["mild"][1500]
    assert s.sizes() == {"labeled": 1500, "unlabeled": 5000, "val": 200, "test": 0}


def test_paper_a_binary_constants():
    assert PAPER_A_BINARY_SETTINGS == ((15, 45), (30, 30), (50, 150), (100, 100))
    assert PAPER_A_N_UNLABELED == {"binary_tabular": 300, "binary_image": 5000, "multiclass": 5000}
    assert PAPER_A_N_VAL == {"default": 60, "multiclass_image": 200}


def fake_dataset(with_test=True):
    y = labels([30] * 10)
    X = (y[:, None, None] * np.ones((1, 2, 2))).astype(np.uint8)  # pixel value = label
    y_test = labels([5] * 10, seed=1)
    X_test = (y_test[:, None, None] * np.ones((1, 2, 2))).astype(np.uint8) if with_test else None
    return Dataset(
        name="toy",
        X=X,
        y=y,
        X_test=X_test,
        y_test=y_test if with_test else None,
        classes=tuple(f"c{i}" for i in range(10)),
        source="test",
        notes="",
    )


def test_binary_task_labels_and_names():
    ds = fake_dataset()
    b = binary_task(ds, 4, 9)
    assert b.classes == ("c4", "c9") and b.name == "toy_c4vc9"
    assert b.y.tolist().count(0) == 30 and b.y.tolist().count(1) == 30
    # positive -> label 0 (paper A class 1), negative -> label 1; rows keep their order
    assert np.array_equal(b.X[:, 0, 0], np.where(b.y == 0, 4, 9))
    orig = ds.y[(ds.y == 4) | (ds.y == 9)]
    assert np.array_equal(b.y, (orig == 9).astype(np.int64))
    assert np.array_equal(b.X_test[:, 0, 0], np.where(b.y_test == 0, 4, 9)) and b.y_test.size == 10
    assert "label 0" in b.notes
    c = binary_task(ds, "c3", "c5")  # by name
    assert c.classes == ("c3", "c5") and np.array_equal(c.X[:, 0, 0], np.where(c.y == 0, 3, 5))
    d = binary_task(fake_dataset(with_test=False), 9, 4)
    assert d.X_test is None and d.y_test is None and d.classes == ("c9", "c4")


def test_binary_task_errors():
    ds = fake_dataset()
    with pytest.raises(ValueError, match="must be different classes"):
        binary_task(ds, 3, 3)
    with pytest.raises(ValueError, match="'dog' is not a class of toy"):
        binary_task(ds, "dog", 3)
    with pytest.raises(ValueError, match="negative=10 is out of range"):
        binary_task(ds, 3, 10)


# ------------------------------------------------------------------------------------------ paper C: OOD


def test_ood_split_exact_ratio_and_id_only_labels():
    y = labels([300] * 10)
    ids, oods = (2, 3, 4, 5, 6, 7), (0, 1, 8, 9)
    s = ood_split(y, ids, oods, 5, 400, 0.25, n_val=60, seed=0)
    assert isinstance(s, OODSplit) and isinstance(s, Split)
    assert_disjoint(s, y.size)
    assert per_class(y, s.labeled, 10) == [0, 0, 5, 5, 5, 5, 5, 5, 0, 0]
    assert set(np.unique(y[s.val]).tolist()) <= set(ids) and s.val.size == 60
    assert s.unlabeled.size == 400
    n_ood = int(np.isin(y[s.unlabeled], oods).sum())
    assert n_ood == 100 and s.unlabeled_is_ood.sum() == 100
    assert np.array_equal(s.unlabeled_is_ood, np.isin(y[s.unlabeled], oods))
    assert n_ood / (n_ood + (400 - n_ood)) == 0.25
    assert s.label_map == {2: 0, 3: 1, 4: 2, 5: 3, 6: 4, 7: 5}
    assert s.relabel(np.arange(10)).tolist() == [-1, -1, 0, 1, 2, 3, 4, 5, -1, -1]
    assert s.test.size == 0
    for r, expected in ((0.0, 0), (0.5, 200), (0.75, 300)):
        t = ood_split(y, ids, oods, 5, 400, r, seed=1)
        assert t.unlabeled_is_ood.sum() == expected
    assert ood_split(y, ids, oods, 5, 5, 0.5, seed=0).unlabeled_is_ood.sum() == 3  # round half up


def test_ood_split_deterministic():
    y = labels([300] * 10)
    a = ood_split(y, (0, 1, 2), (3, 4), 4, 100, 0.5, n_val=10, seed=3)
    b = ood_split(y, (0, 1, 2), (3, 4), 4, 100, 0.5, n_val=10, seed=3)
    c = ood_split(y, (0, 1, 2), (3, 4), 4, 100, 0.5, n_val=10, seed=4)
    assert np.array_equal(a.unlabeled, b.unlabeled) and np.array_equal(a.labeled, b.labeled)
    assert not np.array_equal(a.unlabeled, c.unlabeled)


def test_ood_presets_at_paper_scale():
    assert OOD_PRESETS["cifar10"]["id_classes"] == (2, 3, 4, 5, 6, 7)  # bird cat deer dog frog horse
    assert OOD_PRESETS["cifar10"]["ood_classes"] == (0, 1, 8, 9)  # airplane automobile ship truck
    assert OOD_PRESETS["mnist"]["id_classes"] == (0, 1, 2, 3, 4, 5)  # paper's "classes 1-6"
    assert PAPER_C_OOD_RATIOS == (0.25, 0.5, 0.75)
    y = labels([5000] * 10)
    s = ood_split(y, **OOD_PRESETS["cifar10"], ood_ratio=0.5, seed=0)
    assert s.sizes() == {"labeled": 2400, "unlabeled": 20000, "val": 5000, "test": 0}
    assert per_class(y, s.labeled, 10) == [0, 0] + [400] * 6 + [0, 0]
    assert s.unlabeled_is_ood.sum() == 10000
    m = labels(MNIST_SIZES)
    t = ood_split(m, **OOD_PRESETS["mnist"], ood_ratio=0.25, seed=0)
    assert t.sizes() == {"labeled": 60, "unlabeled": 30000, "val": 10000, "test": 0}
    assert t.unlabeled_is_ood.sum() == 7500
    # ratio 0 would need 30000 + 10000 + 60 ID examples; MNIST digits 0-5 have only 36017
    with pytest.raises(
        ValueError,
        match=r"ID part of the unlabeled set \(30000 = n_unlabeled - 0 OOD\) "
        r"is larger than what is left",
    ):
        ood_split(m, **OOD_PRESETS["mnist"], ood_ratio=0.0, seed=0)


def test_ood_split_errors():
    y = labels([50] * 10)
    ids, oods = (0, 1, 2, 3, 4, 5), (6, 7, 8, 9)
    for bad in (1.0, -0.1, 1.5):
        with pytest.raises(ValueError, match=r"ood_ratio must lie in \[0, 1\)"):
            ood_split(y, ids, oods, 1, 10, bad, seed=0)
    with pytest.raises(TypeError, match="ood_ratio must be a real number"):
        ood_split(y, ids, oods, 1, 10, "0.5", seed=0)
    with pytest.raises(ValueError, match=r"overlap in \[5\]"):
        ood_split(y, ids, (5, 6), 1, 10, 0.5, seed=0)
    with pytest.raises(
        ValueError,
        match=r"OOD part of the unlabeled set \(225 = round\(ood_ratio \* "
        r"n_unlabeled\) = round\(0.75 \* 300\)\) is larger than "
        r"what is left: only 200",
    ):
        ood_split(y, ids, oods, 1, 300, 0.75, seed=0)
    with pytest.raises(ValueError, match=r"class 0 has only 50 examples available .* 51 were requested"):
        ood_split(y, ids, oods, 51, 10, 0.5, seed=0)
    with pytest.raises(TypeError, match="seed must be an integer"):
        ood_split(y, ids, oods, 1, 10, 0.5, seed=0.0)


# ----------------------------------------------------------------------------------- paper C: imbalance


def test_imbalanced_split_exact_ratio():
    y = labels([3000] * 10)
    s = imbalanced_split(y, 0.5, n_labeled=2400, n_unlabeled=6000, n_val=500, seed=0)
    lab, unl = per_class(y, s.labeled, 10), per_class(y, s.unlabeled, 10)
    assert lab == [160] * 5 + [320] * 5
    assert unl == [400] * 5 + [800] * 5
    assert sum(lab[:5]) / sum(lab[5:]) == 0.5 and sum(unl[:5]) / sum(unl[5:]) == 0.5
    assert s.val.size == 500 and s.test.size == 0
    assert_disjoint(s, y.size)


def test_imbalanced_split_paper_preset_and_rounding():
    assert IMBALANCE_PRESETS["cifar10"] == dict(
        imbalanced_classes=(0, 1, 2, 3, 4), n_labeled=2400, n_unlabeled=20000, n_val=5000
    )
    assert PAPER_C_IMBALANCE_RATIOS == (0.1, 0.3, 0.5)
    y = labels([5000] * 10)
    for r in PAPER_C_IMBALANCE_RATIOS:
        s = imbalanced_split(y, r, **IMBALANCE_PRESETS["cifar10"], seed=0)
        assert s.sizes() == {"labeled": 2400, "unlabeled": 20000, "val": 5000, "test": 0}
        for idx, n in ((s.labeled, 2400), (s.unlabeled, 20000)):
            counts = per_class(y, idx, 10)
            minor = sum(counts[:5])
            assert sum(counts) == n
            assert abs(minor - n * r / (1 + r)) <= 0.5  # the nearest integer to the paper's ratio
            assert max(counts[:5]) - min(counts[:5]) <= 1 and max(counts[5:]) - min(counts[5:]) <= 1
    s = imbalanced_split(y, 0.1, **IMBALANCE_PRESETS["cifar10"], seed=0)
    assert per_class(y, s.labeled, 10) == [44, 44, 44, 43, 43] + [437, 437, 436, 436, 436]


def test_imbalanced_split_deterministic_and_errors():
    y = labels([200] * 10)
    a = imbalanced_split(y, 0.3, n_labeled=100, n_unlabeled=500, seed=2)
    b = imbalanced_split(y, 0.3, n_labeled=100, n_unlabeled=500, seed=2)
    c = imbalanced_split(y, 0.3, n_labeled=100, n_unlabeled=500, seed=3)
    assert np.array_equal(a.unlabeled, b.unlabeled) and not np.array_equal(a.unlabeled, c.unlabeled)
    for bad in (0.0, -0.5, 1.5):
        with pytest.raises(ValueError, match=r"imbalance_ratio must lie in \(0, 1\]"):
            imbalanced_split(y, bad, n_labeled=100, n_unlabeled=500, seed=0)
    with pytest.raises(ValueError, match=r"unlabeled set: class 0 has only 180 examples available .* 200"):
        imbalanced_split(y, 1.0, n_labeled=200, n_unlabeled=2000, seed=0)
    with pytest.raises(ValueError, match=r"imbalanced_classes \[12\] are not among the classes"):
        imbalanced_split(y, 0.5, n_labeled=10, n_unlabeled=10, imbalanced_classes=(0, 12), seed=0)
    with pytest.raises(TypeError, match="seed must be an integer"):
        imbalanced_split(y, 0.5, n_labeled=10, n_unlabeled=10, seed="1")


@pytest.mark.skipif(not os.environ.get("SSLKIT_DATA_DIR"), reason="needs SSLKIT_DATA_DIR (real MNIST)")
def test_mnist_4v9_paper_a_setting_on_real_data():
    from sslkit.data import load_dataset

    try:
        mnist = load_dataset("mnist")
    except FileNotFoundError:
        pytest.skip("MNIST not in SSLKIT_DATA_DIR")
    b = binary_task(mnist, 4, 9)
    assert b.name == "mnist_4v9" and b.classes == ("4", "9")
    assert np.bincount(b.y).tolist() == [5842, 5949] and np.bincount(b.y_test).tolist() == [982, 1009]
    n1, n2 = PAPER_A_BINARY_SETTINGS[0]
    s = make_split(
        b.y, [n1, n2], n_unlabeled=PAPER_A_N_UNLABELED["binary_image"], n_val=PAPER_A_N_VAL["default"], seed=0
    )
    assert per_class(b.y, s.labeled, 2) == [15, 45]
    assert s.sizes() == {"labeled": 60, "unlabeled": 5000, "val": 60, "test": 0}
