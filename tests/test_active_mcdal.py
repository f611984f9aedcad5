"""sslkit.active.mcdal: the L1 discrepancy, its three-term acquisition score, and that training the discrepancy moves
only the auxiliary classifiers C1, C2."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from sslkit.active import MCDAL, MCDALNet, MCDALTraining, classifier_discrepancy, mcdal_discrepancy
from sslkit.algorithms.base import Batch
from sslkit.models import MLP

pytestmark = pytest.mark.usefixtures("one_thread")  # conftest.py


def test_mcdal_discrepancy_is_the_sum_of_three_l1_distances():
    g = torch.Generator().manual_seed(0)
    z, a, b = (torch.randn(9, 4, generator=g) for _ in range(3))
    p, p1, p2 = (torch.softmax(t, 1).numpy() for t in (z, a, b))
    l1 = lambda u, v: np.abs(u - v).sum(1)  # noqa: E731
    torch.testing.assert_close(
        classifier_discrepancy(torch.as_tensor(p1), torch.as_tensor(p2)), torch.as_tensor(l1(p1, p2))
    )
    expect = l1(p1, p2) + l1(p1, p) + l1(p2, p)
    np.testing.assert_allclose(mcdal_discrepancy(z, a, b).numpy(), expect, rtol=1e-5)
    assert float(classifier_discrepancy(torch.as_tensor(p), torch.as_tensor(p)).abs().max()) == 0.0


def test_mcdal_training_the_discrepancy_moves_only_the_auxiliary_classifiers():
    torch.manual_seed(0)
    net = MCDALNet(MLP(5, 3, hidden=(6,), dropout=0.0))
    x_l, y, x_u = torch.randn(8, 5), torch.tensor([0, 1, 2, 0, 1, 2, 0, 1]), torch.randn(10, 5)
    out = MCDALTraining(weight=1.0).loss(net, Batch(x_l, y, x_u))
    out.loss.backward()
    g_backbone = [p.grad.clone() for p in net.backbone.parameters()]
    g_aux = net.aux1.weight.grad.clone()
    net.zero_grad()
    logits, h, (a1, a2) = net(x_l)
    nn.functional.cross_entropy(logits, y).backward()  # the backbone sees the main CE only
    for g, p in zip(g_backbone, net.backbone.parameters()):
        torch.testing.assert_close(g, p.grad)
    net.zero_grad()
    # the auxiliary layers: CE on the labeled batch minus the mean discrepancy /K on the unlabeled batch
    with torch.no_grad():
        lu, hu = net.backbone(x_u)
    p = torch.softmax(lu, 1)
    p1, p2 = torch.softmax(net.aux1(hu), 1), torch.softmax(net.aux2(hu), 1)
    dis = ((p1 - p2).abs().sum(1) + (p1 - p).abs().sum(1) + (p2 - p).abs().sum(1)).mean() / 3
    (nn.functional.cross_entropy(a1, y) + nn.functional.cross_entropy(a2, y) - dis).backward()
    torch.testing.assert_close(g_aux, net.aux1.weight.grad)
    assert float(out.logs["discrepancy"]) == pytest.approx(float(dis.detach()))


def test_mcdal_picks_the_largest_discrepancies():
    torch.manual_seed(2)
    net = MCDALNet(MLP(5, 3, hidden=(6,), dropout=0.0))
    X = torch.randn(30, 5)
    with torch.no_grad():
        logits, _, (a1, a2) = net(X)
    sel = MCDAL(5).fit(net, X)
    assert sel.indices_.tolist() == torch.argsort(mcdal_discrepancy(logits, a1, a2), descending=True)[:5].tolist()
    with pytest.raises(ValueError, match="feature_dim"):
        MCDALNet(nn.Linear(3, 2))
