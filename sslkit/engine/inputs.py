"""The loop's boundary: checks of the arrays, hooks and numbers a :class:`~sslkit.engine.Trainer` is given, and
the small device utilities it shares (synchronisation, evaluation mode, the running sums of a step's logs)."""

from __future__ import annotations

import inspect
import math
import numbers

import numpy as np
import torch
from torch import nn

from sslkit._checks import check_bool, check_count, from_torch_data, pairs_from_torch_data, split_unlabeled
from sslkit.algorithms.base import Hook, LossOutput

from .optim import check_optimizer

#: the built-in learning-rate schedules of :class:`~sslkit.engine.Trainer` (or a function optimizer -> scheduler)
SCHEDULES = (None, "cosine")


def as_features(X, name: str, device: torch.device) -> torch.Tensor:
    """Validate a feature array (numpy or tensor, n rows, floating, finite) and return float32 on device."""
    if isinstance(X, torch.Tensor):
        t = X.detach()
    else:
        try:
            t = _from_numpy(np.ascontiguousarray(np.asarray(X)))
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


def _from_numpy(arr: np.ndarray) -> torch.Tensor:
    """``torch.from_numpy`` of a copy when ``arr`` is read-only (e.g. a pandas column's ``to_numpy()``): PyTorch warns
    on read-only memory, and the tensor must not alias memory nobody may write."""
    return torch.from_numpy(arr if arr.flags.writeable else arr.copy())


def as_labels(y, name: str, n: int, x_name: str, device: torch.device) -> torch.Tensor:
    """Validate integer class labels of length ``n`` and return int64 on device."""
    if isinstance(y, torch.Tensor):
        if y.dtype == torch.bool or y.is_floating_point() or y.is_complex():
            raise TypeError(f"{name} must contain integer class labels, got dtype {y.dtype}")
        t = y.detach()
    else:
        arr = np.asarray(y)
        if arr.dtype.kind not in "iu":
            raise TypeError(f"{name} must contain integer class labels, got dtype {arr.dtype}")
        t = _from_numpy(np.ascontiguousarray(arr.astype(np.int64, copy=False)))
    if t.dim() != 1:
        raise ValueError(f"{name} must be 1-D, got shape {tuple(t.shape)}")
    if t.shape[0] != n:
        raise ValueError(f"{x_name} has {n} samples but {name} has {t.shape[0]} labels")
    return t.to(torch.int64).to(device)


def check_label_range(y: torch.Tensor, name: str, num_classes: int) -> None:
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


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    elif device.type == "mps":
        torch.mps.synchronize()


class eval_mode:
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


def accumulate(sums: dict, counts: dict, out: LossOutput) -> None:
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


def positive_float(value, name: str) -> float:
    value = nonneg_float(value, name)
    if value == 0:
        raise ValueError(f"{name} must be positive, got {value!r}")
    return value


def nonneg_float(value, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value) or value < 0:
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
    return float(value)


def check_finite_weights(model: nn.Module, epoch: int, first: int, last: int) -> None:
    """Raise when a step left NaN or infinite weights (or BatchNorm statistics) of ``model`` although the
    epoch's loss was finite -- e.g. an exploding gradient in the epoch's last step (iterations ``first`` to
    ``last``). One test per epoch (one host synchronisation), not per step: a non-finite weight makes every
    later loss of the epoch non-finite."""
    tensors = [t.detach() for t in (*model.parameters(), *model.buffers()) if t.is_floating_point()]
    # a NaN or inf entry makes the total non-finite; only then are the tensors tested one by one (the sum
    # of finite entries may also overflow)
    if not tensors or bool(torch.isfinite(torch.stack([t.sum(dtype=torch.float32) for t in tensors]).sum())):
        return
    named = (*model.named_parameters(), *model.named_buffers())
    bad = [n for n, t in named if t.is_floating_point() and not bool(torch.isfinite(t).all())]
    if not bad:
        return
    raise FloatingPointError(
        f"the model's weights became NaN or infinite in epoch {epoch} (iterations {first}-{last}) "
        f"although its training loss was finite: {bad[:3]}; lower the learning rate or check the gradients"
    )


