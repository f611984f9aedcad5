"""The papers' reported numbers: the CSV files under sslkit/experiments/paper_numbers/ and their one loader."""

import pytest

from sslkit.experiments import paper_a, paper_numbers
from sslkit.experiments.paper_a import appendix as paper_a_appendix
from sslkit.experiments.paper_b import selection as paper_b_sel
from sslkit.experiments.paper_b import ssl as paper_b_ssl


def test_every_file_loads_with_typed_columns():
    assert paper_numbers.names() == [
        "a_table1",
        "a_table10",
        "a_table2",
        "a_table3",
        "a_table4",
        "a_table5",
        "a_table6",
        "a_table7",
        "a_table8",
        "a_table9",
        "b_table1",
        "b_table2",
        "b_table3",
        "b_table4",
        "b_table5",
        "b_table6",
        "c_claims",
        "c_table11",
        "c_table12",
        "c_tables5_10",
    ]
    for name in paper_numbers.names():
        rows = paper_numbers.load(name)
        assert rows and all(r.keys() == rows[0].keys() for r in rows)
    row = paper_numbers.load("a_table5")[0]
    assert row == {
        "dataset": "covertype",
        "setting": "Bal. (140)",
        "classes": 7,
        "test_acc_mean": 56.58,
        "test_acc_std": 2.28,
        "cov_rel_fro_mean": 1.511,
        "cov_rel_fro_std": 0.0864,
    }
    assert type(row["classes"]) is int and paper_numbers.mean_std(row, "cov_rel_fro") == (1.511, 0.0864)
    with pytest.raises(ValueError, match="no paper numbers called 'a_table99'"):
        paper_numbers.load("a_table99")


def test_shapes_of_the_tables():
    assert len(paper_a.PAPER_TABLE1) == 6 * 4 and len(paper_a.PAPER_TABLE2) == 4 * 7
    assert all(tuple(v) == paper_a.TABLE1_METHODS for v in paper_a.PAPER_TABLE1.values())
    assert all(tuple(v) == paper_a.TABLE2_METHODS for v in paper_a.PAPER_TABLE2.values())
    assert list(paper_a.PAPER_TABLE1)[:2] == [("adult", "(15,45)"), ("adult", "(30,30)")]
    sizes = {t: len(v) for t, v in paper_a_appendix.PAPER_TABLES.items()}
    assert sizes == {3: 27, 4: 18, 5: 9, 6: 16, 7: 8, 8: 15, 9: 10, 10: 10}
    assert len(paper_b_sel.PAPER_TABLE4) == 8 * 6 and len(paper_b_ssl.PAPER_TABLE1_B) == 12 * 10
    assert {k[0] for k in paper_b_sel.PAPER_TABLE4} == set(paper_b_sel.TABLE4_ALPHAS)
    assert list(paper_b_ssl.PAPER_TABLE5_B) == ["Random", "Stratified", "k-Means", "USL", "ActiveFT", "RDSS"]


def test_spot_values():
    assert paper_a.PAPER_TABLE1[("adult", "(15,45)")]["Ours (Iter)"] == (80.3, 1.6)
    assert paper_a.PAPER_TABLE1[("cifar_cvd", "(100,100)")]["VAT"] == (59.4, 1.4)
    assert paper_a.PAPER_TABLE2[("mnist", "Sev. (1500)")]["PL"] == (90.7, 2.2)
    t = paper_a_appendix.PAPER_TABLES
    assert t[3][("credit_default", "Imb. (200)")] == {
        "threshold": 0.8,
        "test_acc": (72.22, 7.02),
        "best_val_acc": (73.72, 8.22),
    }
    assert t[4][("mnist", "Sev. (500)", 1000)] == (82.23, 2.61)
    assert t[5][("shuttle", "Mild (140)")] == {"classes": 7, "test_acc": (97.88, 0.82), "cov_rel_fro": (1.3545, 0.0314)}
    assert t[6][("adult", "(30,30)")] == {"on": (80.8, 1.5), "off": (80.9, 1.1), "delta": 0.1}
    assert t[10][("mnist", "Sev. (500)")]["delta"] == -6.2
    assert paper_b_sel.PAPER_TABLE4[("1-1/sqrt(m)", "CIFAR-100 @ 10000")] == (73.13, 0.19)
    assert paper_b_sel.PAPER_TABLE4[("0", "CIFAR-10 @ 40")] == (85.54, 0.48)
    assert paper_b_ssl.PAPER_TABLE1_B[("FreeMatch", "RDSS", "STL-10 @ 250")] == (92.22, 0.40)
    assert paper_b_ssl.PAPER_TABLE5_B["RDSS"] == {"complexity": "O(mn)", "seconds": 132.77, "approx_zero": False}
