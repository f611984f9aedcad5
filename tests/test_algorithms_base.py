"""sslkit.algorithms.base: the loss helpers (supervised_ce, masked_ce, weighted_mean) against USB's criterions,
frozen_bn against USB's Bn_Controller, and the contract's small types (Hook schedules, LossOutput, Batch,
FitContext, UnlabeledLosses)."""

import copy
import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn
from usb_problem import F32, USB, K, needs_usb

from sslkit.algorithms import (
    FitContext,
    Hook,
    LossOutput,
    UnlabeledLosses,
    frozen_bn,
    masked_ce,
    supervised_ce,
    weighted_mean,
)
from sslkit.algorithms.base import eval_logits
from sslkit.algorithms.vat import kl_per_sample
from sslkit.models import MLP
from sslkit.seeding import make_generator


@needs_usb
def test_loss_helpers_match_usb_criterions():
    """``supervised_ce`` = USB ``ce_loss(mean)``; ``masked_ce`` + ``weighted_mean`` = USB
    ``consistency_loss(..., 'ce', mask)`` (mean over the whole batch, masked terms count as 0); USB's soft-target
    ``ce_loss`` with one-hot targets is the hard CE; VAT's ``kl_per_sample`` = USB ``kl_div_with_logit``."""
    g = make_generator(0)
    z, z_t = torch.randn(9, K, generator=g, dtype=torch.float64) * 2, torch.randn(9, K, generator=g) * 2
    y = torch.randint(0, K, (9,), generator=g)
    mask = (torch.rand(9, generator=g) > 0.4).double()
    assert 0 < mask.sum() < 9
    crit = USB.criterions
    torch.testing.assert_close(supervised_ce(z, y).double(), crit.ce_loss(z, y, reduction="mean"), **F32)
    ours = masked_ce(z, y, mask)
    torch.testing.assert_close(ours.double(), crit.ce_loss(z, y) * mask, **F32)
    torch.testing.assert_close(weighted_mean(ours, None).double(), crit.consistency_loss(z, y, "ce", mask), **F32)
    torch.testing.assert_close(crit.ce_loss(z, F.one_hot(y, K).double()), crit.ce_loss(z, y))
    # masked_ce is the mean over the whole batch, not over the confident samples
    assert not torch.isclose(weighted_mean(ours, None), ours.sum() / mask.sum())
    # VAT's KL: batch mean of KL(softmax(z_t) || softmax(z))
    usb_kl = USB.classes["vat"].kl_div_with_logit(None, z_t.double(), z)
    torch.testing.assert_close(kl_per_sample(torch.softmax(z_t.double(), 1), z).mean().double(), usb_kl, **F32)


@needs_usb
def test_usb_bn_controller_freezes_only_2d_batchnorm():
    """USB's ``Bn_Controller`` (used around the unlabeled passes of VAT, Mean Teacher and Pseudo-Label) restores
    only ``BatchNorm2d`` / ``SyncBatchNorm`` statistics: a ``BatchNorm1d`` (tabular networks) keeps the updates of
    the "frozen" passes. sslkit's ``frozen_bn`` freezes every BatchNorm."""
    net = nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4), nn.Unflatten(1, (1, 2, 2)), nn.BatchNorm2d(1))
    x = torch.randn(6, 4) * 3 + 1
    before = copy.deepcopy(net.state_dict())
    with frozen_bn(net):
        net(x)
    assert all(torch.equal(before[k], v) for k, v in net.state_dict().items())
    controller = USB.misc.Bn_Controller()
    controller.freeze_bn(net)
    net(x)
    controller.unfreeze_bn(net)
    after = net.state_dict()
    assert torch.equal(after["3.running_mean"], before["3.running_mean"])  # BatchNorm2d restored
    assert not torch.equal(after["1.running_mean"], before["1.running_mean"])  # BatchNorm1d updated


