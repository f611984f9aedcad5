"""experiments.paper_c: the run schedule of Algorithm 1 (§3.4-3.5), Full-EarlyStop, the speed-up rows, the
variants' rows, and a quick-scale run's determinism and errors."""

from __future__ import annotations

import math

import pytest
import torch

from sslkit.experiments.paper_c.tradeoff import (
    PAPER_CLAIMS,
    PAPER_TABLES,
    PROTOCOLS,
    build_task,
    full_earlystop,
    run_schedule,
    tradeoff_grid,
    tradeoff_rows,
    tradeoff_run,
)
from sslkit.experiments.paper_c.variants import extended_grid, extended_rows, variant_grid, variant_rows


@pytest.mark.parametrize("protocol, m", [("paper_cifar10", 50000), ("paper_svhn", 73257), ("cpu", 10000)])
@pytest.mark.parametrize("fraction", [0.1, 0.2, 0.3])
def test_a_warm_coreset_run_takes_about_t_k_over_b_iterations(protocol, m, fraction):
    p = PROTOCOLS[protocol]
    T, B = p["epochs"], p["batch_size"]
    s = run_schedule(protocol, "retrieve", fraction, m)
    k = round(fraction * m)
    assert s["k"] == k and s["warm_epochs"] == round(p["kappa"] * T * fraction)
    assert s["epochs"] == s["warm_epochs"] + T - round(p["kappa"] * T)
    ideal = T * math.ceil(k / B)
    assert abs(s["total_steps"] - ideal) <= math.ceil(m / B)  # up to rounding T_w to whole epochs
    full = run_schedule(protocol, "full", 1.0, m)
    assert full["total_steps"] == T * math.ceil(m / B)
    assert full["total_steps"] / s["total_steps"] == pytest.approx(1 / fraction, rel=0.05)
    cold = run_schedule(protocol, "retrieve", fraction, m, warm=False)
    assert cold["warm_epochs"] == 0 and cold["epochs"] == T and cold["total_steps"] == ideal


def test_full_earlystop_reads_the_full_curve_at_a_time():
    full = {"curve": [[10.0, 50.0, 5.0], [20.0, 60.0, 10.0], [30.0, 70.0, 15.0]]}
    assert full_earlystop(full, 25.0) == 60.0 and full_earlystop(full, 30.0) == 70.0
    assert full_earlystop(full, 5.0) == 50.0  # not even one epoch: the first epoch's
    assert full_earlystop(full, 10.0, clock="cpu_seconds") == 60.0


def record(method, fraction, seed, acc, seconds, sel=0.0, **extra):
    curve = [[seconds * (i + 1) / 4, acc - 4 + i, seconds * (i + 1) / 4] for i in range(4)]
    return {
        "config": {"protocol": "quick", "algorithm": "vat", "method": method, "fraction": fraction, **extra},
        "seed": seed,
        "metrics": {
            "test_acc": acc,
            "seconds": seconds,
            "cpu_seconds": seconds,
            "selection_seconds": sel,
            "selection_cpu_seconds": sel,
            "curve": curve,
        },
    }


def test_tradeoff_rows_speedup_degradation_and_full_earlystop():
    recs = [
        record("full", 1.0, 0, 90.0, 100.0),
        record("retrieve", 0.1, 0, 88.0, 20.0, sel=5.0),
        record("random", 0.1, 1, 80.0, 10.0),  # its Full run (seed 1) is missing: left out
        record("retrieve", 0.1, 0, 70.0, 20.0, warm=False),
    ]  # a variant: not in the main figure
    rows = {(r["method"], r["seed"]): r for r in tradeoff_rows(recs)}
    assert set(rows) == {("full", 0), ("retrieve", 0), ("full_earlystop", 0)}
    ret = rows["retrieve", 0]
    assert ret["speedup"] == pytest.approx(5.0) and ret["speedup_no_selection"] == pytest.approx(100 / 15)
    assert ret["degradation"] == pytest.approx(2.0)
    assert rows["full_earlystop", 0]["test_acc"] == 86.0  # Full's curve: 25 s -> first point (86), 50 s ...
    vrows = variant_rows(recs)
    assert sorted(r["variant"] for r in vrows) == ["default", "no_warm"]
    with pytest.raises(ValueError, match="clock"):
        tradeoff_rows(recs, clock="hours")


