"""Tests of sslkit.models.wrn: WRN-28-2 as USB / FixMatch build it -- the parameter count by formula, the structure,
BatchNorm momentum and epsilon, the init, gradients, any input size, dropout, bad configurations."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from sslkit.models import (
    WideResNet,
    count_parameters,
    wrn28_2,
)

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def wrn():
    torch.manual_seed(0)
    return wrn28_2(10)


def wrn_expected_params(depth: int, k: int, num_classes: int, in_channels: int = 3) -> int:
    """Parameter count of the WRN by formula (weights + biases; BN has weight and bias per channel)."""
    n = (depth - 4) // 6
    ch = [16, 16 * k, 32 * k, 64 * k]
    total = in_channels * 16 * 9 + 16  # stem conv with bias
    for s in range(3):
        c_in, c = ch[s], ch[s + 1]
        total += 2 * c_in + 9 * c_in * c + 2 * c + 9 * c * c + (c_in * c if c_in != c else 0)  # first block
        total += (n - 1) * (2 * c + 9 * c * c + 2 * c + 9 * c * c)  # the other blocks
    total += 2 * ch[3]  # final BN
    total += ch[3] * num_classes + num_classes  # classifier
    return total


def test_wrn28_2_parameter_count_is_the_real_wrn(wrn):
    count = count_parameters(wrn)
    print(f"wrn28_2(10) parameters: {count}")
    assert count == wrn_expected_params(28, 2, 10)
    assert count == 1_467_626
    assert abs(count - 1.47e6) / 1.47e6 < 0.01
    # CORDS' "wrn" is ~23.8M parameters (reference-implementations.md §1.8 D1): we must be far from it.
    assert count < 2e6


@pytest.mark.parametrize("depth,k,classes", [(10, 1, 3), (16, 4, 100), (28, 2, 100)])
def test_wrn_parameter_formula_other_configs(depth, k, classes):
    assert count_parameters(WideResNet(classes, depth=depth, widen_factor=k)) == wrn_expected_params(depth, k, classes)


def test_wrn_structure(wrn):
    convs = [m for m in wrn.modules() if isinstance(m, nn.Conv2d)]
    three = [c for c in convs if c.kernel_size == (3, 3)]
    one = [c for c in convs if c.kernel_size == (1, 1)]
    assert len(three) == 1 + 3 * 4 * 2  # stem + 2 per block, 4 blocks per stage, 3 stages -> depth 28 - 3
    assert len(one) == 3  # 1x1 shortcut in the first block of each stage (16->32, 32->64, 64->128)
    assert [(c.in_channels, c.out_channels, c.stride) for c in one] == [
        (16, 32, (1, 1)),
        (32, 64, (2, 2)),
        (64, 128, (2, 2)),
    ]
    assert convs[0].bias is not None and all(c.bias is None for c in convs[1:])
    assert [len(s) for s in wrn.stages] == [4, 4, 4]
    assert isinstance(wrn.classifier, nn.Linear) and wrn.classifier.in_features == 128 == wrn.feature_dim


def test_wrn_bn_momentum_eps_and_leaky_slope(wrn):
    bns = [m for m in wrn.modules() if isinstance(m, nn.BatchNorm2d)]
    assert len(bns) == 3 * 4 * 2 + 1
    assert all(bn.momentum == 0.001 and bn.eps == 1e-3 for bn in bns)
    acts = [m for m in wrn.modules() if isinstance(m, nn.LeakyReLU)]
    assert len(acts) == len(bns) and all(a.negative_slope == 0.1 for a in acts)
    assert not any(isinstance(m, (nn.ReLU, nn.Dropout)) for m in wrn.modules())


def test_wrn_bn_momentum_is_pytorch_convention():
    # One training-mode forward: running_mean = (1 - 0.001) * 0 + 0.001 * batch_mean (TF decay 0.999).
    torch.manual_seed(0)
    m = wrn28_2(10)
    x = torch.randn(4, 3, 8, 8) + 5.0
    m(x)
    stem_out = m.conv1(x)
    batch_mean = stem_out.mean(dim=(0, 2, 3))
    bn = m.stages[0][0].bn1
    torch.testing.assert_close(bn.running_mean, 0.001 * batch_mean.detach(), rtol=1e-4, atol=1e-7)


def test_wrn_init(wrn):
    bns = [m for m in wrn.modules() if isinstance(m, nn.BatchNorm2d)]
    assert all(torch.all(b.weight == 1) and torch.all(b.bias == 0) for b in bns)
    assert torch.all(wrn.classifier.bias == 0) and torch.all(wrn.conv1.bias == 0)
    # Kaiming normal, fan_out, leaky_relu with a=0: std = sqrt(2 / fan_out); fan_out = out * k * k.
    w = wrn.stages[2][1].conv1.weight  # 128 x 128 x 3 x 3: 147456 samples
    torch.testing.assert_close(w.std().item(), (2.0 / (128 * 9)) ** 0.5, rtol=0.02, atol=0)
    # Xavier normal: std = sqrt(2 / (fan_in + fan_out)).
    big = WideResNet(1000, depth=10, widen_factor=4).classifier.weight  # 1000 x 256
    torch.testing.assert_close(big.std().item(), (2.0 / (256 + 1000)) ** 0.5, rtol=0.02, atol=0)


def test_wrn_every_block_bn_gets_gradient():
    # The first BN of the first block of stages 2 and 3 is dead in the PyTorch FixMatch port; not here.
    torch.manual_seed(0)
    m = wrn28_2(10)
    logits, _ = m(torch.randn(2, 3, 32, 32))
    logits.logsumexp(1).sum().backward()
    for s in range(3):
        assert m.stages[s][0].bn1.weight.grad.abs().sum() > 0


def test_wrn_any_spatial_size_and_in_channels():
    torch.manual_seed(0)
    m = wrn28_2(5, in_channels=1).eval()
    logits, feats = m(torch.randn(3, 1, 28, 28))
    assert logits.shape == (3, 5) and feats.shape == (3, 128)
    with pytest.raises(ValueError, match=r"expects input of shape \(N, 1, \*, \*\), got \(3, 3, 28, 28\)"):
        m(torch.randn(3, 3, 28, 28))


def test_wrn_dropout_option():
    m = wrn28_2(10, drop_rate=0.3)
    drops = [d for d in m.modules() if isinstance(d, nn.Dropout)]
    assert len(drops) == 12 and all(d.p == 0.3 for d in drops)
    assert count_parameters(m) == 1_467_626


@pytest.mark.parametrize(
    "kwargs,exc,msg",
    [
        (dict(depth=27), ValueError, "depth must be 6n"),
        (dict(depth=4), ValueError, "depth must be 6n"),
        (dict(widen_factor=0), ValueError, "widen_factor"),
        (dict(bn_momentum=0.0), ValueError, "bn_momentum"),
        (dict(bn_momentum=0.999), None, None),  # legal in PyTorch convention (but not what you want)
        (dict(leaky_slope=-0.1), ValueError, "leaky_slope"),
        (dict(drop_rate=1.0), ValueError, "drop_rate"),
        (dict(num_classes=0), ValueError, "num_classes"),
        (dict(num_classes=2.5), TypeError, "num_classes"),
    ],
)
def test_wrn_bad_config(kwargs, exc, msg):
    kwargs = {"num_classes": 10, "depth": 10, "widen_factor": 1, **kwargs}
    if exc is None:
        WideResNet(**kwargs)
        return
    with pytest.raises(exc, match=msg):
        WideResNet(**kwargs)
