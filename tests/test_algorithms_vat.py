"""VAT (sslkit.algorithms.vat): BatchNorm running statistics untouched by the adversarial passes, and the perturbation
built from the gradient with respect to d only."""

import pytest
import torch
from test_algorithms_risk_rewrite import BNNet

from sslkit.algorithms import VAT, Batch

torch.set_num_threads(1)


def test_vat_keeps_bn_running_stats_and_uses_only_d_gradients():
    torch.manual_seed(0)
    model = BNNet().train()
    x_l, y_l, x_u = torch.randn(8, 3), torch.tensor([0, 1, 2, 0, 1, 2, 0, 1]), torch.randn(16, 3) * 3
    ref = BNNet().train()
    ref.load_state_dict(model.state_dict())
    ref(x_l)  # a labeled-only forward: the only update to the running statistics
    algo = VAT(2.0)
    out = algo.loss(model, Batch(x_l, y_l, x_u, step=0))
    for name in ("running_mean", "running_var", "num_batches_tracked"):
        assert torch.equal(getattr(model.bn, name), getattr(ref.bn, name))
    assert all(p.grad is None for p in model.parameters())  # autograd.grad w.r.t. d only
    with torch.no_grad():
        p = torch.softmax(model(x_u)[0], 1)
    r = algo.adversarial_perturbation(model, x_u, p)
    assert torch.allclose(r.norm(dim=1), torch.full((16,), 2.0), atol=1e-4)
    out.loss.backward()
    assert model.fc.weight.grad.abs().sum() > 0
    with pytest.raises(ValueError, match="eps"):
        VAT(0.0)
