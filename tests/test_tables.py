"""Mean ± std tables and the comparison with the papers' numbers (issue 2, section 5)."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sslkit.experiments.report.tables import (
    aggregate,
    beside_paper,
    comparison_layout,
    comparison_long,
    format_mean_std,
    format_table,
    paper_comparison,
)

REPO = Path(__file__).resolve().parents[1]
DATASETS = ["banknote", "breast_cancer"]
METHODS = ["supervised", "pseudo_label", "fixmatch"]


def make_records(seeds=range(4), scale="quick", rng_seed=0, **config):
    rng = np.random.default_rng(rng_seed)
    records, values = [], {}
    for d in DATASETS:
        for m in METHODS:
            for s in seeds:
                v = float(rng.normal(90, 3))
                values.setdefault((d, m), []).append(v)
                records.append(
                    {
                        "key": f"{d}-{m}-{s}-{scale}",
                        "config": {"dataset": d, "method": m, **config},
                        "seed": s,
                        "scale": scale,
                        "metrics": {"acc": v, "loss": -v},
                    }
                )
    return records, values


def test_aggregate_matches_numpy():
    records, values = make_records(seeds=range(5))
    t = aggregate(records, rows="dataset", cols="method", metric="acc")
    assert list(t.index) == DATASETS and list(t["mean"].columns) == METHODS
    assert list(t.columns.get_level_values(0).unique()) == ["mean", "std", "n"]
    for (d, m), v in values.items():
        assert t.loc[d, ("mean", m)] == pytest.approx(np.mean(v), rel=1e-12)
        assert t.loc[d, ("std", m)] == pytest.approx(np.std(v, ddof=1), rel=1e-12)
        assert t.loc[d, ("n", m)] == 5
    t0 = aggregate(records, rows="dataset", cols="method", metric="acc", ddof=0)
    assert t0.loc["banknote", ("std", "fixmatch")] == pytest.approx(np.std(values[("banknote", "fixmatch")]))
    assert t.attrs == {"metric": "acc", "scale": "quick"}


def test_aggregate_multiple_row_fields_missing_cells_and_one_seed():
    records, values = make_records(seeds=[0])
    records = [r for r in records if not (r["config"]["dataset"] == "banknote" and r["config"]["method"] == "fixmatch")]
    t = aggregate(records, rows=["dataset", "method"], cols="scale", metric="acc")
    assert t.index.names == ["dataset", "method"] and len(t) == 5
    assert t.loc[("breast_cancer", "fixmatch"), ("mean", "quick")] == values[("breast_cancer", "fixmatch")][0]
    assert np.isnan(t.loc[("breast_cancer", "fixmatch"), ("std", "quick")])  # one seed: no sample std
    wide = aggregate(records, rows="dataset", cols="method", metric="acc")
    assert wide.loc["banknote", ("n", "fixmatch")] == 0 and np.isnan(wide.loc["banknote", ("mean", "fixmatch")])


def test_aggregate_scale_filter_and_mixed_scales():
    quick, _ = make_records(scale="quick", rng_seed=1)
    paper, pvalues = make_records(scale="paper", rng_seed=2)
    with pytest.raises(ValueError, match="mix scales"):
        aggregate(quick + paper, "dataset", "method", "acc")
    t = aggregate(quick + paper, "dataset", "method", "acc", scale="paper")
    assert t.loc["banknote", ("mean", "supervised")] == pytest.approx(np.mean(pvalues[("banknote", "supervised")]))
    assert t.attrs["scale"] == "paper"
    with pytest.raises(ValueError, match="no records"):
        aggregate(quick, "dataset", "method", "acc", scale="huge")


def test_aggregate_refuses_to_pool_configs_that_differ_outside_rows_and_cols():
    a, _ = make_records(lr=0.1)
    b, bvalues = make_records(lr=0.01, rng_seed=3)
    with pytest.raises(ValueError, match=r"two runs with seed 0; their configs differ in \['lr'\]"):
        aggregate(a + b, "dataset", "method", "acc")
    t = aggregate(a + b, "dataset", "method", "acc", where={"lr": 0.01})
    assert t.loc["banknote", ("mean", "pseudo_label")] == pytest.approx(np.mean(bvalues[("banknote", "pseudo_label")]))
    with pytest.raises(ValueError, match="duplicate records"):
        aggregate(a + a[:1], "dataset", "method", "acc")


def test_aggregate_errors_name_the_problem():
    records, _ = make_records()
    with pytest.raises(ValueError, match="metric 'f1' is missing .* it has \\['acc', 'loss'\\]"):
        aggregate(records, "dataset", "method", "f1")
    with pytest.raises(ValueError, match="field 'model' is not in the config"):
        aggregate(records, "model", "method", "acc")
    with pytest.raises(ValueError, match="share fields"):
        aggregate(records, "method", "method", "acc")


def test_format_mean_std():
    assert format_mean_std(96.123, 1.27) == "96.1 ± 1.3"
    assert format_mean_std(96.15, 1.25, digits=2) == "96.15 ± 1.25"
    assert format_mean_std(0.5, None) == "0.5"
    assert format_mean_std(np.float32(80.0), np.float32("nan")) == "80.0"
    assert format_mean_std(float("nan"), 1.0) == "–"
    records, values = make_records()
    f = format_table(aggregate(records, "dataset", "method", "acc"), digits=2)
    v = values[("breast_cancer", "supervised")]
    assert f.loc["breast_cancer", "supervised"] == f"{np.mean(v):.2f} ± {np.std(v, ddof=1):.2f}"


def ours_table(means, stds=None, n=3):
    """An aggregate()-shaped table from {(row, col): mean}."""
    rows = list(dict.fromkeys(r for r, _ in means))
    cols = list(dict.fromkeys(c for _, c in means))
    data = {}
    for stat in ("mean", "std", "n"):
        for c in cols:
            data[(stat, c)] = [
                {"mean": means.get((r, c), np.nan), "std": (stds or {}).get((r, c), 1.0), "n": n}[stat] for r in rows
            ]
    t = pd.DataFrame(data, index=pd.Index(rows, name="dataset"))
    t.columns = pd.MultiIndex.from_tuples(list(data), names=["stat", "method"])
    return t


def test_rank_with_ties_and_direction():
    ours = ours_table(
        {
            ("d1", "a"): 90.0,
            ("d1", "b"): 95.0,
            ("d1", "c"): 95.0,
            ("d1", "e"): 80.0,
            ("d2", "a"): 70.0,
            ("d2", "b"): 60.0,
            ("d2", "c"): 50.0,
            ("d2", "e"): 60.0,
        }
    )
    paper = {("d1", "a"): (91.0, 1.0), ("d1", "b"): (91.0, 1.0), ("d1", "c"): (92.0, 1.0), ("d1", "e"): (85.0, 1.0)}
    t = paper_comparison(ours, paper)
    ranks = {c: int(t.loc["d1", (c, "rank")]) for c in "abce"}
    assert ranks == {"a": 3, "b": 1, "c": 1, "e": 4}  # ties share the best rank, the next rank is skipped
    assert {c: int(t.loc["d1", (c, "paper_rank")]) for c in "abce"} == {"a": 2, "b": 2, "c": 1, "e": 4}
    assert {c: int(t.loc["d2", (c, "rank")]) for c in "abce"} == {"a": 1, "b": 2, "c": 4, "e": 2}
    low = paper_comparison(ours, paper, higher_is_better=False)  # error rates: lower is better
    assert {c: int(low.loc["d1", (c, "rank")]) for c in "abce"} == {"a": 2, "b": 3, "c": 3, "e": 1}
    assert all(pd.isna(t.loc["d2", (c, "paper_rank")]) for c in "abce")  # no paper numbers, no paper rank


def test_flag_diff_and_n():
    ours = ours_table({("d", "a"): 90.0, ("d", "b"): 90.0, ("d", "c"): 90.0, ("d", "e"): 90.0}, n=5)
    paper = {
        ("d", "a"): (87.9, 1.0),  # diff 2.1 > 2 x 1.0: flagged
        ("d", "b"): (88.1, 1.0),  # diff 1.9: not flagged
        ("d", "c"): (92.5, 1.2),  # diff -2.5 > 2.4: flagged (both signs)
        ("d", "e"): 95.0,
    }  # no std reported: flag unknown
    t = paper_comparison(ours, paper)
    assert t.loc["d", ("a", "diff")] == pytest.approx(2.1)
    assert t.loc["d", ("c", "diff")] == pytest.approx(-2.5)
    assert [t.loc["d", (c, "flag")] for c in "abc"] == [True, False, True]
    assert pd.isna(t.loc["d", ("e", "flag")]) and t.loc["d", ("e", "diff")] == pytest.approx(-5.0)
    assert all(t.loc["d", (c, "n")] == 5 for c in "abce")
    loose = paper_comparison(ours, paper, flag_sigma=3.0)
    assert [loose.loc["d", (c, "flag")] for c in "abc"] == [False, False, False]
    assert t.attrs["flag_sigma"] == 2.0


def test_paper_as_dataframe_equals_paper_as_dict_and_layout_order():
    ours = ours_table({("d1", "a"): 90.0, ("d1", "x"): 50.0, ("d2", "a"): 70.0})
    paper_dict = {("d2", "a"): (71.0, 0.5), ("d1", "a"): (89.0, 0.4), ("d1", "b"): (88.0, 2.0)}
    paper_df = ours_table(
        {("d2", "a"): 71.0, ("d1", "a"): 89.0, ("d1", "b"): 88.0},
        stds={("d2", "a"): 0.5, ("d1", "a"): 0.4, ("d1", "b"): 2.0},
    )
    t1 = paper_comparison(ours, paper_dict)
    t2 = paper_comparison(ours, paper_df)
    pd.testing.assert_frame_equal(t1, t2)
    # the paper's rows and columns first, in its order; cells only we have come after
    assert list(t1.index) == ["d2", "d1"]
    assert list(t1.columns.get_level_values(0).unique()) == ["a", "b", "x"]
    assert t1.loc["d1", ("b", "n")] == 0 and pd.isna(t1.loc["d1", ("b", "ours_mean")])
    assert pd.isna(t1.loc["d1", ("x", "paper_mean")])


def test_comparison_layout_strings_and_html_without_jinja2():
    ours = ours_table({("d", "a"): 90.04, ("d", "b"): 85.0}, stds={("d", "a"): 1.26, ("d", "b"): 0.5}, n=4)
    t = paper_comparison(ours, {("d", "a"): (87.0, 1.0), ("d", "b"): (85.5, 0.5)})
    layout = comparison_layout(t)
    assert layout.loc["d", ("a", "ours")] == "90.0 ± 1.3"
    assert layout.loc["d", ("a", "paper")] == "87.0 ± 1.0"
    assert layout.loc["d", ("a", "diff")] == "+3.0 !"
    assert layout.loc["d", ("b", "diff")] == "-0.5"
    assert layout.loc["d", ("a", "n")] == "4"
    assert layout.loc["d", ("a", "rank")] == "1/1" and layout.loc["d", ("b", "rank")] == "2/2"
    html = layout.to_html()
    assert "90.0 ± 1.3" in html and "<table" in html
    # to_html of our tables needs no jinja2 (only pandas' Styler does)
    code = (
        "import sys, pandas as pd\n"
        "from sslkit.experiments.report.tables import paper_comparison, comparison_layout\n"
        "t = pd.DataFrame([[1.0, 0.1, 3]], index=pd.Index(['d'], name='dataset'),"
        " columns=pd.MultiIndex.from_tuples([('mean','a'),('std','a'),('n','a')], names=['stat','method']))\n"
        "comparison_layout(paper_comparison(t, {('d','a'): (1.0, 0.1)})).to_html()\n"
        "assert 'jinja2' not in sys.modules, 'jinja2 was imported'\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr


def test_paper_comparison_input_errors():
    ours = ours_table({("d", "a"): 90.0})
    with pytest.raises(TypeError, match="paper must be a dict"):
        paper_comparison(ours, [1, 2])
    with pytest.raises(ValueError, match="\\(row, col\\) pairs"):
        paper_comparison(ours, {"d": (1.0, 1.0)})
    with pytest.raises(ValueError, match="must be \\(mean, std\\)"):
        paper_comparison(ours, {("d", "a"): (1.0, 2.0, 3.0)})
    with pytest.raises(TypeError, match="returned by aggregate"):
        paper_comparison(ours["mean"], {("d", "a"): (1.0, 1.0)})
    with pytest.raises(ValueError, match="flag_sigma"):
        paper_comparison(ours, {("d", "a"): (1.0, 1.0)}, flag_sigma=0)


def test_single_column_table_and_comparison_from_records():
    """A paper column on its own (e.g. "Sup."): no column field, paper keyed by the row alone."""
    records, values = make_records(seeds=range(3))
    sup = [r for r in records if r["config"]["method"] == "supervised"]
    for r in sup:
        r["config"]["labels"] = "(15,45)"
    t = aggregate(sup, rows=["dataset", "labels"], cols=[], metric="acc")
    assert list(t.columns) == ["mean", "std", "n"] and t.index.names == ["dataset", "labels"]
    v = values[("banknote", "supervised")]
    assert t.loc[("banknote", "(15,45)"), "mean"] == pytest.approx(np.mean(v))
    assert t.loc[("banknote", "(15,45)"), "std"] == pytest.approx(np.std(v, ddof=1))
    assert format_table(t)[("banknote", "(15,45)")] == format_mean_std(np.mean(v), np.std(v, ddof=1))

    far = np.mean(v) + 10.0
    paper = {
        ("banknote", "(15,45)"): (far, 1.0),
        ("breast_cancer", "(15,45)"): (np.mean(values[("breast_cancer", "supervised")]), 1.0),
    }
    c = paper_comparison(sup, paper, rows=["dataset", "labels"], metric="acc")
    pd.testing.assert_frame_equal(c, paper_comparison(t, paper))
    assert list(c.columns) == ["ours_mean", "ours_std", "n", "paper_mean", "paper_std", "diff", "flag"]
    assert c.loc[("banknote", "(15,45)"), "diff"] == pytest.approx(-10.0)
    assert list(c[c["flag"]].index) == [("banknote", "(15,45)")]
    layout = comparison_layout(c)
    assert list(layout.columns) == ["ours", "n", "paper", "diff"]
    assert layout.loc[("banknote", "(15,45)"), "diff"] == "-10.0 !"
    assert layout.loc[("breast_cancer", "(15,45)"), "diff"] == "+0.0"
    with pytest.raises(TypeError, match="rows= and metric="):
        paper_comparison(sup, paper)
    with pytest.raises(TypeError, match="only for records"):
        paper_comparison(t, paper, metric="acc")


# ------------------------------------------------------------------------------ book_table (issue 21)


def test_book_table_drops_index_and_nan_orders_naturally_and_labels():
    from sslkit.experiments.report.tables import book_table

    df = pd.DataFrame(
        {"budget": ["100 %", "10 %", "20 %"], "method": ["full", "full_earlystop", "retrieve"], "acc": [1.0, np.nan, 3]}
    ).set_index("budget")
    df["empty"] = np.nan
    t = book_table(df, first=["method"], order={"budget": []}, digits=1)
    (part,) = t.parts
    assert list(part.columns) == ["method", "budget", "acc"]  # key column first, empty column dropped
    assert list(part["budget"]) == ["10 %", "20 %", "100 %"]  # natural order, not "10 %, 100 %, 20 %"
    assert list(part["method"]) == ["Full-EarlyStop", "Retrieve", "Full"]
    assert list(part["acc"]) == ["–", "3.0", "1.0"]
    html = t._repr_html_()
    assert "nan" not in html.lower() and "sslkit-table" in html and "<th></th>" not in html


def test_book_table_keeps_row_labels_of_an_unnamed_index():
    from sslkit.experiments.report.tables import book_table

    df = pd.DataFrame({"acc": [1.0, 2.0]}, index=["retrieve", "random"])
    (part,) = book_table(df).parts
    assert list(part.columns) == ["", "acc"] and list(part[""]) == ["Retrieve", "Random"]
    (part,) = book_table(pd.DataFrame({"acc": [1.0, 2.0]})).parts  # 0..n: nothing to keep
    assert list(part.columns) == ["acc"]
    # row numbers left by sorting or filtering say nothing either (they showed as an unlabeled column of 6, 5, 2, ...)
    sorted_rows = pd.DataFrame({"method": ["b", "a", "c"], "acc": [2.0, 1.0, 3.0]}).sort_values("acc")
    filtered = pd.DataFrame({"acc": [1.0, 2.0, 3.0]}).iloc[[2, 0]]
    for df in (sorted_rows, filtered, sorted_rows.set_index("method", append=False).reset_index().iloc[1:]):
        (part,) = book_table(df).parts
        assert "" not in part.columns and list(part.columns) == [c for c in df.columns], list(part.columns)
    (part,) = book_table(pd.DataFrame({"acc": [1.0]}, index=pd.Index([7], name="seed"))).parts  # named: a label
    assert list(part.columns) == ["seed", "acc"] and list(part["seed"]) == ["7"]


def test_book_table_splits_wide_tables_repeating_the_keys_and_checks_names():
    from sslkit.experiments.report.tables import book_table

    df = pd.DataFrame({"key": ["a", "b"], **{f"c{i}": [i, i + 1] for i in range(10)}})
    t = book_table(df, first="key", max_columns=4)
    assert [list(p.columns) for p in t.parts] == [
        ["key", "c0", "c1", "c2", "c3"],
        ["key", "c4", "c5", "c6", "c7"],
        ["key", "c8", "c9"],
    ]
    with pytest.raises(ValueError, match="no column"):
        book_table(df, first="nope")
    with pytest.raises(TypeError, match="DataFrame"):
        book_table([1, 2])


def test_book_table_custom_order_and_multiindex_header():
    from sslkit.experiments.report.tables import book_table

    cols = pd.MultiIndex.from_tuples([("speed-up", "10 %"), ("speed-up", "100 %"), ("speed-up", "20 %")])
    df = pd.DataFrame(
        [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], index=pd.Index(["random", "retrieve"], name="method"), columns=cols
    )
    t = book_table(df, order={"method": ["retrieve"]})
    assert list(t.parts[0].columns) == ["method", "speed-up · 10 %", "speed-up · 100 %", "speed-up · 20 %"]
    assert list(t.parts[0]["method"]) == ["Retrieve", "Random"]


def test_available_datasets_names_the_missing_without_paths():
    from sslkit.data import DatasetNotFoundError, available_datasets

    def load(name):
        if name == "gone":
            raise DatasetNotFoundError("dataset 'gone' not found. Looked in:\n  - /root/.cache/sslkit/gone")
        if name == "bad":
            raise ValueError("bad")

    assert available_datasets(["a", "b"], load) == (["a", "b"], "")
    names, note = available_datasets(["a", "gone"], load, what="the quick scale")
    assert names == ["a"] and note.startswith("The quick scale could not run on gone")
    assert "Looked in" not in note and "/" not in note.replace("/", "", 0).split(":")[0] and ".cache" not in note
    with pytest.raises(ValueError, match="bad"):  # only a missing dataset is "not here"
        available_datasets(["bad"], load)


def two_field_records(n=3):
    """Records of 2 datasets x 2 settings x 2 methods (d2 has no run of "b"), ``n`` seeds, acc = a known value."""
    out = []
    for d in ("d1", "d2"):
        for st in ("s1", "s2"):
            for m in ("a", "b"):
                if d == "d2" and m == "b":
                    continue
                for seed in range(n):
                    acc = {"a": 90.0, "b": 80.0}[m] + (1.0 if st == "s2" else 0.0) + seed
                    out.append(
                        {
                            "key": f"{d}{st}{m}{seed}",
                            "seed": seed,
                            "scale": "quick",
                            "config": {"dataset": d, "setting": st, "method": m},
                            "metrics": {"acc": acc},
                        }
                    )
    return out


def two_field_table(n=3):
    paper = {(("d1", "s1"), "a"): (85.0, 1.0), (("d1", "s1"), "b"): (84.0, 3.0), (("d2", "s2"), "b"): (70.0, 2.0)}
    return paper_comparison(two_field_records(n), paper, rows=["dataset", "setting"], cols="method", metric="acc")


def test_comparison_long_has_one_row_per_cell_and_the_layout_strings():
    t = two_field_table()
    long = comparison_long(t)
    assert list(long.columns) == ["dataset", "setting", "method", "ours", "n", "paper", "diff", "rank"]
    assert isinstance(long.index, pd.RangeIndex)  # no index column in the book
    # every cell with a run or a paper number, none twice; d2/s1/b has neither and is left out
    keys = list(zip(long["dataset"], long["setting"], long["method"]))
    assert len(keys) == len(set(keys)) == 7 and ("d2", "s1", "b") not in keys and ("d2", "s2", "b") in keys
    row = long[(long["dataset"] == "d1") & (long["setting"] == "s1") & (long["method"] == "a")].iloc[0]
    layout = comparison_layout(t)
    assert [row[f] for f in ("ours", "n", "paper", "diff", "rank")] == [
        layout.loc[("d1", "s1"), ("a", f)] for f in ("ours", "n", "paper", "diff", "rank")
    ]
    assert row["ours"] == "91.0 ± 1.0" and row["diff"] == "+6.0 !" and row["rank"] == "1/1"
    only_paper = long[(long["dataset"] == "d2") & (long["method"] == "b")].iloc[0]
    assert only_paper["ours"] == "–" and only_paper["paper"] == "70.0 ± 2.0"
    flat = comparison_long(paper_comparison(ours_table({("d", "a"): 90.0}).xs("a", axis=1, level="method"), {}))
    assert list(flat.columns) == ["dataset", "ours", "n", "paper", "diff"]  # no column field: no method, no rank


def test_comparison_split_gives_one_narrow_table_per_dataset():
    from sslkit.experiments.paper_a import report as R

    parts = R.comparison_split(two_field_table(), "Table X")
    assert [p.caption for p in parts] == ["Table X, d1 (3 seeds per cell)", "Table X, d2 (3 seeds per cell)"]
    for p in parts:
        (shown,) = p.parts  # one table each, dataset and n columns dropped (the caption has them)
        assert list(shown.columns) == ["setting", "method", "ours", "paper", "ours − paper", "rank ours/paper"]
    assert len(parts[0].parts[0]) == 4 and len(parts[1].parts[0]) == 3
    with pytest.raises(ValueError, match="no row field 'size'"):
        R.comparison_split(two_field_table(), by="size")


def test_comparison_split_keeps_n_when_cells_differ():
    from sslkit.experiments.paper_a import report as R

    records = [r for r in two_field_records() if not (r["config"]["method"] == "b" and r["seed"] == 2)]
    t = paper_comparison(records, {}, rows=["dataset", "setting"], cols="method", metric="acc")
    first = R.comparison_split(t)[0]
    assert first.caption == "d1" and "n" in first.parts[0].columns
    assert sorted(set(first.parts[0]["n"])) == ["2", "3"]


def test_side_by_side_puts_ours_beside_the_paper_per_column_value():
    from sslkit.experiments.paper_a import report as R

    t = two_field_table()
    wide = R.side_by_side(t, {"a": "A"})
    assert list(wide.columns) == ["row", "A: ours", "A: paper", "b: ours", "b: paper"]
    assert wide["row"].tolist() == [" ".join(k) for k in t.index]  # the comparison's row order (paper's first)
    wide = wide.set_index("row")
    assert wide.loc["d1 s1", "A: ours"] == "91.0 ± 1.0\u00a0!"  # 6 points above the paper's 85.0 ± 1.0: beyond 2 std
    assert wide.loc["d1 s1", "b: ours"] == "81.0 ± 1.0" and wide.loc["d1 s1", "b: paper"] == "84.0 ± 3.0"  # < 2 x 3
    assert wide.loc["d2 s2", "b: ours"] == "–" and wide.loc["d2 s2", "b: paper"] == "70.0 ± 2.0"
    assert wide.loc["d1 s2", "A: paper"] == "–"
    with pytest.raises(ValueError, match="column field"):
        R.side_by_side(two_field_table()["a"])


def test_beside_paper_mean_std_one_seed_no_run_and_paper_cells():
    """Each row value in the order asked; ours as mean ± std (numpy's, ddof 1), the mean alone for one seed, "–"
    for a cell with no run, "(n = k)" after a cell with fewer seeds than the fullest; the paper's pair with two
    decimals, "–" where it has none."""
    recs, _ = make_records(seeds=range(3))
    one = [r for r in recs if r["seed"] == 0 and r["config"]["dataset"] == "banknote"]
    rows = [r for r in recs if r["config"]["dataset"] == "breast_cancer"] + one
    paper = {("fixmatch", "banknote"): (91.234, 0.5), ("supervised", "breast_cancer"): (80.0, 1.0)}
    out = beside_paper(
        rows,
        "method",
        "dataset",
        "acc",
        paper,
        rows=["fixmatch", "supervised", "ghost"],
        cols=["breast_cancer", "banknote"],
    )
    assert list(out.columns) == [
        "method",
        "breast_cancer: ours",
        "breast_cancer: paper",
        "banknote: ours",
        "banknote: paper",
    ]
    assert list(out["method"]) == ["fixmatch", "supervised", "ghost"]
    v = [
        r["metrics"]["acc"]
        for r in rows
        if r["config"]["dataset"] == "breast_cancer" and r["config"]["method"] == "fixmatch"
    ]
    assert out.loc[0, "breast_cancer: ours"] == f"{np.mean(v):.1f} ± {np.std(v, ddof=1):.1f}"
    (v0,) = [r["metrics"]["acc"] for r in one if r["config"]["method"] == "fixmatch"]
    assert out.loc[0, "banknote: ours"] == f"{v0:.1f} (n = 1)"  # one seed where the table's fullest cells have 3
    assert "(n =" not in out.loc[0, "breast_cancer: ours"]
    assert out.loc[0, "banknote: paper"] == "91.23 ± 0.50" and out.loc[0, "breast_cancer: paper"] == "–"
    assert out.loc[1, "breast_cancer: paper"] == "80.00 ± 1.00"
    assert (out.loc[2, ["breast_cancer: ours", "banknote: ours"]] == "–").all()
    assert not out.isna().any().any()
    assert (
        beside_paper([], "method", "dataset", "acc", paper, rows=["fixmatch"], cols=["banknote"]).loc[
            0, "banknote: ours"
        ]
        == "–"
    )
