"""Shared helpers of the engine's tests (not a test module): a tiny local MLP, a constant net, two blobs, a quiet
CPU Trainer and an algorithm that records every call. No dependency on sslkit.models."""

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from sslkit.algorithms import LossOutput, SSLAlgorithm, Supervised
from sslkit.engine import Trainer


class TinyNet(nn.Module):
    """2-layer MLP returning (logits, features), optionally with BatchNorm and dropout."""

    def __init__(self, d_in=2, k=2, hidden=16, bn=False, dropout=0.0):
        super().__init__()
        self.fc1 = nn.Linear(d_in, hidden)
        self.bn = nn.BatchNorm1d(hidden) if bn else nn.Identity()
        self.drop = nn.Dropout(dropout)
        self.fc2 = nn.Linear(hidden, k)
        self.feature_dim = hidden

    def forward(self, x):
        h = self.drop(F.relu(self.bn(self.fc1(x))))
        return self.fc2(h), h


class ConstNet(nn.Module):
    """Ignores x: logits = bias. On a balanced binary validation set its accuracy is always 0.5."""

    def __init__(self, k=2):
        super().__init__()
        self.bias = nn.Parameter(torch.tensor([0.3, -0.3])[:k].clone())

    def forward(self, x):
        logits = self.bias.expand(x.shape[0], -1) + 0.0 * x[:, :1]
        return logits, logits


def blobs(n=400, seed=0, sep=3.0):
    """Two well separated 2-D Gaussian blobs, balanced, float64 numpy."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 2
    X = rng.normal(size=(n, 2)) + sep * np.stack([2 * y - 1, np.zeros(n)], axis=1)
    return X, y.astype(np.int64)


def net(seed=0, **kw):
    torch.manual_seed(seed)
    return TinyNet(**kw)


def quiet(model, algorithm=None, **kw):
    kw.setdefault("progress", False)
    kw.setdefault("device", "cpu")
    return Trainer(model, algorithm or Supervised(), **kw)


def strip_seconds(history):
    return [{k: v for k, v in rec.items() if k != "seconds"} for rec in history]


class Recorder(SSLAlgorithm):
    """Dummy algorithm: supervised CE, records every call's inputs."""

    name = "recorder"

    def __init__(self, uses_unlabeled=False, trainer_ref=None):
        self.uses_unlabeled = uses_unlabeled
        self.calls = []
        self.trainer = trainer_ref

    def loss(self, model, batch):
        x_l, y_l, x_u, step = batch.x_l, batch.y_l, batch.x_u, batch.step
        lr = self.trainer.optimizer_.param_groups[0]["lr"] if self.trainer is not None else None
        self.calls.append(
            {
                "x_l": x_l.clone(),
                "y_l": y_l.clone(),
                "x_u": None if x_u is None else x_u.clone(),
                "step": step,
                "training": model.training,
                "lr": lr,
            }
        )
        logits, _ = model(x_l)
        ce = F.cross_entropy(logits, y_l)
        self.calls[-1]["ce"] = float(ce.detach())
        return LossOutput(ce, {"loss": float(ce.detach()), "extra": 2.0})


def data(n_l=24, n_u=80, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_l + n_u + 30, 4)).astype(np.float32)
    y = (X[:, 0] > 0).astype(np.int64)
    return X[:n_l], y[:n_l], X[n_l : n_l + n_u], X[n_l + n_u :], y[n_l + n_u :]
