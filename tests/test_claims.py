"""The claims ledger (sslkit.experiments.report.ledger, each paper's claims beside its protocol) and the
per-row-group scorecard (sslkit.experiments.report.scorecard, read through the catalog): each claim function gives
the verdict it should on small synthetic records, the ledger covers every claim, and the scorecard's statuses
follow the records whose configuration matches a row group, their kind and the data they used."""

import json

import numpy as np
import pytest

from sslkit.experiments import catalog
from sslkit.experiments.paper_a import claims as CA
from sslkit.experiments.paper_b import claims as CB
from sslkit.experiments.paper_b import claims_selection as CBS
from sslkit.experiments.paper_c import claims as CC
from sslkit.experiments.paper_c import claims_robust as CCR
from sslkit.experiments.paper_c import scorecard as SC
from sslkit.experiments.report import ledger as C
from sslkit.experiments.report import scorecard as S
from sslkit.experiments.runs.experiment import DIAGNOSTIC, PAPER_PROTOCOL, QUICK, STAND_IN, Experiment, Scale
from sslkit.experiments.runs.store import repo_root

RESULTS = repo_root() / "notebooks" / "results"


def rec(config, seed, **metrics):
    return {"key": f"{json.dumps(config, sort_keys=True)}-{seed}", "config": config, "seed": seed, "metrics": metrics}


def salt(name) -> float:
    return sum(map(ord, str(name))) % 7 * 0.9


def spread(mean, seed, salt=0.0):
    """A deterministic per-seed value around ``mean`` (std about 0.3); ``salt`` shifts the phase, so two methods of
    one seed do not differ by a constant (a paired test would then see no noise at all)."""
    return mean + 0.3 * np.sin(seed * 2.1 + 0.5 + salt)


def a_table(means, datasets=("adult",), settings=("(15,45)", "(30,30)"), n=10):
    """Paper A Table 1/2-like records: ``means`` {method: mean accuracy} in every (dataset, setting) row."""
    return [
        rec(
            {"dataset": d, "setting": s, "method": m, "hyper": None},
            seed,
            test_acc=spread(mu, seed, 1.3 * i),
            best_val_acc=80.0,
        )
        for d in datasets
        for s in settings
        for i, (m, mu) in enumerate(means.items())
        for seed in range(n)
    ]


BASE = {"Sup.": 80.0, "PNU": 80.5, "PL": 78.0, "VAT": 78.5}


# ------------------------------------------------------------------------------------------- paper A claims


def test_table1_rank_holds_when_ours_is_first_and_fails_when_it_is_last():
    assert CA.a_table1_first_or_second(a_table({**BASE, "Ours (Iter)": 82.0}))[0] == C.HOLDS
    verdict, evidence = CA.a_table1_first_or_second(a_table({**BASE, "Ours (Iter)": 70.0}))
    assert verdict == C.FAILS and "0 of 2" in evidence


def test_table1_rank_not_resolved_when_only_the_means_miss():
    # third by mean, but nothing significantly above: the lenient reading keeps it open
    means = {"Sup.": 80.02, "PNU": 80.01, "Ours (Iter)": 80.0, "PL": 70.0, "VAT": 70.0}
    assert CA.a_table1_first_or_second(a_table(means))[0] == C.OPEN


def test_table1_risk_rewrite_against_pl_vat():
    assert CA.a_table1_risk_rewrite_beats_pl_vat(a_table({**BASE, "Ours (Iter)": 82.0}))[0] == C.HOLDS
    worse = a_table({**BASE, "Ours (Iter)": 82.0, "PNU": 70.0})
    assert CA.a_table1_risk_rewrite_beats_pl_vat(worse)[0] == C.FAILS


def test_table1_pl_best_on_mnist_and_not_run_without_it():
    recs = a_table({**BASE, "Ours (Iter)": 81.0, "PL": 90.0}, datasets=("mnist_4v9",), settings=("(15,45)",))
    assert CA.a_table1_pl_best_mnist(recs)[0] == C.HOLDS
    recs = a_table({**BASE, "Ours (Iter)": 81.0, "PL": 60.0}, datasets=("mnist_4v9",), settings=("(15,45)",))
    assert CA.a_table1_pl_best_mnist(recs)[0] == C.FAILS
    assert CA.a_table1_pl_best_mnist(a_table(BASE))[0] == C.NOT_RUN


CIFAR_SETTINGS = ("(15,45)", "(30,30)", "(50,150)", "(100,100)")


def test_pl_against_best_applies_the_rule_to_the_papers_numbers_and_ours():
    from sslkit.experiments.paper_a.report import pl_against_best

    below = pl_against_best(a_table({**BASE, "Ours (Iter)": 81.0, "PL": 70.0}, ("cifar_cvd",), CIFAR_SETTINGS))
    assert list(below["setting"]) == list(CIFAR_SETTINGS) and (below["ours"] == "PL below").all()
    # the paper's printed rows (30 seeds a side): only (15,45), Ours (Iter) 55.4 ± 1.6 vs PL 53.8 ± 2.5, resolves
    assert list(below["paper"]) == ["PL below", "not resolved", "not resolved", "not resolved"]
    assert below["paper: best − PL"][0].startswith("+1.6 (95 % CI +0.5 to +2.7")
    above = pl_against_best(a_table({**BASE, "Ours (Iter)": 81.0, "PL": 90.0}, ("cifar_cvd",), CIFAR_SETTINGS))
    assert (above["ours"] == "PL above").all() and (above["seeds"] == 10).all()
    with pytest.raises(ValueError, match="no dataset 'cifar'.*cifar_cvd"):
        pl_against_best([], "cifar")


def test_pl_against_best_agrees_with_the_ledgers_cifar_claim_on_the_committed_records():
    from sslkit.experiments.paper_a.report import pl_against_best

    table = pl_against_best(catalog.records("a_table1", "paper"))
    verdict = catalog.ledger(paper="A", item="Table 1").set_index("id").loc["A-T1-cifar", "verdict"]
    assert (verdict == C.HOLDS) == bool((table["ours"] == "PL below").all())


