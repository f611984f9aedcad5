"""Experiments: grids of runs written one record at a time (:mod:`.runner`; here, on Ray or on Slurm:
:mod:`.executors`), mean ± std tables beside the
papers' numbers (:mod:`.tables`, :mod:`.paper_numbers`), the registry of reproducible notebooks
(:mod:`.notebooks`), and one module per paper's experiments (:mod:`.paper_a`, :mod:`.paper_a_appendix`,
:mod:`.variance`, :mod:`.paper_b`, :mod:`.paper_b_ssl`)."""

from .hardware import hardware_summary
from .notebooks import NotebookSpec, get_notebook, notebook_parameters, registry, repo_root, reproduce
from .runner import StaleResultsError, expand_grid, load_results, results_path, run_grid, run_key, versions_note
from .tables import aggregate, comparison_layout, format_mean_std, format_table, paper_comparison

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
    "reproduce",
    "results_path",
    "run_grid",
    "run_key",
    "versions_note",
]
