"""Paper B Table 1 / Table 5 experiment functions (sslkit.experiments.paper_b.ssl, .timing)."""

import math
import os
from pathlib import Path

import numpy as np
import pytest
import torch

from sslkit.experiments.paper_b import controls as BC
from sslkit.experiments.paper_b import ssl as B
from sslkit.experiments.paper_b import timing as T
from sslkit.features import available_extractors
from sslkit.select import GKHR, ActiveFTSelector, KMeansSelector, RandomSelector, StratifiedSelector, USLSelector

torch.set_num_threads(1)
DATA_DIR = os.environ.get("SSLKIT_DATA_DIR")
HAS_MNIST = bool(DATA_DIR) and (Path(DATA_DIR) / "mnist").is_dir()


def _blobs(n=300, d=8, k=3, seed=0, spread=0.3, scale=1.0):
    rng = np.random.default_rng(seed)
    centres = 3.0 * rng.standard_normal((k, d))
    y = np.arange(n) % k
    return (scale * (centres[y] + spread * rng.standard_normal((n, d)))).astype(np.float32), y


# ------------------------------------------------------------------------------------------ paper numbers


def test_paper_table1_is_complete_and_spot_values():
    cols = [f"{d} @ {m}" for d, ms in B.TABLE1_BUDGETS.items() for m in ms]
    assert len(cols) == 10
    assert set(PAPER_KEYS := B.PAPER_TABLE1_B) == {
        (a, s, c) for a in B.TABLE1_ALGORITHMS for s in B.TABLE1_SELECTORS for c in cols
    }
    assert len(PAPER_KEYS) == 120
    assert B.PAPER_TABLE1_B[("FlexMatch", "k-Means", "CIFAR-10 @ 40")] == (81.23, 8.71)
    assert B.PAPER_TABLE1_B[("FreeMatch", "RDSS", "STL-10 @ 40")] == (81.90, 1.72)
    assert B.PAPER_TABLE1_B[("FlexMatch", "ActiveFT", "CIFAR-100 @ 400")] == (25.69, 0.64)
    assert B.PAPER_TABLE1_B[("FreeMatch", "Stratified", "SVHN @ 1000")] == (94.22, 0.78)


def test_paper_table1_agrees_with_table4_typed_separately():
    """Table 4's row alpha = 1 - 1/sqrt(m) is the same experiment as Table 1's FreeMatch + RDSS (CIFAR)."""
    from sslkit.experiments.paper_b.selection import PAPER_TABLE4

    for d in ("CIFAR-10", "CIFAR-100"):
        for m in B.TABLE1_BUDGETS[d]:
            assert PAPER_TABLE4[("1-1/sqrt(m)", f"{d} @ {m}")] == B.PAPER_TABLE1_B[("FreeMatch", "RDSS", f"{d} @ {m}")]


def test_paper_table5():
    t = B.PAPER_TABLE5_B
    assert set(t) == set(B.TABLE1_SELECTORS)
    assert [t[s]["seconds"] for s in ("k-Means", "USL", "ActiveFT", "RDSS")] == [579.97, 257.68, 224.35, 132.77]
    assert t["Random"]["approx_zero"] and t["Stratified"]["approx_zero"] and not t["RDSS"]["approx_zero"]
    assert t["RDSS"]["complexity"] == "O(mn)"
    assert B.OFFICIAL_BANDWIDTH == pytest.approx(math.sqrt(2))
    # gamma = 0.5 in exp(-gamma ||x-y||^2) is our exp(-||x-y||^2 / sigma^2) with sigma = sqrt 2
    assert math.exp(-0.5 * 3.7) == pytest.approx(math.exp(-3.7 / B.OFFICIAL_BANDWIDTH**2))


def test_protocols():
    p = B.USB_PROTOCOL
    assert (p["lr"], p["momentum"], p["weight_decay"], p["batch_size"], p["uratio"], p["ema_decay"]) == (
        0.03,
        0.9,
        5e-4,
        64,
        7,
        0.999,
    )
    assert p["epochs"] * p["iterations_per_epoch"] == 2**20 and p["model"] == "wrn28_2" and p["nesterov"]


# ------------------------------------------------------------------------------------------ selection


