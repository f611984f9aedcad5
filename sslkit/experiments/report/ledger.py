"""The ledger of the papers' claims: claim -> test on our records -> verdict (the ML Reproducibility Challenge form).

Each qualitative claim of papers A, B and C is a :class:`Claim`: the quoted sentence, where the paper makes it,
the experiments whose records its test reads (:class:`~sslkit.experiments.runs.experiment.Experiment`, the
first one deciding the evidence level) and one small function that takes those records and returns ``(verdict,
evidence)``. Each paper's claims sit beside its protocol (``sslkit.experiments.paper_<x>.claims``); the catalog
(:func:`sslkit.experiments.catalog.ledger`) runs all of them on the committed records when the book is built.

Verdicts (:data:`VERDICTS`):

* ``"holds"`` / ``"does not hold"`` -- the test decides it on the records;
* ``"not resolved"`` -- the records exist but the test cannot decide (no difference at the 5 % level);
* ``"not run"`` -- no record the test needs is committed.

Every comparison is made by the one rule of :mod:`.stats` (:data:`.stats.RULE`): Welch's t-test, paired by seed
where both sides ran the same seeds (a seed's runs share their split and initialisation), two-sided at 5 %. The
ledger evaluates each claim by :func:`.verdicts.judgement`, which applies the rule the same way to every claim:

* the comparisons a claim's test judges (:func:`.stats.judge`, called by :func:`pairs_verdict`, :func:`directed`,
  :func:`at_least`, :func:`.stats.not_below`, ...) form its family; their p-values are Holm-adjusted within the
  claim and the adjusted p decides (the test runs a second time reading them), the raw p shown beside it;
* "does not hold" only where a judged comparison is significantly *against* the claim after the adjustment (for a
  margin, the interval wholly beyond it): a seed cut-off, an exact tie or a ranking by means never decides it;
  "holds" only where one is significant *for* it -- otherwise "not resolved";
* one margin rule for "no worse than" / "close to" claims (:func:`.stats.not_below`, :func:`.stats.within`): the
  95 % interval within the margin holds, wholly beyond it does not hold; a significant difference inside the
  margin is what such a claim allows;
* the ledger's columns name the deciding comparison, its effect, 95 % CI, p and adjusted p, its minimum
  detectable effect at 80 % power (:func:`.stats.mde`) beside the paper's effect (:attr:`Claim.effect`), and the
  power state of a claim ("underpowered" with the seeds it needs, or "no effect at this power").

How a claim's wording becomes a test:

* "A outperforms B" is judged per row (:func:`pairs_verdict`): holds when A is significantly higher in every
  row, does not hold when A is significantly lower in some row, not resolved otherwise; the evidence names the
  deciding row with its difference, 95 % interval and p-value.
* Rankings ("the highest", "first or second") are read through the significant comparisons behind them, never
  off the means alone (the ranks by mean are in the evidence).
* A claim holds only on a significant result in its direction (:func:`directed`), or, for "comparable",
  "matches", "similar", when the 95 % interval lies within the margin (:func:`.stats.within`,
  :func:`.stats.not_below`): a difference that is merely not significant is "not resolved", never "holds".
  A claim against a number the paper prints (a speed-up, a loss) is the one-sample test on the per-seed values
  (:func:`at_least`, :func:`at_most`; speed-ups are per-seed ratios, never a ratio of means).
* A claim over several cells: :func:`all_of` ("in every row") and :func:`any_of` ("at some budget"); the readings
  of an ambiguous protocol (two budgets, two weightings of a baseline, :class:`~..runs.experiment.Reading`) each
  get their verdict and :func:`agree` gives one only when they agree. Records of different protocols or readings
  are never pooled in one cell (:func:`reading_name`); where several protocols ran, the most faithful decides and
  the others are shown as sensitivity (:func:`.stats.aside`, :func:`.stats.decided_by`).

Evidence levels. A claim is tested on the best evidence its first experiment has committed: the records of its
paper-protocol scale when they exist, else those of its CPU stand-in (:data:`LEVELS`); the ledger's ``level``
column says which (the kind of the scale's records, from the experiment's spec), and is empty for a claim that
is "not run" (nothing committed is about it, even where its experiment has other records).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from ..runs.experiment import PAPER_PROTOCOL, QUICK, STAND_IN
from ..runs.published import committed_results_dir
from ..runs.store import load_results
from .claim import CANNOT_DECIDE, FAILS, HOLDS, LEVELS, NOT_RUN, OPEN, VERDICTS, Claim  # noqa: F401  (re-exported)
from .stats import Comparison, compare, compare_to, judge

# --------------------------------------------------------------------------------------------------- helpers


def mean(values) -> float:
    """The mean of per-seed values (a sequence or a mapping ``seed -> value``)."""
    return float(np.mean(list(values.values()) if isinstance(values, Mapping) else values))


def put(cell: dict, seed, value, where="") -> None:
    """``cell[seed] = value``; ``ValueError`` when the cell already has that seed (two configurations pooled in one
    cell would silently drop a run)."""
    if seed in cell:
        raise ValueError(f"two records of seed {seed} fall in one cell{' ' + str(where) if where else ''}")
    cell[seed] = value


def per_seed(records, row_keys, col_key, metric, where=None) -> dict:
    """``{row: {col: {seed: metric}}}``; ``row`` is the tuple of ``row_keys`` of each record's config."""
    out: dict = {}
    for r in records:
        c = r["config"]
        if where is not None and not where(c):
            continue
        row = tuple(c[k] for k in row_keys)
        put(out.setdefault(row, {}).setdefault(c[col_key], {}), r["seed"], r["metrics"][metric], (row, c[col_key]))
    return out


