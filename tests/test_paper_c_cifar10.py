"""Paper C on CIFAR-10's own OOD split (issue 44, item 5): the ``cpu_cifar10`` stand-in -- its protocol, the features
it reads (the cache paper B's Table 1 fills), the task it builds, its controls (Table 12's CIFAR-10 rows) and the
replay test's reason for leaving its records to ``sslkit replay``."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sslkit.data import OOD_PRESETS, Dataset
from sslkit.experiments.paper_c import robust, robust_features
from sslkit.experiments.paper_c.robust import PAPER_TABLE12, PROTOCOLS


def test_cifar10_protocol_is_the_papers_ood_split_with_its_validation_set_on_features():
    """App. F.1.2's CIFAR-10 split (six animal classes ID, four vehicles OOD, 2 400 / 20 000 / 5 000), the validation
    set and model selection of cpu_val, the paper's CIFAR-10 lr; VAT's ε is the paper's per-value perturbation; the
    em reading differs only in VAT's entropy weight."""
    p = PROTOCOLS["cpu_cifar10"]
    assert p["split"] == OOD_PRESETS["cifar10"] and p["split"]["n_val"] == 5000
    assert p["split"]["id_classes"] == (2, 3, 4, 5, 6, 7) and p["split"]["n_unlabeled"] == 20000
    assert p["validation"] and p["dataset"] == "cifar10" and p["variant"] == "jpeg"
    assert p["features"] == "efficientnet_lite0" and p["model"] == "mlp" and p["lr"] == 0.03
    paper_eps = PROTOCOLS["paper_cifar10_ood"]["vat_eps"]
    assert p["vat_eps"] == pytest.approx(paper_eps * math.sqrt(1280 / 3072), abs=0.15)
    em = PROTOCOLS["cpu_cifar10_em"]
    assert {k for k in {**p, **em} if p.get(k) != em.get(k)} == {"vat_ent"} and em["vat_ent"] == 0.06


def _fake_dataset(n=48000, n_test=9000, d=8, seed=0) -> Dataset:
    rng = np.random.default_rng(seed)
    y, y_test = np.arange(n) % 10, np.arange(n_test) % 10
    return Dataset(
        name="cifar10",
        X=rng.integers(0, 256, size=(n, 2, 2, 3), dtype=np.uint8),
        y=y,
        X_test=rng.integers(0, 256, size=(n_test, 2, 2, 3), dtype=np.uint8),
        y_test=y_test,
        classes=tuple(str(k) for k in range(10)),
        source="fake",
    )


def test_featurized_reads_the_cache_entries_paper_bs_table1_fills(monkeypatch):
    """Each image becomes its feature row (labels unchanged), through extract_features with the cache keys that
    paper B's table1_data uses for the same dataset and copy, so one extraction serves both papers."""
    from sslkit.experiments.paper_b import ssl as b_ssl

    ds, calls = _fake_dataset(n=40, n_test=10), []

    def fake_extract(images, extractor, *, device, cache_key):
        calls.append((cache_key, extractor))
        return images.reshape(len(images), -1)[:, :5].astype(np.float32) + (1000 if "test" in cache_key else 0)

    import sslkit.data
    import sslkit.features

    for module in (robust_features, sslkit.data):  # table1_data imports both from the packages when it runs
        monkeypatch.setattr(module, "load_dataset", lambda name, root=None, **opts: ds)
    monkeypatch.setattr(robust_features, "extract_features", fake_extract)
    robust_features.featurized.cache_clear()
    try:
        out = robust_features.featurized("cifar10", "jpeg", "efficientnet_lite0")
    finally:
        robust_features.featurized.cache_clear()
    assert out.X.shape == (40, 5) and out.X_test.shape == (10, 5) and (out.X_test >= 1000).all()
    np.testing.assert_array_equal(out.X, ds.X.reshape(40, -1)[:, :5])
    assert (out.y == ds.y).all() and (out.y_test == ds.y_test).all() and "efficientnet_lite0" in out.notes
    ours = [k for k, _ in calls]
    calls.clear()
    monkeypatch.setattr(sslkit.features, "extract_features", fake_extract)
    b_ssl._DATA_MEMO.clear()
    try:
        b_ssl.table1_data("cifar10", variant="jpeg")
    finally:
        b_ssl._DATA_MEMO.clear()
    assert ours == [k for k, _ in calls] == ["cifar10-jpeg-train", "cifar10-jpeg-test"]


