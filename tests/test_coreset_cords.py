"""``Retrieve(cords_compatible=True)`` = CORDS' ``RETRIEVEStrategy.greedy_algo`` (cords 0.0.4), index for index.

CORDS is the official code of paper C (reference notes §1). Its strategy is built with minimal stubs:
the "model" is a real ``nn.Linear`` on given penultimate features (``forward(x, last=True, freeze=True)``
returns ``(logits, features)`` as CORDS' models do), the labeled loader a ``DataLoader`` over
``(features, labels)``, the consistency loss CORDS' own ``CrossEntropy(reduce=False)`` (which, fed
``y_val`` of shape ``(n, 1)``, is the malformed D3 loss after the first pick). ``_update_grads_val(first_init=
True)`` runs CORDS' own first linearisation; only ``grads_per_elem`` (the unlabeled gradients) is set
directly, as ``compute_gradients`` would (it needs a full SSL model and algorithm). Only the naive greedy
can be compared index for index: CORDS' stochastic candidates come from Python's ``random``.
"""

from __future__ import annotations

import logging

import numpy as np
import pytest
import torch
from oracles import NUMPY_DEFAULT_ERRSTATE, import_quietly

from sslkit.coreset import Retrieve, last_layer_gradients

# CORDS' helpers call np.seterr(all="raise") at import: import_quietly keeps that out of every other test
cords_retrieve = import_quietly("cords.selectionstrategies.SSL.retrievestrategy")
cords_ce = import_quietly("cords.selectionstrategies.helpers.ssl_lib.consistency.cross_entropy")


class LastLayer(torch.nn.Module):
    """CORDS' model interface on precomputed features: ``model(h, last=True, freeze=True) -> (z, h)``."""

    def __init__(self, lin: torch.nn.Linear):
        super().__init__()
        self.linear = lin

    def forward(self, x, last=False, freeze=False):
        out = self.linear(x)
        return (out, x) if last else out

    def get_embedding_dim(self):
        return self.linear.in_features


def cords_strategy(lin, h_l, y, G, *, linear_layer, greedy="Naive", eta=0.03, batch_size=10):
    labeled = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(h_l, y), batch_size=batch_size)
    unlabeled = torch.utils.data.DataLoader(
        torch.utils.data.TensorDataset(torch.arange(G.shape[0])), batch_size=batch_size
    )
    strategy = cords_retrieve.RETRIEVEStrategy(
        unlabeled,
        labeled,
        LastLayer(lin),
        None,
        None,
        cords_ce.CrossEntropy(reduce=False),
        eta,
        "cpu",
        lin.out_features,
        linear_layer,
        "Supervised",
        greedy,
        logging.getLogger("cords-test"),
        valid=True,
    )
    strategy.grads_per_elem = G.clone()  # CORDS' naive greedy adds into a view of its first pick's row
    strategy._update_grads_val(first_init=True)
    return strategy


def problem(seed, n_unlabeled=60, n_labeled=30, C=5, D=6):
    gen = torch.Generator().manual_seed(seed)
    lin = torch.nn.Linear(D, C)
    with torch.no_grad():
        lin.weight.copy_(torch.randn(C, D, generator=gen))
        lin.bias.copy_(torch.randn(C, generator=gen))
    h_u = torch.randn(n_unlabeled, D, generator=gen)
    q = torch.softmax(2 * torch.randn(n_unlabeled, C, generator=gen), 1)
    g0 = torch.softmax(lin(h_u), 1).detach() - q  # soft-target CE, mask all ones (no zero rows)
    h_l = torch.randn(n_labeled, D, generator=gen)
    y = torch.randint(C, (n_labeled,), generator=gen)
    return lin, h_u, g0, h_l, y


@pytest.mark.parametrize("linear_layer", [False, True], ids=["bias", "bias+weight"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_cords_compatible_naive_greedy_equals_cords(linear_layer, seed):
    lin, h_u, g0, h_l, y = problem(seed)
    G = last_layer_gradients(g0, h_u if linear_layer else None)
    k, eta = 25, 0.5  # a large step: the re-linearisation matters
    ref, weights = cords_strategy(lin, h_l, y, G, linear_layer=linear_layer, eta=eta).greedy_algo(k)
    with torch.no_grad():
        Z = lin(h_l)
    ours = Retrieve(k, greedy="naive", lr=eta, cords_compatible=True).fit(G, Z, y, h_l if linear_layer else None)
    assert ours.indices_.tolist() == list(ref)
    assert len(set(ref)) == k
    assert ours.weights_.tolist() == [float(w) for w in weights]
    # the paper's choices (correct CE, grad L_S term, lam) pick a different coreset on the same inputs
    paper = Retrieve(k, greedy="naive", lr=eta, lam=1.0).fit(G, Z, y, h_l if linear_layer else None)
    assert paper.indices_.tolist() != list(ref)


def test_cords_naive_greedy_overwrites_its_first_picks_gradient_row():
    """CORDS quirk (by reading, checked here): ``grads_curr = grads_per_elem[best].view(1, -1)`` is a view,
    so the running sum ``grads_curr += ...`` is written into the first pick's row of ``grads_per_elem``.
    The row is never scored again, so the selection is unaffected, but a caller's matrix is modified."""
    lin, h_u, g0, h_l, y = problem(0)
    G = last_layer_gradients(g0, None)
    strategy = cords_strategy(lin, h_l, y, G, linear_layer=False, eta=0.5)
    ref, _ = strategy.greedy_algo(5)
    torch.testing.assert_close(strategy.grads_per_elem[ref[0]], G[list(ref)].sum(0))
    changed = (strategy.grads_per_elem != G).any(dim=1).nonzero().flatten().tolist()
    assert changed == [ref[0]]


def test_cords_first_gradient_is_the_mean_labeled_ce_gradient():
    """CORDS' first linearisation (``first_init``) is the correct mean CE gradient, in our layout."""
    from sslkit.coreset import labeled_gradient

    lin, h_u, g0, h_l, y = problem(3)
    G = last_layer_gradients(g0, h_u)
    strategy = cords_strategy(lin, h_l, y, G, linear_layer=True)
    with torch.no_grad():
        Z = lin(h_l)
    torch.testing.assert_close(strategy.grads_val_curr.view(-1), labeled_gradient(Z, y, h_l), rtol=1e-5, atol=1e-6)


def test_importing_cords_leaves_numpy_error_state_alone(monkeypatch):
    """CORDS was imported above (with import_quietly) and numpy's error state is still the default here (the
    autouse fixture of conftest.py checks it before every test). A first import of a CORDS helper does switch it
    to "raise" (shown by importing it afresh, inside an errstate that undoes it), and import_quietly contains it."""
    import importlib
    import sys

    assert np.geterr() == NUMPY_DEFAULT_ERRSTATE
    name = "cords.selectionstrategies.helpers.optimalWeights"
    assert name in sys.modules  # imported by the retrieve strategy above
    monkeypatch.delitem(sys.modules, name)  # a first import again; the module is put back after the test
    with np.errstate(**NUMPY_DEFAULT_ERRSTATE):
        importlib.import_module(name)  # what a plain first import does, for the whole process
        assert np.geterr() == {"divide": "raise", "over": "raise", "under": "raise", "invalid": "raise"}
    assert np.geterr() == NUMPY_DEFAULT_ERRSTATE
    monkeypatch.delitem(sys.modules, name)
    import_quietly(name)
    assert np.geterr() == NUMPY_DEFAULT_ERRSTATE