def label(row) -> str:
    return " ".join(str(v) for v in row) if isinstance(row, tuple) else str(row)


def rank(row: dict, method: str) -> int:
    """1 + the number of methods whose mean is above ``method``'s in ``row`` ({method: values})."""
    mine = mean(row[method])
    return 1 + sum(mean(v) > mine for m, v in row.items() if m != method)


def significantly_above(row: dict, method: str) -> list:
    """``[(other method, comparison)]`` of the methods of ``row`` significantly above ``method``."""
    out = [
        (m, judge(compare(v, row[method]), "lower", label=f"{m} vs {method}")) for m, v in row.items() if m != method
    ]
    return [(m, c) for m, c in out if c.verdict == "higher"]


def deciding(comparisons, verdict: str):
    """The ``(label, comparison)`` behind a verdict over several comparisons: the significant "lower" one of
    smallest p for "does not hold", else the one of largest p (the weakest "higher", or the least resolved)."""
    if not comparisons:
        return None
    lower = [lc for lc in comparisons if lc[1].verdict == "lower"]
    if verdict == FAILS and lower:
        return min(lower, key=lambda lc: lc[1].p)
    rest = [lc for lc in comparisons if lc[1].verdict != "lower"] or comparisons
    return max(rest, key=lambda lc: lc[1].p if np.isfinite(lc[1].p) else 2.0)


def tally(comparisons) -> dict:
    counts = {"higher": 0, "not resolved": 0, "lower": 0}
    for _, c in comparisons:
        counts[c.verdict] += 1
    return counts


def counts_text(counts: dict, what: str) -> str:
    if not any(counts.values()):
        return f"{what}: no matching record"
    return (
        f"{what}: significantly higher in {counts['higher']}, not resolved in {counts['not resolved']}, "
        f"significantly lower in {counts['lower']}"
    )


def with_deciding(text: str, comparisons, verdict: str, name: str = "deciding") -> str:
    """``text`` followed by the deciding comparison (:func:`deciding`): its row, difference, 95 % CI and p."""
    d = deciding(comparisons, verdict)
    return text if d is None else f"{text}; {name}: {d[0]} {d[1].short()}"


