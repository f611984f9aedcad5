"""The ledger's one verdict rule end to end: Holm's correction within a claim, "does not hold" only on a
significant effect against the claim, ties and seed cut-offs that never decide, readings that must agree, the
minimum detectable effect, and the ledger's export columns."""

import json
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as st

from sslkit.experiments import catalog
from sslkit.experiments.paper_b import claims as CB
from sslkit.experiments.paper_b import claims_selection as CBS
from sslkit.experiments.paper_c import claims as CC
from sslkit.experiments.report import ledger as L
from sslkit.experiments.report import stats as S
from sslkit.experiments.report import verdicts as V

H, F, OPEN_, N = L.HOLDS, L.FAILS, L.OPEN, L.NOT_RUN


def rec(config, seed, **metrics):
    return {"key": f"{json.dumps(config, sort_keys=True)}-{seed}", "config": config, "seed": seed, "metrics": metrics}


def claim(fn, **kw) -> L.Claim:
    return L.Claim("X-1", "A", "Table 1", "", "§1", "quote", "test", (), fn, **kw)


@pytest.fixture(scope="module")
def committed():
    return catalog.ledger()


# ------------------------------------------------------------------------------------------------ Holm


def test_holm_matches_the_hand_computation():
    # sorted 0.01 < 0.03 < 0.04 < 0.5: 4 x 0.01, max(0.04, 3 x 0.03), max(0.09, 2 x 0.04), max(0.09, 1 x 0.5)
    assert S.holm([0.01, 0.04, 0.03, 0.5]) == pytest.approx([0.04, 0.09, 0.09, 0.5])
    assert S.holm([0.9, 0.6]) == pytest.approx([1.0, 1.0])  # 2 x 0.6 capped at 1, and monotone after it
    assert S.holm([0.9, 0.2]) == pytest.approx([0.9, 0.4])  # max(0.4, 1 x 0.9)
    assert S.holm([0.3]) == [0.3] and S.holm([]) == []
    assert S.holm([0.5, 0.4, 0.3]) == pytest.approx([0.9, 0.9, 0.9])  # capped at 1 only where it exceeds it


@pytest.mark.parametrize("seed", range(5))
def test_holm_matches_the_step_down_formula(seed):
    ps = np.random.default_rng(seed).uniform(0, 0.2, size=7)
    order = np.argsort(ps)
    m = len(ps)
    expect = np.empty(m)
    running = 0.0
    for j, i in enumerate(order):  # statsmodels' multipletests(method="holm") formula
        running = max(running, min(1.0, (m - j) * ps[i]))
        expect[i] = running
    assert S.holm(ps) == pytest.approx(expect.tolist())


def test_two_cells_with_equal_numbers_are_two_hypotheses():
    a, b = {s: 1.0 + 0.1 * s for s in range(5)}, {s: 0.9 + 0.12 * s for s in range(5)}
    with S.family() as f:
        S.judge(S.compare(a, b), label="row 1")
        S.judge(S.compare(a, b), label="row 2")  # the same numbers in another cell: counted
        S.judge(S.compare(a, b), label="row 2")  # the same cell judged twice: once
    assert len(f.judged) == 2
    (key,) = f.holm()
    assert f.holm()[key] == pytest.approx(min(1.0, 2 * S.compare(a, b).p))


def test_holm_refuses_a_non_probability():
    with pytest.raises(ValueError, match="p-values"):
        S.holm([0.2, 1.5])


def test_a_claim_of_many_comparisons_is_decided_by_the_adjusted_p():
    """One comparison of 20 at raw p ~ 0.01 is significant alone, not after Holm over 20: the claim's verdict is
    "not resolved", and the ledger shows the raw p beside the adjusted one."""
    base = {s: 80.0 + s for s in range(8)}
    effect = [0.5, 1.2, -0.3, 0.9, 0.4, 1.1, 0.2, 0.8]  # mean 0.6, t = 3.4 on 7 df: p ~ 0.01
    noise = [0.3, -0.3, 0.2, -0.2, 0.1, -0.1, 0.4, -0.4]  # mean 0: p = 1
    pairs = [("row 0", {s: base[s] - effect[s] for s in base}, base)]
    pairs += [(f"row {k}", {s: base[s] - noise[s] * (1 + k / 10) for s in base}, base) for k in range(1, 20)]
    raw = S.compare(pairs[0][1], pairs[0][2])
    assert raw.verdict == "lower" and 0.0025 < raw.p < 0.05  # significant alone, not among 20
    c = claim(lambda records: L.pairs_verdict(pairs, "rows"))
    assert c.fn([])[0] == F  # outside the ledger: the raw rule
    j = V.judgement(c, [{}])
    assert j.verdict == OPEN_ and len(j.tests) == 20
    first = next(t for t in j.tests if t[0] == "row 0")[1]
    assert first.p == pytest.approx(raw.p) and first.p_adj == pytest.approx(
        min(1.0, S.holm([t[1].p for t in j.tests])[0])
    )
    assert "Holm" in first.short()


