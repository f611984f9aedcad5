"""Positive controls: a CPU stand-in earns the right to decide a paper's claim.

A stand-in (a run that changes the paper's model, data, budget or schedule to fit a CPU) may judge a paper only
if it first shows what the paper's own tables show robustly, whatever happens to the paper's new claim: the SSL
method above the supervised baseline, Full above a 10 % random coreset, VAT below Supervised when 75 % of the
unlabeled set is out of distribution. Each such ordering is a :class:`Control`: two arms of the stand-in's grid
(``higher`` and ``lower``: the configuration values that pick them), the paper's printed numbers for the two arms
(:func:`printed`, read from :mod:`sslkit.experiments.paper_numbers`, never typed) and where the paper prints them.

**The rule.** A control is evaluated on the committed records by the book's one rule (:func:`.stats.compare`:
the paired t-test over seeds where both arms ran the same seeds, Welch's otherwise, two-sided at 5 %):

* ``"shown"`` -- the ``higher`` arm is significantly above the ``lower`` one, as in the paper;
* ``"reversed"`` -- significantly below; ``"not shown"`` -- no significant difference;
* ``"not run"`` -- an arm has no committed record (e.g. a stand-in without a supervised arm).

A stand-in **passes** when every one of its controls is shown; otherwise it **cannot decide**
(:data:`CANNOT_DECIDE`): the claims it decides keep their verdict in the ledger's ``stand_in_verdict`` column, but
their ``verdict`` reads "cannot decide", so that a stand-in too weak to show the paper's uncontested effects never
counts as evidence that a claim "does not hold" (:func:`gate`, applied by
:func:`sslkit.experiments.catalog.ledger`). Claims decided at the paper's protocol, and the book's own chapter
that chains the papers (paper ``"-"``), are never gated.

**Declaring controls.** A stand-in is an experiment's scale whose kind is the stand-in kind; where one scale holds
several stand-ins (the robust grid's protocols ``cpu``, ``cpu_long``, ``cpu_imbalance``), each control names its
``stand_in`` label and a ``scope`` (the configuration values of that stand-in's records). Controls are 2-5
orderings per stand-in from the paper's tables that any faithful setup must show -- the baselines' and the SSL
learner's effects, never the paper's new claim -- and are declared in one of two places:

* in the scale's spec, ``Scale(..., controls=(Control(...), ...))`` (:class:`~..runs.experiment.Scale`) -- the
  place for a new stand-in;
* or in its paper's ``paper_<x>/controls.py``, ``CONTROLS = {key(experiment, scale): (Control(...), ...)}`` --
  where the stand-ins declared before the spec field have theirs (the catalog collects them), and where a new
  stand-in inside an existing scale adds its own (e.g. another protocol of the robust grid:
  ``robust_ood("<protocol>")``); ``paper_<x>/experiments.py`` cannot import that module (it imports them).

A scale takes one of the two, never both (``tests/test_controls.py``). A control may read another experiment's
records (``reads = (experiment, scale)``, :func:`shared`): the stand-ins that share a model and schedule share
their controls. When the ledger names which stand-in of a scale decided a claim (a deciding-evidence column,
:data:`DECIDING_COLUMNS`, whose text holds the stand-in's label as a word), only that stand-in gates it; otherwise
every stand-in of the scale does.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

import pandas as pd

from .. import paper_numbers
from ..runs.experiment import STAND_IN
from .ledger import CANNOT_DECIDE, LEVELS, read_records
from .stats import compare

SHOWN, REVERSED, NOT_SHOWN, NOT_RUN = "shown", "reversed", "not shown", "not run"
OUTCOMES = (SHOWN, REVERSED, NOT_SHOWN, NOT_RUN)
#: a stand-in's state: every control shown, some control not shown (or no control declared)
PASSES, NO_CONTROLS = "passes", "no controls"


def printed(table: str, column: str = "mean", **match) -> float:
    """The number the paper prints in ``column`` of the one row of ``paper_numbers/<table>.csv`` that has every
    ``match`` value; ``ValueError`` unless exactly one row matches."""
    rows = [r for r in paper_numbers.load(table) if all(r.get(k) == v for k, v in match.items())]
    if len(rows) != 1:
        raise ValueError(f"{len(rows)} rows of {table} match {match}; a control needs exactly one")
    return float(rows[0][column])


@dataclass(frozen=True)
class Control:
    """One positive control: among the records whose config has every ``scope`` value (``None``: the key is
    absent; the scope is what tells a labelled stand-in's records from the others of its scale, so it holds only
    the keys that do), ``metric`` of the arm ``higher`` is above that of the arm ``lower`` (each: configuration
    values, ``None`` again for an absent key), as
    the paper shows at ``where`` with ``paper`` = (its number for ``higher``, its number for ``lower``). ``text``
    says the ordering in words; ``stand_in``: the label of the stand-in within its scale ("" for the whole scale);
    ``reads``: ``(experiment, scale)`` whose records it reads when not its own stand-in's (an experiment object);
    ``seeds``: the only seeds whose records it reads (empty: every seed), e.g. the fresh seeds of a confirmatory
    run declared after a pilot."""

    id: str
    text: str
    where: str
    higher: Mapping
    lower: Mapping
    paper: tuple
    scope: Mapping = field(default_factory=dict)
    stand_in: str = ""
    metric: str = "test_acc"
    reads: tuple = ()
    seeds: tuple = ()

    def __post_init__(self):
        if len(self.paper) != 2 or not self.paper[0] > self.paper[1]:
            raise ValueError(f"control {self.id}: paper must be (higher arm's number, lower arm's), got {self.paper}")
        if not self.higher or not self.lower or dict(self.higher) == dict(self.lower):
            raise ValueError(f"control {self.id}: higher and lower must be two different, non-empty arms")


def arm(records, scope: Mapping, values: Mapping, metric: str, seeds=()) -> dict:
    """``{seed: metric}`` of the records whose config has every ``scope`` and ``values`` value (a ``None`` value:
    the key is absent), of ``seeds`` only when it is not empty; ``ValueError`` when two records of one seed match
    (two configurations in one arm). A run whose ``metric`` is None (it diverged: a recorded failure) is no result
    and is left out; the table's ``seeds`` column then shows the seeds each arm has left."""
    want = {**scope, **values}
    out: dict = {}
    for r in records:
        if seeds and r["seed"] not in seeds:
            continue
        if all(r["config"].get(k) == v for k, v in want.items()):
            if r["seed"] in out:
                raise ValueError(f"two records of seed {r['seed']} match the arm {want}: narrow the control's scope")
            if r["metrics"].get(metric) is not None:
                out[r["seed"]] = float(r["metrics"][metric])
    return out