def pairs_verdict(pairs, what: str) -> tuple[str, str]:
    """``pairs``: ``[(row label, a values, b values), ...]`` for "a is higher than b in every row" (values per
    seed: mappings pair by seed). Holds when every row is significantly higher, does not hold when some row is
    significantly lower, not resolved otherwise; "not run" without a pair. The evidence counts the rows and
    gives the deciding one (:func:`deciding`)."""
    comparisons = [(lab, judge(compare(a, b), label=lab)) for lab, a, b in pairs]
    if not comparisons:
        return NOT_RUN, f"{what}: no matching record"
    counts = tally(comparisons)
    verdict = FAILS if counts["lower"] else HOLDS if counts["higher"] == len(comparisons) else OPEN
    return verdict, with_deciding(counts_text(counts, what), comparisons, verdict)


def verdict_of(c: Comparison, label: str = "") -> str:
    """ "a is higher than b" for one comparison: holds / does not hold / not resolved."""
    judge(c, label=label)
    return {"higher": HOLDS, "lower": FAILS}.get(c.verdict, OPEN)


def directed(c: Comparison, good: str = "higher", label: str = "") -> str:
    """The claim's verdict from one comparison whose ``good`` direction ("higher" / "lower") supports it: holds
    on a significant result that way, does not hold on one the other way, else not resolved."""
    judge(c, good, label=label)
    if c.verdict == "not resolved":
        return OPEN
    return HOLDS if c.verdict == good else FAILS


def at_least(values, floor: float, label: str = "") -> tuple[str, Comparison]:
    """ "At least ``floor``" for per-seed ``values``: the one-sample test (:func:`.stats.compare_to`) -- holds when
    the mean is significantly above ``floor``, does not hold when significantly below."""
    c = compare_to(values, float(floor))
    return directed(c, "higher", label), c


def at_most(values, ceiling: float, label: str = "") -> tuple[str, Comparison]:
    """ "At most ``ceiling``": the mirror of :func:`at_least`."""
    c = compare_to(values, float(ceiling))
    return directed(c, "lower", label), c


def all_of(verdicts) -> str:
    """ "In every cell": does not hold when some cell does not hold, holds when every cell holds, else not
    resolved; "not run" cells are left out ("not run" when none is left)."""
    vs = [v for v in verdicts if v != NOT_RUN]
    if not vs:
        return NOT_RUN
    return FAILS if FAILS in vs else HOLDS if set(vs) == {HOLDS} else OPEN


def any_of(verdicts) -> str:
    """ "In some cell" (the dual of :func:`all_of`): holds when some cell holds, does not hold when every cell
    does not hold, else not resolved."""
    vs = [v for v in verdicts if v != NOT_RUN]
    if not vs:
        return NOT_RUN
    return HOLDS if HOLDS in vs else FAILS if set(vs) == {FAILS} else OPEN


def agree(results: dict) -> tuple[str, str]:
    """``{reading: (verdict, text)}`` of the readings of an ambiguous protocol -> one verdict when the readings
    that ran agree, else not resolved; the evidence gives each reading's verdict and text."""
    ran = {k: v for k, v in results.items() if v[0] != NOT_RUN}
    if not ran:
        return NOT_RUN, " | ".join(t for _, t in results.values()) or "no record"
    verdicts = {v for v, _ in ran.values()}
    verdict = verdicts.pop() if len(verdicts) == 1 else OPEN
    return verdict, " | ".join(f"{k}: {v} ({t})" for k, (v, t) in ran.items())


def tally_verdicts(verdicts) -> str:
    """E.g. ``"2 holds, 1 not resolved, 0 does not hold"``."""
    verdicts = list(verdicts)
    return ", ".join(f"{verdicts.count(v)} {v}" for v in (HOLDS, OPEN, FAILS))


def reading_name(experiment, record) -> str:
    """The name of the :class:`~..runs.experiment.Reading` of ``experiment``'s grid that ``record`` belongs to
    ("" for the main grid), from the record's scale (every scale when the record names none): two readings'
    records are never one cell of a claim."""
    scales = [record["scale"]] if record.get("scale") in experiment.scales else list(experiment.scales)
    for s in scales:
        r = experiment.scales[s].reading_of(record["config"])
        if r is not None:
            return r.name
    return ""


