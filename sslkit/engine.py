"""The one training loop: :class:`Trainer` trains any :class:`~sslkit.algorithms.SSLAlgorithm`.

The algorithm computes the loss of one :class:`~sslkit.algorithms.Batch` (the contract is in
:mod:`sslkit.algorithms.base`); the loop owns everything else:

* **device** -- ``"auto"`` picks CUDA, then Apple MPS, then CPU (:func:`sslkit.device.resolve_device`).
  The data (numpy arrays or tensors) are moved to the device **once**, as whole tensors; batches are
  gathered on the device by index. Features are converted to float32; labels to int64.
* **batches** -- labeled: by default one epoch is one pass over the labeled set in a fresh random order,
  i.e. ``ceil(n_l / batch_size)`` iterations, and the last, smaller batch is **kept** (with BatchNorm
  models avoid ``n_l % batch_size == 1``). With ``iterations_per_epoch`` set (FixMatch-style
  training), every epoch has exactly that many iterations and labeled batches of ``min(batch_size, n_l)``
  are cut from an endless stream of random permutations. With ``iterations_per_epoch="unlabeled"`` an
  epoch is one pass over the *current* unlabeled pool, ``ceil(pool / unlabeled_batch_size)`` iterations,
  counted at the start of each epoch (paper C §3.5: one epoch over a coreset is ``|S| / batch`` iterations).
* **the unlabeled sampler** -- ``trainer.sampler_`` (:class:`UnlabeledSampler`) cuts unlabeled batches of
  ``min(unlabeled_batch_size, pool)`` from an endless stream of random permutations of the pool, independent
  of the labeled epochs. A callback may restrict it to a subset of ``X_u`` with per-sample weights
  (``trainer.sampler_.restrict(indices, weights)``) or return it to the full pool (``reset()``); the
  weights reach the algorithm as ``batch.u_weight``. Both index streams use their own seeded CPU
  :class:`torch.Generator`.
* **mixed precision** -- ``amp="auto"``: autocast (bfloat16 where supported, else float16 with a
  ``GradScaler``) on CUDA, off elsewhere. ``amp=True`` off CUDA warns (``RuntimeWarning``) and runs in
  float32; ``amp=False`` is always float32.
* **optimiser and schedule** -- ``"adam"`` (paper A App. C: lr 1e-3, weight decay 1e-4; PyTorch's
  coupled L2 weight decay) or ``"sgd"`` (momentum 0.9, Nesterov, weight decay 5e-4 as in USB/FixMatch
  for papers B/C). ``schedule="cosine"`` is FixMatch's ``lr_t = lr * cos(7 pi t / (16 T))`` with ``t``
  the number of optimiser steps taken and ``T = epochs * iterations_per_epoch`` the planned total (an early
  stop does not change ``T``), or ``total_steps`` when given (needed when epochs change length, as with a
  coreset). Weight decay applies to all parameters unless
  ``decay_norm_and_bias=False`` (USB's ``bn_wd_skip``: no decay on biases and normalisation layers).
* **EMA** -- with ``ema_decay=d``, after every optimiser step the EMA parameters become
  ``d * ema + (1 - d) * param`` (starting from the initial parameters) and the buffers (BatchNorm
  statistics) are **copied**, as in USB; ``ema_warmup=True`` uses ``d_t = min(d, 1 - 1/(t+1))`` after the
  t-th step (Mean Teacher's warm-up). The EMA model exists once and is the algorithms' teacher
  (``ctx.ema_model`` at setup, e.g. :class:`~sslkit.algorithms.MeanTeacher`). When EMA is on, validation, early
  stopping,
  :meth:`Trainer.predict`, :meth:`Trainer.predict_proba` and :meth:`Trainer.score` use the EMA weights
  (``trainer.ema_model_``); ``trainer.model`` keeps the raw weights (``trainer.eval_model`` is whichever is
  used for evaluation).
* **early stopping** on validation accuracy (paper A App. C: patience 20 epochs, minimum improvement
  1e-4): an epoch improves when ``val_acc > best + min_delta``; training stops after ``patience``
  consecutive epochs without improvement, and the weights (raw and EMA) of the best epoch are restored.
  Without early stopping the final weights are kept, but ``best_epoch_`` / ``best_val_acc_`` are still
  reported when validation data are given.
* **callbacks** -- :class:`Hook` ``(fn, every, unit, start=0, when="after")``: ``fn(trainer)`` on a
  declared schedule, before or after epochs or iterations (see :class:`~sslkit.algorithms.Hook`); the user's
  hooks run first, then the algorithm's. Hooks see ``trainer.epoch`` (completed epochs),
  ``trainer.iteration`` (completed optimiser steps), ``trainer.model``, ``trainer.algorithm``,
  ``trainer.history_``, ``trainer.data_`` (the device tensors ``X_l, y_l, X_u, X_val, y_val``; None
  where not given), ``trainer.sampler_``, ``trainer.context_`` (the algorithm's
  :class:`~sslkit.algorithms.FitContext`) and may set ``trainer.stop_training = True`` (an iteration hook
  ends the epoch early; the partial epoch is still validated and recorded).
* **seeding** -- ``fit`` calls :func:`sslkit.seeding.seed_everything(seed)` (global RNGs, used by
  dropout and by algorithms) and seeds the batch-index generators; on CPU the same seed and the same
  initial model give bit-identical weights and history (except the ``seconds`` entries).
* **timing** -- ``timings_``: wall-clock seconds per phase, ``setup`` (checks, transfer to the device),
  ``train`` (optimiser steps, excluding iteration hooks), ``eval`` (validation), ``hooks`` (all hooks) and
  one ``hook:<name>`` entry per hook, and ``total`` (the whole ``fit``); CUDA/MPS are synchronised before
  each clock reading.
* **progress** -- a ``tqdm.auto`` bar over epochs; silenced by ``progress=False`` or by the environment
  variable ``SSLKIT_PROGRESS=0``.

``history_`` holds one dict per epoch: ``epoch`` (1-based), ``iterations``, ``loss`` (mean of the logged
``"loss"``, else of the back-propagated loss), the mean of every other key of
:attr:`LossOutput.logs`, ``val_acc`` (when validation data are given), ``lr`` (learning rate after the
epoch's last step), ``seconds`` (wall-clock time of the epoch, excluding epoch hooks) and whatever the hooks
recorded with :meth:`Trainer.log` (the only way anything else writes a row).

Failures are loud: a non-finite epoch loss, or weights (or BatchNorm statistics) that a step left NaN or
infinite although the loss was finite, raise ``FloatingPointError`` naming the epoch and its iterations
(checked once per epoch: one host synchronisation).
"""

