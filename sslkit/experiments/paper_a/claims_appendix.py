"""Paper A's claims about its appendix experiments (App. D.1-D.4: FixMatch's threshold, Table 3; the covariance
set size, Table 4; the EC diagnostic, Table 5; the non-negative correction, Tables 6-10), tested by the one
verdict rule (:mod:`sslkit.experiments.report.stats`). The runs of one row and seed share their split and
initialisation, so they are compared paired by seed. :mod:`.claims` collects :data:`CLAIMS` into the ledger."""

from __future__ import annotations

import numpy as np

from ..report.ledger import (
    FAILS,
    HOLDS,
    NOT_RUN,
    OPEN,
    Claim,
    all_of,
    at_least,
    directed,
    label,
    mean,
    pairs_verdict,
    per_seed,
    rank,
    significantly_above,
    tally_verdicts,
    with_deciding,
)
from ..report.stats import aside, compare, compare_to, judge, not_below, within
from .experiments import ABLATIONS, FIXMATCH

A_TABULAR = ("adult", "banknote", "breast_cancer", "credit_default")
#: "comparable" / "fairly stable": the largest shortfall paper A itself calls comparable -- Table 2, MNIST Mild
#: (1500), Ours (Iter) 94.3 against Sup. 94.8 (§6.2.1); Table 4's own 20-50 per class shortfalls are at most 0.48
A_COMPARABLE = 0.5
#: "does not collapse": the largest drop Table 4 prints below 1000 covariance examples per class, which the
#: paper still describes so (Sev. (500), 2 per class: 78.57 against 82.23)
A_NO_COLLAPSE = 3.7
NN_SMALL = 1.0  # points: our reading of "a small effect" (the paper gives no number)
#: "a clear correlation": |r| of 0.5 or more (Cohen's "large"); the paper gives no number
CLEAR_R = 0.5


def _cov_rows(records) -> dict:
    return per_seed(
        records, ("dataset", "setting"), "cov_per_class", "test_acc", where=lambda c: c.get("experiment") == "cov_size"
    )


def a_cov_size_saturates(records):
    """Table 4: accuracy with 50 covariance examples per class comparable to that with 1000 in every row: the 95 %
    interval of 50 − 1000 above −0.5 point (:data:`A_COMPARABLE`, non-inferiority); does not hold where it lies
    wholly below."""
    rows = {k: v for k, v in _cov_rows(records).items() if 50 in v and 1000 in v}
    if not rows:
        return NOT_RUN, "no Table 4 record with 50 and 1000 covariance examples"
    judged = [
        (label(k), *not_below(v[50], v[1000], A_COMPARABLE, label=f"{label(k)} 50 − 1000")) for k, v in rows.items()
    ]
    verdict = all_of(v for _, v, _ in judged)
    return verdict, f"50 − 1000 per class, not below −{A_COMPARABLE:g}: " + "; ".join(
        f"{lab} {c.short()} [{v}]" for lab, v, c in judged
    )


def a_cov_small_no_collapse(records):
    """App. D.2: with 1, 2 or 3 covariance examples per class, accuracy less than 3.7 points (:data:`A_NO_COLLAPSE`)
    below that with 1000, in every row (non-inferiority at 3.7)."""
    judged = [
        (f"{label(k)} {size}/class", *not_below(v[size], v[1000], A_NO_COLLAPSE, label=f"{label(k)} {size} − 1000"))
        for k, v in sorted(_cov_rows(records).items())
        if 1000 in v
        for size in (1, 2, 3)
        if size in v
    ]
    if not judged:
        return NOT_RUN, "no Table 4 record with 1000 and 1-3 covariance examples"
    return all_of(v for _, v, _ in judged), f"minus 1000 per class, not below −{A_NO_COLLAPSE:g}: " + "; ".join(
        f"{lab} {c.short()} [{v}]" for lab, v, c in judged
    )


def _ec_diag(records) -> dict:
    """``{(dataset, setting): {seed: (cov_rel_fro, test_acc)}}`` of Table 5's records."""
    out: dict = {}
    for r in records:
        c = r["config"]
        if c.get("experiment") == "ec_diag":
            out.setdefault((c["dataset"], c["setting"]), {})[r["seed"]] = (
                r["metrics"]["cov_rel_fro"],
                r["metrics"]["test_acc"],
            )
    return out


