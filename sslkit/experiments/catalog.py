"""The catalog: every experiment of the three papers, one :class:`~.runs.experiment.Experiment` per results folder,
and what reads them.

Each paper declares its experiments beside its protocol (``paper_<x>/experiments.py``), its claims
(``paper_<x>/claims.py``) and its scorecard rows (``paper_<x>/scorecard.py``); this module collects them, and
is what the notebooks, the CLI (``sslkit run``, ``sslkit list``), the replay test, the ledger and the scorecard
read:

* :func:`run` -- run (or resume) an experiment's grid at a scale into its results file;
* :func:`get`, :func:`experiments`, :func:`for_file` -- the specs;
* :func:`ledger`, :func:`scorecard`, :func:`overview`, :func:`answer`, :func:`committed_runs` -- the pages' tables;
* :func:`controls`, :func:`stand_ins` -- the stand-ins' positive controls and whether each may decide a claim
  (:mod:`.report.controls`); :func:`controls_table` -- one stand-in's, as its page shows them.

Adding an experiment: write its run function (``fn(**config, seed=..., ...) -> metrics``) in its paper's
package, declare an :class:`~.runs.experiment.Experiment` in that paper's ``experiments.py`` (name = the results
folder, notebook, one :class:`~.runs.experiment.Scale` per scale with its grid, seeds, kind and data) and add it
to that module's ``EXPERIMENTS``; then call ``catalog.run(NAME, scale=scale, ...)`` from its notebook. The tests
(``tests/test_catalog.py``) check that each committed results file has its spec and that the spec's grid makes
the committed keys.
"""

from __future__ import annotations

import contextlib
import functools
import json
import tempfile
import warnings
from pathlib import Path

import pandas as pd

from sslkit._checks import check_count

from .notebooks import registry
from .paper_a import claims as a_claims
from .paper_a import experiments as a_experiments
from .paper_a import scorecard as a_scorecard
from .paper_b import claims as b_claims
from .paper_b import claims_active as b_claims_active
from .paper_b import controls as b_controls
from .paper_b import experiments as b_experiments
from .paper_b import scorecard as b_scorecard
from .paper_c import claims as c_claims
from .paper_c import controls as c_controls
from .paper_c import experiments as c_experiments
from .paper_c import scorecard as c_scorecard
from .pipeline import claims as p_claims
from .pipeline import experiments as p_experiments
from .report import controls as K
from .report import ledger as L
from .report import scorecard as S
from .runs.experiment import KINDS, STAND_IN, Experiment
from .runs.hardware import hardware_summary
from .runs.published import committed_results_dir
from .runs.runner import run_grid

EXPERIMENTS: tuple = (
    a_experiments.EXPERIMENTS + b_experiments.EXPERIMENTS + c_experiments.EXPERIMENTS + p_experiments.EXPERIMENTS
)
CLAIMS: tuple = a_claims.CLAIMS + b_claims.CLAIMS + b_claims_active.CLAIMS + c_claims.CLAIMS + p_claims.CLAIMS
OPEN_ITEMS: tuple = a_claims.OPEN_ITEMS + b_claims.OPEN_ITEMS + c_claims.OPEN_ITEMS + p_claims.OPEN_ITEMS
GROUPS: dict = {**a_scorecard.GROUPS, **b_scorecard.GROUPS, **c_scorecard.GROUPS}
#: the positive controls of the stand-ins whose specs do not carry them (:mod:`.report.controls`)
CONTROLS: dict = {**b_controls.CONTROLS, **c_controls.CONTROLS}
NOT_REPRODUCED: tuple = a_scorecard.NOT_REPRODUCED + b_scorecard.NOT_REPRODUCED + c_scorecard.NOT_REPRODUCED


def experiments(paper=None) -> tuple:
    """Every :class:`~.runs.experiment.Experiment` (of ``paper`` when given), by paper then as declared."""
    return tuple(e for e in EXPERIMENTS if paper is None or e.paper == paper)


def get(name) -> Experiment:
    """The experiment called ``name`` (an experiment is returned as is); ``ValueError`` listing the names."""
    if isinstance(name, Experiment):
        return name
    for e in EXPERIMENTS:
        if e.name == name:
            return e
    raise ValueError(f"unknown experiment {name!r}; experiments: {', '.join(e.name for e in EXPERIMENTS)}")


def for_file(path) -> tuple:
    """``(experiment, scale)`` of a results file ``.../<name>/<file>.jsonl``; ``ValueError`` when no spec makes it."""
    path = Path(path)
    e = get(path.parent.name)
    for scale in e.scales:
        if e.file(scale) == path.stem:
            return e, scale
    raise ValueError(f"experiment {e.name!r} has no scale whose results file is {path.stem}.jsonl")


