"""MCDAL (Cho, Kim, Jung & Kweon, IEEE TNNLS 2022, "MCDAL: Maximum classifier discrepancy for active
learning").

Two auxiliary classification layers ``C1``, ``C2`` sit beside the main classifier ``C`` on the features
``F(x)`` of the target model. The main model (``F`` and ``C``) trains on the labeled cross-entropy; the
auxiliary layers, on detached features, learn to classify the labeled data *while disagreeing as much as
possible* on the unlabeled data (Maximum Classifier Discrepancy, Saito et al. 2018), which draws their
decision boundaries tight around the labeled data::

    min_{C1, C2}  CE(C1(F(x_l)), y) + CE(C2(F(x_l)), y) - λ L_dis(x_u),
    L_dis(x) = d(p1, p2) + d(p1, p) + d(p2, p),     d(a, b) = (1/K) Σ_k |a_k - b_k|,

with ``p, p1, p2`` the softmax outputs of ``C, C1, C2`` (K classes; the L1 discrepancy of MCD). **Sampling**:
the ``m`` unlabeled samples with the largest discrepancy ``||p1 - p2||_1 + ||p1 - p||_1 + ||p2 - p||_1``
(:func:`mcdal_discrepancy`). λ = 1.

From the official code (``chojw/Maximum-Classifier-Discrepancy-for-Active-Learning``): the features reaching
the auxiliary layers are detached, so the discrepancy never trains ``F``; the unlabeled batch goes through the
model in a separate forward pass (it updates the BatchNorm statistics, as there); the official code takes one
CE-only step of the auxiliary layers and then one step of the objective above per iteration, where here the
engine's single optimiser step takes one step on the objective above (and on the main CE). It subtracts the mean
discrepancy of the labeled set before ranking, a constant that does not change the ranking (not done here).
"""

from __future__ import annotations

import math
import numbers

import torch
import torch.nn.functional as F
from torch import nn

from sslkit._checks import check_count
from sslkit.active.scoring import as_inputs, check_budget, check_model, evaluating, top_m
from sslkit.algorithms.base import LossOutput, SSLAlgorithm
from sslkit.algorithms.views import Views

__all__ = ["classifier_discrepancy", "mcdal_discrepancy", "MCDALNet", "MCDALTraining", "MCDAL"]


def classifier_discrepancy(p, q) -> torch.Tensor:
    """Per-sample L1 discrepancy ``Σ_k |p_k - q_k|`` of two probability matrices ``(n, K)`` (shape ``(n,)``);
    the training loss uses its mean divided by ``K``."""
    if p.shape != q.shape or p.dim() != 2:
        raise ValueError(f"p and q must be (n, K) of the same shape, got {tuple(p.shape)} and {tuple(q.shape)}")
    return (p - q).abs().sum(dim=1)


def mcdal_discrepancy(logits, aux1, aux2) -> torch.Tensor:
    """MCDAL's acquisition score from the main and auxiliary logits ``(n, K)``:
    ``||p1 - p2||_1 + ||p1 - p||_1 + ||p2 - p||_1`` with ``p = softmax(logits)`` etc."""
    p, p1, p2 = (torch.softmax(z.float(), dim=1) for z in (logits, aux1, aux2))
    return classifier_discrepancy(p1, p2) + classifier_discrepancy(p1, p) + classifier_discrepancy(p2, p)


class MCDALNet(nn.Module):
    """A target model with MCDAL's two auxiliary linear classifiers on its (detached) penultimate features.

    ``forward(x) -> (logits, features, (aux1_logits, aux2_logits))``; ``feature_dim`` and ``num_classes`` are
    read from the backbone (``backbone.feature_dim``, ``backbone.classifier.out_features``) unless given.
    """

    def __init__(self, backbone, *, feature_dim=None, num_classes=None):
        super().__init__()
        self.backbone = check_model(backbone, "backbone")
        feature_dim = feature_dim or getattr(backbone, "feature_dim", None)
        clf = getattr(backbone, "classifier", None)
        num_classes = num_classes or (clf.out_features if isinstance(clf, nn.Linear) else None)
        if not feature_dim or not num_classes:
            raise ValueError("give feature_dim and num_classes (the backbone exposes no feature_dim / classifier)")
        self.aux1, self.aux2 = nn.Linear(feature_dim, num_classes), nn.Linear(feature_dim, num_classes)

    def forward(self, x):
        out = self.backbone(x)
        logits, features = out[0], out[1]
        h = features.detach()
        return logits, features, (self.aux1(h), self.aux2(h))