def test_pnu_is_sup_where_app_cs_eta_is_zero():
    from sslkit.experiments.paper_a.report import pnu_against_sup

    recs = a_table({**BASE, "Ours (Iter)": 81.0}, ("cifar_cvd",), ("(15,45)", "(30,30)"))
    for r in recs:  # the same run where eta = 0: PNU's accuracy is Sup.'s
        if r["config"]["method"] == "PNU" and r["config"]["setting"] == "(30,30)":
            r["metrics"]["test_acc"] = spread(BASE["Sup."], r["seed"], 0.0)
    t = pnu_against_sup(recs, "cifar_cvd", prior=(0.5, 0.5)).set_index("setting")
    assert t.loc["(30,30)", "η"] == 0 and t.loc["(30,30)", "PNU = Sup."] == 10
    # ψ = θ²/n: η = (1/180 - 1/60) / (1/60 + 1/180) = -0.5
    assert t.loc["(15,45)", "η"] == -0.5 and t.loc["(15,45)", "PNU = Sup."] == 0
    assert t.loc["(30,30)", "paper"] == "not resolved"  # 56.0 ± 2.1 vs 55.2 ± 2.6, 30 seeds a side
    committed = pnu_against_sup(catalog.records("a_table1", "paper"), "cifar_cvd", prior=(0.5, 0.5))
    zero = committed[committed["η"] == 0]
    assert len(zero) and (zero["PNU = Sup."] == zero["seeds"]).all()  # a miswired PNU would differ


def test_table2_ec_competitive_and_not():
    iter_ec = {"Sup.": 80.0, "Ours (Iter)": 81.0, "PL": 79.0, "VAT": 79.0}
    assert CA.a_table2_ec_competitive(a_table({**iter_ec, "Ours (EC)": 80.5}, ("shuttle",)))[0] == C.HOLDS
    verdict, evidence = CA.a_table2_ec_competitive(a_table({**iter_ec, "Ours (EC)": 75.0}, ("shuttle",)))
    assert verdict == C.FAILS and "below Sup. by mean in 2 of 2" in evidence


def test_table2_ours_not_below_sup():
    means = {"Sup.": 80.0, "Ours (Iter)": 80.0, "Ours (EC)": 80.1, "PL": 85.0, "VAT": 85.0}
    assert CA.a_table2_ours_not_below_sup(a_table(means, ("dry_bean",)))[0] == C.HOLDS
    assert CA.a_table2_ours_not_below_sup(a_table({**means, "Ours (EC)": 70.0}, ("dry_bean",)))[0] == C.FAILS


def ratio_records(pnu, lin, se=0.005):
    """Figure 1-like records: ``pnu(theta, loss, n)`` / ``lin(...)`` give the ratios."""
    return [
        rec(
            {"dataset": "gaussian", "loss": loss, "theta1": th, "n_unlabeled": n},
            0,
            PNU_ratio=pnu(th, loss, n),
            PNU_ratio_se=se,
            lin_ratio=lin(th, loss, n),
            lin_ratio_se=se,
        )
        for loss in ("bce", "zero_one")
        for th in (0.3, 0.5, 0.7)
        for n in (50, 100, 1000)
    ]


def test_figure1_claims_hold_on_falling_ratios_and_fail_on_flat_ones():
    def pnu(th, loss, n):
        return 1.0 - (0.2 if th != 0.5 else 0.05) * np.log10(n) / 3

    def lin(th, loss, n):
        return pnu(th, loss, n) - (0.05 if loss == "bce" else 0.0)

    recs = ratio_records(pnu, lin)
    for fn in (CA.a_figure1_ratios_fall, CA.a_figure1_imbalanced_reduction, CA.a_figure1_balanced_bce):
        assert fn(recs)[0] == C.HOLDS, fn.__name__
    assert CA.a_figure1_symmetric_identical(recs)[0] == C.HOLDS
    flat = ratio_records(lambda *a: 1.0, lambda th, loss, n: 1.0 if loss == "bce" else 0.9)
    assert CA.a_figure1_ratios_fall(flat)[0] == C.OPEN  # flat within the errors: neither
    rising = ratio_records(lambda th, loss, n: 1.0 + n / 1000, lambda th, loss, n: 1.0 + n / 1000)
    assert CA.a_figure1_ratios_fall(rising)[0] == C.FAILS
    assert CA.a_figure1_imbalanced_reduction(flat)[0] == C.OPEN  # merely not lower: never "does not hold"
    worse = ratio_records(lambda th, loss, n: 1.0 if th == 0.5 else 1.2, lambda th, loss, n: 1.0 if th == 0.5 else 1.2)
    assert CA.a_figure1_imbalanced_reduction(worse)[0] == C.FAILS  # significantly higher under imbalance
    assert CA.a_figure1_symmetric_identical(flat)[0] == C.FAILS


# ------------------------------------------------------------------------------------------- paper B claims


def table4(means, budgets=(40, 250), n=5):
    return [
        rec({"alpha": a, "m": m}, seed, test_acc=spread(means[m].get(a, 80.0), seed, salt(a)))
        for m in budgets
        for a in ("0", "0.4", "0.9", "1", CB.RDSS_ALPHA)
        for seed in range(n)
    ]


def test_table4_observations_hold_when_rdss_is_best():
    means = {m: {CB.RDSS_ALPHA: 90.0, "1": 86.0, "0.9": 85.0, "0": 70.0} for m in (40, 250)}
    recs = table4(means)
    assert CB.b_table4_rdss_highest(recs)[0] == C.HOLDS
    assert CB.b_table4_best_in_interval(recs)[0] == C.HOLDS
    assert CB.b_table4_terms_removed(recs)[0] == C.HOLDS


def test_table4_observations_fail_when_alpha_one_is_best():
    means = {40: {CB.RDSS_ALPHA: 90.0, "1": 85.0, "0": 70.0}, 250: {CB.RDSS_ALPHA: 85.0, "1": 90.0, "0.4": 89.0}}
    recs = table4(means)
    assert CB.b_table4_rdss_highest(recs)[0] == C.FAILS
    assert CB.b_table4_best_in_interval(recs)[0] == C.FAILS  # 0.4 second at m = 250: outside [1 - 1/sqrt(m), 1]
    verdict, evidence = CB.b_table4_terms_removed(recs)
    assert verdict == C.FAILS and "m = 250 alpha = 1" in evidence


def b_table1(sel, budgets=(40, 100), seeds=4):
    return [
        rec(
            {"algorithm": a, "dataset": "cifar10", "m": m, "selector": s},
            seed,
            test_acc=spread(mu(m) if callable(mu) else mu, seed, salt(s)),
        )
        for a in ("FlexMatch", "FreeMatch")
        for m in budgets
        for s, mu in sel.items()
        for seed in range(seeds)
    ]