def gpu_needed(name, scale: str, device="auto", executor="local") -> str:
    """Why ``run`` would refuse this call: "" when it can run; a sentence when the scale is meant for a CUDA
    device and neither ``device`` resolves to one nor a cluster (``executor``) brings its own."""
    from sslkit.device import resolve_device

    e = get(name)
    if not e.scale(scale).gpu or executor != "local" or resolve_device(device).type == "cuda":
        return ""
    return (
        f"{e.name} at scale {scale!r} is the paper's protocol for a GPU: pass device='cuda' (this run resolves "
        f"device={device!r} to {resolve_device(device).type}) or a cluster executor"
    )


@contextlib.contextmanager
def _threads(n):
    import torch

    before = torch.get_num_threads()
    if n:
        torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def run(
    name,
    scale: str = "quick",
    *,
    seed: int | None = None,
    seeds=None,
    device="auto",
    executor="local",
    results_dir=None,
    progress: bool = False,
    readings=True,
    main: bool = True,
    fixed=None,
    extra=None,
    on_stale="error",
    threads=None,
    **options,
) -> list[dict]:
    """Run (or resume) experiment ``name`` at ``scale`` and return its records (those already in the results file are
    reused, not rerun; :func:`~.runs.runner.run_grid`).

    ``seeds``: the seeds (default: the scale's); ``seed``: the first one, the scale's seeds shifted to start there
    (a notebook's ``seed`` parameter). ``readings``: also run the named readings of the grid (True: all, False:
    none, or a list of names); ``main=False`` leaves out the main grid (only the readings run). ``options`` narrow
    the grid (e.g. ``datasets=[...]``: the rows whose data loads here); ``fixed`` overrides fixed arguments of the
    run function (each record stores what it got, ``call``); ``extra``: facts stored with each new record beside the
    scale's. The results go to the experiment's file (:meth:`~.runs.experiment.Experiment.path`) or under
    ``results_dir``. On the local executor torch runs with ``threads`` threads (None: the count the committed
    records of the scale used, ``Scale.threads``), and each new record's hardware label says how many. A scale meant
    for a GPU on a machine without one is a ``ValueError`` (:func:`gpu_needed`)."""
    e = get(name)
    s = e.scale(scale)
    why = gpu_needed(e, scale, device, executor)
    if why:
        raise ValueError(why)
    if seeds is None:
        seeds = list(s.seeds) if seed is None else [seed + (k - s.seeds[0]) for k in s.seeds]
    elif seed is not None:
        raise ValueError("give seeds= or seed=, not both")
    grid = s.configs(readings, main=main, **options)
    if not grid:
        return []
    local = executor == "local"
    if local:  # the device the runs use, as each record's call stores it ("auto" resolves on a cluster's workers)
        from sslkit.device import resolve_device

        device = str(resolve_device(device))
    fn = e.call(scale, device)
    if fixed:
        unknown = set(fixed) - set(fn.keywords) - set(_parameters(fn.func))
        if unknown:
            raise ValueError(f"{e.name}: the run function has no argument {sorted(unknown)}")
        fn = type(fn)(fn.func, **{**fn.keywords, **fixed})
    if threads is not None:
        threads = check_count(threads, "threads", allow_zero=False)
    threads = threads or s.threads
    hardware = None
    if local:
        hardware = hardware_summary(device) + (f", {threads} thread{'s' if threads > 1 else ''}" if threads else "")
    kw = dict(
        scale=scale,
        progress=progress,
        extra={**s.extra, **(extra or {})},
        hardware=hardware,
        executor=executor,
        version=e.version,
        on_stale=on_stale,
    )
    path = e.path(scale, results_dir)
    with _threads(threads if local else None):
        if not e.by_seed:
            return run_grid(fn, grid, path, seeds=seeds, **kw)
        return [r for one in seeds for r in run_grid(fn, grid, path, seeds=[one], **kw)]


def _parameters(fn) -> tuple:
    import inspect

    return tuple(inspect.signature(fn).parameters)


def records(name, scale: str, root=None) -> list:
    """The committed records of ``name`` at ``scale`` (``[]`` when none; ``root``: a results folder)."""
    return get(name).records(scale, L.results_root(_records_root(root)))


def reading_of(name, scale: str, config) -> str:
    """The name of the reading of the grid that ``config`` belongs to ("" for the main grid)."""
    r = get(name).scale(scale).reading_of(config)
    return "" if r is None else r.name


# --------------------------------------------------------------------------------------------- the pages


def _records_root(root):
    """``root``, or where there are no committed records at all (``root`` None, and ``notebooks/results`` neither in
    this checkout nor fetched: offline, a failed fetch in Colab) an empty folder, with a ``UserWarning`` that the
    pages show as their note (once per process): they then read "no committed records" instead of stopping."""
    if root is not None or committed_results_dir().is_dir():
        return root
    if _empty_folder.cache_info().currsize:  # warned once already
        return _empty_folder()
    warnings.warn(
        "no committed records here (notebooks/results is not in this checkout and could not be fetched): the "
        "tables and verdicts below show no evidence; clone the repository to see them",
        UserWarning,
        stacklevel=3,
    )
    return _empty_folder()