# --------------------------------------------------------------------------------------------------- evaluating


@functools.cache
def _read(path: str, mtime_ns: int, size: int) -> tuple:
    return tuple(load_results(path))


def read_records(path) -> list:
    """The records of a results file (``[]`` when it is missing), read once per version of the file."""
    path = Path(path)
    if not path.is_file():
        return []
    st = path.stat()
    return list(_read(str(path), st.st_mtime_ns, st.st_size))


def results_root(root=None) -> Path:
    """``root`` as a results folder (``<root>/<experiment>/<scale>.jsonl``; default: the repository's
    ``notebooks/results``); ``FileNotFoundError`` when it is not a folder (a typo must not read as "not run")."""
    path = committed_results_dir() if root is None else Path(root)
    if not path.is_dir():
        raise FileNotFoundError(f"results folder {str(path)!r} does not exist (or is not a folder)")
    return path


def claim_records(claim: Claim, root=None) -> tuple[list, list, str]:
    """``(records, sources, level)`` a claim is tested on: the committed scale of best evidence level
    (:data:`LEVELS`) of its first experiment, and the same scale of the others; ``([], [], "")`` without one."""
    root = results_root(root)
    first = claim.reads[0]
    found = first.committed(root)
    if not found:
        return [], [], ""
    scale = min(found, key=lambda s: LEVELS.index(first.scales[s].kind))
    records, sources = [], []
    for e in claim.reads:
        if scale in e.committed(root):
            records += read_records(e.committed(root)[scale])
            sources.append(e.source(scale))
    return records, sources, first.scales[scale].kind


def evaluate(claim: Claim, root=None) -> tuple[str, str]:
    """``(verdict, evidence)`` of one claim on the committed records of its experiments (``root``: a results
    folder in place of ``notebooks/results``); "not run" when none is committed (:func:`.verdicts.judgement`)."""
    from .verdicts import judgement

    records, _, _ = claim_records(claim, root)
    if not records:
        return NOT_RUN, "no committed record of " + ", ".join(e.name for e in claim.reads)
    j = judgement(claim, records)
    return j.verdict, j.evidence


def ledger_table(claims, root=None, paper=None, item=None) -> pd.DataFrame:
    """One row per claim of ``claims`` (only those of ``paper`` and ``item`` where given, e.g. ``"A"``,
    ``"Table 1"``): id, paper, item, group, where, claim (quoted), test, records (the files read and their
    kind), level (the evidence level, "" when not run), verdict and evidence; then the deciding evidence (the
    level, files and why they decide), the deciding comparison (:func:`.verdicts.judgement`,
    :func:`.verdicts.power_columns`: ``deciding``, ``effect``, ``ci_low``, ``ci_high``, ``p``, ``p_adj``,
    ``stat``, ``n``, ``comparisons``, ``mde``, ``paper_effect``, ``power``, ``seeds_needed``) and ``state``: the
    verdict, a column a later step may refine (e.g. a stand-in that cannot decide) without touching
    ``verdict``. A ``paper`` or ``item`` no claim has is a ValueError (a typo would otherwise give an empty
    ledger), and so is a ``root`` that is not a folder."""
    from .verdicts import Judgement, judgement, power_columns

    root = results_root(root)
    if paper is not None and paper not in {c.paper for c in claims}:
        raise ValueError(f"paper must be one of {sorted({c.paper for c in claims})}, got {paper!r}")
    items = {c.item for c in claims if paper is None or c.paper == paper}
    if item is not None and item not in items:
        raise ValueError(f"no claim of paper {paper or 'A/B/C'} is about item {item!r}; items: {sorted(items)}")
    rows = []
    for c in claims:
        if (paper is not None and c.paper != paper) or (item is not None and c.item != item):
            continue
        records, sources, level = claim_records(c, root)
        try:
            if records:
                j = judgement(c, records)
            else:
                j = Judgement(NOT_RUN, "no committed record of " + ", ".join(e.name for e in c.reads), (), None)
        except (TypeError, ValueError) as exc:  # e.g. a null (NaN) metric in a record: name the files read
            files = ", ".join(f"{root / s}.jsonl" for s in sources) or str(root)
            raise ValueError(f"claim {c.id}: cannot test it on {files}: {type(exc).__name__}: {exc}") from exc
        if j.verdict == NOT_RUN:  # nothing committed is about this claim, whatever else its experiment holds
            level = ""
        default = {PAPER_PROTOCOL: "the paper's protocol ran"}.get(level, "no paper-protocol record is committed")
        why = "; ".join(w for w in (j.decides, c.decides) if w) or default
        deciding_evidence = f"{level}: {', '.join(sources)}" + (f" ({why})" if why else "") if level else ""
        rows.append(
            {
                "id": c.id,
                "paper": c.paper,
                "item": c.item,
                "group": c.group,
                "where": c.where,
                "claim": c.quote,
                "test": c.test,
                "records": ", ".join(f"{s} ({level})" for s in sources) or "none committed",
                "level": level,
                "verdict": j.verdict,
                "evidence": j.evidence,
                "deciding evidence": deciding_evidence,
                **power_columns(c, j),
                "state": j.verdict,
            }
        )
    return pd.DataFrame(rows)