from __future__ import annotations

import contextlib
import copy
import math
import numbers
import os
import time
import warnings
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from sslkit._checks import check_count, check_seed
from sslkit.algorithms.base import Batch, FitContext, Hook, LossOutput, SSLAlgorithm, logits_of
from sslkit.device import resolve_device
from sslkit.models.utils import param_groups
from sslkit.seeding import derive_seeds, make_generator, seed_everything

__all__ = ["EarlyStopping", "Hook", "Trainer", "UnlabeledSampler", "cosine_lr_factor"]

_OPTIMIZERS = ("adam", "sgd")
#: the keys of a history row the trainer writes itself (Trainer.log refuses them)
_OWN_KEYS = ("epoch", "iterations", "loss", "val_acc", "lr", "seconds")
_SCHEDULES = (None, "cosine")


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


# ----------------------------------------------------------------------------------------- data checks


def _as_features(X, name: str, device: torch.device) -> torch.Tensor:
    """Validate a feature array (numpy or tensor, n rows, floating, finite) and return float32 on device."""
    if isinstance(X, torch.Tensor):
        t = X.detach()
    else:
        try:
            t = torch.from_numpy(np.ascontiguousarray(np.asarray(X)))
        except TypeError as exc:
            raise TypeError(f"{name} must be a numeric numpy array or torch tensor, got {type(X).__name__}") from exc
    if not t.is_floating_point():
        raise TypeError(
            f"{name} must have a floating dtype, got {t.dtype} (convert images with sslkit.data.images_to_tensor)"
        )
    if t.dim() < 2:
        raise ValueError(f"{name} must have shape (n_samples, ...) with at least 2 dimensions, got {tuple(t.shape)}")
    if t.shape[0] == 0:
        raise ValueError(f"{name} is empty (0 samples)")
    t = t.to(torch.float32).to(device)
    if not bool(torch.isfinite(t).all()):
        raise ValueError(f"{name} contains NaN or infinite values")
    return t


def _as_labels(y, name: str, n: int, x_name: str, device: torch.device) -> torch.Tensor:
    """Validate integer class labels of length ``n`` and return int64 on device."""
    if isinstance(y, torch.Tensor):
        if y.dtype == torch.bool or y.is_floating_point() or y.is_complex():
            raise TypeError(f"{name} must contain integer class labels, got dtype {y.dtype}")
        t = y.detach()
    else:
        arr = np.asarray(y)
        if arr.dtype.kind not in "iu":
            raise TypeError(f"{name} must contain integer class labels, got dtype {arr.dtype}")
        t = torch.from_numpy(np.ascontiguousarray(arr.astype(np.int64, copy=False)))
    if t.dim() != 1:
        raise ValueError(f"{name} must be 1-D, got shape {tuple(t.shape)}")
    if t.shape[0] != n:
        raise ValueError(f"{x_name} has {n} samples but {name} has {t.shape[0]} labels")
    return t.to(torch.int64).to(device)


def _check_label_range(y: torch.Tensor, name: str, num_classes: int) -> None:
    lo, hi = int(y.min()), int(y.max())
    if lo < 0 or hi >= num_classes:
        raise ValueError(f"{name} has labels in [{lo}, {hi}], outside [0, num_classes) = [0, {num_classes})")


def check_hooks(hooks, name: str) -> list:
    """``hooks`` as a list of :class:`Hook` objects, none registered twice (an equal hook -- the same callback
    at the same schedule, e.g. ``cb.hooks() + cb.hooks()`` -- would fire twice)."""
    hooks = list(hooks)
    for i, h in enumerate(hooks):
        if not isinstance(h, Hook):
            raise TypeError(
                f"{name} must contain Hook objects (wrap a function as Hook(fn, every=..., unit=...)), "
                f"got {type(h).__name__}"
            )
        if any(h is g or h == g for g in hooks[:i]):
            raise ValueError(f"{name}: hook {h.name!r} is registered twice (it would fire twice): register it once")
    return hooks


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    elif device.type == "mps":
        torch.mps.synchronize()