def test_make_selector_classes_and_errors():
    expected = {
        "Stratified": StratifiedSelector,
        "Random": RandomSelector,
        "k-Means": KMeansSelector,
        "USL": USLSelector,
        "ActiveFT": ActiveFTSelector,
        "RDSS": GKHR,
    }
    for name, cls in expected.items():
        assert type(B.make_selector(name, 5)) is cls
    with pytest.raises(ValueError, match="selector must be one of"):
        B.make_selector("Coreset", 5)
    with pytest.raises(ValueError, match="m"):
        B.make_selector("RDSS", 0)


def test_select_indices_distinct_deterministic_and_rdss_is_gkhr():
    X, y = _blobs(n=120)
    for name in ("Stratified", "Random", "k-Means", "USL", "RDSS"):  # ActiveFT (300 Adam steps): its own tests
        a, sec = B.select_indices(name, X, y, 12, seed=3)
        assert a.dtype == np.int64 and a.shape == (12,) and np.unique(a).size == 12 and sec >= 0
        if name in ("Random", "Stratified", "k-Means"):  # the selectors' own tests cover the others' seeds
            np.testing.assert_array_equal(a, B.select_indices(name, X, y, 12, seed=3)[0])
    strat, _ = B.select_indices("Stratified", X, y, 12)
    assert np.bincount(y[strat]).tolist() == [4, 4, 4]  # the oracle balances the classes exactly
    rdss, _ = B.select_indices("RDSS", X, y, 12)
    np.testing.assert_array_equal(rdss, GKHR(12).fit(X).indices_)
    fixed, _ = B.select_indices("RDSS", X, y, 12, bandwidth=B.OFFICIAL_BANDWIDTH)
    np.testing.assert_array_equal(fixed, GKHR(12, bandwidth=math.sqrt(2)).fit(X).indices_)


# ------------------------------------------------------------------------------------------ training


TINY = {
    "model": "mlp",
    "lr": 0.3,
    "epochs": 2,
    "iterations_per_epoch": 15,
    "batch_size": 16,
    "uratio": 2,
    "ema_decay": 0.9,
}


@pytest.mark.parametrize("algorithm", B.TABLE1_ALGORITHMS)
@pytest.mark.slow  # trains
def test_train_ssl_head_learns_and_is_deterministic(algorithm):
    X, y = _blobs(n=240, seed=1)
    Xs, ys = _blobs(n=90, seed=1)  # same centres (same seed), fresh noise is not needed: this checks learning
    labeled = np.array([0, 1, 2, 3, 4, 5])
    a = B.train_ssl(X, y, labeled, Xs, ys, algorithm=algorithm, protocol=TINY, device="cpu", seed=0)
    b = B.train_ssl(X, y, labeled, Xs, ys, algorithm=algorithm, protocol=TINY, device="cpu", seed=0)
    assert a["test_acc"] == b["test_acc"] and a["test_acc"] > 80.0
    assert a["labeled_classes"] == 3 and a["steps"] == 30


def test_train_ssl_missing_class_in_labeled_set():
    X, y = _blobs(n=240, seed=2)
    labeled = np.flatnonzero(y != 2)[:6]  # class 2 has no label (RDSS / Random at small m)
    out = B.train_ssl(X, y, labeled, X, y, algorithm="FlexMatch", protocol=TINY, device="cpu", num_classes=3)
    assert out["labeled_classes"] == 2 and 0.0 <= out["test_acc"] <= 100.0


def test_train_ssl_errors():
    X, y = _blobs(n=60)
    with pytest.raises(ValueError, match="algorithm must be one of"):
        B.train_ssl(X, y, [0, 1], X, y, algorithm="FixMatch", protocol=TINY)
    with pytest.raises(ValueError, match="unknown keys"):
        B.train_ssl(X, y, [0, 1], X, y, protocol={"model": "mlp", "lrate": 1.0})
    with pytest.raises(ValueError, match="protocol must be one of"):
        B.train_ssl(X, y, [0, 1], X, y, protocol="fast")
    with pytest.raises(ValueError, match="needs uint8 images"):
        B.train_ssl(X, y, [0, 1], X, y, protocol="usb")
    with pytest.raises(ValueError, match="labeled must be"):
        B.train_ssl(X, y, [0, 60], X, y, protocol=TINY)
    with pytest.raises(ValueError, match="one entry per row"):
        B.train_ssl(X, y[:10], [0, 1], X, y, protocol=TINY)


