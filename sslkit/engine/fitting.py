"""The one fit: every run of the papers, the pipeline and the how-tos train a :class:`~sslkit.task.Task` through
:func:`fit` with a :class:`TrainConfig`.

The order of what happens is fixed here, so that a run is reproducible bit for bit on CPU: seed every RNG
(:func:`sslkit.seeding.seed_everything`), build the model from the task (its initial weights come from that seed),
build the :class:`~sslkit.engine.Trainer` and fit it on the task's labeled, unlabeled and validation sets
(``Trainer.fit`` seeds again, so the training itself does not depend on what the model's construction drew).
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Mapping
from types import MappingProxyType

from .trainer import Trainer

__all__ = ["TrainConfig", "fit"]

#: the Trainer arguments :func:`fit` sets itself, from the task and its own arguments
_FIT_ARGUMENTS = ("model", "algorithm", "device", "hooks", "seed", "progress", "num_classes")
#: the Trainer options a TrainConfig may hold: every other constructor argument
TRAINER_OPTIONS = tuple(p for p in inspect.signature(Trainer.__init__).parameters if p not in ("self", *_FIT_ARGUMENTS))


@dataclasses.dataclass(frozen=True, init=False)
class TrainConfig:
    """The training protocol of a run: the :class:`~sslkit.engine.Trainer` options it sets (optimiser, lr, weight
    decay, schedule, epochs, batch sizes, EMA, early stopping...); an option left out keeps the Trainer's default.

    ``TrainConfig(optimizer="adam", lr=1e-3, epochs=200)``; :meth:`replace` gives a changed copy. An unknown
    option is refused here (a ``ValueError`` naming the valid ones), not when the run starts.
    """

    options: Mapping

    def __init__(self, **options):
        unknown = sorted(set(options) - set(TRAINER_OPTIONS))
        if unknown:
            raise ValueError(f"unknown Trainer options {unknown}; a TrainConfig takes {list(TRAINER_OPTIONS)}")
        object.__setattr__(self, "options", MappingProxyType(dict(options)))

    def replace(self, **options) -> TrainConfig:
        """A copy with ``options`` changed or added."""
        return TrainConfig(**{**self.options, **options})

    def __repr__(self) -> str:
        return "TrainConfig(" + ", ".join(f"{k}={v!r}" for k, v in self.options.items()) + ")"


def fit(
    task,
    algorithm,
    config: TrainConfig | None = None,
    *,
    seed: int = 0,
    device="auto",
    hooks=(),
    progress=False,
    model=None,
) -> Trainer:
    """Train ``algorithm`` on ``task`` with the protocol ``config``; return the fitted :class:`~sslkit.engine.Trainer`.

    ``model`` None (the default): :func:`~sslkit.seeding.seed_everything` ``(seed)``, then ``task.make_model()``.
    A module (trained in place from its weights) or a function of no arguments (the Trainer builds it after
    seeding) is used as it is. ``hooks``: :class:`~sslkit.engine.Hook` s of this run (selection, curves...).
    The trainer fits on ``task.X_l, task.y_l, task.X_u, task.X_val, task.y_val``; score it on the test set with
    ``trainer.score(task.X_test, task.y_test)``.
    """
    from sslkit.seeding import seed_everything

    config = TrainConfig() if config is None else config
    if not isinstance(config, TrainConfig):
        raise TypeError(f"config must be a TrainConfig, got {type(config).__name__}")
    if model is None:
        seed_everything(seed)
        model = task.make_model()
    trainer = Trainer(
        model,
        algorithm,
        device=device,
        hooks=hooks,
        seed=seed,
        progress=progress,
        num_classes=task.num_classes,
        **config.options,
    )
    return trainer.fit(task.X_l, task.y_l, task.X_u, task.X_val, task.y_val)
