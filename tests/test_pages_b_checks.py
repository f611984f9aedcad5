"""The checks paper B's experiment pages show, asserted on the committed records (``notebooks/results/``).

The pages print each check's outcome; these tests fail when a committed record breaks it. Each check names the page
(and the section) it came from.
"""

import numpy as np
import pandas as pd
import pytest

from sslkit.experiments import aggregate, catalog
from sslkit.experiments.paper_b.experiments import FULL_POOL
from sslkit.experiments.paper_b.selection import (
    FIGURE2_ALPHA_RULES,
    FIGURE2_M_FRACTIONS,
    TABLE4_ALPHAS,
    table4_in_interval,
)
from sslkit.experiments.paper_b.ssl import TABLE1_ALGORITHMS, TABLE1_SELECTORS

FREE = [s for s in TABLE1_SELECTORS if s != "Stratified"]  # the label-free selectors (Stratified reads labels)


def committed(name, scale):
    records = catalog.records(name, scale)
    assert records, f"no committed {name} records at {scale} scale"
    return records


# ------------------------------------------------------------------------------------------------ b_figure2


def figure2_frames():
    """(main grid, alpha = m/n reading) of the committed Figure 2 records, one row per run, as the page builds them."""
    main, literal = FIGURE2_ALPHA_RULES
    both = pd.DataFrame(
        [
            {**r["config"], "alpha_rule": r["config"].get("alpha_rule", main), **r["metrics"]}
            for r in committed("b_figure2", "paper")
        ]
    )
    both["repeats"] = both["m"] - both["gkh_distinct"]
    return both[both["alpha_rule"] == main], both[both["alpha_rule"] == literal]


def test_b_figure2_gkhr_equals_gkh_without_repeats_and_the_gap_is_small_and_grows():
    df, _ = figure2_frames()
    assert len(df) > 100
    assert (df["D1"] > 0).all() and (df["D2"] > 0).all(), "an alpha-MMD² that is not positive"
    assert df["D"].abs().max() < 0.1, "GKHR and GKH differ by 10 % of their sum or more"
    no_repeat = df[df["repeats"] == 0]
    assert len(no_repeat) > 0 and (no_repeat["D"].abs() < 1e-9).all(), "GKH without repeats is GKHR"
    small, large = min(FIGURE2_M_FRACTIONS), max(FIGURE2_M_FRACTIONS)
    mean_abs = df.assign(absD=df["D"].abs()).groupby("fraction")["absD"].mean()
    assert mean_abs[small] < mean_abs[large], "the gap grows with m"
    assert df.loc[df["fraction"] == large, "D"].mean() > 0, "at the largest m/n GKH is ahead on average"


def test_b_figure2_alpha_m_over_n_reading_widens_the_gap():
    df, lit = figure2_frames()
    assert len(lit) > 0
    assert (lit["D1"] > 0).all() and (lit["D2"] > 0).all()
    assert np.allclose(lit["alpha"], lit["m"] / lit["n"]), "the reading's alpha is m / n"
    assert lit["D"].abs().mean() > df["D"].abs().mean(), "alpha = m/n widens the GKHR-GKH gap"


# ------------------------------------------------------------------------------------------------ b_figure3


def test_b_figure3_rdss_lowest_alpha_mmd_and_similarity_in_every_draw_and_full_coverage():
    res = pd.DataFrame(
        [
            {"selector": r["config"]["selector"], "seed": r["seed"], **r["metrics"]}
            for r in committed("b_figure3", "paper")
        ]
    )
    per_draw = res.pivot(index="seed", columns="selector")
    assert len(per_draw) >= 2
    assert (per_draw["alpha_mmd2"].idxmin(axis=1) == "RDSS").all(), "RDSS: the lowest alpha-MMD² in every draw"
    assert (per_draw["avg_similarity"].idxmin(axis=1) == "RDSS").all(), "RDSS: the most diverse in every draw"
    strat = res[res["selector"] == "Stratified"]
    assert len(strat) and (strat["min_class_count"] == 10).all() and (strat["max_class_count"] == 10).all()
    assert (res["classes_covered"] == 10).all()


# ------------------------------------------------------------------------------------------------ b_table1


