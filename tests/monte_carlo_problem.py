"""Shared samplers of the Monte Carlo tests (not a test module): a 3-class pool with class-dependent losses and
paper A's two-class linear-Gaussian model (tests/test_risk_monte_carlo.py, tests/test_variance_experiment.py)."""

import numpy as np

from sslkit.risk.monte_carlo import LinearGaussianSampler, PoolSampler

PRIOR3 = np.array([0.5, 0.3, 0.2])


def pool3(seed=0, N=600):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, N)
    losses = rng.exponential(size=(N, 3)) + 0.5 * np.eye(3)[y]  # class-dependent, correlated with y
    return PoolSampler(losses, y)


def gaussian(loss):
    return LinearGaussianSampler([0.7, 1.2], -1.1, [[1.0, 1.0], [0.0, 0.0]], loss, support_size=200_000)
