"""The reproduction scorecard: every table, figure and theorem group of papers A, B and C, row group by row
group, with a status computed from the committed records whose configuration matches that row group.

The items are the ``targets`` of the notebooks' front matter (:func:`sslkit.experiments.notebooks.registry`)
and :data:`NOT_REPRODUCED`. :data:`GROUPS` splits an item into the row groups that ran differently (e.g. Table
1's tabular rows and its image rows) and says which results files (``"<name>/<scale>"`` under
``notebooks/results/``) and which configurations (``match``) each one reads; an item without an entry there is
one group reading ``<notebook stem>/paper`` and ``<notebook stem>/cpu``. Statuses (:data:`STATUSES`):

* ``paper protocol (n seeds)`` -- matching records made with the paper's model, data, budget and schedule;
* ``CPU stand-in (n seeds)`` -- matching records of a run that changes one of them (``cpu*`` files, and the
  files named in :data:`STAND_INS`);
* ``quick scale only`` -- no matching record: the notebook runs at quick scale in CI only;
* ``not run`` -- no notebook; ``not runnable offline`` -- the data or model cannot be fetched here;
* ``derived and checked`` / ``plotted only`` -- theorem groups (exact derivations, one scale).

Per row group the scorecard also counts, where the paper prints numbers for it and our records are at the paper's
protocol: the paper's rows we ran, the cells with a paper number, the cells within 2 x the paper's per-seed std,
the cells whose means differ at two standard errors of the difference (paper: :data:`PAPER_SEEDS` seeds), and
the claims of :mod:`sslkit.experiments.claims` about it that hold / do not hold.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from .claims import C_ALGORITHMS, PAPER_PROTOCOL, STAND_IN, STAND_INS, record_kind, source_kind
from .notebooks import registry, repo_root

QUICK, NOT_RUN, OFFLINE = "quick scale only", "not run", "not runnable offline"
DERIVED, PLOTTED = "derived and checked", "plotted only"
STATUSES = (PAPER_PROTOCOL, STAND_IN, QUICK, NOT_RUN, OFFLINE, DERIVED, PLOTTED)
#: seeds behind a paper's mean ± std (paper A: "mean ± std over 30 seeds")
PAPER_SEEDS = {"A": 30}


@dataclass(frozen=True)
class Target:
    paper: str  # "A", "B" or "C"
    item: str  # "Table 1", "Figure 2", ...
    what: str
    notebook: str | None = None  # registry name of the notebook that reproduces it (None: not yet)
    note: str = ""


@dataclass(frozen=True)
class Group:
    """One row group of an item: the records it reads (``sources``, filtered by ``match``: config key -> allowed
    values), a fixed ``status`` where records cannot decide it (theorems, data that cannot be fetched), and
    ``cells``: records -> ``[(row, column, our per-seed values or None, (paper mean, paper std))]``, one per cell
    the paper prints for the group."""

    group: str = ""
    sources: tuple = ()
    match: Mapping = field(default_factory=dict)
    status: str = ""
    cells: Callable | None = None
    note: str = ""


#: The papers' items no notebook reproduces yet.
NOT_REPRODUCED = (
    Target("B", "Tables 2, 3, 6; Figures 4-5", "comparison with AL / SSAL approaches", note="not planned yet"),
    Target(
        "C",
        "Figure 2",
        "headline: accuracy degradation vs speed-up of VAT, FixMatch, MT (incl. 'VAT Extended')",
        note="its points are Figure 4's and its 'VAT Extended' bar the extended runs, both on the trade-off page",
    ),
    Target(
        "C",
        "Figure 6 (IMDB, ELEC)",
        "traditional SSL on text",
        note="not runnable offline: the IMDB / ELEC data and the pretrained LSTM language model cannot be fetched",
    ),
)


# ------------------------------------------------------------------------------------ the paper's cells, per item


def _a_table_cells(table: int, datasets) -> Callable:
    def cells(records):
        from .claims import a_rows
        from .paper_a import PAPER_TABLE1, PAPER_TABLE2

        ours = a_rows(records, datasets)
        paper = PAPER_TABLE1 if table == 1 else PAPER_TABLE2
        return [
            ((d, s), m, ours.get((d, s), {}).get(m), v)
            for (d, s), row in paper.items()
            if d in datasets
            for m, v in row.items()
        ]

    return cells


def _a_fixmatch_cells(datasets) -> Callable:
    def cells(records):
        from .paper_a_appendix import PAPER_TABLE3, select_threshold

        recs = [r for r in records if isinstance(r["config"]["setting"], str) and r["config"]["dataset"] in datasets]
        ours: dict = {}
        for r in select_threshold(recs) if recs else []:
            ours.setdefault((r["config"]["dataset"], r["config"]["setting"]), []).append(r["metrics"]["test_acc"])
        return [(k, "FixMatch", ours.get(k), v["test_acc"]) for k, v in PAPER_TABLE3.items() if k[0] in datasets]

    return cells


def _a_experiment(records, experiment: str, key: str | None) -> dict:
    """Appendix D records of one ``experiment``: ``{(dataset, setting, config[key]): {metric: [per seed]}}``."""
    out: dict = {}
    for r in records:
        c = r["config"]
        if c.get("experiment") == experiment:
            cell = out.setdefault((c["dataset"], c["setting"], c.get(key) if key else None), {})
            for metric, v in r["metrics"].items():
                cell.setdefault(metric, []).append(v)
    return out


def _a_cov_size_cells(records):
    from .paper_a_appendix import PAPER_TABLE4

    ours = _a_experiment(records, "cov_size", "cov_per_class")
    return [(k[:2], k[2], ours.get(k, {}).get("test_acc"), v) for k, v in PAPER_TABLE4.items()]


def _a_ec_cells(datasets) -> Callable:
    def cells(records):
        from .paper_a_appendix import PAPER_TABLE5

        ours = _a_experiment(records, "ec_diag", None)
        return [
            ((d, s), metric, ours.get((d, s, None), {}).get(metric), v[metric])
            for (d, s), v in PAPER_TABLE5.items()
            if d in datasets
            for metric in ("test_acc", "cov_rel_fro")
        ]

    return cells


def _a_nn_cells(tables, datasets) -> Callable:
    def cells(records):
        from .paper_a_appendix import PAPER_TABLES

        ours = _a_experiment(records, "nn", "nn")
        return [
            ((t, d, s), mode, ours.get((d, s, mode), {}).get("test_acc"), v[mode])
            for t in tables
            for (d, s), v in PAPER_TABLES[t].items()
            if d in datasets
            for mode in ("on", "off")
        ]

    return cells


_TABULAR_1 = ("adult", "banknote", "breast_cancer", "credit_default")
_TABULAR_2 = ("shuttle", "dry_bean")
_COVERTYPE = "the Covertype file is not in the offline data folder"
_A_NN = "a_ablations/paper"

_C_NAMES = {"paper_c_cnn": "MNIST CNN", "wrn28_2": "WRN-28-2", "mnist": "MNIST", "cifar10": "CIFAR-10", "svhn": "SVHN"}
_C_FIELDS = (("dataset", "data "), ("model", "model "), ("lr", "lr "), ("epochs", "T = "), ("every", "R = "))


def _c_stand_in(p: dict, papers: tuple, unstated=(), extra: str = "") -> str:
    """The note of a chapter-C CPU stand-in: what its protocol dict ``p`` changes from the paper's protocols
    ``papers`` (data, model, lr, epochs T, re-selection interval R) and what it keeps; ``unstated``: keys the
    paper gives no value for (its protocol dict holds our choice there); ``extra``: kept sizes, said first."""

    def show(v):
        return _C_NAMES.get(v, v) if isinstance(v, str) else f"{v:g}"

    changed, kept = [], [extra] if extra else []
    for key, label in _C_FIELDS:
        theirs = list(dict.fromkeys(q[key] for q in papers))
        if key in unstated:
            changed.append(f"{label}{show(p[key])} (the paper states none)")
        elif p[key] not in theirs:
            changed.append(f"{label}{show(p[key])} (paper: {', '.join(show(v) for v in theirs)})")
        else:
            kept.append(f"{label}{show(p[key])}")
    return "changes " + ", ".join(changed) + "; keeps " + ", ".join(kept)


def _c_notes() -> tuple[str, str, str]:
    """The stand-in notes of chapter C's CPU records, from the protocol dicts: the trade-off protocol
    (``paper_c``, also behind the variants and the extended runs), the robust one (``paper_c_robust``: its
    MNIST OOD row) and the robust one with where its grid runs Retrieve-Warm (Table 11)."""
    from .paper_c import PROTOCOLS as TRADEOFF
    from .paper_c_robust import PROTOCOLS as ROBUST
    from .paper_c_robust import robust_grid

    tradeoff = _c_stand_in(TRADEOFF["cpu"], (TRADEOFF["paper_cifar10"], TRADEOFF["paper_svhn"]))
    r, rp = ROBUST["cpu"], ROBUST["paper_mnist_ood"]
    sizes = ("n_labeled_per_class", "n_unlabeled")
    same = all(r["split"][k] == rp["split"][k] for k in sizes)
    robust = _c_stand_in(r, (rp,), unstated=("epochs",), extra="the paper's MNIST OOD sizes" if same else "")
    if not same:
        robust += "; sizes " + ", ".join(f"{k} {r['split'][k]} (paper: {rp['split'][k]})" for k in sizes)
    warm = sorted({(c["ratio"], c["fraction"]) for c in robust_grid("cpu") if c["method"] == "retrieve_warm"})
    where = ", ".join(f"ratio {round(100 * x)} % / budget {round(100 * f)} %" for x, f in warm) or "no cell"
    return tradeoff, robust, f"Retrieve-Warm at {where} only; {robust}"


_C_CPU, _C_ROBUST, _C_TABLE11 = _c_notes()

#: (paper, item) -> its row groups; items not listed are one group reading ``<notebook stem>/paper`` and ``/cpu``.
GROUPS = {
    ("A", "Theorems 1-9"): (Group("", status=DERIVED),),
    ("A", "Theorem 10"): (Group("", status=PLOTTED),),
    ("A", "Table 1"): (
        Group("tabular", ("a_table1/paper",), {"dataset": _TABULAR_1}, cells=_a_table_cells(1, _TABULAR_1)),
        Group("MNIST 4v9", ("a_table1/paper",), {"dataset": ("mnist_4v9",)}, cells=_a_table_cells(1, ("mnist_4v9",))),
        Group("CIFAR CvD", ("a_table1/paper",), {"dataset": ("cifar_cvd",)}, cells=_a_table_cells(1, ("cifar_cvd",))),
    ),
    ("A", "Table 2"): (
        Group("Shuttle, Dry Bean", ("a_table2/paper",), {"dataset": _TABULAR_2}, cells=_a_table_cells(2, _TABULAR_2)),
        Group("Covertype", status=OFFLINE, note=_COVERTYPE),
        Group("MNIST", ("a_table2/paper",), {"dataset": ("mnist",)}, cells=_a_table_cells(2, ("mnist",))),
    ),
    ("A", "Table 3"): (
        Group("tabular", ("a_fixmatch/paper",), {"dataset": _TABULAR_1}, cells=_a_fixmatch_cells(_TABULAR_1)),
        Group(
            "MNIST 4v9, MNIST",
            ("a_fixmatch/paper",),
            {"dataset": ("mnist_4v9", "mnist")},
            cells=_a_fixmatch_cells(("mnist_4v9", "mnist")),
        ),
    ),
    ("A", "Table 4"): (Group("", (_A_NN,), {"experiment": ("cov_size",)}, cells=_a_cov_size_cells),),
    ("A", "Table 5"): (
        Group(
            "Shuttle, Dry Bean",
            (_A_NN,),
            {"experiment": ("ec_diag",), "dataset": _TABULAR_2},
            cells=_a_ec_cells(_TABULAR_2),
        ),
        Group("Covertype", status=OFFLINE, note=_COVERTYPE),
        Group("MNIST", (_A_NN,), {"experiment": ("ec_diag",), "dataset": ("mnist",)}, cells=_a_ec_cells(("mnist",))),
    ),
    ("A", "Tables 6-10"): (
        Group(
            "Table 6 · binary tabular",
            (_A_NN,),
            {"experiment": ("nn",), "dataset": _TABULAR_1},
            cells=_a_nn_cells((6,), _TABULAR_1),
        ),
        Group(
            "Table 7 · binary image",
            (_A_NN,),
            {"experiment": ("nn",), "dataset": ("mnist_4v9", "cifar_cvd")},
            cells=_a_nn_cells((7,), ("mnist_4v9", "cifar_cvd")),
        ),
        Group(
            "Tables 8-10 · Shuttle, Dry Bean",
            (_A_NN,),
            {"experiment": ("nn",), "dataset": _TABULAR_2},
            cells=_a_nn_cells((8, 9, 10), _TABULAR_2),
        ),
        Group("Tables 8-10 · Covertype", status=OFFLINE, note=_COVERTYPE),
        Group(
            "Tables 8-10 · MNIST, CIFAR-10",
            (_A_NN,),
            {"experiment": ("nn",), "dataset": ("mnist", "cifar10")},
            cells=_a_nn_cells((8, 9, 10), ("mnist", "cifar10")),
        ),
    ),
    ("A", "Appendix B"): (
        Group("Dry Bean", ("a_appendix_b/paper",), {"dataset": ("dry_bean",)}),
        Group("Covertype", status=OFFLINE, note=_COVERTYPE + "; digits 0-6 is shown beside Dry Bean instead"),
    ),
    ("A", "Figure 1"): (Group("", ("a_figure1/paper",), note="one Monte Carlo run (many trials) per cell"),),
    ("B", "Theory"): (Group("", status=DERIVED),),
    ("B", "Table 1"): (
        Group("CIFAR-10", ("b_table1/cpu_efficientnet",), note="frozen EfficientNet features + an MLP head"),
        Group("CIFAR-100, SVHN, STL-10", status=OFFLINE, note="the datasets are not in the offline data folder"),
    ),
    ("B", "Table 4"): (
        Group("CIFAR-10 · accuracy", ("b_table4_head/paper",), note=STAND_INS["b_table4_head/paper"]),
        Group("CIFAR-10 · selection measures", ("b_table4_proxy/paper",), note=STAND_INS["b_table4_proxy/paper"]),
        Group("CIFAR-100", status=OFFLINE, note="CIFAR-100 is not in the offline data folder"),
    ),
    ("B", "Table 5"): (Group("", ("b_table5/paper",), {"part": ("timing",)}, note=STAND_INS["b_table5/paper"]),),
    ("C", "Eq. (5)-(7)"): (Group("", status=DERIVED),),
    ("C", "Theorem 1 / Lemmas 1-3"): (Group("", status=DERIVED),),
    ("C", "Figure 4 (a-e)"): (
        *(
            Group(f"{name} · MNIST", ("c_tradeoff/cpu",), {"algorithm": (algo,)}, note=_C_CPU)
            for algo, name, _ in C_ALGORITHMS
        ),
        Group("VAT, MT, FixMatch · CIFAR-10", ("c_tradeoff/paper",)),
        Group("SVHN", status=OFFLINE, note="SVHN is not in the offline data folder"),
    ),
    ("C", "Tables 5-10"): (
        *(
            Group(f"{name} · MNIST", ("c_tradeoff/cpu",), {"algorithm": (algo,)}, note=_C_CPU)
            for algo, name, _ in C_ALGORITHMS
        ),
        Group("CIFAR-10, SVHN", ("c_tradeoff/paper",)),
    ),
    ("C", "Figure 4 (f)"): (Group("", ("c_tradeoff/cpu",), note=_C_CPU),),
    ("C", "Figure 4 (g-h)"): (Group("", ("c_tradeoff/cpu",), note=_C_CPU),),
    ("C", "Figures 8-9 (App. G.3)"): (Group("", ("c_extended/cpu", "c_extended/paper"), note=_C_CPU),),
    ("C", "Figure 7 (App. G.1)"): (Group("", ("c_variants/cpu",), {"warm": (False,)}, note=_C_CPU),),
    ("C", "CORDS defects D3/D4/D5"): (Group("", ("c_variants/cpu",), {"cords_compatible": (True,)}, note=_C_CPU),),
    ("C", "Figure 5 (Bayesian coreset)"): (
        Group("", ("c_bayesian/cpu", "c_bayesian/paper"), note="both readings of GIGA's weights; " + _C_CPU),
    ),
    ("C", "Figure 6 (a-c), Tables 12-13"): (Group("", ("c_robust/cpu", "c_robust/paper"), note=_C_ROBUST),),
    ("C", "Figure 6 (d)"): (Group("", ("c_robust/cpu", "c_robust/paper"), note="process CPU time; " + _C_ROBUST),),
    ("C", "Table 11 (App. H.1)"): (
        Group("", ("c_robust/cpu", "c_robust/paper"), {"method": ("retrieve_warm",)}, note=_C_TABLE11),
    ),
    ("C", "Robust SSL mechanism"): (
        Group("", ("c_robust/cpu", "c_robust/paper"), {"method": ("retrieve", "random")}, note=_C_ROBUST),
    ),
}


def targets() -> list[Target]:
    """Every item: the registered notebooks' targets and :data:`NOT_REPRODUCED`, sorted by paper and item."""
    found = [
        Target(spec.paper, t["item"], t["what"], notebook=spec.name, note=t.get("note", ""))
        for spec in registry()
        for t in spec.targets
    ]
    return sorted(found + list(NOT_REPRODUCED), key=lambda t: (t.paper, t.item))


