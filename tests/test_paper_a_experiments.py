"""Paper A §6.2 experiment plumbing: data of one run, the paper's numbers, one quick run."""

import os

import numpy as np
import pytest
import torch

from sslkit.experiments import paper_a
from sslkit.experiments.paper_a import (
    METHODS,
    PAPER_TABLE1,
    PAPER_TABLE2,
    TABLE1_DATASETS,
    TABLE1_METHODS,
    TABLE1_SETTINGS,
    TABLE2_DATASETS,
    TABLE2_METHODS,
    build_task,
    grid_of,
    labeled_counts,
    run_one,
    select_hyper,
    settings_of,
)

DATA = os.environ.get("SSLKIT_DATA_DIR")
needs_data = pytest.mark.skipif(not DATA or not os.path.isdir(DATA), reason="SSLKIT_DATA_DIR not set")


def _rows(task):
    return {k: set(v.tolist()) for k, v in task.indices.items()}


def test_build_task_counts_and_disjointness_breast_cancer():
    task = build_task("breast_cancer", "(100,100)", 3, n_unlabeled=300, n_val=60)
    assert task.X_l.shape == (200, 30) and task.X_u.shape == (300, 30) and task.X_val.shape == (60, 30)
    assert np.bincount(task.y_l.numpy()).tolist() == [100, 100] == task.labeled_counts
    # stratified 30 % hold-out of 569 rows (212 malignant, 357 benign)
    assert task.X_test.shape[0] == round(0.3 * 212) + round(0.3 * 357) and not task.official_test
    r = _rows(task)
    assert not (r["test"] & (r["labeled"] | r["unlabeled"] | r["val"]))
    assert not (r["val"] & (r["labeled"] | r["unlabeled"]))
    # U is a sample of the marginal: it may overlap the labeled set (documented), and has no duplicates
    assert len(r["unlabeled"]) == 300 and len(r["labeled"]) == 200
    assert len(r["labeled"] | r["unlabeled"] | r["val"] | r["test"]) <= 569
    assert abs(task.prior.sum() - 1) < 1e-12 and np.allclose(task.prior, [212 / 569, 357 / 569])
    assert task.X_l.dtype == torch.float32 and task.y_l.dtype == torch.int64
    # features are standardised with training-pool statistics: the pool has mean ~0, not the test rows exactly
    logits, _ = task.make_model()(task.X_l[:3])
    assert logits.shape == (3, 2)


def test_build_task_is_deterministic_and_seed_dependent():
    a = build_task("breast_cancer", [15, 45], 7, n_unlabeled=300, n_val=60)
    b = build_task("breast_cancer", "(15,45)", 7, n_unlabeled=300, n_val=60)
    c = build_task("breast_cancer", "(15,45)", 8, n_unlabeled=300, n_val=60)
    for key in ("labeled", "unlabeled", "val", "test"):
        assert np.array_equal(a.indices[key], b.indices[key])
    assert torch.equal(a.X_l, b.X_l) and torch.equal(a.X_test, b.X_test)
    assert not np.array_equal(a.indices["labeled"], c.indices["labeled"])
    assert not np.array_equal(a.indices["test"], c.indices["test"])


def test_build_task_bad_input():
    with pytest.raises(ValueError, match="dataset must be one of"):
        build_task("iris", "(15,45)", 0, n_unlabeled=10, n_val=5)
    with pytest.raises(ValueError, match="has 3 counts but breast_cancer has 2"):
        build_task("breast_cancer", [1, 2, 3], 0, n_unlabeled=10, n_val=5)
    with pytest.raises(ValueError, match="n_unlabeled=1000 is larger"):
        build_task("breast_cancer", "(15,45)", 0, n_unlabeled=1000, n_val=60)
    with pytest.raises(ValueError, match="must look like"):
        labeled_counts("breast_cancer", "Bal. (70)")
    with pytest.raises(TypeError):
        build_task("breast_cancer", "(15,45)", 1.5, n_unlabeled=10, n_val=5)


def test_regime_counts():
    assert labeled_counts("dry_bean", "Sev. (140)") == [57, 34, 21, 13, 7, 5, 3]
    assert labeled_counts("mnist", "Mild (500)") == [102, 82, 71, 61, 51, 41, 31, 26, 20, 15]
    assert labeled_counts("adult", (50, 150)) == [50, 150]
    for d in TABLE2_DATASETS:
        for s in settings_of(d):
            assert sum(labeled_counts(d, s)) == int(s.split("(")[1].rstrip(")"))
            assert len(labeled_counts(d, s)) == (10 if d == "mnist" else 7)


