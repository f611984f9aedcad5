"""The optimiser side of the one loop: the optimiser (Adam / SGD, USB's ``bn_wd_skip``), mixed precision, the EMA
teacher and the best-epoch snapshots of a :class:`~sslkit.engine.Trainer`."""

from __future__ import annotations

import contextlib
import warnings

import torch
from torch import nn

from sslkit.models.utils import param_groups

#: the optimisers a Trainer accepts
OPTIMIZERS = ("adam", "sgd")
#: the Trainer options of USB's / FixMatch's optimiser, which papers B and C train with (paper C App. C.3: SGD,
#: lr 0.03, Nesterov momentum 0.9, weight decay 5e-4, cosine schedule); ``Trainer(**USB_SGD, ...)``
USB_SGD = {
    "optimizer": "sgd",
    "lr": 0.03,
    "momentum": 0.9,
    "nesterov": True,
    "weight_decay": 5e-4,
    "schedule": "cosine",
}


def make_optimizer(
    model: nn.Module, name: str, lr: float, weight_decay: float, momentum: float, nesterov: bool, decay_norm_and_bias
) -> torch.optim.Optimizer:
    """Adam (paper A App. C) or SGD with Nesterov momentum (USB / FixMatch, papers B and C) over the trainable
    parameters; ``decay_norm_and_bias=False`` exempts biases and normalisation layers from weight decay."""
    if decay_norm_and_bias:
        params = [p for p in model.parameters() if p.requires_grad]
        if not params:
            raise ValueError("model has no trainable parameters")
    else:  # USB's bn_wd_skip: no weight decay on biases and normalisation layers
        params = param_groups(model, weight_decay)
    if name == "adam":
        return torch.optim.Adam(params, lr=lr, weight_decay=weight_decay)
    return torch.optim.SGD(
        params, lr=lr, momentum=momentum, weight_decay=weight_decay, nesterov=nesterov and momentum > 0
    )


def check_optimizer(optimizer):
    """``optimizer`` if it is a name of :data:`OPTIMIZERS`, a :class:`torch.optim.Optimizer` (a template: its class
    and settings, ``optimizer.defaults``) or a function ``parameters -> Optimizer``; a clear error otherwise."""
    if isinstance(optimizer, str):
        if optimizer not in OPTIMIZERS:
            raise ValueError(f"optimizer must be one of {OPTIMIZERS}, an Optimizer or a function, got {optimizer!r}")
    elif not (isinstance(optimizer, torch.optim.Optimizer) or callable(optimizer)):
        raise TypeError(
            f"optimizer must be one of {OPTIMIZERS}, a torch.optim.Optimizer or a function parameters -> Optimizer, "
            f"got {type(optimizer).__name__}"
        )
    return optimizer


def user_optimizer(model: nn.Module, optimizer) -> torch.optim.Optimizer:
    """A fresh optimiser of the user's over ``model``'s trainable parameters: a template's class with its
    ``defaults`` (so every ``fit`` starts with empty optimiser state, and a clone of the trainer holds no
    reference to another model), or the result of a function ``parameters -> Optimizer``."""
    params = [p for p in model.parameters() if p.requires_grad]
    if not params:
        raise ValueError("model has no trainable parameters")
    if isinstance(optimizer, torch.optim.Optimizer):
        try:
            import inspect

            accepted = inspect.signature(type(optimizer).__init__).parameters
            settings = {k: v for k, v in optimizer.defaults.items() if k in accepted}  # AdamW fixes decoupled decay
            return type(optimizer)(params, **settings)
        except TypeError as exc:
            raise TypeError(
                f"cannot rebuild {type(optimizer).__name__} from its defaults ({exc}): pass a function "
                "parameters -> optimizer, e.g. functools.partial(torch.optim.AdamW, lr=1e-3)"
            ) from None
    out = optimizer(params)
    if not isinstance(out, torch.optim.Optimizer):
        raise TypeError(f"the optimizer function must return a torch.optim.Optimizer, got {type(out).__name__}")
    return out