def evaluate(control: Control, records) -> dict:
    """One row of the controls table: the control, the paper's two numbers and ours (the arms' means), the
    difference with its 95 % CI and p (the one rule), and the ``outcome`` (:data:`OUTCOMES`)."""
    hi = arm(records, control.scope, control.higher, control.metric, control.seeds)
    lo = arm(records, control.scope, control.lower, control.metric, control.seeds)
    row = {
        "stand-in": control.stand_in,
        "control": control.id,
        "ordering": control.text,
        "paper's table": control.where,
        "paper": f"{control.paper[0]:g} vs {control.paper[1]:g}",
        "ours": "",
        "difference": "",
        "p": float("nan"),
        "seeds": f"{len(hi)} / {len(lo)}",
        "outcome": NOT_RUN,
    }
    if not hi or not lo:
        return row
    c = compare(hi, lo)
    row.update(
        ours=f"{sum(hi.values()) / len(hi):.2f} vs {sum(lo.values()) / len(lo):.2f}",
        difference=c.short(),
        p=c.p,
        outcome={"higher": SHOWN, "lower": REVERSED}.get(c.verdict, NOT_SHOWN),
    )
    return row


def state(outcomes) -> str:
    """A stand-in's state from its controls' outcomes: :data:`PASSES` when every one is shown, :data:`NO_CONTROLS`
    when there is none, else :data:`CANNOT_DECIDE`."""
    outcomes = list(outcomes)
    if not outcomes:
        return NO_CONTROLS
    return PASSES if all(o == SHOWN for o in outcomes) else CANNOT_DECIDE