def test_freematch_ema_reaches_freematch_and_is_refused_elsewhere(monkeypatch):
    """A protocol's ``freematch_ema_p`` becomes FreeMatch's ``ema_p`` (USB's 0.999 when absent); the LeNet run's
    ``freematch_ema`` is refused for an arm that has no such EMA, before any data is read."""
    import sslkit.algorithms

    seen = []

    class Spy(sslkit.algorithms.FreeMatch):
        def __init__(self, *args, **kw):
            super().__init__(*args, **kw)
            seen.append(self.ema_p)

    monkeypatch.setattr(sslkit.algorithms, "FreeMatch", Spy)
    X, y = _blobs(n=60)
    tiny = {**TINY, "epochs": 1, "iterations_per_epoch": 1}
    B.train_ssl(X, y, [0, 1, 2], X, y, algorithm="FreeMatch", protocol={**tiny, "freematch_ema_p": 0.99}, device="cpu")
    B.train_ssl(X, y, [0, 1, 2], X, y, algorithm="FreeMatch", protocol=tiny, device="cpu")
    assert seen == [0.99, 0.999]
    with pytest.raises(ValueError, match="freematch_ema sets FreeMatch's EMA momentum; algorithm 'FlexMatch'"):
        B.table1_lenet_run("Stratified", "FlexMatch", 10, 0, freematch_ema=0.99)
    with pytest.raises(ValueError, match="freematch_ema"):  # a momentum of 1 never moves: refused before the data
        B.table1_lenet_run("Stratified", "FreeMatch", 10, 0, freematch_ema=1.0)


@pytest.mark.slow  # trains
def test_supervised_arm_reads_the_labeled_rows_only():
    """The supervised arm (ARMS[0]) trains on the labeled rows alone: reordering the other rows of X_train (the
    unlabeled set; integer-valued, so the z-scoring statistics are exact and unchanged) leaves its weights bit for
    bit the same, while FreeMatch, which draws its unlabeled batches from those rows, ends elsewhere."""
    X, y = _blobs(n=240, seed=3)
    X = np.round(4 * X).astype(np.float64)
    labeled = np.arange(6)
    X2 = X.copy()
    X2[6:] = X[6:][::-1]

    def weights(Xt, algorithm):
        out = B.train_ssl(Xt, y, labeled, X, y, algorithm=algorithm, protocol=TINY, seed=0, return_models=True)
        return torch.cat([p.detach().flatten() for p in out["model"].parameters()]), out

    (sup, a), (sup2, _) = weights(X, "Supervised"), weights(X2, "Supervised")
    (free, _), (free2, _) = weights(X, "FreeMatch"), weights(X2, "FreeMatch")
    assert torch.equal(sup, sup2) and not torch.equal(free, free2) and not torch.equal(sup, free)
    assert a["test_acc"] > 80.0 and a["labeled_classes"] == 3 and a["steps"] == 30
    assert B.ARMS == ("Supervised", "FlexMatch", "FreeMatch")