class _PermutationStream:
    """Endless stream of index batches cut from successive random permutations of ``range(n)``."""

    def __init__(self, n: int, batch_size: int, generator: torch.Generator, device: torch.device):
        self.n, self.batch_size = n, min(batch_size, n)
        self.generator, self.device = generator, device
        self.buffer = torch.empty(0, dtype=torch.int64, device=device)

    def next(self) -> torch.Tensor:
        while self.buffer.numel() < self.batch_size:
            perm = torch.randperm(self.n, generator=self.generator).to(self.device)
            self.buffer = torch.cat([self.buffer, perm])
        batch, self.buffer = self.buffer[: self.batch_size], self.buffer[self.batch_size :]
        return batch


class UnlabeledSampler:
    """The unlabeled batches of a fit: the full pool ``range(n)`` or a subset with per-sample weights.

    Batches of ``min(batch_size, pool size)`` indices are cut from an endless stream of random permutations
    of the current pool (a seeded CPU generator). :meth:`restrict` switches to a subset (paper C Algorithm 1:
    the coreset, with CRAIG / GradMatch weights); :meth:`reset` returns to the full pool without weights.
    Either starts a fresh permutation. ``next()`` returns ``(indices into X_u, weights or None)``.
    """

    def __init__(self, n: int, batch_size: int, generator: torch.Generator, device: torch.device):
        self.n, self.batch_size = (
            check_count(n, "n", allow_zero=False),
            check_count(batch_size, "batch_size", allow_zero=False),
        )
        self.generator, self.device = generator, device
        self.indices = self.weights = None
        self._stream = _PermutationStream(n, batch_size, generator, device)

    @property
    def size(self) -> int:
        """Number of samples in the current pool."""
        return self.n if self.indices is None else int(self.indices.shape[0])

    @property
    def restricted(self) -> bool:
        return self.indices is not None

    def restrict(self, indices, weights=None) -> None:
        """Sample only ``indices`` (distinct, in ``[0, n)``), each with ``weights`` (finite, >= 0, not all 0;
        None = all 1) multiplying its unlabeled loss."""
        idx = torch.as_tensor(indices)
        if idx.dtype == torch.bool or idx.is_floating_point() or idx.dim() != 1 or idx.numel() == 0:
            raise ValueError(
                f"indices must be a non-empty 1-D integer array, got {idx.dtype} of shape {tuple(idx.shape)}"
            )
        idx = idx.to(torch.int64).cpu()
        if int(idx.min()) < 0 or int(idx.max()) >= self.n:
            raise ValueError(
                f"indices must lie in [0, {self.n}) (the unlabeled pool), got [{int(idx.min())}, {int(idx.max())}]"
            )
        if torch.unique(idx).numel() != idx.numel():
            raise ValueError("indices must be distinct (a coreset is a set)")
        w = None
        if weights is not None:
            w = torch.as_tensor(weights, dtype=torch.float32).cpu()
            if w.shape != idx.shape:
                raise ValueError(f"weights must have one entry per index ({idx.numel()}), got shape {tuple(w.shape)}")
            if not bool(torch.isfinite(w).all()) or bool((w < 0).any()) or not bool((w > 0).any()):
                raise ValueError("weights must be finite, non-negative and not all zero")
            w = w.to(self.device)
        self.indices, self.weights = idx.to(self.device), w
        self._stream = _PermutationStream(idx.numel(), self.batch_size, self.generator, self.device)

    def reset(self) -> None:
        """Back to the full pool, without weights."""
        self.indices = self.weights = None
        self._stream = _PermutationStream(self.n, self.batch_size, self.generator, self.device)

    def next(self) -> tuple[torch.Tensor, torch.Tensor | None]:
        pos = self._stream.next()
        if self.indices is None:
            return pos, None
        return self.indices[pos], (None if self.weights is None else self.weights[pos])


# ----------------------------------------------------------------------------------------------- trainer


