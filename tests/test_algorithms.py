"""Tests of the algorithm interface (sslkit.algorithms.base), the supervised loss and sslkit.seeding."""

import random

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn

from sslkit.algorithms import Batch, FitContext, Hook, LossOutput, SSLAlgorithm, Supervised, frozen_bn, logits_of
from sslkit.seeding import derive_seeds, make_generator, seed_everything

torch.set_num_threads(1)


class BNNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 4)
        self.bn = nn.BatchNorm1d(4)
        self.conv = nn.Conv2d(1, 2, 1)
        self.bn2 = nn.BatchNorm2d(2)
        self.out = nn.Linear(4, 2)

    def forward(self, x):
        h = F.relu(self.bn(self.fc(x)))
        img = self.bn2(self.conv(h.view(-1, 1, 2, 2)))
        h = h + img.mean(dim=1).flatten(1)
        return self.out(h), h


def bn_state(model):
    return {k: v.clone() for k, v in model.state_dict().items() if "running" in k or "num_batches" in k}


def same(a, b):
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


# ---------------------------------------------------------------------------------------- frozen_bn


def test_frozen_bn_keeps_running_stats_and_restores_updates():
    torch.manual_seed(0)
    model = BNNet().train()
    x = torch.randn(8, 3) * 3 + 1
    model(x)  # some non-trivial running stats
    before = bn_state(model)
    out_normal = model(x)[0]  # normal train-mode forward (updates the stats)
    after_normal = bn_state(model)
    assert not same(before, after_normal)
    with frozen_bn(model):
        out_frozen = model(x)[0]
        model(torch.randn(8, 3))
        assert same(bn_state(model), after_normal)  # untouched inside, including num_batches_tracked
    assert torch.allclose(out_frozen, out_normal)  # still normalises with batch statistics
    assert all(m.track_running_stats for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm))
    model(x)
    assert not same(bn_state(model), after_normal)  # updates resume outside the block


def test_frozen_bn_gradients_flow_eval_mode_and_exception_restores():
    torch.manual_seed(0)
    model = BNNet().train()
    x = torch.randn(8, 3)
    with frozen_bn(model):
        model(x)[0].sum().backward()
    assert model.fc.weight.grad is not None and model.fc.weight.grad.abs().sum() > 0
    model.eval()  # eval mode inside the block still uses the running statistics
    ref = model(x)[0]
    with frozen_bn(model):
        assert torch.equal(model(x)[0], ref)
    model.train()
    with pytest.raises(RuntimeError, match="boom"):
        with frozen_bn(model):
            raise RuntimeError("boom")
    assert model.bn.track_running_stats and model.bn2.track_running_stats
    untracked = nn.BatchNorm1d(4, track_running_stats=False)
    with frozen_bn(untracked):
        pass
    assert untracked.track_running_stats is False  # layers that never tracked stay untracked


# ---------------------------------------------------------------------------------------- interface


def test_loss_output_validation():
    out = LossOutput(torch.tensor(1.5))
    assert out.logs == {}
    with pytest.raises(TypeError, match="0-d tensor"):
        LossOutput(torch.ones(3))
    with pytest.raises(TypeError, match="0-d tensor"):
        LossOutput(1.5)
    with pytest.raises(TypeError, match="logs"):
        LossOutput(torch.tensor(1.0), logs=[1])


def test_base_algorithm_defaults():
    algo = SSLAlgorithm()
    assert algo.uses_unlabeled is False and algo.hooks() == []
    assert algo.setup(nn.Linear(2, 2), FitContext(num_classes=2, device=torch.device("cpu"))) is None
    with pytest.raises(NotImplementedError):
        algo.loss(nn.Linear(2, 2), Batch(torch.zeros(1, 2), torch.zeros(1, dtype=torch.long), None, step=0))


def test_hook_validation_and_due():
    def my_hook(trainer):
        pass

    h = Hook(my_hook, every=3, unit="iteration")
    assert h.name == "my_hook" and [c for c in range(10) if h.due(c)] == [3, 6, 9]
    assert Hook(my_hook, name="x").unit == "epoch"
    with pytest.raises(ValueError, match="every"):
        Hook(my_hook, every=0)
    with pytest.raises(ValueError, match="every"):
        Hook(my_hook, every=True)
    with pytest.raises(ValueError, match="unit"):
        Hook(my_hook, unit="step")
    with pytest.raises(TypeError, match="callable"):
        Hook(3)


def test_logits_of_tuple_and_tensor():
    lin = nn.Linear(2, 3)
    x = torch.randn(4, 2)
    assert torch.equal(logits_of(lin, x), lin(x))
    m, x3 = BNNet().eval(), torch.randn(4, 3)
    assert torch.equal(logits_of(m, x3), m(x3)[0])


# ---------------------------------------------------------------------------------------- supervised


def test_supervised_loss_is_cross_entropy_with_gradient():
    torch.manual_seed(0)
    model = BNNet().train()
    x, y = torch.randn(6, 3), torch.tensor([0, 1, 1, 0, 1, 0])
    algo = Supervised()
    assert algo.name == "supervised" and algo.uses_unlabeled is False
    out = algo.loss(model, Batch(x, y, None, step=0))
    expect = F.cross_entropy(model(x)[0], y)
    assert torch.allclose(out.loss, expect, rtol=1e-6)
    assert float(out.logs["loss"]) == pytest.approx(float(expect.detach()), rel=1e-6)
    assert not out.logs["loss"].requires_grad
    out.loss.backward()
    assert model.out.weight.grad.abs().sum() > 0
    # hand-computed CE on fixed logits
    lin = nn.Linear(1, 2, bias=False)
    with torch.no_grad():
        lin.weight.copy_(torch.tensor([[1.0], [0.0]]))
    loss = Supervised().loss(lin, Batch(torch.tensor([[2.0]]), torch.tensor([1]), None, step=0)).loss
    assert float(loss.detach()) == pytest.approx(np.log(1 + np.exp(2.0)), rel=1e-6)


# ---------------------------------------------------------------------------------------- seeding


def test_seed_everything_reproduces_all_generators():
    seed_everything(7)
    a = (random.random(), np.random.rand(), torch.rand(3))
    seed_everything(7)
    b = (random.random(), np.random.rand(), torch.rand(3))
    assert a[0] == b[0] and a[1] == b[1] and torch.equal(a[2], b[2])
    seed_everything(8)
    assert random.random() != a[0]
    with pytest.raises(TypeError, match="seed"):
        seed_everything(1.0)
    with pytest.raises(ValueError, match="seed"):
        seed_everything(-1)


def test_make_generator_and_derive_seeds():
    g1, g2 = make_generator(3), make_generator(3)
    assert torch.equal(torch.randperm(20, generator=g1), torch.randperm(20, generator=g2))
    assert not torch.equal(
        torch.randperm(20, generator=make_generator(3)), torch.randperm(20, generator=make_generator(4))
    )
    s = derive_seeds(0, 3)
    assert s == derive_seeds(0, 3) and len(set(s)) == 3 and all(0 <= v < 2**63 for v in s)
    assert derive_seeds(1, 3) != s and derive_seeds(0, 0) == []
    make_generator(s[0])  # valid torch seeds
