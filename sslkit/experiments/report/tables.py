"""Mean ± std tables over seeds, laid out like the papers' tables, with the papers' numbers beside ours.

Everything returns plain :class:`pandas.DataFrame` objects; ``DataFrame.to_html()`` renders them without
jinja2 (only ``DataFrame.style`` needs jinja2, and nothing here uses it).

Typical use::

    records = run_grid(fn, grid, "results/x.jsonl", seeds=range(5), scale="quick")
    ours = aggregate(records, rows="dataset", cols="method", metric="test_acc")
    table = paper_comparison(ours, {("banknote", "supervised"): (96.1, 1.3), ...})
    comparison_layout(table).to_html()

A table with no column field (``cols=[]``, e.g. the single "Sup." column of a paper's table) has flat
columns, and the paper's numbers are then keyed by the row alone: ``{("banknote", "(15,45)"): (95.6, 3.2)}``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import pandas as pd

from .book import LABELS, BookTable, book_table, missing, natural_key  # noqa: F401  (the book's tables: .book)

STATS = ("mean", "std", "n")
COMPARISON_FIELDS = ("ours_mean", "ours_std", "n", "paper_mean", "paper_std", "diff", "flag", "rank", "paper_rank")
_NO_COL = ()  # the column key of every cell when a table has no column field


def _as_list(names, what: str, allow_empty: bool = False) -> list[str]:
    if names is None and allow_empty:
        return []
    if isinstance(names, str):
        return [names]
    names = list(names)
    if (not names and not allow_empty) or not all(isinstance(n, str) for n in names):
        raise TypeError(f"{what} must be a field name or a list of field names, got {names!r}")
    return names


def _field(record: Mapping, name: str):
    """A config field, or the record's own ``seed``/``scale``."""
    config = record.get("config", {})
    if name in config:
        return config[name]
    if name in ("seed", "scale"):
        return record[name]
    raise ValueError(
        f"field {name!r} is not in the config of run {record.get('key')!r}; config fields: {sorted(config)}"
    )


def _hashable(v):
    return tuple(_hashable(x) for x in v) if isinstance(v, list) else v


def _index(keys: list[tuple], names: list[str]) -> pd.Index:
    if len(names) == 1:
        return pd.Index([k[0] for k in keys], name=names[0])
    return pd.MultiIndex.from_tuples(keys, names=names)


def _cell_stats(values: list[float], ddof: int) -> dict:
    if not values:
        return {"mean": np.nan, "std": np.nan, "n": 0}
    std = float(np.std(values, ddof=ddof)) if len(values) > ddof else np.nan
    return {"mean": float(np.mean(values)), "std": std, "n": len(values)}


