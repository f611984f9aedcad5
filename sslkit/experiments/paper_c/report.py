"""What the paper-C pages show, computed from records: ``report(records) -> tables, facts``.

The trade-off and robust-SSL pages keep prose and one visible cell of the method;
the bookkeeping -- means over seeds, verdicts by the book's one rule (:func:`~sslkit.experiments.report.stats.compare`),
the two readings of the unlabeled weights -- lives here, where it is tested.

**Two readings of the unlabeled weights.** CRAIG, GradMatch and CRUST return per-sample weights. CORDS multiplies
each coreset sample's unlabeled loss by its raw weight, whose mean over the coreset is about N / k (the number of
points each represents), so a 10 % coreset trains with a loss about ten times larger than Retrieve's unweighted one.
The paper does not say which reading it ran. The main grids use CORDS' raw weights; the catalog's second reading
(:data:`~sslkit.experiments.paper_c.experiments.MEAN1`) scales them to mean 1 (``normalize_weights=True``), which
keeps the loss on Retrieve's scale. Both are shown, each judged against Retrieve by the same rule.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..report.stats import compare
from ..report.tables import LABELS, book_table
from .divergence import DIVERGED_FACTOR as DIVERGED_FACTOR  # re-exported: the pages read it here
from .divergence import is_diverged
from .tradeoff import FRACTIONS, MAIN_KEYS, PAPER_CLAIMS, PAPER_TABLES, tradeoff_rows

ALGORITHMS = ("vat", "mean_teacher", "fixmatch")
BASELINES = ("random", "full_earlystop", "craig", "gradmatch")
METHOD_ORDER = ("full", "full_earlystop", "random", "craig", "gradmatch", "retrieve")
READINGS = {False: "raw weights (CORDS, mean N / k)", True: "weights scaled to mean 1"}


def budget(fraction) -> str:
    """``0.1 -> "10 %"``; Full (no fraction) is ``"100 %"``."""
    return "100 %" if fraction is None or pd.isna(fraction) else f"{round(100 * fraction)} %"


def summary(rows) -> pd.DataFrame:
    """Mean ± std over seeds of accuracy, time, speed-up and degradation per (algorithm, method, budget) of
    :func:`~.tradeoff.tradeoff_rows` rows (columns ``seeds, acc, acc_std, seconds, speedup, degradation``)."""
    df = pd.DataFrame(rows)
    df["budget"] = df["fraction"].map(budget)
    g = df.groupby(["algorithm", "method", "budget"])
    out = g.agg(
        seeds=("seed", "nunique"),
        acc=("test_acc", "mean"),
        acc_std=("test_acc", "std"),
        seconds=("seconds", "mean"),
        speedup=("speedup", "mean"),
        degradation=("degradation", "mean"),
    )
    return out.reset_index()


def accuracy_table(summ: pd.DataFrame, algorithm: str, caption=None):
    """One algorithm's table: a row per method, test accuracy (mean ± std) and speed-up per budget."""
    s = summ[summ["algorithm"] == algorithm]
    rows = []
    for method in METHOD_ORDER:
        d = s[s["method"] == method].set_index("budget")
        if d.empty:
            continue
        row = {"method": method}
        for b in [budget(f) for f in FRACTIONS] + ["100 %"]:
            if b in d.index:
                acc, sd = d.loc[b, "acc"], d.loc[b, "acc_std"]
                row[f"accuracy {b}"] = f"{acc:.2f} ± {sd:.2f}" if np.isfinite(sd) else f"{acc:.2f}"
                if method != "full":
                    row[f"speed-up {b}"] = f"{d.loc[b, 'speedup']:.2f}×"
        rows.append(row)
    table = pd.DataFrame(rows)
    ordered = ["method"] + [
        f"{what} {b}" for what in ("accuracy", "speed-up") for b in ["10 %", "20 %", "30 %", "100 %"]
    ]
    return book_table(table[[c for c in ordered if c in table.columns]], first="method", caption=caption)


def per_seed(rows, method: str, fraction, key: str = "test_acc") -> dict:
    """``{seed: value}`` of one (method, budget): the runs of a seed pair across methods."""
    return {r["seed"]: r[key] for r in rows if r["method"] == method and r["fraction"] == fraction}