def test_cifar10_task_is_the_ood_split_of_the_feature_rows(monkeypatch):
    """build_task on a feature protocol: the split's rows of the feature matrix, z-scored by the labeled rows; the
    exact OOD fraction; the ID part of the test split; the validation set for model selection and the meta-set."""
    ds = _fake_dataset()
    F = np.random.default_rng(1).normal(size=(len(ds.y), 8)).astype(np.float32) * 3 + 2
    F_test = np.random.default_rng(2).normal(size=(len(ds.y_test), 8)).astype(np.float32)
    fake = Dataset("cifar10", F, ds.y, F_test, ds.y_test, ds.classes, "fake features")
    seen = []
    monkeypatch.setattr(robust, "featurized", lambda *a: seen.append(a) or fake)
    task = robust.build_task("cpu_cifar10", 0.75, seed=3)
    assert seen == [("cifar10", "jpeg", "efficientnet_lite0")]
    assert task.X_l.shape == (2400, 8) and task.X_u.shape == (20000, 8) and task.meta["X_val"].shape == (5000, 8)
    assert task.num_classes == 6 and np.bincount(task.y_l).tolist() == [400] * 6
    assert task.meta["is_ood"].mean() == 0.75 and (task.meta["y_u"][task.meta["is_ood"]] == -1).all()
    assert len(task.X_test) == (np.isin(ds.y_test, (2, 3, 4, 5, 6, 7))).sum() and set(task.y_test) == set(range(6))
    X_l = np.asarray(task.X_l)
    np.testing.assert_allclose(X_l.mean(0), 0, atol=1e-4)
    np.testing.assert_allclose(X_l.std(0), 1, atol=1e-3)
    assert abs(float(np.asarray(task.X_u).mean())) < 0.1  # the same z-scoring, not the raw features' mean of 2


def test_cifar10_controls_are_table_12s_cifar10_orderings():
    """The five OOD orderings of robust_ood, with Table 12's CIFAR-10 cells (not MNIST's), for each reading."""
    from sslkit.experiments.paper_c.controls import CONTROLS, robust_ood

    controls = robust_ood("cpu_cifar10", "cifar10")
    assert len(controls) == 5 and all(c.scope == {"protocol": "cpu_cifar10"} for c in controls)
    for c in controls:
        cells = [PAPER_TABLE12[("ood", "cifar10", arm["method"], arm["ratio"])]["mean"] for arm in (c.higher, c.lower)]
        assert c.paper == tuple(cells) and cells[0] > cells[1] and "CIFAR-10 OOD" in c.where
    assert [c.paper for c in controls if c.id.endswith("sup-vat-75")] == [(76.1, 74.25)]
    assert robust_ood("cpu_val")[0].paper == (93.0, 88.1)  # MNIST's cells unchanged for the MNIST stand-ins
    registered = [k for k in CONTROLS if k.startswith("c_robust_cifar10/")]
    assert registered == ["c_robust_cifar10/cpu"]
    stand_ins = {c.stand_in for c in CONTROLS[registered[0]]}
    readings = ("cpu_cifar10", "cpu_cifar10_em", "cpu_cifar10_imbalance", "cpu_cifar10_lowlr")
    assert stand_ins == {f"{p}{final}" for p in readings for final in ("", "_final")}


