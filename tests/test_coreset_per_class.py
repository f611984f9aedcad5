"""sslkit.coreset.PerClassRetrieve: proportional budgets, Retrieve inside each class against that class's
labeled samples, and its errors; through CoresetSelection("retrieve_per_class")."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from sslkit.algorithms import VAT
from sslkit.callbacks import CoresetSelection
from sslkit.coreset import NEEDS, PerClassRetrieve, Retrieve, proportional_budgets
from sslkit.engine import Trainer
from sslkit.models import MLP


def instance(seed=0, N=60, n=12, C=3):
    g = torch.Generator().manual_seed(seed)
    G = torch.randn(N, C, generator=g, dtype=torch.float64)
    Z = torch.randn(n, C, generator=g, dtype=torch.float64)
    y = torch.arange(n) % C
    classes = torch.tensor([0] * 30 + [1] * 20 + [2] * 10)[torch.randperm(N, generator=g)]
    return G, Z, y, classes


def test_each_class_gets_its_share_and_retrieve_on_its_own_rows():
    G, Z, y, classes = instance()
    sel = PerClassRetrieve(12, greedy="naive", lr=0.1, seed=5).fit(G, Z, y, classes)
    assert sel.budgets_.tolist() == [6, 4, 2]  # 12 x (30, 20, 10) / 60
    assert len(set(sel.indices_.tolist())) == 12
    assert torch.equal(classes[sel.indices_], sel.classes_)  # numpy int64 indices index a tensor
    start = 0
    for c, k_c in enumerate(sel.budgets_.tolist()):
        rows, lab = torch.nonzero(classes == c).flatten(), torch.nonzero(y == c).flatten()
        want = Retrieve(k_c, greedy="naive", lr=0.1, seed=5 + c).fit(G[rows], Z[lab], y[lab])
        np.testing.assert_array_equal(sel.indices_[start : start + k_c], rows[want.indices_].numpy())
        start += k_c


def test_budgets_sum_to_k_where_cords_ceil_would_exceed_it():
    G, Z, y, classes = instance()
    sel = PerClassRetrieve(7, lr=0.1).fit(G, Z, y, classes)
    assert int(sel.budgets_.sum()) == 7 and sel.indices_.size == 7
    assert sum(int(np.ceil(7 * n / 60)) for n in (30, 20, 10)) == 9  # CORDS' ceil(k |U_c| / N)


def test_bad_input_is_refused():
    G, Z, y, classes = instance()
    with pytest.raises(ValueError, match="no labeled sample"):
        PerClassRetrieve(12, lr=0.1).fit(G, Z, torch.zeros(12, dtype=torch.long), classes)
    with pytest.raises(ValueError, match="exceeds"):
        PerClassRetrieve(61, lr=0.1).fit(G, Z, y, classes)
    with pytest.raises(ValueError, match="labels"):
        PerClassRetrieve(12, lr=0.1).fit(G, Z, y, classes[:10])
    with pytest.raises(ValueError, match="greedy"):
        PerClassRetrieve(12, greedy="lazy")


class Spy(CoresetSelection):
    """Keeps the pseudo-labels each selection used."""

    def inputs_at(self, trainer, needs=NEEDS, draw=0):
        inputs = super().inputs_at(trainer, needs, draw)
        self.seen = inputs.pseudo_labels
        return inputs


def test_coreset_callback_selects_per_pseudo_class():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(150, 5)).astype(np.float32)
    y = (X[:, 0] > 0).astype(np.int64) + (X[:, 1] > 0).astype(np.int64)
    cb = Spy("retrieve_per_class", 40, every=5, warm_epochs=1, batch_size=10, seed=1)
    torch.manual_seed(0)
    tr = Trainer(
        MLP(5, 3, hidden=(16,)),
        VAT(1.0),
        epochs=2,
        iterations_per_epoch="unlabeled",
        batch_size=10,
        unlabeled_batch_size=10,
        hooks=cb.hooks(),
        progress=False,
        seed=0,
        num_classes=3,
    )
    tr.fit(X[:30], y[:30], X[30:])
    assert len(cb.selections_) == 1
    chosen = cb.selections_[0]["indices"]
    assert torch.equal(tr.sampler_.indices.cpu(), chosen)
    # the coreset's class mix under the model's predictions is the proportional budget of those predictions
    counts = torch.bincount(cb.seen.cpu(), minlength=3)
    got = torch.bincount(cb.seen.cpu()[chosen], minlength=3)
    assert torch.equal(got, proportional_budgets(counts, 40))
