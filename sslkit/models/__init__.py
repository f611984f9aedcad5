"""Models of the three papers. Every model's ``forward(x)`` returns ``(logits, features)``.

``features`` are the penultimate activations, i.e. the input of the final linear layer, which every model
exposes as ``model.classifier`` (so ``logits == model.classifier(features)``); ``model.feature_dim`` is
their width.

* :class:`MLP` and :data:`PAPER_A_MLP_HIDDEN` -- paper A, App. C (tabular);
* :class:`LeNetMNIST`, :class:`LeNetCIFAR` -- paper A, App. C (images);
* :class:`PaperCMNISTCNN` -- paper C, App. F.4 (MNIST OOD);
* :class:`WideResNet`, :func:`wrn28_2` -- the true WRN-28-2 (~1.47M parameters) of paper C / USB;
* :class:`ResNet18` -- torchvision's ResNet-18 (CIFAR stem by default), paper B's active-learning model (App. D.5);
* :func:`param_groups`, :func:`no_weight_decay_names` -- no weight decay on BN and bias parameters.
"""

from sslkit.models.lenet import LeNetCIFAR, LeNetMNIST, PaperCMNISTCNN
from sslkit.models.mlp import MLP, PAPER_A_MLP_HIDDEN
from sslkit.models.resnet import ResNet18
from sslkit.models.utils import count_parameters, no_weight_decay_names, param_groups
from sslkit.models.wrn import WideBasicBlock, WideResNet, wrn28_2

__all__ = [
    "MLP",
    "PAPER_A_MLP_HIDDEN",
    "LeNetMNIST",
    "LeNetCIFAR",
    "PaperCMNISTCNN",
    "WideBasicBlock",
    "WideResNet",
    "wrn28_2",
    "ResNet18",
    "param_groups",
    "no_weight_decay_names",
    "count_parameters",
]