def test_lenet_stand_in_spec_and_its_controls():
    """The LeNet stand-in: a valid protocol, the grid Table 1's selectors x the three arms x its budgets (narrowed
    by name), and positive controls whose arms are in that grid, with the paper's numbers read from its tables."""
    from sslkit.experiments.paper_b import experiments_lenet as E
    from sslkit.experiments.paper_b.grids import table1_lenet_configs

    p = B.check_protocol("lenet")
    assert p["model"] == "lenet_mnist" and p["epochs"] * p["iterations_per_epoch"] == 300 and p["uratio"] == 3
    assert B.LENET_BUDGETS == (10, 40, 250) and B.LENET_DATA["n_pool"] == 10000
    grid = table1_lenet_configs()
    assert len(grid) == len(B.TABLE1_SELECTORS) * 3 * 3 and len({tuple(sorted(c.items())) for c in grid}) == len(grid)
    narrow = table1_lenet_configs(["Random", "RDSS"], [40])
    assert {(c["selector"], c["algorithm"], c["m"]) for c in narrow} == {
        (s, a, 40) for s in ("Random", "RDSS") for a in B.ARMS
    }
    assert E.TABLE1_LENET.scales["cpu"].configs(readings=False) == grid
    # the reading "freematch_ema": FreeMatch with its EMA scaled to the schedule, in the arms its controls read only
    ema = E.TABLE1_LENET.scales["cpu"].configs(main=False)
    assert {c["algorithm"] for c in ema} == {"FreeMatch"} and {c["freematch_ema"] for c in ema} == {0.99}
    assert {(c["selector"], c["m"]) for c in ema} == {(s, m) for s in B.TABLE1_SELECTORS for m in B.LENET_BUDGETS}
    assert len(ema) == len(B.TABLE1_SELECTORS) * len(B.LENET_BUDGETS)
    assert all(E.TABLE1_LENET.scales["cpu"].reading_of(c).name == "freematch_ema" for c in ema)
    for c in BC.LENET_EMA_CONTROLS:
        for values in (c["higher"], c["lower"]):
            if values["algorithm"] == "FreeMatch":
                assert values in ema
            else:  # FlexMatch and the supervised arm: the main grid's records, which have no such key
                assert values["freematch_ema"] is None
                assert {k: v for k, v in values.items() if k != "freematch_ema"} in grid
    controls = {c["id"]: c for c in BC.LENET_CONTROLS}
    assert len(controls) == len(BC.LENET_CONTROLS) >= 2
    for c in BC.LENET_CONTROLS:
        assert c["higher"] in grid and c["lower"] in grid and c["higher"] != c["lower"]
        assert c["paper"][0] > c["paper"][1], c["id"]
    assert (
        controls["B-lenet-ctl-freematch"]["paper"]
        == (
            B.PAPER_TABLE1_B[("FreeMatch", "Stratified", "CIFAR-10 @ 40")][0],
            B.PAPER_TABLE1_B[("FlexMatch", "Stratified", "CIFAR-10 @ 40")][0],
        )
        == (95.05, 91.45)
    )
    # FreeMatch's control sits at the smallest budget, on one label per class
    free = controls["B-lenet-ctl-freematch"]
    assert free["higher"] == {"algorithm": "FreeMatch", "selector": "Stratified", "m": min(B.LENET_BUDGETS)}
    assert free["lower"] == {**free["higher"], "algorithm": "FlexMatch"}
    assert controls["B-lenet-ctl-ssl"]["lower"]["algorithm"] == "Supervised"


def _lenet_arm(records, values) -> dict:
    return {
        r["seed"]: r["metrics"]["test_acc"] for r in records if all(r["config"].get(k) == v for k, v in values.items())
    }


LENET_RECORDS = Path(__file__).resolve().parents[1] / "notebooks" / "results" / "b_table1_lenet" / "cpu.jsonl"


@pytest.mark.skipif(not LENET_RECORDS.is_file(), reason="no committed records of the LeNet stand-in")
def test_lenet_stand_in_ssl_controls_hold_on_its_records():
    """On the committed records: each SSL arm (FlexMatch, FreeMatch) is above the supervised arm on the same 40
    labels (random or RDSS) by more than 5 points on every seed, and significantly so over all those pairs from
    three seeds on (SSL above supervised, paired); each control's arms ran the same seeds; every seed's three arms
    used the same labeled set."""
    from sslkit.experiments import load_results
    from sslkit.experiments.report.stats import compare

    records = load_results(LENET_RECORDS)
    for c in BC.LENET_CONTROLS:
        main = {"freematch_ema": None}  # the main reading's records (the reading freematch_ema: its own test)
        hi, lo = (
            {s: v for s, v in _lenet_arm(records, {**arm, **main}).items() if s in BC.LENET_SEEDS}
            for arm in (c["higher"], c["lower"])
        )
        assert not hi or not lo or set(hi) == set(lo), c["id"]
    ssl, sup = {}, {}
    for selector in ("Random", "RDSS"):
        base = _lenet_arm(records, {"algorithm": "Supervised", "selector": selector, "m": 40})
        for algorithm in B.TABLE1_ALGORITHMS:
            arm = _lenet_arm(records, {"algorithm": algorithm, "selector": selector, "m": 40, "freematch_ema": None})
            assert set(arm) == set(base)
            assert all(arm[s] - base[s] > 5.0 for s in arm), (algorithm, selector, arm, base)
            ssl.update({(algorithm, selector, s): v for s, v in arm.items()})
            sup.update({(algorithm, selector, s): base[s] for s in arm})
    if len({k[2] for k in ssl}) >= 3:
        result = compare(ssl, sup)
        assert result.verdict == "higher" and result.ci[0] > 5.0, result.short()
    for r in records:
        same = [q for q in records if q["seed"] == r["seed"] and q["config"]["selector"] == r["config"]["selector"]]
        same = [q for q in same if q["config"]["m"] == r["config"]["m"]]
        assert len({(q["metrics"]["labeled_classes"], q["metrics"]["alpha_mmd2"]) for q in same}) == 1