def test_hook_schedule_table():
    after = Hook(print, start=3, every=2)
    assert [c for c in range(10) if after.due(c)] == [3, 5, 7, 9]
    once = Hook(print, start=4, every=None)
    assert [c for c in range(10) if once.due(c)] == [4]
    before = Hook(print, every=3, when="before")
    assert [c for c in range(8) if before.due(c)] == [0, 3, 6]
    assert [c for c in range(8) if Hook(print, every=3).due(c)] == [3, 6]  # "after" never fires at 0
    for bad in ({"start": -1}, {"every": 0}, {"when": "during"}, {"unit": "step"}):
        with pytest.raises(ValueError):
            Hook(print, **bad)


def test_weighted_mean_is_the_batch_mean_of_the_weighted_values():
    v, w = torch.tensor([1.0, 2.0, 3.0, 6.0]), torch.tensor([0.0, 1.0, 0.5, 2.0])
    assert weighted_mean(v, None).item() == 3.0
    assert weighted_mean(v, w).item() == pytest.approx((0 + 2 + 1.5 + 12) / 4)  # over all 4, not over sum(w)
    with pytest.raises(ValueError, match=r"unlabeled weights have shape \(3,\) but the batch losses \(4,\)"):
        weighted_mean(v, w[:3])


def test_supervised_ce_with_class_weights_is_the_weighted_batch_mean():
    z, y = torch.tensor([[2.0, 0.0], [0.0, 1.0], [1.0, 1.0]]), torch.tensor([0, 1, 0])
    ce = [math.log(1 + math.exp(-2)), math.log(1 + math.exp(-1)), math.log(2)]
    assert supervised_ce(z, y).item() == pytest.approx(sum(ce) / 3)
    w = torch.tensor([0.5, 3.0])
    assert supervised_ce(z, y, w).item() == pytest.approx((0.5 * ce[0] + 3.0 * ce[1] + 0.5 * ce[2]) / 3)
    assert masked_ce(z, y, torch.tensor([1.0, 0.0, 1.0])).tolist() == pytest.approx([ce[0], 0.0, ce[2]])


def test_the_contract_types_check_their_fields():
    ctx = FitContext(num_classes=3, data={"y_l": torch.tensor([0, 2, 2, 0, 2]), "X_u": torch.zeros(7, 4)})
    assert ctx.class_counts.tolist() == [2, 0, 3] and ctx.num_unlabeled == 7 and ctx.get("X_val") is None
    assert FitContext(num_classes=2).class_counts is None and FitContext(num_classes=2).num_unlabeled is None
    with pytest.raises(ValueError, match="num_classes must be a positive integer, got True"):
        FitContext(num_classes=True)
    with pytest.raises(TypeError, match="data must be a dict"):
        FitContext(num_classes=2, data=[1])
    u = UnlabeledLosses(torch.tensor([1.0, 2.0, 4.0]), mask=torch.tensor([1.0, 0.0, 0.5]))
    assert u.masked().tolist() == [1.0, 0.0, 2.0] and UnlabeledLosses(torch.ones(2)).masked().tolist() == [1.0, 1.0]
    with pytest.raises(ValueError, match="UnlabeledLosses.logits must be a tensor with 3 rows"):
        UnlabeledLosses(torch.ones(3), logits=torch.zeros(2, 4))
    with pytest.raises(TypeError, match="must be a 1-D tensor"):
        UnlabeledLosses(torch.ones(3, 1))
    with pytest.raises(TypeError, match=r"LossOutput.loss must be a 0-d tensor, got Tensor of shape \(2,\)"):
        LossOutput(torch.ones(2))
    with pytest.raises(TypeError, match="LossOutput.unlabeled must be None or UnlabeledLosses"):
        LossOutput(torch.tensor(1.0), unlabeled=torch.ones(3))


def test_eval_logits_matches_the_eval_forward_in_chunks_and_restores_modes():

    torch.manual_seed(0)
    model = MLP(2, 3, hidden=(8,), dropout=0.5)
    X = torch.randn(7, 2)
    model.train()
    out = eval_logits(model, X, chunk=3)  # dropout off, three chunks
    model.eval()
    with torch.no_grad():
        assert torch.allclose(out, model(X)[0])
    model.train()
    eval_logits(model, X)
    assert model.training and all(m.training for m in model.modules())
    with pytest.raises(ValueError, match="chunk"):
        eval_logits(model, X, chunk=0)