# ------------------------------------------------------------------------------------------------ evaluating


def shared(controls: tuple, experiment, scale: str) -> tuple:
    """``controls`` reading ``experiment``'s records at ``scale`` (stand-ins that share another's model, data and
    schedule share its controls)."""
    return tuple(replace(c, reads=(experiment, scale)) for c in controls)


def key(experiment, scale: str) -> str:
    """``"<experiment>/<scale>"``: how a paper's ``CONTROLS`` names a stand-in's scale."""
    return f"{experiment.name}/{scale}"


def stand_in_scales(experiments) -> list:
    """``[(experiment, scale)]`` of every scale whose kind is the stand-in kind, of papers A, B and C (the chapter
    that chains them, paper ``"-"``, is the book's own protocol: no paper table gives it controls)."""
    return [(e, s) for e in experiments if e.paper in "ABC" for s, sc in e.scales.items() if sc.kind == STAND_IN]


def controls_of(experiment, scale: str, registry: Mapping) -> tuple:
    """The controls of ``experiment`` at ``scale``: its spec's (``Scale.controls``), else those ``registry`` (the
    papers' ``CONTROLS``, collected by the catalog) has under :func:`key`."""
    return tuple(experiment.scales[scale].controls) or tuple(registry.get(key(experiment, scale), ()))


def _records(experiment, scale: str, root) -> list:
    path = experiment.committed(root).get(scale)
    return read_records(path) if path is not None else []


def controls_table(experiments, registry: Mapping, root=None) -> pd.DataFrame:
    """One row per control of every stand-in (:func:`stand_in_scales`, :func:`controls_of`) evaluated on the
    committed records under ``root`` (:func:`evaluate`), with ``experiment``, ``scale`` and ``records`` (the
    results file it read)."""
    cache: dict = {}
    rows = []
    for e, scale in stand_in_scales(experiments):
        for c in controls_of(e, scale, registry):
            src, src_scale = c.reads or (e, scale)
            if (src.name, src_scale) not in cache:
                cache[(src.name, src_scale)] = _records(src, src_scale, root)
            row = evaluate(c, cache[(src.name, src_scale)])
            rows.append({"experiment": e.name, "scale": scale, **row, "records": src.source(src_scale)})
    return pd.DataFrame(rows, columns=["experiment", "scale", *_COLUMNS, "records"])


_COLUMNS = ("stand-in", "control", "ordering", "paper's table", "paper", "ours", "difference", "p", "seeds", "outcome")


def stand_ins(table: pd.DataFrame) -> pd.DataFrame:
    """One row per stand-in of a :func:`controls_table`: ``experiment``, ``scale``, ``stand-in`` (its label, ""
    for the whole scale), ``controls`` (how many), ``shown``, and ``state`` (:func:`state`)."""
    rows = []
    for (e, s, label), g in table.groupby(["experiment", "scale", "stand-in"], sort=False):
        counts = g["outcome"].value_counts()
        rows.append(
            {
                "experiment": e,
                "scale": s,
                "stand-in": label,
                "controls": len(g),
                "shown": int(counts.get(SHOWN, 0)),
                "summary": ", ".join(f"{int(counts[o])} {o}" for o in OUTCOMES if counts.get(o)),
                "state": state(g["outcome"]),
            }
        )
    return pd.DataFrame(rows, columns=["experiment", "scale", "stand-in", "controls", "shown", "summary", "state"])


def name(row) -> str:
    """A stand-in's name on the pages: ``"<experiment>/<scale>"``, then its label in parentheses for a labelled one."""
    return f"{row['experiment']}/{row['scale']}" + (f" ({row['stand-in']})" if row["stand-in"] else "")


def _deciding_scale(claim, root) -> str:
    """The scale whose records decide ``claim`` (the best evidence level its first experiment has committed, as
    :func:`.ledger.claim_records` picks it); "" when none."""
    e = claim.reads[0]
    found = e.committed(root)
    return min(found, key=lambda s: LEVELS.index(e.scales[s].kind)) if found else ""


#: the ledger columns that may name which stand-in of a scale decided a claim (its label as a word)
DECIDING_COLUMNS = ("deciding", "deciding evidence", "deciding_evidence")