def test_table1_rdss_observations():
    recs = b_table1({"RDSS": 60.0, "USL": 55.0, "Stratified": 59.0, "Random": 50.0})
    assert CB.b_table1_rdss_highest(recs)[0] == C.HOLDS
    # the paper's bold and underline leave Stratified out: USL is second even though Stratified is above it
    assert CB.b_table1_usl_second(recs)[0] == C.HOLDS
    assert CB.b_table1_usl_second(b_table1({"RDSS": 60.0, "USL": 50.0, "Random": 55.0}))[0] == C.FAILS
    # Stratified above RDSS does not make "RDSS the highest" fail
    assert CB.b_table1_rdss_highest(b_table1({"RDSS": 60.0, "Stratified": 70.0, "Random": 50.0}))[0] == C.HOLDS
    assert CB.b_table1_rdss_vs_stratified(recs)[0] == C.HOLDS
    # "approaches": within 0.77 point holds; a large shortfall does not; a wide interval is not resolved
    assert CB.b_table1_rdss_vs_stratified(b_table1({"RDSS": 60.0, "Stratified": 60.1}, seeds=10))[0] == C.HOLDS
    assert CB.b_table1_rdss_vs_stratified(b_table1({"RDSS": 55.0, "Stratified": 60.0}))[0] == C.FAILS
    noisy = [
        rec({"algorithm": "FlexMatch", "dataset": "cifar10", "m": 40, "selector": s}, seed, test_acc=acc)
        for s, values in (("RDSS", (50.0, 70.0)), ("Stratified", (60.0, 60.5)))
        for seed, acc in enumerate(values)
    ]
    assert CB.b_table1_rdss_vs_stratified(noisy)[0] == C.OPEN


def test_table1_pools_are_never_one_cell():
    """The stand-in's whole-pool records (``pool="full"``) are their own settings: at the same (algorithm, m) as the
    subset's they are not pooled with them (RDSS wins on the subset and loses on the whole pool: the claim fails in
    the whole pool's settings, which pooling would have hidden)."""
    subset = b_table1({"RDSS": 60.0, "USL": 55.0}, budgets=(40,))
    full = [
        {**r, "config": {**r["config"], "pool": "full"}}
        for r in b_table1({"RDSS": 50.0, "USL": 55.0}, budgets=(40, 4000))
    ]
    rows = CB._table1_rows(subset + full)
    assert sorted({k[1:] for k in rows}) == [("cifar10", 40), (CB.FULL_POOL_LABEL, 40), (CB.FULL_POOL_LABEL, 4000)]
    assert all(len(seeds) == 4 for row in rows.values() for seeds in row.values())
    assert CB.b_table1_rdss_highest(subset)[0] == C.HOLDS
    verdict, evidence = CB.b_table1_rdss_highest(subset + full)
    assert verdict == C.FAILS and "50 000 pool" in evidence


def _table4_records(accs: dict, m: int, pool=None, seeds=range(4)) -> list:
    """Table 4 head records: alpha -> mean accuracy at budget ``m``, a small spread over the seeds."""
    return [
        {
            "config": {"alpha": a, "m": m, **({"pool": pool} if pool else {})},
            "seed": s,
            "metrics": {"test_acc": acc + (0.3 if s % 2 else -0.3) + 0.01 * s},
        }
        for a, acc in accs.items()
        for s in seeds
    ]


def test_table4_pools_are_never_one_cell():
    """Table 4's whole-pool records (``pool="full"``) are their own rows: RDSS's alpha is best on the subset and
    worst on the whole pool at the same m; pooled, the row would mix 8 seeds; apart, the claim fails there."""
    subset = _table4_records({"1-1/sqrt(m)": 60.0, "0": 50.0, "1": 50.0}, 40)
    full = _table4_records({"1-1/sqrt(m)": 40.0, "0": 50.0, "1": 50.0}, 40, pool="full")
    rows = CB._table4_rows(subset + full)
    assert sorted(rows) == [("", 40), ("50 000 pool", 40)]
    assert all(len(seeds) == 4 for row in rows.values() for seeds in row.values())
    assert CB.b_table4_terms_removed(subset)[0] == C.HOLDS
    verdict, evidence = CB.b_table4_terms_removed(subset + full)
    assert verdict == C.FAILS and "50 000 pool m = 40 vs alpha 0" in evidence


def test_unknown_pool_is_refused():
    """A record of a pool the claims do not know (a typo, a new reading) is refused by name, not filed under the
    subset's cells."""
    recs = _table4_records({"1-1/sqrt(m)": 60.0, "0": 50.0}, 40, pool="ful")
    with pytest.raises(ValueError, match="unknown pool 'ful'"):
        CB._table4_rows(recs)
    with pytest.raises(ValueError, match="unknown pool 'ful'"):
        CB._table1_rows([{**r, "config": {**r["config"], "pool": "ful"}} for r in b_table1({"RDSS": 60.0})])


def test_figure2_similar_at_small_m():
    def recs(d_small):
        return [
            rec(
                {"distribution": "gmm1", "fraction": f, "n": 1000},
                seed,
                D=(d_small if f == 0.01 else 0.3) + 0.01 * seed,
            )
            for f in (0.01, 0.2)
            for seed in range(5)
        ]

    assert CBS.b_figure2_similar_small_m(recs(0.0))[0] == C.HOLDS
    assert CBS.b_figure2_gap_grows(recs(0.0))[0] == C.HOLDS
    assert CBS.b_figure2_similar_small_m(recs(0.2))[0] == C.FAILS


# ------------------------------------------------------------------------------------------- paper C claims


def tradeoff(acc, n=3):
    """Trade-off-like records (Figure 4): ``acc`` {method: accuracy} at budget 0.1 and Full."""
    out = []
    for seed in range(n):
        full = {
            "test_acc": 90.0,
            "cpu_seconds": 100.0,
            "selection_cpu_seconds": 0.0,
            "curve": [[10, 80.0, 10], [100, 90.0, 100]],
        }
        out.append(rec({"protocol": "cpu", "algorithm": "vat", "method": "full", "fraction": 1.0}, seed, **full))
        for m, a in acc.items():
            config = {"protocol": "cpu", "algorithm": "vat", "method": m, "fraction": 0.1}
            out.append(
                rec(config, seed, test_acc=spread(a, seed, salt(m)), cpu_seconds=20.0, selection_cpu_seconds=2.0)
            )
    return out