def groups_of(target: Target) -> tuple:
    """The row groups of ``target``: :data:`GROUPS`, or one group reading the notebook's paper and cpu files."""
    if (target.paper, target.item) in GROUPS:
        return GROUPS[(target.paper, target.item)]
    if target.notebook is None:
        return (Group(status=OFFLINE if "not runnable offline" in target.note else NOT_RUN),)
    spec = next(s for s in registry() if s.name == target.notebook)
    stem = Path(spec.path).stem
    return (Group(sources=(f"{stem}/paper", f"{stem}/cpu")),)


def _load(source: str, root: Path) -> list:
    from .claims import read_records

    name, scale = source.split("/")
    return read_records(root / "notebooks" / "results" / name / f"{scale}.jsonl")


def results_paper(name: str) -> str:
    """The paper of results folder ``name``: that of the notebook whose stem is ``name`` or the longest stem that
    ``name`` starts with plus ``_`` (``a_table1_iter`` -> ``a_table1``, ``supervised_baseline`` -> paper A), else
    the folder's prefix ``a_`` / ``b_`` / ``c_``."""
    papers = {Path(spec.path).stem: spec.paper for spec in registry()}
    owners = [stem for stem in papers if name == stem or name.startswith(stem + "_")]
    if owners:
        return papers[max(owners, key=len)]
    prefix = name.split("_")[0]
    if prefix in ("a", "b", "c"):
        return prefix.upper()
    raise ValueError(f"results folder {name!r}: no notebook or a_/b_/c_ prefix says which paper it belongs to")


