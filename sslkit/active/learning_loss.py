"""LearnLoss (Yoo & Kweon, CVPR 2019, "Learning loss for active learning").

A small *loss prediction module* is attached to the target model: from the feature maps of several of its
layers (each global-average-pooled, then ``FC -> ReLU`` to ``hidden`` units, concatenated, then ``FC`` to one
number) it predicts the target loss ``l`` of the sample. It is trained jointly with the model. The
mini-batch of size ``B`` is split into ``B/2`` pairs ``x^p = (x_i, x_j)`` and the module learns the *order*
of the two losses, not their value (eq. 2)::

    L_loss(l̂^p, l^p) = max(0, -1(l_i, l_j) · (l̂_i - l̂_j) + ξ),   1(l_i, l_j) = +1 if l_i > l_j else -1

and the model minimises (eq. 3) ``(1/B) Σ L_target(ŷ, y) + λ (2/B) Σ_pairs L_loss(l̂^p, l^p)`` with the target
loss ``l`` treated as a constant inside ``L_loss``; ξ = 1, λ = 1. After a fixed share of training (epoch 120 of
200 in the paper) the gradient from the module into the target model is stopped, so the features stop
serving the loss predictor. **Sampling**: score a random candidate subset of the pool (10 000 in the paper)
by the predicted loss and label the ``m`` highest.

Pairs here are ``(x_i, x_{B-1-i})``, ``i < B/2`` (the public re-implementations'; the paper only says "pairs"),
and ``1(l_i, l_j) = -1`` on a tie.
"""

from __future__ import annotations

import math
import numbers

import torch
import torch.nn.functional as F
from torch import nn

from sslkit._checks import check_count, check_seed
from sslkit.active.scoring import as_inputs, candidate_rows, check_budget, check_model, evaluating, top_m
from sslkit.algorithms.base import Hook, LossOutput, SSLAlgorithm
from sslkit.algorithms.views import Views

__all__ = [
    "loss_prediction_loss",
    "LossPredictionModule",
    "LossPredictionNet",
    "LearnLossTraining",
    "LearnLoss",
]


