"""When a run failed instead of giving a result (issue 44, item 4): a diverged run is a recorded failure, counted
and never averaged with the runs that trained (:func:`.report.split_diverged` counts them; :mod:`.report`
re-exports is_diverged)."""

from __future__ import annotations

import numpy as np

__all__ = ["DIVERGED_FACTOR", "is_diverged"]

#: a run whose final accuracy is below this multiple of chance (100 / classes %) has diverged
DIVERGED_FACTOR = 1.5


def is_diverged(metrics: dict, num_classes: int, factor: float = DIVERGED_FACTOR) -> bool:
    """True when a run failed instead of giving a result: its final ``test_acc`` is not finite (a non-finite loss)
    or below ``factor`` times chance, ``100 / num_classes`` % (a trained model that collapsed to one class, as
    the raw-weight CRAIG and GIGA runs that fall from 90 % to 10 % mid-training). Such a run is a recorded failure:
    counted, never averaged with the runs that trained."""
    if isinstance(num_classes, bool) or not isinstance(num_classes, int) or num_classes < 2:
        raise ValueError(f"num_classes must be an int >= 2, got {num_classes!r}")
    if not factor >= 1:
        raise ValueError(f"factor must be >= 1 (chance itself is a possible result of a failed run), got {factor!r}")
    acc = metrics.get("test_acc")
    return acc is None or not np.isfinite(acc) or acc < factor * 100.0 / num_classes