@functools.cache
def _empty_folder() -> Path:
    return Path(tempfile.mkdtemp(prefix="sslkit-no-records-"))


def ledger(root=None, paper=None, item=None) -> pd.DataFrame:
    """Every claim of the three papers tested on the committed records (:func:`.report.ledger.ledger_table`), then
    the stand-ins' gate (:func:`.report.controls.gate`): a claim decided by a CPU stand-in that does not pass its
    positive controls reads "cannot decide", its test's verdict kept in ``stand_in_verdict``; ``root``: a results
    folder in place of ``notebooks/results`` (it must exist). Without any committed records (offline Colab) every
    claim is untested, with a warning (:func:`_records_root`)."""
    root = _records_root(root)
    return K.gate(L.ledger_table(CLAIMS, root, paper, item), CLAIMS, stand_ins(root), L.results_root(root))


def controls(root=None) -> pd.DataFrame:
    """Every stand-in's positive controls evaluated on the committed records
    (:func:`.report.controls.controls_table`)."""
    return K.controls_table(EXPERIMENTS, CONTROLS, L.results_root(_records_root(root)))


def controls_table(experiment: str, scale: str, stand_in: str | None = None, root=None) -> K.PageControls:
    """The positive controls of one stand-in as its page shows them (:func:`.report.controls.page_controls`): a
    table with every control the registry gives it, evaluated on the committed records by the one rule, and
    ``.sentence``, what it may decide. ``stand_in``: its label where one scale holds several (None: all)."""
    table = K.controls_table((get(experiment),), CONTROLS, L.results_root(_records_root(root)))
    return K.page_controls(table, experiment, scale, stand_in)


def stand_ins(root=None) -> pd.DataFrame:
    """One row per stand-in: its controls shown and its state, passes or cannot decide
    (:func:`.report.controls.stand_ins`)."""
    return K.stand_ins(controls(root))


def targets() -> list:
    """Every item of the scorecard: the registered notebooks' targets and the items no notebook reproduces."""
    found = [
        S.Target(spec.paper, t["item"], t["what"], notebook=spec.name, note=t.get("note", ""))
        for spec in registry()
        for t in spec.targets
    ]
    return sorted(found + list(NOT_REPRODUCED), key=lambda t: (t.paper, t.item))


def groups_of(target) -> tuple:
    """The row groups of ``target``: its paper's, or one group per experiment of its notebook (their cpu and paper
    scales); "not run" / "not runnable offline" for an item no notebook reproduces."""
    if (target.paper, target.item) in GROUPS:
        return GROUPS[(target.paper, target.item)]
    if target.notebook is None:
        return (S.Group(status=S.OFFLINE if "not runnable offline" in target.note else S.NOT_RUN),)
    stem = next(s for s in registry() if s.name == target.notebook).path.split("/")[-1][:-3]
    mine = [e for e in EXPERIMENTS if e.notebook == stem]
    return tuple(S.Group(reads=e) for e in mine) or (S.Group(status=S.NOT_RUN),)


def scorecard(root=None, claims=None) -> pd.DataFrame:
    """One row per row group of every item, its status computed from the records (:mod:`.report.scorecard`);
    ``root``: a results folder (it must exist), read for the statuses and, unless a ledger ``claims`` is given,
    for the claims too."""
    root = _records_root(root)
    claims = ledger(root) if claims is None else claims
    states = stand_ins(root)

    def gate(group) -> str:  # what the group's stand-in records may decide: the state of their stand-ins
        rows = [
            K.of_records(states, e, scale, recs, CONTROLS)
            for e in (group.reads, *group.also)
            for scale, recs in S.matching(group, root, e).items()
            if e.scales[scale].kind == STAND_IN
        ]
        return K.verdict_text(pd.concat(rows)) if rows else ""

    return S.scorecard_table(targets(), groups_of, claims, root, gate)


def overview(paper: str, card=None, claims=None) -> tuple[str, str]:
    """What an overview page (``book/paper_a.md`` ...) shows of ``paper``: the sentence of
    :func:`.report.scorecard.paper_summary` and the HTML table of its rows (without the paper column and the
    columns that are empty in every row)."""
    claims = ledger() if claims is None else claims
    card = scorecard(claims=claims) if card is None else card
    columns = [c for c in S.COLUMNS if c != "paper"]
    return S.paper_summary(card, claims, paper), S.to_html(S.paper_card(card, paper), columns=columns, drop_empty=True)


