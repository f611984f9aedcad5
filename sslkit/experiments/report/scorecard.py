"""The reproduction scorecard: every table, figure and theorem group of the papers, row group by row group,
with a status computed from the committed records whose configuration matches that row group.

The items are the ``targets`` of the notebooks' front matter (:func:`sslkit.experiments.notebooks.registry`)
and each paper's items that no notebook reproduces; each paper splits its items into the row groups that ran
differently (:class:`Group`, declared beside the paper's protocol) and says which experiment, which scales and
which configurations (``match``) each one reads. Statuses (:data:`STATUSES`) come from the records themselves:
their kind (the experiment's scale or reading says it, :mod:`sslkit.experiments.runs.experiment`), their seeds
and the dataset each one actually used:

* ``paper protocol (n seeds)`` -- matching records made with the paper's model, data, budget and schedule;
* ``CPU stand-in (n seeds)`` -- matching records of a run that changes one of them;
* ``diagnostic (n seeds)`` -- matching records of a diagnostic reading only (a probe of a choice the paper leaves
  open, e.g. the robust stand-in's schedule-length study): the group ran, but as a check, not as a reproduction;
* either one says when the records' data is not the group's (``on scikit-learn's 8x8 digits``) or is a copy of
  it that differs from the paper's (``CIFAR-10 from its JPEG q75 copy (lossy)``);
* ``quick scale only`` -- no matching record, but the experiment's quick grid runs the group's configurations
  on the group's data (the notebook runs it in CI);
* ``not run`` -- nothing ran on this group's data; ``not runnable offline`` -- the data or model cannot be
  fetched here;
* ``derived and checked`` / ``checked numerically`` / ``plotted only`` -- theorem groups (exact derivations,
  numeric checks of an inequality, a figure; one scale).

Per row group the scorecard also counts, where the paper prints numbers for it and our records are at the
paper's protocol: the paper's rows we ran, the cells with a paper number, the cells within 2 x the paper's
per-seed std, the cells whose means differ from the paper's by the one rule (:func:`.stats.compare_summaries`:
Welch's test at 5 %, the paper's side with :data:`PAPER_SEEDS` seeds), and the claims of the ledger about it
that hold / do not hold.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ..notebooks import registry, repo_root
from ..runs.experiment import DIAGNOSTIC, PAPER_PROTOCOL, STAND_IN
from .controls import CANNOT_DECIDE
from .ledger import VERDICTS, read_records, results_root
from .stats import compare_summaries

QUICK, NOT_RUN, OFFLINE = "quick scale only", "not run", "not runnable offline"
DERIVED, CHECKED, PLOTTED = "derived and checked", "checked numerically", "plotted only"
STATUSES = (PAPER_PROTOCOL, STAND_IN, DIAGNOSTIC, QUICK, NOT_RUN, OFFLINE, DERIVED, CHECKED, PLOTTED)
#: seeds behind a paper's mean ± std (paper A: "mean ± std over 30 seeds")
PAPER_SEEDS = {"A": 30}
#: how a page names the datasets a record used (:meth:`~sslkit.experiments.runs.experiment.Scale.data_of`)
DATA_NAMES = {
    "digits": "scikit-learn's 8×8 digits",
    "mnist": "MNIST",
    "mnist_4v9": "MNIST 4 vs 9",
    "cifar10": "CIFAR-10",
    "cifar10/jpeg": "CIFAR-10 from its JPEG q75 copy (lossy)",
    "cifar10/lossless": "the lossless CIFAR-10 subset (4 000 training images)",
    "cifar_cvd/jpeg": "CIFAR-10 cat vs dog from its JPEG q75 copy (lossy)",
    "synthetic": "synthetic features",
    "cifar100": "CIFAR-100",
    "svhn": "SVHN",
    "gaussian": "a Gaussian pair",
}


def data_name(data: str) -> str:
    return DATA_NAMES.get(data, data.replace("_", " "))


@dataclass(frozen=True)
class Target:
    paper: str  # "A", "B" or "C"
    item: str  # "Table 1", "Figure 2", ...
    what: str
    notebook: str | None = None  # registry name of the notebook that reproduces it (None: not yet)
    note: str = ""


@dataclass(frozen=True)
class Group:
    """One row group of an item: the records of experiment ``reads`` at ``scales`` it reads (filtered by
    ``match``: config key -> allowed values), the datasets it is about (``data``; default: ``match["dataset"]``),
    a fixed ``status`` where records cannot decide it (theorems, data that cannot be fetched), ``cells``:
    records -> ``[(row, column, our per-seed values or None, (paper mean, paper std))]``, one per cell the
    paper prints for the group, and ``also``: other experiments whose records (at the same scales, the same
    ``match``) its claims read beside those of ``reads`` -- their seeds count in the status."""

    group: str = ""
    reads: object = None
    scales: tuple = ("cpu", "paper")
    match: Mapping = field(default_factory=dict)
    data: tuple = ()
    status: str = ""
    cells: Callable | None = None
    note: str = ""
    also: tuple = ()

    @property
    def datasets(self) -> tuple:
        return tuple(self.data or self.match.get("dataset", ()))


def _matches(config: Mapping, match: Mapping) -> bool:
    return all(config.get(k) in v for k, v in match.items())


def matching(group: Group, root=None, experiment=None) -> dict:
    """``{scale: records}`` of the group's committed scales, only the records whose config matches (of
    ``experiment``, one of the group's ``also``, in place of ``reads`` where given)."""
    e = group.reads if experiment is None else experiment
    if e is None:
        return {}
    out = {}
    for scale, path in e.committed(results_root(root)).items():
        if scale in group.scales:
            recs = [r for r in read_records(path) if _matches(r["config"], group.match)]
            if recs:
                out[scale] = recs
    return out


