"""The contract every semi-supervised method implements, and the small helpers methods share.

An SSL method is one object (USB's ``AlgorithmBase`` idea, without the loop inside it): given the model and
one :class:`Batch` it returns a :class:`LossOutput`. The training loop (:class:`sslkit.engine.Trainer`) owns
everything else: device, optimiser, schedule, EMA teacher, mixed precision, early stopping, the unlabeled
sampler, callbacks, seeding, timing.

The contract, in full:

* :meth:`SSLAlgorithm.setup` ``(model, ctx)`` -- called once per ``fit`` with a :class:`FitContext`
  (number of classes, device, planned steps, the fit's data, the labeled class counts, the trainer's EMA
  teacher). Nothing is written into the algorithm from outside.
* :meth:`SSLAlgorithm.loss` ``(model, batch)`` -- one :class:`Batch`: labeled inputs and labels, unlabeled
  inputs, their indices in the unlabeled pool, their per-sample weights (None = all 1), the global step and
  the epoch. No signature flags.
* :class:`LossOutput` -- ``loss`` (back-propagated), ``logs`` (recorded) and, for methods with an unlabeled
  term, ``unlabeled`` (:class:`UnlabeledLosses`): the per-sample unlabeled losses ``l_j``, their mask
  ``m_j``, and the logits (with their graph) and penultimate features they were computed from. The method's
  logged ``unsup_loss`` is their weighted mean ``mean_j(w_j m_j l_j)`` (:func:`weighted_mean`).
* :meth:`SSLAlgorithm.unlabeled_losses` ``(model, x_u, u_idx)`` -- the same per-sample unlabeled losses for
  any unlabeled rows, without a labeled batch and **without changing any state** (FlexMatch's and
  FreeMatch's statistics, DS3L's meta-network, a teacher): what a selection method (paper C) differentiates
  with respect to the logits, without knowing which algorithm it is.
* :meth:`SSLAlgorithm.hooks` -- :class:`Hook` callbacks with declared schedules (start after N units, then
  every R, before or after the unit), e.g. "after the warm-up, every r epochs" of Pseudo-Label and Ours (Iter).
  A hook that records something per epoch calls ``trainer.log(name=value)``; nothing writes the trainer's
  ``history_`` directly.
* declared attributes, read by the trainer's callbacks and by the wrappers: ``lambda_u`` (the weight λ of
  the unlabeled term, paper C eq. 1) and ``warmup_epochs`` (supervised-only epochs first).

Helpers: :func:`forward` (logits and features of a model), :func:`logits_of`, :func:`masked_ce` (the masked
per-sample consistency loss of FixMatch-style methods), :func:`supervised_ce`, :func:`eval_logits`,
:func:`frozen_bn` (BatchNorm statistics frozen in extra forward passes; paper A App. C, USB's
``Bn_Controller``).
"""

from __future__ import annotations

import contextlib
import numbers
from collections.abc import Callable
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from torch import nn

__all__ = [
    "Batch",
    "FitContext",
    "Hook",
    "LossOutput",
    "SSLAlgorithm",
    "UnlabeledLosses",
    "eval_logits",
    "forward",
    "frozen_bn",
    "logits_of",
    "masked_ce",
    "supervised_ce",
    "weighted_mean",
]

HOOK_UNITS = ("epoch", "iteration")
HOOK_POINTS = ("after", "before")


@dataclass
class Batch:
    """One training step's inputs, as the trainer passes them to :meth:`SSLAlgorithm.loss`.

    ``x_l, y_l``: labeled inputs and int64 labels. ``x_u``: unlabeled inputs (None for methods that use
    none). ``u_idx``: int64 indices of the rows of ``x_u`` in the unlabeled pool ``X_u`` (per-sample state
    such as FlexMatch's; paper C's coreset). ``u_weight``: per-sample weights of the unlabeled loss (paper C
    eq. 2 with CRAIG / GradMatch weights), None meaning all 1 -- methods combine their per-sample losses with
    :func:`weighted_mean`. ``step``: global optimiser step (0-based); ``epoch``: completed epochs.
    A batch is always a training step: stateful methods (FlexMatch, FreeMatch) update their statistics; an
    inspection of per-sample losses uses :meth:`SSLAlgorithm.unlabeled_losses` instead.
    """

    x_l: torch.Tensor
    y_l: torch.Tensor
    x_u: torch.Tensor | None = None
    u_idx: torch.Tensor | None = None
    u_weight: torch.Tensor | None = None
    step: int = 0
    epoch: int = 0

    def __post_init__(self):
        # shapes and dtypes only (host metadata: no device synchronisation on the training path)
        for name in ("x_l", "y_l", "x_u", "u_idx", "u_weight"):
            v = getattr(self, name)
            if v is not None and not isinstance(v, torch.Tensor):
                raise TypeError(f"Batch: {name} must be a torch tensor, got {type(v).__name__}")
        if self.y_l.dim() != 1 or self.y_l.shape[0] != self.x_l.shape[0]:
            raise ValueError(
                f"Batch: y_l must have one label per row of x_l ({self.x_l.shape[0]}), got {tuple(self.y_l.shape)}"
            )
        if self.y_l.is_floating_point():
            raise TypeError(f"Batch: y_l must hold integer labels, got {self.y_l.dtype}")
        n_u = None if self.x_u is None else self.x_u.shape[0]
        for name in ("u_idx", "u_weight"):
            v = getattr(self, name)
            if v is not None and (n_u is None or v.dim() != 1 or v.shape[0] != n_u):
                raise ValueError(
                    f"Batch: {name} must have one entry per row of x_u ({n_u}), got shape {tuple(v.shape)}"
                )
        if self.u_idx is not None and (self.u_idx.is_floating_point() or self.u_idx.dtype == torch.bool):
            raise ValueError(f"Batch: u_idx must hold integer indices into X_u, got {self.u_idx.dtype}")