def deciding_stand_ins(row, claim, states: pd.DataFrame, root=None) -> pd.DataFrame:
    """The stand-ins (rows of :func:`stand_ins`) that decide the ledger row ``row`` of ``claim``: none unless the
    row's evidence level is the stand-in kind; those of the scale whose records decide it, narrowed to the labels
    a deciding-evidence column (:data:`DECIDING_COLUMNS`) names where the ledger has one -- the labels of every
    experiment the claim read at that scale (:func:`.ledger.claim_records`: a claim may read a second experiment's
    stand-in beside its first's) -- else every stand-in of its first experiment at that scale."""
    if row.get("level") != STAND_IN:
        return states.iloc[0:0]
    scale = _deciding_scale(claim, root)
    read = [e.name for e in claim.reads if scale in e.committed(root)]
    at_scale = states[states["experiment"].isin(read) & (states["scale"] == scale)]
    named = " ".join(str(row.get(c, "") or "") for c in DECIDING_COLUMNS)
    if named.strip():
        words = " " + "".join(ch if ch not in "(),;:|" else " " for ch in named) + " "
        said = at_scale[[bool(lab) and f" {lab} " in words for lab in at_scale["stand-in"]]]
        if len(said):
            return said
    return at_scale[at_scale["experiment"] == claim.reads[0].name]


def gate(ledger: pd.DataFrame, claims, states: pd.DataFrame, root=None) -> pd.DataFrame:
    """The ledger with the stand-ins' gate applied: a claim decided by a stand-in that does not pass its controls
    (:func:`deciding_stand_ins`, :func:`state`) reads :data:`CANNOT_DECIDE`; ``stand_in_verdict`` keeps the
    verdict its test gave (for every claim decided on a stand-in, gated or not), and ``controls`` names the
    deciding stand-ins with their controls shown ("<experiment>/<scale> (<label>): 1 of 4 shown")."""
    by_id = {c.id: c for c in claims}
    out = ledger.copy()
    verdicts, kept, said = [], [], []
    for _, row in ledger.iterrows():
        deciding = deciding_stand_ins(row, by_id[row["id"]], states, root)
        deciding = deciding[deciding["state"] != NO_CONTROLS]
        failing = deciding["state"] == CANNOT_DECIDE
        gated = bool(failing.any()) and row["verdict"] != "not run"
        verdicts.append(CANNOT_DECIDE if gated else row["verdict"])
        kept.append(row["verdict"] if len(deciding) else "")
        said.append("; ".join(f"{name(r)}: {r['shown']} of {r['controls']} shown" for _, r in deciding.iterrows()))
    out["verdict"], out["stand_in_verdict"], out["controls"] = verdicts, kept, said
    if "state" in out:  # the ledger's state column follows the gated verdict
        out["state"] = verdicts
    return out


#: the widths (%) of :func:`controls_html`'s columns: a fixed layout that fits the page's column (sslkit.css)
_WIDTHS = (15, 29, 11, 13, 20, 12)


def controls_html(table: pd.DataFrame, experiments=None) -> str:
    """The controls of ``experiments`` (a name or names; all where None) of a :func:`controls_table` as a page
    shows them: stand-in, ordering (the paper's table), the paper's two numbers and ours, the difference (95 % CI,
    p) and the outcome in bold; ``ValueError`` when none of them has controls."""
    names = [experiments] if isinstance(experiments, str) else experiments
    rows = table if names is None else table[table["experiment"].isin(list(names))]
    if rows.empty:
        raise ValueError(f"no stand-in of {experiments!r} has controls")
    head = ("stand-in", "ordering (the paper's table)", "paper", "ours", "difference", "outcome")
    cols = "".join(f'<col style="width: {w}%">' for w in _WIDTHS)
    out = ['<table class="table controls">', f"<colgroup>{cols}</colgroup>"]
    out.append("<thead><tr>" + "".join(f"<th>{h}</th>" for h in head) + "</tr></thead>")
    out.append("<tbody>")
    for _, r in rows.iterrows():
        where = html.escape(r["paper's table"])
        cells = (
            html.escape(name(r)),
            f"{html.escape(r['ordering'])}<br><small>{where}</small>",
            html.escape(r["paper"]),
            html.escape(r["ours"] or "—"),
            html.escape(r["difference"] or f"no record ({r['seeds']} seeds)"),
            f"<strong>{html.escape(r['outcome'])}</strong>",
        )
        out.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    return "\n".join([*out, "</tbody>", "</table>"])


