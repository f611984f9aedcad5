"""The reproduction scorecard: every table and figure of papers A, B and C, and how far we got with it.

Status is never typed in by hand: the items a notebook reproduces are the ``targets`` of its front matter
(:func:`sslkit.experiments.notebooks.registry`), the rest are :data:`NOT_REPRODUCED`, and the status comes
from the committed results files under ``notebooks/results/``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from .notebooks import registry, repo_root


@dataclass(frozen=True)
class Target:
    paper: str  # "A", "B" or "C"
    item: str  # "Table 1", "Figure 2", ...
    what: str
    notebook: str | None = None  # registry name of the notebook that reproduces it (None: not yet)
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


def targets() -> list[Target]:
    """Every item: the registered notebooks' targets and :data:`NOT_REPRODUCED`, sorted by paper and item."""
    found = [
        Target(spec.paper, t["item"], t["what"], notebook=spec.name, note=t.get("note", ""))
        for spec in registry()
        for t in spec.targets
    ]
    return sorted(found + list(NOT_REPRODUCED), key=lambda t: (t.paper, t.item))


def _status(target: Target, root: Path) -> tuple[str, str]:
    if target.notebook is None:
        return "not reproduced yet", ""
    spec = next((s for s in registry() if s.name == target.notebook), None)
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
    cpu = next((f for f in sorted(folder.glob(Path(spec.path).stem + "*/cpu*.jsonl"))), None)
    if cpu is not None:
        from .runner import load_results

        seeds = sorted({r["seed"] for r in load_results(cpu)})
        return f"CPU stand-in ({len(load_results(cpu))} runs, {len(seeds)} seed(s))", spec.path
    return "quick scale only", spec.path


def scorecard(root: str | Path | None = None) -> pd.DataFrame:
    """One row per paper item: what it is, the notebook that reproduces it and its status."""
    root = Path(root) if root is not None else repo_root()
    rows = []
    for t in targets():
        status, path = _status(t, root)
        rows.append(
            {
                "paper": t.paper,
                "item": t.item,
                "what": t.what,
                "status": status,
                "notebook": path or "-",
                "note": t.note,
            }
        )
    return pd.DataFrame(rows)
