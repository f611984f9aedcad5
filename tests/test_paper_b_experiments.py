"""Paper B experiment helpers (sslkit.experiments.paper_b.selection): Figure 2/3 runs, Table 4 numbers and runs."""

import math

import numpy as np
import pytest
import torch

from sslkit.data import RDSS_TOY_DISTRIBUTIONS, rdss_toy_distribution
from sslkit.experiments import paper_comparison
from sslkit.experiments.paper_b import selection as pb
from sslkit.select import GKH, GKHR, gaussian_kernel, median_bandwidth


def dense_alpha_mmd2(X, idx, alpha, bw):
    K = gaussian_kernel(X, bandwidth=bw, device="cpu").double().numpy()
    idx = np.asarray(idx)
    return alpha**2 * K.mean() + K[np.ix_(idx, idx)].mean() - 2 * alpha * K[:, idx].mean()


# ---------------------------------------------------------------------------------------- Table 4 numbers


def test_paper_table4_as_printed():
    cols = [
        "CIFAR-10 @ 40",
        "CIFAR-10 @ 250",
        "CIFAR-10 @ 4000",
        "CIFAR-100 @ 400",
        "CIFAR-100 @ 2500",
        "CIFAR-100 @ 10000",
    ]
    assert len(pb.PAPER_TABLE4) == 8 * 6
    assert {c for _, c in pb.PAPER_TABLE4} == set(cols)
    assert pb.PAPER_TABLE4[("0", "CIFAR-10 @ 40")] == (85.54, 0.48)
    assert pb.PAPER_TABLE4[("0.4", "CIFAR-100 @ 10000")] == (71.71, 0.29)
    assert pb.PAPER_TABLE4[("0.95", "CIFAR-100 @ 400")] == (48.41, 0.59)
    assert pb.PAPER_TABLE4[("1", "CIFAR-10 @ 4000")] == (95.54, 0.25)
    assert pb.PAPER_TABLE4[("1-1/sqrt(m)", "CIFAR-10 @ 40")] == (95.05, 0.13)
    assert pb.PAPER_TABLE4[("1-1/sqrt(m)", "CIFAR-100 @ 10000")] == (73.13, 0.19)
    # the paper's claim (1): RDSS's alpha is best (ties allowed) in every column
    for c in cols:
        ours = pb.PAPER_TABLE4[("1-1/sqrt(m)", c)][0]
        assert all(ours >= pb.PAPER_TABLE4[(a, c)][0] for a in pb.TABLE4_ALPHAS)
    # and it is Table 1's FreeMatch + RDSS row, typed independently there
    assert pb.PAPER_TABLE4[("1-1/sqrt(m)", "CIFAR-10 @ 250")] == (95.50, 0.20)
    assert pb.PAPER_TABLE4[("1-1/sqrt(m)", "CIFAR-100 @ 2500")] == (67.40, 0.23)


def test_paper_table4_feeds_paper_comparison():
    recs = [
        {
            "key": f"k{s}",
            "config": {"alpha": "1", "column": "CIFAR-10 @ 40"},
            "seed": s,
            "scale": "paper",
            "metrics": {"test_acc": 94.0 + s},
        }
        for s in range(2)
    ]
    t = paper_comparison(recs, pb.PAPER_TABLE4, rows="alpha", cols="column", metric="test_acc")
    assert t.loc["1", ("CIFAR-10 @ 40", "paper_mean")] == 94.53
    assert t.loc["1", ("CIFAR-10 @ 40", "ours_mean")] == 94.5


def test_table4_alpha_and_interval():
    assert pb.table4_alpha("0", 40) == pb.TINY_ALPHA == 1e-6
    assert pb.table4_alpha("0.98", 40) == 0.98
    assert pb.table4_alpha("1-1/sqrt(m)", 400) == pytest.approx(0.95)
    assert pb.table4_in_interval("0.9", 40) and not pb.table4_in_interval("0.8", 40)
    assert pb.table4_in_interval("0.95", 400)  # 1 - 1/20 = 0.95: the left end
    assert not pb.table4_in_interval("0.98", 4000) and pb.table4_in_interval("1", 4000)
    assert not pb.table4_in_interval("0", 40)
    assert all(pb.table4_in_interval("1-1/sqrt(m)", m) for m in (40, 250, 4000))
    with pytest.raises(ValueError, match="label must be one of"):
        pb.table4_alpha("0.5", 40)
    with pytest.raises(ValueError, match="m"):
        pb.table4_alpha("1", 0)


# ---------------------------------------------------------------------------------------- Figure 2