def level_counts(table: pd.DataFrame) -> pd.DataFrame:
    """Verdict counts by evidence level of a :func:`ledger_table`: one row per level (paper protocol, CPU stand-in
    and quick always; diagnostic, and "—" for the claims with nothing committed, when they have claims), one
    column per verdict, and a total."""
    levels = table["level"].replace("", "—")
    counts = pd.crosstab(levels, table["verdict"]).reindex(columns=list(VERDICTS), fill_value=0)
    order = [lv for lv in (*LEVELS, "—") if lv in counts.index or lv in (PAPER_PROTOCOL, STAND_IN, QUICK)]
    counts = counts.reindex(order, fill_value=0)
    counts["total"] = counts.sum(axis=1)
    counts.index.name = "evidence level"
    return counts


def named_readings(records, experiment, keys, col: str = "method") -> list:
    """``records`` with each record of a named reading of ``experiment``'s grid (:func:`reading_name`) renamed:
    its ``config[col]`` becomes ``"<value> (<reading>)"`` and its config keeps only ``keys`` (the main grid's), so
    that row builders written for the main grid take it as another method and never pool it with the main one."""
    out = []
    for r in records:
        name = reading_name(experiment, r)
        if name:
            config = {k: v for k, v in r["config"].items() if k in keys}
            r = {**r, "config": {**config, col: f"{config[col]} ({name})"}}
        out.append(r)
    return out


def reading_views(rows, col: str = "method") -> dict:
    """``{reading: rows}`` of rows built from :func:`named_readings` records: ``""`` holds the main grid's rows;
    each reading's view holds its own rows under their main names (``"craig (r)"`` -> ``"craig"``) in place of the
    main grid's rows of those names, and the main grid's other rows (the methods it shares)."""
    split = [(r, *r[col].partition(" (")) for r in rows]
    readings = sorted({w.rstrip(")") for _, _, _, w in split if w})
    views = {"": [r for r, _, sep, _ in split if not sep]}
    for w in readings:
        own = [{**r, col: base} for r, base, sep, rest in split if sep and rest.rstrip(")") == w]
        replaced = {r[col] for r in own}
        views[w] = [r for r, _, sep, _ in split if not sep and r[col] not in replaced] + own
    return views


def paper_level_counts(table: pd.DataFrame) -> pd.DataFrame:
    """Verdict counts of a :func:`ledger_table` per paper and evidence level ("—": not run, nothing committed is
    about the claim): one row per (paper, level) that has claims, one column per verdict, and a total."""
    levels = table["level"].replace("", "—")
    counts = pd.crosstab([table["paper"], levels], table["verdict"]).reindex(columns=list(VERDICTS), fill_value=0)
    order = {lv: i for i, lv in enumerate((*LEVELS, "—"))}
    counts = counts.sort_index(key=lambda ix: ix.map(lambda v: order.get(v, -1) if v in order else v))
    counts["total"] = counts.sum(axis=1)
    counts.index.names = ["paper", "evidence level"]
    return counts


