"""Device resolution shared by every layer: ``"auto"`` means CUDA, then Apple MPS, then CPU."""

from __future__ import annotations

import torch


def resolve_device(device: str | torch.device | None = "auto") -> torch.device:
    """Return a :class:`torch.device` for ``device``.

    ``"auto"`` (or ``None``) picks ``cuda`` when available, then ``mps``, then ``cpu``.
    Any other string must name a device torch knows and that is available here.
    """
    if device is None or (isinstance(device, str) and device == "auto"):
        if torch.cuda.is_available():
            return torch.device("cuda")
        mps = getattr(torch.backends, "mps", None)
        if mps is not None and mps.is_available():
            return torch.device("mps")
        return torch.device("cpu")
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError) as exc:
        raise ValueError(f"unknown device {device!r}: use 'auto', 'cpu', 'cuda' or 'cuda:N'") from exc
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise RuntimeError(f"device {device!r} was requested but CUDA is not available on this machine")
    return dev
