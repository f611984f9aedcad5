"""What the paper-A table pages show, computed from a :func:`~sslkit.experiments.report.tables.paper_comparison`
table: one compact table per scale (ours beside the paper in one cell per method) and the headline's facts."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..report.stats import OPEN, compare, compare_summaries
from ..report.tables import book_table, comparison_long, format_mean_std


def comparison_cells(table: pd.DataFrame, digits: int = 1) -> pd.DataFrame:
    """One row per (dataset, setting), one column per method: ``"ours ± sd (n) · paper ± sd · rank a/b"``, a "!"
    after the paper's number when the difference is more than twice the paper's std."""
    rows = []
    for key in table.index:
        row = dict(zip(table.index.names, key if isinstance(key, tuple) else (key,)))
        for method in dict.fromkeys(table.columns.get_level_values(0)):
            c = table.loc[key, method]
            if not c["n"] and pd.isna(c["paper_mean"]):
                continue
            ours = f"{format_mean_std(c['ours_mean'], c['ours_std'], digits)} (n {int(c['n'])})" if c["n"] else "–"
            paper = format_mean_std(c["paper_mean"], c["paper_std"], digits)
            flag = " !" if c["flag"] is True else ""
            rank = (
                ""
                if pd.isna(c["rank"])
                else f" · rank {int(c['rank'])}/" + ("–" if pd.isna(c["paper_rank"]) else f"{int(c['paper_rank'])}")
            )
            row[method] = f"{ours} · paper {paper}{flag}{rank}"
        rows.append(row)
    return pd.DataFrame(rows)


def comparison_table(table: pd.DataFrame, caption=None, digits: int = 1):
    """:func:`comparison_cells` as the book shows it (dataset and setting first, labels, no NaN)."""
    cells = comparison_cells(table, digits)
    labels = {"dataset": "dataset", "setting": "(n₁, n₂)"}
    return book_table(cells, first=list(table.index.names), labels=labels, caption=caption)


def headline(table: pd.DataFrame, method: str = "Ours (Iter)", baseline: str = "Sup.") -> dict:
    """Facts for a page's headline box: over the rows where the paper gives both, the mean of ``method`` and of
    ``baseline`` in the paper and in ours, the rows and the seeds per cell."""
    both = table[table[(method, "paper_mean")].notna() & (table[(method, "n")] > 0)]
    if both.empty:
        return {"rows": 0}
    return {
        "rows": len(both),
        "paper_method": float(both[(method, "paper_mean")].mean()),
        "paper_baseline": float(both[(baseline, "paper_mean")].mean()),
        "ours_method": float(both[(method, "ours_mean")].mean()),
        "ours_baseline": float(both[(baseline, "ours_mean")].mean()),
        "seeds_min": int(both[(method, "n")].min()),
        "seeds_max": int(both[(method, "n")].max()),
        "ours_first": int((both[(method, "rank")] == 1).sum()),
        "paper_first": int((both[(method, "paper_rank")] == 1).sum()),
    }


#: how the pages name paper A's datasets (the records' ids)
DATASET_NAMES = {
    "adult": "Adult",
    "banknote": "Banknote",
    "breast_cancer": "Breast Cancer",
    "credit_default": "Credit",
    "mnist_4v9": "MNIST 4 vs 9",
    "cifar_cvd": "CIFAR-10 cat vs dog",
    "cifar10": "CIFAR-10",
    "shuttle": "Shuttle",
    "dry_bean": "Dry Beans",
    "covertype": "Covertype",
    "mnist": "MNIST",
    "digits": "scikit-learn's 8×8 digits",
}
#: headers of the long comparison tables
FIELD_LABELS = {"diff": "ours − paper", "rank": "rank ours/paper"}


def comparison_split(table: pd.DataFrame, caption: str = "", by: str = "dataset", digits: int = 1) -> list:
    """One narrow table per value of the row field ``by`` (a dataset), in long form
    (:func:`~sslkit.experiments.report.tables.comparison_long`: one row per setting and method, columns ours /
    n / paper / diff / rank): each fits the book's column where the methods side by side would not. The caption
    is ``"<caption>, <value>"``; where every cell of a table ran the same number of seeds, the ``n`` column is
    dropped and the caption says it."""
    long = comparison_long(table, digits)
    if by not in long.columns:
        raise ValueError(f"comparison_split: no row field {by!r}; the table's rows are {list(table.index.names)}")
    out = []
    for value, part in long.groupby(by, sort=False):
        part = part.drop(columns=by)
        seeds = set(part.loc[part["n"] != "–", "n"])
        text = ", ".join(str(t) for t in (caption, DATASET_NAMES.get(value, value)) if t)
        if len(seeds) == 1:
            part = part.drop(columns="n")
            n = seeds.pop()
            text += f" ({n} seed{'s' if n != '1' else ''} per cell)"
        keys = [c for c in part.columns if c not in ("ours", "n", "paper", "diff", "rank")]
        out.append(book_table(part.reset_index(drop=True), first=keys, labels=FIELD_LABELS, caption=text))
    return out


def side_by_side(table: pd.DataFrame, names: dict | None = None, digits: int = 1) -> pd.DataFrame:
    """A :func:`~sslkit.experiments.report.tables.paper_comparison` table with a few columns (e.g. NN on / off) as
    a narrow frame: one ``row`` column ("<dataset> <setting>", datasets named by :data:`DATASET_NAMES`), then per
    column value ``"<name>: ours"`` (mean ± std; " !" when it is more than twice the paper's std from the paper's
    mean, a no-break space keeping it beside the number) and ``"<name>: paper"``. ``names`` maps column values
    to their names (default: the values)."""
    if table.columns.nlevels != 2:
        raise ValueError("side_by_side needs a table with a column field (columns (value, field))")
    names = names or {}
    rows = [key if isinstance(key, tuple) else (key,) for key in table.index]
    out = {"row": [" ".join(str(DATASET_NAMES.get(k, k)) for k in key) for key in rows]}
    for col in dict.fromkeys(table.columns.get_level_values(0)):
        c, name = table[col], names.get(col, col)
        out[f"{name}: ours"] = [
            format_mean_std(m, sd, digits) + ("\u00a0!" if f is True else "")
            for m, sd, f in zip(c["ours_mean"], c["ours_std"], c["flag"].astype(object))
        ]
        out[f"{name}: paper"] = [format_mean_std(m, sd, digits) for m, sd in zip(c["paper_mean"], c["paper_std"])]
    return pd.DataFrame(out)


#: what a verdict of "best other method minus PL" says about PL
PL_VERDICTS = {"higher": "PL below", "lower": "PL above"}


def _paper_cells(dataset: str, paper_seeds: int) -> dict:
    """``{setting: {method: (mean, std, paper_seeds)}}`` of paper A's Table 1 (:data:`.protocol.PAPER_TABLE1`) for
    ``dataset``; a dataset the table lacks is an error naming its datasets."""
    from .protocol import PAPER_TABLE1

    known = sorted({d for d, _ in PAPER_TABLE1})
    if dataset not in known:
        raise ValueError(f"paper A's Table 1 has no dataset {dataset!r}; its datasets: {known}")
    return {s: {m: (*v, paper_seeds) for m, v in row.items()} for (d, s), row in PAPER_TABLE1.items() if d == dataset}


def pl_against_best(records, dataset: str = "cifar_cvd", paper_seeds: int = 30) -> pd.DataFrame:
    """§6.2's sentence on PL ("on CIFAR-10 cat vs. dog ... it fails to yield comparable performance") row by row,
    tested by the book's one rule on both sides: per setting, the best method other than PL (by mean) minus PL,
    on the paper's printed mean ± std (Welch's test, ``paper_seeds`` seeds a side: App. C's 30) and on our records
    (:func:`~.claims.a_rows`, paired by seed where both ran the same seeds). The claim ``A-T1-cifar`` holds where
    every row says "PL below". Columns: setting, each side's best other method, its difference with PL (95 % CI,
    p) and the verdict ("PL below", "PL above", "not resolved"), our seeds."""
    from .claims import a_rows, best_other

    paper = _paper_cells(dataset, paper_seeds)
    ours = {setting: v for (d, setting), v in a_rows(records, (dataset,)).items()}
    rows = []
    for setting in [s for s in paper if s in ours] + [s for s in ours if s not in paper]:
        row = {"setting": setting}
        p = paper.get(setting, {})
        best = best_other({m: v[0] for m, v in p.items()}, "PL")
        if best:
            c = compare_summaries(p[best], p["PL"])
            row |= {"paper's best": best, "paper: best − PL": c.short(1), "paper": PL_VERDICTS.get(c.verdict, OPEN)}
        v = ours.get(setting, {})
        best = best_other(v, "PL")
        if best:
            c = compare(v[best], v["PL"])
            row |= {"our best": best, "ours: best − PL": c.short(1), "ours": PL_VERDICTS.get(c.verdict, OPEN)}
            row["seeds"] = min(len(v[best]), len(v["PL"]))
        rows.append(row)
    return pd.DataFrame(rows).fillna("–")


def pnu_against_sup(records, dataset: str, prior, paper_seeds: int = 30) -> pd.DataFrame:
    """PNU against Sup. per setting of ``dataset`` with App. C's PNU weight η = (ψ₂ − ψ₁)/(ψ₁ + ψ₂), ψ_m = θ_m²/n_m
    (:func:`sslkit.risk.pnu_eta`; ``prior`` is θ): where η = 0 the PNU risk *is* the supervised one, so runs under
    one seed must agree exactly. Columns: setting, η, our seeds, the seeds where PNU's test accuracy equals Sup.'s,
    the paper's PNU − Sup. by Welch's test on its printed mean ± std (``paper_seeds`` a side) and its verdict."""
    from sslkit.risk import pnu_eta

    from .claims import a_rows

    paper = _paper_cells(dataset, paper_seeds)
    rows = []
    for (_, setting), v in a_rows(records, (dataset,)).items():
        if "PNU" not in v or "Sup." not in v:
            continue
        n = [int(x) for x in setting.strip("()").split(",")]
        common = sorted(set(v["PNU"]) & set(v["Sup."]))
        row = {
            "setting": setting,
            "η": round(float(pnu_eta(np.asarray(prior, dtype=float), np.asarray(n, dtype=float))), 4),
            "seeds": len(common),
            "PNU = Sup.": sum(v["PNU"][s] == v["Sup."][s] for s in common),
        }
        if {"PNU", "Sup."} <= set(paper.get(setting, {})):
            c = compare_summaries(paper[setting]["PNU"], paper[setting]["Sup."])
            row["paper: PNU − Sup."] = c.short(1)
            row["paper"] = {"higher": "PNU above", "lower": "PNU below"}.get(c.verdict, OPEN)
        rows.append(row)
    return pd.DataFrame(rows).fillna("–")


def closer_reading(ce_mean: float, pn_mean: float, paper_mean: float) -> str:
    """Which supervised-term reading's mean is nearer the paper's: ``"cross-entropy"``, ``"PN risk"``, ``"tie"``
    (the two distances within 0.05 points) or ``""`` (no cross-entropy mean)."""
    if np.isnan(ce_mean):
        return ""
    gap = abs(ce_mean - paper_mean) - abs(pn_mean - paper_mean)
    return "tie" if abs(gap) < 0.05 else "PN risk" if gap > 0 else "cross-entropy"


def supervised_term_table(pn_records, ce_records) -> pd.DataFrame:
    """PL and VAT under the two readings of their supervised term (App. C), per (table, dataset, setting, method).

    ``pn_records``: the runs with the prior-weighted PN risk as the supervised term (experiment
    ``a_table2_supterm``); ``ce_records``: runs of Tables 1-2 (plain cross-entropy, the tables' reading), of which
    the PL and VAT runs at the scale and seeds of ``pn_records`` are used. Each reading keeps the hyper-parameter
    :func:`~.runs.select_hyper` selects. Columns: table, dataset, setting, method, n (PN seeds), cross-entropy,
    PN risk (means, %), paper, paper std, closer (:func:`closer_reading`), CE beyond 2σ, PN beyond 2σ (the mean
    more than twice the paper's std from the paper's mean)."""
    from .protocol import PAPER_TABLE1, PAPER_TABLE2
    from .runs import select_hyper

    def selected(recs):
        out = {}
        for r in select_hyper(recs):
            c = r["config"]
            out.setdefault((c["dataset"], c["setting"], c["method"]), []).append(r["metrics"]["test_acc"])
        return out

    pn_records = list(pn_records)
    if not pn_records:
        raise ValueError("supervised_term_table needs the PN-risk runs (a_table2_supterm); got none")
    scale, seeds = pn_records[0]["scale"], {r["seed"] for r in pn_records}
    pn = selected(pn_records)
    ce = selected(
        [r for r in ce_records if r["scale"] == scale and r["seed"] in seeds and r["config"]["method"] in ("PL", "VAT")]
    )
    rows = []
    for key, accs in pn.items():
        table, paper_rows = (1, PAPER_TABLE1) if key[:2] in PAPER_TABLE1 else (2, PAPER_TABLE2)
        paper_mean, paper_std = paper_rows[key[:2]][key[2]]
        ce_mean, pn_mean = (np.mean(ce[key]) if key in ce else np.nan), np.mean(accs)
        rows.append(
            {
                "table": table,
                "dataset": key[0],
                "setting": key[1],
                "method": key[2],
                "n": len(accs),
                "cross-entropy": ce_mean,
                "PN risk": pn_mean,
                "paper": paper_mean,
                "paper std": paper_std,
                "closer": closer_reading(ce_mean, pn_mean, paper_mean),
                "CE beyond 2σ": bool(abs(ce_mean - paper_mean) > 2 * paper_std),
                "PN beyond 2σ": bool(abs(pn_mean - paper_mean) > 2 * paper_std),
            }
        )
    return pd.DataFrame(rows).sort_values(["table", "dataset", "setting", "method"]).reset_index(drop=True)
