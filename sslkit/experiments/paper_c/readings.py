"""The named readings (:class:`~sslkit.experiments.runs.experiment.Reading`) that more than one of paper C's
experiments runs: what the paper leaves open, run both ways."""

from __future__ import annotations

__all__ = ["MEAN1", "MEAN1_NOTE"]

#: CRAIG and GradMatch with their per-sample weights scaled to mean 1 (CORDS multiplies the loss by weights of
#: mean N / k): the second reading of the unlabeled weights, beside the raw weights of the main grid
MEAN1 = "weights scaled to mean 1"
MEAN1_NOTE = "CRAIG / GradMatch (CRUST in the robust grid) with their weights scaled to mean 1, not CORDS' N / k"
