"""Small CNNs: the LeNet-like nets of paper A (App. C) and paper C's two-layer MNIST CNN (App. F.4)."""

from __future__ import annotations

import torch
from torch import nn

from sslkit.models.utils import check_input, check_positive_int


class _LeNet(nn.Module):
    """``Conv(c_in,c1,3,pad=1) -> ReLU -> MaxPool(2) -> Conv(c1,c2,3,pad=1) -> ReLU -> MaxPool(2)
    -> FC(c2*(s/4)^2, hidden) -> ReLU -> FC(hidden, K)``; features = the ``hidden``-d ReLU output."""

    _name = "LeNet"

    def __init__(self, num_classes, *, in_channels, size, c1, c2, hidden):
        super().__init__()
        self.num_classes = check_positive_int(num_classes, "num_classes")
        self.in_channels, self.input_size = in_channels, size
        self.conv = nn.Sequential(
            nn.Conv2d(in_channels, c1, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(c1, c2, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
        )
        self.fc = nn.Linear(c2 * (size // 4) * (size // 4), hidden)
        self.feature_dim = hidden
        self.classifier = nn.Linear(hidden, self.num_classes)

    def forward(self, x):
        check_input(x, (None, self.in_channels, self.input_size, self.input_size), self._name)
        features = torch.relu(self.fc(torch.flatten(self.conv(x), 1)))
        return self.classifier(features), features


class LeNetMNIST(_LeNet):
    """Paper A, App. C, CNN for MNIST: ``Conv(1,32,3,pad=1) -> ReLU -> MaxPool(2) -> Conv(32,64,3,pad=1)
    -> ReLU -> MaxPool(2) -> FC(64*7*7,128) -> ReLU -> FC(128,K)``.

    Input ``(N, 1, 28, 28)`` floats; ``forward`` returns ``(logits (N,K), features (N,128))`` where
    features are the ReLU output of ``FC(64*7*7,128)``. PyTorch default initialisation (the paper gives none).
    """

    _name = "LeNetMNIST"

    def __init__(self, num_classes):
        super().__init__(num_classes, in_channels=1, size=28, c1=32, c2=64, hidden=128)


class LeNetCIFAR(_LeNet):
    """Paper A, App. C, CNN for CIFAR-10: ``Conv(3,64,3,pad=1) -> ReLU -> MaxPool(2) -> Conv(64,128,3,pad=1)
    -> ReLU -> MaxPool(2) -> FC(128*8*8,256) -> ReLU -> FC(256,K)``.

    Input ``(N, 3, 32, 32)`` floats; ``forward`` returns ``(logits (N,K), features (N,256))``.
    """

    _name = "LeNetCIFAR"

    def __init__(self, num_classes):
        super().__init__(num_classes, in_channels=3, size=32, c1=64, c2=128, hidden=256)


class PaperCMNISTCNN(nn.Module):
    """Paper C (Retrieve), App. F.4, the "two-layer CNN" of the MNIST OOD experiment.

    The paper gives: two conv2d layers 1x16x3 and 16x32x3, two ``MaxPool2d(3, stride=2, padding=1)``,
    ReLU. It does not give the conv padding nor the classifier head; our choices (documented, not from
    the paper):

    * conv padding 1 (``same``), ReLU after each conv, then the pool:
      ``Conv(1,16,3,pad=1) -> ReLU -> MaxPool(3,2,1) -> Conv(16,32,3,pad=1) -> ReLU -> MaxPool(3,2,1)``,
      so a 28x28 image becomes 32x7x7;
    * head: flatten + a single ``Linear(32*7*7, K)`` (no hidden FC layer, since the paper names only two
      layers). ``features`` are the flattened 1568-d conv activations (``feature_dim = 1568``).

    Input ``(N, 1, 28, 28)`` floats; ``forward`` returns ``(logits (N,K), features (N,1568))``.
    """

    def __init__(self, num_classes):
        super().__init__()
        self.num_classes = check_positive_int(num_classes, "num_classes")
        self.conv = nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(3, stride=2, padding=1),
            nn.Conv2d(16, 32, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(3, stride=2, padding=1),
        )
        self.feature_dim = 32 * 7 * 7
        self.classifier = nn.Linear(self.feature_dim, self.num_classes)

    def forward(self, x):
        check_input(x, (None, 1, 28, 28), "PaperCMNISTCNN")
        features = torch.flatten(self.conv(x), 1)
        return self.classifier(features), features
