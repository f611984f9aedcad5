"""Wide ResNet (Zagoruyko & Komodakis 2016) as used by FixMatch / USB: the WRN-28-2 of paper C (App. F.4).

Written from the architecture description (Zagoruyko & Komodakis 2016; USB's ``wrn_28_2``), not from CORDS: CORDS'
"wrn" is a 5-stage, ~23.8M-parameter net whose BN momentum is silently the PyTorch default (§1.8 D1/D2).
The true WRN-28-2 has ~1.47M parameters and a 128-d feature vector.

BatchNorm momentum convention. TensorFlow / USB configs speak of a running-average *decay* of 0.999:
``running = 0.999 * running + 0.001 * batch``. PyTorch's ``momentum`` is the weight of the *new* batch:
``running = (1 - momentum) * running + momentum * batch``. So decay 0.999 is PyTorch ``momentum=0.001``
(the default here); PyTorch's own default 0.1 would be decay 0.9. BN ``eps`` is 1e-3 (TensorFlow's
default, as in USB) in every BN layer.
"""

from __future__ import annotations

import numbers

import torch
from torch import nn

from sslkit.models.utils import check_fraction, check_input, check_positive_int

_BN_EPS = 1e-3


class WideBasicBlock(nn.Module):
    """Pre-activation wide basic block.

    ``o = LeakyReLU(BN(x))``; residual branch ``conv3x3(stride) -> BN -> LeakyReLU -> [Dropout] -> conv3x3``
    applied to ``o``; shortcut ``x`` when shape is unchanged, else ``conv1x1(stride)`` applied to ``x`` --
    or to ``o`` when ``activate_before_residual`` (only the first block of the first stage).

    Note: the PyTorch FixMatch/USB port feeds the *raw* ``x`` to the first conv of the first block of stages
    2 and 3, which leaves that block's first BN without gradient; we follow the TensorFlow original
    (the conv always sees the pre-activated ``o``). Parameter counts are identical.
    """

    def __init__(
        self, in_channels, out_channels, stride, *, bn_momentum, leaky_slope, drop_rate, activate_before_residual=False
    ):
        super().__init__()
        self.bn1 = nn.BatchNorm2d(in_channels, momentum=bn_momentum, eps=_BN_EPS)
        self.act1 = nn.LeakyReLU(leaky_slope)
        self.conv1 = nn.Conv2d(in_channels, out_channels, 3, stride=stride, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(out_channels, momentum=bn_momentum, eps=_BN_EPS)
        self.act2 = nn.LeakyReLU(leaky_slope)
        self.dropout = nn.Dropout(drop_rate) if drop_rate > 0 else nn.Identity()
        self.conv2 = nn.Conv2d(out_channels, out_channels, 3, stride=1, padding=1, bias=False)
        self.identity = in_channels == out_channels and stride == 1
        self.shortcut = None if self.identity else nn.Conv2d(in_channels, out_channels, 1, stride=stride, bias=False)
        self.activate_before_residual = bool(activate_before_residual)

    def forward(self, x):
        o = self.act1(self.bn1(x))
        out = self.conv2(self.dropout(self.act2(self.bn2(self.conv1(o)))))
        if self.identity:
            return x + out
        return self.shortcut(o if self.activate_before_residual else x) + out


class WideResNet(nn.Module):
    """WRN-``depth``-``widen_factor`` for 32x32 images (FixMatch / USB variant).

    Stem ``conv3x3(in_channels, 16, bias=True)``; three stages of ``n = (depth - 4) / 6`` wide basic blocks
    with ``[16k, 32k, 64k]`` channels (k = ``widen_factor``; [32, 64, 128] for WRN-28-2) and strides 1, 2, 2;
    then ``BN -> LeakyReLU(leaky_slope) -> global average pool -> Linear(64k, num_classes)``.

    Init: conv weights Kaiming-normal (fan_out, leaky_relu), linear weight Xavier-normal, BN weight 1 and
    bias 0, all biases 0. BN momentum 0.001 is TensorFlow's decay 0.999 (see the module docstring).

    ``forward(x)`` takes ``(N, in_channels, H, W)`` floats (any H, W; 32x32 for CIFAR) and returns
    ``(logits (N, num_classes), features (N, 64k))``; features are the pooled vector, so
    ``logits == model.classifier(features)``. Use :func:`sslkit.models.param_groups` to skip weight decay on
    BN and bias parameters (USB's ``bn_wd_skip``).
    """

    def __init__(
        self, num_classes, depth=28, widen_factor=2, bn_momentum=0.001, leaky_slope=0.1, drop_rate=0.0, *, in_channels=3
    ):
        super().__init__()
        self.num_classes = check_positive_int(num_classes, "num_classes")
        depth = check_positive_int(depth, "depth")
        if depth < 10 or (depth - 4) % 6 != 0:
            raise ValueError(f"depth must be 6n + 4 with n >= 1 (10, 16, 22, 28, ...), got {depth}")
        self.depth = depth
        self.widen_factor = check_positive_int(widen_factor, "widen_factor")
        bn_momentum = check_fraction(bn_momentum, "bn_momentum", upper_inclusive=True)
        if bn_momentum == 0:
            raise ValueError("bn_momentum must be in (0, 1] (PyTorch convention: weight of the new batch), got 0")
        if isinstance(leaky_slope, bool) or not isinstance(leaky_slope, numbers.Real) or not leaky_slope >= 0:
            raise ValueError(f"leaky_slope must be a non-negative number, got {leaky_slope!r}")
        drop_rate = check_fraction(drop_rate, "drop_rate")
        self.in_channels = check_positive_int(in_channels, "in_channels")

        n = (depth - 4) // 6
        k = self.widen_factor
        channels = [16, 16 * k, 32 * k, 64 * k]
        self.conv1 = nn.Conv2d(self.in_channels, channels[0], 3, padding=1, bias=True)
        stages = []
        for s, stride in enumerate((1, 2, 2)):
            blocks = []
            for b in range(n):
                blocks.append(
                    WideBasicBlock(
                        channels[s] if b == 0 else channels[s + 1],
                        channels[s + 1],
                        stride if b == 0 else 1,
                        bn_momentum=bn_momentum,
                        leaky_slope=float(leaky_slope),
                        drop_rate=drop_rate,
                        activate_before_residual=(s == 0 and b == 0),
                    )
                )
            stages.append(nn.Sequential(*blocks))
        self.stages = nn.Sequential(*stages)
        self.bn = nn.BatchNorm2d(channels[3], momentum=bn_momentum, eps=_BN_EPS)
        self.act = nn.LeakyReLU(float(leaky_slope))
        self.feature_dim = channels[3]
        self.classifier = nn.Linear(channels[3], self.num_classes)
        self._init_weights()

    def _init_weights(self):
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="leaky_relu")
                if m.bias is not None:
                    nn.init.zeros_(m.bias)
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)
            elif isinstance(m, nn.Linear):
                nn.init.xavier_normal_(m.weight)
                nn.init.zeros_(m.bias)

    def forward(self, x):
        check_input(x, (None, self.in_channels, None, None), f"WideResNet-{self.depth}-{self.widen_factor}")
        out = self.act(self.bn(self.stages(self.conv1(x))))
        features = torch.flatten(nn.functional.adaptive_avg_pool2d(out, 1), 1)
        return self.classifier(features), features


def wrn28_2(num_classes, **kwargs) -> WideResNet:
    """The WRN-28-2 of FixMatch/USB and paper C (App. F.4): ~1.47M parameters (1,467,626 for 10 classes,
    incl. the 16 stem-conv biases), BN momentum 0.001 (TF decay 0.999), LeakyReLU 0.1, 128-d features.
    ``kwargs`` go to :class:`WideResNet` (e.g. ``drop_rate``, ``in_channels``)."""
    return WideResNet(num_classes, depth=28, widen_factor=2, **kwargs)
