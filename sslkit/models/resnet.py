"""ResNet-18 (He et al. 2016) as torchvision defines it, returning ``(logits, features)`` like every sslkit model.

Paper B App. D.5 trains "ResNet-18" for its supervised active-learning comparison (Table 2) without saying
which variant. :class:`ResNet18` is torchvision's ``resnet18`` (the ImageNet architecture, random
initialisation); ``cifar_stem=True`` (the default) replaces its 7x7 stride-2 stem and max-pool by one 3x3
stride-1 convolution, the usual adaptation to 32x32 images in the active-learning code paper B compares with
(the ImageNet stem reduces a CIFAR image to 8x8 before the first block).
"""

from __future__ import annotations

from torch import nn

from sslkit.models.utils import check_input, check_positive_int


class ResNet18(nn.Module):
    """torchvision's ResNet-18 with ``num_classes`` outputs and ``in_channels`` input channels.

    ``forward(x)`` takes ``(N, in_channels, H, W)`` floats and returns ``(logits, features)``; ``features`` are
    the 512 globally averaged activations of the last block (``feature_dim = 512``), ``logits =
    classifier(features)``. The torchvision modules stay under ``net`` (``net.layer1`` ... ``net.layer4``:
    the four stages, e.g. for a loss prediction module).
    """

    def __init__(self, num_classes, *, in_channels: int = 3, cifar_stem: bool = True):
        super().__init__()
        import torchvision

        self.num_classes = check_positive_int(num_classes, "num_classes")
        self.in_channels = check_positive_int(in_channels, "in_channels")
        self.cifar_stem = bool(cifar_stem)
        net = torchvision.models.resnet18(weights=None, num_classes=self.num_classes)
        if self.cifar_stem:
            net.conv1 = nn.Conv2d(self.in_channels, 64, kernel_size=3, stride=1, padding=1, bias=False)
            net.maxpool = nn.Identity()
        elif self.in_channels != 3:
            net.conv1 = nn.Conv2d(self.in_channels, 64, kernel_size=7, stride=2, padding=3, bias=False)
        self.classifier = net.fc
        net.fc = nn.Identity()
        self.net = net
        self.feature_dim = 512

    def forward(self, x):
        check_input(x, (None, self.in_channels, None, None), "ResNet18")
        features = self.net(x)
        return self.classifier(features), features
