"""ActiveFT (sslkit.select.activeft): its objective against the direct formula, its checks, its selector's loss."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from sslkit.data import gmm10
from sslkit.select import ActiveFTSelector
from sslkit.select.activeft import activeft_loss

pytestmark = pytest.mark.usefixtures("one_thread")  # conftest's: the selectors' fits on one torch thread


@pytest.fixture(scope="module")
def data():
    return gmm10(600, seed=0)


def test_activeft_refuses_non_finite_lr():
    for bad in (float("inf"), float("nan"), 0.0, -1e-3):
        with pytest.raises(ValueError, match="lr must be a positive finite number"):
            ActiveFTSelector(5, lr=bad)
    with pytest.raises(ValueError, match="temperature must be a positive finite number"):
        ActiveFTSelector(5, temperature=float("inf"))
    for bad in ("1e-3", True, None):
        with pytest.raises(TypeError, match="lr must be a positive finite number"):
            ActiveFTSelector(5, lr=bad)
    assert ActiveFTSelector(5, lr=np.float32(1e-3)).lr == pytest.approx(1e-3)


def test_activeft_loss_decreases(data):
    X, _ = data
    sel = ActiveFTSelector(10, n_iter=40, device="cpu").fit(X)
    assert sel.loss_history_[-1] < sel.loss_history_[0]
    np.testing.assert_allclose(np.linalg.norm(sel.centroids_, axis=1), 1.0, rtol=1e-5)


@pytest.mark.parametrize("seed", [0, 1])
def test_activeft_loss_equals_backprop_through_the_similarity_matrix(seed):
    """activeft_loss takes the n x m product without gradient; value and gradient must equal the direct formula's
    (back-propagating through the whole product and its max), in float64 so that rounding cannot hide a mistake."""
    g = torch.Generator().manual_seed(seed)
    F = torch.nn.functional.normalize(torch.randn(300, 16, generator=g, dtype=torch.float64), dim=1)
    C0 = torch.nn.functional.normalize(torch.randn(25, 16, generator=g, dtype=torch.float64), dim=1)
    tau = 0.07
    Ca, Cb = C0.clone().requires_grad_(), C0.clone().requires_grad_()
    sim = F @ Ca.T / tau
    pos, k = sim.max(dim=1)
    direct = (torch.logaddexp(pos, torch.logsumexp(Ca @ Ca.detach().T / tau, dim=1)[k]) - pos).mean()
    direct.backward()
    ours = activeft_loss(F, Cb, tau)
    ours.backward()
    assert ours.item() == pytest.approx(direct.item(), rel=1e-12)
    np.testing.assert_allclose(Cb.grad.numpy(), Ca.grad.numpy(), rtol=1e-10, atol=1e-12)
    assert Ca.grad.abs().sum() > 0  # a loss without gradient would pass the comparison above vacuously


def test_activeft_loss_refuses_bad_input_by_name():
    F = torch.nn.functional.normalize(torch.randn(30, 4), dim=1)
    C = F[:5].clone().requires_grad_()
    assert torch.isfinite(activeft_loss(F, C, 0.07))  # the good case passes
    with pytest.raises(ValueError, match="F has 4 columns and C 3"):
        activeft_loss(F, C[:, :3], 0.07)
    with pytest.raises(ValueError, match="C must be 2-D"):
        activeft_loss(F, C[0], 0.07)
    with pytest.raises(ValueError, match="F must be 2-D and non-empty"):
        activeft_loss(F[:0], C, 0.07)
    with pytest.raises(TypeError, match="share dtype"):
        activeft_loss(F.double(), C, 0.07)
    with pytest.raises(TypeError, match="F must be a floating torch tensor"):
        activeft_loss(F.numpy(), C, 0.07)
    bad = F.clone()
    bad[3, 1] = float("nan")
    with pytest.raises(ValueError, match="F contains NaN"):
        activeft_loss(bad, C, 0.07)
    with pytest.raises(ValueError, match="temperature must lie in"):
        activeft_loss(F, C, 0.0)