@pytest.mark.skipif(not LENET_RECORDS.is_file(), reason="no committed records of the LeNet stand-in")
def test_the_freematch_ema_readings_confirmatory_seeds_are_fresh_and_sized_by_the_pilots_power():
    """The reading freematch_ema's FreeMatch control is decided on fresh seeds whose count is what a paired t-test
    needs for 90 % power at its pilot's (seeds 0-13) effect and spread; the pilot's comparison is what was declared."""
    from sslkit.experiments import load_results
    from sslkit.experiments.report.stats import compare, seeds_for

    records = load_results(LENET_RECORDS)
    pilot = [
        {s: v for s, v in _lenet_arm(records, values).items() if s in BC.LENET_SEEDS}
        for values in (
            {"algorithm": "FreeMatch", "selector": "Stratified", "m": 10, "freematch_ema": B.LENET_FREEMATCH_EMA},
            {"algorithm": "FlexMatch", "selector": "Stratified", "m": 10},
        )
    ]
    c = compare(*pilot)
    assert len(pilot[0]) == 14 and c.short() == "+3.06 (95 % CI -0.20 to +6.31, p = 0.063)"
    assert seeds_for(c, c.diff, power=0.9) == len(BC.LENET_CONFIRM_SEEDS) == 38
    assert not set(BC.LENET_CONFIRM_SEEDS) & set(BC.LENET_SEEDS)
    (confirm,) = [c for c in BC.LENET_EMA_CONTROLS if c["id"] == "B-lenet-ctl-freematch-ema"]
    assert confirm["seeds"] == BC.LENET_CONFIRM_SEEDS
    assert all(c["seeds"] == BC.LENET_SEEDS for c in BC.LENET_EMA_CONTROLS if c is not confirm)
    # the scale owns those seeds for the control's two arms only (Scale.extra_seeds), not for the whole grid
    from sslkit.experiments.paper_b import experiments_lenet as E
    from sslkit.experiments.runs.store import run_key

    keys, arm = E.TABLE1_LENET.keys("cpu"), {"selector": "Stratified", "m": 10}
    assert run_key({**arm, "algorithm": "FlexMatch"}, 51, "cpu") in keys
    assert run_key({**arm, "algorithm": "FreeMatch", "freematch_ema": 0.99}, 14, "cpu") in keys
    assert run_key({**arm, "algorithm": "FreeMatch"}, 14, "cpu") not in keys
    assert run_key({**arm, "algorithm": "Supervised"}, 14, "cpu") not in keys
    assert run_key({**arm, "algorithm": "FlexMatch"}, 52, "cpu") not in keys


@pytest.mark.skipif(not LENET_RECORDS.is_file(), reason="no committed records of the LeNet stand-in")
def test_the_freematch_ema_reading_passes_its_controls_on_its_declared_seeds():
    """With FreeMatch's EMA scaled to the schedule, the LeNet stand-in shows all four controls; FreeMatch's is
    decided on the 38 fresh seeds alone (paired), well clear of zero, and the same arms over the pilot's 14 seeds
    and the fresh ones together would have given another number (the control does not read the pilot)."""
    from sslkit.experiments import catalog
    from sslkit.experiments.report import controls as K

    page = catalog.controls_table("b_table1_lenet", "cpu", "freematch_ema")
    rows = page.rows.set_index("control")
    assert (rows["outcome"] == K.SHOWN).all() and page.states["state"].item() == K.PASSES
    confirm = rows.loc["B-lenet-ctl-freematch-ema"]
    assert confirm["seeds"] == "38 / 38" and confirm["difference"].startswith("+5.75 (95 % CI +2.72")
    assert rows.drop("B-lenet-ctl-freematch-ema")["seeds"].eq("14 / 14").all()