def aggregate(records, rows, cols, metric, *, scale=None, where=None, ddof=1) -> pd.DataFrame:
    """Mean, standard deviation and number of seeds of ``metric`` per (row, col) cell.

    Parameters
    ----------
    records : list of dict
        Run records from :func:`sslkit.experiments.runs.runner.run_grid` or ``load_results``.
    rows : str or list of str
        Config fields (or ``"seed"``/``"scale"``) that index the table's rows.
    cols : str, list of str, or [] / None
        Config fields that index the columns; none for a single-column table.
    metric : str
        Key in each record's ``metrics``.
    scale : str, optional
        Keep only records of this scale. Without it, all records must share one scale.
    where : dict, optional
        Keep only records whose config has these values, e.g. ``{"epochs": 200}``.
    ddof : int
        Delta degrees of freedom of the std (1 = sample std over seeds; one seed gives NaN).

    Returns
    -------
    DataFrame
        Index: the row values. Columns: MultiIndex ``(stat, *col values)`` with stat in ``mean, std, n``
        — so ``table["mean"]`` is the rows x cols table of means; without column fields, simply the
        columns ``mean, std, n``. ``table.attrs`` holds ``metric`` and ``scale``.

    A cell must hold each seed at most once: two runs of one cell with the same seed means the records
    differ in a config field that is neither a row nor a column (e.g. two learning rates), and mixing
    them would be silently wrong, so it is an error naming the field.
    """
    rows = _as_list(rows, "rows")
    cols = _as_list(cols, "cols", allow_empty=True)
    if set(rows) & set(cols):
        raise ValueError(f"rows and cols share fields {sorted(set(rows) & set(cols))}")
    records = list(records)
    if scale is not None:
        records = [r for r in records if r.get("scale") == scale]
    if where:
        records = [r for r in records if all(r.get("config", {}).get(k) == v for k, v in where.items())]
    if not records:
        raise ValueError(f"no records left to aggregate (scale={scale!r}, where={where!r})")
    scales = sorted({str(r.get("scale")) for r in records})
    if len(scales) > 1:
        raise ValueError(f"records mix scales {scales}; pass scale= to choose one")

    cells: dict = {}
    for rec in records:
        metrics = rec.get("metrics") or {}
        if metric not in metrics:
            raise ValueError(f"metric {metric!r} is missing from run {rec.get('key')!r}; it has {sorted(metrics)}")
        r = tuple(_hashable(_field(rec, n)) for n in rows)
        c = tuple(_hashable(_field(rec, n)) for n in cols)
        seen = cells.setdefault((r, c), {})
        if rec["seed"] in seen:
            a, b = seen[rec["seed"]][0]["config"], rec["config"]
            differ = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
            hint = (
                f"; their configs differ in {differ}: filter with where= or add the field to rows/cols"
                if differ
                else " (duplicate records)"
            )
            raise ValueError(f"cell rows={r} cols={c} has two runs with seed {rec['seed']}{hint}")
        value = metrics[metric]
        seen[rec["seed"]] = (rec, np.nan if value is None else float(value))

    row_keys = list(dict.fromkeys(r for r, _ in cells))
    col_keys = list(dict.fromkeys(c for _, c in cells))
    stats = {
        (r, c): _cell_stats([v for _, v in cells.get((r, c), {}).values()], ddof) for r in row_keys for c in col_keys
    }
    data = {(stat, *c): [stats[(r, c)][stat] for r in row_keys] for stat in STATS for c in col_keys}
    table = pd.DataFrame(data, index=_index(row_keys, rows))
    if cols:
        table.columns = pd.MultiIndex.from_tuples(list(data), names=["stat", *cols])
    else:
        table.columns = pd.Index(list(STATS), name="stat")
    table = table.astype({col: "int64" for col in table.columns if (col[0] if cols else col) == "n"})
    table.attrs.update(metric=metric, scale=scales[0])
    return table


def format_mean_std(mean, std=None, digits: int = 1) -> str:
    """``format_mean_std(96.123, 1.27) == "96.1 ± 1.3"``; no std (None/NaN) gives the mean alone; no mean gives "–"."""
    if missing(mean):
        return "–"
    text = f"{float(mean):.{digits}f}"
    if not missing(std):
        text += f" ± {float(std):.{digits}f}"
    return text


def format_table(table: pd.DataFrame, digits: int = 1):
    """The ``"mean ± std"`` strings of an :func:`aggregate` table: rows x cols (a Series without cols)."""
    mean, std = table["mean"], table["std"]
    if isinstance(mean, pd.Series):
        return pd.Series(
            [format_mean_std(m, s, digits) for m, s in zip(mean, std)], index=mean.index, name="mean ± std"
        )
    return pd.DataFrame(
        [
            [format_mean_std(mean.iloc[i, j], std.iloc[i, j], digits) for j in range(mean.shape[1])]
            for i in range(len(mean))
        ],
        index=mean.index,
        columns=mean.columns,
    )