def claims(rows, algorithms=ALGORITHMS, baselines=BASELINES) -> pd.DataFrame:
    """Retrieve against each baseline per (algorithm, budget), by the one rule, paired by seed: ``algorithm,
    budget, vs, diff, ci, p, verdict, seeds, text``."""
    out = []
    for a in algorithms:
        rows_a = [r for r in rows if r["algorithm"] == a]
        if not rows_a:
            continue
        for f in FRACTIONS:
            ret = per_seed(rows_a, "retrieve", f)
            for other in baselines:
                c = compare(ret, per_seed(rows_a, other, f))
                out.append(
                    {
                        "algorithm": a,
                        "budget": budget(f),
                        "vs": other,
                        "diff": c.diff,
                        "ci": f"{c.ci[0]:+.2f} to {c.ci[1]:+.2f}",
                        "p": c.p,
                        "verdict": c.verdict,
                        "seeds": min(c.n),
                        "text": f"{c.verdict} ({c.short()})",
                    }
                )
    return pd.DataFrame(out)


def claims_table(cl: pd.DataFrame, algorithm: str, caption=None):
    """The verdicts of one algorithm: a row per baseline, a column per budget ("higher (+1.2, p = 0.03)")."""
    d = cl[cl["algorithm"] == algorithm]
    cells = d.assign(cell=[f"{v} ({x:+.2f}, p = {p:.2g})" for v, x, p in zip(d["verdict"], d["diff"], d["p"])])
    wide = cells.pivot(index="vs", columns="budget", values="cell").reset_index()
    wide = wide.rename(columns={"vs": "Retrieve against"})
    return book_table(wide, first="Retrieve against", order={"Retrieve against": list(BASELINES)}, caption=caption)


def paired_on_common(a: dict, b: dict) -> tuple[dict, dict]:
    """The one rule's pairing of two ``{seed: accuracy}`` maps: both restricted to the seeds they share (the same
    data draw and start) when at least two do, else both whole (Welch on all)."""
    common = sorted(set(a) & set(b))
    if len(common) >= 2:
        return {s: a[s] for s in common}, {s: b[s] for s in common}
    return a, b


def retrieve_against(ret: dict, other: dict):
    """Retrieve's per-seed accuracies ``ret`` against a baseline's ``other`` by the one rule
    (:func:`paired_on_common`). Returns the :class:`~..report.stats.Comparison` and Retrieve's mean on the seeds
    compared."""
    a, b = paired_on_common(ret, other)
    return compare(a, b), float(np.mean(list(a.values())))


def cell_accs(rows, method: str, fraction, ratio, key: str = "test_acc") -> dict:
    """``{seed: row[key]}`` (accuracy by default) of one method in one (budget, ratio) cell of
    :func:`~.robust.robust_rows`: the runs of a seed and ratio share their data and initialisation, so cells pair by
    seed. Rows of one protocol only: two rows of a seed in a cell (two protocols pooled, e.g. the stand-in and its
    longer schedule) raise instead of one silently replacing the other."""
    out = {}
    for r in rows:
        if (r["method"], r["fraction"], r["ratio"]) == (method, fraction, ratio):
            if r["seed"] in out:
                raise ValueError(
                    f"two rows of seed {r['seed']} for {method} at budget {fraction}, ratio {ratio}: rows of "
                    "several protocols are pooled; pass one protocol's rows"
                )
            out[r["seed"]] = r[key]
    return out


def _by_protocol(rows, method: str) -> list[tuple[str, list]]:
    """``[(protocol, its OOD rows)]`` for each OOD protocol in ``rows`` that has a run of ``method`` (a reading or an
    ablation runs on some protocols only); rows of different protocols are never pooled."""
    from .robust import PROTOCOLS as ROBUST_PROTOCOLS

    # the readings run on the OOD grids; imbalance ratios (0.1, 0.3, 0.5) share 0.5 with them: never pooled
    ood = [r for r in rows if ROBUST_PROTOCOLS[r["protocol"]]["scenario"] == "ood"]
    names = sorted({r["protocol"] for r in ood if r["method"] == method})
    return [(p, [r for r in ood if r["protocol"] == p]) for p in names]


