"""sslkit.risk.losses: the loss matrices ``L[s, j] = l(g(x_s), j)`` of paper A §2 against their definitions computed
here by hand (log-sum-exp, softplus, sparsemax as the simplex projection), Def. 1's symmetry (rows summing to
α = k - 1), the binary ramp loss, and the input checks."""

import numpy as np
import pytest
import torch

from sslkit.risk.losses import LOSSES, is_symmetric, loss_matrix, symmetric_constant

G = np.array([[0.3, -1.2, 2.0], [1.0, 1.0, -0.5], [-2.0, 0.1, 0.1], [0.0, 0.0, 0.0]])


def test_ce_is_minus_log_softmax():
    lse = np.log(np.exp(G).sum(axis=1, keepdims=True))
    np.testing.assert_allclose(loss_matrix(G, "ce"), lse - G, rtol=1e-12)


def test_bce_is_softplus_and_equals_ce_of_the_logits_g_and_zero():
    g = np.array([-3.0, -0.2, 0.0, 0.7, 4.0])
    L = loss_matrix(g, "bce")
    np.testing.assert_allclose(L[:, 0], np.log1p(np.exp(-g)), rtol=1e-12)  # -log σ(g): class 1 (column 0)
    np.testing.assert_allclose(L[:, 1], np.log1p(np.exp(g)), rtol=1e-12)
    np.testing.assert_allclose(L, loss_matrix(np.stack([g, np.zeros_like(g)], 1), "ce"), rtol=1e-12)
    np.testing.assert_allclose(loss_matrix(g[:, None], "bce"), L)  # (n, 1) is a score too


def test_zero_one_has_one_zero_per_row_at_the_argmax_ties_to_the_lowest_index():
    L = loss_matrix(G, "zero_one")
    assert L.tolist() == [[1, 1, 0], [0, 1, 1], [1, 0, 1], [0, 1, 1]]
    # a score g: the logits (g/2, -g/2), g >= 0 predicts column 0
    assert loss_matrix(np.array([0.5, 0.0, -0.5]), "zero_one").tolist() == [[0, 1], [0, 1], [1, 0]]


def sparsemax_by_bisection(z):
    """The Euclidean projection of z onto the simplex: max(z - τ, 0) with τ such that it sums to 1."""
    lo, hi = z.min() - 1, z.max()
    for _ in range(200):
        tau = (lo + hi) / 2
        lo, hi = (tau, hi) if np.maximum(z - tau, 0).sum() > 1 else (lo, tau)
    return np.maximum(z - (lo + hi) / 2, 0)


def test_ramp_is_one_minus_sparsemax():
    expected = 1 - np.stack([sparsemax_by_bisection(z) for z in G])
    np.testing.assert_allclose(loss_matrix(G, "ramp"), expected, atol=1e-12)
    np.testing.assert_allclose(loss_matrix(np.zeros((1, 4)), "ramp"), [[0.75] * 4])  # equal logits: uniform


def test_binary_ramp_is_the_clipped_linear_ramp():
    g = np.linspace(-3, 3, 25)
    L = loss_matrix(g, "ramp")
    np.testing.assert_allclose(L[:, 0], np.clip((1 - g) / 2, 0, 1), atol=1e-12)
    np.testing.assert_allclose(L[:, 1], np.clip((1 + g) / 2, 0, 1), atol=1e-12)


@pytest.mark.parametrize("loss", LOSSES)
def test_definition_1_symmetric_losses_have_rows_summing_to_alpha(loss):
    rng = np.random.default_rng(0)
    g = rng.normal(size=(50, 2)) if loss == "bce" else rng.normal(size=(50, 5))
    sums = loss_matrix(g[:, 0] if loss == "bce" else g, loss).sum(axis=1)
    if is_symmetric(loss):
        np.testing.assert_allclose(sums, symmetric_constant(loss, 5), atol=1e-12)
        assert loss in ("zero_one", "ramp")
    else:
        assert sums.std() > 1e-3  # CE and BCE rows do not sum to a constant
        with pytest.raises(ValueError, match="not symmetric"):
            symmetric_constant(loss, 5)


def test_torch_in_torch_out_on_its_device_with_autograd():
    g = torch.tensor(G, requires_grad=True)
    L = loss_matrix(g, "ce")
    assert isinstance(L, torch.Tensor) and L.requires_grad and L.dtype == torch.float64
    L[:, 0].sum().backward()  # d/dg_c of -log softmax_0 = softmax_c - 1[c = 0]
    p = torch.softmax(g.detach(), dim=1)
    torch.testing.assert_close(g.grad, p - torch.nn.functional.one_hot(torch.zeros(4, dtype=torch.long), 3))


@pytest.mark.parametrize(
    "outputs,loss,exc,match",
    [
        (G, "hinge", ValueError, "loss must be one of"),
        (np.array([[np.nan, 0.0]]), "ce", ValueError, "NaN or infinite"),
        (np.array([0.1, 0.2]), "ce", ValueError, "use 'bce' for a score"),
        (G, "bce", ValueError, "use 'ce'"),
        (np.zeros((2, 2, 2)), "ramp", ValueError, r"shape \(n, k\)"),
        ("logits", "ce", TypeError, "array of numbers"),
    ],
)
def test_bad_inputs(outputs, loss, exc, match):
    with pytest.raises(exc, match=match):
        loss_matrix(outputs, loss)


def test_symmetric_constant_needs_two_classes():
    with pytest.raises(ValueError, match="at least 2"):
        symmetric_constant("ramp", 1)
