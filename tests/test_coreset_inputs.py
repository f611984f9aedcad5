"""sslkit.coreset.inputs.selection_inputs (a coreset strategy's inputs from the user's own loop): the gradients of
the default pseudo-label loss in closed form, a DataLoader pool gives the same record, the fields left out, and the
input checks."""

import numpy as np
import pytest
import torch
from torch.utils.data import DataLoader, TensorDataset

from sslkit.coreset import Retrieve, selection_inputs
from sslkit.coreset.inputs import pseudo_label_losses
from sslkit.models import MLP

K = 3


def problem(seed=0):
    """An MLP and 150 rows of K Gaussian blobs in 4-D (float32), labels 0..K-1 in turn."""
    rng = np.random.default_rng(seed)
    y = np.arange(150) % K
    X = (rng.normal(0, 3, (K, 4))[y] + rng.normal(0, 1, (150, 4))).astype(np.float32)
    torch.manual_seed(seed)
    return MLP(4, K, hidden=(16,)), X, y.astype(np.int64)


def test_selection_inputs_from_a_plain_loop_equal_the_callbacks():
    """``selection_inputs`` gives Retrieve the gradients of the given per-sample loss: the bias part is
    ``softmax - onehot(argmax)`` for the default pseudo-label loss, and the selection is a valid coreset."""
    model, X, Y = problem()
    inputs = selection_inputs(model, X[30:], X[:30], Y[:30], lr=0.03)
    with torch.no_grad():
        logits = model.eval()(torch.from_numpy(X[30:]))
        logits = logits[0] if isinstance(logits, tuple) else logits
    expected = torch.softmax(logits, 1) - torch.nn.functional.one_hot(logits.argmax(1), K)
    assert torch.allclose(inputs.gradients, expected, atol=1e-6)
    idx, w = Retrieve(20, seed=0).select(inputs)
    assert idx.shape == (20,) and len(set(idx.tolist())) == 20 and int(idx.max()) < len(X) - 30
    # a DataLoader pool gives the same inputs
    loader = DataLoader(TensorDataset(torch.from_numpy(X[30:])), batch_size=16)
    again = selection_inputs(model, loader, X[:30], Y[:30], lr=0.03)
    assert torch.equal(again.gradients, inputs.gradients) and torch.equal(again.labeled_logits, inputs.labeled_logits)
    with pytest.raises(ValueError, match="needs X_l and y_l"):
        selection_inputs(model, X[30:], lr=0.03)


def test_the_default_loss_is_the_cross_entropy_against_the_argmax():
    z = torch.tensor([[2.0, 0.0, 0.0], [0.0, 1.0, 3.0]], requires_grad=True)
    losses = pseudo_label_losses(z)
    want = [np.log(1 + 2 * np.exp(-2.0)), np.log(1 + np.exp(-3.0) + np.exp(-2.0))]
    assert losses.tolist() == pytest.approx(want, rel=1e-6)
    (g,) = torch.autograd.grad(losses.sum(), z)  # the target is detached: softmax − onehot(argmax)
    torch.testing.assert_close(g, torch.softmax(z, 1).detach() - torch.eye(3)[[0, 2]])


def test_fields_left_out_bias_weight_and_the_input_checks():
    model, X, Y = problem(1)
    x = selection_inputs(model, X[30:], needs=("pseudo_labels",), lr=0.1, lam=0.5, draw=2)
    assert x.gradients is None and x.labeled_logits is None and x.n == 120 and (x.lr, x.lam, x.draw) == (0.1, 0.5, 2)
    with torch.no_grad():
        assert torch.equal(x.pseudo_labels, model.eval()(torch.from_numpy(X[30:]))[0].argmax(1))
    model.train()
    full = selection_inputs(model, X[30:], X[:30], Y[:30], lr=0.1, gradients="bias_weight", chunk=7)
    assert model.training and full.gradients.shape == (120, K * (1 + 16)) and full.labeled_features.shape == (30, 16)
    torch.testing.assert_close(
        full.gradients[:, :K], selection_inputs(model, X[30:], lr=0.1, needs=("gradients",)).gradients
    )
    with pytest.raises(ValueError, match="gradients must be one of"):
        selection_inputs(model, X[30:], lr=0.1, gradients="weight")
    with pytest.raises(ValueError, match="needs must be a subset"):
        selection_inputs(model, X[30:], lr=0.1, needs=("labels",))
    with pytest.raises(ValueError, match="X_u must be floating"):
        selection_inputs(model, X[30:].astype(np.int64), lr=0.1)
    with pytest.raises(TypeError, match="model must be a torch.nn.Module"):
        selection_inputs(lambda x: x, X[30:], lr=0.1)
    with pytest.raises(ValueError, match="needs the penultimate features"):
        selection_inputs(torch.nn.Linear(4, K), X[30:], lr=0.1, gradients="bias_weight")
