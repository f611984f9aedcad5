"""The approximate mu of sslkit.select.kernel_mean: unbiased, inside its stated error bound, and what GKHR selects
with it (issue 48's pools of a million)."""

import math

import numpy as np
import pytest
import torch

from sslkit.select import GKHR, RandomSelector, alpha_mmd2, approximate_mu, kernel_row_sums, mu_error_bound
from sslkit.select.kernel_mean import MU_METHODS

pytestmark = pytest.mark.usefixtures("one_thread")


def clusters(n, d=6, k=5, seed=0):
    g = torch.Generator().manual_seed(seed)
    centres = 3.0 * torch.randn(k, d, generator=g, dtype=torch.float64)
    return centres[torch.randint(k, (n,), generator=g)] + torch.randn(n, d, generator=g, dtype=torch.float64)


X = clusters(400)
H = 3.0
MU = (kernel_row_sums(X, bandwidth=H) / len(X)).numpy()


@pytest.mark.parametrize("method", ["landmarks", "rff"])
def test_unbiased_mean_over_seeds_is_the_exact_mu(method):
    """The mean of 200 estimates is mu to within a few standard errors: a wrong frequency scale for the random
    Fourier features (w ~ N(0, I / sigma^2) instead of N(0, 2 I / sigma^2)) would miss it by ~0.1."""
    runs = np.stack([approximate_mu(X, bandwidth=H, method=method, size=64, seed=s).numpy() for s in range(200)])
    spread = runs.std(axis=0).max() / math.sqrt(len(runs))
    assert np.abs(runs.mean(axis=0) - MU).max() < 5 * spread
    assert spread > 1e-4  # the estimates do vary (not the exact mu under another name)


@pytest.mark.parametrize("method", ["landmarks", "rff"])
@pytest.mark.parametrize("size", [32, 256])
def test_every_estimate_is_inside_the_bound(method, size):
    eps = mu_error_bound(len(X), size, method, delta=0.05)
    worst = max(
        float(np.abs(approximate_mu(X, bandwidth=H, method=method, size=size, seed=s).numpy() - MU).max())
        for s in range(10)
    )
    assert worst <= eps
    assert worst > eps / 100  # the bound is not vacuous by orders of magnitude beyond what is seen


def test_the_bound_formulas():
    n, s, delta = 10**6, 8192, 0.05
    assert mu_error_bound(n, s, "landmarks", delta) == pytest.approx(math.sqrt(math.log(2 * n / delta) / (2 * s)))
    assert mu_error_bound(n, s, "rff", delta) == pytest.approx(math.sqrt(4 * math.log(2 * n / delta) / s))
    assert mu_error_bound(n, s, "rff") == pytest.approx(2 * math.sqrt(2) * mu_error_bound(n, s, "landmarks"))
    assert mu_error_bound(100, 100, "landmarks") == 0.0 and mu_error_bound(100, 5, "exact") == 0.0


def test_all_landmarks_is_the_exact_mu():
    full = approximate_mu(X, bandwidth=H, method="landmarks", size=len(X)).numpy()
    np.testing.assert_allclose(full, MU, rtol=1e-12)


def test_gkhr_with_an_approximate_mu_is_seeded_and_nearly_as_good():
    Xb = clusters(3000, d=8, k=8, seed=1)
    exact = GKHR(60, bandwidth=4.0).fit(Xb)
    fits = [GKHR(60, bandwidth=4.0, mu_method="landmarks", mu_size=512, seed=s).fit(Xb) for s in (0, 0, 1)]
    assert np.array_equal(fits[0].indices_, fits[1].indices_)
    assert not np.array_equal(fits[0].mu_, fits[2].mu_)  # another seed, other landmarks
    assert len(set(fits[0].indices_)) == 60
    a, mu = exact.alpha_, exact.mu_

    def crit(idx):
        return alpha_mmd2(Xb, idx, a, 4.0, mu=mu)

    random = crit(RandomSelector(60, seed=0).fit(Xb).indices_)
    assert (
        crit(exact.indices_) <= crit(fits[0].indices_) < crit(exact.indices_) + 0.25 * (random - crit(exact.indices_))
    )
    assert "mu_method='landmarks'" in repr(fits[0]) and GKHR(5).get_params()["mu_method"] == "exact"


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="mu_method must be one of 'exact', 'landmarks', 'rff'"):
        GKHR(5, mu_method="nystrom")
    with pytest.raises(ValueError, match="mu_size"):
        GKHR(5, mu_method="landmarks", mu_size=0)
    with pytest.raises(ValueError, match="kernel_row_sums"):
        approximate_mu(X, bandwidth=H, method="exact")
    with pytest.raises(ValueError, match="delta"):
        mu_error_bound(10, 5, "landmarks", delta=1.5)
    assert MU_METHODS == ("exact", "landmarks", "rff")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.parametrize("method", ["landmarks", "rff"])
def test_cuda_estimates_the_same_mu_and_selects_the_same(method):
    """Both estimators draw their landmarks / frequencies from numpy on the CPU, so the GPU computes the same
    estimate up to rounding, and GKHR with it picks the same samples (``benchmarks/gpu_session.sh``)."""
    cpu = approximate_mu(X, bandwidth=H, method=method, size=64, seed=3, device="cpu")
    gpu = approximate_mu(X, bandwidth=H, method=method, size=64, seed=3, device="cuda")
    assert gpu.device.type == "cuda"
    np.testing.assert_allclose(gpu.cpu().numpy(), cpu.numpy(), rtol=0, atol=1e-9)
    a = GKHR(20, bandwidth=H, mu_method=method, mu_size=64, device="cpu").fit(X).indices_
    b = GKHR(20, bandwidth=H, mu_method=method, mu_size=64, device="cuda").fit(X).indices_
    np.testing.assert_array_equal(a, b)
