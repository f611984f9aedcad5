"""sslkit.active.learning_loss (LearnLoss): eq. 2's margin ranking loss against a brute-force loop over the pairs, the
loss-prediction net and its stop-gradient switch, eq. 3's training, the pick of the highest predicted losses."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from sslkit.active import LearnLoss, LearnLossTraining, LossPredictionNet, loss_prediction_loss
from sslkit.algorithms.base import Batch, FitContext
from sslkit.models import MLP

pytestmark = pytest.mark.usefixtures("one_thread")  # conftest.py


def brute_force_ranking_loss(pred, target, margin):
    B = len(pred)
    total = 0.0
    for i in range(B // 2):
        j = B - 1 - i
        sign = 1.0 if target[i] > target[j] else -1.0
        total += max(0.0, -sign * (pred[i] - pred[j]) + margin)
    return total / (B // 2)


@pytest.mark.parametrize("seed", range(4))
def test_loss_prediction_loss_equals_the_pairwise_brute_force(seed):
    g = torch.Generator().manual_seed(seed)
    pred, target = torch.randn(10, generator=g), torch.rand(10, generator=g) * 3
    got = loss_prediction_loss(pred, target, margin=0.5)
    assert float(got) == pytest.approx(brute_force_ranking_loss(pred.tolist(), target.tolist(), 0.5), rel=1e-6)


def test_loss_prediction_loss_rewards_the_right_order_and_ignores_the_scale():
    target = torch.tensor([3.0, 1.0, 0.5, 2.0])  # pairs (0, 3) and (1, 2): l_0 > l_3, l_1 > l_2
    right = torch.tensor([10.0, 5.0, 2.0, 7.0])  # same order, gaps >= 1: no loss
    wrong = torch.tensor([7.0, 2.0, 5.0, 10.0])
    assert float(loss_prediction_loss(right, target)) == 0.0
    assert float(loss_prediction_loss(wrong, target)) == pytest.approx(((3 + 1) + (3 + 1)) / 2)
    pred = torch.randn(4, requires_grad=True)
    loss_prediction_loss(pred, target.requires_grad_()).backward()
    assert target.grad is None  # the target loss is a constant
    with pytest.raises(ValueError, match="even"):
        loss_prediction_loss(torch.zeros(3), torch.zeros(3))


def make_lossnet(seed=0):
    torch.manual_seed(seed)
    return LossPredictionNet(MLP(5, 3, hidden=(8, 6), dropout=0.0), ("body.1",), (5,))


def test_loss_prediction_net_reads_the_layers_and_can_stop_the_gradient():
    net = make_lossnet()
    x = torch.randn(8, 5)
    logits, feats, pred = net(x)
    assert logits.shape == (8, 3) and feats.shape == (8, 6) and pred.shape == (8,)
    assert [b.in_features for b in net.loss_module.branches] == [8, 6]  # body.1 (8 units) + the features (6)
    pred.sum().backward()
    assert net.backbone.body[0].weight.grad.abs().sum() > 0
    net.zero_grad()
    net.detach_features = True
    net(x)[2].sum().backward()
    assert net.backbone.body[0].weight.grad is None or net.backbone.body[0].weight.grad.abs().sum() == 0
    assert net.loss_module.out.weight.grad.abs().sum() > 0
    import copy

    twin = copy.deepcopy(net)  # hooks live only during a forward: a copy computes its own outputs
    torch.testing.assert_close(twin(x)[2], net(x)[2])
    with pytest.raises(ValueError, match="no submodule"):
        LossPredictionNet(MLP(5, 3), ("body.9",), (5,))


def test_learnloss_training_is_eq3_and_stops_the_gradient_on_schedule():
    net = make_lossnet()
    algo = LearnLossTraining(weight=0.7, stop_gradient_at=0.6)
    algo.setup(net, FitContext(num_classes=3, total_steps=50))
    (hook,) = algo.hooks()
    assert hook.unit == "iteration" and hook.start == 30 and hook.every is None
    x, y = torch.randn(7, 5), torch.tensor([0, 1, 2, 0, 1, 2, 0])
    out = algo.loss(net, Batch(x, y))
    logits, _, pred = net(x)
    ce = nn.functional.cross_entropy(logits, y, reduction="none")
    expect = ce.mean() + 0.7 * loss_prediction_loss(pred[:6], ce[:6])  # an odd batch pairs its even prefix
    torch.testing.assert_close(out.loss, expect)

    class T:
        model = net

    hook.fn(T)
    assert net.detach_features


def test_learnloss_picks_the_highest_predicted_losses_of_its_candidates():
    net = make_lossnet(1)
    X = torch.randn(50, 5)
    net.eval()
    with torch.no_grad():
        pred = net(X)[2]
    sel = LearnLoss(6).fit(net, X)
    assert sel.indices_.tolist() == torch.argsort(pred, descending=True)[:6].tolist()
    sub = LearnLoss(4, subset=20, seed=3).fit(net, X)
    cand = sub.candidates_
    assert len(cand) == 20 and set(sub.indices_.tolist()) <= set(cand.tolist())
    assert sub.indices_.tolist() == cand[torch.argsort(pred[cand], descending=True)[:4]].tolist()
    with pytest.raises(TypeError, match="LossPredictionNet"):
        LearnLoss(2).fit(MLP(5, 3), X)
