"""Tests of sslkit.data.augment: batched FixMatch augmentations (paper A App. D.1)."""

import colorsys

import numpy as np
import pytest
import torch

from sslkit.data import augment as A

torch.set_num_threads(1)


def _shift(x, dy, dx):
    """x shifted by (dy, dx) pixels (content moves down/right), zero fill."""
    out = torch.zeros_like(x)
    h, w = x.shape[-2:]
    ys, yd = (slice(0, h - dy), slice(dy, h)) if dy >= 0 else (slice(-dy, h), slice(0, h + dy))
    xs, xd = (slice(0, w - dx), slice(dx, w)) if dx >= 0 else (slice(-dx, w), slice(0, w + dx))
    out[..., yd, xd] = x[..., ys, xs]
    return out


def _find_shift(out, img, max_shift):
    for dy in range(-max_shift, max_shift + 1):
        for dx in range(-max_shift, max_shift + 1):
            if torch.equal(out, _shift(img, dy, dx)):
                return dy, dx
    return None


@pytest.mark.parametrize(
    "fn,shape",
    [
        (A.tabular_weak, (50, 7)),
        (A.tabular_strong, (50, 7)),
        (A.mnist_weak, (6, 1, 28, 28)),
        (A.mnist_strong, (6, 1, 28, 28)),
        (A.cifar_weak, (6, 3, 32, 32)),
        (A.cifar_strong, (6, 3, 32, 32)),
    ],
)
def test_shapes_ranges_and_determinism(fn, shape):
    x = torch.rand(shape)
    torch.manual_seed(3)
    a = fn(x)
    torch.manual_seed(3)
    b = fn(x)
    torch.manual_seed(4)
    c = fn(x)
    assert a.shape == x.shape and a.dtype == x.dtype and a.device == x.device
    assert torch.equal(a, b) and not torch.equal(a, c)
    if len(shape) == 4:
        assert a.min() >= 0 and a.max() <= 1
    assert torch.equal(x, x.clone())  # input untouched (functions are pure)


def test_tabular_noise_and_feature_dropout_statistics():
    torch.manual_seed(0)
    x = torch.randn(4000, 25)
    weak = A.tabular_weak(x) - x
    assert abs(weak.mean().item()) < 0.005 and abs(weak.std().item() - 0.1) < 0.003
    strong = A.tabular_strong(x)
    dropped = strong == 0
    assert abs(dropped.float().mean().item() - 0.1) < 0.005
    noise = (strong - x)[~dropped]
    assert abs(noise.std().item() - 0.2) < 0.005  # kept entries are not rescaled
    assert torch.equal(A.tabular_strong(x, sigma=0.0, drop=0.0), x)


def test_affine_translation_is_integer_pixel_shift_and_identity():
    torch.manual_seed(1)
    x = torch.rand(8, 1, 12, 12)
    assert torch.equal(A.random_affine(x, 0.0), x)
    out = A.random_affine(x, 0.0, translate=(0.25, 0.25))
    shifts = [_find_shift(out[i], x[i], 3) for i in range(8)]
    assert all(s is not None for s in shifts)  # |shift| <= round(0.25 * 12) = 3, whole pixels, zero fill
    assert len(set(shifts)) > 1  # per-sample parameters


def test_affine_rotates_about_the_centre_and_keeps_a_constant_interior():
    torch.manual_seed(0)
    y = torch.zeros(4, 1, 9, 9)
    y[:, 0, 4, 4] = 1.0
    assert (A.random_affine(y, 30.0)[:, 0, 4, 4] == 1.0).all()  # the centre pixel stays put
    const = torch.full((4, 1, 16, 16), 0.5)
    out = A.random_affine(const, 15.0, (0.1, 0.1), (0.9, 1.1))
    assert (out[:, :, 6:10, 6:10] == 0.5).all() and ((out == 0) | (out == 0.5)).all()  # nearest, zero fill