def _ours_cells(ours: pd.DataFrame) -> tuple[dict, bool]:
    """{(row, col): (mean, std, n)} of an aggregate table, and whether it has a column field."""
    flat = ours.columns.nlevels == 1
    level0 = ours.columns if flat else ours.columns.get_level_values(0)
    if not set(STATS) <= set(level0):
        raise TypeError("ours must be a table returned by aggregate() (columns mean, std, n)")
    if ours.columns.nlevels > 2:
        raise ValueError("paper_comparison needs at most one column field in ours (e.g. cols='method')")
    cells = {}
    for r in ours.index:
        for c in [_NO_COL] if flat else list(ours["mean"].columns):
            get = (lambda stat, r=r: ours.loc[r, stat]) if flat else (lambda stat, r=r, c=c: ours.loc[r, (stat, c)])
            if pd.notna(get("n")) and get("n") > 0:
                cells[(r, c)] = (float(get("mean")), float(get("std")), int(get("n")))
    return cells, not flat


def _paper_cells(paper, has_cols: bool) -> dict:
    """Normalise the paper's numbers to {(row, col): (mean, std)} (std may be NaN)."""
    if isinstance(paper, pd.DataFrame):
        flat = paper.columns.nlevels == 1
        level0 = paper.columns if flat else paper.columns.get_level_values(0)
        if "mean" not in level0:
            raise ValueError("paper as a DataFrame must have columns 'mean' (and 'std'), as aggregate() returns")
        if flat == has_cols:
            raise ValueError("paper and ours must both have a column field, or both have none")
        out = {}
        for r in paper.index:
            for c in [_NO_COL] if flat else list(paper["mean"].columns):
                m = paper.loc[r, "mean"] if flat else paper.loc[r, ("mean", c)]
                s = np.nan
                if "std" in level0:
                    s = paper.loc[r, "std"] if flat else paper.loc[r, ("std", c)]
                if pd.notna(m):
                    out[(r, c)] = (float(m), float(s) if pd.notna(s) else np.nan)
        return out
    if not isinstance(paper, Mapping):
        raise TypeError(f"paper must be a dict {{(row, col): (mean, std)}} or a DataFrame, got {type(paper).__name__}")
    out = {}
    for cell, value in paper.items():
        if has_cols:
            if not (isinstance(cell, tuple) and len(cell) == 2):
                raise ValueError(f"paper keys must be (row, col) pairs, got {cell!r}")
            key = cell
        else:
            key = (cell, _NO_COL)
        if isinstance(value, (int, float)):
            value = (value, None)
        if not (isinstance(value, (tuple, list)) and len(value) == 2):
            raise ValueError(f"paper[{cell!r}] must be (mean, std) or a number, got {value!r}")
        m, s = value
        out[key] = (float(m), np.nan if s is None else float(s))
    return out


def _rank(values: dict, higher_is_better: bool) -> dict:
    """Competition ranking (1 = best, ties share the smallest rank: 1, 1, 3); NaN values get no rank."""
    keys = list(values)
    ranks = pd.Series([values[k] for k in keys], dtype=float).rank(method="min", ascending=not higher_is_better)
    return dict(zip(keys, ranks))


