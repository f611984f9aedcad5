"""The checks a derivation page shows: each claim of a paper's theory beside what the page computed for it.

A theory page (``a_theory``, ``b_theory``, ``c_theory``) derives a paper's formulas in sympy and compares them
with the paper's printed ones and with ``sslkit``. Each section ends in a small table of its checks; every check
is also kept in :attr:`Checks.results`, which ``tests/test_theory_pages.py`` reads after running the page (the
page itself asserts nothing). A check's result is either a yes / no (``True`` / ``False``) or a difference, ours
minus the paper's, which holds when it simplifies to zero.
"""

from __future__ import annotations

import pandas as pd
import sympy as sp

from .tables import book_table


def difference(ours, paper=None):
    """``ours - paper`` simplified (``ours`` alone when ``paper`` is None); a zero matrix reads ``0``, so a table
    shows 0 where the paper is right."""
    d = sp.simplify(ours if paper is None else ours - paper)
    return 0 if isinstance(d, sp.MatrixBase) and d.is_zero_matrix else d


def holds(result) -> bool:
    """Whether a check holds: ``True``, or a difference that simplifies to zero (every entry, for a matrix). A
    ``False`` never holds; neither does a string."""
    if isinstance(result, bool):
        return result
    if isinstance(result, str):
        return False
    if isinstance(result, sp.MatrixBase):
        return all(sp.simplify(e) == 0 for e in result)
    return bool(sp.simplify(result) == 0)


class Checks:
    """One page's checks. ``show(rows)`` records a section's ``{claim: result}`` and returns its table (claim,
    result as it reads, holds); ``results`` keeps every claim the page showed, in order. A claim shown twice is
    refused: the test that reads ``results`` would silently see only the second one."""

    def __init__(self):
        self.results: dict = {}

    def show(self, rows: dict):
        if not isinstance(rows, dict) or not rows:
            raise ValueError("show() takes a non-empty dict {claim: result}")
        again = sorted(set(rows) & set(self.results))
        if again:
            raise ValueError(f"claims already shown on this page: {again}")
        self.results.update(rows)
        # a yes / no stays a bool (the table prints it as one); a difference reads as its expression (0: agrees)
        result = {c: v if isinstance(v, bool) else str(v) for c, v in rows.items()}
        table = pd.DataFrame({"result": result, "holds": {c: holds(v) for c, v in rows.items()}})
        return book_table(table.rename_axis("check"))