def _seeds(records) -> str:
    per_config: dict = {}
    for r in records:
        per_config.setdefault(json.dumps(r["config"], sort_keys=True), set()).add(r["seed"])
    counts = sorted(len(v) for v in per_config.values())
    n = f"{counts[0]}" if counts[0] == counts[-1] else f"{counts[0]}-{counts[-1]}"
    return f"{n} seed{'s' if counts[-1] > 1 else ''}"


def data_note(used, datasets) -> str:
    """What a status adds about the data: the datasets used that are not the group's (``on ...``), and the
    copies of the group's datasets that differ from the paper's (``CIFAR-10 from its JPEG q75 copy``)."""
    used = sorted(set(used))
    other = [u for u in used if datasets and u.split("/")[0] not in datasets]
    copies = [u for u in used if "/" in u and u not in other]
    parts = []
    if other and len(other) < len(used):  # the group's data and another's: say both, never "not <the group's>"
        parts.append("also on " + ", ".join(data_name(u) for u in other))
    elif other:
        parts.append(
            "on " + ", ".join(data_name(u) for u in other) + (", not " + ", ".join(data_name(d) for d in datasets))
        )
    parts += [data_name(u) for u in copies]
    return "".join(f"; {p}" for p in parts)


def cell_counts(cells, paper_seeds: int) -> dict:
    """Counts over the paper's cells: ``rows`` (paper rows with a record / all), ``cells`` (with our value and a
    paper number), ``within_2sd`` (|ours - paper| <= 2 x the paper's std) and ``differ`` (the means differ by the
    one rule: :func:`.stats.compare_summaries` of ours and the paper's mean ± std over ``paper_seeds`` seeds)."""
    rows_all = {row for row, _, _, _ in cells}
    rows_run = {row for row, _, ours, _ in cells if ours}
    both = [
        (np.asarray(list(ours.values()) if isinstance(ours, Mapping) else ours, dtype=float), p)
        for _, _, ours, p in cells
        if ours and p is not None
    ]
    within = differ = 0
    for ours, (pm, ps) in both:
        if not math.isnan(ps):
            within += abs(float(ours.mean()) - pm) <= 2 * ps
            sd = float(ours.std(ddof=1)) if len(ours) > 1 else 0.0
            c = compare_summaries((float(ours.mean()), sd, len(ours)), (pm, ps, paper_seeds))
            differ += c.verdict != "not resolved"
    return {"rows": f"{len(rows_run)} of {len(rows_all)}", "cells": len(both), "within_2sd": within, "differ": differ}


def status(target: Target, group: Group, root=None) -> tuple[str, dict, dict]:
    """``(status, records by scale, cell counts)`` of one row group (see the module docstring)."""
    if group.status:
        return group.status, {}, {}
    found = matching(group, root)
    by_kind: dict = {}
    for e in (group.reads, *group.also):
        for scale, recs in (found if e is group.reads else matching(group, root, e)).items():
            for r in recs:
                by_kind.setdefault(e.scales[scale].kind_of(r["config"]), []).append((e, scale, r))
    counts = {}
    paper = [r for e, _, r in by_kind.get(PAPER_PROTOCOL, []) if e is group.reads]
    if group.cells and paper:
        counts = cell_counts(group.cells(paper), PAPER_SEEDS.get(target.paper, 30))
    for kind in (PAPER_PROTOCOL, STAND_IN, DIAGNOSTIC):  # the strongest evidence the group has
        if kind in by_kind:
            recs = [r for _, _, r in by_kind[kind]]
            used = [e.scales[s].data_of(r["config"]) for e, s, r in by_kind[kind]]
            rows = counts.get("rows", "")
            partial = kind == PAPER_PROTOCOL and rows and rows.split(" of ")[0] != rows.split(" of ")[1]
            text = f"{kind} ({_seeds(recs)}{data_note(used, group.datasets)})" + (f", {rows} rows" if partial else "")
            return text, found, counts
    if group.cells:
        counts = {"rows": cell_counts(group.cells([]), 30)["rows"]}
    return (QUICK if runs_at_quick_scale(group) else NOT_RUN), found, counts


