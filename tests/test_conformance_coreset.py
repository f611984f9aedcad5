"""Conformance of every registered coreset strategy (``sslkit.coreset.STRATEGIES``), as ``test_contract.py`` is for
the algorithms: a strategy added to the registry is checked here without a line of its own.

Each strategy, through the one interface Algorithm 1 uses (``make_strategy(name, k, ...).select(inputs)``), must:

* return ``(indices, weights)``: indices a 1-D numpy ``int64`` array of distinct pool indices in ``[0, N)`` (one
  index type with paper B's selectors), weights a float32 CPU tensor, one per index, finite, ``>= 0``, not all zero;
* respect the budget: exactly ``k`` indices; the per-batch strategies (CRAIG, GradMatch: they take a
  ``batch_size``) choose ``ceil(k / B)`` whole mini-batches of the pool (paper C App. D/E), so ``k`` rounded up
  to whole batches;
* be deterministic under a seed (the same selection twice, and from a fresh object), and leave the strategy object
  unchanged (``select`` fits a copy; ``fit_inputs`` returns it, with ``seconds_``, the fit's wall-clock);
* refuse bad input early with a clear error: a budget that is not a positive integer (at construction), one larger
  than the pool, NaN or infinite gradients, gradients, logits, labels or pseudo-labels of the wrong shape, and a
  needed field left out;
* run on the CPU device given explicitly, and on the inputs of a real trainer's model
  (:func:`sslkit.callbacks.selection_inputs`, the free function that gives a strategy its inputs).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from coreset_round import B, C, K, N, inputs

from sslkit.algorithms import VAT
from sslkit.callbacks import CoresetSelection, selection_inputs
from sslkit.coreset import NEEDS, STRATEGIES, CoresetStrategy, make_strategy
from sslkit.engine import Trainer
from sslkit.models import MLP

NAMES = sorted(STRATEGIES)


def strategy(name: str, k=K, seed: int = 0) -> CoresetStrategy:
    return make_strategy(name, k, batch_size=B, seed=seed)


def per_batch(name: str) -> bool:
    return "batch_size" in strategy(name).get_params()


def check_result(name: str, indices, weights, k: int, n: int = N) -> None:
    assert isinstance(indices, np.ndarray) and indices.dtype == np.int64 and indices.ndim == 1, (name, type(indices))
    assert np.unique(indices).size == indices.size, f"{name}: repeated indices"
    assert indices.size and int(indices.min()) >= 0 and int(indices.max()) < n, name
    if per_batch(name):  # ceil(k / B) whole batches of consecutive indices (B divides N here)
        assert indices.size == B * math.ceil(k / B), (name, indices.size)
        assert np.unique(indices // B).size == math.ceil(k / B), name
    else:
        assert indices.size == k, (name, indices.size)
    assert isinstance(weights, torch.Tensor) and weights.dtype == torch.float32 and weights.device.type == "cpu"
    assert weights.shape == (indices.size,), name
    assert bool(torch.isfinite(weights).all()) and bool((weights >= 0).all()) and bool((weights > 0).any()), name


def test_registry_holds_strategies_with_known_needs():
    assert NAMES, "no registered strategy"
    for name, cls in STRATEGIES.items():
        assert issubclass(cls, CoresetStrategy), name
        assert set(cls.needs) <= set(NEEDS), (name, cls.needs)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("k", [K, 25, 1, N], ids=["k=20", "k=25", "k=1", "k=N"])
def test_output_types_ranges_and_budget(name, k):
    s = strategy(name, k)
    indices, weights = s.select(inputs())
    check_result(name, indices, weights, k)
    assert not hasattr(s, "indices_"), f"{name}: select changed the strategy object"


@pytest.mark.parametrize("name", NAMES)
def test_fit_inputs_returns_the_fitted_copy_with_its_seconds(name):
    s = strategy(name)
    fitted = s.fit_inputs(inputs())
    assert (
        fitted is not s
        and type(fitted) is type(s)
        and fitted.get_params() == s.get_params()
        or name
        in (
            "retrieve",
            "retrieve_per_class",  # the round's lr, lam and seed + draw go to the copy
        )
    )
    assert isinstance(fitted.seconds_, float) and 0.0 <= fitted.seconds_ < 60.0
    indices, weights = fitted.result()
    check_result(name, indices, weights, K)
    np.testing.assert_array_equal(indices, s.select(inputs())[0])


@pytest.mark.parametrize("name", NAMES)
def test_deterministic_under_a_seed(name):
    first, w1 = strategy(name, seed=3).select(inputs(draw=2))
    again, w2 = strategy(name, seed=3).select(inputs(draw=2))
    np.testing.assert_array_equal(first, again)
    assert torch.equal(w1, w2)
    s = strategy(name, seed=3)
    np.testing.assert_array_equal(s.select(inputs(draw=2))[0], s.select(inputs(draw=2))[0])


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("k", [0, -3], ids=["zero", "negative"])
def test_non_positive_budget_is_refused_at_construction(name, k):
    with pytest.raises(ValueError, match="k"):
        strategy(name, k)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("k", [2.5, True, "20", None], ids=["float", "bool", "str", "None"])
def test_non_integer_budget_is_refused_at_construction(name, k):
    with pytest.raises((TypeError, ValueError), match="k"):
        strategy(name, k)


@pytest.mark.parametrize("name", NAMES)
def test_budget_above_the_pool_is_refused(name):
    with pytest.raises(ValueError, match="exceeds"):
        strategy(name, N + 1).select(inputs())


@pytest.mark.parametrize("name", [n for n in NAMES if "gradients" in STRATEGIES[n].needs])
@pytest.mark.parametrize("bad", [math.nan, math.inf], ids=["nan", "inf"])
def test_non_finite_gradients_are_refused(name, bad):
    G = inputs().gradients.clone()
    G[7, 2] = bad
    with pytest.raises(ValueError, match="NaN or infinite"):
        strategy(name).select(inputs(gradients=G))


@pytest.mark.parametrize("name", [n for n in NAMES if "labeled" in STRATEGIES[n].needs])
def test_wrong_labeled_side_is_refused(name):
    x = inputs()
    with pytest.raises(ValueError, match="2-D"):
        strategy(name).select(inputs(labeled_logits=x.labeled_logits[:, 0]))
    with pytest.raises(ValueError, match="labels"):
        strategy(name).select(inputs(labels=x.labels[:-1]))
    with pytest.raises(ValueError, match="labels"):
        strategy(name).select(inputs(labels=x.labels + C))  # a class the logits do not have
    with pytest.raises(ValueError, match="width|features"):
        strategy(name).select(inputs(labeled_features=None))  # bias + weight gradients need the features
    with pytest.raises(ValueError, match="rows|features"):
        strategy(name).select(inputs(labeled_features=x.labeled_features[:-1]))


@pytest.mark.parametrize("name", [n for n in NAMES if "pseudo_labels" in STRATEGIES[n].needs])
def test_wrong_pseudo_labels_are_refused(name):
    with pytest.raises(TypeError, match="integer"):
        strategy(name).select(inputs(pseudo_labels=torch.zeros(N)))
    with pytest.raises(ValueError, match="labels|class"):
        strategy(name).select(inputs(pseudo_labels=torch.full((N,), -1)))


@pytest.mark.parametrize("name", [n for n in NAMES if STRATEGIES[n].needs])
def test_a_needed_field_left_out_is_named(name):
    needs = STRATEGIES[name].needs
    field = {"gradients": "gradients", "labeled": "labeled_logits", "pseudo_labels": "pseudo_labels"}[needs[-1]]
    with pytest.raises(ValueError, match=field):
        strategy(name).select(inputs(**{field: None}))


@pytest.mark.parametrize("name", NAMES)
def test_runs_on_the_cpu_device_given_explicitly(name):
    indices, weights = strategy(name).select(inputs(device=torch.device("cpu")))
    check_result(name, indices, weights, K)
    np.testing.assert_array_equal(indices, strategy(name).select(inputs())[0])


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device here")
@pytest.mark.parametrize("name", NAMES)
def test_runs_on_cuda(name):
    indices, weights = strategy(name).select(inputs(device="cuda"))
    check_result(name, indices, weights, K)


@pytest.fixture(scope="module")
def trained():
    """A trainer after one VAT epoch on a small 3-class problem (its model and data are what a hook sees)."""
    g = torch.Generator().manual_seed(1)
    X = torch.randn(150, 5, generator=g)
    y = (X[:, 0] > 0).long() + (X[:, 1] > 0).long()
    torch.manual_seed(0)
    tr = Trainer(MLP(5, 3, hidden=(8,)), VAT(1.0), epochs=1, batch_size=10, unlabeled_batch_size=10, progress=False)
    return tr.fit(X[:30], y[:30], X[30:])


@pytest.mark.parametrize("name", NAMES)
def test_runs_on_a_trainers_inputs(trained, name):
    s = make_strategy(name, K, batch_size=B, seed=0)
    x = selection_inputs(trained, s.needs, gradients="bias_weight")
    indices, weights = s.select(x)
    check_result(name, indices, weights, K, n=120)


def test_selection_inputs_is_what_the_callback_computes(trained):
    torch.manual_seed(5)  # VAT's unlabeled loss draws random directions
    x = selection_inputs(trained, gradients="bias_weight", chunk=50)
    torch.manual_seed(5)
    G, Z, y, H = CoresetSelection("retrieve", 1, gradients="bias_weight", chunk=50).gradients_at(trained)
    assert torch.equal(x.gradients, G) and torch.equal(x.labeled_logits, Z) and torch.equal(x.labels, y)
    assert torch.equal(x.labeled_features, H) and x.n == 120 and x.lam == trained.algorithm.lambda_u
    assert x.pseudo_labels.shape == (120,) and x.lr == trained.optimizer_.param_groups[0]["lr"]
    only = selection_inputs(trained, ("gradients",))
    assert only.labeled_logits is None and only.pseudo_labels is None and only.gradients.shape == (120, 3)
    with pytest.raises(ValueError, match="needs"):
        selection_inputs(trained, ("labels",))
    with pytest.raises(ValueError, match="gradients"):
        selection_inputs(trained, gradients="full")
    with pytest.raises(ValueError, match="fit has started"):
        selection_inputs(Trainer(MLP(5, 3), VAT(1.0), progress=False))