def test_retrieve_against_baselines():
    good = tradeoff({"retrieve": 88.0, "random": 84.0, "craig": 84.0, "gradmatch": 84.0})
    assert CC.c_beats_random_earlystop(good)[0] == C.HOLDS  # Full-EarlyStop at 20 s: 80.0
    assert CC.c_beats_craig_gradmatch(good)[0] == C.HOLDS
    bad = tradeoff({"retrieve": 82.0, "random": 86.0, "craig": 84.0, "gradmatch": 84.0})
    assert CC.c_beats_random_earlystop(bad)[0] == C.FAILS
    assert CC.c_beats_craig_gradmatch(bad)[0] == C.FAILS


def test_warm_start_variant():
    recs = tradeoff({"retrieve": 88.0})
    cold = [
        rec(
            {"protocol": "cpu", "algorithm": "vat", "method": "retrieve", "fraction": 0.1, "warm": False},
            s,
            test_acc=spread(85.0, s),
            cpu_seconds=25.0 + s,
            selection_cpu_seconds=2.0,
        )
        for s in range(3)
    ]
    # "more effective and efficient": more accurate and less CPU time (warm: 20 s), each half by the rule
    assert CC.c_warm_better(recs + cold)[0] == C.HOLDS
    for r in cold:
        r["metrics"]["cpu_seconds"] = 20.0 + 0.1 * r["seed"] ** 2  # as fast: the efficiency half is not shown
    verdict, evidence = CC.c_warm_better(recs + cold)
    assert verdict == C.OPEN and "CPU time, warm − no warm: not resolved" in evidence
    for r in cold:
        r["metrics"]["test_acc"] += 6.0
    assert CC.c_warm_better(recs + cold)[0] == C.FAILS
    assert CC.c_warm_better(recs)[0] == C.NOT_RUN


def test_bayesian_pairs_retrieve_of_its_own_algorithm():
    """Figure 5: the VAT Bayesian runs meet VAT's Retrieve only; another algorithm's Retrieve runs change nothing."""
    recs = tradeoff({"retrieve": 88.0})
    recs += [
        rec(
            {"protocol": "cpu", "algorithm": "vat", "method": "bayesian", "fraction": 0.1},
            s,
            test_acc=spread(84.0, s),
            cpu_seconds=40.0 + s,
        )
        for s in range(3)
    ]
    assert CC.c_bayesian_worse(recs)[0] == C.HOLDS  # more accurate, and less CPU time (20 s against 40-42 s)
    mt_config = {"protocol": "cpu", "algorithm": "mean_teacher", "method": "retrieve", "fraction": 0.1}
    mt = [rec(mt_config, s, test_acc=60.0 + s, cpu_seconds=5.0) for s in range(3)]
    assert CC.c_bayesian_worse(recs + mt) == CC.c_bayesian_worse(recs)
    for r in recs:  # the speed half reversed: Retrieve slower than the Bayesian coreset
        if r["config"]["method"] == "bayesian":
            r["metrics"]["cpu_seconds"] = 10.0 + r["seed"]
    verdict, evidence = CC.c_bayesian_worse(recs)
    assert verdict == C.FAILS and "accuracy, Retrieve − Bayesian: holds" in evidence


def robust(acc, seconds=None, n=3, fractions=(0.1,)):
    out = []
    for m, a in acc.items():
        for f in fractions if m in ("retrieve", "random", "crust", "retrieve_warm") else (None,):
            for seed in range(n):
                metrics = {
                    "test_acc": spread(a, seed, salt(m)),
                    "cpu_seconds": (seconds or {}).get(m, 10.0),
                    "selection_cpu_seconds": 1.0,
                    "selections": [{"ood_fraction": 0.5}, {"ood_fraction": 0.2}],
                    "pool": {"ood_fraction": 0.5, "class_fractions": [1 / 6] * 6},
                }
                out.append(rec({"protocol": "cpu", "method": m, "ratio": 0.5, "fraction": f}, seed, **metrics))
    return out


def test_robust_claims():
    acc = {"retrieve": 95.0, "vat": 93.0, "supervised": 90.0, "l2rw": 93.0, "ds3l": 93.0, "crust": 92.0, "random": 93.0}
    recs = robust(acc, seconds={"retrieve": 10.0, "ds3l": 60.0})
    assert CCR.c_robust_beats_all(recs)[0] == C.HOLDS
    assert CCR.c_robust_beats_vat_random(recs)[0] == C.HOLDS
    assert CCR.c_robust_faster_than_ds3l(recs)[0] == C.HOLDS
    slow = robust({**acc, "ds3l": 97.0}, seconds={"retrieve": 10.0, "ds3l": 20.0})
    assert CCR.c_robust_beats_all(slow)[0] == C.FAILS
    assert CCR.c_robust_faster_than_ds3l(slow)[0] == C.FAILS
    assert CCR.c_robust_cold_better(recs)[0] == C.NOT_RUN


def test_robust_readings_that_disagree_are_not_resolved():
    recs = robust({"retrieve": 95.0, "vat": 93.0}, fractions=(0.1, 0.5))
    for r in recs:
        if r["config"]["method"] == "retrieve" and r["config"]["fraction"] == 0.5:
            r["metrics"]["test_acc"] -= 5.0
    verdict, evidence = CCR.c_robust_beats_vat_random(recs)
    assert verdict == C.OPEN and "budget 0.1: holds" in evidence and "budget 0.5: does not hold" in evidence


# ------------------------------------------------------------------------------------------- the ledger


def write(root, source, records):
    """``records`` as the results file ``<root>/<source>.jsonl`` (``root``: a results folder)."""
    path = root / f"{source}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


def test_ledger_of_one_item_and_its_sentence(tmp_path):
    write(tmp_path, "a_table1/paper", a_table({**BASE, "Ours (Iter)": 70.0}, datasets=("adult", "banknote")))
    rows = catalog.ledger(root=tmp_path, paper="A", item="Table 1")
    assert list(rows["id"]) == [c.id for c in catalog.CLAIMS if c.paper == "A" and c.item == "Table 1"]
    text = C.verdicts_sentence(rows, "Table 1")
    start = (
        "Of the paper's 5 claims about Table 1, on our committed records 3 do not hold (A-T1-rank, A-T1-rr, "
        "A-abs-match-T1)"
    )
    assert text.startswith(start), text
    assert text.endswith("and 2 are not run (A-T1-pl, A-T1-cifar)."), text
    assert C.verdicts_sentence(rows.iloc[:1], "x").endswith("1 does not hold (A-T1-rank)."), rows


