"""The learning-rate schedule and early stopping of the one loop (:class:`~sslkit.engine.Trainer`)."""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np

from sslkit._checks import check_count


def cosine_lr_factor(step: int, total_steps: int) -> float:
    """FixMatch's cosine decay factor ``cos(7 pi t / (16 T))`` (Sohn et al. 2020, used by USB and by
    papers B and C); ``t`` is clipped to ``[0, T]``."""
    step, total_steps = check_count(step, "step"), check_count(total_steps, "total_steps", allow_zero=False)
    t = min(step, total_steps)
    return math.cos(7.0 * math.pi * t / (16.0 * total_steps))


@dataclass
class EarlyStopping:
    """Stop when validation accuracy has not improved for ``patience`` epochs (paper A App. C: 20, 1e-4).

    An epoch improves on the best so far only if ``val_acc > best + min_delta`` (strictly).
    ``start_epoch``: epochs up to and including it are not monitored (no best weights, no patience), e.g.
    the supervised warm-up of paper A's Ours (Iter) and Pseudo Label, so that early stopping cannot end a
    run before its semi-supervised phase has begun; monitoring starts at epoch ``start_epoch + 1``.
    ``watch_warmup=True``: those epochs still compete for the best weights (model selection over the whole
    run), but only later epochs count toward ``patience``.
    """

    patience: int = 20
    min_delta: float = 1e-4
    start_epoch: int = 0
    watch_warmup: bool = False

    def __post_init__(self):
        self.patience = check_count(self.patience, "patience", allow_zero=False)
        self.start_epoch = check_count(self.start_epoch, "start_epoch")
        if (
            isinstance(self.min_delta, bool)
            or not isinstance(self.min_delta, numbers.Real)
            or not math.isfinite(self.min_delta)
            or self.min_delta < 0
        ):
            raise ValueError(f"min_delta must be a finite number >= 0, got {self.min_delta!r}")
        self.min_delta = float(self.min_delta)
        if not isinstance(self.watch_warmup, (bool, np.bool_)):
            raise TypeError(f"watch_warmup must be True or False, got {self.watch_warmup!r}")
        self.watch_warmup = bool(self.watch_warmup)

    def is_improvement(self, value: float, best: float) -> bool:
        """True when ``value`` beats ``best`` by more than ``min_delta``."""
        return value > best + self.min_delta
