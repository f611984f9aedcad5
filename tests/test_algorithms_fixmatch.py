"""FixMatch (sslkit.algorithms.fixmatch): the confidence mask at the threshold with the loss a mean over the whole
unlabeled batch, the views' normalisation and the automatic augmentation."""

import pytest
import torch
import torch.nn.functional as F

from sslkit.algorithms import Batch, FixMatch, fixmatch_unsup_loss
from sslkit.models import MLP

torch.set_num_threads(1)


def test_fixmatch_mask_threshold_and_mean_over_whole_batch():
    weak = torch.log(torch.tensor([[0.97, 0.03], [0.5, 0.5], [0.1, 0.9]]))
    strong = torch.tensor([[0.0, 1.0], [2.0, 0.0], [1.0, 1.0]])
    loss, mask = fixmatch_unsup_loss(weak, strong, 0.9)
    assert mask.tolist() == [1.0, 0.0, 1.0]
    ce = F.cross_entropy(strong, torch.tensor([0, 0, 1]), reduction="none")
    assert float(loss) == pytest.approx(float((ce[0] + ce[2]) / 3), rel=1e-6)
    assert float(fixmatch_unsup_loss(weak, strong, 0.99)[0]) == 0.0


def test_fixmatch_views_normalisation_and_auto_augment():
    ident = FixMatch(weak=lambda x: x, strong=lambda x: x.clamp(0, 1), mean=[0.5], std=[0.25])
    x = torch.rand(4, 1, 8, 8)
    xn = (x - 0.5) / 0.25
    w, s = ident.views.pair(xn)
    assert torch.allclose(w, xn, atol=1e-6) and torch.allclose(s, xn, atol=1e-6)  # de-/re-normalised
    fm = FixMatch()
    assert fm.views.family(torch.zeros(2, 5)) == "tabular"
    assert fm.views.family(torch.zeros(2, 1, 28, 28)) == "mnist"
    assert fm.views.family(torch.zeros(2, 3, 32, 32)) == "cifar"
    with pytest.raises(ValueError, match="augment"):
        fm.views.family(torch.zeros(2, 2, 8, 8))
    with pytest.raises(ValueError, match="mean and std"):
        FixMatch(mean=[0.5])
    torch.manual_seed(0)
    model = MLP(5, 2, hidden=(8,))
    out = FixMatch(0.0).loss(model, Batch(torch.randn(4, 5), torch.tensor([0, 1, 0, 1]), torch.randn(6, 5), step=0))
    assert float(out.logs["mask_rate"]) == 1.0 and float(out.logs["unsup_loss"]) > 0