def readings(records, algorithms=ALGORITHMS, methods=("craig", "gradmatch")) -> pd.DataFrame:
    """CRAIG / GradMatch under both readings of their weights, each against Retrieve (same algorithm, budget and
    seed; the one rule, paired by seed on the seeds both have, Welch where fewer than two pair). One row per
    (algorithm, budget, method, reading): ``accuracy`` (mean), ``seeds``, Retrieve's mean on the same seeds, the
    difference, ``test`` (difference, 95 % CI and p) and the verdict ("higher" = Retrieve more accurate)."""
    accs: dict = {}
    for r in records:
        c = r["config"]
        if set(c) - {"normalize_weights"} != MAIN_KEYS or c["protocol"] is None:
            continue
        key = (c["algorithm"], c["method"], c["fraction"], bool(c.get("normalize_weights", False)))
        accs.setdefault(key, {})[r["seed"]] = r["metrics"]["test_acc"]
    out = []
    for a in algorithms:
        for f in FRACTIONS:
            ret = accs.get((a, "retrieve", f, False), {})
            if not ret:
                continue
            for m in methods:
                for mean1, reading in READINGS.items():
                    other = accs.get((a, m, f, mean1), {})
                    c, ret_mean = retrieve_against(ret, other) if other else (None, np.nan)
                    out.append(
                        {
                            "algorithm": a,
                            "budget": budget(f),
                            "method": m,
                            "reading": reading,
                            "seeds": len(other),
                            "accuracy": np.mean(list(other.values())) if other else np.nan,
                            "Retrieve": ret_mean,
                            "Retrieve minus it": c.diff if c else np.nan,
                            "test": c.short() if c else "",
                            "verdict": c.verdict if c else "no runs yet",
                        }
                    )
    return pd.DataFrame(out)


def readings_table(rd: pd.DataFrame, algorithm: str, caption=None):
    """Both readings one under the other for one algorithm: a row per (budget, method, reading), its accuracy
    and Retrieve's difference from it (verdict, 95 % CI, p). Long rather than wide: the test text is long, and
    two readings side by side would not fit the page's column."""
    d = rd[rd["algorithm"] == algorithm]
    rows = []
    for (b, m), g in d.groupby(["budget", "method"], sort=False):
        for short, reading in (("raw", READINGS[False]), ("mean 1", READINGS[True])):
            x = g[g["reading"] == reading]
            if x.empty:
                continue
            x = x.iloc[0]
            none = x["seeds"] == 0
            rows.append(
                {
                    "budget": b,
                    "method": m,
                    "weights": short,
                    "accuracy": "–" if none else f"{x['accuracy']:.2f} ({x['seeds']} seeds)",
                    "Retrieve minus it": x["verdict"] if none else f"{x['verdict']}: {x['test']}",
                }
            )
    return book_table(
        pd.DataFrame(rows),
        first=["budget", "method", "weights"],
        order={"budget": [], "method": ["craig"], "weights": ["raw", "mean 1"]},
        caption=caption,
    )


def paper_point(
    algorithm: str = "vat", dataset: str = "cifar10", fraction: float = 0.3, method: str = "retrieve"
) -> dict:
    """The paper's numbers of one (algorithm, dataset, method, budget) -- Retrieve by default: speed-up over Full
    (its Tables 5-10's hours) and accuracy loss, plus §4's quoted pair where it gives one (Retrieve only)."""
    full, ret = (
        PAPER_TABLES[(algorithm, dataset, "full", fraction)],
        PAPER_TABLES[(algorithm, dataset, method, fraction)],
    )
    return {
        "speedup": full["hours"] / ret["hours"],
        "degradation": full["mean"] - ret["mean"],
        "quoted": PAPER_CLAIMS.get((algorithm, dataset)) if method == "retrieve" else None,
    }