def paper_comparison(
    ours, paper, *, rows=None, cols=None, metric=None, scale=None, higher_is_better=True, flag_sigma=2.0
) -> pd.DataFrame:
    """Our mean ± std beside the paper's, per cell of the paper's table.

    Parameters
    ----------
    ours : DataFrame or list of records
        An :func:`aggregate` table, or run records (then ``rows``, ``cols`` and ``metric`` are passed to
        :func:`aggregate`, with ``scale``). The metric must be on the paper's scale (e.g. % accuracy).
    paper : dict or DataFrame
        ``{(row, col): (mean, std)}`` — keyed by the row alone when the table has no column field; a
        bare mean or a None std when the paper gives no std — or a DataFrame laid out like ``aggregate``'s.
    higher_is_better : bool
        Direction used for ranking (False for error rates).
    flag_sigma : float
        ``flag`` is True when ``|ours_mean - paper_mean| > flag_sigma * paper_std``.

    Returns
    -------
    DataFrame
        Index: rows (the paper's order first, then rows only we have). Columns: MultiIndex
        ``(col, field)`` with fields ``ours_mean, ours_std, n, paper_mean, paper_std, diff, flag, rank,
        paper_rank``; without a column field, flat columns ``ours_mean ... flag`` (no ranks). ``rank`` is
        the rank of our mean among the columns of that row, ``paper_rank`` that of the paper's mean
        (1 = best, ties share the rank). ``flag`` is ``<NA>`` when a side or the paper's std is missing,
        so ``table[table["flag"]]`` keeps the flagged rows.
    """
    if not isinstance(ours, pd.DataFrame):
        if rows is None or metric is None:
            raise TypeError("give ours as an aggregate() table, or as records together with rows= and metric=")
        ours = aggregate(ours, rows, cols, metric, scale=scale)
    elif rows is not None or cols is not None or metric is not None:
        raise TypeError("rows=, cols= and metric= are only for records; ours is already an aggregate() table")
    if not flag_sigma > 0:
        raise ValueError(f"flag_sigma must be positive, got {flag_sigma}")
    ours_cells, has_cols = _ours_cells(ours)
    paper_cells = _paper_cells(paper, has_cols)

    row_keys = list(dict.fromkeys([r for r, _ in paper_cells] + [r for r, _ in ours_cells]))
    col_keys = list(dict.fromkeys([c for _, c in paper_cells] + [c for _, c in ours_cells]))
    fields = COMPARISON_FIELDS if has_cols else COMPARISON_FIELDS[:-2]
    data = {}
    for r in row_keys:
        rank = _rank({c: ours_cells.get((r, c), (np.nan,))[0] for c in col_keys}, higher_is_better)
        paper_rank = _rank({c: paper_cells.get((r, c), (np.nan,))[0] for c in col_keys}, higher_is_better)
        for c in col_keys:
            om, os_, n = ours_cells.get((r, c), (np.nan, np.nan, 0))
            pm, ps = paper_cells.get((r, c), (np.nan, np.nan))
            diff = om - pm
            flag = pd.NA if (math.isnan(diff) or math.isnan(ps)) else bool(abs(diff) > flag_sigma * ps)
            values = dict(
                ours_mean=om,
                ours_std=os_,
                n=n,
                paper_mean=pm,
                paper_std=ps,
                diff=diff,
                flag=flag,
                rank=rank[c],
                paper_rank=paper_rank[c],
            )
            for f in fields:
                data.setdefault((c, f) if has_cols else f, []).append(values[f])

    names = list(ours.index.names)
    table = pd.DataFrame(data, index=_index([r if len(names) > 1 else (r,) for r in row_keys], names))
    if has_cols:
        table.columns = pd.MultiIndex.from_tuples(list(data), names=[ours.columns.names[1], "field"])
    dtypes = {"n": "int64", "flag": "boolean", "rank": "Int64", "paper_rank": "Int64"}
    table = table.astype(
        {col: dtypes[col[1] if has_cols else col] for col in table.columns if (col[1] if has_cols else col) in dtypes}
    )
    table.attrs.update(ours.attrs, flag_sigma=flag_sigma, higher_is_better=higher_is_better)
    return table


