"""The interface every semi-supervised method implements, and small helpers shared by methods.

An SSL method is one object (USB's ``AlgorithmBase`` idea, without the loop inside it): given the model, a
labeled batch and an unlabeled batch, it returns the loss to back-propagate and the numbers to log. The
training loop (:class:`sslkit.engine.Trainer`) owns everything else: device, optimiser, schedule, EMA,
mixed precision, early stopping, hooks, seeding, timing.

Contents:

* :class:`LossOutput` -- ``loss`` (back-propagated) and ``logs`` (recorded); they may differ, e.g. with
  the non-negative risk correction of nnPU / paper A, where the gradient step uses ``-gamma * Delta`` but
  the logged risk is the corrected value (reference-implementations.md section 6, item 10).
* :class:`SSLAlgorithm` -- base class: ``name``, ``uses_unlabeled``, ``setup``, ``loss``, ``hooks``.
* :class:`Hook` -- ``fn(trainer)`` called every ``every`` epochs or iterations (defined here so that
  algorithms can declare hooks without importing the engine; re-exported by :mod:`sslkit.engine`).
* :func:`frozen_bn` -- context manager that stops BatchNorm running-statistics updates during extra
  forward passes (VAT's adversarial passes, paper A App. C; USB's ``Bn_Controller``).
* :func:`logits_of` -- the logits of a model that returns ``(logits, features)``.
* :func:`supervised_ce` -- the supervised term of an SSL loss: plain cross-entropy, or with per-class weights
  (:func:`sslkit.algorithms.risk_rewrite.prior_class_weights`) paper A's PN risk ``Σ_j θ_j R̂_jj``.
"""

from __future__ import annotations

import contextlib
import numbers
from dataclasses import dataclass, field
from typing import Callable

import torch
import torch.nn.functional as F
from torch import nn

__all__ = ["LossOutput", "SSLAlgorithm", "Hook", "frozen_bn", "logits_of", "supervised_ce"]

HOOK_UNITS = ("epoch", "iteration")


@dataclass
class LossOutput:
    """What :meth:`SSLAlgorithm.loss` returns.

    ``loss``: scalar tensor that the trainer back-propagates.
    ``logs``: name -> value recorded in the trainer's ``history_`` (mean over the epoch's iterations).
    Values may be Python floats or 0-d tensors; detached 0-d tensors are preferred on GPU because the
    trainer then averages them on the device, without a host synchronisation per step. The key
    ``"loss"``, when present, is the epoch's reported training loss; otherwise ``loss`` itself is.
    """

    loss: torch.Tensor
    logs: dict = field(default_factory=dict)

    def __post_init__(self):
        if not isinstance(self.loss, torch.Tensor) or self.loss.dim() != 0:
            raise TypeError(f"LossOutput.loss must be a 0-d tensor, got {type(self.loss).__name__}"
                            + (f" of shape {tuple(self.loss.shape)}" if isinstance(self.loss, torch.Tensor) else ""))
        if not isinstance(self.logs, dict):
            raise TypeError(f"LossOutput.logs must be a dict, got {type(self.logs).__name__}")


@dataclass
class Hook:
    """Call ``fn(trainer)`` after every ``every``-th epoch or iteration (``unit``).

    Iteration hooks run right after the optimiser step (and EMA update) of iterations ``every``,
    ``2*every``, ... counted globally from the start of ``fit``; epoch hooks run after the epoch's
    validation and history record. A hook may set ``trainer.stop_training = True``.
    """

    fn: Callable
    every: int = 1
    unit: str = "epoch"
    name: str | None = None

    def __post_init__(self):
        if not callable(self.fn):
            raise TypeError(f"Hook fn must be callable, got {self.fn!r}")
        if isinstance(self.every, bool) or not isinstance(self.every, numbers.Integral) or self.every < 1:
            raise ValueError(f"Hook every must be a positive integer, got {self.every!r}")
        self.every = int(self.every)
        if self.unit not in HOOK_UNITS:
            raise ValueError(f"Hook unit must be one of {HOOK_UNITS}, got {self.unit!r}")
        if self.name is None:
            self.name = getattr(self.fn, "__name__", type(self.fn).__name__)

    def due(self, count: int) -> bool:
        """True when the hook fires after ``count`` completed units (count >= 1)."""
        return count > 0 and count % self.every == 0


