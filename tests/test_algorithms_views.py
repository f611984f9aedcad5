"""sslkit.algorithms.views: the family picked from the input shape, weak/strong overrides, the views computed in
[0, 1] units between de- and re-normalisation, the one joint forward of FixMatch's family (and its order of draws),
the selection's unlabeled forward with its one-row prefix, and the constructor's checks."""

import pytest
import torch
from torch import nn

from sslkit.algorithms import Views
from sslkit.algorithms.views import SELECTION_PREFIX_ROWS, unlabeled_forward, weak_strong_forward


def test_the_family_follows_the_input_shape():
    v = Views()
    assert v.family(torch.zeros(5, 7)) == "tabular"
    assert v.family(torch.zeros(2, 1, 28, 28)) == "mnist" and v.family(torch.zeros(2, 3, 32, 32)) == "cifar"
    assert Views("cifar").family(torch.zeros(5, 7)) == "cifar"  # named: the shape is not consulted
    with pytest.raises(ValueError, match=r"cannot pick augmentations for inputs of shape \(2, 2, 8, 8\)"):
        v.family(torch.zeros(2, 2, 8, 8))


def test_overrides_normalisation_and_the_order_of_draws():
    calls = []

    def weak(x):
        calls.append("weak")
        return x * 0.5

    def strong(x):
        calls.append("strong")
        return 1 - x

    v = Views(weak=weak, strong=strong, mean=[0.2, 0.4], std=[0.5, 0.25])
    x = torch.tensor([[[[0.6]], [[-0.8]]]])  # (1, 2, 1, 1), normalised units
    raw = torch.tensor([0.6 * 0.5 + 0.2, -0.8 * 0.25 + 0.4])  # [0.5, 0.2] in [0, 1] units
    w, s = v.pair(x)
    torch.testing.assert_close(w.flatten(), (raw * 0.5 - torch.tensor([0.2, 0.4])) / torch.tensor([0.5, 0.25]))
    torch.testing.assert_close(s.flatten(), (1 - raw - torch.tensor([0.2, 0.4])) / torch.tensor([0.5, 0.25]))
    assert calls == ["weak", "strong"] and repr(v) == "Views(augment='auto')"
    plain = Views(weak=weak, strong=strong)
    assert torch.equal(plain.weak(x), x * 0.5)  # no mean/std: the function as given


def test_the_constructor_refuses_bad_arguments():
    with pytest.raises(ValueError, match="augment must be 'auto' or one of"):
        Views("audio")
    with pytest.raises(TypeError, match="weak must be callable"):
        Views(weak=3)
    with pytest.raises(ValueError, match="give both mean and std"):
        Views(mean=[0.5])
    with pytest.raises(ValueError, match="std must be positive"):
        Views(mean=[0.5], std=[0.0])
    with pytest.raises(ValueError, match="mean must be finite"):
        Views(mean=[float("nan")], std=[1.0])


class Probe(nn.Module):
    """Logits = the first two input columns, features = the inputs; records each forward's batch."""

    def __init__(self):
        super().__init__()
        self.batches = []

    def forward(self, x):
        self.batches.append(x)
        return x[:, :2] * 2, x


def test_one_joint_forward_of_the_labeled_weak_and_strong_views():
    v = Views(weak=lambda x: x + 10, strong=lambda x: x - 10)
    x_l, x_u = torch.rand(3, 4), torch.rand(5, 4)
    model = Probe()
    z_l, z_w, z_s, h_s = weak_strong_forward(model, v, x_l, x_u)
    assert len(model.batches) == 1 and model.batches[0].shape == (13, 4)  # one BatchNorm batch
    torch.testing.assert_close(z_l, (x_l[:, :2] + 10) * 2)
    torch.testing.assert_close(z_w, (x_u[:, :2] + 10) * 2)
    torch.testing.assert_close(z_s, (x_u[:, :2] - 10) * 2)
    torch.testing.assert_close(h_s, x_u - 10)
    # the selection's forward: the first rows of x_u in front as a stand-in labeled batch, then dropped
    model = Probe()
    z_w2, z_s2, h_s2 = unlabeled_forward(model, v, x_u)
    assert model.batches[0].shape == (SELECTION_PREFIX_ROWS + 10, 4)
    torch.testing.assert_close(z_w2, z_w)
    torch.testing.assert_close(z_s2, z_s)
    torch.testing.assert_close(h_s2, h_s)
    model = Probe()
    z, h = unlabeled_forward(model, v, x_u, strong=False)
    assert model.batches[0].shape == (SELECTION_PREFIX_ROWS + 5, 4)
    torch.testing.assert_close(z, (x_u[:, :2] + 10) * 2)
    torch.testing.assert_close(h, x_u + 10)