@dataclass
class FitContext:
    """What an algorithm learns about the fit at :meth:`SSLAlgorithm.setup` (built by the trainer).

    ``num_classes``, ``device``; ``total_steps``: the planned number of optimiser steps (for ramp-ups, None
    outside a trainer); ``steps_per_epoch`` (None when epochs follow the unlabeled pool); ``data``: the fit's
    device tensors ``X_l, y_l, X_u, X_val, y_val`` (missing keys mean not given); ``ema_model``: the trainer's
    EMA teacher (None without ``ema_decay``). Built by hand for use outside a trainer:
    ``FitContext(num_classes=3, device="cpu", data={"y_l": y})``.
    """

    num_classes: int
    device: torch.device | str = "cpu"
    total_steps: int | None = None
    steps_per_epoch: int | None = None
    data: dict = field(default_factory=dict)
    ema_model: nn.Module | None = None

    def __post_init__(self):
        if (
            isinstance(self.num_classes, bool)
            or not isinstance(self.num_classes, numbers.Integral)
            or self.num_classes < 1
        ):
            raise ValueError(f"num_classes must be a positive integer, got {self.num_classes!r}")
        self.num_classes = int(self.num_classes)
        self.device = torch.device(self.device)
        if not isinstance(self.data, dict):
            raise TypeError(f"data must be a dict of tensors, got {type(self.data).__name__}")

    def get(self, key: str):
        """``data[key]``, or None when that array was not given."""
        return self.data.get(key)

    @property
    def class_counts(self) -> torch.Tensor | None:
        """Labeled samples per class (int64, ``num_classes``), or None without ``y_l``."""
        y = self.get("y_l")
        return None if y is None else torch.bincount(torch.as_tensor(y).reshape(-1).cpu(), minlength=self.num_classes)

    @property
    def num_unlabeled(self) -> int | None:
        """Size of the unlabeled pool ``X_u``, or None without it."""
        x = self.get("X_u")
        return None if x is None else int(x.shape[0])


@dataclass
class UnlabeledLosses:
    """Per-sample unlabeled losses of one batch (the ``l_u(x_j, θ)`` and ``m_j`` of paper C eq. 2).

    ``losses``: (B,) ``l_j`` with their graph; ``mask``: (B,) 0/1 floats or None (all 1) -- or, for the
    robust-SSL reweighting methods (L2RW, DS3L), their learned non-negative weights, detached (paper C §2:
    robust SSL "replaces the mask vector m with a weight vector w"); ``logits``: (B, C)
    the student logits the losses depend on (with their graph), so ``∂l_j/∂z_j`` comes from
    ``torch.autograd.grad(losses.sum(), logits)``; ``features``: (B, D) the penultimate features those logits
    were computed from (None when the model returns bare logits) -- together the closed-form last-layer
    gradients of paper C §3.4.
    """

    losses: torch.Tensor
    mask: torch.Tensor | None = None
    logits: torch.Tensor | None = None
    features: torch.Tensor | None = None

    def __post_init__(self):
        if not isinstance(self.losses, torch.Tensor) or self.losses.dim() != 1:
            raise TypeError("UnlabeledLosses.losses must be a 1-D tensor (one loss per unlabeled sample)")
        n = self.losses.shape[0]
        for name in ("mask", "logits", "features"):
            v = getattr(self, name)
            if v is not None and (not isinstance(v, torch.Tensor) or v.shape[0] != n):
                raise ValueError(f"UnlabeledLosses.{name} must be a tensor with {n} rows (one per loss)")

    def masked(self) -> torch.Tensor:
        """``m_j l_j`` (B,)."""
        return self.losses if self.mask is None else self.losses * self.mask