def loss_prediction_loss(predicted, target, margin: float = 1.0) -> torch.Tensor:
    """Yoo & Kweon's eq. 2 averaged over the ``B/2`` pairs ``(i, B-1-i)`` of a batch of even size ``B``.

    ``predicted``: the module's ``l̂`` (B,), ``target``: the target losses ``l`` (B,), detached here.
    """
    if predicted.dim() != 1 or predicted.shape != target.shape:
        raise ValueError(
            "predicted and target must be 1-D of the same length, got "
            f"{tuple(predicted.shape)} and {tuple(target.shape)}"
        )
    B = predicted.shape[0]
    if B % 2 or B == 0:
        raise ValueError(f"the batch must have an even, positive size to form pairs, got {B}")
    target = target.detach()
    d_pred = (predicted - predicted.flip(0))[: B // 2]
    d_true = (target - target.flip(0))[: B // 2]
    sign = torch.where(d_true > 0, 1.0, -1.0).to(d_pred.dtype)
    return torch.clamp(margin - sign * d_pred, min=0).mean()


class LossPredictionModule(nn.Module):
    """The loss prediction module (Yoo & Kweon Fig. 2): one ``GAP -> FC(hidden) -> ReLU`` branch per input
    feature map (4-D maps are averaged over space, 2-D features used as they are), concatenated, then
    ``FC -> 1``. ``forward(list of tensors) -> (B,)``."""

    def __init__(self, in_channels, hidden: int = 128):
        super().__init__()
        in_channels = [check_count(c, "in_channels", allow_zero=False) for c in in_channels]
        if not in_channels:
            raise ValueError("in_channels must list at least one feature width")
        hidden = check_count(hidden, "hidden", allow_zero=False)
        self.branches = nn.ModuleList(nn.Linear(c, hidden) for c in in_channels)
        self.out = nn.Linear(hidden * len(in_channels), 1)

    def forward(self, features):
        if len(features) != len(self.branches):
            raise ValueError(f"expected {len(self.branches)} feature maps, got {len(features)}")
        parts = [
            F.relu(fc(f.mean(dim=tuple(range(2, f.dim()))) if f.dim() > 2 else f))
            for fc, f in zip(self.branches, features)
        ]
        return self.out(torch.cat(parts, dim=1)).squeeze(1)


class LossPredictionNet(nn.Module):
    """A target model with a :class:`LossPredictionModule` on the outputs of its submodules ``layers``
    (names as in ``backbone.named_modules()``, e.g. ``("net.layer1", ..., "net.layer4")`` for
    :class:`sslkit.models.ResNet18`) and, with ``include_features``, on its penultimate features.

    ``forward(x) -> (logits, features, predicted_loss)``. The widths are found with one forward pass of a zero
    input of ``input_shape`` (``(C, H, W)`` or ``(d,)``) in eval mode. With ``detach_features = True`` the
    module reads detached feature maps: no gradient flows from it into the backbone (Yoo & Kweon's stop after
    epoch 120). The layer outputs are captured by forward hooks that live only during one ``forward`` call, so
    copies of the net (e.g. an EMA teacher) work.
    """

    def __init__(self, backbone, layers=(), input_shape=None, *, include_features: bool = True, hidden: int = 128):
        super().__init__()
        self.backbone = check_model(backbone, "backbone")
        names = dict(backbone.named_modules())
        self.layers = tuple(layers)
        missing = [n for n in self.layers if n not in names or not n]
        if missing:
            raise ValueError(f"backbone has no submodule(s) {missing}; some of its names: {list(names)[1:12]}")
        if not self.layers and not include_features:
            raise ValueError("give layers or include_features=True: the module needs at least one input")
        if input_shape is None:
            raise ValueError("input_shape is required, e.g. (3, 32, 32) or (64,), to size the module")
        self.include_features = bool(include_features)
        self.detach_features = False
        was = backbone.training
        backbone.eval()
        with torch.no_grad():
            _, _, feats = self._run(torch.zeros(2, *input_shape, device=next(backbone.parameters()).device))
        backbone.train(was)
        self.loss_module = LossPredictionModule([f.shape[1] for f in feats], hidden)

    def _run(self, x):
        captured, handles = {}, []
        modules = dict(self.backbone.named_modules())
        for name in self.layers:
            handles.append(
                modules[name].register_forward_hook(lambda _m, _i, out, name=name: captured.__setitem__(name, out))
            )
        try:
            out = self.backbone(x)
        finally:
            for h in handles:
                h.remove()
        if not isinstance(out, (tuple, list)) or len(out) < 2:
            raise ValueError("the backbone must return (logits, features)")
        feats = [captured[n] for n in self.layers] + ([out[1]] if self.include_features else [])
        return out[0], out[1], feats

    def forward(self, x):
        logits, features, feats = self._run(x)
        if self.detach_features:
            feats = [f.detach() for f in feats]
        return logits, features, self.loss_module(feats)


class LearnLossTraining(SSLAlgorithm):
    """Supervised training of a :class:`LossPredictionNet` with Yoo & Kweon's eq. 3:
    ``mean CE + λ · loss_prediction_loss(l̂, CE)`` on each labeled batch (the largest even prefix of it forms the
    pairs). After ``stop_gradient_at`` of the planned optimiser steps (0.6 = epoch 120 of 200) the net's
    ``detach_features`` is switched on. ``augment`` / ``mean`` / ``std``: an optional weak view of the
    labeled batch (:class:`sslkit.algorithms.Views`; None = no augmentation). Logs ``loss``, ``target_loss``
    and ``loss_pred_loss``.
    """

    name = "learnloss"
    uses_unlabeled = False

    def __init__(
        self,
        *,
        weight: float = 1.0,
        margin: float = 1.0,
        stop_gradient_at: float = 0.6,
        augment=None,
        mean=None,
        std=None,
    ):
        for n, v in (("weight", weight), ("margin", margin)):
            if isinstance(v, bool) or not isinstance(v, numbers.Real) or not 0 <= v < math.inf:
                raise ValueError(f"{n} must be a finite number >= 0, got {v!r}")
        if (
            isinstance(stop_gradient_at, bool)
            or not isinstance(stop_gradient_at, numbers.Real)
            or not 0 <= stop_gradient_at <= 1
        ):
            raise ValueError(f"stop_gradient_at must be a fraction of training in [0, 1], got {stop_gradient_at!r}")
        self.weight, self.margin, self.stop_gradient_at = float(weight), float(margin), float(stop_gradient_at)
        self.views = None if augment is None else Views(augment, mean=mean, std=std)
        self._stop_step = None

    def setup(self, model, ctx):
        if not isinstance(model, LossPredictionNet):
            raise TypeError(f"LearnLossTraining trains a LossPredictionNet, got {type(model).__name__}")
        model.detach_features = False
        self._stop_step = round(self.stop_gradient_at * ctx.total_steps) if ctx.total_steps else None

    def hooks(self):
        if not self._stop_step:
            return []

        def stop_gradient(trainer):
            trainer.model.detach_features = True

        return [
            Hook(stop_gradient, every=None, unit="iteration", start=self._stop_step, name="learnloss_stop_gradient")
        ]

    def loss(self, model, batch):
        x = batch.x_l if self.views is None else self.views.weak(batch.x_l)
        logits, _, predicted = model(x)
        target = F.cross_entropy(logits.float(), batch.y_l, reduction="none")
        ce = target.mean()
        even = target.shape[0] - target.shape[0] % 2
        lp = loss_prediction_loss(predicted[:even].float(), target[:even], self.margin) if even else ce.new_zeros(())
        return LossOutput(
            loss=ce + self.weight * lp,
            logs={"loss": ce.detach(), "target_loss": ce.detach(), "loss_pred_loss": lp.detach()},
        )


class LearnLoss:
    """LearnLoss sampling: ``LearnLoss(m, subset=10000).fit(model, X_unlabeled)`` with a trained
    :class:`LossPredictionNet`; scores ``subset`` random pool rows (all when None or larger than the pool;
    drawn with ``seed``) by the predicted loss (eval mode) and keeps the ``m`` highest. Sets ``indices_``
    (int64 rows of ``X_unlabeled``, highest first), ``scores_`` (predicted loss of every scored row) and
    ``candidates_`` (the scored rows).
    """

    def __init__(self, m, *, subset=None, batch_size: int = 1024, seed=0):
        self.m, self.subset, self.seed = m, subset, seed
        self.batch_size = check_count(batch_size, "batch_size", allow_zero=False)

    def fit(self, model, X_unlabeled):
        if not isinstance(model, LossPredictionNet):
            raise TypeError(f"LearnLoss needs a trained LossPredictionNet, got {type(model).__name__}")
        X = as_inputs(X_unlabeled, "X_unlabeled", device=next(model.parameters()).device)
        cand = candidate_rows(X.shape[0], self.subset, check_seed(self.seed)).to(X.device)
        m = check_budget(self.m, cand.shape[0], "candidate rows")
        Xc = X[cand]
        with evaluating(model), torch.no_grad():
            scores = torch.cat(
                [model(Xc[i : i + self.batch_size])[2].float() for i in range(0, Xc.shape[0], self.batch_size)]
            )
        self.candidates_, self.scores_ = cand, scores
        self.indices_ = cand[top_m(scores, m)]
        return self

    def __repr__(self) -> str:
        return f"LearnLoss(m={self.m!r}, subset={self.subset!r})"