# ------------------------------------------------------------------------------------ the guard


def test_does_not_hold_needs_a_significant_effect_against_the_claim():
    """A claim function that says "does not hold" on a cut-off (no judged comparison against it) is not resolved
    in the ledger; the same with a significant effect against it stands."""
    flat = {s: 1.0 + 0.1 * np.sin(s) for s in range(8)}

    def cutoff(records):
        S.judge(S.compare(flat, {s: v + 0.01 * np.cos(s) for s, v in flat.items()}))
        return F, "not every seed reaches the target"

    assert V.judgement(claim(cutoff), [{}]).verdict == OPEN_

    def against(records):
        c = S.judge(S.compare({s: v - 1 for s, v in flat.items()}, flat))
        return (F if c.verdict == "lower" else OPEN_), c.short()

    j = V.judgement(claim(against), [{}])
    assert j.verdict == F and j.deciding[1].verdict == "lower"


def test_holds_needs_a_significant_comparison_for_the_claim():
    def by_means(records):
        return H, "first by mean"

    assert V.judgement(claim(by_means), [{}]).verdict == OPEN_


def test_no_does_not_hold_on_the_committed_records_lacks_a_significant_adjusted_effect_against_it(committed):
    fails = committed[committed["verdict"] == F]
    assert len(fails)
    for _, r in fails.iterrows():
        assert r["p_adj"] < S.ALPHA, r["id"]
        assert r["comparisons"] >= 1 and r["deciding"] is not None
    by_id = {c.id: c for c in catalog.CLAIMS}
    for cid in fails["id"]:
        c = by_id[cid]
        records, _, _ = L.claim_records(c)
        j = V.judgement(c, records)
        lab, comp, good, shift = j.deciding
        assert comp.verdict not in ("not resolved", good), cid  # significant (adjusted), and the other way
        assert comp.p_decides < S.ALPHA and comp.p_decides >= comp.p


def test_the_verdicts_named_in_the_rule_no_longer_rest_on_cutoffs_ties_or_means(committed):
    v = committed.set_index("id")["verdict"]
    for cid in ("C-F4-ext", "C-G3-mt", "B-T4-2", "B-T1-2"):
        assert v[cid] != F, cid


# ------------------------------------------------------------------------------ ties, cut-offs, readings


def table4(means, budgets=(40, 250), n=5, jitter=True):
    out = []
    for m in budgets:
        for alpha, mu in means.items():
            for s in range(n):
                x = mu + 0.3 * np.sin(2.1 * s + (len(alpha) if jitter else 0))
                out.append(rec({"m": m, "alpha": alpha}, s, test_acc=float(x)))
    return out


def test_an_exact_tie_in_table4_never_decides_and_is_reported():
    means = {CB.RDSS_ALPHA: 80.0, "0.9": 80.0, "0.98": 80.0, "0": 70.0, "0.4": 72.0, "0.8": 78.0, "1": 76.0}
    # m = 40: 0.9 and 0.98 lie inside [1 - 1/sqrt(40), 1]; at m = 250 0.9 lies outside and ties with the best
    verdict, text = CB.b_table4_best_in_interval(table4(means, budgets=(250,), jitter=False))
    assert verdict != F and "a tie" in text


def test_table4_best_in_interval_by_significant_comparisons():
    inside_best = {CB.RDSS_ALPHA: 82.0, "0.98": 81.0, "1": 80.0, "0": 70.0, "0.4": 71.0, "0.8": 72.0, "0.9": 73.0}
    assert CB.b_table4_best_in_interval(table4(inside_best, budgets=(250,)))[0] == H
    outside_best = {**inside_best, "0.4": 90.0}
    assert CB.b_table4_best_in_interval(table4(outside_best, budgets=(250,)))[0] == F


