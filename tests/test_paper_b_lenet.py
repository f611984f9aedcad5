"""Paper B's Tables 3, 4 and 6 on the LeNet stand-in where SSL acts (sslkit.experiments.paper_b.experiments_lenet,
the Table 3 protocol "lenet", runs.table4_lenet_run, claims_active.lenet_as_table6) and the ledger's tests on records
it does not read (report.verdicts.beside_ledger)."""

import os
from pathlib import Path

import numpy as np
import pytest

from sslkit.experiments.paper_b import experiments_lenet as LN
from sslkit.experiments.paper_b import runs as R
from sslkit.experiments.paper_b import selection as S
from sslkit.experiments.paper_b import ssal as SA
from sslkit.experiments.paper_b import ssl as B
from sslkit.experiments.report.claim import FAILS, HOLDS, OPEN, Claim
from sslkit.experiments.report.ledger import pairs_verdict
from sslkit.experiments.report.verdicts import beside_ledger

DATA_DIR = os.environ.get("SSLKIT_DATA_DIR")
HAS_MNIST = bool(DATA_DIR) and (Path(DATA_DIR) / "mnist").is_dir()
RESULTS = Path(__file__).resolve().parents[1] / "notebooks" / "results"
LENET_EMA = {**B.LENET_PROTOCOL, "freematch_ema_p": B.LENET_FREEMATCH_EMA}


def test_tables_3_and_4_train_the_learner_of_the_reading_that_passes(monkeypatch):
    """Table 3's protocol "lenet" and Table 4's LeNet run use the pool, network, views, schedule and FreeMatch EMA of
    b_table1_lenet's reading freematch_ema; their grids are Table 3's and Table 4's rows at the stand-in's budgets."""
    p = SA.TABLE3_PROTOCOLS["lenet"]
    assert p["ssl"] == LENET_EMA and p["ssl"]["freematch_ema_p"] == 0.99
    assert {k: p["data"][k] for k in B.LENET_DATA} == B.LENET_DATA and (p["random"], p["selected"]) == (20, 20)
    assert B.check_protocol(p["ssl"])["model"] == "lenet_mnist"
    seen = {}
    monkeypatch.setattr(R, "table4_ssl_run", lambda *a, **k: seen.update(args=a, **k) or {})
    R.table4_lenet_run("0.9", 40, 3)
    assert seen["args"] == ("0.9", 40, 3) and seen["protocol"] == LENET_EMA
    assert (seen["dataset"], seen["n_pool"], seen["n_test"], seen["pca_dim"]) == ("mnist", 10000, 10000, 50)
    t3 = LN.TABLE3_LENET.scales["cpu"].configs()
    assert t3 == SA.table3_grid("lenet") and len(t3) == 2 * len(SA.TABLE3_METHODS)
    t4 = LN.TABLE4_LENET.scales["cpu"].configs()
    assert {(c["alpha"], c["m"]) for c in t4} == {(a, m) for a in S.TABLE4_ALPHAS for m in (40, 250)}
    assert len(t4) == 16 and list(LN.TABLE4_LENET.scales["cpu"].seeds) == list(range(5))


def test_table4_ssl_run_takes_a_protocol_dict_and_refuses_a_bad_one_before_any_data():
    with pytest.raises(ValueError, match=r"unknown keys \['bogus'\]"):
        S.table4_ssl_run("0", 40, 0, protocol={"bogus": 1})
    with pytest.raises(ValueError, match="protocol must be one of"):
        S.table4_ssl_run("0", 40, 0, protocol="lenet5")
    with pytest.raises(TypeError, match="protocol must be a name"):
        S.table4_ssl_run("0", 40, 0, protocol=3)


