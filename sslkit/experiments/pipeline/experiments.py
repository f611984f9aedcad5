"""The chapter's experiment, one :class:`~sslkit.experiments.runs.experiment.Experiment` (the catalog,
:mod:`sslkit.experiments.catalog`, collects it): every method of :data:`.runs.METHODS` in every arm of
:data:`.runs.ARMS`. ``cpu`` is the MNIST protocol of :mod:`.runs` (no paper has it: a stand-in of the book's own),
run with one thread."""

from __future__ import annotations

from ..runs.experiment import QUICK, STAND_IN, Experiment, Scale
from . import runs as R

#: not one paper's: the three chained
PAPER = "-"


def configs(methods=R.METHODS, arms=tuple(R.ARMS)) -> list[dict]:
    """Every (method, arm), methods first."""
    return [{"method": m, "arm": a} for m in methods for a in arms]


PIPELINE = Experiment(
    name="all_three",
    paper=PAPER,
    notebook="pipeline",
    title="All three together: RDSS labels, the risk rewrite or FreeMatch, Retrieve coresets, each stage alone",
    run=R.pipeline_run,
    scales={
        "quick": Scale(QUICK, configs, (0,), "digits", fixed={"protocol": "quick"}, threads=1),
        "cpu": Scale(
            STAND_IN,
            configs,
            tuple(range(20)),  # 12 runs of 5-15 s of CPU per seed
            "mnist",
            fixed={"protocol": "cpu"},
            extra={"data": "MNIST (full IDX files)", "threads": 1},
            threads=1,
            note="the book's own CPU protocol (MNIST, an MLP, 100 labels): no paper ran this chain",
        ),
    },
    version=R.PROTOCOL_VERSION,
    by_seed=True,
    pick_by=("method",),
)

EXPERIMENTS = (PIPELINE,)
