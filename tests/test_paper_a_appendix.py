"""Paper A, Appendix D (Tables 3-10): the diagnostic, the covariance-set estimate, the run functions."""

import numpy as np
import pytest
import torch

from sslkit.experiments import paper_a
from sslkit.experiments.paper_a import appendix as A
from sslkit.risk import loss_covariances, loss_matrix


@pytest.fixture(autouse=True)
def _one_thread():
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


# ------------------------------------------------------------------------------------------ Cov. rel. Fro.
def _brute_rel_fro(C, classes):
    vals = []
    for a in range(len(classes)):
        for b in range(a + 1, len(classes)):
            i, j = classes[a], classes[b]
            num = np.sqrt(((C[i] - C[j]) ** 2).sum())
            den = (np.sqrt((C[i] ** 2).sum()) + np.sqrt((C[j] ** 2).sum())) / 2
            vals.append(num / den)
    return np.mean(vals)


def test_cov_rel_fro_equals_brute_force_average_over_pairs():
    rng = np.random.default_rng(0)
    M = rng.normal(size=(4, 3, 3))
    C = M @ np.transpose(M, (0, 2, 1))  # 4 random PSD 3x3 matrices
    assert A.cov_rel_fro(C) == pytest.approx(_brute_rel_fro(C, [0, 1, 2, 3]), rel=1e-12)
    assert A.cov_rel_fro(C, classes=[0, 2, 3]) == pytest.approx(_brute_rel_fro(C, [0, 2, 3]), rel=1e-12)
    assert A.cov_rel_fro(torch.as_tensor(C)) == pytest.approx(A.cov_rel_fro(C))


def test_cov_rel_fro_closed_forms():
    S = np.diag([1.0, 2.0, 3.0])
    assert A.cov_rel_fro(np.stack([S, S, S])) == 0.0  # equal covariance: 0
    # Σ and 2Σ: ‖Σ‖ / (1.5 ‖Σ‖) = 2/3, whatever Σ
    assert A.cov_rel_fro(np.stack([S, 2 * S])) == pytest.approx(2 / 3)
    # Σ and -Σ reach the upper bound 2
    assert A.cov_rel_fro(np.stack([S, -S])) == pytest.approx(2.0)
    assert A.cov_rel_fro(np.zeros((2, 3, 3))) == 0.0


@pytest.mark.parametrize(
    "bad, match",
    [
        (np.zeros((3, 3)), "stack"),
        (np.zeros((1, 3, 3)), "stack"),
        (np.full((2, 2, 2), np.nan), "NaN"),
    ],
)
def test_cov_rel_fro_rejects_bad_input(bad, match):
    with pytest.raises(ValueError, match=match):
        A.cov_rel_fro(bad)


def test_cov_rel_fro_rejects_bad_classes():
    with pytest.raises(ValueError, match="classes"):
        A.cov_rel_fro(np.zeros((3, 3, 3)), classes=[0])
    with pytest.raises(ValueError, match="classes"):
        A.cov_rel_fro(np.zeros((3, 3, 3)), classes=[0, 3])


def test_diagnostic_uses_raw_class_covariances_of_the_ce_loss_vector():
    torch.manual_seed(0)
    model = torch.nn.Linear(5, 3)
    X = torch.randn(90, 5)
    y = torch.arange(90) % 3
    y[0] = 2  # class 0 keeps 29 rows
    got = A.loss_covariance_diagnostic(model, X, y, 3)
    with torch.no_grad():
        L = loss_matrix(model(X).double(), "ce").numpy()
    C = np.stack([np.cov(L[y.numpy() == m].T, ddof=1) for m in range(3)])
    assert got["classes_used"] == 3
    assert got["cov_rel_fro"] == pytest.approx(_brute_rel_fro(C, [0, 1, 2]), rel=1e-9)


def test_diagnostic_leaves_out_classes_with_fewer_than_two_rows():
    torch.manual_seed(1)
    model = torch.nn.Linear(4, 3)
    X = torch.randn(41, 4)
    y = torch.tensor([0] * 20 + [1] * 20 + [2])
    got = A.loss_covariance_diagnostic(model, X, y, 3)
    with torch.no_grad():
        L = loss_matrix(model(X).double(), "ce").numpy()
    C = np.stack([np.cov(L[y.numpy() == m].T, ddof=1) for m in range(2)])
    assert got["classes_used"] == 2
    assert got["cov_rel_fro"] == pytest.approx(_brute_rel_fro(C, [0, 1]), rel=1e-9)


