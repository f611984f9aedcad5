"""What an experiment is: one results folder ``notebooks/results/<name>/``, described once (:class:`Experiment`).

An experiment is one run function and, per scale (``quick``, ``cpu``, ``paper``, :class:`Scale`), the grid of
configurations it runs, its seeds, the fixed keyword arguments of the run function at that scale, the kind of
evidence its records are (:data:`KINDS`) and the dataset each configuration actually uses. A scale's grid can
have named **readings** beside its main grid (:class:`Reading`: e.g. CRAIG with its weights scaled to mean 1
beside CORDS' raw weights); every configuration belongs to exactly one of them, so a record's reading is
explicit and never pooled with another's (:meth:`Scale.reading_of`).

Each paper's experiments are declared in ``sslkit/experiments/paper_<x>/experiments.py``; the catalog
(:mod:`sslkit.experiments.catalog`) collects them and is what the notebooks, the CLI, the replay test, the
ledger and the scorecard read. Nothing here runs anything: :mod:`.runner` runs a grid.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .published import committed_results_dir
from .store import load_results, results_path, run_key

#: the kinds of evidence a record is: made with the paper's model, data, budget and schedule; a run that changes
#: one of them to fit a CPU (a stand-in); the quick scale of CI; a probe of a choice the paper leaves open
PAPER_PROTOCOL, STAND_IN, QUICK, DIAGNOSTIC = "paper protocol", "CPU stand-in", "quick", "diagnostic"
KINDS = (PAPER_PROTOCOL, STAND_IN, QUICK, DIAGNOSTIC)
#: how a committed record replays on another platform (:func:`~.replay.replay_rule`, ``tests/test_replay.py``): a
#: deterministic computation (closed forms, Monte Carlo with fixed draws, selections on fixed data) gives the same
#: numbers up to float rounding, to the experiment's ``replay_tol``; a chaotic one (a network trained by SGD, a
#: selection on features each platform extracts itself) is bit-identical only where the platform fingerprint
#: matches, and elsewhere only reported -- a last-bit difference becomes another run
DETERMINISTIC, CHAOTIC = "deterministic", "chaotic"
REPLAY_RULES = (DETERMINISTIC, CHAOTIC)
SCALES = ("quick", "cpu", "paper")


@dataclass(frozen=True)
class Reading:
    """A named part of a scale's grid whose records are read apart from the main grid's: ``grid()`` gives its
    configurations (none of them in the main grid); ``kind`` overrides the scale's (e.g. a diagnostic probe);
    ``note`` says what differs; ``unstored_cost``, in words, what a rerun of one of its records pays on a fresh
    machine beyond the record's stored ``seconds`` (data prepared once per machine and memoised, which the stored
    seconds leave out): "" when nothing. The replay test picks such records last."""

    name: str
    grid: Callable[[], list]
    kind: str = ""
    note: str = ""
    unstored_cost: str = ""


@dataclass(frozen=True)
class Scale:
    """One scale of an experiment.

    ``grid(**options)`` gives the main grid's configurations (``options``: what a notebook narrows, e.g. the
    datasets that can be loaded); ``seeds`` the seeds of a full sweep; ``data`` the dataset a configuration
    actually uses (a string, or a function of the configuration), as ``"<dataset>"`` or
    ``"<dataset>/<copy>"`` when a copy differs from the paper's (``"cifar_cvd/jpeg"``: the lossy JPEG copy);
    ``fixed`` the run function's keyword arguments at this scale; ``file`` the results file's stem when it is
    not the scale's name; ``extra`` facts stored with each new record; ``threads`` the torch thread count the
    committed sweep ran with (None: torch's default); ``gpu``: the runs are meant for a CUDA device; ``note``:
    what a stand-in changes from the paper's protocol; ``run``: the run function of this scale where it is not
    the experiment's (a paper protocol on a GPU beside a CPU stand-in); ``controls``: a stand-in's positive
    controls, orderings from the paper's own tables it must show before it may decide a claim
    (:class:`~sslkit.experiments.report.controls.Control`; stand-ins declared before this field have theirs in
    :data:`~sslkit.experiments.report.controls.CONTROLS`); ``extra_seeds``: ``((configs, seeds), ...)``,
    configurations of the grid run on more seeds than ``seeds`` (a control's confirmatory seeds, declared with
    it), whose records belong to the scale; ``not_replayable``: why the test suite cannot rerun this scale's records
    one at a time ("" when it can; ``sslkit replay`` still reruns one where the machine has what it needs)."""

    kind: str
    grid: Callable[..., list]
    seeds: Sequence[int]
    data: str | Callable[[Mapping], str]
    fixed: Mapping = field(default_factory=dict)
    readings: tuple = ()
    file: str = ""
    extra: Mapping = field(default_factory=dict)
    threads: int | None = None
    gpu: bool = False
    note: str = ""
    run: Callable | None = None
    controls: tuple = ()
    extra_seeds: tuple = ()
    not_replayable: str = ""

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {self.kind!r}")
        if self.controls and self.kind != STAND_IN:
            raise ValueError(f"only a {STAND_IN} scale has positive controls; this one is {self.kind!r}")

    def data_of(self, config: Mapping) -> str:
        """The dataset ``config`` uses at this scale (see the class docstring)."""
        return self.data(config) if callable(self.data) else self.data

    def configs(self, readings=True, *, main: bool = True, **options) -> list[dict]:
        """The main grid (``grid(**options)``; left out when ``main`` is False), then each reading's
        configurations (``readings``: True for all, False for none, or the names of those to include, a name this
        scale lacks being skipped; a reading's grid gets the options it takes). With ``main=False`` (only readings
        run) a name that is not a reading of this scale is a ``ValueError``, and so is an option that neither the main
        grid nor a reading takes (naming the options they take)."""
        params = [
            p for g in (self.grid, *(r.grid for r in self.readings)) for p in inspect.signature(g).parameters.values()
        ]
        takes = {p.name for p in params if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)}
        unknown = sorted(set(options) - takes)
        if unknown and not any(p.kind == p.VAR_KEYWORD for p in params):  # a grid taking **options checks its own
            raise ValueError(f"no option {unknown} for this grid; its options: {', '.join(sorted(takes)) or 'none'}")
        if not main and readings not in (True, False):
            unknown = sorted(set(readings) - {r.name for r in self.readings})
            if unknown:
                raise ValueError(f"no reading {unknown}; this scale's readings: {[r.name for r in self.readings]}")
        out = list(self.grid(**options)) if main else []
        for r in self.readings:
            if readings is True or (readings and r.name in readings):
                takes = inspect.signature(r.grid).parameters
                out += list(r.grid(**{k: v for k, v in options.items() if k in takes}))
        return out

    def reading_of(self, config: Mapping) -> Reading | None:
        """The :class:`Reading` whose grid holds ``config``; None for the main grid's (or an unknown) one."""
        for r in self.readings:
            if dict(config) in _configs(r):
                return r
        return None

    def kind_of(self, config: Mapping) -> str:
        """The kind of a record of ``config``: its reading's when that sets one, else the scale's."""
        reading = self.reading_of(config)
        return reading.kind if reading is not None and reading.kind else self.kind


@functools.cache
def _reading_configs(reading: Reading) -> tuple:
    return tuple(reading.grid())


def _configs(reading: Reading) -> tuple:
    return _reading_configs(reading)


@dataclass(frozen=True)
class Experiment:
    """One results folder and how it is made: ``run(**config, seed=seed, **scale.fixed, device=...)`` gives one record's
    metrics (``device`` only when ``run`` takes it). ``notebook``: the stem of the notebook that runs and shows it;
    ``version``: the protocol version its records carry; ``replay``: :data:`REPLAY_RULES`, with ``replay_tol`` (the
    relative tolerance of its float metrics on another platform; deterministic experiments only) and ``replay_note``
    (why, with what was measured); ``drift``: ``(metrics, rel_tol, why)`` of metrics whose last bits moved since the
    committed records were written, held to ``rel_tol`` even on their own platform until the file is regenerated;
    ``pick_by``: the config fields whose every value gets one record replayed by the replay test (() = the cheapest
    record only); ``uses``: the names of experiments whose records its pages read beside its own; ``by_seed``: run the
    grid one seed at a time (a killed sweep keeps whole seeds; runs of a seed share data)."""

    name: str
    paper: str
    notebook: str
    title: str
    run: Callable
    scales: Mapping[str, Scale]
    version: int
    replay: str = CHAOTIC
    replay_tol: float | None = None
    replay_note: str = ""
    drift: tuple = ()
    pick_by: tuple = ()
    uses: tuple = ()
    by_seed: bool = False

    def __post_init__(self):
        if self.replay not in REPLAY_RULES:
            raise ValueError(f"{self.name}: replay must be one of {REPLAY_RULES}, got {self.replay!r}")
        if (self.replay == DETERMINISTIC) != (self.replay_tol is not None):
            raise ValueError(f"{self.name}: replay_tol is required for a deterministic replay and only for it")
        if self.replay_tol is not None and not 0 < self.replay_tol <= 1e-5:
            raise ValueError(f"{self.name}: replay_tol must be in (0, 1e-5], got {self.replay_tol!r}")
        if self.drift and (len(self.drift) != 3 or not self.drift[0] or not self.drift[2]):
            raise ValueError(f"{self.name}: drift must be (metrics, rel_tol, why), got {self.drift!r}")
        unknown = set(self.scales) - set(SCALES)
        if unknown:
            raise ValueError(f"{self.name}: scales must be among {SCALES}, got {sorted(unknown)}")

    def scale(self, name: str) -> Scale:
        """The :class:`Scale` called ``name``; ``ValueError`` naming the scales this experiment has."""
        if name not in self.scales:
            raise ValueError(f"experiment {self.name!r} has no scale {name!r}; its scales: {', '.join(self.scales)}")
        return self.scales[name]

    def file(self, scale: str) -> str:
        """The stem of the results file of ``scale`` (``cpu_efficientnet`` for a scale ``cpu`` run that way)."""
        return self.scale(scale).file or scale

    def path(self, scale: str, results_dir=None) -> Path:
        """The results file of ``scale``: committed under ``notebooks/results`` for ``cpu`` and ``paper``, under
        ``_build/results`` for ``quick`` (:func:`~.store.results_path`), or in ``results_dir``."""
        return results_path(self.name, self.file(scale), results_dir=results_dir)

    def source(self, scale: str) -> str:
        """``"<name>/<file>"``: how pages and the ledger name a results file."""
        return f"{self.name}/{self.file(scale)}"

    def committed(self, root=None) -> dict:
        """``{scale: path}`` of the results files that exist under ``root`` (a results folder; default: the
        repository's ``notebooks/results``), the quick scale left out."""
        root = Path(root) if root is not None else committed_results_dir()
        found = {}
        for scale in self.scales:
            path = root / self.name / f"{self.file(scale)}.jsonl"
            if scale != "quick" and path.is_file():
                found[scale] = path
        return found

    def records(self, scale: str, root=None) -> list:
        """The records of ``scale`` under ``root`` (see :meth:`committed`; ``[]`` when there is no file)."""
        path = self.committed(root).get(scale)
        return load_results(path) if path is not None else []

    def call(self, scale: str, device="cpu") -> Callable:
        """``run`` with the scale's fixed keyword arguments (and ``device`` when ``run`` takes one): what
        :func:`~.runner.run_grid` calls as ``fn(**config, seed=seed)``, and what a record stores as ``call``."""
        s = self.scale(scale)
        fn = s.run or self.run
        kwargs = dict(s.fixed)
        if "device" in inspect.signature(fn).parameters:
            kwargs["device"] = device
        return functools.partial(fn, **kwargs)

    def keys(self, scale: str) -> set:
        """The run keys of the whole grid of ``scale`` (every reading, every seed)."""
        s = self.scale(scale)
        extra = {run_key(c, seed, scale) for configs, seeds in s.extra_seeds for c in configs for seed in seeds}
        return {run_key(c, seed, scale) for c in s.configs() for seed in s.seeds} | extra