def not_run_reason(claim, card=None) -> str:
    """Why ``claim`` (an id or a :class:`~.report.ledger.Claim`) has no committed record: its row group's data or
    model is not offline (its scorecard row says so, or its test's evidence), else its first experiment's paper
    protocol needs a GPU (:data:`.report.scorecard.GPU_DAYS`), else "" (not run yet)."""
    claim = next(c for c in CLAIMS if c.id == claim) if isinstance(claim, str) else claim
    card = scorecard() if card is None else card
    row = card[(card["paper"] == claim.paper) & (card["item"] == claim.item) & (card["group"] == claim.group)]
    verdict, evidence = L.evaluate(claim)
    if (row["status"] == S.OFFLINE).any() or "not offline" in evidence:
        return S.NOT_OFFLINE
    if any(s.gpu for s in claim.reads[0].scales.values()):
        return S.GPU_DAYS
    return S.NOT_YET


def answer(paper: str, claims=None, card=None) -> dict:
    """The answer a page opens with for ``paper`` (:func:`.report.scorecard.answer_lines`): ``protocol``,
    ``stand_in`` and ``untestable``, computed from the gated ledger (``claims``) and the scorecard (``card``)."""
    claims = ledger() if claims is None else claims
    card = scorecard(claims=claims) if card is None else card
    ids = claims.loc[(claims["paper"] == paper) & (claims["verdict"] == L.NOT_RUN), "id"]
    return S.answer_lines(claims, paper, {i: not_run_reason(i, card) for i in ids})


def committed_runs(root=None) -> dict:
    """``{(paper, kind): runs}`` over every committed results file (``root``: a results folder): the paper of
    its experiment and the kind of each record (its scale's, or its reading's: paper protocol, CPU stand-in or
    diagnostic); every (paper, kind) pair is present, 0 when no file has such runs."""
    root = L.results_root(_records_root(root))
    runs: dict = {(e.paper, kind): 0 for e in EXPERIMENTS for kind in KINDS}
    for e in EXPERIMENTS:
        for scale, path in e.committed(root).items():
            for r in L.read_records(path):
                key = (e.paper, e.scales[scale].kind_of(r["config"]))
                runs[key] = runs.get(key, 0) + 1
    return runs


def uncatalogued(root=None) -> list:
    """The results files under ``root`` that no experiment's spec makes (there should be none)."""
    root = L.results_root(root)
    out = []
    for f in sorted(root.glob("*/*.jsonl")):
        try:
            for_file(f)
        except ValueError:
            out.append(f"{f.parent.name}/{f.name}")
    return out


def seeds_per_configuration(records) -> str:
    """How many seeds each configuration of ``records`` ran: "10 seeds per configuration", or the range
    "1-30 seeds per configuration" where they differ (a file's distinct seeds overstate a thin row)."""
    per: dict = {}
    for r in records:
        per.setdefault(json.dumps(r["config"], sort_keys=True, default=str), set()).add(r["seed"])
    if not per:
        return "no seed"
    lo, hi = min(map(len, per.values())), max(map(len, per.values()))
    return f"{lo} seed{'s' if lo != 1 else ''} per configuration" if lo == hi else f"{lo}–{hi} seeds per configuration"


def headline(notebook: str, root=None) -> dict:
    """What a page's headline box says about its own evidence: ``evidence`` (one sentence: the committed records
    of the experiments the notebook shows -- kind, runs, seeds, hardware) and ``verdicts`` (the claims ledger's
    verdicts on the claims those records test, :func:`.report.ledger.verdicts_sentence`). Without any committed
    records (offline Colab): "no committed records yet", with a warning (:func:`_records_root`)."""
    root = L.results_root(_records_root(root))
    mine = [e for e in EXPERIMENTS if e.notebook == notebook]
    if not mine:
        raise ValueError(f"no experiment of the catalog is shown by notebook {notebook!r}")
    parts, hardware = [], set()
    for e in mine:
        for scale, path in e.committed(root).items():
            recs = L.read_records(path)
            if not recs:
                continue
            hardware |= {r.get("hardware") or "unrecorded hardware" for r in recs}
            kind = e.scales[scale].kind
            parts.append(f"{e.name}: {len(recs)} runs at scale {scale} ({kind}), {seeds_per_configuration(recs)}")
    evidence = "; ".join(parts) + (f"; on {' and on '.join(sorted(hardware))}" if hardware else "")
    names = tuple(f"{e.name}/" for e in mine)
    table = ledger(root)
    rows = table[table["records"].map(lambda text: any(n in text for n in names))]
    # "cannot decide" is one of the ledger's verdicts: its sentence names those claims with the others
    verdicts = L.verdicts_sentence(rows, "these experiments") if len(rows) else "the ledger tests no claim on them"
    return {"evidence": evidence or "no committed records yet", "verdicts": verdicts}