def test_ledger_covers_every_claim_and_reads_the_results_folder(tmp_path):
    ids = [c.id for c in catalog.CLAIMS]
    assert len(ids) == len(set(ids))
    empty = catalog.ledger(root=tmp_path)
    assert list(empty["id"]) == ids and set(empty["verdict"]) == {C.NOT_RUN} and set(empty["level"]) == {""}
    write(tmp_path, "a_table1/paper", a_table({**BASE, "Ours (Iter)": 70.0}, datasets=("adult", "banknote")))
    row = catalog.ledger(root=tmp_path).set_index("id").loc["A-T1-rank"]
    assert row["verdict"] == C.FAILS and row["level"] == PAPER_PROTOCOL and "paper protocol" in row["records"]


def test_ledger_refuses_a_results_folder_that_does_not_exist(tmp_path):
    """A typo used to read as 41 'not run' claims; the scorecard reads its claims from the same folder."""
    with pytest.raises(FileNotFoundError, match="does not exist"):
        catalog.ledger(root=tmp_path / "typo")
    with pytest.raises(FileNotFoundError, match="does not exist"):
        catalog.scorecard(root=tmp_path / "typo")
    write(tmp_path, "a_table1/paper", a_table({**BASE, "Ours (Iter)": 70.0}, datasets=("adult", "banknote")))
    card = catalog.scorecard(root=tmp_path)
    tabular = card[(card["item"] == "Table 1") & (card["group"] == "tabular")].iloc[0]
    assert tabular["status"].startswith(PAPER_PROTOCOL) and tabular["claims fail"] == 3  # claims read from tmp_path


def test_every_claim_names_a_row_group_of_the_scorecard():
    groups = {(t.paper, t.item, g.group) for t in catalog.targets() for g in catalog.groups_of(t)}
    for c in catalog.CLAIMS:
        assert (c.paper, c.item, c.group) in groups, c.id
        assert c.reads and all(isinstance(e, Experiment) for e in c.reads), c.id
        assert c.reads[0] in catalog.EXPERIMENTS, c.id


def test_no_claim_that_ran_still_says_what_it_needs_to_run():
    """A claim's test text once said "Needs a_table1's CIFAR CvD rows" long after they ran: a stale instruction."""
    ledger = catalog.ledger()
    ran = ledger[ledger["verdict"] != C.NOT_RUN]
    assert not ran["test"].str.contains(r"\bNeeds\b").any(), ran.loc[ran["test"].str.contains("Needs"), "id"].tolist()


def test_every_verdict_shows_its_p_value_and_interval():
    """The one rule everywhere: every resolved verdict of the committed ledger names a p-value and a 95 % CI (or,
    for a ranking, the rank and the comparisons behind it)."""
    ledger = catalog.ledger()
    for _, row in ledger.iterrows():
        if row["verdict"] in (C.HOLDS, C.FAILS, C.OPEN) and row["id"] not in ("A-T1-pl",):
            ranking_or_means = row["id"] in ("A-T1-rank", "A-T2-rank", "B-T4-2") or "by mean" in row["evidence"]
            ranking_or_means |= "not every seed reaches" in row["evidence"]  # decided without a test
            assert ("p = " in row["evidence"] or "p < " in row["evidence"] or "too few" in row["evidence"]) or (
                ranking_or_means
            ), (row["id"], row["evidence"])
    assert "2 SE" not in " ".join(ledger["evidence"]) + " ".join(ledger["test"])


def test_level_counts_split_the_verdicts_by_evidence_level():
    table = catalog.ledger()
    counts = C.level_counts(table)
    assert counts["total"].sum() == len(table)
    assert list(counts.columns) == [*C.VERDICTS, "total"]
    assert set(counts.index) <= {*C.LEVELS, "—"} and counts.loc[PAPER_PROTOCOL, "total"] > 0
    if (table["level"] == "").any():  # nothing committed: no level, not run
        assert counts.loc["—", C.NOT_RUN] == counts.loc["—", "total"] == (table["level"] == "").sum()


# ------------------------------------------------------------------------------------------- the scorecard

_E = Experiment(
    "t",
    "A",
    "t",
    "a test experiment",
    print,
    {
        "quick": Scale(QUICK, lambda: [{"dataset": "digits"}], (0,), lambda c: c["dataset"]),
        "cpu": Scale(STAND_IN, lambda: [{"dataset": "adult"}], (0, 1), lambda c: c["dataset"], file="cpu_small"),
        "paper": Scale(PAPER_PROTOCOL, lambda: [{"dataset": "adult"}], range(3), lambda c: c["dataset"]),
    },
    1,
)
NB = S.Target("A", "Table X", "a test item", notebook="a-table1")


def test_status_quick_scale_only_when_the_quick_grid_runs_the_groups_data(tmp_path):
    write(tmp_path, "t/paper", [rec({"dataset": "adult"}, s) for s in range(3)])
    assert S.status(NB, S.Group(reads=_E, match={"dataset": ("mnist",)}), tmp_path)[0] == S.NOT_RUN
    assert S.status(NB, S.Group(reads=_E, match={"dataset": ("digits",)}), tmp_path)[0] == S.QUICK
    assert S.status(NB, S.Group(reads=_E, data=("mnist",)), tmp_path)[0].startswith(PAPER_PROTOCOL)
    empty = tmp_path / "empty"
    empty.mkdir()
    assert S.status(NB, S.Group(reads=_E, data=("mnist",)), empty)[0] == S.NOT_RUN  # quick runs digits, not MNIST


def test_status_paper_protocol_and_cpu_stand_in_and_their_data(tmp_path):
    write(tmp_path, "t/paper", [rec({"dataset": "adult"}, s) for s in range(3)])
    write(tmp_path, "t/cpu_small", [rec({"dataset": "adult"}, s) for s in range(2)])
    assert S.status(NB, S.Group(reads=_E, scales=("paper",)), tmp_path)[0] == "paper protocol (3 seeds)"
    assert S.status(NB, S.Group(reads=_E, scales=("cpu",)), tmp_path)[0] == "CPU stand-in (2 seeds)"
    other = S.status(NB, S.Group(reads=_E, scales=("cpu",), data=("cifar10",)), tmp_path)[0]
    assert other == "CPU stand-in (2 seeds; on adult, not CIFAR-10)"
    assert S.data_note(["cifar_cvd/jpeg"], ("cifar_cvd",)) == "; CIFAR-10 cat vs dog from its JPEG q75 copy (lossy)"


