"""The numbers the papers report, as CSV files beside this module, and :func:`load`, their one reader.

One file per paper table: ``a_table1.csv`` ... ``a_table10.csv`` (paper A, Tables 1-10), ``b_table1.csv`` ...
``b_table6.csv`` (paper B, Tables 1-6; Table 6 holds one row per printed cell of the AL / SSAL / SSL
comparison, its "-" cells left out), ``c_tables5_10.csv`` (paper C, Tables 5-10 in one long table)
and ``c_claims.csv`` (the speed-ups paper C quotes in §4), ``c_table11.csv`` and ``c_table12.csv`` (Table 12 with
Table 13's standard deviations). One row per printed cell, values as printed (``1.5110`` keeps
its digits). A header ``name:type`` gives the column's type (``int``, ``float`` or ``bool``; no type: text).
The experiment modules shape the rows into their ``PAPER_TABLE*`` dicts.
"""

from __future__ import annotations

import csv
from pathlib import Path

FOLDER = Path(__file__).resolve().parent
_TYPES = {"str": str, "int": int, "float": float, "bool": {"True": True, "False": False}.__getitem__}


def names() -> list[str]:
    """The tables there are files for (``"a_table1"``, ...)."""
    return sorted(p.stem for p in FOLDER.glob("*.csv"))


def load(name: str) -> list[dict]:
    """The rows of ``<name>.csv`` as dicts, each value converted to its column's type."""
    path = FOLDER / f"{name}.csv"
    if not path.is_file():
        raise ValueError(f"no paper numbers called {name!r}; there are {names()}")
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.reader(f)
        header = [h.partition(":") for h in next(reader)]
        columns = [(key, _TYPES[kind or "str"]) for key, _, kind in header]
        return [{key: convert(value) for (key, convert), value in zip(columns, row, strict=True)} for row in reader]


def mean_std(row: dict, prefix: str = "") -> tuple[float, float]:
    """``(mean, std)`` of a row: the columns ``mean`` / ``std``, or ``<prefix>_mean`` / ``<prefix>_std``."""
    p = f"{prefix}_" if prefix else ""
    return row[f"{p}mean"], row[f"{p}std"]
