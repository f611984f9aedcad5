"""The theory pages' check tables (sslkit.experiments.report.checks): what holds, what the table shows, and what
the record keeps for tests/test_theory_pages.py."""

import pytest
import sympy as sp

from sslkit.experiments.report.checks import Checks, difference, holds

x, y = sp.symbols("x y")


def test_difference_simplifies_and_a_zero_matrix_reads_zero():
    assert difference(sp.sin(x) ** 2 + sp.cos(x) ** 2, 1) == 0
    assert difference((x + y) ** 2, x**2 + y**2) == 2 * x * y
    assert difference(sp.Matrix([[x, 1], [0, y]]), sp.Matrix([[x, 1], [0, y]])) == 0
    assert difference(sp.Matrix([x, 1]), sp.Matrix([x, 0])) == sp.Matrix([0, 1])


def test_holds_is_zero_after_simplification_or_a_yes():
    assert holds(True) and not holds(False)
    assert holds(sp.sin(x) ** 2 + sp.cos(x) ** 2 - 1)
    assert not holds(x - y) and not holds(sp.Rational(1, 10**12))  # exact: a tiny difference is not zero
    assert holds(sp.zeros(2, 2)) and not holds(sp.Matrix([0, x]))
    assert not holds("0")  # a string is not a result


def test_show_records_every_claim_and_tables_what_holds():
    checks = Checks()
    table = checks.show({"identity": difference(sp.cos(x) ** 2 + sp.sin(x) ** 2, 1), "wrong": x - y, "yes": True})
    shown = table.frame.set_index("check")
    assert shown.loc["wrong", "result"] == "x - y" and shown.loc["identity", "result"] == "0"
    assert shown["holds"].tolist() == [True, False, True]
    assert "no" in repr(table) and "yes" in repr(table)  # the book prints holds as yes / no
    checks.show({"later": False})
    assert list(checks.results) == ["identity", "wrong", "yes", "later"]
    assert [holds(v) for v in checks.results.values()] == [True, False, True, False]


def test_show_refuses_a_claim_twice_and_an_empty_section():
    checks = Checks()
    checks.show({"a": True})
    with pytest.raises(ValueError, match="already shown.*'a'"):
        checks.show({"a": True, "b": True})
    with pytest.raises(ValueError, match="non-empty dict"):
        checks.show({})