def beside_paper(records, row: str, col: str, metric: str, paper: Mapping, *, rows, cols, digits: int = 1):
    """A compact wide table: one line per value of ``row`` (in the order of ``rows``) and, for each value ``c`` of
    ``col`` (in the order of ``cols``), the columns ``"c: ours"`` (mean ± std over the records' seeds; the mean
    alone for one seed; "–" for no run; ``" (n = k)"`` after a cell with fewer seeds than the table's fullest, so
    that a caption's "over N seeds" stays true) and ``"c: paper"`` (``paper[(row value, c)]``, a (mean, std) pair;
    "–" when the paper has none). For a stand-in whose numbers are not comparable cell by cell (another model),
    where :func:`paper_comparison`'s differences and flags would only be noise."""
    rows, cols = list(rows), list(cols)
    stats = aggregate(records, row, col, metric) if records else None
    n_full = int(np.nanmax(stats["n"].to_numpy(dtype=float))) if stats is not None else 0
    out = []
    for r in rows:
        line = {row: r}
        for c in cols:
            has = stats is not None and r in stats.index and c in stats["mean"].columns
            n = float(stats["n"].loc[r, c]) if has else 0.0
            has = has and n > 0  # nan > 0 is False: no run of this cell
            cell = format_mean_std(stats["mean"].loc[r, c], stats["std"].loc[r, c], digits) if has else "–"
            line[f"{c}: ours"] = cell + (f" (n = {int(n)})" if has and n < n_full else "")
            p = paper.get((r, c))
            line[f"{c}: paper"] = "–" if p is None else format_mean_std(*p, digits=2)
        out.append(line)
    return pd.DataFrame(out)


def comparison_layout(table: pd.DataFrame, digits: int = 1) -> pd.DataFrame:
    """Strings for display, rows as in the paper: ``ours`` ("96.1 ± 1.3"), ``n``, ``paper``, ``diff`` (a "!"
    marks a flagged difference) and, when there are columns, ``rank`` ("ours/paper") per column.
    Render with ``.to_html()`` (no jinja2 needed)."""
    has_cols = table.columns.nlevels == 2

    def block(sub) -> dict:
        flags = [f is True for f in sub["flag"].astype(object)]
        out = {
            "ours": [format_mean_std(m, s, digits) for m, s in zip(sub["ours_mean"], sub["ours_std"])],
            "n": [str(n) if n else "–" for n in sub["n"]],
            "paper": [format_mean_std(m, s, digits) for m, s in zip(sub["paper_mean"], sub["paper_std"])],
            "diff": [
                "–" if missing(d) else f"{d:+.{digits}f}" + (" !" if f else "") for d, f in zip(sub["diff"], flags)
            ],
        }
        if "rank" in sub:
            out["rank"] = [
                ("–" if pd.isna(a) else str(int(a))) + "/" + ("–" if pd.isna(b) else str(int(b)))
                for a, b in zip(sub["rank"], sub["paper_rank"])
            ]
        return out

    if not has_cols:
        layout = pd.DataFrame(block(table), index=table.index)
    else:
        data = {}
        for c in dict.fromkeys(table.columns.get_level_values(0)):
            data.update({(c, f): v for f, v in block(table[c]).items()})
        layout = pd.DataFrame(data, index=table.index)
        layout.columns = pd.MultiIndex.from_tuples(list(data), names=table.columns.names)
    layout.attrs.update(table.attrs)
    return layout


def comparison_long(table: pd.DataFrame, digits: int = 1, column: str = "method") -> pd.DataFrame:
    """:func:`comparison_layout` in long form, narrow enough for the book's column (issue 21): one row per
    (row, column value) cell, the row fields and ``column`` (the name of the column field) first, then ``ours``,
    ``n``, ``paper``, ``diff`` and ``rank``; a plain 0..n index; the cells with neither a run nor a paper number
    are left out. A table without column fields has no ``column``."""
    layout = comparison_layout(table, digits)
    names = [n or "row" for n in table.index.names]
    if table.columns.nlevels == 2:
        layout = layout.stack(level=0, future_stack=True)
        layout.index = layout.index.set_names([*names, column])
    else:
        layout.index = layout.index.set_names(names)
    layout = layout[[f for f in ("ours", "n", "paper", "diff", "rank") if f in layout.columns]]
    layout = layout[(layout["ours"] != "–") | (layout["paper"] != "–")]
    layout.columns.name = None
    return layout.reset_index()