def test_status_diagnostic_when_only_a_diagnostic_ran_and_never_above_the_protocol(tmp_path):
    """A row group whose only records are a diagnostic probe (the robust stand-in's schedule-length study) ran: it
    says so with its seeds, not "not run"; records of the paper's protocol, where they exist, decide instead."""
    probe = Experiment(
        "d",
        "A",
        "d",
        "an experiment with a diagnostic scale",
        print,
        {
            "cpu": Scale(DIAGNOSTIC, lambda: [{"dataset": "adult"}], (0, 1), lambda c: c["dataset"], file="probe"),
            "paper": Scale(PAPER_PROTOCOL, lambda: [{"dataset": "adult"}], range(3), lambda c: c["dataset"]),
        },
        1,
    )
    write(tmp_path, "d/probe", [rec({"dataset": "adult"}, s) for s in range(2)])
    assert S.status(NB, S.Group(reads=probe, data=("adult",)), tmp_path)[0] == "diagnostic (2 seeds)"
    write(tmp_path, "d/paper", [rec({"dataset": "adult"}, s) for s in range(3)])
    assert S.status(NB, S.Group(reads=probe, data=("adult",)), tmp_path)[0] == "paper protocol (3 seeds)"
    assert DIAGNOSTIC in S.STATUSES


def test_every_row_group_not_run_says_why():
    """A "not run" row without a word leaves the reader guessing: on the committed records each one is a GPU job
    and its note gives the command; a CPU scale gets no such note."""
    card = catalog.scorecard()
    not_run = card[card["status"] == S.NOT_RUN]
    assert (not_run["note"] != "").all(), not_run[["item", "group"]].to_dict("records")
    gpu = S.Group(reads=catalog.get("c_robust"), scales=("paper",))
    assert S.gpu_note(gpu) == (
        "a GPU job, not run yet: sslkit run c_robust --scale paper (or its notebook in Colab with a GPU)"
    )
    assert S.gpu_note(S.Group(reads=catalog.get("c_robust"), scales=("cpu", "paper"))) == ""
    assert S.gpu_note(S.Group(status=S.OFFLINE)) == ""


def test_committed_runs_follow_the_experiments_papers_and_count_diagnostics_apart(tmp_path):
    write(tmp_path, "supervised_baseline/paper", [rec({"dataset": "banknote", "n1": 5, "n2": 5}, s) for s in range(3)])
    write(tmp_path, "a_table1/paper", [rec({"dataset": "adult"}, s) for s in range(4)])
    write(tmp_path, "a_table2_supterm/paper", [rec({"dataset": "shuttle"}, s) for s in range(5)])
    probe = rec({"experiment": "fixmatch", "dataset": "adult", "setting": [15, 45], "threshold": 0.95}, 0)
    regime = rec({"experiment": "fixmatch", "dataset": "adult", "setting": "Imb. (60)", "threshold": 0.95}, 0)
    write(tmp_path, "a_fixmatch/paper", [regime, probe])
    write(tmp_path, "b_table1/cpu_efficientnet", [rec({"dataset": "cifar10"}, 0)])
    assert {k: v for k, v in catalog.committed_runs(tmp_path).items() if v} == {  # every (paper, kind) is listed
        ("A", PAPER_PROTOCOL): 3 + 4 + 1,  # supervised_baseline is paper A's (its spec says so)
        ("A", DIAGNOSTIC): 5 + 1,  # the PN-risk supervised term and the FixMatch class-order probe
        ("B", STAND_IN): 1,
    }


def test_every_committed_file_has_an_experiment_and_a_paper():
    assert catalog.uncatalogued() == []
    runs = catalog.committed_runs()
    supterm = len(catalog.records("a_table2_supterm", "paper"))
    assert runs[("A", DIAGNOSTIC)] > supterm > 0
    assert {p for p, _ in runs} <= {"A", "B", "C", "-"}  # "-": the chapter that chains the three papers


def test_status_names_the_missing_rows(tmp_path):
    from sslkit.experiments.paper_a import scorecard as SA

    recs = a_table({**BASE, "Ours (Iter)": 90.0}, datasets=("mnist_4v9",), settings=("(15,45)",), n=3)
    write(tmp_path, "a_table1/paper", recs)
    group = next(g for g in SA.GROUPS[("A", "Table 1")] if g.group == "MNIST 4v9")
    st, _, counts = S.status(NB, group, tmp_path)
    assert st == "paper protocol (3 seeds), 1 of 4 rows" and counts["cells"] == 5


def test_cell_counts():
    cells = [
        (("r",), "a", [80.0, 80.2, 79.8], (80.0, 1.0)),
        (("r",), "b", [70.0, 70.2, 69.8], (80.0, 1.0)),
        (("s",), "a", None, (1.0, 0.1)),
    ]
    counts = S.cell_counts(cells, 30)
    assert counts == {"rows": "1 of 2", "cells": 2, "within_2sd": 1, "differ": 1}


def _committed(paper, item):
    target = next(t for t in catalog.targets() if (t.paper, t.item) == (paper, item))
    return {g.group: S.status(target, g)[0] for g in catalog.groups_of(target)}


def _paper_records(name, **match):
    recs = catalog.records(name, "paper")
    return [r for r in recs if all(r["config"].get(k) in v for k, v in match.items())]


def test_the_issue_examples_get_their_status_on_the_committed_records():
    t4 = _paper_records("a_ablations", experiment={"cov_size"})
    assert any(s.startswith(PAPER_PROTOCOL) for s in _committed("A", "Table 4").values()) == bool(t4)
    nn = _committed("A", "Tables 6-10")
    t7 = _paper_records("a_ablations", experiment={"nn"}, dataset={"mnist_4v9", "cifar_cvd"})
    assert nn["Table 7 · binary image"].startswith(PAPER_PROTOCOL) == bool(t7)
    if any(r["config"]["dataset"] == "cifar_cvd" for r in t7):  # issue 19 §5: the lossy copy is said
        assert "JPEG q75 copy (lossy)" in nn["Table 7 · binary image"]
    ec = _committed("A", "Table 5")
    t5 = _paper_records("a_ablations", experiment={"ec_diag"}, dataset={"mnist"})
    assert ec["Covertype"] == S.OFFLINE and ec["MNIST"].startswith(PAPER_PROTOCOL) == bool(t5)
    table4 = _committed("B", "Table 4")
    assert table4["CIFAR-10 · FreeMatch on frozen features"].startswith(STAND_IN)
    assert (
        table4["CIFAR-10 · selection measures"] == "CPU stand-in (10 seeds; on scikit-learn's 8×8 digits, not CIFAR-10)"
    )
    assert _committed("B", "Table 1")["CIFAR-10"].startswith(STAND_IN)
    theory = _committed("B", "Theory")
    assert set(theory.values()) == {S.DERIVED, S.CHECKED}  # issue 22: Theorem 5.4 and the lemmas, each row says what
    assert any("Theorem 5.4" in row for row in theory) and any("Lemma B.2" in row for row in theory)
    figure6 = _committed("C", "Figure 6 (a-c), Tables 12-13")  # only panel (b) ran
    assert figure6["(a) CIFAR-10 OOD"] == S.NOT_RUN  # (c) ran on the MNIST imbalance stand-in, said so
    imbalance = figure6["(c) CIFAR-10 imbalance"]
    assert imbalance.startswith(STAND_IN) and "not CIFAR-10" in imbalance
    assert figure6["(b) MNIST OOD"].startswith(STAND_IN)
    study = [r for r in catalog.records("c_robust", "cpu") if r["config"].get("epochs")]
    schedules = figure6["(b) MNIST OOD · Full VAT, longer schedules"]  # a diagnostic reading: it ran, as a check
    assert schedules.startswith(DIAGNOSTIC) if study else schedules == S.NOT_RUN


