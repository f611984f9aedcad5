"""The one training loop, :class:`Trainer` (what it owns: the package docstring of :mod:`sslkit.engine`)."""

from __future__ import annotations

import math
import numbers
import os
import time

import torch
from torch import nn
from torch.utils.flop_counter import FlopCounterMode

from sslkit._checks import (
    Params,
    check_bool,
    check_count,
    check_seed,
)
from sslkit.algorithms.base import Batch, FitContext, Hook, LossOutput, SSLAlgorithm, logits_of
from sslkit.device import check_device, check_threads, resolve_device, training_threads
from sslkit.seeding import derive_seeds, make_generator, seed_everything

from .inference import Predictor
from .inputs import (
    accumulate,
    as_features,
    as_labels,
    builds_without_arguments,
    check_ema,
    check_epochs,
    check_finite_weights,
    check_hooks,
    check_label_range,
    check_optimisation,
    eval_mode,
    sync,
    torch_inputs,
)
from .optim import (
    EMATeacher,
    autocast,
    fresh_start,
    make_optimizer,
    resolve_amp,
    restore,
    snapshot,
    user_optimizer,
    user_scheduler,
)
from .sampling import PermutationStream, UnlabeledSampler
from .schedules import EarlyStopping, cosine_lr_factor

#: the keys of a history row the trainer writes itself (Trainer.log refuses them)
_OWN_KEYS = ("epoch", "iterations", "loss", "val_acc", "lr", "seconds")