@pytest.mark.skipif(not HAS_MNIST, reason="needs MNIST under SSLKIT_DATA_DIR")
def test_table3_lenet_protocol_trains_on_images_and_selects_on_principal_components():
    """The LeNet protocol's data: the SSL model sees the 10 000 pool images, the model-free selectors 50 principal
    components of the same rows, the test set all 10 000 test images."""
    X, y, Xs, ys, F, Ft, info = SA.table3_data("lenet")
    assert X.shape == (10000, 28, 28) and Xs.shape == (10000, 28, 28)
    assert F.shape == (10000, 50) and Ft.shape == (10000, 50) and len(y) == len(F)
    assert set(np.unique(y)) == set(range(10)) and info["num_classes"] == 10


def test_lenet_tables_share_the_readings_controls():
    """Tables 3 and 4 on the LeNet stand-in read the reading freematch_ema's controls on b_table1_lenet's records
    (same arms, same declared seeds): Table 3 all four, Table 4 its three SSL controls and more labels above fewer
    on its own grid in place of the fourth."""
    from sslkit.experiments import catalog
    from sslkit.experiments.paper_b import controls as BC

    reading = [c for c in BC.CONTROLS["b_table1_lenet/cpu"] if c.stand_in == BC.LENET_EMA_STAND_IN]
    for name, n in (("b_table3_lenet/cpu", 4), ("b_table4_lenet/cpu", 3)):
        shared = BC.CONTROLS[name][:n]
        assert all(c.reads == (LN.TABLE1_LENET, "cpu") for c in shared)
        assert [(c.id, c.higher, c.lower, c.seeds) for c in shared] == [
            (c.id, c.higher, c.lower, c.seeds) for c in reading[:n]
        ]
    assert "ctl-budget" in reading[3].id
    own = BC.CONTROLS["b_table4_lenet/cpu"][3:]
    assert [(c.higher["m"], c.lower["m"]) for c in own] == [(250, 40)] * 2 and not any(c.reads for c in own)
    t3 = catalog.controls_table("b_table3_lenet", "cpu")
    assert (t3.rows["outcome"] == "shown").all() and len(t3.rows) == 4


def _claim(fn) -> Claim:
    return Claim("X-1", "X", "Table 0", "", "§0", "a above b", "a significantly above b", (), fn)


def test_beside_ledger_runs_a_claims_test_with_holm_and_the_mde_beside_not_resolved():
    rng = np.random.default_rng(0)
    far = {s: 10.0 + rng.normal() for s in range(8)}
    base = {s: rng.normal() for s in range(8)}
    near = {s: base[s] + rng.normal() * 3 for s in range(8)}
    holds = _claim(lambda recs: pairs_verdict([("a vs b", far, base)], "a against b"))
    table = beside_ledger([holds], ["X-1"], [])
    assert table["verdict"].item() == HOLDS and table["deciding comparison"].item().startswith("a vs b: +")
    both = _claim(lambda recs: pairs_verdict([("a vs b", far, base), ("c vs b", near, base)], "x"))
    row = beside_ledger([both], ["X-1"], []).iloc[0]
    assert row["verdict"] == OPEN and "detectable:" in row["deciding comparison"]
    below = _claim(lambda recs: pairs_verdict([("b vs a", base, far)], "b against a"))
    assert beside_ledger([below], ["X-1"], [])["verdict"].item() == FAILS
    with pytest.raises(KeyError, match=r"no claim \['X-2'\]"):
        beside_ledger([holds], ["X-2"], [])


LENET_T1 = RESULTS / "b_table1_lenet" / "cpu.jsonl"
TABLE2_CPU = RESULTS / "b_table2" / "cpu.jsonl"