def committed_runs(root: str | Path | None = None) -> Counter:
    """``{(paper, kind): runs}`` over every committed results file under ``root`` (the repository by default):
    the paper of its folder (:func:`results_paper`) and the kind of each record
    (:func:`sslkit.experiments.claims.record_kind`: paper protocol, CPU stand-in or diagnostic)."""
    from .claims import read_records

    root = Path(root) if root is not None else repo_root()
    runs: Counter = Counter()
    for f in sorted((root / "notebooks" / "results").glob("*/*.jsonl")):
        paper = results_paper(f.parent.name)
        for r in read_records(f):
            runs[(paper, record_kind(f"{f.parent.name}/{f.stem}", r))] += 1
    return runs


def matching(group: Group, root: Path) -> dict:
    """``{source: records}`` of the group's sources, only the records whose config matches ``group.match``."""
    out = {}
    for s in group.sources:
        recs = [r for r in _load(s, root) if all(r["config"].get(k) in v for k, v in group.match.items())]
        if recs:
            out[s] = recs
    return out


def _seeds(records) -> str:
    per_config: dict = {}
    for r in records:
        per_config.setdefault(json.dumps(r["config"], sort_keys=True), set()).add(r["seed"])
    counts = sorted(len(v) for v in per_config.values())
    n = f"{counts[0]}" if counts[0] == counts[-1] else f"{counts[0]}-{counts[-1]}"
    return f"{n} seed{'s' if counts[-1] > 1 else ''}"