def test_grids_and_paper_numbers():
    with pytest.raises(ValueError, match="methods must be a list of"):
        tradeoff_grid("cpu", methods="full")  # a string would be read letter by letter
    with pytest.raises(ValueError, match="algorithms must be a list of"):
        tradeoff_grid("cpu", algorithms=("vat", "mixmatch"))
    grid = tradeoff_grid("cpu")
    assert grid[0]["method"] == "full" and len(grid) == 1 + 4 * 3
    assert len(variant_grid("cpu")) == 2 * 3
    assert PAPER_TABLES[("vat", "cifar10", "retrieve", 0.3)] == {
        "mean": 87.02,
        "std": 0.105,
        "hours": 10.27,
        "tables": ("5", "8"),
    }
    assert len(PAPER_TABLES) == 60 and PAPER_CLAIMS[("fixmatch", "cifar10")] == {"speedup": 3.8, "degradation": 0.7}
    with pytest.raises(ValueError, match="protocol"):
        tradeoff_grid("imagenet")


@pytest.mark.slow  # trains
def test_a_quick_run_is_deterministic_and_bad_configs_are_refused():
    torch.set_num_threads(1)
    task = build_task("quick", 0)
    a = tradeoff_run(protocol="quick", algorithm="vat", method="retrieve", fraction=0.1, seed=0, task=task)
    b = tradeoff_run(protocol="quick", algorithm="vat", method="retrieve", fraction=0.1, seed=0, task=task)
    assert a["test_acc"] == b["test_acc"] and [c[1] for c in a["curve"]] == [c[1] for c in b["curve"]]
    sched = run_schedule("quick", "retrieve", 0.1, task["X_u"].shape[0])
    assert a["iterations"] == sched["total_steps"] and a["epochs"] == sched["epochs"]
    assert a["n_selections"] == len(range(sched["warm_epochs"], sched["epochs"], PROTOCOLS["quick"]["every"])) == 2
    assert 0 < a["selection_seconds"] < a["seconds"]
    with pytest.raises(ValueError, match="method"):
        tradeoff_run(protocol="quick", algorithm="vat", method="glister", fraction=0.1, seed=0, task=task)
    with pytest.raises(ValueError, match="algorithm"):
        tradeoff_run(protocol="quick", algorithm="mixmatch", method="random", fraction=0.1, seed=0, task=task)
    with pytest.raises(ValueError, match="fraction"):
        tradeoff_run(protocol="quick", algorithm="vat", method="random", fraction=1.5, seed=0, task=task)


def test_extended_runs_lengthen_only_the_coreset_phase():
    base = run_schedule("cpu", "retrieve", 0.2, 10000)
    ext = run_schedule("cpu", "retrieve", 0.2, 10000, extend=2.0)
    subset = base["epochs"] - base["warm_epochs"]
    assert ext["warm_epochs"] == base["warm_epochs"] and ext["epochs"] - ext["warm_epochs"] == 2 * subset
    assert ext["total_steps"] - base["total_steps"] == subset * math.ceil(2000 / 50)
    for bad in (0.5, float("nan"), True, "2"):
        with pytest.raises(ValueError, match="extend"):
            run_schedule("cpu", "retrieve", 0.2, 10000, extend=bad)
    with pytest.raises(ValueError, match="coreset runs"):
        run_schedule("cpu", "full", 1.0, 10000, extend=2.0)
    assert [g["extend"] for g in extended_grid("cpu", extends=(1.5, 2))] == [1.5, 2.0, 1.5, 2.0]


def test_extended_rows_find_when_the_run_matches_full():
    full = {"test_acc": 90.0, "cpu_seconds": 100.0, "seconds": 100.0, "curve": [[50, 85.0, 50], [100, 90.0, 100]]}
    ext = {
        "test_acc": 91.0,
        "cpu_seconds": 60.0,
        "seconds": 60.0,
        "curve": [[20, 80.0, 20], [40, 90.5, 40], [60, 91.0, 60]],
    }
    never = {**ext, "curve": [[20, 80.0, 20], [60, 89.0, 60]], "test_acc": 89.0}
    main = {"protocol": "cpu", "algorithm": "vat"}
    recs = [
        {"config": {**main, "method": "full", "fraction": 1.0}, "seed": 0, "metrics": full},
        {"config": {**main, "method": "retrieve", "fraction": 0.3, "extend": 2.0}, "seed": 0, "metrics": ext},
        {"config": {**main, "method": "retrieve", "fraction": 0.2, "extend": 2.0}, "seed": 0, "metrics": never},
        {
            "config": {**main, "method": "retrieve", "fraction": 0.2, "extend": 2.0},
            "seed": 1,
            "metrics": ext,
        },  # no Full
    ]
    rows = extended_rows(recs)
    assert len(rows) == 2
    assert rows[0]["match_speedup"] == pytest.approx(100 / 40) and rows[0]["speedup"] == pytest.approx(100 / 60)
    assert rows[1]["match_speedup"] is None


