"""The reproduction scorecard: every table and figure of papers A, B and C, and how far we got with it.

Status is never typed in by hand: it is computed from the notebook registry
(:data:`sslkit.experiments.notebooks.NOTEBOOKS`) and the committed results files under ``notebooks/results/``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from .notebooks import NOTEBOOKS, repo_root


@dataclass(frozen=True)
class Target:
    paper: str          # "A", "B" or "C"
    item: str           # "Table 1", "Figure 2", ...
    what: str
    notebook: str | None = None   # registry name of the notebook that reproduces it (None: not yet)
    note: str = ""


TARGETS = (
    Target("A", "Theorems 1-10", "sympy derivations (k = 2, 3) of every theorem", notebook="a-theory",
           note="exact derivations: one scale"),
    Target("A", "Theorems 2, 7", "Monte Carlo check of the mean and variance formulas", notebook="a-monte-carlo"),
    Target("A", "Figure 1", "variance ratios PNU/PN and lin(a*)/PN against n_U; Gaussian and Credit; BCE and 0-1 loss",
           notebook="a-figure1"),
    Target("A", "Appendix B", "multiclass variance comparison (Dry Bean, Covertype)", notebook="a-appendix-b",
           note="Covertype needs a download"),
    Target("A", "Table 1", "binary SSL: Sup., PNU, Ours (Iter), PL, VAT on six datasets", notebook="a-table1",
           note="paper scale here: the four tabular datasets; image rows quick scale, paper scale needs a GPU"),
    Target("A", "Table 1, Sup. column (Banknote, Breast Cancer)", "supervised MLP baseline, accuracy vs labels",
           notebook="supervised-baseline", note="end-to-end proof of the toolchain"),
    Target("A", "Table 2", "multiclass SSL: Sup., Ours (Iter), Ours (EC), PL, VAT; balanced / mild / severe",
           notebook="a-table2", note="paper scale here: Shuttle, Dry Bean; Covertype needs a download; MNIST a GPU"),
    Target("A", "Table 3", "FixMatch baseline", notebook="a-fixmatch", note="tabular rows here; image rows need a GPU"),
    Target("A", "Table 4", "covariance-set size ablation (MNIST)", notebook="a-ablations", note="MNIST: needs a GPU"),
    Target("A", "Table 5", "equal-covariance diagnostic", notebook="a-ablations"),
    Target("A", "Tables 6-10", "non-negative risk-correction on/off", notebook="a-ablations",
           note="tabular rows here; image rows need a GPU"),
    Target("B", "Theory", "alpha-MMD identity (6), GKH step (7), Lemmas B.3 / B.6, Theorem 5.6 bound",
           notebook="b-theory", note="exact derivations and numeric checks: one scale"),
    Target("B", "Figure 2", "GKHR vs GKH on four 2-D distributions", notebook="b-figure2"),
    Target("B", "Figure 3", "10-component GMM: 100 points chosen by every selector", notebook="b-figure3"),
    Target("B", "Table 1", "selectors x {FlexMatch, FreeMatch} on CIFAR-10/100, SVHN, STL-10", notebook="b-table1",
           note="CPU stand-in (frozen features + MLP head) here; the USB protocol needs a GPU"),
    Target("B", "Table 4", "effect of alpha", notebook="b-table4",
           note="CPU: selection measures + a supervised proxy; the paper's FreeMatch accuracy needs a GPU"),
    Target("B", "Table 5", "wall-clock of every selector (n = 50 000, m = 400)", notebook="b-table5",
           note="synthetic 512-d features on a loaded 2-core CPU"),
    Target("B", "Tables 2, 3, 6; Figures 4-5", "comparison with AL / SSAL approaches", note="not planned yet"),
    Target("C", "Figures 2 and 4", "traditional SSL: relative error vs speed-up (VAT, MT, FixMatch; CIFAR-10, SVHN)"),
    Target("C", "Figure 6 / Tables 11-13", "robust SSL: OOD (CIFAR-10, MNIST) and class imbalance"),
    Target("C", "Tables 5-10", "traditional SSL results with standard deviations"),
    Target("C", "Figure 5", "IMDB and ELEC", note="text datasets: not planned"),
)


def _status(target: Target, root: Path) -> tuple[str, str]:
    if target.notebook is None:
        return "not reproduced yet", ""
    spec = next((s for s in NOTEBOOKS if s.name == target.notebook), None)
    if spec is None:
        return "not reproduced yet", ""
    folder = root / "notebooks" / "results"
    results = next((f for f in sorted(folder.glob(Path(spec.path).stem + "*/paper.jsonl"))), None)
    if results is not None:
        from .runner import load_results

        records = load_results(results)
        per_cell = {}
        for r in records:
            per_cell.setdefault(json.dumps(r["config"], sort_keys=True), set()).add(r["seed"])
        counts = sorted(len(v) for v in per_cell.values())
        seeds = f"{counts[0]}" if counts[0] == counts[-1] else f"{counts[0]}-{counts[-1]}"
        return f"paper scale ({len(records)} runs, {seeds} seed(s) per cell)", spec.path
    return "quick scale only", spec.path


def scorecard(root: str | Path | None = None) -> pd.DataFrame:
    """One row per paper item: what it is, the notebook that reproduces it and its status."""
    root = Path(root) if root is not None else repo_root()
    rows = []
    for t in TARGETS:
        status, path = _status(t, root)
        rows.append({"paper": t.paper, "item": t.item, "what": t.what, "status": status,
                     "notebook": path or "-", "note": t.note})
    return pd.DataFrame(rows)