# ------------------------------------------------------------------------------------ covariance set (Table 4)
def test_pooled_covariances_match_loss_covariances_and_pool_single_rows():
    rng = np.random.default_rng(3)
    L = rng.normal(size=(12, 3))
    y = np.array([0] * 6 + [1] * 5 + [2])
    y_all = np.array([0] * 6 + [1] * 4 + [2] * 2)  # every class has >= 2 rows: loss_covariances itself
    np.testing.assert_allclose(
        A._pooled_covariances(L, y_all, 3, shrinkage=0.5), loss_covariances(L, y_all, 3, shrinkage=0.5), rtol=1e-12
    )
    C = A._pooled_covariances(L, y, 3, shrinkage=0.5)  # class 2 has a single row
    for m in (0, 1):
        S = np.cov(L[y == m].T, ddof=1)
        np.testing.assert_allclose(C[m], 0.5 * S + 0.5 * np.diag(np.diag(S)), rtol=1e-12)
    pooled = np.cov(L.T, ddof=1)
    np.testing.assert_allclose(C[2], 0.5 * pooled + 0.5 * np.diag(np.diag(pooled)), rtol=1e-12)
    # one example per class: every class gets the pooled covariance, so a* is the equal-covariance a
    one = A._pooled_covariances(L[[0, 6, 11]], np.array([0, 1, 2]), 3, shrinkage=0.5)
    assert np.allclose(one[0], one[1]) and np.allclose(one[1], one[2])


def test_covariance_rows_are_held_out_with_exact_class_counts():
    task = A.build_task("breast_cancer", "(15,45)", 4, n_unlabeled=150, n_val=60)
    rows = A.covariance_rows(task, 7, seed=4)
    idx = task.indices
    for part in ("labeled", "unlabeled", "val", "test"):
        assert np.intersect1d(rows, idx[part]).size == 0, part
    y = np.asarray(paper_a.source_dataset("breast_cancer").y)
    assert np.bincount(y[rows], minlength=2).tolist() == [7, 7]
    np.testing.assert_array_equal(rows, A.covariance_rows(task, 7, seed=4))  # seeded
    with pytest.raises(ValueError, match="cov_per_class=1000 is too large"):
        A.covariance_rows(task, 1000, seed=4)


def test_extra_rows_are_preprocessed_like_the_task():
    task = A.build_task("breast_cancer", "(30,30)", 2, n_unlabeled=100, n_val=60)
    X, y = A.extra_rows(task, task.indices["labeled"])
    torch.testing.assert_close(X, task.X_l)
    torch.testing.assert_close(y, task.y_l)


# ------------------------------------------------------------------------------------------------ run functions
@pytest.mark.slow  # trains
def test_nn_on_is_tables_1_2_ours_iter_and_runs_are_seeded():
    on = A.run_nn("breast_cancer", "(15,45)", "on", 1, scale="quick", device="cpu")
    ref = paper_a.run_one("breast_cancer", "(15,45)", "Ours (Iter)", 1, scale="quick", device="cpu")
    assert {k: on[k] for k in ("test_acc", "best_val_acc", "epochs", "best_epoch")} == {
        k: ref[k] for k in ("test_acc", "best_val_acc", "epochs", "best_epoch")
    }
    off = A.run_nn("breast_cancer", "(15,45)", "off", 1, scale="quick", device="cpu")
    assert 50 < off["test_acc"] <= 100


def test_nn_off_turns_the_correction_off():
    task = A.build_task("breast_cancer", "(15,45)", 0, n_unlabeled=100, n_val=60)
    assert A._iter_algorithm(task, "quick", nonnegative=False).nonnegative is False
    assert A._iter_algorithm(task, "quick").nonnegative is True


