"""Tests of sslkit.models.resnet: ResNet-18 is torchvision's with the CIFAR stem."""

from __future__ import annotations

import torch

from sslkit.models import (
    ResNet18,
)

torch.set_num_threads(1)


def test_resnet18_is_torchvisions_with_the_cifar_stem():
    import torchvision

    ref = {k: v.shape for k, v in torchvision.models.resnet18(num_classes=10).state_dict().items()}
    ours = {k.removeprefix("net.").replace("classifier.", "fc."): v.shape for k, v in ResNet18(10).state_dict().items()}
    assert ours.keys() == ref.keys()
    assert {k for k in ref if ref[k] != ours[k]} == {"conv1.weight"}  # 7x7 stride 2 -> 3x3 stride 1
    assert ours["conv1.weight"] == (64, 3, 3, 3) and isinstance(ResNet18(10).net.maxpool, torch.nn.Identity)
    plain = ResNet18(10, cifar_stem=False)
    assert plain.net.conv1.kernel_size == (7, 7) and plain(torch.randn(2, 3, 64, 64))[1].shape == (2, 512)
    assert ResNet18(5, in_channels=1)(torch.randn(2, 1, 28, 28))[0].shape == (2, 5)
