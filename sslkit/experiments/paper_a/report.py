"""What the paper-A table pages show, computed from a :func:`~sslkit.experiments.report.tables.paper_comparison`
table: one compact table per scale (ours beside the paper in one cell per method) and the headline's facts."""

from __future__ import annotations

import pandas as pd

from ..report.tables import book_table, format_mean_std


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
