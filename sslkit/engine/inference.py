"""Inference of a fitted :class:`~sslkit.engine.Trainer`: ``predict_proba``, ``predict``, ``score`` (scikit-learn's
names), with the EMA teacher's weights when EMA is on."""

from __future__ import annotations

import torch
from torch import nn

from sslkit._checks import check_count
from sslkit.algorithms.base import logits_of

from .inputs import as_features, as_labels, eval_mode
from .optim import autocast


class Predictor:
    """What a fitted trainer predicts with (mixed into :class:`~sslkit.engine.Trainer`, which sets ``model``,
    ``ema_model_``, ``device_``, ``amp_dtype_`` and the feature shape during ``fit``)."""

    @property
    def eval_model(self) -> nn.Module:
        """The model used for evaluation: the EMA copy when ``ema_decay`` is set, else ``model``."""
        return self.model if getattr(self, "ema_model_", None) is None else self.ema_model_

    def predict_proba(self, X, batch_size: int = 1024):
        """Class probabilities (softmax of the logits), float32, shape (n, num_classes).

        Returns a numpy array for numpy (or array-like) input and a tensor on ``X``'s device for tensor
        input. Uses the EMA weights when EMA is on.
        """
        Xt = self._inference_input(X)
        proba = torch.softmax(self._logits(Xt, batch_size), dim=1)
        return proba.to(X.device) if isinstance(X, torch.Tensor) else proba.cpu().numpy()

    def predict(self, X, batch_size: int = 1024):
        """Predicted class labels (int64): numpy for numpy input, a tensor on ``X``'s device for tensors."""
        Xt = self._inference_input(X)
        labels = self._logits(Xt, batch_size).argmax(dim=1)
        return labels.to(X.device) if isinstance(X, torch.Tensor) else labels.cpu().numpy()

    def score(self, X, y, batch_size: int = 1024) -> float:
        """Accuracy of :meth:`predict` on ``(X, y)`` as a Python float."""
        Xt = self._inference_input(X)
        yt = as_labels(y, "y", Xt.shape[0], "X", self.device_)
        return self._accuracy(Xt, yt, batch_size)

    def _inference_input(self, X) -> torch.Tensor:
        if not hasattr(self, "history_"):
            raise RuntimeError("this Trainer is not fitted yet: call fit() first")
        Xt = as_features(X, "X", self.device_)
        self._check_shape(Xt, "X")
        return Xt

    def _check_shape(self, X: torch.Tensor, name: str) -> None:
        if tuple(X.shape[1:]) != self._feature_shape:
            raise ValueError(f"{name} has sample shape {tuple(X.shape[1:])} but X_l has {self._feature_shape}")

    def _logits(self, X: torch.Tensor, batch_size: int = 1024) -> torch.Tensor:
        batch_size = check_count(batch_size, "batch_size", allow_zero=False)
        model = self.eval_model
        chunks = []
        with torch.no_grad(), eval_mode(model), autocast(self.amp_dtype_, X.device):
            for i in range(0, X.shape[0], batch_size):
                chunks.append(logits_of(model, X[i : i + batch_size]).float())
        return torch.cat(chunks)

    def _accuracy(self, X: torch.Tensor, y: torch.Tensor, batch_size: int = 1024) -> float:
        correct = (self._logits(X, batch_size).argmax(dim=1) == y).sum()
        return float(correct) / X.shape[0]
