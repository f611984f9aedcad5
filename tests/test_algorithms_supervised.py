"""sslkit.algorithms.supervised.Supervised: the batch-mean cross-entropy of the labeled batch (by hand), no use of the
unlabeled data, and its optional weak view (the labeled batch replaced by its augmentation, normalisation kept)."""

import math

import pytest
import torch
from torch import nn

from sslkit.algorithms import Batch, Supervised


class Identity(nn.Module):
    """The inputs are the logits (and the features)."""

    def forward(self, x):
        return x.flatten(1), x.flatten(1)


def test_the_loss_is_the_mean_cross_entropy_of_the_labeled_batch():
    z, y = torch.tensor([[0.0, 2.0], [1.0, 1.0], [3.0, 0.0]]), torch.tensor([1, 0, 1])
    want = (math.log(1 + math.exp(-2)) + math.log(2) + math.log(1 + math.exp(3))) / 3
    algo = Supervised()
    out = algo.loss(Identity(), Batch(z, y, x_u=torch.full((5, 2), float("nan"))))  # x_u never read
    assert out.loss.item() == pytest.approx(want, rel=1e-6) and out.logs["loss"].item() == pytest.approx(want)
    assert out.unlabeled is None and algo.uses_unlabeled is False and algo.name == "supervised"


def test_augment_replaces_the_labeled_batch_by_its_weak_view():
    x, y = torch.rand(4, 3, 2, 2), torch.tensor([0, 1, 2, 0])
    seen = []

    class Probe(Identity):
        def forward(self, x):
            seen.append(x)
            return super().forward(x)

    Supervised().loss(Probe(), Batch(x, y))
    assert torch.equal(seen[-1], x)  # no augment: the inputs as given
    algo = Supervised(augment="tabular")
    algo.views.weak_fn = lambda b: b + 1.0  # a deterministic "weak view"
    out = algo.loss(Probe(), Batch(x.flatten(1)[:, :3], y))
    assert torch.equal(seen[-1], x.flatten(1)[:, :3] + 1.0)
    assert out.loss.item() == pytest.approx(nn.functional.cross_entropy(seen[-1], y).item())
    normed = Supervised(augment="tabular", mean=[0.5], std=[0.25])
    normed.views.weak_fn = lambda b: b * 0 + 1.0  # the view in [0, 1] units: all ones
    normed.loss(Probe(), Batch(torch.zeros(4, 3), y))
    assert torch.allclose(seen[-1], torch.full((4, 3), (1.0 - 0.5) / 0.25))  # normalised again
    with pytest.raises(ValueError, match="augment must be 'auto' or one of"):
        Supervised(augment="audio")