@dataclass
class LossOutput:
    """What :meth:`SSLAlgorithm.loss` returns.

    ``loss``: scalar tensor that the trainer back-propagates.
    ``logs``: name -> value recorded in the trainer's ``history_`` (mean over the epoch's iterations).
    Values may be Python floats or 0-d tensors; detached 0-d tensors are preferred on GPU because the
    trainer then averages them on the device, without a host synchronisation per step. The key
    ``"loss"``, when present, is the epoch's reported training loss; otherwise ``loss`` itself is.
    ``loss`` and ``logs["loss"]`` may differ, e.g. with the non-negative risk correction of nnPU / paper A.
    ``unlabeled``: :class:`UnlabeledLosses` of the unlabeled term, or None (no unlabeled term this step).
    """

    loss: torch.Tensor
    logs: dict = field(default_factory=dict)
    unlabeled: UnlabeledLosses | None = None

    def __post_init__(self):
        if not isinstance(self.loss, torch.Tensor) or self.loss.dim() != 0:
            raise TypeError(
                f"LossOutput.loss must be a 0-d tensor, got {type(self.loss).__name__}"
                + (f" of shape {tuple(self.loss.shape)}" if isinstance(self.loss, torch.Tensor) else "")
            )
        if not isinstance(self.logs, dict):
            raise TypeError(f"LossOutput.logs must be a dict, got {type(self.logs).__name__}")
        if self.unlabeled is not None and not isinstance(self.unlabeled, UnlabeledLosses):
            raise TypeError(
                f"LossOutput.unlabeled must be None or UnlabeledLosses, got {type(self.unlabeled).__name__}"
            )


@dataclass
class Hook:
    """A callback ``fn(trainer)`` with a declared schedule.

    ``unit``: "epoch" or "iteration" (optimiser steps). ``when``: "after" (after the unit: after the
    optimiser step and EMA update of an iteration; after the validation and history record of an epoch) or
    "before" (before the unit starts: before the unlabeled batch of an iteration is drawn; before
    the first batch of an epoch). ``start``, ``every``: the hook fires when the count of completed units
    ``c`` satisfies ``c >= start`` and ``(c - start) % every == 0`` (``every=None``: once, at ``c == start``).
    "after" hooks see ``c >= 1``; "before" hooks also ``c = 0`` (the start of training), so an "after" hook
    with ``every=None`` needs ``start >= 1`` (refused otherwise: it would never fire). So "after a warm-up
    of w epochs, then every r epochs" is ``Hook(fn, start=w, every=r)`` and "before epoch 1, then before
    every R-th epoch" is ``Hook(fn, every=R, when="before")``. A hook may set ``trainer.stop_training``.
    """

    fn: Callable
    every: int | None = 1
    unit: str = "epoch"
    name: str | None = None
    start: int = 0
    when: str = "after"

    def __post_init__(self):
        if not callable(self.fn):
            raise TypeError(f"Hook fn must be callable, got {self.fn!r}")
        if self.every is not None:
            if isinstance(self.every, bool) or not isinstance(self.every, numbers.Integral) or self.every < 1:
                raise ValueError(f"Hook every must be a positive integer or None (once), got {self.every!r}")
            self.every = int(self.every)
        if isinstance(self.start, bool) or not isinstance(self.start, numbers.Integral) or self.start < 0:
            raise ValueError(f"Hook start must be an integer >= 0, got {self.start!r}")
        self.start = int(self.start)
        if self.unit not in HOOK_UNITS:
            raise ValueError(f"Hook unit must be one of {HOOK_UNITS}, got {self.unit!r}")
        if self.when not in HOOK_POINTS:
            raise ValueError(f"Hook when must be one of {HOOK_POINTS}, got {self.when!r}")
        if self.every is None and self.when == "after" and self.start == 0:
            raise ValueError(
                "Hook every=None fires once, at start; an 'after' hook never sees a count of 0, so with "
                "start=0 it would never fire: give start >= 1 (after that many units) or when='before'"
            )
        if self.name is None:
            self.name = getattr(self.fn, "__name__", type(self.fn).__name__)

    def due(self, count: int) -> bool:
        """True when the hook fires at ``count`` completed units."""
        if count < self.start or (self.when == "after" and count < 1):
            return False
        return count == self.start if self.every is None else (count - self.start) % self.every == 0