def paper_curve(algorithm: str, method: str, dataset: str = "cifar10", fractions=FRACTIONS) -> dict:
    """Figure 4's axes from the paper's Tables 5-10: ``{"fraction", "speedup", "degradation"}`` lists over the
    budgets the tables print for (algorithm, dataset, method) -- empty lists where they print none (GradMatch,
    Full-EarlyStop)."""
    fs = [f for f in fractions if (algorithm, dataset, method, f) in PAPER_TABLES]
    points = [paper_point(algorithm, dataset, f, method) for f in fs]
    return {
        "fraction": fs,
        "speedup": [p["speedup"] for p in points],
        "degradation": [p["degradation"] for p in points],
    }


def tradeoff_report(records, *, clock: str = "cpu_seconds") -> dict:
    """Everything the trade-off page shows from one scale's records: ``rows`` (per run), ``summary``, ``claims``,
    ``readings`` and ``facts`` (the numbers the prose and the headline quote; ``facts["diverged"]``: the
    :func:`diverged_text` of the runs left out). A diverged run (:func:`is_diverged`) is left out of all of them:
    a recorded failure, not a result."""
    kept, diverged = split_diverged(records, TRADEOFF_CLASSES)
    rows = tradeoff_rows(kept, clock=clock)
    if not rows:
        return {"rows": [], "summary": None, "claims": pd.DataFrame(), "readings": pd.DataFrame(), "facts": {}}
    summ = summary(rows)
    cl = claims(rows)
    rd = readings(kept)
    s = summ[summ["algorithm"] == "vat"].set_index(["method", "budget"])
    facts = {}
    if ("retrieve", "30 %") in s.index:
        facts.update(
            vat_full_acc=float(s.loc[("full", "100 %"), "acc"]),
            vat_speedup_30=float(s.loc[("retrieve", "30 %"), "speedup"]),
            vat_degr_30=float(s.loc[("retrieve", "30 %"), "degradation"]),
        )
    vs_random = cl[(cl["vs"] == "random")] if len(cl) else cl
    facts["vs_random"] = {v: int((vs_random["verdict"] == v).sum()) for v in ("higher", "not resolved", "lower")}
    facts["vs_random_cells"] = len(vs_random)
    mean1 = rd[(rd["reading"] == READINGS[True])] if len(rd) else rd
    facts["mean1_seeds"] = int(mean1["seeds"].max()) if len(mean1) else 0
    facts["raw_seeds"] = int(rd[rd["reading"] == READINGS[False]]["seeds"].max()) if len(rd) else 0
    facts["diverged"] = diverged_text(diverged)
    return {"rows": rows, "summary": summ, "claims": cl, "readings": rd, "facts": facts}


def committed(records, protocols: dict) -> str:
    """What committed CPU stand-in records hold, in words: their runs per protocol, each with its T (epochs) and
    R (rounds between selections) from ``protocols`` (a module's ``PROTOCOLS``) and, for a robust protocol, the kind
    of polluted data; the runs of a schedule-length study (config ``epochs`` set) apart. "no run yet" when empty."""
    kinds = {"ood": "OOD", "imbalance": "class-imbalanced"}
    configs = [r["config"] for r in records]
    main = [c for c in configs if not c.get("epochs")]
    study = sorted({c["epochs"] for c in configs if c.get("epochs")})
    parts = []
    for protocol in sorted({c["protocol"] for c in main}):
        if protocol not in protocols:
            raise KeyError(f"records of protocol {protocol!r}, which is not among {sorted(protocols)}")
        p = protocols[protocol]
        n = sum(c["protocol"] == protocol for c in main)
        kind = f", {kinds[p['scenario']]} data" if "scenario" in p else ""
        parts.append(f"{n} runs with T = {p['epochs']}, R = {p['every']}{kind}")
    if study:
        n = len(configs) - len(main)
        parts.append(f"{n} runs of Full VAT's schedule-length study (T = {', '.join(map(str, study))})")
    return "; ".join(parts) or "no run yet"


def label(name: str) -> str:
    """The human label of a method or algorithm id."""
    return LABELS.get(name, name)