def test_the_lowlr_reading_changes_only_the_rate_runs_at_75_percent_and_never_decides():
    """The third reading: every method at lr 0.003 (at the paper's 0.03 L2RW and CRUST diverge on the head), only at
    75 % OOD, with the two controls whose arms are there; a rate chosen after seeing the runs is a named reading the
    claims' cells never read, so it decides no claim."""
    from sslkit.experiments import catalog
    from sslkit.experiments.paper_c.controls import CONTROLS
    from sslkit.experiments.paper_c.experiments_cifar10 import LOWLR, ROBUST_CIFAR10, cifar10_lowlr_configs
    from sslkit.experiments.paper_c.robust_evidence import faithfulness, robust_cells

    low, main = PROTOCOLS["cpu_cifar10_lowlr"], PROTOCOLS["cpu_cifar10"]
    assert {k for k in low if low[k] != main.get(k)} == {"lr"} and (low["lr"], main["lr"]) == (0.003, 0.03)
    grid = cifar10_lowlr_configs()
    assert {c["ratio"] for c in grid} == {0.75} and {c["protocol"] for c in grid} == {"cpu_cifar10_lowlr"}
    assert {c["fraction"] for c in grid if c["method"] in ("crust", "retrieve", "random")} == {0.1}
    assert {c["method"] for c in grid} >= {"supervised", "vat", "ds3l", "l2rw", "crust", "retrieve"}
    assert LOWLR in [r.name for r in ROBUST_CIFAR10.scales["cpu"].readings]
    mine = [c for c in CONTROLS["c_robust_cifar10/cpu"] if c.stand_in.startswith("cpu_cifar10_lowlr")]
    assert sorted(c.id.rsplit("-", 3)[-3] + "-" + c.id.rsplit("-", 1)[-1] for c in mine) == sorted(
        ["sup-75", "ds3l-75"] * 2
    )
    assert {c.higher["ratio"] for c in mine} == {c.lower["ratio"] for c in mine} == {0.75}
    assert faithfulness("cpu_cifar10_final") == 1  # the main reading scored on the final model decides
    # a named reading: the claims' cells never read its records (the page shows them)
    recs = catalog.records("c_robust_cifar10", "cpu")
    assert any(r["config"]["protocol"] == "cpu_cifar10_lowlr" for r in recs)
    assert not [p for p in robust_cells(recs) if p.startswith("cpu_cifar10_lowlr")]


def test_the_final_model_reading_scores_the_same_records_and_orderings_on_final_test_acc():
    """The paper never says how its validation set is used: the second reading scores each run's final model. Its
    controls are the same orderings with the same printed numbers, on the same protocol's records (scope), read from
    ``final_test_acc``; the first reading reads ``test_acc`` (the best-validation epoch)."""
    from sslkit.experiments.paper_c.controls import CONTROLS

    by_label = {}
    for c in CONTROLS["c_robust_cifar10/cpu"]:
        by_label.setdefault(c.stand_in, []).append(c)
    readings = (("cpu_cifar10", 5), ("cpu_cifar10_em", 5), ("cpu_cifar10_imbalance", 3), ("cpu_cifar10_lowlr", 2))
    for protocol, n in readings:
        selected, final = by_label[protocol], by_label[f"{protocol}_final"]
        assert [c.metric for c in selected] == ["test_acc"] * n and [c.metric for c in final] == ["final_test_acc"] * n
        assert all(c.scope == {"protocol": protocol} for c in selected + final)
        assert [(c.higher, c.lower, c.paper, c.text) for c in selected] == [
            (c.higher, c.lower, c.paper, c.text) for c in final
        ]
    assert len({c.id for cs in by_label.values() for c in cs}) == 30
    imbalance = by_label["cpu_cifar10_imbalance"]  # Table 12's CIFAR-10 imbalance rows
    assert [c.paper for c in imbalance] == [
        tuple(PAPER_TABLE12[("imbalance", "cifar10", a["method"], a["ratio"])]["mean"] for a in (c.higher, c.lower))
        for c in imbalance
    ]
    assert all("CIFAR-10 imbalance" in c.where and c.paper[0] > c.paper[1] for c in imbalance)


