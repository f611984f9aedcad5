"""One training task: the data of a run (labeled, unlabeled, validation and test sets) and how to build its model.

Every run of the three papers, the pipeline and the how-tos hand a :class:`Task` to the one fit,
:func:`sslkit.engine.fit`. A paper adds what its runs need beside the data (paper A's prior θ, paper C's image
normalisation) either as fields of a subclass or in :attr:`Task.meta`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["Task"]


@dataclasses.dataclass(frozen=True, kw_only=True)
class Task:
    """The data of one run and its model.

    Parameters
    ----------
    X_l, y_l : the labeled set (arrays or tensors; ``y_l`` integer labels).
    X_u : the unlabeled set, or None (supervised training).
    X_val, y_val : the validation set (early stopping, ``best_val_acc_``), or None.
    X_test, y_test : the test set the run is scored on, or None.
    num_classes : the number of classes, or None (the trainer infers it from the labels).
    model_factory : a function of no arguments that builds a fresh model (:meth:`make_model`), or None when the
        caller brings its own model.
    meta : anything else a run reads from its task (normalisation statistics, provenance, hidden labels).
    """

    X_l: Any
    y_l: Any
    X_u: Any = None
    X_val: Any = None
    y_val: Any = None
    X_test: Any = None
    y_test: Any = None
    num_classes: int | None = None
    model_factory: Callable | None = dataclasses.field(default=None, repr=False)
    meta: Mapping = dataclasses.field(default_factory=dict, repr=False)

    def __post_init__(self):
        if (self.X_val is None) != (self.y_val is None):
            raise ValueError("X_val and y_val go together: give both or neither")
        if (self.X_test is None) != (self.y_test is None):
            raise ValueError("X_test and y_test go together: give both or neither")
        if self.model_factory is not None and not callable(self.model_factory):
            raise TypeError(f"model_factory must be a function of no arguments, got {self.model_factory!r}")

    def __getitem__(self, key: str):
        """``task["X_l"]`` is ``task.X_l`` and ``task["mean"]`` is ``task.meta["mean"]``: the reading of the dict
        tasks that pages and scripts written before this type still use."""
        if key in _FIELDS:
            return getattr(self, key)
        try:
            return self.meta[key]
        except KeyError:
            raise KeyError(f"{key!r} is neither a field of the task nor in its meta {sorted(self.meta)}") from None

    def make_model(self):
        """A fresh model from :attr:`model_factory` (seed torch first: its weights are drawn from the global RNG)."""
        if self.model_factory is None:
            raise ValueError("this task has no model_factory: pass model= to sslkit.engine.fit")
        return self.model_factory()


_FIELDS = frozenset(f.name for f in dataclasses.fields(Task)) - {"meta", "model_factory"}
