"""Paper B's active-learning loop (sslkit.experiments.paper_b.active): its bookkeeping, Tables 2 and 3 end to end on a
tiny protocol, and the experiments' input checks. The selections themselves: test_active_<module>.py."""

from __future__ import annotations

import numpy as np
import pytest

pytestmark = pytest.mark.usefixtures("one_thread")


def test_active_learning_loop_bookkeeping():
    from sslkit.experiments.paper_b.active import active_learning_loop

    seen = []

    def train(labeled):
        seen.append(labeled.copy())
        return labeled, {"acc": float(len(labeled))}

    def select(state, labeled, unlabeled, k):
        assert not set(unlabeled) & set(labeled) and len(unlabeled) + len(labeled) == 30
        return np.arange(k)[::-1]  # the first k unlabeled rows

    history, labeled = active_learning_loop(30, 4, [3, 5], train, select, seed=1)
    assert [h["n_labeled"] for h in history] == [4, 7, 12] and [h["acc"] for h in history] == [4.0, 7.0, 12.0]
    assert "select_seconds" not in history[0] and "select_seconds" in history[2]
    assert len(set(labeled)) == 12 and list(seen[1][:4]) == list(seen[0])
    first = np.random.default_rng(1).choice(30, 4, replace=False)
    assert list(labeled[:4]) == list(first)
    with pytest.raises(RuntimeError, match="distinct"):
        active_learning_loop(30, 4, [3], train, lambda *a: [0, 0, 1])
    with pytest.raises(ValueError, match="exceed the pool"):
        active_learning_loop(10, 4, [3, 5], train, select)


def test_table2_and_table3_run_end_to_end_on_a_tiny_protocol():
    from sslkit.experiments.paper_b.active import TABLE2_PROTOCOLS, table2_run
    from sslkit.experiments.paper_b.ssal import TABLE3_PROTOCOLS, table3_run

    p2 = {
        **TABLE2_PROTOCOLS["quick"],
        "epochs": 3,
        "vaal": {"epochs": 1, "batch_size": 8, "channels": (16,), "latent_dim": 4},
    }
    for method in ("CoreSet", "VAAL", "LearnLoss", "MCDAL", "SL+RDSS"):
        r = table2_run(method, 0, protocol=p2, device="cpu")
        assert r["budgets"] == [30, 45, 60] and len(r["test_acc_curve"]) == 3
        assert all(0 <= a <= 100 for a in r["test_acc_curve"])
    p3 = {
        **TABLE3_PROTOCOLS["quick"],
        "ssl": {**TABLE3_PROTOCOLS["quick"]["ssl"], "epochs": 1, "iterations_per_epoch": 5},
    }
    for method in ("TOD-Semi", "RDSS"):
        r = table3_run(method, "FreeMatch", 0, protocol=p3, device="cpu")
        assert 0 <= r["test_acc"] <= 100 and (r["first_stage_acc"] is None) == (method == "RDSS")


def test_experiment_inputs_are_checked_and_budgets_follow_the_protocol():
    from sslkit.experiments.paper_b.active import PAPER_TABLE2_B, table2_budgets, table2_run
    from sslkit.experiments.paper_b.ssal import PAPER_TABLE3_B, PAPER_TABLE6_B, table3_run, table6_run

    assert table2_budgets("paper") == [5000, 7500, 10000] and table2_budgets("cpu") == [60, 90, 120]
    with pytest.raises(ValueError, match="method must be one of"):
        table2_run("BALD", 0, protocol="quick")
    with pytest.raises(ValueError, match="protocol must be one of"):
        table3_run("RDSS", "FlexMatch", 0, protocol="huge")
    with pytest.raises(ValueError, match="Table 2's CPU pool"):
        table6_run("cifar10", 0, algorithm="FlexMatch", selector="RDSS", m=40)
    with pytest.raises(ValueError, match="40 rows"):
        table6_run("digits", 0, algorithm="FlexMatch", selector="RDSS", m=100)
    with pytest.raises(ValueError, match="selector must be"):
        table6_run("digits", 0, algorithm="FlexMatch", selector="USL", m=40)
    with pytest.raises(ValueError, match="quick protocol on digits"):
        table6_run("mnist", 0, method="CoreSet")
    # the paper's numbers as printed: Table 2's AL cells are Table 6's cells at the same budget
    t6 = {(r["method"], r["dataset"], r["budget"]): r["acc"] for r in PAPER_TABLE6_B}
    assert all(t6[k] == v for k, v in PAPER_TABLE2_B.items() if k[0] in ("CoreSet", "VAAL", "LearnLoss", "MCDAL"))
    assert PAPER_TABLE3_B[("MMA", "FlexMatch")] == 74.61 and len(PAPER_TABLE6_B) == 56
