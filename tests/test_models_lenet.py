"""Tests of sslkit.models.lenet: paper A's LeNets for MNIST and CIFAR-10 and paper C's MNIST CNN, layer by layer and by
parameter count."""

from __future__ import annotations

import torch
from torch import nn

from sslkit.models import (
    LeNetCIFAR,
    LeNetMNIST,
    PaperCMNISTCNN,
    count_parameters,
)

torch.set_num_threads(1)


def test_lenet_mnist_layers_exactly_paper_a():
    m = LeNetMNIST(10)
    convs = [c for c in m.modules() if isinstance(c, nn.Conv2d)]
    assert [(c.in_channels, c.out_channels, c.kernel_size, c.padding) for c in convs] == [
        (1, 32, (3, 3), (1, 1)),
        (32, 64, (3, 3), (1, 1)),
    ]
    pools = [p for p in m.modules() if isinstance(p, nn.MaxPool2d)]
    assert [(p.kernel_size, p.stride) for p in pools] == [(2, 2), (2, 2)]
    assert (m.fc.in_features, m.fc.out_features) == (64 * 7 * 7, 128)
    assert (m.classifier.in_features, m.classifier.out_features) == (128, 10)
    assert count_parameters(m) == (9 * 32 + 32) + (9 * 32 * 64 + 64) + (3136 * 128 + 128) + (128 * 10 + 10)


def test_lenet_cifar_layers_exactly_paper_a():
    m = LeNetCIFAR(10)
    convs = [c for c in m.modules() if isinstance(c, nn.Conv2d)]
    assert [(c.in_channels, c.out_channels, c.kernel_size, c.padding) for c in convs] == [
        (3, 64, (3, 3), (1, 1)),
        (64, 128, (3, 3), (1, 1)),
    ]
    assert (m.fc.in_features, m.fc.out_features) == (128 * 8 * 8, 256)
    assert (m.classifier.in_features, m.classifier.out_features) == (256, 10)
    assert count_parameters(m) == (27 * 64 + 64) + (9 * 64 * 128 + 128) + (8192 * 256 + 256) + (256 * 10 + 10)


def test_paper_c_mnist_cnn_layers():
    m = PaperCMNISTCNN(6)
    convs = [c for c in m.modules() if isinstance(c, nn.Conv2d)]
    assert [(c.in_channels, c.out_channels, c.kernel_size) for c in convs] == [(1, 16, (3, 3)), (16, 32, (3, 3))]
    pools = [p for p in m.modules() if isinstance(p, nn.MaxPool2d)]
    assert [(p.kernel_size, p.stride, p.padding) for p in pools] == [(3, 2, 1), (3, 2, 1)]
    assert sum(isinstance(r, nn.ReLU) for r in m.modules()) == 2
    assert count_parameters(m) == (9 * 16 + 16) + (9 * 16 * 32 + 32) + (1568 * 6 + 6)