@pytest.mark.slow  # trains
def test_train_with_curve_records_one_point_per_epoch_on_the_test_set_and_leaves_evaluation_out():
    from sslkit.algorithms import VAT
    from sslkit.experiments.paper_c.tradeoff import make_model, train_with_curve

    torch.set_num_threads(1)
    task = build_task("quick", 0)
    tr, curve = train_with_curve(
        make_model("quick", task, 0),
        VAT(1.0),
        task,
        epochs=3,
        iterations_per_epoch=4,
        batch_size=20,
        unlabeled_batch_size=20,
        seed=0,
        hooks=[],
    )
    assert len(curve) == tr.epochs_run_ == 3
    # the last point's accuracy is the trained model's on the test set, in %, not on another split
    assert curve[-1][1] == round(100.0 * tr.score(task["X_test"], task["y_test"]), 4)
    wall, cpu = [p[0] for p in curve], [p[2] for p in curve]
    assert all(b > a for a, b in zip(wall, wall[1:])) and all(b >= a for a, b in zip(cpu, cpu[1:]))
    assert wall[-1] == pytest.approx(tr.timings_["train"], abs=1e-3)


def test_readings_pair_by_seed_and_show_ci_and_p():
    """Both readings of CRAIG's weights against Retrieve: paired on the seeds both have (a mean-1 reading with
    seeds 0-1 against Retrieve's 0-2 pairs on 0-1), the cell shows verdict, 95 % CI and p."""
    from sslkit.experiments.paper_c.report import readings, readings_table

    def rec(method, seed, acc, mean1=False):
        config = {"protocol": "cpu", "algorithm": "vat", "method": method, "fraction": 0.1}
        if mean1:
            config["normalize_weights"] = True
        return {"config": config, "seed": seed, "metrics": {"test_acc": acc}}

    records = [rec("retrieve", s, 90.0 + s) for s in range(3)]
    records += [rec("craig", s, 80.0 + s + 0.1 * s * s) for s in range(3)]  # raw: ~10 points below, paired
    records += [rec("craig", s, 95.0 + s, mean1=True) for s in range(2)]  # mean 1: 5 points above on 0-1
    rd = readings(records, algorithms=("vat",), methods=("craig",))
    raw, mean1 = rd[rd["reading"] == rd["reading"].iloc[0]].iloc[0], rd.iloc[1]
    assert raw["verdict"] == "higher" and raw["seeds"] == 3 and ("p =" in raw["test"] or "p <" in raw["test"])
    assert mean1["seeds"] == 2 and mean1["Retrieve"] == 90.5  # Retrieve on the shared seeds 0-1 only
    assert mean1["Retrieve minus it"] == -5.0 and "95 % CI" in mean1["test"]
    html = readings_table(rd, "vat")._repr_html_()
    assert "95 % CI" in html and ("p =" in html or "p &lt;" in html or "p <" in html)


def test_paper_curve_is_figure4s_axes_from_tables_5_10():
    """Speed-up = Full's hours / the method's, loss = Full's accuracy - the method's (VAT, CIFAR-10: Full 87.8 %
    in 30.41 h; Retrieve 84.0 / 85.9 / 87.02 % in 3.5 / 7.06 / 10.27 h), none where the tables print none."""
    from sslkit.experiments.paper_c.report import paper_curve

    c = paper_curve("vat", "retrieve")
    assert c["fraction"] == [0.1, 0.2, 0.3]
    assert c["speedup"] == pytest.approx([30.41 / 3.5, 30.41 / 7.06, 30.41 / 10.27])
    assert c["degradation"] == pytest.approx([87.8 - 84.0, 87.8 - 85.9, 87.8 - 87.02])
    assert paper_curve("vat", "gradmatch") == {"fraction": [], "speedup": [], "degradation": []}