def verdicts_sentence(rows: pd.DataFrame, what: str) -> str:
    """One sentence of the verdicts of ``rows`` (ledger rows), e.g. "Of the paper's 4 claims about Table 1, 2 do
    not hold on our committed records (A-T1-rank, A-T1-rr), 1 is not resolved (A-T1-rank) and 1 is not run
    (A-T1-cifar)."."""
    verbs = {HOLDS: ("holds", "hold"), FAILS: ("does not hold", "do not hold")}
    verbs |= {v: (f"is {v}", f"are {v}") for v in (OPEN, NOT_RUN)}
    verbs[CANNOT_DECIDE] = ("is on a stand-in that cannot decide", "are on a stand-in that cannot decide")
    parts = []
    for v in (FAILS, OPEN, CANNOT_DECIDE, NOT_RUN, HOLDS):
        ids = list(rows.loc[rows["verdict"] == v, "id"])
        if ids:
            parts.append(f"{len(ids)} {verbs[v][len(ids) > 1]} ({', '.join(ids)})")
    if not parts:
        return f"The ledger has no claim about {what}."
    listed = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
    return f"Of the paper's {len(rows)} claims about {what}, on our committed records {listed}."


def _evidence_html(text: str, shown: int) -> str:
    """The evidence of a claim, escaped; past ``shown`` characters the rest folds into a ``<details>`` the reader
    opens (cut after the last "; " before the limit, else at a space)."""
    import html

    if len(text) <= shown:
        return html.escape(text)
    cut = text.rfind("; ", 0, shown)
    cut = cut + 1 if cut > shown // 3 else max(text.rfind(" ", 0, shown), shown // 3)
    head, rest = text[:cut], text[cut:].lstrip()
    return f"<details><summary>{html.escape(head)} …</summary>{html.escape(rest)}</details>"


def ledger_html(table: pd.DataFrame, paper: str | None = None, shown: int = 300) -> str:
    """A :func:`ledger_table` as the claims page shows it, narrow enough for the book's column at 1280 px (issue
    21): the rows of ``paper`` (all where None), no index, four columns, the verdict third: where (and the
    claim's id), the quoted claim with its test below it, the verdict with its evidence level, and the evidence
    (past ``shown`` characters folded into a ``<details>``). Each row carries its claim's id as its anchor."""
    import html

    from .verdicts import strength_text

    rows = table if paper is None else table[table["paper"] == paper]
    if paper is not None and rows.empty:
        raise ValueError(f"the ledger has no claim of paper {paper!r}; papers: {sorted(table['paper'].unique())}")
    cols = (("where", 15), ("claim → test", 38), ("verdict", 15), ("evidence", 32))
    out = ['<table class="table ledger">', "<colgroup>"]
    out += [f'<col style="width: {w}%">' for _, w in cols]
    out += ["</colgroup>", "<thead><tr>" + "".join(f"<th>{name}</th>" for name, _ in cols) + "</tr></thead>", "<tbody>"]
    for _, r in rows.iterrows():
        verdict = f"<strong>{html.escape(r['verdict'])}</strong>"
        if r["level"]:
            verdict += f"<br><small>{html.escape(r['level'])}</small>"
        if "power" in r and r["verdict"] != NOT_RUN:
            verdict += f"<br><small>{html.escape(strength_text(r))}</small>"
        cells = (
            f"{html.escape(r['where'])}<br><small><code>{html.escape(r['id'])}</code></small>",
            f"“{html.escape(r['claim'])}”<br><small>test: {html.escape(r['test'])}</small>",
            verdict,
            _evidence_html(r["evidence"], shown),
        )
        out.append(f'<tr id="{html.escape(r["id"])}">' + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    return "\n".join([*out, "</tbody>", "</table>"])