def test_no_row_says_quick_scale_only_unless_its_quick_run_touches_its_data():
    """Issue 19 §5: nine rows said "quick scale only" although their quick run never read their data."""
    for t in catalog.targets():
        for g in catalog.groups_of(t):
            if S.status(t, g)[0] == S.QUICK:
                assert S.runs_at_quick_scale(g), (t.item, g.group)
    # its quick grid is two tabular datasets: committed records or "not run", never "quick scale only"
    assert _committed("A", "Table 1")["CIFAR CvD"] != S.QUICK
    assert _committed("C", "Figure 4 (a-e)")["VAT, MT, FixMatch · CIFAR-10"] == S.NOT_RUN  # quick runs digits


@pytest.mark.parametrize("paper", ["A", "B", "C"])
def test_every_item_has_a_known_status(paper):
    for t in [t for t in catalog.targets() if t.paper == paper]:
        for g in catalog.groups_of(t):
            if g.status:
                assert g.status in S.STATUSES
            else:
                assert g.reads in catalog.EXPERIMENTS and set(g.scales) & set(g.reads.scales), (t.item, g.group)


def test_partial_rows_are_named_on_the_committed_records():
    table1 = _committed("A", "Table 1")
    settings = {r["config"]["setting"] for r in _paper_records("a_table1", dataset={"mnist_4v9"})}
    assert len(settings) >= 3 and table1["MNIST 4v9"].startswith(PAPER_PROTOCOL)
    assert table1["MNIST 4v9"].endswith(f", {len(settings)} of 4 rows") == (len(settings) < 4)
    assert _committed("A", "Table 5")["Shuttle, Dry Bean"] == "paper protocol (30 seeds)"


def test_scorecard_renders_without_an_index_and_links_the_pages(tmp_path):
    card = catalog.scorecard(root=tmp_path)
    assert {st.split(" (")[0] for st in card["status"]} <= {
        S.QUICK,
        S.NOT_RUN,
        S.OFFLINE,
        S.DERIVED,
        S.CHECKED,
        S.PLOTTED,
    }
    page = S.to_html(card)
    assert page.count("<tr") == len(card) + 1 and '<a href="../notebooks/a_table1.html">' in page
    assert "<th></th>" not in page  # no index column


def test_count_table_counts_every_row_group_once_in_status_order():
    import pandas as pd

    card = pd.DataFrame(
        {
            "paper": ["A", "A", "C", "-", "C"],
            "status": [f"{S.PAPER_PROTOCOL} (10 seeds)", S.NOT_RUN, f"{S.STAND_IN} (3 seeds)", S.QUICK, S.NOT_RUN],
        }
    )
    t = S.count_table(card)
    assert list(t.index) == ["A", "C", "all three"] and t.index.name == "paper"
    assert list(t.columns) == [S.PAPER_PROTOCOL, S.STAND_IN, S.QUICK, S.NOT_RUN, "total"]  # STATUSES order
    assert t.loc["A"].tolist() == [1, 0, 0, 1, 2] and t.loc["all three", S.QUICK] == 1
    assert t["total"].sum() == len(card) and not t.isna().any().any()
    committed = catalog.scorecard()
    assert S.count_table(committed)["total"].sum() == len(committed)


def test_every_groups_entry_names_an_item():
    """A GROUPS key that no target names is silently ignored (its item falls back to one default group)."""
    items = {(t.paper, t.item) for t in catalog.targets()}
    assert not [key for key in catalog.GROUPS if key not in items]


def test_paper_a_theorems_are_derived_and_checked_not_quick_scale():
    assert _committed("A", "Theorems 1-9") == {"": S.DERIVED}
    assert _committed("A", "Theorem 10") == {"": S.CHECKED}


def test_overview_rows_follow_the_book_and_drop_empty_columns(tmp_path):
    claims = catalog.ledger(root=tmp_path)
    card = catalog.scorecard(root=tmp_path, claims=claims)
    mine = S.paper_card(card, "A")
    assert set(mine["paper"]) == {"A"} and len(mine) == (card["paper"] == "A").sum()
    order = S.toc_order()
    ranks = [order.index(nb) if nb in order else len(order) for nb in mine["notebook"]]
    assert ranks == sorted(ranks)  # in the order of _toc.yml
    theory = list(mine.loc[mine["notebook"] == "notebooks/a_theory.md", "item"])
    assert theory == ["Theorems 1-9", "Theorem 10"]  # a notebook's items in its front matter's order
    summary, page = catalog.overview("A", card=card, claims=claims)
    assert summary.startswith(f"{len(mine)} row groups (")
    assert "<th>paper</th>" not in page and "<th>status</th>" in page and "<th></th>" not in page
    assert "<th>cells</th>" not in page  # no record here, so no cell counts in any row
    assert page.count("<tr") == len(mine) + 1


def test_paper_summary_counts_row_groups_and_verdicts():
    card = S.pd.DataFrame(
        {
            "paper": ["A", "A", "A", "B"],
            "status": ["paper protocol (3 seeds)", "paper protocol (2 seeds)", S.QUICK, S.NOT_RUN],
        }
    )
    claims = S.pd.DataFrame({"paper": ["A", "A", "A", "B"], "verdict": [C.FAILS, C.HOLDS, C.HOLDS, C.OPEN]})
    assert S.paper_summary(card, claims, "A") == (
        "3 row groups (2 paper protocol, 1 quick scale only) and 3 claims (2 hold, 1 does not hold)"
    )
    assert S.paper_summary(card, claims, "B") == "1 row group (1 not run) and 1 claim (1 not resolved)"