def a_ec_no_correlation(records):
    """App. D.3: "no clear correlation between the degree of EC violation and performance": within each Table 5
    setting, the correlation of Cov. rel. Fro. with accuracy across seeds; the 95 % interval of the settings' mean
    r (one-sample t) within ±:data:`CLEAR_R` holds, wholly outside it does not hold. (Across settings an r needs
    three datasets; with two it only orders them.)"""
    diag = _ec_diag(records)
    if not diag:
        return NOT_RUN, "no Table 5 (ec_diag) record"
    rs = [float(np.corrcoef(*zip(*d.values()))[0, 1]) for d in diag.values() if len(d) >= 3]
    if len(rs) < 2:
        return OPEN, f"{len(rs)} setting with three seeds: too few for a test"
    verdict, c = within(compare_to(rs, 0.0), None, CLEAR_R)
    return (
        verdict,
        f"within-setting r over {len(rs)} settings, mean {np.mean(rs):+.2f}; within ±{CLEAR_R:g}: {c.text()}",
    )


def a_ec_distances_nonzero(records):
    """App. D.3: "these distances are not exactly zero": Cov. rel. Fro. significantly above 0 in every setting."""
    diag = _ec_diag(records)
    if not diag:
        return NOT_RUN, "no Table 5 (ec_diag) record"
    judged = [(label(k), *at_least([x for x, _ in d.values()], 0.0, label(k))) for k, d in sorted(diag.items())]
    return all_of(v for _, v, _ in judged), "; ".join(f"{lab}: {c.short(3)}" for lab, _, c in judged)


def a_fixmatch_threshold_matters(records):
    """App. D.1: "this threshold can substantially affect performance": in some (task, regime) FixMatch's best
    threshold (by mean) is significantly above its worst. An existence claim: holds when some row shows it; the
    records cannot show it false, so otherwise not resolved."""
    recs = [r for r in records if not isinstance(r["config"].get("setting"), list)]  # the class-order probe
    rows = per_seed(recs, ("dataset", "setting"), "threshold", "test_acc")
    if not rows:
        return NOT_RUN, "no FixMatch record"
    found = []
    for k, v in sorted(rows.items()):
        if len(v) >= 2:
            best, worst = max(v, key=lambda t: mean(v[t])), min(v, key=lambda t: mean(v[t]))
            c = judge(compare(v[best], v[worst]), label=f"{label(k)} {best:g} − {worst:g}")
            if c.verdict == "higher":
                found.append((c.diff, f"{label(k)} {best:g} − {worst:g} {c.short()}"))
    found.sort(reverse=True)
    return (HOLDS if found else OPEN), (
        f"best threshold significantly above the worst in {len(found)} of {len(rows)} (task, regime)"
        + (f"; largest: {'; '.join(t for _, t in found[:3])}" if found else "")
    )


def _nn_rows(records, datasets) -> dict:
    rows = per_seed(
        records,
        ("dataset", "setting"),
        "nn",
        "test_acc",
        where=lambda c: c.get("experiment") == "nn" and c["dataset"] in datasets,
    )
    return {k: v for k, v in rows.items() if {"on", "off"} <= set(v)}


def a_nn_small_on_tabular(records):
    """Tables 6-10, tabular rows: a small effect (|NN on − NN off| under 1 point) in most (more than half of the)
    rows: the 95 % interval of the difference within ±1 point holds in more than half of them; does not hold when
    it lies wholly outside in at least half."""
    rows = _nn_rows(records, A_TABULAR + ("covertype", "shuttle", "dry_bean"))
    if not rows:
        return NOT_RUN, "no tabular nn record"
    results = {k: within(v["on"], v["off"], NN_SMALL, label=f"{label(k)} on − off") for k, v in rows.items()}
    judged = [v for v, _ in results.values()]
    small, large = judged.count(HOLDS), judged.count(FAILS)
    verdict = HOLDS if small > len(rows) / 2 else FAILS if large >= len(rows) / 2 else OPEN
    resolved = sum(c.verdict != "not resolved" for _, c in results.values())
    k, (_, widest) = max(results.items(), key=lambda kv: max(abs(x) for x in kv[1][1].ci))
    return verdict, (
        f"on − off within ±{NN_SMALL:g} point in {small} of {len(rows)} rows, wholly outside in {large}; the two "
        f"differ significantly in {resolved}; widest interval: {label(k)} {widest.short()}"
    )


def a_nn_helps_images(records):
    """Tables 7-10, image rows: NN on significantly above NN off in every row."""
    rows = _nn_rows(records, ("mnist_4v9", "cifar_cvd", "mnist", "cifar10"))
    return pairs_verdict(
        [(label(k), v["on"], v["off"]) for k, v in rows.items()], f"NN on against off over {len(rows)} image rows"
    )


