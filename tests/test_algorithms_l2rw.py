"""L2RW (sslkit.algorithms.l2rw, paper C §4, F.3): the weights are the clipped negative meta-gradient of an explicit
one-step update, harmful points get less weight, the normalisation and the all-zero case."""

import copy

import pytest
import torch
import torch.nn.functional as F
from test_algorithms_meta_step import Toy, explicit_l2rw, toy_problem

from sslkit.algorithms import L2RW, l2rw_weights, weighted_mean


@pytest.mark.parametrize("supervised", [True, False])
def test_l2rw_weights_equal_the_clipped_negative_meta_gradient_of_an_explicit_step(supervised):
    model, batch, targets = toy_problem()
    algo = L2RW(Toy(targets, lambda_u=0.7), inner_lr=0.5, inner_supervised=supervised)
    out = algo.loss(model, batch)
    w_ref, l_u = explicit_l2rw(model, batch, targets, 0.5, 0.7, supervised)
    assert torch.allclose(algo.weights_, w_ref, atol=1e-6)
    assert float(algo.weights_.sum()) == pytest.approx(1.0, abs=1e-6) and bool((algo.weights_ >= 0).all())
    assert 0 < int((algo.weights_ > 0).sum()) < 12
    # closed form at ε = 0: -∂L_S(θ')/∂ε_j = α λ ∇L_S(θ')ᵀ ∇l_j(θ), θ' = θ - α ∇L_S(θ) (or θ)
    W, b = model.weight.detach().clone().requires_grad_(), model.bias.detach().clone().requires_grad_()
    if supervised:
        gW, gb = torch.autograd.grad(F.cross_entropy(batch.x_l @ W.T + b, batch.y_l), (W, b))
        W2, b2 = (W - 0.5 * gW).detach().requires_grad_(), (b - 0.5 * gb).detach().requires_grad_()
    else:
        W2, b2 = W, b
    sW, sb = torch.autograd.grad(F.cross_entropy(batch.x_l @ W2.T + b2, batch.y_l), (W2, b2))
    align = []
    for j in range(12):
        lj = F.cross_entropy((batch.x_u[j] @ W.T + b)[None], targets[j : j + 1])
        jW, jb = torch.autograd.grad(lj, (W, b))
        align.append(float((sW * jW).sum() + (sb * jb).sum()))
    align = torch.clamp(torch.tensor(align), min=0)
    assert torch.allclose(algo.weights_, align / align.sum(), atol=1e-5)
    # the returned loss: L_0 + λ Σ_j w_j l_j, and the contract's per-sample view of it
    sup = F.cross_entropy(model(batch.x_l), batch.y_l)
    assert float(out.loss.detach()) == pytest.approx(float((sup + 0.7 * (w_ref * l_u).sum()).detach()), rel=1e-5)
    assert float(weighted_mean(out.unlabeled.masked(), None).detach()) == pytest.approx(
        float(out.logs["unsup_loss"]), rel=1e-5
    )


def test_l2rw_harmful_points_get_less_weight_and_the_step_leaves_the_model_alone():
    model, batch, targets = toy_problem(n_u=40, harmful=20)
    before = copy.deepcopy(model.state_dict())
    algo = L2RW(Toy(targets), inner_lr=0.5)
    algo.loss(model, batch)
    w = algo.weights_
    assert float(w[:20].sum()) < float(w[20:].sum())
    assert all(torch.equal(v, model.state_dict()[k]) for k, v in before.items())


def test_l2rw_weight_normalisation_and_all_zero_case():
    assert torch.equal(l2rw_weights(torch.tensor([1.0, 2.0])), torch.zeros(2))
    w = l2rw_weights(torch.tensor([-1.0, 3.0, -3.0]))
    assert torch.allclose(w, torch.tensor([0.25, 0.0, 0.75]))
    with pytest.raises(ValueError, match="1-D"):
        l2rw_weights(torch.zeros(2, 2))
    with pytest.raises(ValueError, match="NaN"):
        l2rw_weights(torch.tensor([float("nan")]))