def test_cifar10_records_are_left_to_sslkit_replay_saying_why():
    """Every record needs the 60 000 images' features (32 minutes on a fresh machine): the replay test skips the
    file, saying why, and only this file (the other scales' records replay)."""
    from sslkit.experiments import catalog

    why = {(e.name, s): sc.not_replayable for e in catalog.experiments() for s, sc in e.scales.items()}
    assert {k for k, v in why.items() if v} == {("c_robust_cifar10", "cpu")}
    assert "32 minutes" in why["c_robust_cifar10", "cpu"] and "sslkit replay" in why["c_robust_cifar10", "cpu"]


def test_cifar10_imbalance_protocol_is_the_papers_imbalance_split_on_the_same_learner(monkeypatch):
    """App. F.1.2's CIFAR-10 imbalance split (classes 0-4 rarer by the ratio; 2 400 labels, 20 000 unlabeled, 5 000
    validation images), on the OOD stand-in's features, head and schedule; its grid is the robust grid at the
    paper's three imbalance ratios, and ``scenario`` narrows the experiment's grid to it."""
    from sslkit.data import IMBALANCE_PRESETS
    from sslkit.experiments.paper_c.experiments_cifar10 import cifar10_configs

    p, ood = PROTOCOLS["cpu_cifar10_imbalance"], PROTOCOLS["cpu_cifar10"]
    assert p["split"] == IMBALANCE_PRESETS["cifar10"] and p["scenario"] == "imbalance"
    assert p["ratios"] == PROTOCOLS["paper_cifar10_imbalance"]["ratios"] == (0.1, 0.3, 0.5)
    assert {k for k in {**p, **ood} if p.get(k) != ood.get(k)} == {"scenario", "split", "ratios"}
    grid = cifar10_configs(scenario="imbalance")
    assert {c["protocol"] for c in grid} == {"cpu_cifar10_imbalance"} and {c["ratio"] for c in grid} == {0.1, 0.3, 0.5}
    assert len(cifar10_configs()) == len(grid) + len(cifar10_configs(scenario="ood"))
    with pytest.raises(ValueError, match="scenario must be one of"):
        cifar10_configs(scenario="imbalanced")
    with pytest.raises(ValueError, match="no run of the grid has a ratio in"):
        cifar10_configs(scenario="imbalance", ratios=0.75)
    ds = _fake_dataset(n=50000, n_test=10000)
    fake = Dataset("cifar10", np.random.default_rng(1).normal(size=(50000, 8)).astype(np.float32), ds.y,
                   np.zeros((10000, 8), np.float32), ds.y_test, ds.classes, "fake features")  # fmt: skip
    monkeypatch.setattr(robust, "featurized", lambda *a: fake)
    task = robust.build_task("cpu_cifar10_imbalance", 0.1, seed=0)
    assert task.X_l.shape == (2400, 8) and task.X_u.shape == (20000, 8) and task.meta["X_val"].shape == (5000, 8)
    counts = np.bincount(task.meta["y_u"], minlength=10)
    assert counts[:5].max() <= 0.1 * counts[5:].min() + 1 and counts.sum() == 20000  # classes 0-4 ten times rarer
    assert task.num_classes == 10 and len(task.X_test) == 10000