@pytest.mark.skipif(not LENET_RECORDS.is_file(), reason="no committed records of the LeNet stand-in")
def test_lenet_stand_in_reverses_freematchs_control_and_cannot_decide():
    """On the committed records, one label per class (m = 10) puts FreeMatch significantly below FlexMatch, the
    opposite of the paper's Table 1, while the other three controls are shown: the stand-in decides nothing."""
    from sslkit.experiments import catalog
    from sslkit.experiments.report import controls as K

    page = catalog.controls_table("b_table1_lenet", "cpu", "main")
    rows = page.rows.set_index("control")
    assert rows.loc["B-lenet-ctl-freematch", "outcome"] == K.REVERSED
    assert (rows.drop("B-lenet-ctl-freematch")["outcome"] == K.SHOWN).all()
    assert page.states["state"].item() == K.CANNOT_DECIDE


@pytest.mark.skipif(not HAS_MNIST, reason="SSLKIT_DATA_DIR with mnist not available")
@pytest.mark.slow  # trains
def test_table1_run_on_mnist_pixels():
    kw = dict(protocol=TINY, extractor="pixels_pca", n_pool=400, n_test=200, pca_dim=20, device="cpu")
    a = B.table1_run("mnist", "RDSS", "FreeMatch", 20, 0, **kw)
    b = B.table1_run("mnist", "RDSS", "FlexMatch", 20, 0, **kw)
    assert a["n_pool"] == 400 and a["n_test"] == 200 and a["extractor"] == "pixels_pca" and a["model"] == "mlp"
    assert a["select_seconds"] == b["select_seconds"]  # one selection, shared by both algorithms
    assert a["test_acc"] > 20.0 and 1 <= a["labeled_classes"] <= 10
    with pytest.raises(ValueError, match="exceeds the pool size"):
        B.table1_run("mnist", "Random", "FreeMatch", 401, 0, **kw)


# ------------------------------------------------------------------------------------------ Table 5


def test_synthetic_features_and_timing_run():
    X = T.synthetic_features(500, 16, seed=4)
    assert X.shape == (500, 16) and X.dtype == np.float32
    np.testing.assert_array_equal(X, T.synthetic_features(500, 16, seed=4))
    for name in ("Random", "RDSS"):
        out = T.table5_timing_run(name, 400, 20, 0, d=16)
        assert out["seconds"] >= 0 and (out["n"], out["m"], out["d"]) == (400, 20, 16)


def test_defects_fixed_gamma_degenerates_on_large_scale_features():
    """B2: with features whose distances are >> sqrt 2, exp(-0.5 d^2) is ~0 off the diagonal, so GKHR sees no
    density; the median bandwidth keeps the kernel informative and gives a lower alpha-MMD^2."""
    P, y = _blobs(n=200, d=16, k=4, seed=5, scale=10.0)
    R = np.random.default_rng(0).standard_normal(P.shape).astype(np.float32)  # a "random network"
    Pt, yt = _blobs(n=80, d=16, k=4, seed=5, scale=10.0)
    kw = dict(pretrained=P, random_init=R, y_pool=y, pretrained_test=Pt, y_test=yt)
    med = T.defects_run("pretrained", "median", 16, 0, **kw)
    fixed = T.defects_run("pretrained", "fixed", 16, 0, **kw)
    rand = T.defects_run("random_init", "median", 16, 0, **kw)
    assert fixed["selection_bandwidth"] == pytest.approx(math.sqrt(2))
    assert fixed["mean_offdiag_kernel"] < 1e-6 < 0.01 < med["mean_offdiag_kernel"]
    assert med["alpha_mmd2"] < fixed["alpha_mmd2"] and med["alpha_mmd2"] < rand["alpha_mmd2"]
    assert med["classes_covered"] == 4 and 0 <= rand["proxy_acc"] <= 100
    with pytest.raises(ValueError, match="features must be"):
        T.defects_run("clip", "median", 16, 0, **kw)
    with pytest.raises(ValueError, match="bandwidth must be"):
        T.defects_run("pretrained", "gamma", 16, 0, **kw)
    with pytest.raises(ValueError, match="same pool"):
        T.defects_run("random_init", "median", 16, 0, **{**kw, "random_init": R[:10]})


