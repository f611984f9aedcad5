"""Paper C's robust-SSL numbers (Tables 11-13, read from :mod:`sslkit.experiments.paper_numbers`); the positive
controls of the robust stand-ins are in :mod:`.controls` (:func:`.controls.robust_ood`)."""

from __future__ import annotations

from sslkit.experiments import paper_numbers

__all__ = ["PAPER_TABLE11", "PAPER_TABLE12"]

#: Table 12 / 13: (scenario, dataset, method, ratio) -> {"mean", "std", "hours"}
PAPER_TABLE12 = {
    (r["scenario"], r["dataset"], r["method"], r["ratio"]): {"mean": r["mean"], "std": r["std"], "hours": r["hours"]}
    for r in paper_numbers.load("c_table12")
}
#: Table 11 (ratio 50 %): (scenario, dataset, method) -> {"mean", "hours"}
PAPER_TABLE11 = {
    (r["scenario"], r["dataset"], r["method"]): {"mean": r["mean"], "hours": r["hours"]}
    for r in paper_numbers.load("c_table11")
}