class Trainer:
    """Train ``model`` with ``algorithm``; scikit-learn-like ``fit`` / ``predict`` / ``score``.

    Parameters
    ----------
    model : nn.Module
        Returns ``(logits, features)`` (a bare logits tensor is accepted). Trained in place.
    algorithm : SSLAlgorithm
        Computes the loss of a step, e.g. :class:`sslkit.algorithms.Supervised`.
    device : "auto", "cpu", "cuda", "cuda:N", "mps" or torch.device
    optimizer : "adam" or "sgd"; lr, weight_decay, momentum, nesterov : its settings
        (``momentum`` / ``nesterov`` only for SGD).
    schedule : None (constant lr) or "cosine" (FixMatch ``cos(7 pi t / 16 T)``).
    epochs : maximum number of epochs.
    iterations_per_epoch : None (one pass over the labeled set), a fixed number of steps per epoch, or
        "unlabeled" (one pass over the current unlabeled pool, which a coreset callback may shrink).
    total_steps : None (``epochs * steps per epoch`` at the start) or the planned number of optimiser steps
        for the cosine schedule and the algorithms' ramp-ups (``ctx.total_steps``).
    batch_size, unlabeled_batch_size : labeled / unlabeled batch sizes (paper A: 64 / 256).
    ema_decay : None or d in [0, 1): keep an EMA teacher, evaluate with it. ema_warmup : Mean Teacher's
        ``d_t = min(d, 1 - 1/(t+1))``.
    amp : "auto", True or False (see module docstring).
    early_stopping : None or :class:`EarlyStopping` (requires validation data in ``fit``).
    hooks : iterable of :class:`Hook`.
    seed : int; progress : bool.
    decay_norm_and_bias : False exempts biases and normalisation layers from weight decay (USB's
        ``bn_wd_skip``, used with WRN-28-2 in papers B and C); True (default) decays every parameter.
    num_classes : None (inferred as ``1 + max`` label of ``y_l`` and ``y_val``) or the number of classes;
        pass it when the labeled set may miss the highest classes. Must equal the model's output width.

    Attributes after ``fit``: ``history_``, ``best_epoch_``, ``best_val_acc_`` (None without validation
    data), ``timings_``, ``epochs_run_``, ``device_``, ``num_classes_``, ``optimizer_``, ``ema_model_``
    (None without EMA), ``amp_dtype_`` (None when autocast is off).
    """

    def __init__(
        self,
        model,
        algorithm,
        *,
        device="auto",
        optimizer="adam",
        lr=1e-3,
        weight_decay=1e-4,
        momentum=0.9,
        nesterov=True,
        schedule=None,
        epochs=200,
        iterations_per_epoch=None,
        batch_size=64,
        unlabeled_batch_size=256,
        ema_decay=None,
        amp="auto",
        early_stopping=None,
        hooks=(),
        seed=0,
        progress=True,
        num_classes=None,
        decay_norm_and_bias=True,
        total_steps=None,
        ema_warmup=False,
    ):
        if not isinstance(model, nn.Module):
            raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")
        if not isinstance(algorithm, SSLAlgorithm):
            raise TypeError(f"algorithm must be an sslkit.algorithms.SSLAlgorithm, got {type(algorithm).__name__}")
        self.model, self.algorithm = model, algorithm
        self._set_optimisation(optimizer, lr, weight_decay, momentum, nesterov, schedule, total_steps)
        self._set_epochs(epochs, iterations_per_epoch, batch_size, unlabeled_batch_size)
        self._set_ema(ema_decay, ema_warmup)
        if not (amp == "auto" or isinstance(amp, bool)):
            raise ValueError(f"amp must be 'auto', True or False, got {amp!r}")
        if early_stopping is not None and not isinstance(early_stopping, EarlyStopping):
            raise TypeError(f"early_stopping must be None or an EarlyStopping, got {type(early_stopping).__name__}")
        self.device, self.amp, self.early_stopping = device, amp, early_stopping
        self.hooks = check_hooks(hooks, "hooks")
        self.num_classes = None if num_classes is None else check_count(num_classes, "num_classes", allow_zero=False)
        self.seed, self.progress = check_seed(seed), bool(progress)
        self.decay_norm_and_bias = bool(decay_norm_and_bias)
        self.epoch, self.iteration, self.stop_training = 0, 0, False
        self.ema_model_ = None

    def _set_optimisation(self, optimizer, lr, weight_decay, momentum, nesterov, schedule, total_steps) -> None:
        if optimizer not in _OPTIMIZERS:
            raise ValueError(f"optimizer must be one of {_OPTIMIZERS}, got {optimizer!r}")
        if schedule not in _SCHEDULES:
            raise ValueError(f"schedule must be one of {_SCHEDULES}, got {schedule!r}")
        self.optimizer, self.schedule = optimizer, schedule
        self.lr = _positive_float(lr, "lr")
        self.weight_decay = _nonneg_float(weight_decay, "weight_decay")
        self.momentum = _nonneg_float(momentum, "momentum")
        if self.momentum >= 1:
            raise ValueError(f"momentum must be in [0, 1), got {momentum!r}")
        self.nesterov = bool(nesterov)
        self.total_steps = None if total_steps is None else check_count(total_steps, "total_steps", allow_zero=False)

    def _set_epochs(self, epochs, iterations_per_epoch, batch_size, unlabeled_batch_size) -> None:
        self.epochs = check_count(epochs, "epochs", allow_zero=False)
        if iterations_per_epoch == "unlabeled":
            if not self.algorithm.uses_unlabeled:
                raise ValueError(
                    f"iterations_per_epoch='unlabeled' needs an algorithm that uses unlabeled data; "
                    f"{self.algorithm.name!r} does not"
                )
            self.iterations_per_epoch = "unlabeled"
        else:
            self.iterations_per_epoch = (
                None
                if iterations_per_epoch is None
                else check_count(iterations_per_epoch, "iterations_per_epoch", allow_zero=False)
            )
        self.batch_size = check_count(batch_size, "batch_size", allow_zero=False)
        self.unlabeled_batch_size = check_count(unlabeled_batch_size, "unlabeled_batch_size", allow_zero=False)

    def _set_ema(self, ema_decay, ema_warmup) -> None:
        if not isinstance(ema_warmup, bool):
            raise TypeError(f"ema_warmup must be True or False, got {ema_warmup!r}")
        if ema_warmup and ema_decay is None:
            raise ValueError("ema_warmup=True needs ema_decay")
        if ema_decay is not None:
            ema_decay = _nonneg_float(ema_decay, "ema_decay")
            if ema_decay >= 1:
                raise ValueError(f"ema_decay must be in [0, 1) or None, got {ema_decay!r}")
        self.ema_decay, self.ema_warmup = ema_decay, ema_warmup

    # ------------------------------------------------------------------------------------------ fit
    def fit(self, X_l, y_l, X_u=None, X_val=None, y_val=None):
        """Train on labeled ``(X_l, y_l)`` (+ unlabeled ``X_u`` if the algorithm uses it); return self.

        The model is trained in place, starting from its current weights; a second ``fit`` continues
        from them with a fresh optimiser, EMA copy, sampler, history and counters.

        ``X_u`` is ignored (not moved to the device) when ``algorithm.uses_unlabeled`` is False.
        ``X_val, y_val`` give the per-epoch validation accuracy used for early stopping.
        """
        t_fit = time.perf_counter()
        device = resolve_device(self.device)
        self.device_ = device
        seed_everything(self.seed)
        seed_l, seed_u = derive_seeds(self.seed, 2)
        self._prepare_data(X_l, y_l, X_u, X_val, y_val, device)
        self._prepare_training(device, seed_l, seed_u)
        pbar = self._progress_bar()
        _sync(device)
        self.timings_["setup"] = time.perf_counter() - t_fit
        for _ in range(self.epochs):
            self._recorded = False  # log() now goes to the coming epoch's row
            self._run_due(self._hooks["before", "epoch"], self.epoch, device)
            record = self._train_epoch(device)
            self._validate(record)
            for h in self._hooks["after", "epoch"]:
                if h.due(self.epoch):
                    self._run_hook(h, device)
            if self.early_stopping is not None and self._wait >= self.early_stopping.patience:
                self.stop_training = True
            if pbar is not None:
                pbar.update(1)
                pbar.set_postfix({k2: f"{record[k2]:.4f}" for k2 in ("loss", "val_acc") if k2 in record})
            if self.stop_training:
                break
        if pbar is not None:
            pbar.close()
        if self._best_state is not None:
            self._restore(self._best_state)
        self.epochs_run_ = self.epoch
        _sync(device)
        self.timings_["total"] = time.perf_counter() - t_fit
        return self

    # ------------------------------------------------------------------------------ fit: the phases
    def _prepare_data(self, X_l, y_l, X_u, X_val, y_val, device) -> None:
        """Validate the arrays at the boundary, move them to the device once, fix ``num_classes_``."""
        algo = self.algorithm
        Xl = _as_features(X_l, "X_l", device)
        yl = _as_labels(y_l, "y_l", Xl.shape[0], "X_l", device)
        self._feature_shape = tuple(Xl.shape[1:])
        Xu = None
        if algo.uses_unlabeled:
            if X_u is None:
                raise ValueError(f"algorithm {algo.name!r} uses unlabeled data: pass X_u")
            Xu = _as_features(X_u, "X_u", device)
            self._check_shape(Xu, "X_u")
        if (X_val is None) != (y_val is None):
            raise ValueError("pass both X_val and y_val, or neither")
        Xv = yv = None
        if X_val is not None:
            Xv = _as_features(X_val, "X_val", device)
            self._check_shape(Xv, "X_val")
            yv = _as_labels(y_val, "y_val", Xv.shape[0], "X_val", device)
        if self.early_stopping is not None and Xv is None:
            raise ValueError("early_stopping needs validation data: pass X_val and y_val to fit")
        k = self.num_classes
        if k is None:
            k = int(yl.max()) + 1 if yv is None else max(int(yl.max()), int(yv.max())) + 1
        _check_label_range(yl, "y_l", k)
        if yv is not None:
            _check_label_range(yv, "y_val", k)
        self.num_classes_ = k
        # the data as the loop holds them (device tensors), for hooks such as paper A's a* re-estimation
        self.data_ = {"X_l": Xl, "y_l": yl, "X_u": Xu, "X_val": Xv, "y_val": yv}
        model = self.model.to(device)
        with torch.no_grad(), _eval_mode(model):
            width = logits_of(model, Xl[:2])
        if width.dim() != 2 or width.shape[1] != k:
            raise ValueError(
                f"model outputs logits of shape {tuple(width.shape)} but num_classes is {k}"
                + (" (inferred from the labels; pass num_classes)" if self.num_classes is None else "")
            )

    def _prepare_training(self, device, seed_l: int, seed_u: int) -> None:
        """Sampler, EMA teacher, the algorithm's setup, callbacks, optimiser, mixed precision, counters."""
        model, algo, data = self.model, self.algorithm, self.data_
        n_l, Xu = data["X_l"].shape[0], data["X_u"]
        gen_l, gen_u = make_generator(seed_l), make_generator(seed_u)
        self._gen_l = gen_l
        self.sampler_ = (
            UnlabeledSampler(Xu.shape[0], self.unlabeled_batch_size, gen_u, device) if Xu is not None else None
        )
        self._l_stream = _PermutationStream(n_l, self.batch_size, gen_l, device) if self.iterations_per_epoch else None
        if self.iterations_per_epoch == "unlabeled":
            steps_per_epoch = None
            planned = self.epochs * math.ceil(Xu.shape[0] / self.unlabeled_batch_size)
        else:
            steps_per_epoch = self.iterations_per_epoch or math.ceil(n_l / self.batch_size)
            planned = self.epochs * steps_per_epoch
        self.total_steps_ = self.total_steps or planned
        self.ema_model_ = None
        if self.ema_decay is not None:
            self.ema_model_ = copy.deepcopy(model).requires_grad_(False).eval()
            self._ema_pairs = (
                list(self.ema_model_.parameters()),
                list(model.parameters()),
                list(self.ema_model_.buffers()),
                list(model.buffers()),
            )
        self.context_ = FitContext(
            num_classes=self.num_classes_,
            device=device,
            total_steps=self.total_steps_,
            steps_per_epoch=steps_per_epoch,
            data=data,
            ema_model=self.ema_model_,
        )
        algo.setup(model, self.context_)
        all_hooks = check_hooks(self.hooks + check_hooks(algo.hooks(), f"{type(algo).__name__}.hooks()"), "hooks")
        self._hooks = {
            (w, u): [h for h in all_hooks if h.when == w and h.unit == u]
            for w in ("before", "after")
            for u in ("epoch", "iteration")
        }
        self.optimizer_ = self._make_optimizer(model)
        self.amp_dtype_ = None
        if self._resolve_amp(device):
            self.amp_dtype_ = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
        self._scaler = torch.amp.GradScaler(device.type, enabled=self.amp_dtype_ == torch.float16)
        self.epoch, self.iteration, self.stop_training = 0, 0, False
        self.history_ = []
        self.best_epoch_ = self.best_val_acc_ = None
        self.timings_ = {"setup": 0.0, "train": 0.0, "eval": 0.0, "hooks": 0.0, "total": 0.0}
        for h in all_hooks:
            self.timings_[f"hook:{h.name}"] = 0.0
        self._best_state, self._wait = None, 0
        self._logged, self._recorded = {}, False

    def _labeled_batches(self, device):
        """The labeled index batches of one epoch (and so the epoch's length)."""
        n_l = self.data_["X_l"].shape[0]
        if self._l_stream is None:
            perm = torch.randperm(n_l, generator=self._gen_l).to(device)
            return (perm[i : i + self.batch_size] for i in range(0, n_l, self.batch_size))
        n_it = self.iterations_per_epoch
        if n_it == "unlabeled":
            n_it = math.ceil(self.sampler_.size / self.unlabeled_batch_size)
        return (self._l_stream.next() for _ in range(n_it))

    def _train_epoch(self, device) -> dict:
        """One epoch of optimiser steps; returns the epoch's history record (before validation)."""
        model, algo, data = self.model, self.algorithm, self.data_
        Xl, yl, Xu = data["X_l"], data["y_l"], data["X_u"]
        model.train()
        t_epoch = time.perf_counter()
        hook_seconds = 0.0
        sums, counts, n_it = {}, {}, 0
        for idx in self._labeled_batches(device):
            hook_seconds += self._run_due(self._hooks["before", "iteration"], self.iteration, device)
            u_idx = u_w = None
            if self.sampler_ is not None:
                u_idx, u_w = self.sampler_.next()
            batch = Batch(
                Xl[idx],
                yl[idx],
                Xu[u_idx] if u_idx is not None else None,
                u_idx,
                u_w,
                step=self.iteration,
                epoch=self.epoch,
            )
            with self._autocast(device):
                out = algo.loss(model, batch)
            if not isinstance(out, LossOutput):
                raise TypeError(f"{type(algo).__name__}.loss() must return a LossOutput, got {type(out).__name__}")
            self.optimizer_.zero_grad(set_to_none=True)
            self._scaler.scale(out.loss).backward()
            self._scaler.step(self.optimizer_)
            self._scaler.update()
            self.iteration += 1
            n_it += 1
            self._set_lr(self.iteration)
            if self.ema_model_ is not None:
                self._ema_update()
            _accumulate(sums, counts, out)
            hook_seconds += self._run_due(self._hooks["after", "iteration"], self.iteration, device)
            if self.stop_training:
                break
        _sync(device)
        self.timings_["train"] += time.perf_counter() - t_epoch - hook_seconds
        self.epoch += 1
        record = {"epoch": self.epoch, "iterations": n_it}
        record.update({key: float(sums[key]) / counts[key] for key in sums})
        if "loss" in record and not math.isfinite(record["loss"]):
            raise FloatingPointError(
                f"training loss is {record['loss']} in epoch {self.epoch}: lower the learning rate or check the inputs"
            )
        self._check_finite_weights(n_it)
        self._t_epoch = t_epoch
        return record

    def _validate(self, record: dict) -> None:
        """Validation accuracy, best epoch and patience; appends ``record`` to ``history_``."""
        Xv, yv = self.data_["X_val"], self.data_["y_val"]
        if Xv is not None:
            t_eval = time.perf_counter()
            val_acc = self._accuracy(Xv, yv)
            self.timings_["eval"] += time.perf_counter() - t_eval
            record["val_acc"] = val_acc
            es = self.early_stopping or EarlyStopping(patience=1, min_delta=0.0)
            warmup = self.epoch <= es.start_epoch
            if warmup and not es.watch_warmup:
                pass  # not monitored yet (warm-up)
            elif self.best_val_acc_ is None or es.is_improvement(val_acc, self.best_val_acc_):
                self.best_val_acc_, self.best_epoch_, self._wait = val_acc, self.epoch, 0
                if self.early_stopping is not None:
                    self._best_state = self._snapshot()
            elif not warmup:
                self._wait += 1
        record["lr"] = self.optimizer_.param_groups[0]["lr"]
        record["seconds"] = time.perf_counter() - self._t_epoch
        record.update(self._logged)
        self._logged = {}
        self.history_.append(record)
        self._recorded = True  # log() from the after-epoch hooks goes to this row

    def log(self, **values) -> None:
        """Record ``name=value`` pairs in the current epoch's ``history_`` row: the row of the epoch that just
        ended when called from an "after epoch" hook, else the row of the epoch under way (hooks and
        callbacks record per-epoch values this way, e.g. Ours (Iter)'s ``a``; nothing else writes
        ``history_``). Values are real numbers or 0-d tensors (stored as floats); the trainer's own keys
        (``epoch``, ``iterations``, ``loss``, ``val_acc``, ``lr``, ``seconds``) are refused."""
        if not hasattr(self, "_logged"):
            raise RuntimeError("Trainer.log records into a fit's history: call it from a hook during fit()")
        row = {}
        for key, value in values.items():
            if key in _OWN_KEYS:
                raise ValueError(f"log: {key!r} is one of the trainer's own history keys {_OWN_KEYS}")
            if isinstance(value, torch.Tensor) and value.dim() == 0:
                value = float(value)
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                raise TypeError(f"log: {key} must be a real number or a 0-d tensor, got {value!r}")
            row[key] = float(value)
        (self.history_[-1] if self._recorded else self._logged).update(row)

    def _check_finite_weights(self, n_it: int) -> None:
        """Raise when a step left NaN or infinite weights (or BatchNorm statistics) although the epoch's
        loss was finite -- e.g. an exploding gradient in the epoch's last step. One test per epoch (one host
        synchronisation), not per step: a non-finite weight makes every later loss of the epoch non-finite."""
        tensors = [t.detach() for t in (*self.model.parameters(), *self.model.buffers()) if t.is_floating_point()]
        # a NaN or inf entry makes the total non-finite; only then are the tensors tested one by one (the sum
        # of finite entries may also overflow)
        if not tensors or bool(torch.isfinite(torch.stack([t.sum(dtype=torch.float32) for t in tensors]).sum())):
            return
        named = (*self.model.named_parameters(), *self.model.named_buffers())
        bad = [n for n, t in named if t.is_floating_point() and not bool(torch.isfinite(t).all())]
        if not bad:
            return
        first = self.iteration - n_it + 1
        raise FloatingPointError(
            f"the model's weights became NaN or infinite in epoch {self.epoch} (iterations {first}-{self.iteration}) "
            f"although its training loss was finite: {bad[:3]}; lower the learning rate or check the gradients"
        )

    def _run_due(self, hooks, count: int, device) -> float:
        """Run the hooks of ``hooks`` due at ``count``; return the seconds they took."""
        seconds = 0.0
        for h in hooks:
            if h.due(count):
                seconds += self._run_hook(h, device)
        return seconds

    # ------------------------------------------------------------------------------------ inference
    @property
    def eval_model(self) -> nn.Module:
        """The model used for evaluation: the EMA copy when ``ema_decay`` is set, else ``model``."""
        return self.ema_model_ if self.ema_model_ is not None else self.model

    def predict_proba(self, X, batch_size: int = 1024):
        """Class probabilities (softmax of the logits), float32, shape (n, num_classes).

        Returns a numpy array for numpy (or array-like) input and a tensor on ``X``'s device for tensor
        input. Uses the EMA weights when EMA is on.
        """
        Xt = self._inference_input(X)
        proba = torch.softmax(self._logits(Xt, batch_size), dim=1)
        return proba.to(X.device) if isinstance(X, torch.Tensor) else proba.cpu().numpy()

    def predict(self, X, batch_size: int = 1024):
        """Predicted class labels (int64): numpy for numpy input, a tensor on ``X``'s device for tensors."""
        Xt = self._inference_input(X)
        labels = self._logits(Xt, batch_size).argmax(dim=1)
        return labels.to(X.device) if isinstance(X, torch.Tensor) else labels.cpu().numpy()

    def score(self, X, y, batch_size: int = 1024) -> float:
        """Accuracy of :meth:`predict` on ``(X, y)`` as a Python float."""
        Xt = self._inference_input(X)
        yt = _as_labels(y, "y", Xt.shape[0], "X", self.device_)
        return self._accuracy(Xt, yt, batch_size)

    # -------------------------------------------------------------------------------------- helpers
    def _inference_input(self, X) -> torch.Tensor:
        if not hasattr(self, "history_"):
            raise RuntimeError("this Trainer is not fitted yet: call fit() first")
        Xt = _as_features(X, "X", self.device_)
        self._check_shape(Xt, "X")
        return Xt

    def _check_shape(self, X: torch.Tensor, name: str) -> None:
        if tuple(X.shape[1:]) != self._feature_shape:
            raise ValueError(f"{name} has sample shape {tuple(X.shape[1:])} but X_l has {self._feature_shape}")

    def _logits(self, X: torch.Tensor, batch_size: int = 1024) -> torch.Tensor:
        batch_size = check_count(batch_size, "batch_size", allow_zero=False)
        model = self.eval_model
        chunks = []
        with torch.no_grad(), _eval_mode(model), self._autocast(X.device):
            for i in range(0, X.shape[0], batch_size):
                chunks.append(logits_of(model, X[i : i + batch_size]).float())
        return torch.cat(chunks)

    def _accuracy(self, X: torch.Tensor, y: torch.Tensor, batch_size: int = 1024) -> float:
        correct = (self._logits(X, batch_size).argmax(dim=1) == y).sum()
        return float(correct) / X.shape[0]

    def _make_optimizer(self, model: nn.Module) -> torch.optim.Optimizer:
        if self.decay_norm_and_bias:
            params = [p for p in model.parameters() if p.requires_grad]
            if not params:
                raise ValueError("model has no trainable parameters")
        else:  # USB's bn_wd_skip: no weight decay on biases and normalisation layers
            params = param_groups(model, self.weight_decay)
        if self.optimizer == "adam":
            return torch.optim.Adam(params, lr=self.lr, weight_decay=self.weight_decay)
        return torch.optim.SGD(
            params,
            lr=self.lr,
            momentum=self.momentum,
            weight_decay=self.weight_decay,
            nesterov=self.nesterov and self.momentum > 0,
        )

    def _set_lr(self, step: int) -> None:
        if self.schedule == "cosine":
            lr = self.lr * cosine_lr_factor(step, self.total_steps_)
            for group in self.optimizer_.param_groups:
                group["lr"] = lr

    def _autocast(self, device: torch.device):
        """Autocast to ``amp_dtype_`` on ``device`` when mixed precision is on, else a no-op context."""
        if self.amp_dtype_ is None:
            return contextlib.nullcontext()
        return torch.autocast(device_type=device.type, dtype=self.amp_dtype_)

    def _resolve_amp(self, device: torch.device) -> bool:
        if self.amp == "auto":
            return device.type == "cuda"
        if self.amp and device.type != "cuda":
            warnings.warn(
                f"amp=True is only supported on CUDA; training on {device} in float32", RuntimeWarning, stacklevel=3
            )
            return False
        return bool(self.amp)

    @torch.no_grad()
    def _ema_update(self) -> None:
        ema_p, p, ema_b, b = self._ema_pairs
        d = self.ema_decay
        if self.ema_warmup:  # Mean Teacher: min(d, 1 - 1/(t+1)) after the t-th step
            d = min(d, 1.0 - 1.0 / (self.iteration + 1))
        torch._foreach_mul_(ema_p, d)
        torch._foreach_add_(ema_p, p, alpha=1.0 - d)
        for eb, mb in zip(ema_b, b):
            eb.copy_(mb)

    def _snapshot(self) -> dict:
        def clone(m):
            return {k: v.detach().clone() for k, v in m.state_dict().items()}

        return {"model": clone(self.model), "ema": clone(self.ema_model_) if self.ema_model_ is not None else None}

    def _restore(self, state: dict) -> None:
        self.model.load_state_dict(state["model"])
        if state["ema"] is not None:
            self.ema_model_.load_state_dict(state["ema"])

    def _run_hook(self, hook: Hook, device: torch.device) -> float:
        _sync(device)
        t0 = time.perf_counter()
        hook.fn(self)
        _sync(device)
        seconds = time.perf_counter() - t0
        self.timings_["hooks"] += seconds
        self.timings_[f"hook:{hook.name}"] += seconds
        return seconds

    def _progress_bar(self):
        env = os.environ.get("SSLKIT_PROGRESS", "").strip().lower()
        if not self.progress or env in ("0", "false", "no", "off"):
            return None
        from tqdm.auto import tqdm  # imported lazily: tqdm.auto may warn in notebooks without ipywidgets

        return tqdm(total=self.epochs, desc=self.algorithm.name, unit="epoch")

    def __repr__(self) -> str:
        return (
            f"Trainer(model={type(self.model).__name__}, algorithm={self.algorithm!r}, "
            f"optimizer={self.optimizer!r}, lr={self.lr}, epochs={self.epochs}, seed={self.seed})"
        )


class _eval_mode:
    """Context manager: put a module in eval mode and restore its previous train/eval flags (per
    sub-module) afterwards, so hooks may evaluate in the middle of training."""

    def __init__(self, model: nn.Module):
        self.model = model

    def __enter__(self):
        self.flags = [(m, m.training) for m in self.model.modules()]
        self.model.eval()
        return self.model

    def __exit__(self, *exc):
        for m, flag in self.flags:
            m.training = flag
        return False


def _accumulate(sums: dict, counts: dict, out: LossOutput) -> None:
    """Add one step's logs to the running sums (tensors stay on their device: no sync per step)."""
    logs = out.logs
    items = list(logs.items())
    if "loss" not in logs:
        items.insert(0, ("loss", out.loss.detach()))
    for key, value in items:
        if isinstance(value, torch.Tensor):
            value = value.detach().float()
        sums[key] = sums.get(key, 0.0) + value
        counts[key] = counts.get(key, 0) + 1


def _positive_float(value, name: str) -> float:
    value = _nonneg_float(value, name)
    if value == 0:
        raise ValueError(f"{name} must be positive, got {value!r}")
    return value


def _nonneg_float(value, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value) or value < 0:
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
    return float(value)