def test_the_claims_read_the_final_model_reading_as_the_most_faithful_stand_in():
    """The robust claims read the CIFAR-10 records twice: at the best-validation epoch under the protocol's name (a
    CPU stand-in shown aside) and on the final model under its FINAL_MODEL label, which ranks next to the paper's own
    protocol; the imbalance protocol's readings go to the imbalance scenario."""
    from sslkit.experiments.paper_c import claims_robust as CR
    from sslkit.experiments.paper_c import robust_evidence as E

    def rec(protocol, method, seed, best, final):
        c = {"protocol": protocol, "method": method, "ratio": 0.5, "fraction": 0.1 if method == "retrieve" else None}
        pool = {"ood_fraction": 0.5, "class_fractions": [1 / 6] * 6}
        m = {"test_acc": best, "final_test_acc": final, "cpu_seconds": 1.0, "seconds": 1.0, "selections": [],
             "selection_seconds": 0.0, "selection_cpu_seconds": 0.0, "pool": pool}  # fmt: skip
        return {"config": c, "seed": seed, "metrics": m}

    recs = [rec("cpu_cifar10", m, s, 70.0 + s, 60.0 + s + (5 if m == "retrieve" else 0))
            for m in ("retrieve", "vat") for s in range(3)]  # fmt: skip
    cells = E.robust_cells(recs)
    assert set(cells) == {"cpu_cifar10", "cpu_cifar10_final"}
    final = cells["cpu_cifar10_final"]["budget 0.1"][0.5]
    assert final["retrieve"][2]["test_acc"] == 67.0 and final["vat"][2]["test_acc"] == 62.0
    assert cells["cpu_cifar10"]["budget 0.1"][0.5]["retrieve"][2]["test_acc"] == 72.0
    ranks = {p: E.faithfulness(p) for p in ("paper_cifar10_ood", "cpu_cifar10_final", "cpu_long", "cpu_cifar10")}
    assert ranks == {"paper_cifar10_ood": 0, "cpu_cifar10_final": 1, "cpu_long": 2, "cpu_cifar10": 3}
    imb = [{**r, "config": {**r["config"], "protocol": "cpu_cifar10_imbalance"}} for r in recs]
    assert set(E.robust_cells(imb, "imbalance")) == {"cpu_cifar10_imbalance", "cpu_cifar10_imbalance_final"}
    assert E.robust_cells(imb) == {}
    verdict, text = CR.c_robust_beats_all(recs)  # only VAT beside Retrieve: the others are named, not compared
    assert text.startswith(E.WHY[1]) and "cpu_cifar10_final: holds" in text and "sensitivity" in text
    l2rw = [rec("cpu_cifar10", "l2rw", s, None, None) for s in range(3)]  # every run diverged
    verdict, text = CR.c_robust_beats_all(recs + l2rw)
    assert verdict == "holds" and "no trained run of supervised, l2rw, ds3l, crust: not compared" in text


def test_crusts_mean1_reading_runs_on_cifar10_and_the_claims_keep_it_apart():
    """CRUST's raw weights (mean N / k) diverge on this stand-in; the mean-1 reading runs CRUST's configs with
    ``normalize_weights``, and the claims read it as its own view, never pooled with the raw-weight runs."""
    from sslkit.experiments.paper_c import robust_evidence as E
    from sslkit.experiments.paper_c.experiments import MEAN1, ROBUST_CIFAR10

    scale = ROBUST_CIFAR10.scales["cpu"]
    mean1 = scale.configs(readings=[MEAN1], main=False, scenario="ood")
    assert len(mean1) == 6 and all(c["method"] == "crust" and c["normalize_weights"] for c in mean1)
    assert all(scale.reading_of(c).name == MEAN1 for c in mean1)

    def rec(config, seed, acc):
        pool = {"ood_fraction": 0.5, "class_fractions": [1 / 6] * 6}
        m = {"test_acc": acc, "final_test_acc": acc, "cpu_seconds": 1.0, "seconds": 1.0, "selections": [],
             "selection_seconds": 0.0, "selection_cpu_seconds": 0.0, "pool": pool}  # fmt: skip
        return {"config": config, "seed": seed, "scale": "cpu", "metrics": m}

    base = {"protocol": "cpu_cifar10", "ratio": 0.5, "fraction": 0.1}
    recs = [rec({**base, "method": "retrieve"}, s, 70.0) for s in range(2)]
    recs += [rec({**base, "method": "crust"}, s, None) for s in range(2)]  # diverged
    recs += [rec({**c, "method": "crust"}, s, 65.0) for s in range(2) for c in mean1 if c["ratio"] == 0.5
             and c["fraction"] == 0.1]  # fmt: skip
    cells = E.robust_cells(recs)["cpu_cifar10"]
    assert set(cells) == {"budget 0.1", f"budget 0.1, {MEAN1}"}
    assert "crust" not in cells["budget 0.1"][0.5]  # both raw-weight runs diverged: left out
    assert cells[f"budget 0.1, {MEAN1}"][0.5]["crust"][1]["test_acc"] == 65.0