def runs_at_quick_scale(group: Group) -> bool:
    """Does the quick grid of the group's experiment run a configuration of the group on the group's data?"""
    e = group.reads
    if e is None or "quick" not in e.scales:
        return False
    quick = e.scales["quick"]
    for config in quick.configs():
        if _matches(config, {k: v for k, v in group.match.items() if k != "dataset"}):
            used = quick.data_of(config).split("/")[0]
            if not group.datasets or used in group.datasets:
                return True
    return False


def gpu_note(group: Group) -> str:
    """What a row group that has not run needs, when every scale it reads is meant for a GPU: the command that runs
    it (``""`` otherwise)."""
    e = group.reads
    scales = [s for s in group.scales if e is not None and s in e.scales]
    if not scales or not all(e.scales[s].gpu for s in scales):
        return ""
    runs = " or ".join(f"sslkit run {e.name} --scale {s}" for s in scales)
    return f"a GPU job, not run yet: {runs} (or its notebook in Colab with a GPU)"


def scorecard_table(targets, groups_of, claims, root=None, gate=None) -> pd.DataFrame:
    """One row per row group of every target: paper, item, group, what, status, the paper's rows we ran, the cell
    counts, the claims that hold / do not hold / cannot decide (``claims``: a ledger), the notebook and a note (the
    group's; for an item of one group, the item's when the group has none). ``groups_of(target)`` gives a
    target's groups; ``gate(group)``, where given, what the group's stand-in records may decide (e.g. "cannot
    decide (...)": :func:`.controls.verdict_text`), added to a CPU stand-in's status."""
    results_root(root)  # a typo is an error, not a page of "not run"
    rows = []
    for t in targets:
        spec = next((s for s in registry() if s.name == t.notebook), None)
        groups = groups_of(t)
        for g in groups:
            st, _, counts = status(t, g, root)
            said = gate(g) if gate is not None and st.startswith(STAND_IN) else ""
            st = f"{st} — {said}" if said else st
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
                    "differ": counts.get("differ", ""),
                    "claims hold": int((mine["verdict"] == "holds").sum()),
                    "claims fail": int((mine["verdict"] == "does not hold").sum()),
                    "claims cannot decide": int((mine["verdict"] == CANNOT_DECIDE).sum()),
                    "notebook": spec.path if spec else "",
                    "note": "; ".join(
                        n
                        for n in (gpu_note(g) if st == NOT_RUN else "", g.note or (t.note if len(groups) == 1 else ""))
                        if n
                    ),
                }
            )
    return pd.DataFrame(rows)


def status_counts(card: pd.DataFrame) -> dict:
    """``{paper: {status without its seed count: number of row groups}}`` of a scorecard table."""
    base = card["status"].str.split(" \\(").str[0]
    return {p: base[card["paper"] == p].value_counts().to_dict() for p in sorted(card["paper"].unique())}


def count_table(card: pd.DataFrame) -> pd.DataFrame:
    """Row groups per paper (rows A, B, C, then "all three" for the chapter that chains them, paper ``"-"``) and
    status (columns in :data:`STATUSES` order, only those that occur, then ``total``); integers, no missing cell."""
    counts = pd.DataFrame(status_counts(card)).T.fillna(0).astype(int)
    counts = counts[[s for s in STATUSES if s in counts]].rename(index={"-": "all three"})
    counts = counts.reindex([p for p in ("A", "B", "C", "all three") if p in counts.index])
    counts["total"] = counts.sum(axis=1)
    return counts.rename_axis("paper")


#: the columns of :func:`to_html`, in order ("claims ✓ / ✗ / ?": hold / do not hold / cannot decide)
COLUMNS = ("paper", "item", "status", "rows run", "cells", "≤ 2σ", "≠ (p < 0.05)", "claims ✓ / ✗ / ?", "note")


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
            "paper": card["paper"].replace({"-": "all three"}),  # "-": the chapter that chains the papers
            "item": [link(r) for _, r in card.iterrows()],
            "status": card["status"].map(html.escape),
            "rows run": card["rows"],
            "cells": card["cells"],
            "≤ 2σ": card["within 2σ"],
            "≠ (p < 0.05)": card["differ"],
            "claims ✓ / ✗ / ?": [
                f"{a} / {b} / {c}" if a or b or c else ""
                for a, b, c in zip(card["claims hold"], card["claims fail"], card["claims cannot decide"])
            ],
            "note": card["note"].map(html.escape),
        }
    )[list(columns)]
    if drop_empty:
        shown = shown[[c for c in shown.columns if (shown[c].astype(str) != "").any()]]
    return shown.to_html(index=False, escape=False, border=0, classes="table scorecard")


