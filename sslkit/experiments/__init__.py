"""Experiments: the catalog of every experiment of the three papers (:mod:`.catalog`: what each results folder
holds and how it is made), the runs below it (:mod:`.runs`: the results store, the grid runner, the Ray and
Slurm executors, replays, the hardware), the reports on top of the records (:mod:`.report`: the one verdict
rule, tables beside the papers' numbers, the claims ledger, the scorecard), one package per paper
(:mod:`.paper_a`, :mod:`.paper_b`, :mod:`.paper_c`: protocol, runs, claims, scorecard rows), the chapter that
chains the three (:mod:`.pipeline`, through :class:`sslkit.pipeline.SSLPipeline`) and the registry of
reproducible notebooks (:mod:`.notebooks`).

Layers, each importing only from those before it: ``runs``; ``report``; ``paper_a`` / ``paper_b`` / ``paper_c``
/ ``pipeline`` (independent of each other); ``catalog`` and ``notebooks``; then :mod:`sslkit.cli`.
"""

from .notebooks import NotebookSpec, get_notebook, notebook_parameters, registry, reproduce
from .report.tables import aggregate, comparison_layout, format_mean_std, format_table, paper_comparison
from .runs.hardware import hardware_summary, records_hardware
from .runs.runner import expand_grid, run_grid
from .runs.store import StaleResultsError, load_results, repo_root, results_path, run_key, versions_note

__all__ = [
    "NotebookSpec",
    "StaleResultsError",
    "aggregate",
    "comparison_layout",
    "hardware_summary",
    "expand_grid",
    "format_mean_std",
    "format_table",
    "get_notebook",
    "load_results",
    "notebook_parameters",
    "paper_comparison",
    "registry",
    "repo_root",
    "records_hardware",
    "reproduce",
    "results_path",
    "run_grid",
    "run_key",
    "versions_note",
]
