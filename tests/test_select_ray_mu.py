"""The exact mu over Ray workers (sslkit.select.ray_mu) equals the single-process mu bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from sslkit.select import GKHR, kernel_row_sums
from sslkit.select.kernel import accumulate_bands, band_sums, lifted, partner_blocks, symmetric_row_sums

ray = pytest.importorskip("ray")


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


def features(n, d=16, seed=0):
    return np.random.default_rng(seed).normal(size=(n, d)).astype(np.float32)


def test_bands_in_any_order_of_computation_give_the_single_process_sums():
    # the driver's accumulation is what fixes the bits: bands computed in reverse order, then added in band order
    Z = lifted(torch.from_numpy(features(900)), 2.5)
    blocks = partner_blocks(Z, 128)
    reverse = {bi: band_sums(Z, blocks, bi, 128) for bi in reversed(range(len(blocks)))}
    got = accumulate_bands(900, (reverse[bi] for bi in range(len(blocks))), 128)
    assert torch.equal(got, symmetric_row_sums(Z, 128))


def test_a_wrong_accumulation_order_is_seen():
    # the check above can fail: adding the tiles' column sums before the row sums changes the last bits somewhere
    Z = lifted(torch.from_numpy(features(3000, seed=3)), 0.7)
    blocks = partner_blocks(Z, 64)
    sums = torch.zeros(3000, dtype=torch.float64)
    for bi in reversed(range(len(blocks))):
        for k, (rows, cols) in enumerate(band_sums(Z, blocks, bi, 64)):
            j = (bi + k) * 64
            sums[bi * 64 : bi * 64 + 64] += rows
            if cols is not None:
                sums[j : j + 64] += cols
    ref = symmetric_row_sums(Z, 64)
    assert torch.allclose(sums, ref, rtol=1e-12) and not torch.equal(sums, ref)


@pytest.mark.parametrize("bands_per_task", [1, 3])
def test_ray_mu_equals_the_single_process_mu_bit_for_bit(local_ray, bands_per_task):
    from sslkit.select.ray_mu import ray_kernel_row_sums

    X = features(1500)
    ref = kernel_row_sums(X, bandwidth=3.0, block_size=256, device="cpu")
    got = ray_kernel_row_sums(X, bandwidth=3.0, block_size=256, bands_per_task=bands_per_task)
    assert got.dtype == torch.float64 and torch.equal(got, ref)


def test_gkhr_with_the_ray_mu_selects_as_without_it(local_ray):
    from sslkit.select.ray_mu import ray_kernel_row_sums

    X = features(1200, seed=1)
    plain = GKHR(m=30, bandwidth=2.0, device="cpu").fit(X)
    mu = ray_kernel_row_sums(X, bandwidth=2.0) / len(X)
    tiled = GKHR(m=30, bandwidth=2.0, device="cpu").fit(X, mu=mu)
    assert np.array_equal(plain.indices_, tiled.indices_)
    assert np.array_equal(plain.mu_, tiled.mu_)


def test_ray_mu_refuses_bad_input_before_starting_work(local_ray):
    from sslkit.select.ray_mu import ray_kernel_row_sums

    with pytest.raises(ValueError, match="bandwidth"):
        ray_kernel_row_sums(features(10), bandwidth=0.0)
    with pytest.raises(ValueError, match="bands_per_task"):
        ray_kernel_row_sums(features(10), bandwidth=1.0, bands_per_task=0)