def toc_order(root: str | Path | None = None) -> list[str]:
    """The files of ``_toc.yml`` (``notebooks/<stem>.md``, ...), in the book's order; ``[]`` without one."""
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
    claims (8 hold, 1 does not hold, ...)"``."""
    groups = status_counts(card).get(paper, {})
    shown = [s for s in STATUSES if s in groups] + [s for s in groups if s not in STATUSES]
    verdicts = claims.loc[claims["paper"] == paper, "verdict"].value_counts().to_dict()
    named = [v for v in VERDICTS if verdicts.get(v)] + [v for v in verdicts if v not in VERDICTS]

    plural = {"holds": "hold", "does not hold": "do not hold"}  # "2 hold", "1 holds"

    def listed(counts, keys):
        return ", ".join(f"{counts[k]} {k if counts[k] == 1 else plural.get(k, k)}" for k in keys)

    n_groups, n_claims = sum(groups.values()), sum(verdicts.values())
    text = f"{n_groups} row group{'s' if n_groups != 1 else ''} ({listed(groups, shown)})"
    return text + f" and {n_claims} claim{'s' if n_claims != 1 else ''} ({listed(verdicts, named)})"


#: why a claim cannot be tested here (:func:`answer_lines`)
CANNOT_DECIDE_WHY = "cannot decide (their stand-in does not pass its positive controls)"
GPU_DAYS, NOT_OFFLINE, NOT_YET = "need GPU-days (the paper's protocol)", "need data or a model that is not offline", ""


def _verdict_counts(rows: pd.DataFrame) -> str:
    verdicts = rows["verdict"].value_counts()
    if not len(rows):
        return "no claim is tested there"
    parts = [
        f"{int(verdicts.get(v, 0))} {word[int(verdicts.get(v, 0)) != 1]}"
        for v, word in (("holds", ("holds", "hold")), ("does not hold", ("does not hold", "do not hold")))
    ]
    n = int(verdicts.get("not resolved", 0))
    return ", ".join(parts) + f", {n} {'is' if n == 1 else 'are'} not resolved"


def answer_lines(claims: pd.DataFrame, paper: str, reasons: Mapping) -> dict:
    """The three-line answer for ``paper`` from a gated ledger (:func:`sslkit.experiments.catalog.ledger`):
    ``protocol`` -- its claims that hold / do not hold / are not resolved at the paper's protocol; ``stand_in`` --
    the same on CPU stand-ins that pass their positive controls; ``untestable`` -- the claims not testable here and
    why (a stand-in that cannot decide; ``reasons``: claim id -> why it was not run, :data:`GPU_DAYS`,
    :data:`NOT_OFFLINE` or "" for not run yet; evidence of a diagnostic only)."""
    mine = claims[claims["paper"] == paper]
    if mine.empty:
        raise ValueError(f"the ledger has no claim of paper {paper!r}")
    protocol = mine[mine["level"] == PAPER_PROTOCOL]
    stand_in = mine[(mine["level"] == STAND_IN) & (mine["verdict"] != CANNOT_DECIDE)]
    why: dict = {}
    for _, r in mine.iterrows():
        if r["verdict"] == CANNOT_DECIDE:
            why.setdefault(CANNOT_DECIDE_WHY, []).append(r["id"])
        elif r["verdict"] == "not run":
            why.setdefault(reasons.get(r["id"], NOT_YET) or "are not run yet", []).append(r["id"])
        elif r["level"] not in (PAPER_PROTOCOL, STAND_IN):
            why.setdefault(f"have only {r['level'] or 'no'} evidence", []).append(r["id"])
    n = sum(map(len, why.values()))
    listed = "; ".join(f"{len(ids)} {reason}" for reason, ids in sorted(why.items(), key=lambda kv: -len(kv[1])))

    def of(rows) -> str:
        return _verdict_counts(rows) + (f" (of {len(rows)} claim{'s' if len(rows) != 1 else ''})" if len(rows) else "")

    return {
        "protocol": of(protocol),
        "stand_in": of(stand_in),
        "untestable": f"{n} of {len(mine)} claims: {listed}" if n else f"none of its {len(mine)} claims",
    }
