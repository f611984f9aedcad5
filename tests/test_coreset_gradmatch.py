"""Paper C's per-batch GradMatch baseline (App. E, eq. (52)): the non-negative ridge against scipy.optimize.nnls on the
augmented system, OMP's support and weights, the random fill-up, a custom target."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy.optimize import nnls
from test_coreset_craig import gradients

from sslkit.coreset import GradMatch, batch_means, nonnegative_ridge, omp_nonnegative


@pytest.mark.parametrize("lam", [0.0, 0.5, 3.0])
def test_nonnegative_ridge_equals_scipy_nnls_on_augmented_system(lam):
    rng = np.random.default_rng(1)
    for m, d in [(5, 20), (12, 8), (30, 40)]:
        A = rng.normal(size=(m, d))
        b = rng.normal(size=d) + A[:3].sum(0)
        w = nonnegative_ridge(torch.as_tensor(A), torch.as_tensor(b), lam).numpy()
        M = np.vstack([A.T, np.sqrt(lam) * np.eye(m)])
        ref, _ = nnls(M, np.concatenate([b, np.zeros(m)]))
        np.testing.assert_allclose(w, ref, rtol=1e-7, atol=1e-9)
        assert (w >= 0).all() and (w == 0).any()  # the constraint is active somewhere


@pytest.mark.parametrize("lam", [0.0, 0.5])
def test_gradmatch_weights_are_nnls_on_the_chosen_support(lam):
    G = gradients(600, 12)
    sel = GradMatch(120, batch_size=10, lam=lam).fit(G)
    M = batch_means(G, 10).numpy()
    b = M.sum(0)
    S = sel.batches_[: sel.n_omp_].numpy()
    A = M[S]
    ref, _ = nnls(np.vstack([A.T, np.sqrt(lam) * np.eye(len(S))]), np.concatenate([b, np.zeros(len(S))]))
    np.testing.assert_allclose(sel.batch_weights_[: sel.n_omp_].numpy(), ref, rtol=1e-4, atol=1e-6)
    assert (sel.batch_weights_[: sel.n_omp_] > 0).all()
    assert sel.residual_ == pytest.approx(np.linalg.norm(b - A.T @ ref) / np.linalg.norm(b), rel=1e-4)
    assert sel.indices_.shape == (120,) and len(set(sel.indices_.tolist())) == 120


pytestmark = pytest.mark.usefixtures("one_thread")  # conftest.py


def test_omp_recovers_a_sparse_nonnegative_combination():
    gen = torch.Generator().manual_seed(0)
    A = torch.randn(50, 200, generator=gen, dtype=torch.float64)
    b = 2.0 * A[7] + 0.5 * A[31] + 1.5 * A[40]
    support, w = omp_nonnegative(A, b, 10, lam=0.0, tol=1e-10)
    assert sorted(support.tolist()) == [7, 31, 40]
    np.testing.assert_allclose(w[np.argsort(support.numpy())].numpy(), [2.0, 0.5, 1.5], rtol=1e-8)


def test_gradmatch_fills_up_at_random_when_omp_stops_early():
    G = gradients(600, 12)
    sel = GradMatch(300, batch_size=10, lam=0.0, tol=0.5, seed=1).fit(G)  # a loose tol stops OMP early
    assert 0 < sel.n_omp_ < 30 and sel.residual_ <= 0.5
    assert sel.batches_.shape == (30,) and len(set(sel.batches_.tolist())) == 30
    assert sel.batch_weights_[sel.n_omp_ :].tolist() == [1.0] * (30 - sel.n_omp_)
    again = GradMatch(300, batch_size=10, lam=0.0, tol=0.5, seed=1).fit(G)
    assert again.batches_.tolist() == sel.batches_.tolist()
    other = GradMatch(300, batch_size=10, lam=0.0, tol=0.5, seed=2).fit(G)
    assert other.batches_.tolist() != sel.batches_.tolist()


def test_gradmatch_custom_target():
    G = gradients(200, 5)
    M = batch_means(G, 10)
    target = 3.0 * M[4] + 0.5 * M[9]
    sel = GradMatch(100, batch_size=10, lam=0.0, tol=1e-9).fit(G, target=target)  # 10 of 20 batches, d = 5
    assert sel.residual_ < 1e-6  # an exact non-negative combination exists
    A = M[sel.batches_[: sel.n_omp_]]
    fit = A.T @ sel.batch_weights_[: sel.n_omp_].double()
    torch.testing.assert_close(fit, target, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="target has 4 entries"):
        GradMatch(10, batch_size=10).fit(G, target=torch.zeros(4))
