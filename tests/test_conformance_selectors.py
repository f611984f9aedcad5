"""Conformance of every registered label selector (``sslkit.select.SELECTORS``, paper B's Table 1 rows), as
``test_contract.py`` is for the algorithms: a selector added to the registry is checked here without a line of its own.

Each selector, built as the experiments build it (``make_selector(name, m, seed=..., device=...)``), must:

* set ``indices_``: a 1-D numpy ``int64`` array of ``m`` distinct row indices in ``[0, n)`` (the index type of paper
  C's coreset strategies too), and ``seconds_``, the fit's wall-clock;
* be deterministic under a seed (the same indices twice) and give the same indices for the same features as a numpy
  array or a torch tensor; a label-free selector ignores ``y``;
* refuse bad input early with a clear error: a budget that is not a positive integer (at construction), one larger
  than the pool, NaN or infinite features, features that are not 2-D or empty, labels of the wrong length (the
  label oracle, Stratified);
* run on the CPU device given explicitly.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from sslkit.select import SELECTORS, make_selector

N, DIM, M = 90, 6, 9
NAMES = list(SELECTORS)
LABEL_FREE = [name for name in NAMES if name != "Stratified"]  # Stratified is the label oracle


def data(n: int = N):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, DIM)).astype(np.float32)
    X[: n // 3] += 3.0  # clusters: not a degenerate pool
    y = np.arange(n) % 3
    return X, y


def selector(name: str, m=M, seed: int = 0, device="cpu"):
    """``make_selector``'s selector; ActiveFT with 30 of its 300 optimisation steps (the contract, not the optimum)."""
    if name == "ActiveFT":
        return SELECTORS[name](m, seed=seed, device=device, n_iter=30)
    return make_selector(name, m, seed=seed, device=device)


def check_result(name: str, sel, m: int = M, n: int = N) -> None:
    idx = sel.indices_
    assert isinstance(idx, np.ndarray) and idx.dtype == np.int64 and idx.shape == (m,), (name, type(idx))
    assert np.unique(idx).size == m, f"{name}: repeated indices"
    assert int(idx.min()) >= 0 and int(idx.max()) < n, name
    assert isinstance(sel.seconds_, float) and 0.0 <= sel.seconds_ < 60.0, name


def test_registry_is_not_empty():
    assert NAMES and "RDSS" in NAMES


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("m", [M, 1, N], ids=["m=9", "m=1", "m=n"])
def test_output_types_ranges_and_budget(name, m):
    X, y = data()
    check_result(name, selector(name, m).fit(X, y), m)


@pytest.mark.parametrize("name", NAMES)
def test_deterministic_under_a_seed_and_input_type(name):
    X, y = data()
    first = selector(name, seed=4).fit(X, y).indices_
    np.testing.assert_array_equal(first, selector(name, seed=4).fit(X, y).indices_)
    np.testing.assert_array_equal(first, selector(name, seed=4).fit(torch.from_numpy(X), torch.from_numpy(y)).indices_)


@pytest.mark.parametrize("name", LABEL_FREE)
def test_label_free_selectors_ignore_y(name):
    X, y = data()
    np.testing.assert_array_equal(selector(name).fit(X).indices_, selector(name).fit(X, y[::-1].copy()).indices_)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("m", [0, -2, 2.5, True, "9", None], ids=["zero", "negative", "float", "bool", "str", "None"])
def test_bad_budget_is_refused_at_construction(name, m):
    with pytest.raises((TypeError, ValueError), match="m"):
        selector(name, m)


@pytest.mark.parametrize("name", NAMES)
def test_budget_above_the_pool_is_refused(name):
    X, y = data()
    with pytest.raises(ValueError, match="exceeds"):
        selector(name, N + 1).fit(X, y)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("bad", [math.nan, math.inf], ids=["nan", "inf"])
def test_non_finite_features_are_refused(name, bad):
    X, y = data()
    X[5, 1] = bad
    with pytest.raises(ValueError, match="NaN or infinite"):
        selector(name).fit(X, y)


@pytest.mark.parametrize("name", NAMES)
def test_wrong_feature_shapes_are_refused(name):
    X, y = data()
    with pytest.raises(ValueError, match="2-D"):
        selector(name).fit(X[:, 0], y)
    with pytest.raises(ValueError, match="2-D"):
        selector(name).fit(X[:, :, None], y)
    with pytest.raises(ValueError, match="at least one"):
        selector(name).fit(X[:, :0], y)


def test_the_label_oracle_checks_its_labels():
    X, y = data()
    with pytest.raises(ValueError, match="y"):
        selector("Stratified").fit(X, y[:-1])
    with pytest.raises(ValueError, match="y is required"):
        selector("Stratified").fit(X)
    with pytest.raises(TypeError, match="integer"):
        selector("Stratified").fit(X, y.astype(np.float64))


@pytest.mark.parametrize("name", NAMES)
def test_runs_on_the_cpu_device_given_explicitly(name):
    X, y = data()
    sel = selector(name, device=torch.device("cpu")).fit(X, y)
    check_result(name, sel)
    np.testing.assert_array_equal(sel.indices_, selector(name, device="cpu").fit(X, y).indices_)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device here")
@pytest.mark.parametrize("name", NAMES)
def test_runs_on_cuda(name):
    X, y = data()
    check_result(name, selector(name, device="cuda").fit(X, y))
