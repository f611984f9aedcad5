"""sslkit.active.scoring, what the selections of sslkit.active share: the stable "m best scores" rule, the seeded
candidate rows, eval mode with every flag restored, probabilities and features of a model, and the input checks."""

import numpy as np
import pytest
import torch
from torch import nn

from sslkit.active.scoring import (
    as_inputs,
    candidate_rows,
    check_budget,
    class_probabilities,
    evaluating,
    penultimate_features,
    top_m,
)
from sslkit.models import MLP

pytestmark = pytest.mark.usefixtures("one_thread")  # conftest.py


def test_top_m_best_first_with_ties_in_row_order():
    s = torch.tensor([0.5, 2.0, 0.5, 2.0, -1.0, 0.5])
    assert top_m(s, 4).tolist() == [1, 3, 0, 2]
    assert top_m(s, 3, largest=False).tolist() == [4, 0, 2]
    with pytest.raises(ValueError, match="NaN"):
        top_m(torch.tensor([1.0, float("nan")]), 1)
    with pytest.raises(ValueError, match="m = 7 exceeds the 6 scored rows"):
        top_m(s, 7)
    with pytest.raises(ValueError, match="1-D"):
        top_m(s[None], 1)


def test_candidate_rows_all_or_a_seeded_sorted_subset():
    assert candidate_rows(5, None, 0).tolist() == [0, 1, 2, 3, 4] == candidate_rows(5, 9, 0).tolist()
    a = candidate_rows(100, 10, seed=3)
    assert a.tolist() == sorted(set(a.tolist())) and len(a) == 10 and int(a.max()) < 100
    assert torch.equal(a, candidate_rows(100, 10, seed=3)) and not torch.equal(a, candidate_rows(100, 10, seed=4))


def test_evaluating_restores_every_flag_even_on_error():
    m = nn.Sequential(nn.Linear(2, 2), nn.Dropout(0.5))
    m.train()
    m[1].eval()  # a mixed state comes back as it was
    with pytest.raises(KeyError), evaluating(m):
        assert not any(x.training for x in m.modules())
        raise KeyError
    assert m.training and m[0].training and not m[1].training


def test_probabilities_and_features_in_eval_mode_chunk_independent():
    torch.manual_seed(0)
    model = MLP(3, 4, hidden=(8,), dropout=0.5).train()
    X = torch.randn(10, 3)
    p = class_probabilities(model, X, batch_size=3)
    torch.testing.assert_close(p.sum(1), torch.ones(10))
    with torch.no_grad():
        logits, h = model.eval()(X)
    model.train()
    torch.testing.assert_close(p, torch.softmax(logits, 1))
    torch.testing.assert_close(penultimate_features(model, X, batch_size=4), h)
    assert model.training  # flags restored
    with pytest.raises(ValueError, match="bare logits"):
        penultimate_features(nn.Linear(3, 4), X)


def test_inputs_and_budget_checks():
    assert as_inputs(np.zeros((2, 3), dtype=np.float64)).dtype == torch.float32
    with pytest.raises(TypeError, match="images_to_tensor"):
        as_inputs(np.zeros((2, 3), dtype=np.uint8))
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        as_inputs(np.zeros(3))
    with pytest.raises(ValueError, match="empty"):
        as_inputs(np.zeros((0, 3)))
    with pytest.raises(ValueError, match="NaN or infinite"):
        as_inputs(np.array([[np.inf, 0.0]]))
    with pytest.raises(TypeError, match="numeric array"):
        as_inputs("pool")
    assert check_budget(3, 3) == 3
    with pytest.raises(ValueError, match="m = 4 exceeds the 3 unlabeled rows"):
        check_budget(4, 3)
