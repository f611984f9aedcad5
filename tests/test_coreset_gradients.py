"""sslkit.coreset.gradients: the closed-form per-sample last-layer gradients of paper C §3.4 against autograd through a
real nn.Linear (per sample, per class, the labeled mean cross-entropy), the nn.Linear layout, bad inputs."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from coreset_problem import C, D, autograd_row, last_layer_problem, unlabeled_losses

from sslkit.coreset import labeled_gradient, last_layer_gradients, logit_gradients, split_last_layer

pytestmark = pytest.mark.usefixtures("one_thread")  # conftest.py


@pytest.fixture()
def problem():
    return last_layer_problem()


def test_closed_form_gradients_equal_autograd_per_sample(problem):
    lin = problem["lin"]
    losses, _ = unlabeled_losses(lin, problem["h_u"], problem["targets"], problem["mask"])
    G, g0 = problem["G"], problem["g0"]
    assert G.shape == (40, C * (1 + D))
    for j in range(40):
        ref = autograd_row(losses[j], lin)
        torch.testing.assert_close(G[j], ref, rtol=1e-12, atol=1e-14)
        torch.testing.assert_close(last_layer_gradients(g0[j : j + 1])[0], ref[:C], rtol=1e-12, atol=1e-14)
    assert (problem["mask"] == 0).any()  # masked samples have zero gradients
    assert float(G[problem["mask"] == 0].abs().max()) == 0.0


def test_per_class_keeps_bias_entry_and_weight_row(problem):
    G, g0, h = problem["G"], problem["g0"], problem["h_u"]
    classes = torch.arange(40) % C
    P = last_layer_gradients(g0, h, classes=classes)
    assert P.shape == (40, 1 + D)
    bias, weight = split_last_layer(G, C)
    for j in range(40):
        c = int(classes[j])
        torch.testing.assert_close(P[j], torch.cat([bias[j, c : c + 1], weight[j, c]]))
    torch.testing.assert_close(last_layer_gradients(g0, h, classes=2), torch.cat([bias[:, 2:3], weight[:, 2]], 1))
    torch.testing.assert_close(last_layer_gradients(g0, classes=classes)[:, 0], bias[torch.arange(40), classes])


def test_labeled_gradient_equals_autograd_of_mean_cross_entropy(problem):
    lin, h_l, y = problem["lin"], problem["h_l"], problem["y"]
    ref = autograd_row(F.cross_entropy(lin(h_l), y), lin)
    torch.testing.assert_close(labeled_gradient(problem["Z"], y, h_l), ref, rtol=1e-12, atol=1e-14)
    torch.testing.assert_close(labeled_gradient(problem["Z"], y), ref[:C], rtol=1e-12, atol=1e-14)


def test_split_last_layer_is_nn_linear_layout(problem):
    bias, weight = split_last_layer(problem["G"][0], C)
    assert bias.shape == (C,) and weight.shape == (C, D)
    torch.testing.assert_close(weight, torch.outer(problem["g0"][0], problem["h_u"][0].detach()))
    assert split_last_layer(problem["G"][:, :C], C)[1] is None
    with pytest.raises(ValueError, match="neither"):
        split_last_layer(problem["G"][:, :7], C)


def test_logit_gradients_bad_input(problem):
    logits = torch.randn(5, C, requires_grad=True)
    with pytest.raises(ValueError, match="per-sample losses"):
        logit_gradients(logits.sum(), logits)
    with pytest.raises(ValueError, match="autograd"):
        logit_gradients(torch.ones(5), torch.randn(5, C))
    with pytest.raises(ValueError, match="2-D"):
        logit_gradients(torch.ones(5, requires_grad=True), torch.randn(5, requires_grad=True))
    with pytest.raises(ValueError, match="NaN or infinite"):
        z = torch.randn(5, C, requires_grad=True)
        logit_gradients((z * float("inf")).sum(1), z)
    with pytest.raises(ValueError, match="rows"):
        last_layer_gradients(problem["g0"], problem["h_u"][:3])
