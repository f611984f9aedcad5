"""Retrieve with full-model gradients (paper C §3.4's alternative): per-sample gradients against autograd one sample
at a time; the selection equals last-layer Retrieve's when the last layer is the whole model; clear errors."""

from __future__ import annotations

import pytest
import torch

from sslkit.coreset import Retrieve
from sslkit.coreset.gradients import last_layer_gradients
from sslkit.coreset.retrieve_full import RetrieveFullModel, per_sample_gradients


def _soft_ce(logits, q):
    return -(q * torch.log_softmax(logits, dim=1)).sum(dim=1)


def test_per_sample_gradients_match_one_backward_per_sample():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Conv2d(1, 3, 3), torch.nn.ReLU(), torch.nn.Flatten(), torch.nn.Linear(12, 4))
    model = model.double()
    x = torch.randn(7, 1, 4, 4, dtype=torch.float64)
    q = torch.softmax(torch.randn(7, 4, dtype=torch.float64), dim=1)
    G = per_sample_gradients(model, x, lambda z, qj: _soft_ce(z, qj)[0], q, batch_size=3)
    assert G.shape == (7, sum(p.numel() for p in model.parameters()))
    for j in range(7):
        grads = torch.autograd.grad(_soft_ce(model(x[j : j + 1]), q[j : j + 1]).sum(), list(model.parameters()))
        assert torch.allclose(G[j], torch.cat([g.reshape(-1) for g in grads]), atol=1e-12)


@pytest.mark.parametrize("greedy", ["stochastic", "naive", "rounds"])
def test_full_model_selection_is_last_layer_retrieve_when_the_model_is_its_last_layer(greedy):
    """A model that is one linear layer on fixed features: the full-model gradients are the last-layer gradients in
    another order, the labeled re-linearisation by autograd equals the closed form, so every pick agrees."""
    gen = torch.Generator().manual_seed(3)
    D, C, N, n_l = 6, 4, 80, 15
    h = torch.randn(N, D, generator=gen, dtype=torch.float64)
    H = torch.randn(n_l, D, generator=gen, dtype=torch.float64)
    y = torch.randint(C, (n_l,), generator=gen)
    q = torch.softmax(2 * torch.randn(N, C, generator=gen, dtype=torch.float64), dim=1)
    model = torch.nn.Linear(D, C).double()
    with torch.no_grad():
        z_u, z_l = model(h), model(H)
    G_last = last_layer_gradients(torch.softmax(z_u, dim=1) - q, h)
    G_full = per_sample_gradients(model, h, lambda z, qj: _soft_ce(z, qj)[0], q)
    opts = {"greedy": greedy, "lr": 0.5, "lam": 2.0, "seed": 11, "rounds": 5}
    last = Retrieve(20, **opts).fit(G_last, z_l, y, H)
    full = RetrieveFullModel(20, **opts).fit(G_full, model, H, y)
    assert full.indices_.tolist() == last.indices_.tolist()
    assert torch.allclose(full.gains_, last.gains_, rtol=1e-9, atol=1e-12)


def test_full_model_selection_errors_are_clear():
    model = torch.nn.Linear(3, 2)
    x, y = torch.randn(5, 3), torch.tensor([0, 1, 0, 1, 1])
    half = torch.full((5, 2), 0.5)
    G = per_sample_gradients(model, x, lambda z, q: _soft_ce(z, q)[0], half)
    with pytest.raises(ValueError, match="width 7, but the model has 8 trainable parameters"):
        RetrieveFullModel(2).fit(G[:, :7], model, x, y)
    with pytest.raises(ValueError, match="must return a scalar"):
        per_sample_gradients(model, x, lambda z: z.sum(dim=1))
    with pytest.raises(ValueError, match="one row per input"):
        per_sample_gradients(model, x, lambda z, q: _soft_ce(z, q)[0], half[:4])
    with pytest.raises(ValueError, match="non-empty tensor, one row per sample"):
        per_sample_gradients(model, x[:0], lambda z: z.sum())
    with pytest.raises(ValueError, match="non-empty tensor"):
        RetrieveFullModel(2).fit(G, model, x[:0], y[:0])
    with pytest.raises(NotImplementedError, match="not a training strategy"):
        RetrieveFullModel(2).select(None)
    frozen = torch.nn.Linear(3, 2).requires_grad_(False)
    with pytest.raises(ValueError, match="no trainable parameter"):
        per_sample_gradients(frozen, x, lambda z: z.sum())


def test_frozen_parameters_stay_out_of_the_rows_and_still_act():
    """A frozen first layer: its parameters are not columns, but the forward pass still goes through it (the rows
    equal autograd's gradients of the trainable layer only)."""
    torch.manual_seed(1)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2)).double()
    model[0].requires_grad_(False)
    x = torch.randn(6, 3, dtype=torch.float64)
    q = torch.softmax(torch.randn(6, 2, dtype=torch.float64), dim=1)
    G = per_sample_gradients(model, x, lambda z, qj: _soft_ce(z, qj)[0], q)
    assert G.shape == (6, 4 * 2 + 2)
    for j in range(6):
        grads = torch.autograd.grad(_soft_ce(model(x[j : j + 1]), q[j : j + 1]).sum(), list(model[2].parameters()))
        assert torch.allclose(G[j], torch.cat([g.reshape(-1) for g in grads]), atol=1e-12)


def test_vat_perturbed_inputs_give_the_loss_pass_and_the_last_bias_columns():
    """``VAT.perturbed_inputs`` under a seed draws what ``VAT.perturbed`` draws (the same ``x + r_adv``: c_lastlayer's
    full-model pass sees the inputs the last-layer pass saw), and the per-sample gradients of VAT's
    ``KL(p_j || p(x_j + r_j))`` at those inputs have, in the last bias's columns, ``softmax(z_adv) - p``."""
    from sslkit.algorithms.vat import VAT, kl_per_sample

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(5, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3)).double()
    x = torch.randn(9, 5, dtype=torch.float64)
    vat = VAT(0.7, xi=1e-3, n_power=2)
    torch.manual_seed(4)
    p, z_adv, _ = vat.perturbed(model, x)
    torch.manual_seed(4)
    p2, x_adv = vat.perturbed_inputs(model, x)
    assert torch.equal(p, p2)
    assert torch.equal(model(x_adv), z_adv)
    assert torch.allclose((x_adv - x).norm(dim=1), torch.full((9,), 0.7, dtype=torch.float64))
    G = per_sample_gradients(model, x_adv.detach(), lambda z, p_j: kl_per_sample(p_j, z)[0], p)
    assert torch.allclose(G[:, -3:], torch.softmax(z_adv, dim=1) - p, atol=1e-12)
    torch.manual_seed(5)
    assert not torch.equal(vat.perturbed_inputs(model, x)[1], x_adv)  # another seed, another draw
