"""Tables for the book: :func:`book_table` shows a frame without an index or NaN, with human labels
(:data:`LABELS`), a natural order ("10 %" before "100 %"), the key columns first, and split into parts narrow
enough for the page's column at 1280 px (issue 21)."""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import pandas as pd


def missing(x) -> bool:
    """None, pandas NA or a float NaN (a cell without a value)."""
    if x is None or x is pd.NA:
        return True
    try:
        return math.isnan(float(x))
    except (TypeError, ValueError):
        return False


#: Human labels of the ids that records and configs use; :func:`book_table` applies them to headers and cells.
LABELS = {
    "full": "Full",
    "full_earlystop": "Full-EarlyStop",
    "random": "Random",
    "craig": "CRAIG",
    "gradmatch": "GradMatch",
    "retrieve": "Retrieve",
    "crust": "CRUST",
    "vat": "VAT",
    "mean_teacher": "Mean Teacher",
    "fixmatch": "FixMatch",
    "flexmatch": "FlexMatch",
    "freematch": "FreeMatch",
    "pseudo_label": "Pseudo-Label",
    "supervised": "Supervised",
    "test_acc": "test accuracy (%)",
    "fraction": "budget",
}


def natural_key(value):
    """Sort key that orders numbers inside text by value: ``"10 %" < "20 %" < "100 %"``, ``"a2" < "a10"``."""
    import re

    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool):
        return (0, float(value), "")
    parts = re.split(r"(\d+(?:\.\d+)?)", str(value))
    return (1, 0.0, tuple((0, float(p), "") if i % 2 else (1, 0.0, p.lower()) for i, p in enumerate(parts)))


class BookTable:
    """A table as the book shows it: one or more HTML tables (no index, no NaN, human labels) that fit the
    content column. Built by :func:`book_table`; ``parts`` holds the :class:`~pandas.DataFrame` of each
    displayed table (strings), ``frame`` the whole table before splitting."""

    def __init__(self, frame: pd.DataFrame, parts: list[pd.DataFrame], caption: str | None):
        self.frame, self.parts, self.caption = frame, parts, caption

    def _repr_html_(self) -> str:
        from html import escape

        out = []
        for i, part in enumerate(self.parts):
            cap = f"<caption>{escape(self.caption)}</caption>" if self.caption and i == 0 else ""
            body = part.to_html(index=False, escape=True, border=0, classes="sslkit-table", na_rep="–")
            out.append(body.replace(">\n  <thead>", f">{cap}\n  <thead>", 1) if cap else body)
        return "\n".join(out)

    def __repr__(self) -> str:
        head = f"{self.caption}\n" if self.caption else ""
        return head + "\n\n".join(p.to_string(index=False) for p in self.parts)


def _label(value, labels: Mapping):
    if isinstance(value, tuple):
        return tuple(_label(v, labels) for v in value)
    return labels.get(value, value) if isinstance(value, str) else value


def _cell_text(value, digits: int, na: str) -> str:
    if missing(value):
        return na
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (float, np.floating)):
        return f"{float(value):.{digits}f}"
    return str(value)


def book_table(
    df: pd.DataFrame,
    *,
    labels: Mapping | None = None,
    first=(),
    order: Mapping | None = None,
    digits: int = 2,
    na: str = "–",
    max_columns: int = 8,
    caption: str | None = None,
) -> BookTable:
    """The one way the book shows a table: index moved into columns, no NaN, human labels, sensible order,
    key columns first, split so that no part is wider than the content column.

    Parameters
    ----------
    df : DataFrame
        Any table; its index becomes the leading columns (an unnamed integer index, row numbers whether 0..n or
        left by filtering and sorting, is dropped).
    labels : dict, optional
        More id -> label pairs on top of :data:`LABELS`, applied to column names and to text cells.
    first : sequence of column names
        Key columns, shown first (before labelling) and repeated in every part of a split table.
    order : dict, optional
        ``{column: [values in order]}`` sorts rows by these columns, in that order of priority; values not
        listed come after, in natural order (:func:`natural_key`); an empty list sorts that column in natural order
        only ("(500)" before "(1500)"). Without ``order`` the rows keep their order.
    digits : int
        Decimals of float cells.
    na : str
        Text of a missing cell; rows and columns that are entirely missing are dropped.
    max_columns : int
        At most this many non-key columns per displayed table (an 8-column table of short numbers fits the
        content column at 1280 px); wider tables are split into parts that each repeat the key columns.
    caption : str, optional
        Caption of the (first) table.
    """
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"book_table needs a DataFrame, got {type(df).__name__}")
    if max_columns < 1:
        raise ValueError(f"max_columns must be at least 1, got {max_columns}")
    labels = {**LABELS, **(labels or {})}
    frame = df.copy()
    # an unnamed integer index is row numbers (0..n, or what filtering and sorting left of them): it says nothing
    plain = (
        frame.index.name is None
        and not isinstance(frame.index, pd.MultiIndex)
        and pd.api.types.is_integer_dtype(frame.index.dtype)
    )
    if plain or frame.empty and frame.index.name is None:
        frame = frame.reset_index(drop=True)  # dropped
    else:  # row labels become the leading columns (an unnamed one gets an empty header)
        frame = frame.rename_axis([n if n is not None else "" for n in frame.index.names]).reset_index()
    if isinstance(frame.columns, pd.MultiIndex):  # one header row: "level 1 · level 2" (labelled)
        frame.columns = [
            " · ".join(str(_label(p, labels)) for p in col if str(p) != "") for col in frame.columns.to_flat_index()
        ]
    first = [first] if isinstance(first, str) else list(first)
    missing = [c for c in [*first, *(order or {})] if c not in frame.columns]
    if missing:
        raise ValueError(f"book_table: no column(s) {missing}; the table has {list(frame.columns)}")
    frame = frame[first + [c for c in frame.columns if c not in first]]
    frame = frame.dropna(how="all").dropna(axis=1, how="all")
    if order:

        def rank(col):
            listed = list(order[col])
            return lambda s: s.map(lambda v: (0, listed.index(v), ()) if v in listed else (1, 0, natural_key(v)))

        for col in reversed(list(order)):
            frame = frame.sort_values(col, key=rank(col), kind="stable")
    frame = frame.reset_index(drop=True)
    shown = frame.apply(lambda s: s.map(lambda v: _cell_text(_label(v, labels), digits, na))).astype(str)
    shown.columns = [str(_label(c, labels)) for c in frame.columns]
    keys = [str(_label(c, labels)) for c in first if c in frame.columns]
    rest = [c for c in shown.columns if c not in keys]
    chunks = [rest[i : i + max_columns] for i in range(0, len(rest), max_columns)] or [[]]
    parts = [shown[keys + chunk] for chunk in chunks]
    return BookTable(frame, parts, caption)
