"""sslkit.data.images.images_to_tensor: (N, H, W, C) uint8 -> (N, C, H, W) float32 in [0, 1], grey images,
per-channel normalisation and the input checks."""

import numpy as np
import pytest
import torch

from sslkit.data.images import images_to_tensor


def test_images_to_tensor():
    X = np.arange(2 * 2 * 3 * 3, dtype=np.uint8).reshape(2, 2, 3, 3)  # (N, H, W, C)
    t = images_to_tensor(X)
    assert t.shape == (2, 3, 2, 3) and t.dtype == torch.float32
    assert t[1, 2, 0, 1].item() == pytest.approx(X[1, 0, 1, 2] / 255)
    g = images_to_tensor(np.full((4, 5, 6), 255, np.uint8), mean=0.5, std=0.25)
    assert g.shape == (4, 1, 5, 6) and torch.allclose(g, torch.full_like(g, 2.0))
    n = images_to_tensor(X, mean=(0.0, 0.5, 1.0), std=(1.0, 1.0, 0.5))
    assert n[0, 2, 0, 0].item() == pytest.approx((X[0, 0, 0, 2] / 255 - 1.0) / 0.5)
    assert torch.equal(images_to_tensor(torch.from_numpy(X)), t)
    with pytest.raises(TypeError, match="uint8"):
        images_to_tensor(X.astype(np.float32))
    with pytest.raises(ValueError, match="1 or 3 values"):
        images_to_tensor(X, mean=(0.1, 0.2), std=1.0)
    with pytest.raises(ValueError, match="std must be positive"):
        images_to_tensor(X, mean=0.0, std=0.0)