def test_figure2_grid_and_budget():
    grid, seeds = pb.figure2_grid("paper")
    assert len(grid) == 4 * 4 * 3 and seeds == list(range(10))
    assert {g["n"] for g in grid} == {1000, 3000, 10000, 30000}
    assert [g["n"] for g in grid] == sorted(g["n"] for g in grid)
    grid_q, seeds_q = pb.figure2_grid("quick")
    assert len(grid_q) == 4 * 2 * 3 and seeds_q == [0, 1, 2]
    assert pb.figure2_m(30000, 0.2) == 6000 and pb.figure2_m(1000, 0.01) == 10 and pb.figure2_m(10, 0.01) == 1
    with pytest.raises(ValueError, match="fraction"):
        pb.figure2_m(1000, 0.3)
    with pytest.raises(ValueError, match="scale"):
        pb.figure2_grid("huge")


@pytest.mark.parametrize("dist", RDSS_TOY_DISTRIBUTIONS)
def test_figure2_run_matches_brute_force(dist):
    out = pb.figure2_run(dist, 300, 0.2, seed=1)
    X, _ = rdss_toy_distribution(dist, 300, seed=1)
    bw = median_bandwidth(X, seed=1)
    assert out["m"] == 60 and out["alpha"] == pytest.approx(1 - 1 / math.sqrt(60))
    assert out["bandwidth"] == pytest.approx(bw)
    r = GKHR(60, alpha=out["alpha"], bandwidth=bw).fit(X).indices_
    h = GKH(60, alpha=out["alpha"], bandwidth=bw).fit(X).indices_
    d1, d2 = dense_alpha_mmd2(X, r, out["alpha"], bw), dense_alpha_mmd2(X, h, out["alpha"], bw)
    assert out["D1"] == pytest.approx(d1, rel=1e-4) and out["D2"] == pytest.approx(d2, rel=1e-4)
    assert out["D"] == pytest.approx((d1 - d2) / (d1 + d2), abs=1e-6)
    assert out["gkh_distinct"] == np.unique(h).size
    if out["gkh_distinct"] == 60:  # no repeats: GKH's path is GKHR's
        assert out["D"] == 0.0
    assert pb.figure2_run(dist, 300, 0.2, seed=1)["D"] == out["D"]  # deterministic


# ---------------------------------------------------------------------------------------- Figure 3


def test_selection_metrics_equal_brute_force():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 3))
    labels = np.repeat(np.arange(4), 30)
    idx = np.array([0, 5, 31, 32, 33, 64, 119])
    got = pb.selection_metrics(X, idx, alpha=0.7, bandwidth=1.3, labels=labels)
    K = gaussian_kernel(X, bandwidth=1.3).double().numpy()
    assert got["alpha_mmd2"] == pytest.approx(dense_alpha_mmd2(X, idx, 0.7, 1.3), rel=1e-5)
    assert got["mmd2"] == pytest.approx(dense_alpha_mmd2(X, idx, 1.0, 1.3), rel=1e-5)
    assert got["avg_similarity"] == pytest.approx(K[np.ix_(idx, idx)].mean(), rel=1e-6)
    assert (got["distinct"], got["classes_covered"], got["min_class_count"], got["max_class_count"]) == (7, 4, 1, 3)


def test_figure3_run_small():
    strat = pb.figure3_run("Stratified", 0, m=20, n=500)
    assert len(strat["indices"]) == 20 and strat["min_class_count"] == strat["max_class_count"] == 2
    rdss = pb.figure3_run("RDSS", 0, m=20, n=500)
    assert rdss["alpha"] == pytest.approx(1 - 1 / math.sqrt(20)) and rdss["distinct"] == 20
    X, _ = pb.figure3_data(500, seed=0)
    assert rdss["indices"] == GKHR(20).fit(X).indices_.tolist()
    assert rdss["alpha_mmd2"] < strat["alpha_mmd2"]  # GKHR minimises it; a random stratum does not
    with pytest.raises(ValueError, match="selector must be one of"):
        pb.figure3_run("Oracle", 0)


# ---------------------------------------------------------------------------------------- Table 4 runs


def test_table4_proxy_run_digits():
    a = pb.table4_proxy_run("1-1/sqrt(m)", 30, 0)
    assert a["alpha_value"] == pytest.approx(1 - 1 / math.sqrt(30))
    assert a["alpha_mmd2"] == pytest.approx(a["alpha_mmd2_rdss"])
    assert a["n_pool"] + a["n_test"] == 1797 and a["distinct"] == 30
    assert 0 <= a["proxy_acc"] <= 100
    zero = pb.table4_proxy_run("0", 30, 0)
    assert zero["alpha_value"] == pb.TINY_ALPHA
    # alpha -> 0 is pure diversity: the selection's average similarity is the smallest of the two
    assert zero["avg_similarity"] < a["avg_similarity"]
    with pytest.raises(ValueError, match="dataset must be"):
        pb.table4_proxy_run("1", 30, 0, dataset="cifar")