def cell_counts(cells, paper_seeds: int) -> dict:
    """Counts over the paper's cells: ``rows`` (paper rows with a record / all), ``cells`` (with our value and a
    paper number), ``within_2sd`` (|ours - paper| <= 2 x the paper's std) and ``differ_2se`` (|ours - paper| > 2 x
    sqrt(s²/n + s_paper²/n_paper))."""
    rows_all = {row for row, _, _, _ in cells}
    rows_run = {row for row, _, ours, _ in cells if ours}
    both = [(np.asarray(ours, dtype=float), p) for _, _, ours, p in cells if ours and p is not None]
    within = differ = 0
    for ours, (pm, ps) in both:
        diff = abs(float(ours.mean()) - pm)
        if not math.isnan(ps):
            within += diff <= 2 * ps
            sd = float(ours.std(ddof=1)) if len(ours) > 1 else math.nan
            differ += diff > 2 * math.sqrt(sd**2 / len(ours) + ps**2 / paper_seeds)
    return {
        "rows": f"{len(rows_run)} of {len(rows_all)}",
        "cells": len(both),
        "within_2sd": within,
        "differ_2se": differ,
    }


def status(target: Target, group: Group, root: Path) -> tuple[str, dict, dict]:
    """``(status, records by source, cell counts)`` of one row group."""
    if group.status:
        return group.status, {}, {}
    found = matching(group, root)
    paper = [r for s, recs in found.items() if source_kind(s) == PAPER_PROTOCOL for r in recs]
    stand_in = [r for s, recs in found.items() if source_kind(s) == STAND_IN for r in recs]
    counts = cell_counts(group.cells(paper), PAPER_SEEDS.get(target.paper, 30)) if group.cells and paper else {}
    if paper:
        rows = counts.get("rows", "")
        partial = rows and rows.split(" of ")[0] != rows.split(" of ")[1]
        return f"{PAPER_PROTOCOL} ({_seeds(paper)})" + (f", {rows} rows" if partial else ""), found, counts
    if stand_in:
        return f"{STAND_IN} ({_seeds(stand_in)})", found, counts
    if group.cells:
        counts = {"rows": cell_counts(group.cells([]), 30)["rows"]}
    return (QUICK if target.notebook else NOT_RUN), found, counts


