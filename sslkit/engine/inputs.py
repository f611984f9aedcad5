"""The loop's boundary: checks of the arrays, hooks and numbers a :class:`~sslkit.engine.Trainer` is given, and
the small device utilities it shares (synchronisation, evaluation mode, the running sums of a step's logs)."""

from __future__ import annotations

import math
import numbers

import numpy as np
import torch
from torch import nn

from sslkit.algorithms.base import Hook, LossOutput


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