@pytest.mark.skipif("efficientnet_lite0" not in available_extractors(), reason="efficientnet-lite0 not installed")
def test_random_init_features_shape_seed_and_errors():
    imgs = np.random.default_rng(0).integers(0, 256, size=(2, 16, 16, 3), dtype=np.uint8)
    a = T.random_init_features(imgs, seed=1)
    assert a.shape == (2, 1280) and np.isfinite(a).all()
    np.testing.assert_array_equal(a, T.random_init_features(imgs, seed=1))
    with pytest.raises(ValueError, match="uint8"):
        T.random_init_features(imgs.astype(np.float32))


def test_source_label_drops_directories():
    assert (
        B._source_label("/x/y/data/cifar10 (lossless files, sha256 verified)")
        == "cifar10 (lossless files, sha256 verified)"
    )
    assert B._source_label("C:\\data\\mnist (idx files)") == "mnist (idx files)"
    assert B._source_label("downloaded") == "downloaded"


def test_lenet_records_read_as_table1_keep_the_readings_arms_only():
    """The LeNet stand-in's records as Table 1's claims read them: FlexMatch and the reading's FreeMatch (or the
    main reading's, with ``ema=None``), never the supervised arm nor the other reading's FreeMatch; RDSS far above
    Random in them is what the claim's test then finds."""
    from sslkit.experiments.paper_b import claims as BCL

    records = []
    for seed in range(4):
        for sel, acc in (("RDSS", 95.0), ("Random", 90.0)):
            for algorithm, ema in (("Supervised", None), ("FlexMatch", None), ("FreeMatch", None), ("FreeMatch", 0.99)):
                config = {"selector": sel, "algorithm": algorithm, "m": 40}
                if ema is not None:
                    config["freematch_ema"] = ema
                bump = 1.0 if ema is not None else 0.0  # tells the two FreeMatch readings apart
                metrics = {"test_acc": acc + bump + 0.1 * seed * (sel == "RDSS")}
                records.append({"config": config, "seed": seed, "metrics": metrics})
    ours = BCL.lenet_as_table1(records)
    assert len(ours) == 16 and {r["config"]["dataset"] for r in ours} == {BCL.LENET_DATASET}
    assert all("freematch_ema" not in r["config"] for r in ours)
    free = [r["metrics"]["test_acc"] for r in ours if r["config"]["algorithm"] == "FreeMatch"]
    assert min(free) >= 91.0  # the reading's runs (bumped), not the main reading's
    main = BCL.lenet_as_table1(records, ema=None)
    assert max(r["metrics"]["test_acc"] for r in main if r["config"]["algorithm"] == "FreeMatch") < 96.0
    verdict, evidence = BCL.b_rdss_improves_ssl(ours)
    assert verdict == "holds" and "mnist (LeNet)" in evidence


@pytest.mark.skipif(not LENET_RECORDS.is_file(), reason="no committed records of the LeNet stand-in")
def test_table1s_claims_on_the_passing_lenet_reading_read_both_ways():
    """What the b_table1 page says of Table 1's claims on the reading freematch_ema (seeds 0-4, every selector and
    budget): "RDSS highest" does not hold, decided at the stand-in's m = 10 by RDSS far below USL (significant after
    Holm); on the paper's budgets 40 and 250 alone it is not resolved."""
    from sslkit.experiments import load_results
    from sslkit.experiments.paper_b import claims as BCL
    from sslkit.experiments.report.verdicts import judgement

    records = [r for r in BCL.lenet_as_table1(load_results(LENET_RECORDS)) if r["seed"] in range(5)]
    claim = {c.id: c for c in BCL.CLAIMS}["B-T1-1"]
    j = judgement(claim, records)
    lab, c, _, _ = j.deciding
    assert j.verdict == "does not hold" and " 10 vs " in lab and c.diff < -10 and c.p_decides < 0.05
    paper_budgets = [r for r in records if r["config"]["m"] != 10]
    assert judgement(claim, paper_budgets).verdict == "not resolved"