def a_pl_vat_strong(records, rows):
    """§6.2.1, Table 2, Dry Bean and MNIST: "PL and VAT show strong performance": each of them significantly above
    Sup. in more than half the rows, and significantly below it in none (``rows``: :func:`.claims.a_rows`)."""
    rows = {k: v for k, v in rows.items() if "Sup." in v}
    if not rows:
        return NOT_RUN, "no Dry Bean / MNIST row"
    parts, verdicts = [], []
    for m in ("PL", "VAT"):
        cs = [
            (label(k), judge(compare(v[m], v["Sup."]), label=f"{label(k)} {m} − Sup."))
            for k, v in rows.items()
            if m in v
        ]
        up, down = sum(c.verdict == "higher" for _, c in cs), sum(c.verdict == "lower" for _, c in cs)
        verdicts.append(FAILS if down else HOLDS if up > len(cs) / 2 else OPEN)
        parts.append(
            with_deciding(f"{m} significantly above Sup. in {up} of {len(cs)} rows, below in {down}", cs, verdicts[-1])
        )
    have = ", ".join(sorted({k[0] for k in rows}))
    return all_of(verdicts), "; ".join(parts) + f" (datasets with records: {have})"


def a_more_robust(rows):
    """§6.2.1, Table 2: "our methods are more robust than PL and VAT": in every row where PL or VAT is significantly
    below Sup., both Ours methods significantly above that method (``rows``: :func:`.claims.a_rows`)."""
    if not rows:
        return NOT_RUN, "no Table 2 record"
    judged = []
    for k, v in sorted(rows.items()):
        for m in ("PL", "VAT"):
            if m in v and "Sup." in v and compare(v[m], v["Sup."]).verdict == "lower":
                for o in ("Ours (Iter)", "Ours (EC)"):
                    if o in v:
                        c = compare(v[o], v[m])
                        judged.append((f"{label(k)} {o} − {m}", directed(c, label=f"{label(k)} {o} − {m}"), c))
    if not judged:
        return OPEN, "PL and VAT significantly below Sup. in no row: nothing to be more robust against"
    return all_of(
        v for _, v, _ in judged
    ), f"rows where PL / VAT is below Sup.: {tally_verdicts(v for _, v, _ in judged)}; " + "; ".join(
        f"{lab} {c.short()}" for lab, _, c in judged
    )


def match_or_beat(rows, ours, baselines) -> tuple[str, str]:
    """Our better method of ``ours`` (by mean, per row) not more than :data:`A_COMPARABLE` below each of
    ``baselines``, in every row (non-inferiority)."""
    judged = []
    for k, v in sorted(rows.items()):
        mine = [m for m in ours if m in v]
        if not mine:
            continue
        best = max(mine, key=lambda m: mean(v[m]))
        for b in baselines:
            if b in v:
                lab = f"{label(k)} {best} − {b}"
                judged.append((lab, *not_below(v[best], v[b], A_COMPARABLE, label=lab)))
    if not judged:
        return NOT_RUN, "no row with our method and a baseline"
    verdicts = [v for _, v, _ in judged]
    missed = [f"{lab} {c.short()} [{v}]" for lab, v, c in judged if v != HOLDS]
    return all_of(verdicts), (
        f"{len(judged)} (row, baseline) pairs, not below −{A_COMPARABLE:g}: {tally_verdicts(verdicts)}"
        + (
            f"; not shown: {'; '.join(missed[:6])}" + (f" (+{len(missed) - 6} more)" if len(missed) > 6 else "")
            if missed
            else ""
        )
    )


