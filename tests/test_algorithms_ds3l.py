"""DS3L (sslkit.algorithms.ds3l, paper C §4, F.3): the meta network gets a gradient, one outer step lowers the labeled
loss after the inner step, and the unlabeled losses do not step the meta network."""

import copy

import pytest
import torch
import torch.nn.functional as F
from test_algorithms_meta_step import Toy, toy_problem

from sslkit.algorithms import DS3L, FitContext
from sslkit.algorithms.meta_step import split_base_loss


def test_ds3l_meta_network_receives_a_nonzero_gradient():
    model, batch, algo = ds3l_setup()
    grads = torch.autograd.grad(meta_loss(algo, model, batch), list(algo.meta_net_.parameters()))
    assert all(bool(torch.isfinite(g).all()) for g in grads)
    assert sum(float(g.abs().sum()) for g in grads) > 0


def test_ds3l_one_outer_step_lowers_the_labeled_loss_after_the_inner_step():
    model, batch, algo = ds3l_setup()
    theta0 = copy.deepcopy(model.state_dict())
    before = float(meta_loss(algo, model, batch).detach())
    out = algo.loss(model, batch)  # one meta-network step (the model is not stepped)
    assert float(out.logs["meta_loss"]) == pytest.approx(before, rel=1e-6)
    assert all(torch.equal(v, model.state_dict()[k]) for k, v in theta0.items())
    after = float(meta_loss(algo, model, batch).detach())
    assert after < before
    # the returned loss uses the updated meta-network's normalised weights
    w = algo.weights_
    assert float(w.sum()) == pytest.approx(1.0, abs=1e-5) and bool((w > 0).all())
    l_u = F.cross_entropy(model(batch.x_u), algo.base.targets, reduction="none")
    sup = F.cross_entropy(model(batch.x_l), batch.y_l)
    assert float(out.loss.detach()) == pytest.approx(float((sup + (w * l_u).sum()).detach()), rel=1e-5)


def test_ds3l_unlabeled_losses_do_not_step_the_meta_network():
    model, batch, algo = ds3l_setup()
    before = [p.clone() for p in algo.meta_net_.parameters()]
    u = algo.unlabeled_losses(model, batch.x_u, batch.u_idx)
    assert all(torch.equal(a, b) for a, b in zip(before, algo.meta_net_.parameters()))
    # the base's per-sample losses weighted by the current meta-network, the weights normalised to sum 1
    w = u.mask / u.losses.shape[0]
    probs = torch.softmax(u.logits.detach().float(), dim=1)
    v = algo.meta_net_(probs).detach()
    assert torch.allclose(w, v / v.sum()) and float(w.sum()) == pytest.approx(1.0, abs=1e-6)
    base = algo.base.unlabeled_losses(model, batch.x_u, batch.u_idx)
    assert torch.allclose(u.losses, base.masked())


def ds3l_setup(meta_lr=1e-2, n_u=40, harmful=20):
    model, batch, targets = toy_problem(n_u=n_u, harmful=harmful)
    algo = DS3L(Toy(targets), inner_lr=0.5, meta_lr=meta_lr, hidden=16)
    torch.manual_seed(1)
    algo.setup(model, FitContext(num_classes=2))
    return model, batch, algo


def meta_loss(algo, model, batch):
    sup, losses, out = split_base_loss(algo.base, model, batch)
    probs = torch.softmax(out.unlabeled.logits.detach(), dim=1)
    return algo.meta_objective(model, batch, sup, losses, probs)