def test_the_figure4_claims_read_one_algorithm_only():
    """Each algorithm's Figure 4 claim sees its own runs: other algorithms' records change nothing."""
    tradeoff = CC.TRADEOFF
    recs = tradeoff.records("cpu")
    for algo in ("vat", "mean_teacher", "fixmatch"):
        own = [r for r in recs if r["config"]["algorithm"] == algo]
        if not own:
            continue
        for fn in (CC.c_beats_random_earlystop, CC.c_beats_craig_gradmatch):
            assert fn(recs, algorithm=algo) == fn(own)
    if len({r["config"]["algorithm"] for r in recs}) > 1:  # without the filter the rows of all of them are pooled
        assert CC.c_beats_random_earlystop(recs) != CC.c_beats_random_earlystop(recs, algorithm="vat")
    assert {a for a, _, _ in CC.C_ALGORITHMS} == {"vat", "mean_teacher", "fixmatch"}


def test_chapter_c_stand_in_notes_follow_the_protocol_dicts():
    """Each chapter-C row group with CPU-scale records names its stand-in, computed from its protocol dict: the
    trade-off and the robust protocols differ, and a changed value shows up in the note."""
    from sslkit.experiments.paper_c.robust import PROTOCOLS as ROBUST
    from sslkit.experiments.paper_c.tradeoff import PROTOCOLS as TRADEOFF

    for t in catalog.targets():
        for g in catalog.groups_of(t) if t.paper == "C" else ():
            if any(g.reads.scales[s].kind == STAND_IN for s in S.matching(g)):
                robust = g.reads is CCR.ROBUST
                protocols = {r["config"]["protocol"] for recs in S.matching(g).values() for r in recs}
                imbalance = robust and protocols == {"cpu_imbalance"}
                longer = robust and protocols == {"cpu_long"}  # the longer stand-in (T = 8, R = 2): its own note
                want = (
                    SC.CIFAR10_NOTE
                    if g.reads is CCR.ROBUST_CIFAR10
                    else SC.IMBALANCE_NOTE
                    if imbalance
                    else SC.LONG_NOTE
                    if longer
                    else SC.ROBUST_NOTE
                    if robust
                    else SC.CPU_NOTE
                )
                assert g.note.endswith(want), (t.item, g.group, g.note)
    t, r = TRADEOFF["cpu"], ROBUST["cpu"]
    assert f"T = {t['epochs']} (paper: " in SC.CPU_NOTE and f"R = {t['every']} (paper: " in SC.CPU_NOTE
    assert f"T = {r['epochs']} (the paper states none)" in SC.ROBUST_NOTE and f"lr {r['lr']:g}" in SC.ROBUST_NOTE
    assert "ratio 50 % / budget 50 %" in SC.TABLE11_NOTE  # the cpu grid's only Retrieve-Warm cell
    assert "data MNIST (paper: CIFAR-10)" in SC.IMBALANCE_NOTE
    long = ROBUST["cpu_long"]
    assert (
        f"T = {long['epochs']} (the paper states none)" in SC.LONG_NOTE
        and f"R = {long['every']} (paper: " in SC.LONG_NOTE
    )
    paper = TRADEOFF["paper_cifar10"]
    assert SC.stand_in_note(paper, (paper,)).startswith("changes ; keeps data CIFAR-10")
    assert SC.stand_in_note({**paper, "lr": 0.1}, (paper,)).startswith("changes lr 0.1 (paper: 0.03); keeps")


def test_ledger_refuses_an_unknown_paper_or_item():
    with pytest.raises(ValueError, match="paper must be one of"):
        catalog.ledger(paper="D")
    with pytest.raises(ValueError, match="Table 99"):
        catalog.ledger(paper="A", item="Table 99")


def test_ledger_html_shows_four_columns_verdict_third_and_folds_long_evidence():
    table = catalog.ledger()
    long = "deciding: " + "; ".join(f"row {i}: a vs b +0.{i} (95 % CI -1 to +1, p = 0.5)" for i in range(40))
    table.loc[table.index[0], "evidence"] = long
    a = C.ledger_html(table, "A")
    assert a.count("<tr id=") == (table["paper"] == "A").sum()  # one row (anchored by its id) per claim of A
    assert "<th>where</th><th>claim → test</th><th>verdict</th><th>evidence</th>" in a
    first = a.split("<tr id=")[1]
    verdict_cell = first.split("<td>")[3]
    assert verdict_cell.startswith(f"<strong>{table.iloc[0]['verdict']}</strong>")
    assert "<details><summary>deciding: row 0" in first and "row 39: a vs b +0.39" in first
    summary = first.split("<summary>")[1].split("</summary>")[0]
    assert len(summary) <= 310 and summary.endswith("; …")  # cut after a "; ", the rest inside <details>
    short = table.iloc[1]
    if len(short["evidence"]) <= 300:
        assert "<details>" not in a.split("<tr id=")[2]
    assert C.ledger_html(table).count("<tr id=") == len(table)
    with pytest.raises(ValueError, match="no claim of paper 'D'"):
        C.ledger_html(table, "D")


def test_c_last_layer_speedup_pairs_the_two_selections_of_each_seed():
    """§3.4's claim on c_lastlayer records: holds when the last-layer selection is faster at every budget (paired
    by seed), not resolved when one budget cannot tell, does not hold when the last layer is slower somewhere."""
    from sslkit.experiments.paper_c.claims_cost import c_last_layer_speedup

    def recs(last, full, fractions=(0.1, 0.2)):
        return [
            {
                "config": {"protocol": "cpu", "fraction": f},
                "seed": s,
                "metrics": {"last_cpu_seconds": last + 0.1 * s + f, "full_cpu_seconds": full + 0.13 * s + f},
            }
            for f in fractions
            for s in range(3)
        ]

    assert c_last_layer_speedup([])[0] == C.NOT_RUN
    verdict, evidence = c_last_layer_speedup(recs(1.0, 20.0))
    assert verdict == C.HOLDS and evidence.startswith("cpu 10%: last − full -19.0")
    assert c_last_layer_speedup(recs(20.0, 1.0))[0] == C.FAILS
    noisy = recs(1.0, 20.0, (0.1,)) + [
        {
            "config": {"protocol": "cpu", "fraction": 0.2},
            "seed": s,
            "metrics": {"last_cpu_seconds": [5.0, 1.0, 9.0][s], "full_cpu_seconds": [4.0, 8.0, 3.0][s]},
        }
        for s in range(3)
    ]
    assert c_last_layer_speedup(noisy)[0] == C.OPEN