def extended(reached: bool, drop: float, n=5):
    return [
        {
            "protocol": "cpu",
            "algorithm": "vat",
            "fraction": 0.1,
            "extend": 2.0,
            "seed": s,
            "match_speedup": (2.5 + 0.1 * np.sin(s)) if reached or s else None,
            "test_acc": 80.0 - drop + 0.3 * np.sin(2.1 * s),
            "full_acc": 80.0 + 0.3 * np.sin(2.1 * s) + 0.05 * np.cos(s),
        }
        for s in range(n)
    ]


def test_a_seed_that_misses_full_is_no_verdict_against_the_claim():
    runs = {r["seed"]: r for r in extended(False, 0.0)}
    assert CC.match_or_accuracy(runs, 1.8)[0] == OPEN_  # one seed short of Full, accuracy not below it
    runs = {r["seed"]: r for r in extended(False, 3.0)}
    assert CC.match_or_accuracy(runs, 1.8)[0] == F  # significantly below Full: against the claim
    runs = {r["seed"]: r for r in extended(True, 0.0)}
    assert CC.match_or_accuracy(runs, 1.8)[0] == H


def test_readings_that_disagree_give_not_resolved():
    assert L.agree({"a": (H, "x"), "b": (F, "y")})[0] == OPEN_
    assert L.agree({"a": (H, "x"), "b": (OPEN_, "y")})[0] == OPEN_
    assert L.agree({"a": (H, "x"), "b": (H, "y"), "c": (N, "z")})[0] == H

    def similar(records):  # holds on the main reading, does not hold on m/n
        d = [r["metrics"]["D"] for r in records]
        return (H if max(d) < 0.05 else F), ""

    records = [rec({"fraction": 0.01}, 0, D=0.0), rec({"fraction": 0.01, "alpha_rule": "m/n"}, 0, D=0.5)]
    assert CBS._readings_agree(records, similar)[0] == OPEN_
    same = [rec({"fraction": 0.01}, 0, D=0.0), rec({"fraction": 0.01, "alpha_rule": "m/n"}, 0, D=0.01)]
    assert CBS._readings_agree(same, similar)[0] == H


def test_figure2_readings_are_one_claim_each(committed):
    ids = set(committed["id"])
    assert {"B-F2-small", "B-F2-grow", "B-F2-low"} <= ids
    assert not any(i.endswith("-mn") for i in ids)


def test_the_most_faithful_robust_stand_in_decides_and_the_others_are_sensitivity(committed):
    """The CIFAR-10 stand-in's final-model reading decides; the MNIST stand-ins are shown in the evidence as
    sensitivity and are not named where the gate reads the deciding stand-ins."""
    row = committed.set_index("id").loc["C-R-5x"]
    assert row["deciding evidence"].count("cpu_cifar10_final protocol") and "cpu_long" not in row["deciding evidence"]
    assert "sensitivity (does not decide)" in row["evidence"] and "cpu_long: " in row["evidence"]


# ------------------------------------------------------------------------------------------- margins


def test_one_margin_rule_a_significant_drop_inside_the_margin_holds():
    a = {s: 90.0 - 0.5 + 0.05 * np.sin(s) for s in range(10)}
    b = {s: 90.0 + 0.05 * np.cos(s) for s in range(10)}
    assert S.compare(a, b).verdict == "lower"  # significant drop of 0.5
    assert S.not_below(a, b, 2.0)[0] == H  # inside the margin of 2
    assert S.not_below(a, b, 0.3)[0] == F  # beyond the margin of 0.3
    assert S.within(a, b, 2.0)[0] == H and S.within(a, b, 0.3)[0] == F


def test_margin_verdicts_equal_the_interval_reading():
    rng = np.random.default_rng(3)
    for _ in range(30):
        a, b = rng.normal(0, 1, 6), rng.normal(rng.uniform(-1, 1), 1, 6)
        c = S.compare(a, b)
        lo, hi = c.ci
        expect = H if lo > -0.8 else F if hi < -0.8 else OPEN_
        assert S.not_below(a, b, 0.8)[0] == expect


# ------------------------------------------------------------------------------------------------ power


@pytest.mark.parametrize("n", [3, 5, 10, 30])
def test_mde_is_the_effect_detected_with_80_percent_power(n):
    rng = np.random.default_rng(n)
    d = rng.normal(0, 1, n)
    c = S.compare_to(d, 0.0)
    mde = S.mde(c)
    crit = st.t.ppf(0.975, n - 1)
    ncp = mde / c.se
    power = st.nct.sf(crit, n - 1, ncp) + st.nct.cdf(-crit, n - 1, ncp)
    assert power == pytest.approx(0.8, abs=1e-6)
    # the closed-form approximation (t_0.975 + t_0.8) se is within a few percent
    approx = (crit + st.t.ppf(0.8, n - 1)) * c.se
    assert mde == pytest.approx(approx, rel=0.06)