class SSLAlgorithm:
    """Base class of every method: computes a loss from a labeled and an unlabeled batch.

    Attributes
    ----------
    name : str
        Short identifier used in logs and results.
    uses_unlabeled : bool
        When False the trainer passes ``x_u=None`` and never draws unlabeled batches.
    total_steps : int or None
        Set by the trainer before :meth:`setup` to the planned number of optimiser steps
        (``epochs * iterations_per_epoch``), for ramp-ups such as USB's ``clip(t / (0.4 T), 0, 1)``.
    needs_unlabeled_indices : bool
        When True the trainer also passes ``u_idx=`` (the unlabeled batch's indices into ``X_u``) to
        :meth:`loss`, for per-sample state such as FlexMatch's latest confident label.
    train_data : dict or None
        Set by the trainer before :meth:`setup`: the device tensors ``X_l, y_l, X_u, X_val, y_val`` of the
        fit (None where not given), e.g. for the labeled class counts and validation data of paper A.

    Methods to override: :meth:`loss` (required), :meth:`setup` and :meth:`hooks` (optional).
    The trainer calls ``loss`` in training mode, inside autocast when mixed precision is on.
    """

    name: str = "base"
    uses_unlabeled: bool = False
    total_steps: int | None = None
    needs_unlabeled_indices: bool = False
    train_data: dict | None = None

    def setup(self, model: nn.Module, *, num_classes: int, device: torch.device) -> None:
        """Called once at the start of ``fit`` (after the model is on ``device``). Default: nothing."""

    def loss(self, model: nn.Module, x_l: torch.Tensor, y_l: torch.Tensor, x_u: torch.Tensor | None,
             *, step: int) -> LossOutput:
        """Return the :class:`LossOutput` for one step (``step`` = global iteration index, from 0)."""
        raise NotImplementedError(f"{type(self).__name__} must implement loss()")

    def hooks(self) -> list[Hook]:
        """Hooks the trainer registers in addition to the user's. Default: none."""
        return []

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


def logits_of(model: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """Forward ``x`` and return the logits (models return ``(logits, features)``; a bare tensor is
    accepted too)."""
    out = model(x)
    if isinstance(out, (tuple, list)):
        return out[0]
    return out


def supervised_ce(logits: torch.Tensor, y: torch.Tensor, class_weights: torch.Tensor | None = None) -> torch.Tensor:
    """Supervised term: the batch mean of cross-entropy, or with ``class_weights`` (from
    :func:`sslkit.algorithms.risk_rewrite.prior_class_weights`) the batch mean of ``w_{y_s} CE_s`` -- paper A's PN risk Σ_j θ_j R̂_jj."""
    if class_weights is None:
        return F.cross_entropy(logits.float(), y)
    return (F.cross_entropy(logits.float(), y, reduction="none") * class_weights[y]).mean()


def eval_logits(model: nn.Module, X: torch.Tensor, chunk: int = 1024) -> torch.Tensor:
    """Logits of ``model`` on ``X`` in eval mode (dropout off, BatchNorm running statistics) without
    gradients, in chunks of ``chunk`` rows, as float32 on ``X``'s device; each module's mode is restored."""
    if isinstance(chunk, bool) or not isinstance(chunk, numbers.Integral) or chunk < 1:
        raise ValueError(f"chunk must be a positive integer, got {chunk!r}")
    flags = [(m, m.training) for m in model.modules()]
    model.eval()
    try:
        with torch.no_grad():
            return torch.cat([logits_of(model, X[i:i + chunk]).float() for i in range(0, X.shape[0], chunk)])
    finally:
        for m, flag in flags:
            m.training = flag


@contextlib.contextmanager
def frozen_bn(model: nn.Module):
    """Context manager: BatchNorm layers of ``model`` do not update their running statistics.

    Inside the block, BatchNorm layers in training mode still normalise with the current batch's
    statistics (so gradients are those of the normal training forward), but ``running_mean``,
    ``running_var`` and ``num_batches_tracked`` stay untouched. Used for the extra forward passes of
    VAT ("Batch-normalization running statistics are frozen during the adversarial perturbation
    computation", paper A App. C) and for unlabeled passes in USB-style methods. On exit (also on an
    exception) the layers update their statistics again.

    Implementation: temporarily sets ``track_running_stats = False`` on every ``_BatchNorm`` that had it
    on; PyTorch's BatchNorm then neither reads nor writes the running buffers in training mode, and still
    uses them in eval mode.
    """
    changed = [m for m in model.modules()
               if isinstance(m, nn.modules.batchnorm._BatchNorm) and m.track_running_stats]
    for m in changed:
        m.track_running_stats = False
    try:
        yield model
    finally:
        for m in changed:
            m.track_running_stats = True