class Trainer(Predictor, Params):
    """Train ``model`` with ``algorithm``; scikit-learn-like ``fit`` / ``predict`` / ``score``, ``get_params`` /
    ``set_params`` (so :func:`sklearn.base.clone` gives an unfitted copy with a copy of the model).

    Parameters
    ----------
    model : nn.Module, or a function of no arguments that builds one (``lambda: MLP(30, 2)``)
        Returns ``(logits, features)`` (a bare logits tensor is accepted). A module is trained in place from the
        weights it has, so its initialisation is the caller's (seed it, ``seed_everything(seed)``, before building
        it). A function is called at the start of every ``fit`` right after ``seed_everything(seed)``: ``seed``
        then covers the initial weights too (two fresh processes give bit-identical models on CPU), every ``fit``
        starts from the same fresh model, and ``trainer.model`` is the model built (None before the first ``fit``).
    algorithm : SSLAlgorithm
        Computes the loss of a step, e.g. :class:`sslkit.algorithms.Supervised`.
    device : "auto", "cpu", "cuda", "cuda:N", "mps" or torch.device (an unknown name is refused here, an
        unavailable one when ``fit`` starts).
    optimizer : "adam" or "sgd"; lr, weight_decay, momentum, nesterov : its settings
        (``momentum`` / ``nesterov`` only for SGD). Or the user's own: a :class:`torch.optim.Optimizer` (a
        template: ``fit`` builds a fresh one of its class with its ``defaults`` over the model's parameters) or a
        function ``parameters -> Optimizer`` (e.g. ``functools.partial(torch.optim.AdamW, lr=3e-4)``); then
        ``lr``, ``weight_decay``, ``momentum``, ``nesterov`` and ``decay_norm_and_bias`` are not used.
    schedule : None (constant lr), "cosine" (FixMatch ``cos(7 pi t / 16 T)``, per step, scaling each parameter
        group's initial rate) or a function ``optimizer -> scheduler`` (any ``torch.optim.lr_scheduler``, e.g.
        ``functools.partial(StepLR, step_size=10)``), stepped after every epoch (``ReduceLROnPlateau`` with the
        epoch's validation accuracy, else its training loss).
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
    threads : "auto" (one thread for small steps), None (torch's setting) or an int, while ``fit`` trains
        (:func:`sslkit.device.training_threads`). A run is bit-reproducible under the same ``threads_``.

    Methods after ``fit`` (from :class:`~sslkit.engine.Predictor`): ``predict_proba``, ``predict``, ``score``.

    Attributes after ``fit``: ``history_``, ``best_epoch_``, ``best_val_acc_`` (None without validation
    data), ``timings_``, ``epochs_run_``, ``device_``, ``num_classes_``, ``optimizer_``, ``ema_model_``
    (None without EMA), ``amp_dtype_`` (None when autocast is off), ``step_flops_`` (a step's forward FLOPs),
    ``threads_`` (torch's CPU threads during training).
    """

    _estimator_type = "classifier"

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
        threads="auto",
    ):
        if not isinstance(model, nn.Module) and not builds_without_arguments(model):
            raise TypeError(
                f"model must be a torch.nn.Module or a function of no arguments that builds one, got {model!r}"
            )
        if not isinstance(algorithm, SSLAlgorithm):
            raise TypeError(f"algorithm must be an sslkit.algorithms.SSLAlgorithm, got {type(algorithm).__name__}")
        self._model_factory = None if isinstance(model, nn.Module) else model
        self.model = model if isinstance(model, nn.Module) else None
        self.algorithm = algorithm
        vars(self).update(check_optimisation(optimizer, lr, weight_decay, momentum, nesterov, schedule, total_steps))
        vars(self).update(check_epochs(algorithm, epochs, iterations_per_epoch, batch_size, unlabeled_batch_size))
        vars(self).update(check_ema(ema_decay, ema_warmup))
        if not (amp == "auto" or isinstance(amp, bool)):
            raise ValueError(f"amp must be 'auto', True or False, got {amp!r}")
        if early_stopping is not None and not isinstance(early_stopping, EarlyStopping):
            raise TypeError(f"early_stopping must be None or an EarlyStopping, got {type(early_stopping).__name__}")
        self.device, self.amp, self.early_stopping = check_device(device), amp, early_stopping
        checked = check_hooks(hooks, "hooks")
        self.hooks = hooks if isinstance(hooks, (list, tuple)) else checked  # as given (get_params / clone)
        self.num_classes = None if num_classes is None else check_count(num_classes, "num_classes", allow_zero=False)
        self.seed, self.progress = check_seed(seed), check_bool(progress, "progress")
        self.decay_norm_and_bias = check_bool(decay_norm_and_bias, "decay_norm_and_bias")
        self.threads = check_threads(threads)

    def get_params(self, deep: bool = True) -> dict:
        """The constructor's arguments (scikit-learn's ``get_params``); ``model`` as given (a module, or a function
        that builds one where the trainer takes one)."""
        params = super().get_params(deep)
        factory = getattr(self, "_model_factory", None)
        if factory is not None:
            params["model"] = factory
        return params

    # ------------------------------------------------------------------------------------------ fit
    def fit(self, X_l, y_l, X_u=None, X_val=None, y_val=None):
        """Train on labeled ``(X_l, y_l)`` (+ unlabeled ``X_u`` if the algorithm uses it); return self.

        Every ``fit`` starts afresh, as in scikit-learn (a second ``fit`` does not continue the first), with a fresh
        optimiser, EMA copy, sampler, history and counters: a model given as a module is trained in place from the
        weights it had when this trainer's first ``fit`` began; a model given as a function is built afresh under
        ``seed`` by every ``fit`` (the class docstring).

        Inputs: numpy arrays or tensors, or PyTorch's own: ``X_l`` a ``Dataset`` or ``DataLoader`` of ``(x, y)``
        (then ``y_l`` is None), ``X_u`` one of ``x`` (or of ``(x, y)``, whose ``y`` is ignored), ``X_val`` one of
        ``(x, y)`` (then ``y_val`` is None); they are read once into tensors. scikit-learn's semi-supervised
        convention works too: ``fit(X, y)`` with ``y = -1`` on the unlabeled rows trains on those rows as ``X_u``.

        ``X_u`` is ignored (not moved to the device) when ``algorithm.uses_unlabeled`` is False.
        ``X_val, y_val`` give the per-epoch validation accuracy used for early stopping.
        """
        t_fit = time.perf_counter()
        device = resolve_device(self.device)
        self.device_ = device
        X_l, y_l, X_u, X_val, y_val = torch_inputs(X_l, y_l, X_u, X_val, y_val)
        seed_everything(self.seed)
        if self._model_factory is not None:  # built under the seed, then the same draws as for a given module
            self.model = self._build_model()
            seed_everything(self.seed)
        seed_l, seed_u = derive_seeds(self.seed, 2)
        self._prepare_data(X_l, y_l, X_u, X_val, y_val, device)
        if self._model_factory is None:  # a module: back to its first-fit weights (a factory's model is new)
            self._restart_model()  # after the data checks' forward pass, which initialises lazy modules
        self._prepare_training(device, seed_l, seed_u)
        threads, self.threads_ = training_threads(self.threads, device, self.step_flops_)
        with threads:  # torch's CPU threads for the epochs (restored after)
            pbar = self._progress_bar()
            sync(device)
            self.timings_["setup"] = time.perf_counter() - t_fit
            for _ in range(self.epochs):
                self._recorded = False  # log() now goes to the coming epoch's row
                self._run_due(self._hooks["before", "epoch"], self.epoch, device)
                record = self._train_epoch(device)
                self._validate(record)
                self._step_scheduler(record)
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
                restore(self._best_state, self.model, self.ema_model_)
            self.epochs_run_ = self.epoch
            sync(device)
            self.timings_["total"] = time.perf_counter() - t_fit
        return self

    # ------------------------------------------------------------------------------ fit: the phases
    def _build_model(self) -> nn.Module:
        model = self._model_factory()
        if not isinstance(model, nn.Module):
            raise TypeError(f"the model function must return a torch.nn.Module, got {type(model).__name__}")
        return model

    def _prepare_data(self, X_l, y_l, X_u, X_val, y_val, device) -> None:
        """Validate the arrays at the boundary, move them to the device once, fix ``num_classes_``."""
        algo = self.algorithm
        Xl = as_features(X_l, "X_l", device)
        yl = as_labels(y_l, "y_l", Xl.shape[0], "X_l", device)
        self._feature_shape = tuple(Xl.shape[1:])
        Xu = None
        if algo.uses_unlabeled:
            if X_u is None:
                raise ValueError(f"algorithm {algo.name!r} uses unlabeled data: pass X_u")
            Xu = as_features(X_u, "X_u", device)
            self._check_shape(Xu, "X_u")
        if (X_val is None) != (y_val is None):
            raise ValueError("pass both X_val and y_val, or neither")
        Xv = yv = None
        if X_val is not None:
            Xv = as_features(X_val, "X_val", device)
            self._check_shape(Xv, "X_val")
            yv = as_labels(y_val, "y_val", Xv.shape[0], "X_val", device)
        if self.early_stopping is not None and Xv is None:
            raise ValueError("early_stopping needs validation data: pass X_val and y_val to fit")
        k = self.num_classes
        if k is None:
            k = int(yl.max()) + 1 if yv is None else max(int(yl.max()), int(yv.max())) + 1
        check_label_range(yl, "y_l", k)
        if yv is not None:
            check_label_range(yv, "y_val", k)
        self.num_classes_ = k
        # the data as the loop holds them (device tensors), for hooks such as paper A's a* re-estimation
        self.data_ = {"X_l": Xl, "y_l": yl, "X_u": Xu, "X_val": Xv, "y_val": yv}
        model = self.model.to(device)
        with torch.no_grad(), eval_mode(model), FlopCounterMode(display=False) as flops:
            width = logits_of(model, Xl[:2])
        per_sample = flops.get_total_flops() / min(2, Xl.shape[0])
        self.step_flops_ = per_sample * (self.batch_size + (self.unlabeled_batch_size if Xu is not None else 0))
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
        self._l_stream = PermutationStream(n_l, self.batch_size, gen_l, device) if self.iterations_per_epoch else None
        if self.iterations_per_epoch == "unlabeled":
            steps_per_epoch = None
            planned = self.epochs * math.ceil(Xu.shape[0] / self.unlabeled_batch_size)
        else:
            steps_per_epoch = self.iterations_per_epoch or math.ceil(n_l / self.batch_size)
            planned = self.epochs * steps_per_epoch
        self.total_steps_ = self.total_steps or planned
        self._ema = EMATeacher(model, self.ema_decay, self.ema_warmup) if self.ema_decay is not None else None
        self.ema_model_ = self._ema.model if self._ema is not None else None
        self.context_ = FitContext(
            num_classes=self.num_classes_,
            device=device,
            total_steps=self.total_steps_,
            steps_per_epoch=steps_per_epoch,
            data=data,
            ema_model=self.ema_model_,
        )
        algo.setup(model, self.context_)
        all_hooks = check_hooks(list(self.hooks) + check_hooks(algo.hooks(), f"{type(algo).__name__}.hooks()"), "hooks")
        self._hooks = {
            (w, u): [h for h in all_hooks if h.when == w and h.unit == u]
            for w in ("before", "after")
            for u in ("epoch", "iteration")
        }
        if isinstance(self.optimizer, str):
            self.optimizer_ = make_optimizer(
                model,
                self.optimizer,
                self.lr,
                self.weight_decay,
                self.momentum,
                self.nesterov,
                self.decay_norm_and_bias,
            )
        else:
            self.optimizer_ = user_optimizer(model, self.optimizer)
        self._base_lrs = [group["lr"] for group in self.optimizer_.param_groups]
        callable_schedule = self.schedule is not None and not isinstance(self.schedule, str)
        self.scheduler_ = user_scheduler(self.schedule, self.optimizer_) if callable_schedule else None
        self.amp_dtype_ = None
        if resolve_amp(self.amp, device):
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
            with autocast(self.amp_dtype_, device):
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
            if self._ema is not None:
                self._ema.update(self.iteration)
            accumulate(sums, counts, out)
            hook_seconds += self._run_due(self._hooks["after", "iteration"], self.iteration, device)
            if self.stop_training:
                break
        sync(device)
        self.timings_["train"] += time.perf_counter() - t_epoch - hook_seconds
        self.epoch += 1
        record = {"epoch": self.epoch, "iterations": n_it}
        record.update({key: float(sums[key]) / counts[key] for key in sums})
        if "loss" in record and not math.isfinite(record["loss"]):
            raise FloatingPointError(
                f"training loss is {record['loss']} in epoch {self.epoch}: lower the learning rate or check the inputs"
            )
        check_finite_weights(self.model, self.epoch, self.iteration - n_it + 1, self.iteration)
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
                    self._best_state = snapshot(self.model, self.ema_model_)
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

    def _run_due(self, hooks, count: int, device) -> float:
        """Run the hooks of ``hooks`` due at ``count``; return the seconds they took."""
        seconds = 0.0
        for h in hooks:
            if h.due(count):
                seconds += self._run_hook(h, device)
        return seconds

    def _set_lr(self, step: int) -> None:
        if isinstance(self.schedule, str) and self.schedule == "cosine":
            factor = cosine_lr_factor(step, self.total_steps_)
            for group, base in zip(self.optimizer_.param_groups, self._base_lrs):
                group["lr"] = base * factor

    def _step_scheduler(self, record: dict) -> None:
        """The user's scheduler after an epoch (``ReduceLROnPlateau``: on the validation accuracy, else the loss)."""
        if self.scheduler_ is None:
            return
        if isinstance(self.scheduler_, torch.optim.lr_scheduler.ReduceLROnPlateau):
            self.scheduler_.step(record.get("val_acc", record.get("loss")))
        else:
            self.scheduler_.step()

    def _restart_model(self) -> None:
        """Every fit starts from the weights the model had when the first fit began (scikit-learn's ``fit``)."""
        self._initial_model = fresh_start(self.model, getattr(self, "_initial_model", None))

    def _run_hook(self, hook: Hook, device: torch.device) -> float:
        sync(device)
        t0 = time.perf_counter()
        hook.fn(self)
        sync(device)
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
        model = self.model if self.model is not None else self._model_factory
        return (
            f"Trainer(model={type(model).__name__}, algorithm={self.algorithm!r}, "
            f"optimizer={self.optimizer!r}, lr={self.lr}, epochs={self.epochs}, seed={self.seed})"
        )