def scorecard(root: str | Path | None = None, claims=None) -> pd.DataFrame:
    """One row per row group of every item: paper, item, group, what, status, the paper's rows we ran, the cell
    counts, the claims that hold / do not hold (:func:`sslkit.experiments.claims.ledger`, or ``claims``: a ledger
    to use), the notebook and a note (the group's; for an item of one group, the item's when the group has none)."""
    from .claims import ledger

    root = Path(root) if root is not None else repo_root()
    claims = ledger() if claims is None else claims
    rows = []
    for t in targets():
        spec = next((s for s in registry() if s.name == t.notebook), None)
        groups = groups_of(t)
        for g in groups:
            st, _, counts = status(t, g, root)
            mine = claims[(claims["paper"] == t.paper) & (claims["item"] == t.item) & (claims["group"] == g.group)]
            rows.append(
                {
                    "paper": t.paper,
                    "item": t.item,
                    "group": g.group,
                    "what": t.what,
                    "status": st,
                    "rows": counts.get("rows", ""),
                    "cells": counts.get("cells", ""),
                    "within 2σ": counts.get("within_2sd", ""),
                    "differ at 2 SE": counts.get("differ_2se", ""),
                    "claims hold": int((mine["verdict"] == "holds").sum()),
                    "claims fail": int((mine["verdict"] == "does not hold").sum()),
                    "notebook": spec.path if spec else "",
                    "note": g.note or (t.note if len(groups) == 1 else ""),
                }
            )
    return pd.DataFrame(rows)