def test_mde_agrees_with_a_simulation():
    rng = np.random.default_rng(7)
    n, sd = 8, 1.0
    c = S.compare_to(rng.normal(0, sd, n), 0.0)
    c = S.Comparison(0.0, sd / math.sqrt(n), (0, 0), 0, n - 1, 1.0, (n, 0), "one-sample", "not resolved")
    mde = S.mde(c)
    hits = 0
    trials = 4000
    for _ in range(trials):
        x = rng.normal(mde, sd, n)
        hits += st.ttest_1samp(x, 0.0).pvalue < 0.05
    # the sample sd varies around sd: the simulated power of the t-test at the MDE is 80 % within Monte Carlo error
    assert hits / trials == pytest.approx(0.8, abs=0.03)


def test_mde_of_a_z_test_is_the_normal_closed_form():
    c = S.compare_estimates(0.5, 0.01, 0.45, 0.02)
    assert S.mde(c) == pytest.approx((st.norm.ppf(0.975) + st.norm.ppf(0.8)) * math.hypot(0.01, 0.02))
    assert math.isnan(S.seeds_for(c, 0.01))


def test_seeds_for_is_the_smallest_count_whose_mde_reaches_the_effect():
    rng = np.random.default_rng(1)
    a = {s: float(x) for s, x in enumerate(rng.normal(0, 1, 5))}
    b = {s: a[s] + float(x) for s, x in enumerate(rng.normal(0, 1, 5))}
    c = S.compare(a, b)
    effect = S.mde(c) / 2
    n = S.seeds_for(c, effect)
    assert n > 5

    def mde_at(k):
        return S._mde(c.se * math.sqrt(5 / k), k - 1)

    assert mde_at(n) <= effect < mde_at(n - 1)
    assert S.seeds_for(c, S.mde(c) * 1.01) == 5


def test_power_state_splits_not_resolved():
    x = {s: 0.3 * np.sin(2.1 * s) for s in range(6)}
    y = {s: 0.3 * np.sin(2.1 * s) + 0.2 * np.cos(s) for s in range(6)}

    def fn(records):
        return L.directed(S.compare(x, y)), ""

    small = V.power_columns(claim(fn, effect=0.01), V.judgement(claim(fn), [{}]))
    large = V.power_columns(claim(fn, effect=50.0), V.judgement(claim(fn), [{}]))
    none = V.power_columns(claim(fn), V.judgement(claim(fn), [{}]))
    assert small["power"] == V.UNDERPOWERED and small["seeds_needed"] > 6
    assert large["power"] == V.NO_EFFECT and math.isnan(large["seeds_needed"])
    assert none["power"] == V.NO_NUMBER


# ------------------------------------------------------------------------------------------------ export


EXPORT = ["deciding evidence", "effect", "ci_low", "ci_high", "p", "p_adj", "mde", "paper_effect", "power", "verdict"]


def test_the_ledger_has_the_export_columns_for_every_claim(committed):
    assert set(EXPORT) <= set(committed.columns)
    ran = committed[committed["verdict"] != N]
    assert (ran["deciding evidence"] != "").all()
    decided = ran[(ran["comparisons"] > 0) & ran["p"].notna()]
    assert (decided["p_adj"] >= decided["p"] - 1e-12).all()  # Holm never lowers a p
    assert set(committed["power"]) <= {"", V.UNDERPOWERED, V.NO_EFFECT, V.POWERED, V.NO_NUMBER}
    assert (committed["state"] == committed["verdict"]).all()


def test_ledger_exports_as_csv_and_json(tmp_path, committed):
    paths = V.export_ledger(committed, tmp_path)
    csv = pd.read_csv(paths["csv"])
    data = json.loads(paths["json"].read_text(encoding="utf-8"))
    assert list(csv["id"]) == list(committed["id"]) and len(data) == len(committed)
    assert set(EXPORT) <= set(csv.columns) and set(EXPORT) <= set(data[0])
    one = next(d for d in data if d["verdict"] == F)
    assert one["p_adj"] < 0.05 and isinstance(one["effect"], float)
    assert all(d["paper_effect"] is None or isinstance(d["paper_effect"], float) for d in data)  # NaN -> null