@pytest.mark.slow  # trains
def test_wrn_ssl_training_smoke():
    """The paper's protocol path (WRN-28-2 on uint8 images), one step: what table4_ssl_run(protocol="usb")
    and Table 1 run on a GPU."""
    from sslkit.experiments.paper_b.ssl import USB_PROTOCOL, train_ssl

    rng = np.random.default_rng(0)
    X = rng.integers(0, 256, size=(12, 16, 16, 3), dtype=np.uint8)
    y = np.arange(12) % 3
    torch.set_num_threads(1)
    tiny = {**USB_PROTOCOL, "epochs": 1, "iterations_per_epoch": 1, "batch_size": 3, "uratio": 1}
    out = train_ssl(X, y, [0, 1, 2], X[:6], y[:6], algorithm="FreeMatch", protocol=tiny, device="cpu")
    assert out["labeled_classes"] == 3 and out["steps"] == 1 and 0 <= out["test_acc"] <= 100
    with pytest.raises(ValueError, match="protocol must be one of"):
        pb.table4_ssl_run("1", 40, 0, protocol="fast")


def test_table1_full_pool_reading_is_the_papers_cifar10_budgets_on_the_jpeg_pool():
    """Table 1's head stand-in on the whole CIFAR-10 pool: a reading of the cpu scale whose every configuration
    reads the 50 000-image JPEG copy at the paper's three CIFAR-10 budgets, apart from the lossless subset's grid."""
    from sslkit.experiments import catalog
    from sslkit.experiments.paper_b import runs as R
    from sslkit.experiments.paper_b.ssl import TABLE1_ALGORITHMS, TABLE1_BUDGETS, TABLE1_SELECTORS

    scale = catalog.get("b_table1").scales["cpu"]
    full = [c for c in scale.configs() if c.get("pool") == "full"]
    assert sorted({c["m"] for c in full}) == list(TABLE1_BUDGETS["CIFAR-10"]) == [40, 250, 4000]
    assert len(full) == 3 * len(TABLE1_SELECTORS) * len(TABLE1_ALGORITHMS)
    assert {scale.data_of(c) for c in full} == {"cifar10/jpeg"}
    assert {scale.reading_of(c).name for c in full} == {"50 000-image pool"}
    subset = [c for c in scale.configs() if "pool" not in c]
    assert subset and {scale.data_of(c) for c in subset} == {"cifar10/lossless"}
    assert all(scale.reading_of(c) is None for c in subset)
    assert R.head_data("full") == {"cifar10": {"n_pool": None, "n_test": None, "variant": "jpeg"}}
    assert set(R.head_data()) == {"mnist", "cifar10"}
    with pytest.raises(ValueError, match="no head-protocol data for dataset 'mnist' with pool 'full'"):
        R.table1_head_run("mnist", "pixels_pca", "Random", "FlexMatch", 40, 0, pool="full")


def test_table4_full_pool_reading_runs_every_alpha_at_the_papers_cifar10_budgets():
    """Table 4's head stand-in has the same whole-pool reading as Table 1: every alpha at 40 / 250 / 4 000 on the
    JPEG pool; the main grid stays on the lossless subset, and an unknown pool is refused by name."""
    from sslkit.experiments import catalog
    from sslkit.experiments.paper_b import runs as R
    from sslkit.experiments.paper_b.selection import TABLE4_ALPHAS

    scale = catalog.get("b_table4_head").scales["paper"]
    full = [c for c in scale.configs() if c.get("pool") == "full"]
    assert len(full) == 3 * len(TABLE4_ALPHAS) and sorted({c["m"] for c in full}) == [40, 250, 4000]
    assert {scale.data_of(c) for c in full} == {"cifar10/jpeg"}
    assert {scale.reading_of(c).name for c in full} == {"50 000-image pool"}
    subset = [c for c in scale.configs() if "pool" not in c]
    assert subset and {scale.data_of(c) for c in subset} == {"cifar10/lossless"}
    with pytest.raises(ValueError, match="no head-protocol data for dataset 'mnist' with pool 'full'"):
        R.table4_head_run("0.9", 40, 0, dataset="mnist", extractor="pixels_pca", pca_dim=50, pool="full")
