"""Images stored as uint8 arrays -> float tensors for the models."""

from __future__ import annotations

import numpy as np
import torch


def images_to_tensor(X, mean=None, std=None) -> torch.Tensor:
    """uint8 images ``(N, H, W)`` or ``(N, H, W, C)`` -> float32 ``(N, C, H, W)`` in ``[0, 1]``.

    With ``mean`` and ``std`` (a number or one value per channel, on the ``[0, 1]`` scale, e.g. MNIST
    ``0.1307, 0.3081``) the result is ``(x - mean) / std`` per channel. Accepts numpy arrays or torch
    tensors; a tensor stays on its device.
    """
    if isinstance(X, torch.Tensor):
        if X.dtype != torch.uint8:
            raise TypeError(f"X must hold uint8 images, got tensor dtype {X.dtype}")
        t = X
    else:
        X = np.asarray(X)
        if X.dtype != np.uint8:
            raise TypeError(f"X must hold uint8 images, got dtype {X.dtype}")
        t = torch.from_numpy(np.ascontiguousarray(X))
    if t.ndim == 3:
        t = t.unsqueeze(-1)
    if t.ndim != 4:
        raise ValueError(f"X must have shape (N, H, W) or (N, H, W, C), got {tuple(t.shape)}")
    t = t.permute(0, 3, 1, 2).to(torch.float32).div_(255.0).contiguous()
    if mean is None and std is None:
        return t
    if mean is None or std is None:
        raise ValueError("give both mean and std, or neither")
    channels = t.shape[1]
    m = _per_channel(mean, "mean", channels, t.device)
    s = _per_channel(std, "std", channels, t.device)
    if (s <= 0).any():
        raise ValueError(f"std must be positive, got {std!r}")
    return (t - m) / s


def image_stats(X) -> tuple[np.ndarray, np.ndarray]:
    """Per-channel mean and standard deviation (float64, on the ``[0, 1]`` scale) of uint8 images ``(N, H, W)``
    or ``(N, H, W, C)``: the ``mean`` / ``std`` to give :func:`images_to_tensor` for the images' own statistics."""
    X = np.asarray(X)
    x01 = X.reshape(X.shape[0], -1, 1 if X.ndim == 3 else X.shape[-1]).astype(np.float64) / 255.0
    return x01.mean(axis=(0, 1)), x01.std(axis=(0, 1))


def _per_channel(v, name: str, channels: int, device) -> torch.Tensor:
    v = torch.as_tensor(v, dtype=torch.float32, device=device).reshape(-1)
    if v.numel() == 1:
        v = v.expand(channels)
    if v.numel() != channels:
        raise ValueError(f"{name} must have 1 or {channels} values (one per channel), got {v.numel()}")
    if not torch.isfinite(v).all():
        raise ValueError(f"{name} must be finite, got {v.tolist()}")
    return v.view(1, channels, 1, 1)