def robust_readings(rows, fractions=None, caption=None):
    """The robust-SSL page's two readings of CRUST's weights: per (budget, OOD ratio), CRUST with CORDS' raw
    weights and with weights scaled to mean 1 (rows of method ``crust`` and ``crust_mean1`` from
    :func:`~.robust.robust_rows`), one row each, with its seeds, its mean accuracy, Retrieve's mean on the same
    seeds and Retrieve's difference from it by the one rule (paired by seed on the seeds both have; verdict,
    95 % CI, p). One block per OOD protocol that ran the mean-1 reading (with a ``protocol`` column when there are
    several; without such a run, the first protocol that ran CRUST, its mean-1 rows marked "no runs yet"). Returns
    ``(book table, frame)``."""
    from .robust import FRACTIONS as ROBUST_FRACTIONS

    out = []
    groups = _by_protocol(rows, "crust_mean1") or _by_protocol(rows, "crust")[:1]
    for protocol, prows in groups:
        for f in fractions or ROBUST_FRACTIONS:
            for ratio in sorted({r["ratio"] for r in prows}):
                ret = cell_accs(prows, "retrieve", f, ratio)
                if not ret:
                    continue
                for method, short in (("crust", "raw"), ("crust_mean1", "mean 1")):
                    row = {
                        "protocol": protocol,
                        "budget": budget(f),
                        "OOD ratio": f"{round(100 * ratio)} %",
                        "CRUST weights": short,
                    }
                    other = cell_accs(prows, method, f, ratio)
                    if not other:
                        out.append({**row, "CRUST": "–", "Retrieve": "–", "Retrieve minus CRUST": "no runs yet"})
                        continue
                    c, ret_mean = retrieve_against(ret, other)
                    row["CRUST"] = f"{np.mean(list(other.values())):.2f} ({len(other)} seeds)"
                    row["Retrieve"] = f"{ret_mean:.2f}"
                    row["Retrieve minus CRUST"] = f"{c.verdict}: {c.short()}"
                    out.append(row)
    frame = _protocol_column(pd.DataFrame(out))
    first = [c for c in ("protocol", "budget", "OOD ratio", "CRUST weights") if c in frame]
    return book_table(frame, first=first, caption=caption), frame