def labeled_sets(records):
    """{(dataset, selector, m, seed): {algorithm: what its labeled set measures}}."""
    out = {}
    for r in records:
        c = r["config"]
        what = tuple(r["metrics"][k] for k in ("alpha_mmd2", "labeled_classes", "min_class_count"))
        out.setdefault((c.get("dataset"), c["selector"], c["m"], r["seed"]), {})[c["algorithm"]] = what
    return out


def table1_parts():
    records = committed("b_table1", "cpu")
    main = [r for r in records if not catalog.reading_of("b_table1", "cpu", r["config"])]
    pool = [r for r in records if catalog.reading_of("b_table1", "cpu", r["config"]) == FULL_POOL]
    return main, pool


@pytest.mark.parametrize("part", ["subset", "pool"])
def test_b_table1_both_algorithms_share_each_labeled_set_and_rdss_is_the_most_representative(part):
    main, pool = table1_parts()
    records = main if part == "subset" else pool
    assert records
    sets = labeled_sets(records)
    assert all(len(set(v.values())) == 1 for v in sets.values()), "FlexMatch and FreeMatch trained on different sets"
    assert all(len(v) == len(TABLE1_ALGORITHMS) for v in sets.values())
    sel = pd.DataFrame(
        [{**r["config"], "alpha_mmd2": r["metrics"]["alpha_mmd2"]} for r in records if r["config"]["selector"] in FREE]
    )
    mmd = sel.groupby(["dataset", "m", "selector"])["alpha_mmd2"].mean()
    for column, by_selector in mmd.groupby(level=["dataset", "m"]):
        by_selector = by_selector.droplevel(["dataset", "m"])
        assert len(by_selector) == len(FREE), (part, column, by_selector.to_dict())
        assert by_selector.idxmin() == "RDSS", (part, column, by_selector.to_dict())


# ------------------------------------------------------------------------------------------------ b_table4


def table4_means(name, metric, records=None):
    records = committed(name, "paper") if records is None else records
    return aggregate(records, "alpha", "m", metric)["mean"].loc[list(TABLE4_ALPHAS)]


def test_b_table4_proxy_orderings_of_the_two_terms_and_the_proxy_at_every_budget():
    means = {k: table4_means("b_table4_proxy", k) for k in ("avg_similarity", "mmd2", "proxy_acc")}
    assert len(means["mmd2"].columns) >= 2
    for m in means["mmd2"].columns:
        s, d = means["avg_similarity"][m], means["mmd2"][m]
        assert s.idxmin() == "0", "alpha -> 0 gives the most diverse selection"
        assert d.idxmin() == "1", "alpha = 1 gives the most representative selection"
        assert s["0"] < s["1-1/sqrt(m)"] < s["1"]
        assert d["1"] < d["1-1/sqrt(m)"] < d["0"]
        acc = means["proxy_acc"][m]
        assert max(acc["0"], acc["0.4"]) < acc.drop(["0", "0.4"]).min(), "heavy diversity is worst in the proxy"


def test_b_table4_head_best_alpha_in_the_interval_and_heavy_diversity_worst():
    records = [
        r for r in committed("b_table4_head", "paper") if not catalog.reading_of("b_table4_head", "paper", r["config"])
    ]
    means = table4_means("b_table4_head", "test_acc", records)
    assert len(means.columns) >= 1
    for m in means.columns:
        col = means[m]
        assert table4_in_interval(col.idxmax(), m), f"m = {m}: best alpha {col.idxmax()} outside the interval"
        assert set(col.nsmallest(2).index) == {"0", "0.4"}, (
            f"m = {m}: the two worst rows {list(col.nsmallest(2).index)}"
        )


# ------------------------------------------------------------------------------------------------ b_table5


def test_b_table5_median_bandwidth_gkhr_on_pretrained_features_wins_its_own_yardstick():
    defects = [r for r in committed("b_table5", "paper") if r["config"].get("part") == "defects"]
    groups = {}
    for r in defects:
        c = r["config"]
        groups.setdefault((c["n_pool"], c["m"]), {})[(c["features"], c["bandwidth"])] = r["metrics"]["alpha_mmd2"]
    assert groups
    for key, g in groups.items():
        # GKHR with the median bandwidth minimises exactly the yardstick (greedily): it must not lose on it
        assert g[("pretrained", "median")] <= min(g.values()) + 1e-12, (key, g)
        assert len(g) >= 2, key
