"""What a verdict of the claims ledger rests on (:mod:`.ledger`): the one verdict rule applied to a claim
(:func:`judgement`: Holm's correction within the claim, "does not hold" only on an effect significantly against
it), the power of its deciding comparison beside the paper's own effect (:func:`power_columns`), the paper's
effects from its tables (:func:`paper_gaps`, :func:`median_effect`, :func:`with_effects`), the ledger as a
download (:func:`export_ledger`) and its tests on records it does not read (:func:`beside_ledger`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd

from . import stats as _stats
from .claim import FAILS, HOLDS, NOT_RUN, OPEN, Claim


def with_effects(claims, effects: Mapping) -> tuple:
    """``claims`` with the paper's effect of each id in ``effects`` (``{id: (effect, where it comes from)}``);
    an id no claim has is a ValueError."""
    unknown = set(effects) - {c.id for c in claims}
    if unknown:
        raise ValueError(f"no claim has the id(s) {sorted(unknown)}")
    return tuple(
        replace(c, effect=float(effects[c.id][0]), effect_source=effects[c.id][1]) if c.id in effects else c
        for c in claims
    )


def paper_gaps(rows, by, col: str, a: str, others, keep=None, value: str = "mean") -> list:
    """The paper's own differences ``value(a) − value(b)`` for ``b`` in ``others``, per cell of ``by`` (rows of a
    :mod:`~sslkit.experiments.paper_numbers` table; ``col`` names the compared method, ``keep`` filters rows)."""
    cells: dict = {}
    for r in rows:
        if keep is None or keep(r):
            cells.setdefault(tuple(r[k] for k in by), {})[str(r[col])] = r[value]
    return [v[a] - v[b] for v in cells.values() if a in v for b in others if b in v]


def median_effect(gaps, what: str) -> tuple[float, str]:
    """``(median of |gaps|, source text)``: the paper's typical effect over the comparisons of a claim."""
    if not gaps:
        raise ValueError(f"no paper number for {what}")
    return float(np.median(np.abs(gaps))), f"median of the paper's {len(gaps)} {what}"


@dataclass(frozen=True)
class Judgement:
    """One claim's verdict and what it rests on: ``tests`` ``((label, comparison, good, shift), ...)`` the
    comparisons its test judged, with their Holm-adjusted p (``comparison.p_adj``); ``deciding`` the one behind
    the verdict (None when the test judged none)."""

    verdict: str
    evidence: str
    tests: tuple
    deciding: tuple | None
    decides: str = ""


def _against(t) -> bool:
    """A judged test significant (after Holm) the other way than the claim's."""
    return t[1].verdict not in (OPEN, t[2])


def judgement(claim: Claim, records) -> Judgement:
    """The one verdict rule on ``claim``'s test over ``records``, in two passes: the first collects the comparisons
    the test judges (:func:`.stats.judge`), the second reruns it with each comparison's p Holm-adjusted over them
    (:func:`.stats.holm`), so every "significant" inside the test is the adjusted one. Then:

    * "does not hold" stands only where some judged comparison is significantly against the claim (after Holm;
      for a margin, the interval beyond it); otherwise it is "not resolved" -- a seed cut-off, a tie or a
      ranking by means never decides it;
    * "holds" stands only where some judged comparison is significant for the claim.

    The deciding comparison: the strongest against the claim (smallest adjusted p) for "does not hold", the
    weakest for it (largest adjusted p) for "holds", the least resolved otherwise."""
    with _stats.family() as first:
        claim.fn(records)
    with _stats.family(first.holm()) as second:
        verdict, evidence = claim.fn(records)
    tests = tuple((lab, c, good, shift) for c, good, shift, lab in second.judged.values())
    against = [t for t in tests if _against(t)]
    support = [t for t in tests if t[1].verdict == t[2]]
    k = f"{len(tests)} comparison{'s' if len(tests) != 1 else ''}"
    if verdict == FAILS and not against:
        verdict = OPEN
        evidence += f"; no effect against the claim is significant after Holm's correction over its {k}"
    elif verdict == HOLDS and not support:
        verdict = OPEN
        evidence += f"; no comparison for the claim is significant after Holm's correction over its {k}"
    if verdict == FAILS:
        deciding = min(against, key=lambda t: t[1].p_decides)
    elif verdict == HOLDS:
        deciding = max(support, key=lambda t: t[1].p_decides)
    else:
        rest = [t for t in tests if t[1].verdict == OPEN] or list(tests)
        deciding = (
            max(rest, key=lambda t: (t[1].p_decides, t[1].p) if np.isfinite(t[1].p) else (2.0, 2.0)) if rest else None
        )
    return Judgement(verdict, evidence, tests, deciding, second.decides)


#: the power states of the ledger's ``power`` column
UNDERPOWERED, NO_EFFECT, POWERED, NO_NUMBER = "underpowered", "no effect at this power", "powered", "no paper effect"