def test_the_pages_reading_of_the_committed_cifar10_records():
    """What c_robust_cifar10 says in prose about its committed records (its numbers are glued; the statements are
    checked here): Retrieve's coresets hold far fewer OOD images than the pool, yet at a 10 % budget Retrieve is not
    significantly different from a random coreset of its size at any OOD ratio; every CRUST and L2RW run of the main
    grid diverged and is counted, not averaged."""
    from sslkit.experiments import catalog
    from sslkit.experiments.paper_c import report as R
    from sslkit.experiments.paper_c.robust_evidence import final_model_records
    from sslkit.experiments.report.stats import compare

    recs = [r for r in catalog.records("c_robust_cifar10", "cpu") if r["config"]["protocol"] == "cpu_cifar10"]
    rows = robust.robust_rows(recs)
    share = [r["coreset_ood"] for r in rows if (r["method"], r["ratio"], r["fraction"]) == ("retrieve", 0.75, 0.1)]
    assert len(share) == 5 and max(share) < 0.5  # the pool holds 75 %
    fin = [r for r in robust.robust_rows(final_model_records(recs)) if r["protocol"] == "cpu_cifar10_final"]
    for ratio in (0.25, 0.5, 0.75):
        c = compare(R.cell_accs(fin, "retrieve", 0.1, ratio), R.cell_accs(fin, "random", 0.1, ratio))
        assert c.verdict == "not resolved" and c.n == (5, 5) and c.test == "paired", (ratio, c.short())
    _, counts = R.split_diverged(recs, 6)
    by = counts[~counts["normalize_weights"]].set_index("method")  # CORDS' raw weights (the main grid)
    assert by.loc["crust", "diverged"] == by.loc["crust", "runs"] == 30
    assert by.loc["l2rw", "diverged"] == by.loc["l2rw", "runs"] == 15
    assert by.loc["vat", "diverged"] == by.loc["retrieve", "diverged"] == 0


def test_the_pages_reading_of_the_committed_imbalance_records():
    """What c_robust_cifar10 says of its class-imbalance records: five whole seeds; on the final model the unlabeled
    loss hurts at every ratio (VAT and Retrieve at 10 % significantly below Supervised); every CRUST and L2RW run
    diverged; where a coreset run's best-validation epoch precedes the second selection, Retrieve and Random (same
    seed, ratio and budget) have the same test accuracy -- both trained on the same random first coreset; and the
    ledger's imbalance claims are decided by this stand-in's final-model reading, while c_robust's MNIST imbalance
    stand-in fails its controls (that page says so)."""
    from sslkit.experiments import catalog
    from sslkit.experiments.paper_c import report as R
    from sslkit.experiments.paper_c.robust_evidence import final_model_records
    from sslkit.experiments.report.stats import compare

    recs = [r for r in catalog.records("c_robust_cifar10", "cpu") if r["config"]["protocol"] == "cpu_cifar10_imbalance"]
    per_seed = {s: sum(r["seed"] == s for r in recs) for s in range(5)}
    assert per_seed == {s: len(robust.robust_grid("cpu_cifar10_imbalance")) for s in range(5)}
    fin = [r for r in robust.robust_rows(final_model_records(recs)) if r["protocol"] == "cpu_cifar10_imbalance_final"]
    for ratio in (0.1, 0.3, 0.5):
        sup = R.cell_accs(fin, "supervised", None, ratio)
        for method, f in (("vat", None), ("retrieve", 0.1)):
            c = compare(R.cell_accs(fin, method, f, ratio), sup)
            assert c.verdict == "lower" and c.n == (5, 5), (method, ratio, c.short())
    _, counts = R.split_diverged(recs, 10)
    by = counts.set_index("method")
    assert by.loc["crust", "diverged"] == by.loc["crust", "runs"] == 30
    assert by.loc["l2rw", "diverged"] == by.loc["l2rw", "runs"] == 15
    runs = {(r["config"]["method"], r["seed"], r["config"]["ratio"], r["config"]["fraction"]): r for r in recs}
    early = [k for k, r in runs.items() if k[0] == "retrieve" and r["metrics"]["best_epoch"] <= 5]
    pairs = [(runs[k]["metrics"], runs[("random", *k[1:])]["metrics"]) for k in early]
    same_epoch = [(a, b) for a, b in pairs if a["best_epoch"] == b["best_epoch"]]
    assert len(same_epoch) >= 10  # the page's note has something to explain
    assert all(a["test_acc"] == b["test_acc"] for a, b in same_epoch)
    states = catalog.stand_ins().set_index(["experiment", "stand-in"])["state"]
    assert states[("c_robust", "cpu_imbalance")] == "cannot decide"  # c_robust: the MNIST one decides nothing
    assert states[("c_robust_cifar10", "cpu_cifar10_imbalance_final")] == "passes"
    ledger = catalog.ledger(paper="C").set_index("id")
    for claim in ("C-R-imb", "C-R-imb-1.5"):
        assert ledger.loc[claim, "verdict"] == "does not hold"
        assert "cpu_cifar10_imbalance_final" in ledger.loc[claim, "controls"]
        assert ledger.loc[claim, "group"] == "(c) CIFAR-10 imbalance · CPU stand-in on features"


