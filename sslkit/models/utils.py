"""Small helpers shared by the models: input checks at the boundary and weight-decay parameter groups."""

from __future__ import annotations

import numbers

import torch
from torch import nn

from sslkit._checks import check_count

# Normalisation layers whose affine parameters are excluded from weight decay.
_NORM_TYPES = (nn.modules.batchnorm._BatchNorm, nn.GroupNorm, nn.LayerNorm, nn.modules.instancenorm._InstanceNorm)


def check_positive_int(value, name: str) -> int:
    """Return ``value`` as a positive int (``TypeError``/``ValueError`` naming ``name`` otherwise)."""
    return check_count(value, name, allow_zero=False)


def check_fraction(value, name: str, *, upper_inclusive: bool = False) -> float:
    """Return ``value`` as a float in ``[0, 1)`` (or ``[0, 1]`` when ``upper_inclusive``)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {value!r}")
    value = float(value)
    ok = 0.0 <= value <= 1.0 if upper_inclusive else 0.0 <= value < 1.0
    if not ok:
        interval = "[0, 1]" if upper_inclusive else "[0, 1)"
        raise ValueError(f"{name} must be in {interval}, got {value}")
    return value


def _fmt_shape(expected: tuple) -> str:
    return "(" + ", ".join("N" if i == 0 else ("*" if d is None else str(d)) for i, d in enumerate(expected)) + ")"


def check_input(x, expected: tuple, model_name: str) -> None:
    """Validate a model input before any layer sees it.

    ``expected`` lists the expected shape with ``None`` for free dimensions (the first entry, the batch
    dimension, is always free). Raises ``TypeError`` when ``x`` is not a floating-point tensor (e.g. raw
    uint8 images: convert them with ``sslkit.data.images_to_tensor``) and ``ValueError`` naming the
    expected and the received shape otherwise.
    """
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{model_name} expects a torch.Tensor, got {type(x).__name__}")
    if not torch.is_floating_point(x):
        raise TypeError(
            f"{model_name} expects a floating-point tensor, got dtype {x.dtype}"
            " (convert uint8 images with sslkit.data.images_to_tensor)"
        )
    shape = tuple(x.shape)
    ok = len(shape) == len(expected) and all(e is None or s == e for s, e in zip(shape[1:], expected[1:]))
    if not ok:
        raise ValueError(f"{model_name} expects input of shape {_fmt_shape(expected)}, got {shape}")


def no_weight_decay_names(model: nn.Module) -> set[str]:
    """Names of the parameters that should not be weight-decayed: every bias and every normalisation weight.

    This is USB's ``bn_wd_skip`` rule: weight decay only on conv and
    linear weights.
    """
    names = set()
    for module_name, module in model.named_modules():
        for param_name, _ in module.named_parameters(recurse=False):
            full = f"{module_name}.{param_name}" if module_name else param_name
            if isinstance(module, _NORM_TYPES) or param_name == "bias":
                names.add(full)
    return names


def param_groups(model: nn.Module, weight_decay: float) -> list[dict]:
    """Optimizer parameter groups: ``weight_decay`` on conv/linear weights, 0 on biases and norm layers.

    Only parameters with ``requires_grad`` are included; empty groups are dropped. Pass the result to any
    ``torch.optim`` optimizer, e.g. ``torch.optim.SGD(param_groups(model, 5e-4), lr=0.03)``.
    """
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    if isinstance(weight_decay, bool) or not isinstance(weight_decay, numbers.Real) or not weight_decay >= 0:
        raise ValueError(f"weight_decay must be a non-negative number, got {weight_decay!r}")
    skip = no_weight_decay_names(model)
    decay, no_decay = [], []
    for name, param in model.named_parameters():
        if param.requires_grad:
            (no_decay if name in skip else decay).append(param)
    groups = [
        {"params": decay, "weight_decay": float(weight_decay)},
        {"params": no_decay, "weight_decay": 0.0},
    ]
    groups = [g for g in groups if g["params"]]
    if not groups:
        raise ValueError("model has no trainable parameters")
    return groups


def count_parameters(model: nn.Module, trainable_only: bool = False) -> int:
    """Number of scalar parameters of ``model`` (buffers such as BN running statistics are not counted)."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad or not trainable_only)
