"""sslkit.active.mma: the margin of the *averaged* predictions over the views (not the average margin), and MMA's and
CBSSAL's picks by their scores."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from sslkit.active import CBSSAL, MMA, augmented_margin

pytestmark = pytest.mark.usefixtures("one_thread")  # conftest.py


def test_augmented_margin_is_the_margin_of_the_averaged_prediction():
    # view 1 says class 0 (0.9), view 2 class 1 (0.9): the average is undecided (margin 0); the average of the
    # two per-view margins would be 0.8 -- the plausible wrong reading
    P = torch.tensor([[[0.9, 0.1, 0.0]], [[0.1, 0.9, 0.0]]])
    assert float(augmented_margin(P)[0]) == pytest.approx(0.0)
    g = torch.Generator().manual_seed(0)
    P = torch.softmax(torch.randn(2, 20, 5, generator=g), -1)
    mean = P.mean(0).numpy()
    expect = [np.sort(r)[-1] - np.sort(r)[-2] for r in mean]
    np.testing.assert_allclose(augmented_margin(P).numpy(), expect, rtol=1e-6)


class Noisy(nn.Module):
    """A fixed linear classifier; ``view`` adds noise to chosen rows only (rows >= 10 are "fragile")."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.lin = nn.Linear(4, 3)

    def forward(self, x):
        return self.lin(x), x


def fragile_view(x):
    noise = torch.randn_like(x) * 3.0
    noise[x[:, 3] < 0.5] = 0.0  # only rows marked fragile (last coordinate 1) move
    return x + noise


def test_mma_and_cbssal_pick_by_their_scores():
    X = torch.randn(20, 4)
    X[:, 3] = (torch.arange(20) >= 10).float()
    model = Noisy()
    cb = CBSSAL(5, n_views=6, augment=fragile_view, seed=0).fit(model, X)
    assert all(i >= 10 for i in cb.indices_.tolist())  # only fragile rows can be inconsistent
    assert torch.all(cb.scores_[:10] == 0)
    mma = MMA(4, n_views=2, augment=lambda x: x).fit(model, X)  # identity views: the plain margin
    with torch.no_grad():
        p = torch.softmax(model(X)[0], 1)
    top2 = p.topk(2, 1).values
    torch.testing.assert_close(mma.scores_, top2[:, 0] - top2[:, 1])
    assert mma.indices_.tolist() == torch.argsort(top2[:, 0] - top2[:, 1])[:4].tolist()
    again = CBSSAL(5, n_views=6, augment=fragile_view, seed=0).fit(model, X)
    torch.testing.assert_close(again.scores_, cb.scores_)  # seeded views