def test_the_pages_reading_of_the_lowlr_records():
    """c_robust_cifar10's third reading: five whole seeds of its grid at 75 % OOD, and at lr 0.003 every L2RW and
    CRUST run trains (the page says "the two baselines train"); the same seeds' runs at the paper's 0.03 all
    diverged (the reason for the reading)."""
    from sslkit.experiments import catalog
    from sslkit.experiments.paper_c import report as R
    from sslkit.experiments.paper_c.experiments_cifar10 import cifar10_lowlr_configs
    from sslkit.experiments.paper_c.robust_evidence import final_model_records
    from sslkit.experiments.report.stats import compare

    recs = catalog.records("c_robust_cifar10", "cpu")
    low = [r for r in recs if r["config"]["protocol"] == "cpu_cifar10_lowlr"]
    assert sorted(r["seed"] for r in low) == sorted(list(range(5)) * len(cifar10_lowlr_configs()))
    _, counts = R.split_diverged(low, 6)
    assert counts["diverged"].sum() == 0 and set(counts["method"]) >= {"l2rw", "crust"}
    # "OOD data barely hurts VAT" at this rate (the page, when the controls are not all shown): VAT within a point
    # of Supervised on the final model, not significantly below it -- against -11 points at the paper's rate
    fin = [r for r in robust.robust_rows(final_model_records(low)) if r["protocol"] == "cpu_cifar10_lowlr_final"]
    c = compare(R.cell_accs(fin, "vat", None, 0.75), R.cell_accs(fin, "supervised", None, 0.75))
    assert c.verdict == "not resolved" and abs(c.diff) < 1.0, c.short()
    main = [r for r in recs if r["config"]["protocol"] == "cpu_cifar10" and r["config"]["ratio"] == 0.75]
    _, at_paper_rate = R.split_diverged(main, 6)
    by = at_paper_rate[~at_paper_rate["normalize_weights"]].set_index(["method"])
    assert (by.loc["l2rw", "diverged"], by.loc["l2rw", "runs"]) == (5, 5)
    raw = [r for r in main if not r["config"].get("normalize_weights")]  # CORDS' raw weights, as the reading runs
    crust10 = [r for r in raw if r["config"]["method"] == "crust" and r["config"]["fraction"] == 0.1]
    assert len(crust10) == 5 and all(R.is_diverged(r["metrics"], 6) for r in crust10)