def first_or_second(rows: dict, methods, share: float) -> tuple[str, str]:
    """Every method of ``methods`` ranks first or second in at least ``share`` of the rows, read by the significant
    comparisons behind the ranking (never by the means alone): a row counts for the claim where each method is
    significantly above every other method but at most one, and against it where two or more methods are
    significantly above one of them. Holds when the rows for reach ``share``, does not hold when the rows against
    leave fewer than ``share`` possible, not resolved otherwise; the ranks by mean are in the evidence."""
    rows = {k: v for k, v in rows.items() if all(m in v for m in methods)}
    if not rows:
        return NOT_RUN, "no row with these methods"
    by_mean = sum(all(rank(v, m) <= 2 for m in methods) for v in rows.values())
    cs = {
        (k, m): [judge(compare(v[m], v[o]), label=f"{label(k)} {m} − {o}") for o in v if o != m]
        for k, v in rows.items()
        for m in methods
    }
    against = sum(any(sum(c.verdict == "lower" for c in cs[(k, m)]) >= 2 for m in methods) for k in rows)
    supported = sum(
        all(sum(c.verdict == "higher" for c in cs[(k, m)]) >= len(v) - 2 for m in methods) for k, v in rows.items()
    )
    need = share * len(rows)
    verdict = HOLDS if supported >= need else FAILS if len(rows) - against < need else OPEN
    text = (
        f"first or second by mean in {by_mean} of {len(rows)} rows; significantly above all others but at most one "
        f"in {supported}; two or more methods significantly above in {against} (need {need:g} rows)"
    )
    missed = [(k, m) for k, v in rows.items() for m in methods if rank(v, m) > 2]
    if missed:  # each missed row: the second method significantly above, or the closest one above
        parts = []
        for k, m in missed:
            with aside():
                above = sorted(significantly_above(rows[k], m), key=lambda mc: mc[1].p)
            if len(above) >= 2:
                parts.append(f"{label(k)}: {m} below {above[1][0]} {above[1][1].short()}")
            else:
                second = sorted((o for o in rows[k] if o != m), key=lambda o: -mean(rows[k][o]))[1]
                with aside():
                    parts.append(f"{label(k)}: {m} vs {second} {compare(rows[k][m], rows[k][second]).short()}")
        text += "; not first or second by mean: " + "; ".join(parts)
    return verdict, text


_D1, _D2, _D3, _D4 = "App. D.1", "App. D.2", "App. D.3", "App. D.4"

CLAIMS = (
    Claim(
        "A-T3-thr",
        "A",
        "Table 3",
        "tabular",
        _D1,
        "Because this threshold can substantially affect performance",
        "in some (task, regime) FixMatch's best threshold significantly above its worst (an existence claim: "
        "otherwise not resolved)",
        (FIXMATCH,),
        a_fixmatch_threshold_matters,
    ),
    Claim(
        "A-T4-sat",
        "A",
        "Table 4",
        "",
        _D2,
        "performance is fairly stable once a modest number of covariance-estimation examples is available ... "
        "and largely saturates around 20–50 examples per class.",
        f"50 − 1000 examples per class: the 95 % interval above −{A_COMPARABLE:g} point in every row "
        "(non-inferiority; 0.5 = the largest shortfall the paper calls comparable, §6.2.1)",
        (ABLATIONS,),
        a_cov_size_saturates,
    ),
    Claim(
        "A-T4-small",
        "A",
        "Table 4",
        "",
        _D2,
        "performance does not collapse even with very small covariance sets",
        f"1, 2, 3 examples per class: the 95 % interval of the drop below 1000 per class under {A_NO_COLLAPSE:g} "
        "points (Table 4's own largest drop), every row",
        (ABLATIONS,),
        a_cov_small_no_collapse,
    ),
    Claim(
        "A-T5-nocorr",
        "A",
        "Table 5",
        "Shuttle, Dry Bean",
        _D3,
        "our experimental results do not show a clear correlation between the degree of EC violation and performance",
        f"the 95 % interval of the mean within-setting correlation of Cov. rel. Fro. with accuracy within ±{CLEAR_R:g} "
        "(a 'clear' correlation read as |r| ≥ 0.5, Cohen's 'large'; the paper gives no number). Covertype rows: not "
        "offline",
        (ABLATIONS,),
        a_ec_no_correlation,
    ),
    Claim(
        "A-T5-nonzero",
        "A",
        "Table 5",
        "Shuttle, Dry Bean",
        _D3,
        "These distances are not exactly zero",
        "Cov. rel. Fro. significantly above 0 (one-sample t) in every setting",
        (ABLATIONS,),
        a_ec_distances_nonzero,
    ),
    Claim(
        "A-NN-tab",
        "A",
        "Tables 6-10",
        "Table 6 · binary tabular",
        _D4,
        "Overall, the correction has a small effect on many tabular datasets.",
        "the 95 % interval of NN on − NN off within ±1 point in more than half of the tabular rows (Tables 6, 8-10)",
        (ABLATIONS,),
        a_nn_small_on_tabular,
    ),
    Claim(
        "A-NN-img",
        "A",
        "Tables 6-10",
        "Table 7 · binary image",
        _D4,
        "However, it is highly effective on image datasets with larger accuracy improvements.",
        "NN on significantly above NN off in every image row (Tables 7-10)",
        (ABLATIONS,),
        a_nn_helps_images,
    ),
)
