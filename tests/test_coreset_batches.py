"""sslkit.coreset.batches (paper C App. D/E): per-batch means of the per-sample gradients equal autograd of the batch's
mean loss, and chosen batches expand to their rows with the batch's weight."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from coreset_problem import C, D, autograd_row, last_layer_problem, unlabeled_losses

from sslkit.coreset import batch_means, expand_batches

pytestmark = pytest.mark.usefixtures("one_thread")  # conftest.py


@pytest.fixture()
def problem():
    return last_layer_problem()


def test_batch_means_equal_autograd_of_batch_mean_loss(problem):
    lin = problem["lin"]
    losses, _ = unlabeled_losses(lin, problem["h_u"], problem["targets"], problem["mask"])
    M = batch_means(problem["G"], 12)  # 40 = 3 x 12 + a partial batch of 4
    assert M.shape == (4, C * (1 + D))
    for i, (a, b) in enumerate([(0, 12), (12, 24), (24, 36), (36, 40)]):
        torch.testing.assert_close(M[i], autograd_row(losses[a:b].mean(), lin), rtol=1e-12, atol=1e-14)
    idx, w = expand_batches([3, 0], [2.5, 0.5], 40, 12)
    np.testing.assert_array_equal(idx.numpy(), list(range(36, 40)) + list(range(12)))
    np.testing.assert_array_equal(w.numpy(), [2.5] * 4 + [0.5] * 12)
