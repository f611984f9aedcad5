"""Semi-supervised methods as loss objects (see :mod:`sslkit.algorithms.base` for the interface).

Each method is one :class:`SSLAlgorithm` subclass; the training loop is :class:`sslkit.engine.Trainer`.
"""

from sslkit.algorithms.base import Hook, LossOutput, SSLAlgorithm, frozen_bn, logits_of
from sslkit.algorithms.supervised import Supervised

__all__ = ["Hook", "LossOutput", "SSLAlgorithm", "Supervised", "frozen_bn", "logits_of"]