def status_counts(card: pd.DataFrame) -> dict:
    """``{paper: {status without its seed count: number of row groups}}`` of a :func:`scorecard` table."""
    base = card["status"].str.split(" \\(").str[0]
    return {p: base[card["paper"] == p].value_counts().to_dict() for p in sorted(card["paper"].unique())}


#: the columns of :func:`to_html`, in order
COLUMNS = ("paper", "item", "status", "rows run", "cells", "≤ 2σ", "≠ at 2 SE", "claims ✓ / ✗", "note")


def to_html(card: pd.DataFrame, columns=COLUMNS, drop_empty: bool = False) -> str:
    """The scorecard as an HTML table for a book page one folder below the root: no index, the item linked to its
    notebook's page, the counts in narrow columns, the group under the item. ``columns``: which of
    :data:`COLUMNS` to show; ``drop_empty``: leave out the columns that are empty in every row of ``card``."""
    import html

    def link(r):
        name = html.escape(r["item"])
        if r["notebook"]:
            name = f'<a href="../{r["notebook"][:-3]}.html">{name}</a>'
        return name + (f"<br><small>{html.escape(r['group'])}</small>" if r["group"] else "")

    shown = pd.DataFrame(
        {
            "paper": card["paper"],
            "item": [link(r) for _, r in card.iterrows()],
            "status": card["status"].map(html.escape),
            "rows run": card["rows"],
            "cells": card["cells"],
            "≤ 2σ": card["within 2σ"],
            "≠ at 2 SE": card["differ at 2 SE"],
            "claims ✓ / ✗": [f"{a} / {b}" if a or b else "" for a, b in zip(card["claims hold"], card["claims fail"])],
            "note": card["note"].map(html.escape),
        }
    )[list(columns)]
    if drop_empty:
        shown = shown[[c for c in shown.columns if (shown[c].astype(str) != "").any()]]
    return shown.to_html(index=False, escape=False, border=0, classes="table scorecard")