class MCDALTraining(SSLAlgorithm):
    """Training of an :class:`MCDALNet` (module docstring): ``CE(C) + CE(C1) + CE(C2) - λ L_dis`` per step,
    where ``CE`` is on the labeled batch and ``L_dis`` (means of ``d``) on the unlabeled batch with the main
    output detached, so the discrepancy moves only ``C1`` and ``C2``. ``augment`` / ``mean`` / ``std``: an
    optional weak view of both batches (None = no augmentation). Logs ``loss`` (the main CE), ``aux_loss`` and
    ``discrepancy``.
    """

    name = "mcdal"
    uses_unlabeled = True

    def __init__(self, *, weight: float = 1.0, augment=None, mean=None, std=None):
        if isinstance(weight, bool) or not isinstance(weight, numbers.Real) or not 0 <= weight < math.inf:
            raise ValueError(f"weight must be a finite number >= 0, got {weight!r}")
        self.weight = float(weight)
        self.views = None if augment is None else Views(augment, mean=mean, std=std)

    def setup(self, model, ctx):
        if not isinstance(model, MCDALNet):
            raise TypeError(f"MCDALTraining trains an MCDALNet, got {type(model).__name__}")

    def loss(self, model, batch):
        xl, xu = batch.x_l, batch.x_u
        if self.views is not None:
            xl, xu = self.views.weak(xl), self.views.weak(xu)
        logits, _, (a1, a2) = model(xl)
        y = batch.y_l
        ce = F.cross_entropy(logits.float(), y)
        aux = F.cross_entropy(a1.float(), y) + F.cross_entropy(a2.float(), y)
        with torch.no_grad():  # the unlabeled pass trains only C1, C2 (features and main output are constants)
            logits_u, h_u = model.backbone(xu)[:2]
        K = logits.shape[1]
        p = torch.softmax(logits_u.float(), 1)
        p1, p2 = torch.softmax(model.aux1(h_u).float(), 1), torch.softmax(model.aux2(h_u).float(), 1)
        dis = (
            classifier_discrepancy(p1, p2) + classifier_discrepancy(p1, p) + classifier_discrepancy(p2, p)
        ).mean() / K
        return LossOutput(
            loss=ce + aux - self.weight * dis,
            logs={"loss": ce.detach(), "aux_loss": aux.detach(), "discrepancy": dis.detach()},
        )


class MCDAL:
    """MCDAL sampling: ``MCDAL(m).fit(model, X_unlabeled)`` with a trained :class:`MCDALNet`; scores every row
    by :func:`mcdal_discrepancy` (eval mode) and keeps the ``m`` highest. Sets ``indices_`` (int64, highest
    first) and ``scores_``."""

    def __init__(self, m, *, batch_size: int = 1024):
        self.m, self.batch_size = m, check_count(batch_size, "batch_size", allow_zero=False)

    def fit(self, model, X_unlabeled):
        if not isinstance(model, MCDALNet):
            raise TypeError(f"MCDAL needs a trained MCDALNet, got {type(model).__name__}")
        X = as_inputs(X_unlabeled, "X_unlabeled", device=next(model.parameters()).device)
        m = check_budget(self.m, X.shape[0])
        parts = []
        with evaluating(model), torch.no_grad():
            for i in range(0, X.shape[0], self.batch_size):
                logits, _, (a1, a2) = model(X[i : i + self.batch_size])
                parts.append(mcdal_discrepancy(logits, a1, a2))
        self.scores_ = torch.cat(parts)
        self.indices_ = top_m(self.scores_, m)
        return self

    def __repr__(self) -> str:
        return f"MCDAL(m={self.m!r})"