class SSLAlgorithm:
    """Base class of every method: computes the loss of one :class:`Batch` (module docstring).

    Attributes (class defaults; a method sets its own in ``__init__``):

    * ``name`` -- short identifier used in logs and results;
    * ``uses_unlabeled`` -- when False the trainer never draws unlabeled batches and ``batch.x_u`` is None;
    * ``lambda_u`` -- the weight λ of the unlabeled term (paper C eq. 1-2: ``L_S + λ L_U``); Retrieve's step
      ``λ_t`` and the robust wrappers (L2RW, DS3L) read it. 1.0 for a method whose unlabeled term carries no
      separate weight (paper A's risk rewrite, where the coefficients ``c_j`` play that role);
    * ``warmup_epochs`` -- supervised-only epochs before the unlabeled term starts (Pseudo-Label's labelling,
      Ours (Iter)'s first a*); 0 for none. Early stopping may leave them unmonitored
      (:class:`sslkit.engine.EarlyStopping` ``start_epoch``).

    Methods to override: :meth:`loss` (required), :meth:`unlabeled_losses` (for a method with a per-sample
    unlabeled term), :meth:`setup` and :meth:`hooks` (optional). The trainer calls ``loss`` in training mode,
    inside autocast when mixed precision is on.
    """

    name: str = "base"
    uses_unlabeled: bool = False
    lambda_u: float = 1.0
    warmup_epochs: int = 0

    def setup(self, model: nn.Module, ctx: FitContext) -> None:
        """Called once at the start of ``fit`` (after the model is on ``ctx.device``). Default: nothing."""

    def loss(self, model: nn.Module, batch: Batch) -> LossOutput:
        """Return the :class:`LossOutput` of one step."""
        raise NotImplementedError(f"{type(self).__name__} must implement loss()")

    def unlabeled_losses(
        self, model: nn.Module, x_u: torch.Tensor, u_idx: torch.Tensor | None = None
    ) -> UnlabeledLosses:
        """The per-sample unlabeled losses ``m_j l_u(x_j)`` of the rows ``x_u`` (their indices ``u_idx`` in the
        unlabeled pool, when known) with the logits and features they come from -- the
        :class:`UnlabeledLosses` that :meth:`loss` returns for the same rows, without a labeled batch.

        Pure: it changes no state of the algorithm (statistics, thresholds, meta-networks, teachers). It
        runs the model in whatever mode the caller set and may draw from the global RNG (augmented views,
        VAT's random direction), as a training step would. Default: the method has none (``NotImplementedError``).
        """
        raise NotImplementedError(
            f"{type(self).__name__} has no per-sample unlabeled losses (its unlabeled term is not a mean of "
            "per-sample losses): it cannot drive a gradient-based coreset selection"
        )

    def has_unlabeled_losses(self) -> bool:
        """True when :meth:`unlabeled_losses` is implemented (a wrapper asks its base)."""
        return type(self).unlabeled_losses is not SSLAlgorithm.unlabeled_losses

    def hooks(self) -> list[Hook]:
        """Callbacks the trainer registers in addition to the user's. Default: none."""
        return []

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


def forward(model: nn.Module, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
    """``(logits, features)`` of ``model`` on ``x`` (features None for a model that returns bare logits)."""
    out = model(x)
    if isinstance(out, (tuple, list)):
        return out[0], (out[1] if len(out) > 1 else None)
    return out, None


def weighted_mean(values: torch.Tensor, weight: torch.Tensor | None) -> torch.Tensor:
    """``mean_j(w_j v_j)`` over the batch (``values.mean()`` when ``weight`` is None): the unlabeled term of
    paper C eq. 2 with per-sample weights, the mean taken over the whole batch (USB's convention)."""
    if weight is None:
        return values.mean()
    if weight.shape != values.shape:
        raise ValueError(
            f"unlabeled weights have shape {tuple(weight.shape)} but the batch losses {tuple(values.shape)}"
        )
    return (values * weight.to(values.dtype)).mean()


def masked_ce(logits: torch.Tensor, labels: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Per-sample ``mask_j · CE(logits_j, labels_j)`` (B,): the consistency loss of FixMatch, FlexMatch,
    FreeMatch and Pseudo-Label (USB's ``consistency_loss``, 'ce'); :func:`weighted_mean` of it is the term."""
    return F.cross_entropy(logits.float(), labels, reduction="none") * mask


def logits_of(model: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """Forward ``x`` and return the logits (models return ``(logits, features)``; a bare tensor is
    accepted too)."""
    out = model(x)
    if isinstance(out, (tuple, list)):
        return out[0]
    return out


def supervised_ce(logits: torch.Tensor, y: torch.Tensor, class_weights: torch.Tensor | None = None) -> torch.Tensor:
    """Supervised term: the batch mean of cross-entropy, or with ``class_weights`` (from
    :func:`sslkit.algorithms.risk_terms.prior_class_weights`) the batch mean of ``w_{y_s} CE_s`` -- paper A's PN
    risk Σ_j θ_j R̂_jj."""
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
            return torch.cat([logits_of(model, X[i : i + chunk]).float() for i in range(0, X.shape[0], chunk)])
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
    changed = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm) and m.track_running_stats]
    for m in changed:
        m.track_running_stats = False
    try:
        yield model
    finally:
        for m in changed:
            m.track_running_stats = True