def test_random_crop_is_bounded_shift_with_zero_padding():
    torch.manual_seed(2)
    x = torch.rand(10, 3, 10, 10) + 0.1
    out = A.random_crop(x, 4)
    shifts = [_find_shift(out[i], x[i], 4) for i in range(10)]
    assert all(s is not None for s in shifts) and len(set(shifts)) > 1
    assert torch.equal(A.random_crop(x, 0), x)


def test_hflip_grayscale_and_erasing_extremes():
    x = torch.rand(5, 3, 6, 7)
    assert torch.equal(A.random_hflip(x, 1.0), x.flip(-1)) and torch.equal(A.random_hflip(x, 0.0), x)
    g = A.random_grayscale(x, 1.0)
    luma = 0.299 * x[:, 0] + 0.587 * x[:, 1] + 0.114 * x[:, 2]
    assert torch.allclose(g, luma.unsqueeze(1).expand_as(x))
    assert torch.equal(A.random_grayscale(x, 0.0), x)
    torch.manual_seed(0)
    big = torch.rand(200, 1, 32, 32) + 0.5  # no natural zeros
    er = A.random_erasing(big, p=1.0, scale=(0.02, 0.1))
    zero = er[:, 0] == 0
    frac = zero.float().mean(dim=(1, 2))
    assert (frac > 0).all() and (frac <= 0.1 * 1.3 + 1 / 32).all() and (frac >= 0.02 * 0.5).all()
    rows, cols = zero.any(dim=2), zero.any(dim=1)  # (N, H), (N, W): a full rectangle
    assert torch.equal(zero.sum(dim=(1, 2)), rows.sum(1) * cols.sum(1))
    assert torch.equal(A.random_erasing(big, p=0.0), big)
    half = A.random_erasing(big, p=0.5)
    assert 0.3 < (half != big).flatten(1).any(1).float().mean() < 0.7


def test_hsv_conversion_matches_colorsys_and_hue_jitter_keeps_value():
    torch.manual_seed(0)
    x = torch.rand(3, 3, 4, 4)
    hsv = A._rgb_to_hsv(x)
    px = x.permute(0, 2, 3, 1).reshape(-1, 3).double().numpy()
    ref = np.array([colorsys.rgb_to_hsv(*p) for p in px])
    got = hsv.permute(0, 2, 3, 1).reshape(-1, 3).double().numpy()
    assert np.allclose(got, ref, atol=1e-5)
    assert torch.allclose(A._hsv_to_rgb(hsv), x, atol=1e-5)
    j = A.color_jitter(x, 0.0, 0.0, 0.0, 0.1)  # hue only: V = max channel and S unchanged
    assert torch.allclose(j.max(dim=1).values, x.max(dim=1).values, atol=1e-5)
    assert torch.equal(A.color_jitter(x, 0.0, 0.0, 0.0, 0.0), x)
    b = A.color_jitter(x, 0.4, 0.0, 0.0, 0.0)
    ratio = (b / x).flatten(1)
    assert ((ratio.max(1).values - ratio.min(1).values) < 1e-4).all() or (b == 1).any()  # one factor per image


def test_errors_are_clear():
    with pytest.raises(TypeError, match="torch tensor"):
        A.tabular_weak(np.zeros((3, 2)))
    with pytest.raises(TypeError, match="floating"):
        A.tabular_weak(torch.zeros(3, 2, dtype=torch.long))
    with pytest.raises(ValueError, match=r"\(N, C, H, W\)"):
        A.mnist_weak(torch.rand(3, 28, 28))
    with pytest.raises(ValueError, match="3 channels"):
        A.cifar_strong(torch.rand(2, 1, 8, 8))
    with pytest.raises(ValueError, match="drop"):
        A.tabular_strong(torch.rand(3, 2), drop=1.5)
    with pytest.raises(ValueError, match="sigma"):
        A.tabular_weak(torch.rand(3, 2), sigma=-1)
    with pytest.raises(ValueError, match="translate"):
        A.random_affine(torch.rand(1, 1, 4, 4), 5.0, translate=(2.0, 0.0))
    with pytest.raises(ValueError, match="padding"):
        A.random_crop(torch.rand(1, 1, 4, 4), -1)