def toc_order(root: str | Path | None = None) -> list[str]:
    """The files of ``_toc.yml`` (``notebooks/a_table1.md``, ...), in the book's order; ``[]`` without one."""
    import yaml

    toc = (Path(root) if root is not None else repo_root()) / "_toc.yml"
    if not toc.exists():
        return []
    chapters = [c for part in yaml.safe_load(toc.read_text()).get("parts", []) for c in part.get("chapters", [])]
    return [c["file"] + ".md" for c in chapters if "file" in c]


def paper_card(card: pd.DataFrame, paper: str, root: str | Path | None = None) -> pd.DataFrame:
    """The rows of ``paper`` in a :func:`scorecard` table, ordered as the book orders their notebooks
    (:func:`toc_order`; items no notebook reproduces last), a notebook's items as its front matter lists them."""
    order = {f: i for i, f in enumerate(toc_order(root))}
    listed = {(spec.path, t["item"]): i for spec in registry() for i, t in enumerate(spec.targets)}
    mine = card[card["paper"] == paper]
    rank = [(order.get(nb, len(order)), listed.get((nb, it), 0)) for nb, it in zip(mine["notebook"], mine["item"])]
    return mine.assign(_rank=rank).sort_values("_rank", kind="stable").drop(columns="_rank")


def paper_summary(card: pd.DataFrame, claims: pd.DataFrame, paper: str) -> str:
    """One sentence of counts for ``paper``: its row groups by status (:func:`status_counts`) and its claims by
    verdict (:func:`sslkit.experiments.claims.ledger`), e.g. ``"24 row groups (10 paper protocol, ...) and 17
    claims (8 holds, 4 does not hold, ...)"``."""
    from .claims import VERDICTS

    groups = status_counts(card).get(paper, {})
    shown = [s for s in STATUSES if s in groups] + [s for s in groups if s not in STATUSES]
    verdicts = claims.loc[claims["paper"] == paper, "verdict"].value_counts().to_dict()
    named = [v for v in VERDICTS if verdicts.get(v)] + [v for v in verdicts if v not in VERDICTS]

    def listed(counts, keys):
        return ", ".join(f"{counts[k]} {k}" for k in keys)

    n_groups, n_claims = sum(groups.values()), sum(verdicts.values())
    text = f"{n_groups} row group{'s' if n_groups != 1 else ''} ({listed(groups, shown)})"
    return text + f" and {n_claims} claim{'s' if n_claims != 1 else ''} ({listed(verdicts, named)})"


def overview(paper: str, card: pd.DataFrame | None = None, claims: pd.DataFrame | None = None) -> tuple[str, str]:
    """What an overview page (``book/paper_a.md`` ...) shows of ``paper``: the sentence of :func:`paper_summary`
    and the HTML table of its rows (:func:`paper_card`; :func:`to_html` without the paper column and without the
    columns that are empty in every row). ``card`` / ``claims``: a :func:`scorecard` table and a ledger to use
    (default: both computed from the committed records)."""
    from .claims import ledger

    claims = ledger() if claims is None else claims
    card = scorecard(claims=claims) if card is None else card
    table = to_html(paper_card(card, paper), columns=[c for c in COLUMNS if c != "paper"], drop_empty=True)
    return paper_summary(card, claims, paper), table
