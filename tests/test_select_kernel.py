"""sslkit.select.kernel (paper B §6, App. A.1): the Gaussian kernel's convention, the median bandwidth (exact and
subsampled), block-wise row sums against the dense kernel, float32 against float64."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from select_reference import dense_kernel, toy_data

from sslkit.select import gaussian_kernel, kernel_row_sums, median_bandwidth

pytestmark = pytest.mark.usefixtures("one_thread")  # conftest.py


@pytest.fixture(scope="module")
def toy():
    return toy_data()


def test_gaussian_kernel_convention(toy):
    K = gaussian_kernel(toy[:20], toy[:30], bandwidth=1.7).numpy()
    np.testing.assert_allclose(K, dense_kernel(toy[:20], toy[:30], 1.7), rtol=1e-12, atol=1e-14)
    # exp(-||x-y||^2 / sigma^2): at distance sigma the kernel is 1/e
    K2 = gaussian_kernel(np.array([[0.0, 0.0]]), np.array([[3.0, 4.0]]), bandwidth=5.0)
    assert float(K2) == pytest.approx(math.exp(-1.0), rel=1e-12)


def test_median_bandwidth_exact_small_n(toy):
    d = np.sqrt(((toy[:, None] - toy[None]) ** 2).sum(-1))[np.triu_indices(len(toy), 1)]
    assert median_bandwidth(toy) == pytest.approx(float(np.median(d)), rel=1e-10)


def test_median_bandwidth_subsample_seeded(toy):
    a = median_bandwidth(toy, max_samples=50, seed=3)
    assert a == median_bandwidth(toy, max_samples=50, seed=3)
    rows = np.sort(np.random.default_rng(3).choice(len(toy), 50, replace=False))
    sub = toy[rows]
    d = np.sqrt(((sub[:, None] - sub[None]) ** 2).sum(-1))[np.triu_indices(50, 1)]
    assert a == pytest.approx(float(np.median(d)), rel=1e-10)


@pytest.mark.parametrize("block", [3, 7, 64, 1000])
def test_blockwise_row_sums_equal_dense(toy, block):
    r = kernel_row_sums(toy, bandwidth=2.5, block_size=block).numpy()
    np.testing.assert_allclose(r, dense_kernel(toy, toy, 2.5).sum(1), rtol=1e-12)


def test_row_sums_float32_close_to_float64(toy):
    r32 = kernel_row_sums(toy.astype(np.float32), bandwidth=2.5, block_size=64).numpy()
    np.testing.assert_allclose(r32, dense_kernel(toy, toy, 2.5).sum(1), rtol=1e-5)


def test_a_large_pool_is_lifted_by_chunks_to_the_same_values(monkeypatch):
    from sslkit.select import kernel

    def pool(d, dt):
        return torch.randn(3000, d, generator=torch.Generator().manual_seed(d), dtype=dt)

    cases = [(d, dt) for d in (7, 512) for dt in (torch.float32, torch.float64)]
    by_chunks = {c: kernel.lifted(pool(*c), 9.0) for c in cases}  # 3000 rows > LIFT_CHUNK
    X = torch.randn(1000, 7, dtype=torch.float32)
    whole = kernel.lifted(X, 2.0)
    monkeypatch.setattr(kernel, "LIFT_CHUNK", 128)  # 1000 rows count as a large pool now
    assert torch.equal(kernel.lifted(X, 2.0), whole)
    with pytest.raises(ValueError, match="not finite"):
        kernel.lifted(torch.cat([X, torch.full((1, 7), 1e30)]), 1e-10)  # the check runs in every chunk
    monkeypatch.setattr(kernel, "LIFT_CHUNK", 10**6)  # and at once against by chunks, wide rows, both dtypes
    for c in cases:
        assert torch.equal(kernel.lifted(pool(*c), 9.0), by_chunks[c]), c