def power_columns(claim: Claim, j: Judgement) -> dict:
    """The ledger's columns of ``j``'s deciding comparison: its effect (the difference, less a margin's shift),
    95 % CI, raw and adjusted p, test, n, the minimum detectable effect at 80 % power (:func:`.stats.mde`), the
    paper's effect (the claim's, else a margin test's margin), the power state and the seeds per side an
    underpowered claim needs (:func:`.stats.seeds_for`)."""
    nan = float("nan")
    out = {
        "deciding": "",
        "effect": nan,
        "ci_low": nan,
        "ci_high": nan,
        "p": nan,
        "p_adj": nan,
        "stat": "",
        "n": "",
        "comparisons": len(j.tests),
        "mde": nan,
        "paper_effect": nan,
        "paper_effect_source": "",
        "power": "",
        "seeds_needed": nan,
    }
    if j.deciding is None:
        out["power"] = "" if j.verdict == NOT_RUN else NO_NUMBER
        return out
    lab, c, good, shift = j.deciding
    n = f"{c.n[0]} paired" if c.test == "paired" else "" if c.test == "z" else "/".join(str(x) for x in c.n if x)
    effect = claim.effect if claim.effect is not None else abs(shift) if shift else None
    source = claim.effect_source if claim.effect is not None else "the claim's margin" if shift else ""
    mde = _stats.mde(c)
    out |= {
        "deciding": lab,
        "effect": c.diff - shift,
        "ci_low": c.ci[0] - shift,
        "ci_high": c.ci[1] - shift,
        "p": c.p,
        "p_adj": c.p_decides,
        "stat": c.test,
        "n": n,
        "mde": mde,
        "paper_effect": nan if effect is None else float(effect),
        "paper_effect_source": source,
    }
    if effect is None:
        out["power"] = NO_NUMBER
    elif not np.isfinite(mde) or mde > abs(effect):
        out["power"] = UNDERPOWERED
        if j.verdict == OPEN:  # what it would take to resolve it
            out["seeds_needed"] = _stats.seeds_for(c, abs(effect))
    else:
        out["power"] = NO_EFFECT if j.verdict == OPEN else POWERED
    return out


#: the ledger's columns in its downloads, in order (a machine-readable reproduction report)
EXPORT_COLUMNS = (
    "id",
    "paper",
    "item",
    "where",
    "claim",
    "test",
    "deciding evidence",
    "level",
    "deciding",
    "stat",
    "n",
    "comparisons",
    "effect",
    "ci_low",
    "ci_high",
    "p",
    "p_adj",
    "mde",
    "paper_effect",
    "paper_effect_source",
    "power",
    "seeds_needed",
    "verdict",
    "evidence",
)


def export_ledger(table: pd.DataFrame, folder, stem: str = "claims_ledger") -> dict:
    """Write ``table`` (a :func:`ledger_table`) as ``<stem>.csv`` and ``<stem>.json`` (a list of records, one per
    claim; NaN and infinite numbers as null) into ``folder`` with the columns :data:`EXPORT_COLUMNS`; returns
    ``{"csv": path, "json": path}``."""
    import json

    missing = [c for c in EXPORT_COLUMNS if c not in table.columns]
    if missing:
        raise ValueError(f"the table lacks the ledger's columns {missing}")
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    out = table.loc[:, list(EXPORT_COLUMNS)]
    paths = {"csv": folder / f"{stem}.csv", "json": folder / f"{stem}.json"}
    out.to_csv(paths["csv"], index=False)

    def clean(v):
        if isinstance(v, (float, np.floating)):
            return float(v) if np.isfinite(v) else None
        return v.item() if isinstance(v, np.generic) else v

    rows = [{k: clean(v) for k, v in r.items()} for r in out.to_dict(orient="records")]
    paths["json"].write_text(json.dumps(rows, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return paths


def strength_text(row) -> str:
    """What a ledger row's verdict is worth, in one line: the deciding comparison's p (and Holm's, over how many),
    the minimum detectable effect beside the paper's effect, and the power state (with the seeds an
    underpowered claim needs)."""
    format_p = _stats.format_p
    parts = []
    if np.isfinite(row["p"]):
        p = f"p {format_p(row['p'])}" if format_p(row["p"]).startswith("<") else f"p = {format_p(row['p'])}"
        if row["comparisons"] > 1:
            p += f", Holm {format_p(row['p_adj'])} over {row['comparisons']}"
        parts.append(p)
    if np.isfinite(row["mde"]):
        mde = f"MDE {row['mde']:.3g}"
        if np.isfinite(row["paper_effect"]):
            mde += f" vs paper {abs(row['paper_effect']):.3g}"
        parts.append(mde)
    state = row["power"]
    if state == UNDERPOWERED and np.isfinite(row.get("seeds_needed", np.nan)):
        state += f" (≈ {int(row['seeds_needed'])} seeds)"
    elif state == UNDERPOWERED and row.get("seeds_needed") == np.inf:
        state += " (no feasible seed count)"
    if state:
        parts.append(state)
    return "; ".join(parts)


def beside_ledger(claims, ids, records) -> pd.DataFrame:
    """The ledger's own tests of the claims ``ids`` (``Claim.id`` values in ``claims``) run on ``records`` the ledger
    does not read, such as a stand-in's grid that its claims do not cite: one row per claim with its test, its
    verdict by the one rule (:func:`judgement`, Holm within the claim) and the deciding comparison; beside a "not
    resolved", the minimum detectable effect of that comparison at 80 % power (:func:`.stats.mde`). An unknown id is
    refused by name."""
    by_id = {c.id: c for c in claims}
    unknown = [i for i in ids if i not in by_id]
    if unknown:
        raise KeyError(f"no claim {unknown}; known: {sorted(by_id)}")
    rows = []
    for cid in ids:
        claim = by_id[cid]
        j = judgement(claim, records)
        deciding = "–"
        if j.deciding:
            lab, c = j.deciding[0], j.deciding[1]
            deciding = f"{lab}: {c.short()}"
            if j.verdict == OPEN:
                deciding += f"; detectable: {_stats.mde(c):.2f} points (80 % power)"
        rows.append({"claim": cid, "the test": claim.test, "verdict": j.verdict, "deciding comparison": deciding})
    return pd.DataFrame(rows, columns=["claim", "the test", "verdict", "deciding comparison"])