@pytest.mark.skipif(not (LENET_T1.is_file() and TABLE2_CPU.is_file()), reason="no committed records")
def test_table6_on_lenet_reads_table1s_40_label_runs_beside_table2s_al_runs():
    """Table 6's SSL cells on the LeNet stand-in are b_table1_lenet's runs at 40 labels (RDSS / Random; FlexMatch
    and FreeMatch with the scaled EMA only), on Table 2's CPU pool and test set; the page's verdicts on them."""
    from sslkit.experiments import catalog, load_results
    from sslkit.experiments.paper_b.active import AL_METHODS, TABLE2_PROTOCOLS
    from sslkit.experiments.paper_b.claims_active import CLAIMS, lenet_as_table6

    raw = load_results(LENET_T1)
    ssl = lenet_as_table6(raw)
    arms = {(r["config"]["algorithm"], r["config"]["selector"]) for r in ssl}
    assert arms == {(a, s) for a in ("FlexMatch", "FreeMatch") for s in ("RDSS", "Random")}
    assert {r["config"]["m"] for r in ssl} == {40} and all("freematch_ema" not in r["config"] for r in ssl)
    free = [r for r in raw if r["config"]["algorithm"] == "FreeMatch" and r["config"]["m"] == 40]
    free = [r for r in free if r["config"]["selector"] in ("RDSS", "Random")]
    assert sum(r["config"]["algorithm"] == "FreeMatch" for r in ssl) == sum(
        r["config"].get("freematch_ema") == B.LENET_FREEMATCH_EMA for r in free
    )
    pool = TABLE2_PROTOCOLS["cpu"]
    assert (pool["dataset"], pool["n_pool"], pool["n_test"]) == ("mnist", B.LENET_DATA["n_pool"], 10000)
    assert all(r["metrics"]["n_pool"] == 10000 and r["metrics"]["n_test"] == 10000 for r in ssl)
    al = [r for r in catalog.records("b_table2", "cpu") if r["config"]["method"] in AL_METHODS]
    assert sorted({r["seed"] for r in al}) == list(range(5))
    table = beside_ledger(CLAIMS, ("B-D6-1", "B-D6-2"), ssl + al).set_index("claim")
    # every SSL arm is significantly above every AL method with three times the labels (Holm within each claim)
    assert table["verdict"].to_dict() == {"B-D6-1": HOLDS, "B-D6-2": HOLDS}
    assert "LearnLoss @ 120: +9.39 (95 % CI +3.96" in table.loc["B-D6-1", "deciding comparison"]


LENET_T3 = RESULTS / "b_table3_lenet" / "cpu.jsonl"
LENET_T4 = RESULTS / "b_table4_lenet" / "cpu.jsonl"


@pytest.mark.skipif(not (LENET_T3.is_file() and LENET_T4.is_file()), reason="no committed records")
def test_the_ledger_decides_tables_3_and_4_on_the_lenet_stand_ins_which_pass_their_controls():
    """The ledger's Table 3 and Table 4 claims read the LeNet stand-ins, whose controls all show, so the gate lets
    their verdicts count; on five seeds every one is "not resolved", each with its deciding comparison's power."""
    from sslkit.experiments import catalog, load_results

    t3, t4 = load_results(LENET_T3), load_results(LENET_T4)
    assert sorted({r["seed"] for r in t3}) == sorted({r["seed"] for r in t4}) == list(range(5))
    assert len(t3) == 5 * len(SA.table3_grid("lenet")) and len(t4) == 5 * 16
    # the 20 random labels are shared by every method of a (seed, algorithm); the first stage is shared too
    first = {(r["seed"], r["config"]["algorithm"], r["metrics"]["first_stage_acc"]) for r in t3}
    assert len({k[:2] for k in first if k[2] is not None}) == len({k for k in first if k[2] is not None}) == 10
    for name in ("b_table3_lenet", "b_table4_lenet"):
        assert catalog.controls_table(name, "cpu").states["state"].item() == "passes"
    ledger = catalog.ledger(paper="B").set_index("id")
    rows = ledger.loc[["B-T3-1", "B-T3-2", "B-T4-1", "B-T4-2", "B-T4-3"]]
    assert (rows["verdict"] == OPEN).all() and (rows["level"] == "CPU stand-in").all()
    assert rows["records"].str.contains("b_table3_lenet/cpu|b_table4_lenet/cpu").all()
    assert (rows["mde"] > 0).all()
    # RDSS and Random are within a point at 40 MNIST labels in FreeMatch (paired over the five seeds)
    assert "FreeMatch vs Random -0.13 (95 % CI -0.82 to +0.56" in ledger.loc["B-T3-2", "evidence"]