def user_scheduler(schedule, optimizer: torch.optim.Optimizer):
    """The user's learning-rate scheduler, ``schedule(optimizer)`` (e.g. ``functools.partial(StepLR, step_size=10)``),
    checked to be bound to the trainer's optimiser."""
    sched = schedule(optimizer)
    if getattr(sched, "optimizer", None) is not optimizer or not callable(getattr(sched, "step", None)):
        raise TypeError(
            "schedule must be a function optimizer -> learning-rate scheduler of that optimizer "
            f"(e.g. functools.partial(torch.optim.lr_scheduler.StepLR, step_size=10)), got {type(sched).__name__}"
        )
    return sched


def resolve_amp(amp, device: torch.device) -> bool:
    """Whether autocast is on: ``"auto"`` on CUDA only; ``True`` off CUDA warns and runs in float32."""
    if amp == "auto":
        return device.type == "cuda"
    if amp and device.type != "cuda":
        warnings.warn(
            f"amp=True is only supported on CUDA; training on {device} in float32", RuntimeWarning, stacklevel=4
        )
        return False
    return bool(amp)


def autocast(amp_dtype, device: torch.device):
    """Autocast to ``amp_dtype`` on ``device`` when mixed precision is on (not None), else a no-op context."""
    if amp_dtype is None:
        return contextlib.nullcontext()
    return torch.autocast(device_type=device.type, dtype=amp_dtype)


class EMATeacher:
    """The exponential moving average of a model's parameters, its buffers copied (as USB): after each step
    ``ema = d * ema + (1 - d) * param``; with ``warmup`` (Mean Teacher) ``d_t = min(d, 1 - 1/(t+1))`` after the
    t-th step. ``model`` is the EMA copy (evaluation mode, no gradients)."""

    def __init__(self, model: nn.Module, decay: float, warmup: bool):
        import copy

        self.model = copy.deepcopy(model).requires_grad_(False).eval()
        self.decay, self.warmup = decay, warmup
        self._pairs = (
            list(self.model.parameters()),
            list(model.parameters()),
            list(self.model.buffers()),
            list(model.buffers()),
        )

    @torch.no_grad()
    def update(self, step: int) -> None:
        """The update after the ``step``-th optimiser step."""
        ema_p, p, ema_b, b = self._pairs
        d = min(self.decay, 1.0 - 1.0 / (step + 1)) if self.warmup else self.decay
        torch._foreach_mul_(ema_p, d)
        torch._foreach_add_(ema_p, p, alpha=1.0 - d)
        for eb, mb in zip(ema_b, b):
            eb.copy_(mb)


def snapshot(model: nn.Module, ema_model: nn.Module | None) -> dict:
    """Copies of the state of ``model`` (and of its EMA teacher): the best epoch's weights."""

    def clone(m):
        return {k: v.detach().clone() for k, v in m.state_dict().items()}

    return {"model": clone(model), "ema": clone(ema_model) if ema_model is not None else None}


def restore(state: dict, model: nn.Module, ema_model: nn.Module | None) -> None:
    """Load a :func:`snapshot` back into ``model`` (and its EMA teacher)."""
    model.load_state_dict(state["model"])
    if state["ema"] is not None:
        ema_model.load_state_dict(state["ema"])


def fresh_start(model: nn.Module, initial: tuple | None) -> tuple:
    """scikit-learn's "fit starts afresh" for a model trained in place: ``initial`` is None or ``(model, state)``
    from an earlier call; the first call on ``model`` keeps a copy of its weights, a later one loads them back.
    Returns the ``(model, state)`` to keep (None while the model has uninitialised lazy parameters)."""
    if any(nn.parameter.is_lazy(p) for p in model.parameters()):
        return None
    if initial is None or initial[0] is not model:
        return model, {k: v.detach().clone() for k, v in model.state_dict().items()}
    model.load_state_dict(initial[1])
    return initial