def builds_without_arguments(fn) -> bool:
    """``fn`` can be called with no arguments (a model factory such as ``lambda: MLP(30, 2)``)."""
    if not callable(fn):
        return False
    try:
        inspect.signature(fn).bind()
    except TypeError:
        return False
    except ValueError:  # no signature to inspect (some builtins): let the call decide
        return True
    return True


def torch_inputs(X_l, y_l, X_u, X_val, y_val):
    """PyTorch ``Dataset`` / ``DataLoader`` inputs as tensors, and ``y_l = -1`` rows as the unlabeled set (the
    conventions of :meth:`Trainer.fit`)."""
    X_l, y_l = pairs_from_torch_data(X_l, y_l, "X_l", "y_l")
    X_u, _ = from_torch_data(X_u, "X_u", labels=False)
    X_val, y_val = pairs_from_torch_data(X_val, y_val, "X_val", "y_val")
    if y_l is not None and getattr(y_l, "shape", None) is not None and getattr(X_l, "shape", None) is not None:
        if len(y_l) == len(X_l):  # a length mismatch is reported by the label checks
            X_l, y_l, X_rest = split_unlabeled(X_l, y_l, "y_l")
            if X_rest is not None:
                if X_u is not None:
                    raise ValueError("y_l marks unlabeled rows (-1) and X_u is given too: use one or the other")
                X_u = X_rest
    return X_l, y_l, X_u, X_val, y_val


# ------------------------------------------------------------------ the constructor's hyper-parameters
def check_optimisation(optimizer, lr, weight_decay, momentum, nesterov, schedule, total_steps) -> dict:
    """:class:`~sslkit.engine.Trainer`'s optimisation arguments, checked: the attributes it stores."""
    if schedule not in SCHEDULES and (isinstance(schedule, str) or not callable(schedule)):
        raise ValueError(f"schedule must be one of {SCHEDULES} or a function optimizer -> scheduler, got {schedule!r}")
    momentum_ = nonneg_float(momentum, "momentum")
    if momentum_ >= 1:
        raise ValueError(f"momentum must be in [0, 1), got {momentum!r}")
    return {
        "optimizer": check_optimizer(optimizer),
        "schedule": schedule,
        "lr": positive_float(lr, "lr"),
        "weight_decay": nonneg_float(weight_decay, "weight_decay"),
        "momentum": momentum_,
        "nesterov": check_bool(nesterov, "nesterov"),
        "total_steps": None if total_steps is None else check_count(total_steps, "total_steps", allow_zero=False),
    }


def check_epochs(algorithm, epochs, iterations_per_epoch, batch_size, unlabeled_batch_size) -> dict:
    """:class:`~sslkit.engine.Trainer`'s epoch and batch arguments, checked (``"unlabeled"`` epochs need an
    algorithm that uses unlabeled data)."""
    if iterations_per_epoch == "unlabeled":
        if not algorithm.uses_unlabeled:
            raise ValueError(
                f"iterations_per_epoch='unlabeled' needs an algorithm that uses unlabeled data; "
                f"{algorithm.name!r} does not"
            )
    elif iterations_per_epoch is not None:
        iterations_per_epoch = check_count(iterations_per_epoch, "iterations_per_epoch", allow_zero=False)
    return {
        "epochs": check_count(epochs, "epochs", allow_zero=False),
        "iterations_per_epoch": iterations_per_epoch,
        "batch_size": check_count(batch_size, "batch_size", allow_zero=False),
        "unlabeled_batch_size": check_count(unlabeled_batch_size, "unlabeled_batch_size", allow_zero=False),
    }


def check_ema(ema_decay, ema_warmup) -> dict:
    """:class:`~sslkit.engine.Trainer`'s EMA arguments, checked: a decay in [0, 1) or None, a bool warm-up."""
    if not isinstance(ema_warmup, bool):
        raise TypeError(f"ema_warmup must be True or False, got {ema_warmup!r}")
    if ema_warmup and ema_decay is None:
        raise ValueError("ema_warmup=True needs ema_decay")
    if ema_decay is not None:
        ema_decay = nonneg_float(ema_decay, "ema_decay")
        if ema_decay >= 1:
            raise ValueError(f"ema_decay must be in [0, 1) or None, got {ema_decay!r}")
    return {"ema_decay": ema_decay, "ema_warmup": ema_warmup}
