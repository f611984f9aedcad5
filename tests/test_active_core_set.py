"""sslkit.active.core_set: k-center greedy (CoreSet, CoreSetSSL) = DISTIL's CoreSet strategy (decile-distil 0.2.0, the
CORDS group's active-learning package), index for index, and Sener & Savarese's argmax-min rule by brute force; the
embedding is the model's penultimate features."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from sslkit.active import CoreSet, CoreSetSSL, k_center_greedy
from sslkit.models import MLP

pytestmark = pytest.mark.usefixtures("one_thread")  # conftest.py


def distil_coreset(F_u: np.ndarray, F_l: np.ndarray, budget: int) -> list[int]:
    """DISTIL's CoreSet strategy, built minimally: the "network" returns the rows themselves as embeddings."""
    core_set = pytest.importorskip("distil.active_learning_strategies.core_set")
    handler = pytest.importorskip("distil.utils.data_handler").DataHandler_Points

    class Identity(nn.Module):
        def __init__(self, d):
            super().__init__()
            self.d = d

        def forward(self, x, last=False):
            return (x, x) if last else x

        def get_embedding_dim(self):
            return self.d

    strategy = core_set.CoreSet(
        F_l,
        np.zeros(len(F_l), dtype=np.int64),
        F_u,
        Identity(F_u.shape[1]),
        handler,
        3,
        {"device": "cpu", "batch_size": 64},
    )
    return [int(i) for i in strategy.select(budget)]


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_k_center_greedy_equals_distil_index_for_index(seed):
    rng = np.random.default_rng(seed)
    n_u, n_l, d = (200, 15, 8) if seed % 2 else (150, 1, 32)
    F_u = rng.standard_normal((n_u, d)).astype(np.float32)
    F_l = (rng.standard_normal((n_l, d)) * 1.5 + 0.5).astype(np.float32)
    ours = k_center_greedy(torch.as_tensor(F_u), 25, torch.as_tensor(F_l)).tolist()
    assert ours == distil_coreset(F_u, F_l, 25)
    # and through the estimator, on a model's penultimate features
    assert CoreSet(25, device="cpu").fit(F_u, F_l).indices_.tolist() == ours


def test_k_center_greedy_without_labeled_starts_at_row_0_like_distil():
    F_u = np.random.default_rng(5).standard_normal((80, 4)).astype(np.float32)
    ours = k_center_greedy(F_u, 10).tolist()
    assert ours[0] == 0
    assert ours == distil_coreset(F_u, np.zeros((0, 4), dtype=np.float32), 10)


def test_k_center_greedy_is_the_argmax_min_rule_by_brute_force():
    rng = np.random.default_rng(7)
    F = rng.standard_normal((60, 3))
    L = rng.standard_normal((4, 3))
    picks = k_center_greedy(F, 12, L).tolist()
    centres = [*L]
    for u in picks:
        mind = [min(np.linalg.norm(x - c) for c in centres) for x in F]
        assert mind[u] == pytest.approx(max(mind))
        centres.append(F[u])
    sel = CoreSet(12, device="cpu").fit(F, L)
    assert sel.radius_ == pytest.approx(max(min(np.linalg.norm(x - c) for c in centres) for x in F))


def test_k_center_greedy_never_repeats_a_row_on_duplicates_and_checks_inputs():
    F = torch.zeros(5, 2)
    assert sorted(k_center_greedy(F, 5).tolist()) == [0, 1, 2, 3, 4]
    with pytest.raises(ValueError, match="m = 6 exceeds"):
        k_center_greedy(F, 6)
    with pytest.raises(ValueError, match="columns"):
        k_center_greedy(F, 2, torch.zeros(3, 3))
    with pytest.raises(ValueError, match="NaN"):
        k_center_greedy(torch.full((3, 2), float("nan")), 1)
    with pytest.raises(TypeError, match="floats"):
        k_center_greedy(torch.zeros(3, 2, dtype=torch.int64), 1)


def test_coreset_embeds_with_the_models_penultimate_features():
    torch.manual_seed(0)
    model = MLP(6, 3, hidden=(5,), dropout=0.5)  # dropout must be off while embedding
    X, XL = torch.randn(40, 6), torch.randn(3, 6)
    model.train()
    sel = CoreSetSSL(7, device="cpu").fit(X, XL, model=model)
    model.eval()
    with torch.no_grad():
        H, HL = model(X)[1], model(XL)[1]
    assert sel.indices_.tolist() == k_center_greedy(H, 7, HL).tolist()
    model.train()
    CoreSet(2, device="cpu").fit(X, model=model)
    assert model.training  # the train/eval flags are restored