@dataclass(frozen=True)
class PageControls:
    """The positive controls of one stand-in as its own page shows them: ``rows`` (its rows of a
    :func:`controls_table`) and ``states`` (its row of :func:`stand_ins`); displayed as :func:`controls_html`,
    :attr:`sentence` says what it may decide."""

    rows: pd.DataFrame
    states: pd.DataFrame

    def _repr_html_(self) -> str:
        return controls_html(self.rows)

    def __repr__(self) -> str:
        return "\n".join(f"{r['control']}: {r['outcome']}" for _, r in self.rows.iterrows())

    @property
    def sentence(self) -> str:
        """What the page says: "this stand-in shows k of its n positive controls (<outcomes>), so it decides its
        claims" (or "so it cannot decide its claims ..."), one clause per stand-in."""
        parts = []
        for _, r in self.states.iterrows():
            who = "this stand-in" if len(self.states) == 1 else name(r)
            verdict = (
                "so it decides its claims"
                if r["state"] == PASSES
                else f"so it {CANNOT_DECIDE} its claims (the ledger shows its tests' verdicts but counts none)"
            )
            shown = f"{r['shown']} of its {r['controls']} positive controls ({r['summary']})"
            parts.append(f"{who} shows {shown}, {verdict}")
        return "; ".join(parts)


def page_controls(table: pd.DataFrame, experiment: str, scale: str, stand_in: str | None = None) -> PageControls:
    """The :class:`PageControls` of the stand-in ``stand_in`` (its label; ``None``: every stand-in) of
    ``experiment`` at ``scale`` in a :func:`controls_table`; ``ValueError`` when it has no controls there."""
    mine = (table["experiment"] == experiment) & (table["scale"] == scale)
    if stand_in is not None:
        mine &= table["stand-in"] == stand_in
    if not mine.any():
        labels = sorted(set(table.loc[(table["experiment"] == experiment) & (table["scale"] == scale), "stand-in"]))
        raise ValueError(f"no stand-in {experiment}/{scale} {stand_in!r} has controls; its labels: {labels}")
    rows = table[mine].reset_index(drop=True)
    return PageControls(rows, stand_ins(rows))


def of_records(states: pd.DataFrame, experiment, scale: str, records, registry: Mapping) -> pd.DataFrame:
    """The stand-ins (rows of :func:`stand_ins`) of ``experiment`` at ``scale`` that ``records`` belong to: a
    labelled stand-in when some record has the scope of one of its controls on its own records (or it has none of
    those), an unlabelled one always."""
    mine = states[(states["experiment"] == experiment.name) & (states["scale"] == scale)]
    keep = []
    for i, r in mine.iterrows():
        own = [c for c in controls_of(experiment, scale, registry) if c.stand_in == r["stand-in"] and not c.reads]
        if not r["stand-in"] or not own or any(_in_scope(rec, c.scope) for c in own for rec in records):
            keep.append(i)
    return mine.loc[keep]


def _in_scope(record, scope: Mapping) -> bool:
    return all(record["config"].get(k) == v for k, v in scope.items())


def verdict_text(rows: pd.DataFrame) -> str:
    """What a page says of some stand-ins (rows of :func:`stand_ins`): "" for none; "passes its positive controls"
    when all pass; else "cannot decide: <stand-in>: <shown> of <n> controls shown; ..." (those that do not pass)."""
    rows = rows[rows["state"] != NO_CONTROLS]
    if rows.empty:
        return ""
    failing = rows[rows["state"] == CANNOT_DECIDE]
    if failing.empty:
        return "passes its positive controls"
    parts = [f"{name(r)}: {r['shown']} of {r['controls']} controls shown" for _, r in failing.iterrows()]
    return f"{CANNOT_DECIDE} ({'; '.join(parts)})"
