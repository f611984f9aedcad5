"""CRUST of paper C §4 (sslkit.coreset.crust): per-pseudo-class facility location with proportional budgets and
cluster-size weights, mixup, bad inputs. Its training side: test_algorithms_crust.py."""

import numpy as np
import pytest
import torch

from sslkit.coreset import Crust, craig_similarity, facility_location, mixup, proportional_budgets


# ---------------------------------------------------------------------------------------------------- CRUST
def test_proportional_budgets():
    assert proportional_budgets([50, 30, 20], 10).tolist() == [5, 3, 2]
    assert proportional_budgets([1, 1, 1], 2).tolist() == [1, 1, 0]  # ties: smaller class
    assert proportional_budgets([7, 2, 1], 5).tolist() == [4, 1, 0]  # 3.5, 1, 0.5 -> 3+1, 1, 0
    b = proportional_budgets([0, 13, 4, 9], 11)
    assert (
        int(b.sum()) == 11
        and b[0] == 0
        and all(abs(float(b[c]) - 11 * n / 26) < 1 for c, n in enumerate([0, 13, 4, 9]))
    )
    assert proportional_budgets([3, 1], 4).tolist() == [3, 1]  # never above n_c
    with pytest.raises(ValueError, match="exceeds"):
        proportional_budgets([2, 2], 5)
    with pytest.raises(ValueError, match="non-negative"):
        proportional_budgets([-1, 2], 1)


def test_crust_is_facility_location_per_class_with_cluster_weights():
    g = torch.Generator().manual_seed(0)
    G = torch.randn(60, 5, generator=g)
    cls = torch.randint(0, 3, (60,), generator=g)
    sel = Crust(12).fit(G, cls)
    counts = torch.bincount(cls, minlength=3)
    assert sel.budgets_.tolist() == proportional_budgets(counts, 12).tolist()
    assert sel.indices_.size == 12 and np.unique(sel.indices_).size == 12
    assert float(sel.weights_.sum()) == 60.0
    for c in range(3):
        members = torch.nonzero(cls == c).reshape(-1)
        S = craig_similarity(G[members])
        order, _ = facility_location(S, int(sel.budgets_[c]))
        assert sel.indices_[sel.classes_ == c].tolist() == members[order].tolist()
        assert bool((cls[sel.indices_[sel.classes_ == c]] == c).all())
        cell = torch.argmax(S[:, order], dim=1)
        assert sel.weights_[sel.classes_ == c].tolist() == torch.bincount(cell, minlength=len(order)).float().tolist()


def test_crust_bad_inputs():
    G = torch.randn(10, 3)
    with pytest.raises(ValueError, match="exceeds"):
        Crust(11).fit(G, torch.zeros(10, dtype=torch.long))
    with pytest.raises(TypeError, match="integer"):
        Crust(2).fit(G, torch.zeros(10))
    with pytest.raises(ValueError, match="labels"):
        Crust(2).fit(G, torch.zeros(9, dtype=torch.long))
    with pytest.raises(ValueError, match="metric"):
        Crust(2, metric="cosine")


def test_mixup_mixes_rows_with_one_beta_draw():
    x = torch.arange(12.0).reshape(6, 2)
    torch.manual_seed(0)
    xm, perm, lam = mixup(x, 1.0)
    assert 0.0 <= lam <= 1.0 and sorted(perm.tolist()) == list(range(6))
    assert torch.allclose(xm, lam * x + (1 - lam) * x[perm])
    torch.manual_seed(0)
    xm2, _, lam2 = mixup(x, 1.0)
    assert lam2 == lam and torch.equal(xm, xm2)
    with pytest.raises(ValueError, match="alpha"):
        mixup(x, 0.0)
    with pytest.raises(ValueError, match="non-empty"):
        mixup(torch.zeros(0, 2))