@needs_data
def test_official_test_split_vs_holdout():
    adult = build_task("adult", "(30,30)", 0, n_unlabeled=300, n_val=60)
    assert adult.official_test and adult.X_test.shape[0] == 16281 and adult.indices["test"].size == 0
    assert abs(adult.prior.sum() - 1) < 1e-12
    bank = build_task("banknote", "(30,30)", 0, n_unlabeled=300, n_val=60)
    assert not bank.official_test and bank.X_test.shape[0] == round(0.3 * 762) + round(0.3 * 610)
    shuttle = build_task("shuttle", "Sev. (350)", 0, n_unlabeled=500, n_val=60)
    # classes with fewer rows than asked give half of what they have; the others give exactly the regime
    asked = labeled_counts("shuttle", "Sev. (350)")
    assert all(u == a or u < a for u, a in zip(shuttle.labeled_counts, asked))
    assert shuttle.labeled_counts[0] == 143 and shuttle.labeled_counts[1] < 86
    mnist = build_task("mnist_4v9", "(15,45)", 0, n_unlabeled=100, n_val=60)
    assert mnist.X_l.shape == (60, 1, 28, 28) and mnist.official_test
    assert set(mnist.y_test.unique().tolist()) == {0, 1}


def test_regime_class_order_is_label_encoder_order():
    dry_bean = ("SEKER", "BARBUNYA", "BOMBAY", "CALI", "HOROZ", "SIRA", "DERMASON")  # the ARFF file's order
    order = paper_a.regime_class_order("dry_bean", dry_bean)
    assert [dry_bean[c] for c in order] == sorted(dry_bean)  # string labels: alphabetical
    counts = paper_a.to_class_order("dry_bean", dry_bean, [57, 34, 21, 13, 7, 5, 3])
    assert dict(zip(dry_bean, counts)) == {
        "BARBUNYA": 57,
        "BOMBAY": 34,
        "CALI": 21,
        "DERMASON": 13,
        "HOROZ": 7,
        "SEKER": 5,
        "SIRA": 3,
    }
    shuttle = ("Rad Flow", "Fpv Close", "Fpv Open", "High", "Bypass", "Bpv Close", "Bpv Open")  # labels 1..7
    assert paper_a.regime_class_order("shuttle", shuttle) == list(range(7))
    with pytest.raises(ValueError, match="7 classes"):
        paper_a.to_class_order("dry_bean", dry_bean, [1, 2])


@needs_data
def test_build_task_places_regime_counts_in_label_encoder_order():
    task = build_task("dry_bean", "Sev. (140)", 0, n_unlabeled=100, n_val=60)
    from sslkit.data import load_dataset

    classes = list(load_dataset("dry_bean").classes)
    got = dict(zip(classes, np.bincount(task.y_l.numpy(), minlength=7).tolist()))
    assert got["BARBUNYA"] == 57 and got["SIRA"] == 3 and sum(got.values()) == 140
    assert build_task("dry_bean", "Bal. (70)", 0, n_unlabeled=100, n_val=60).labeled_counts == [10] * 7


def test_run_order_variant_errors():
    with pytest.raises(ValueError, match="order must be one of"):
        paper_a.run_order_variant("dry_bean", "Sev. (140)", "random", 0)
    with pytest.raises(ValueError, match="Table 2 dataset"):
        paper_a.run_order_variant("adult", "(15,45)", paper_a.REGIME_ORDERS[0], 0)


def test_run_supervised_term_variant_errors_and_plain_term_is_run_one():
    term = paper_a.SUPERVISED_TERMS[0]
    with pytest.raises(ValueError, match="'PL' or 'VAT'"):
        paper_a.run_supervised_term_variant("breast_cancer", "(30,30)", "Sup.", None, term, 0)
    with pytest.raises(ValueError, match="term must be one of"):
        paper_a.run_supervised_term_variant("breast_cancer", "(30,30)", "VAT", 0.5, "weighted", 0)
    with pytest.raises(ValueError, match="hyper must be one of"):
        paper_a.run_supervised_term_variant("breast_cancer", "(30,30)", "VAT", 0.3, term, 0)
    got = paper_a.run_supervised_term_variant(
        "breast_cancer", "(15,45)", "PL", 0.9, term, 0, scale="quick", device="cpu"
    )
    ref = paper_a.run_one("breast_cancer", "(15,45)", "PL", 0, scale="quick", device="cpu", hyper=0.9)
    assert got["test_acc"] == ref["test_acc"] and got["epochs"] == ref["epochs"]


@needs_data
def test_run_order_variant_places_the_counts():
    file_order = paper_a.run_order_variant("dry_bean", "Sev. (140)", "data file", 0, scale="quick", device="cpu")
    assert file_order["counts"] == [57, 34, 21, 13, 7, 5, 3]
    frequent = paper_a.run_order_variant(
        "dry_bean", "Sev. (140)", "most frequent first", 0, scale="quick", device="cpu"
    )
    assert frequent["counts"][6] == 57 and frequent["counts"][2] == 3  # DERMASON most, BOMBAY least frequent


