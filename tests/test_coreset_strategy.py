"""sslkit.coreset.strategy: the SelectionInputs record's checks, the clear error of select(50) and of a missing field,
and the base class's scikit-learn parameters (get_params / with_params) and result bookkeeping. Every registered
strategy through this interface: test_conformance_coreset.py."""

import time

import numpy as np
import pytest
import torch
from coreset_round import N, inputs

from sslkit.coreset import Retrieve, SelectionInputs, make_strategy
from sslkit.coreset.strategy import CoresetStrategy, require


def test_strategy_select_of_a_number_says_what_it_takes():
    with pytest.raises(TypeError, match="select takes a SelectionInputs"):
        Retrieve(10).select(50)
    with pytest.raises(TypeError, match="select takes a SelectionInputs"):
        make_strategy("random", 10).select(50)


def test_the_record_checks_its_counts_and_rates():
    assert SelectionInputs(5).gradients is None and SelectionInputs(5, lr=1).lr == 1.0
    with pytest.raises(ValueError, match="n"):
        SelectionInputs(0)
    with pytest.raises(ValueError, match="draw"):
        SelectionInputs(5, draw=-1)
    with pytest.raises(ValueError, match="lam"):
        SelectionInputs(5, lam=-0.5)
    x = SelectionInputs(5, gradients=torch.zeros(5, 2))
    x.require("Uniform")  # nothing needed: no error
    with pytest.raises(ValueError, match="Retrieve needs labeled_logits, pseudo_labels in its SelectionInputs"):
        require(x, "Retrieve", "gradients", "labeled_logits", "pseudo_labels")


def test_params_round_trip_and_with_params_copies():
    s = make_strategy("retrieve", 7, seed=3)
    params = s.get_params()
    assert params["k"] == 7 and params["seed"] == 3
    t = s.with_params(k=9)
    assert type(t) is type(s) and t is not s and t.k == 9 and s.k == 7
    assert {**t.get_params(), "k": 7} == params
    with pytest.raises(ValueError, match="k"):
        s.with_params(k=0)  # validated by the constructor


def test_the_result_of_a_fit_is_int64_indices_and_float32_cpu_weights():
    class Every(CoresetStrategy):
        def __init__(self, k):
            self.k = k

        def fit_inputs(self, inputs):
            fitted = Every(self.k)
            return fitted._set_result(torch.arange(self.k, dtype=torch.int32), [2.0] * self.k, time.perf_counter())

    s = Every(3)
    idx, w = s.select(SelectionInputs(10))
    assert idx.dtype == np.int64 and idx.tolist() == [0, 1, 2] and w.dtype == torch.float32 and w.tolist() == [2.0] * 3
    assert not hasattr(s, "indices_")  # select fits a copy
    assert s.fit_inputs(SelectionInputs(10)).seconds_ >= 0
    with pytest.raises(NotImplementedError, match="CoresetStrategy must implement fit_inputs"):
        CoresetStrategy().select(SelectionInputs(10))


def test_shapes_the_inputs_record_refuses():
    G = inputs().gradients
    with pytest.raises(ValueError, match="one row per unlabeled sample"):
        inputs(gradients=G[:-1])
    with pytest.raises(ValueError, match="one row per unlabeled sample"):
        inputs(gradients=G[:, 0])
    with pytest.raises(ValueError, match="one class per unlabeled sample"):
        inputs(pseudo_labels=torch.zeros(N - 1, dtype=torch.long))