def _protocol_column(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` without its ``protocol`` column when one protocol fills it (the common case: say it once, in the
    caption or the prose)."""
    if "protocol" in frame and frame["protocol"].nunique() <= 1:
        return frame.drop(columns="protocol")
    return frame


def mixup_ablation(rows, margin: float, caption=None):
    """The robust-SSL page's MixUp ablation (§4: "the performance gain due to MixUP for coreset selection in the SSL
    setting is minimal"): per (OOD protocol, budget, ratio) of :func:`~.robust.robust_rows`, CRUST (method
    ``crust``, with MixUp) and CRUST's coresets trained without it (``crust_nomixup``), their seeds and means, and
    MixUp's gain (CRUST minus the ablation) by the one rule (paired by seed on the seeds both ran): its 95 % CI and
    p, and whether the whole interval lies within ``± margin`` points (:func:`~..report.stats.within`). Returns
    ``(book table, frame)``; the frame is empty when no ablation run is there."""
    from ..report.stats import within

    if isinstance(margin, bool) or not isinstance(margin, (int, float)) or not margin > 0:
        raise ValueError(f"margin must be a positive number of accuracy points, got {margin!r}")

    out = []
    cells = [
        (p, prows, f, ratio)
        for p, prows in _by_protocol(rows, "crust_nomixup")
        for f, ratio in sorted({(r["fraction"], r["ratio"]) for r in prows if r["method"] == "crust_nomixup"})
    ]
    for protocol, prows, f, ratio in cells:
        with_mix, without = cell_accs(prows, "crust", f, ratio), cell_accs(prows, "crust_nomixup", f, ratio)
        if not with_mix:
            continue
        a, b = paired_on_common(with_mix, without)
        common = set(with_mix) & set(without)
        verdict, c = within(a, b, margin)
        out.append(
            {
                "protocol": protocol,
                "budget": budget(f),
                "OOD ratio": f"{round(100 * ratio)} %",
                "seeds": len(common) if len(common) >= 2 else f"{len(with_mix)} / {len(without)}",
                "CRUST": f"{np.mean(list(a.values())):.2f}",
                "without MixUp": f"{np.mean(list(b.values())):.2f}",
                "MixUp's gain": c.short(),
                f"within ±{margin:g}": verdict,
            }
        )
    columns = ["protocol", "budget", "OOD ratio", "seeds", "CRUST", "without MixUp", "MixUp's gain"]
    frame = _protocol_column(pd.DataFrame(out, columns=[*columns, f"within ±{margin:g}"]))
    first = [c for c in ("protocol", "budget", "OOD ratio") if c in frame]
    return book_table(frame, first=first, caption=caption), frame


def schedule_study(cells: dict, min_seeds: int = 3) -> tuple[pd.DataFrame, int | None]:
    """The convergence criterion of the robust stand-in's schedule: ``cells`` is ``{T: {seed: test_acc}}``
    (:func:`~.robust.schedule_rows`). ``T`` is *long enough* when no longer ``T`` tried is significantly more
    accurate than it (the one rule, paired by seed on the seeds both have), each comparison on at least
    ``min_seeds`` common seeds (fewer: no verdict on convergence either way). Returns a frame with, per ``T``, its
    seeds and mean accuracy and the comparison of the next longer ``T`` against it, and the shortest ``T`` that is
    long enough (None: none is, or fewer than two schedules ran)."""
    Ts = sorted(cells)

    def longer_minus(U, T):  # paired by seed on the seeds both have
        common = sorted(set(cells[U]) & set(cells[T]))
        if not common:
            return compare(cells[U], cells[T])
        return compare({s: cells[U][s] for s in common}, {s: cells[T][s] for s in common})

    rows, enough = [], None
    for i, T in enumerate(Ts):
        row = {"T (epochs)": T, "seeds": len(cells[T]), "test accuracy (%)": float(np.mean(list(cells[T].values())))}
        if i + 1 < len(Ts):
            c = longer_minus(Ts[i + 1], T)
            row["next T minus this T"] = f"{c.verdict}: {c.short()}"
        rows.append(row)
    for i, T in enumerate(Ts[:-1]):
        if any(len(set(cells[U]) & set(cells[T])) < min_seeds for U in Ts[i + 1 :]):
            break
        if all(longer_minus(U, T).verdict != "higher" for U in Ts[i + 1 :]):
            enough = T
            break
    return pd.DataFrame(rows), enough


#: the classes of every trade-off protocol's dataset (digits, MNIST, CIFAR-10, SVHN: ten each)
TRADEOFF_CLASSES = 10


def split_diverged(records, num_classes: int, keys=("protocol", "algorithm", "method", "normalize_weights")):
    """``(kept, counts)``: the records that trained, and one row per group of ``keys`` (config values; a missing
    key reads None, ``normalize_weights`` False) with its ``runs`` and ``diverged`` count (:func:`is_diverged`)."""
    kept, counts = [], {}
    for r in records:
        c = r["config"]
        key = tuple(bool(c.get(k, False)) if k == "normalize_weights" else c.get(k) for k in keys)
        row = counts.setdefault(key, dict(zip(keys, key), runs=0, diverged=0))
        row["runs"] += 1
        if is_diverged(r["metrics"], num_classes):
            row["diverged"] += 1
        else:
            kept.append(r)
    return kept, pd.DataFrame(list(counts.values()), columns=[*keys, "runs", "diverged"])


def diverged_text(counts: pd.DataFrame) -> str:
    """The runs :func:`split_diverged` left out, in words: per group with a failure, ``"<algorithm> <method>
    (<weights>): n of N"`` (CORDS' raw weights or mean 1), or ``"none of the N runs"``."""
    bad = counts[counts["diverged"] > 0]
    if bad.empty:
        return f"none of the {int(counts['runs'].sum())} runs"
    return "; ".join(
        f"{LABELS.get(r['algorithm'], r['algorithm'])} {LABELS.get(r['method'], r['method'])} "
        f"({'weights scaled to mean 1' if r['normalize_weights'] else 'raw weights'}): "
        f"{r['diverged']} of {r['runs']}"
        for _, r in bad.iterrows()
    )