def test_paper_dicts_complete():
    assert set(PAPER_TABLE1) == {(d, s) for d in TABLE1_DATASETS for s in TABLE1_SETTINGS}
    assert len(PAPER_TABLE2) == 4 * 7
    for d in TABLE2_DATASETS:
        for s in settings_of(d):
            assert set(PAPER_TABLE2[(d, s)]) == set(TABLE2_METHODS)
    for row in PAPER_TABLE1.values():
        assert set(row) == set(TABLE1_METHODS)
    for row in list(PAPER_TABLE1.values()) + list(PAPER_TABLE2.values()):
        for mean, std in row.values():
            assert 40 < mean < 100 and 0 < std < 10
    # spot checks against the paper's text (Table 1 / Table 2)
    assert PAPER_TABLE1[("credit_default", "(30,30)")]["PL"] == (66.3, 6.5)
    assert PAPER_TABLE1[("cifar_cvd", "(100,100)")]["Ours (Iter)"] == (59.6, 1.7)
    assert PAPER_TABLE2[("mnist", "Sev. (500)")]["Ours (Iter)"] == (81.7, 3.0)
    assert PAPER_TABLE2[("shuttle", "Bal. (70)")]["PL"] == (89.9, 4.6)
    assert set(METHODS) == {"Sup.", "PNU", "Ours (Iter)", "Ours (EC)", "PL", "VAT"}


def test_grid_and_selection():
    grid = grid_of(["breast_cancer"], ["(30,30)"])
    assert [g["hyper"] for g in grid if g["method"] == "PL"] == [0.8, 0.9, 0.95]
    assert [g["hyper"] for g in grid if g["method"] == "VAT"] == [0.2, 0.5, 1.0, 2.0]
    assert len(grid) == 3 + 3 + 4
    assert len(grid_of(["mnist"], ["Bal. (200)"], hyper="first")) == 5
    recs = [
        {
            "config": {"dataset": "b", "setting": "s", "method": "PL", "hyper": h},
            "seed": s,
            "metrics": {"best_val_acc": v},
        }
        for h, vals in [(0.8, [90, 91]), (0.9, [95, 80])]
        for s, v in enumerate(vals)
    ]
    kept = select_hyper(recs)
    assert {r["config"]["selected"] for r in kept} == {0.8} and len(kept) == 2
    # a cut-off sweep: 0.9 has only seed 0 (95) -> values are compared on seed 0 alone (0.8 has 90 there)
    partial = [r for r in recs if not (r["config"]["hyper"] == 0.9 and r["seed"] == 1)]
    kept = select_hyper(partial)
    assert [(r["config"]["selected"], r["seed"]) for r in kept] == [(0.9, 0)]


@pytest.mark.slow  # trains
def test_run_one_quick_is_sane_and_deterministic(monkeypatch):
    pytest.importorskip("sslkit.algorithms.risk_rewrite")
    monkeypatch.setitem(paper_a.PROTOCOL, "quick", {**paper_a.PROTOCOL["quick"], "epochs": 3, "patience": 2})
    torch.set_num_threads(1)
    a = run_one("breast_cancer", "(15,45)", "Sup.", 1, scale="quick", device="cpu")
    b = run_one("breast_cancer", "(15,45)", "Sup.", 1, scale="quick", device="cpu")
    assert a["test_acc"] == b["test_acc"] and a["best_val_acc"] == b["best_val_acc"]
    assert 50 < a["test_acc"] <= 100 and 0 <= a["best_val_acc"] <= 100 and 1 <= a["epochs"] <= 3
    assert a["n_labeled"] == [15, 45]
    c = run_one("breast_cancer", "(15,45)", "VAT", 1, scale="quick", device="cpu", hyper=1.0)
    assert 50 < c["test_acc"] <= 100
    with pytest.raises(ValueError, match="PL needs hyper"):
        run_one("breast_cancer", "(15,45)", "PL", 1, scale="quick")
    with pytest.raises(ValueError, match="binary only"):
        run_one("dry_bean", "Bal. (70)", "PNU", 1, scale="quick")


def vectorised_benchmark():
    """benchmarks/a_vectorised_seeds.py as a module (its fit_vectorised_mlp is no part of the package)."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "benchmarks" / "a_vectorised_seeds.py"
    spec = importlib.util.spec_from_file_location("a_vectorised_seeds", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_vectorised_seeds_match_shapes():
    fit_vectorised_mlp = vectorised_benchmark().fit_vectorised_mlp
    tasks = [build_task("breast_cancer", "(15,45)", s, n_unlabeled=300, n_val=60) for s in range(3)]
    out = fit_vectorised_mlp(tasks, [0, 1, 2], epochs=3, patience=2)
    assert len(out) == 3 and all(50 <= o["test_acc"] <= 100 and 1 <= o["epochs"] <= 3 for o in out)
    with pytest.raises(ValueError, match="one task per seed"):
        fit_vectorised_mlp(tasks, [0, 1])
