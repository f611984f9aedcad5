"""Paper B's claims about active learning, semi-supervised active learning and the three paradigms
(sslkit.experiments.paper_b.claims_active): each gives "holds", "does not hold" and "not resolved" where it should,
on made-up records shaped like the experiments' (Table 2's accuracy curves, Table 3's cells, Table 6's SSL runs)."""

import json

import numpy as np
import pytest

from sslkit.experiments import catalog
from sslkit.experiments.paper_b import claims_active as CB
from sslkit.experiments.report.ledger import CANNOT_DECIDE, FAILS, HOLDS, NOT_RUN, OPEN


def rec(config, seed, **metrics):
    return {"key": f"{json.dumps(config, sort_keys=True)}-{seed}", "config": config, "seed": seed, "metrics": metrics}


def noise(seed, salt):
    return 0.3 * np.sin(seed * 2.1 + 0.5 + salt)


def table2(final, seeds=range(5), start=70.0):
    """Table 2-like records: every method starts at ``start`` on 60 labels (RDSS a point lower) and ends at
    ``final[method]`` on 120 (90: halfway)."""
    out = []
    for i, (m, top) in enumerate(final.items()):
        for s in seeds:
            first = start - (1.0 if m == "SL+RDSS" else 0.0)
            curve = [first + noise(s, i), (first + top) / 2 + noise(s, i + 0.7), top + noise(s, i + 1.4)]
            out.append(rec({"protocol": "cpu", "method": m}, s, budgets=[60, 90, 120], test_acc_curve=curve))
    return out


AL = {"CoreSet": 80.0, "VAAL": 80.5, "LearnLoss": 81.0, "MCDAL": 81.5}


def test_almost_all_is_all_but_one_and_more_than_half():
    assert [CB.almost_all_needed(n) for n in (1, 2, 3, 4, 5)] == [1, 2, 2, 3, 4]


def test_table2_rdss_highest():
    assert CB.b_table2_rdss_highest(table2({**AL, "SL+RDSS": 85.0}))[0] == HOLDS
    verdict, text = CB.b_table2_rdss_highest(table2({**AL, "SL+RDSS": 75.0}))
    assert verdict == FAILS and "lower in 8" in text
    # only the means differ (0.1 point), one seed each: no test can decide
    assert CB.b_table2_rdss_highest(table2({**AL, "SL+RDSS": 81.6}, seeds=[0]))[0] == OPEN
    # the random start is left out: RDSS a point lower there does not count against it
    verdict, text = CB.b_table2_rdss_highest(table2({**AL, "SL+RDSS": 85.0}))
    assert "at 2 of 2 AL budgets" in text
    whole = [rec({"protocol": "cpu", "method": "Whole dataset"}, 0, budgets=[10000], test_acc_curve=[99.0])]
    assert CB.b_table2_rdss_highest(table2({**AL, "SL+RDSS": 85.0}) + whole)[0] == HOLDS
    assert CB.b_table2_rdss_highest(table2(AL))[0] == NOT_RUN


def table3(means, seeds=range(6)):
    return [
        rec({"protocol": "cpu", "algorithm": a, "method": m}, s, test_acc=mu + noise(s, i + j))
        for j, a in enumerate(("FlexMatch", "FreeMatch"))
        for i, (m, mu) in enumerate(means.items())
        for s in seeds
    ]


def test_table3_ssal_below_random():
    ssal = dict.fromkeys(("CoreSetSSL", "MMA", "CBSSAL", "TOD-Semi"), 70.0)
    assert CB.b_table3_ssal_below_random(table3({"Random": 75.0, **ssal}))[0] == HOLDS
    assert CB.b_table3_ssal_below_random(table3({"Random": 65.0, **ssal}))[0] == FAILS
    half = {"CoreSetSSL": 80.0, "MMA": 80.0, "CBSSAL": 75.05, "TOD-Semi": 74.95}
    verdict, text = CB.b_table3_ssal_below_random(table3({"Random": 75.0, **half}, seeds=[0]))
    assert verdict == OPEN and "not resolved in 8" in text
    assert CB.b_table3_ssal_below_random(table3({"RDSS": 80.0}))[0] == NOT_RUN


def test_table3_rdss_above():
    others = {"Random": 75.0, "CoreSetSSL": 74.0, "MMA": 70.0, "CBSSAL": 74.0, "TOD-Semi": 73.0}
    assert CB.b_table3_rdss_above(table3({"RDSS": 80.0, **others}))[0] == HOLDS
    assert CB.b_table3_rdss_above(table3({"RDSS": 74.5, **others}))[0] == FAILS  # below Random
    assert CB.b_table3_rdss_above(table3({"RDSS": 75.1, **others}, seeds=[0, 1]))[0] == OPEN


def table6(ssl, seeds=range(5)):
    return [
        rec({"dataset": "mnist", "algorithm": a, "selector": sel, "m": 40}, s, test_acc=mu + noise(s, j))
        for j, a in enumerate(("FlexMatch", "FreeMatch"))
        for sel, mu in ssl.items()
        for s in seeds
    ]


def test_table6_paradigm_claims():
    al = table2({**AL, "SL+RDSS": 85.0}, seeds=range(4))  # the AL runs' seeds need not be the SSL runs'
    assert CB.b_table6_al_needs_more_labels(table6({"RDSS": 90.0, "Random": 70.0}) + al)[0] == HOLDS
    assert CB.b_table6_ssl_paradigm(table6({"RDSS": 90.0, "Random": 70.0}) + al)[0] == FAILS
    assert CB.b_table6_ssl_paradigm(table6({"RDSS": 90.0, "Random": 86.0}) + al)[0] == HOLDS
    verdict, text = CB.b_table6_al_needs_more_labels(table6({"RDSS": 81.0}, seeds=[0]) + al)
    assert verdict == OPEN and "@ 120" in text  # the AL runs' largest budget
    assert CB.b_table6_al_needs_more_labels(table6({"RDSS": 90.0}))[0] == NOT_RUN  # no AL run


def test_the_claims_are_in_the_ledger_and_read_their_experiments():
    ids = {c.id: c for c in catalog.CLAIMS}
    for claim in CB.CLAIMS:
        assert ids[claim.id] is claim
    assert ids["B-D6-1"].reads[1] is ids["B-T2"].reads[0]  # Table 6's SSL runs beside Table 2's AL runs
    rows = catalog.ledger(paper="B")
    mine = rows[rows["id"].isin([c.id for c in CB.CLAIMS])]
    assert len(mine) == len(CB.CLAIMS) and set(mine["verdict"]) <= {HOLDS, FAILS, OPEN, CANNOT_DECIDE, NOT_RUN}


@pytest.mark.parametrize("claim", CB.CLAIMS, ids=lambda c: c.id)
def test_each_claim_shows_its_interval_and_p(claim):
    verdict, text = catalog.ledger(paper="B").set_index("id").loc[claim.id, ["verdict", "evidence"]]
    if verdict != NOT_RUN:
        assert "95 % CI" in text and "p " in text, text