@pytest.mark.slow  # trains
def test_fixmatch_cov_size_and_diagnostic_runs():
    fm = A.run_fixmatch("breast_cancer", "Imb. (60)", 0.9, 0, scale="quick", device="cpu")
    assert fm["n_labeled"] == [15, 45] and 0 <= fm["mask_rate"] <= 1
    cs = A.run_cov_size("breast_cancer", "(30,30)", 1, 0, scale="quick", device="cpu")
    assert len(cs["a_final"]) == 2 and np.isfinite(cs["a_final"]).all()
    ec = A.run_ec_diagnostic("breast_cancer", "(30,30)", 0, scale="quick", device="cpu")
    assert ec["classes_used"] == 2 and 0 <= ec["cov_rel_fro"] <= 2


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: A.run_fixmatch("breast_cancer", "Imb. (60)", 0.7, 0, scale="quick"), "threshold must be one of"),
        (lambda: A.run_fixmatch("breast_cancer", "(15,45)", 0.9, 0, scale="quick"), "Table 3 setting"),
        (lambda: A.run_nn("breast_cancer", "(15,45)", "maybe", 0, scale="quick"), "nn must be one of"),
        (lambda: A.run_nn("breast_cancer", "(15,45)", "on", 0, scale="huge"), "scale must be one of"),
        (lambda: A.run_ec_diagnostic("breast_cancer", "(15,45)", 0, method="PL", scale="quick"), "method must be"),
        (lambda: A.build_task("iris", "(15,45)", 0, n_unlabeled=10, n_val=10), "dataset must be one of"),
        (lambda: A.run_config("bogus", "breast_cancer", "(15,45)", 0), "experiment must be"),
    ],
)
def test_bad_arguments_raise_clear_errors(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_cifar10_multiclass_task_follows_mnist_protocol(monkeypatch):
    from sslkit.data import Dataset

    rng = np.random.default_rng(0)
    y = np.repeat(np.arange(10), 260)
    fake = Dataset(
        name="cifar10",
        X=rng.integers(0, 256, (2600, 32, 32, 3), dtype=np.uint8),
        y=y,
        X_test=rng.integers(0, 256, (50, 32, 32, 3), dtype=np.uint8),
        y_test=np.arange(50) % 10,
        classes=tuple(str(c) for c in range(10)),
        source="fake",
    )
    for module in (paper_a, paper_a.protocol):  # build_task reads the protocol module's, extra_rows the package's
        monkeypatch.setattr(module, "source_dataset", lambda dataset, data_root=None: fake)
    task = A.build_task("cifar10", "Sev. (500)", 0, n_unlabeled=300, n_val=200)
    assert task.labeled_counts == paper_a.labeled_counts("mnist", "Sev. (500)")
    assert tuple(task.X_l.shape[1:]) == (3, 32, 32) and task.X_val.shape[0] == 200 and task.X_u.shape[0] == 300
    assert task.X_test.shape[0] == 50 and task.prior == pytest.approx(np.full(10, 0.1))
    assert np.intersect1d(task.indices["labeled"], task.indices["val"]).size == 0
    assert task.make_model()(task.X_l[:2])[0].shape == (2, 10)
    X, _ = A.extra_rows(task, task.indices["labeled"][:5])
    torch.testing.assert_close(X, task.X_l[:5])  # same normalisation as the task's


# -------------------------------------------------------------------------------------------- grids and numbers
def test_paper_tables_have_every_row_and_consistent_deltas():
    sizes = {3: 27, 4: 18, 5: 9, 6: 16, 7: 8, 8: 15, 9: 10, 10: 10}
    assert {t: len(v) for t, v in A.PAPER_TABLES.items()} == sizes
    for t in range(6, 11):
        for key, row in A.PAPER_TABLES[t].items():
            # Δ = off − on from unrounded means: at most 0.05 + 0.05 (the two means) + 0.05 (Δ) of rounding
            assert abs(row["off"][0] - row["on"][0] - row["delta"]) <= 0.15 + 1e-9, (t, key)
    assert {v["threshold"] for v in A.PAPER_TABLE3.values()} <= set(A.FIXMATCH_THRESHOLDS)
    assert all(0 <= v["cov_rel_fro"][0] <= 2 for v in A.PAPER_TABLE5.values())
    # "NN on" is the Ours (Iter) column of Tables 1-2, except in six rows of the paper (typed as printed)
    ref = {**paper_a.PAPER_TABLE1, **paper_a.PAPER_TABLE2}
    differ = {
        (t, key)
        for t in range(6, 11)
        for key, row in A.PAPER_TABLES[t].items()
        if key in ref and row["on"] != ref[key]["Ours (Iter)"]
    }
    assert differ == {
        (8, ("mnist", "Bal. (200)")),
        (8, ("mnist", "Bal. (500)")),
        (8, ("mnist", "Bal. (1500)")),
        (8, ("covertype", "Bal. (140)")),
        (10, ("mnist", "Sev. (500)")),
        (10, ("covertype", "Sev. (140)")),
    }
    for d, s in A.PAPER_TABLE3:
        paper_a.labeled_counts(d, A.table3_setting(d, s))  # every row maps to a valid setting
    assert A.table3_setting("adult", "Imb. (60)") == "(15,45)"
    assert A.table3_setting("adult", [45, 15]) == [45, 15]  # explicit counts pass through


def test_table_grids():
    assert len(A.table_grid(3)) == 27 * 3
    assert len(A.table_grid(4)) == 18
    assert len(A.table_grid(6)) == 32 and {g["nn"] for g in A.table_grid(6)} == {"on", "off"}
    assert A.table_grid(5, datasets=["shuttle"]) == [
        {"experiment": "ec_diag", "dataset": "shuttle", "setting": s} for s in ("Bal. (70)", "Mild (140)")
    ]
    with pytest.raises(ValueError, match="table must be one of"):
        A.table_grid(2)


def test_select_threshold_keeps_highest_mean_best_validation():
    def rec(t, seed, val):
        return {
            "config": {"dataset": "adult", "setting": "Bal. (60)", "threshold": t},
            "seed": seed,
            "metrics": {"best_val_acc": val, "test_acc": 0.0},
        }

    records = [rec(0.8, 0, 80), rec(0.8, 1, 90), rec(0.9, 0, 86), rec(0.9, 1, 86), rec(0.95, 0, 70), rec(0.95, 1, 99)]
    kept = A.select_threshold(records)
    assert [r["config"]["threshold"] for r in kept] == [0.9, 0.9]
    assert all(r["config"]["selected"] == 0.9 for r in kept)
