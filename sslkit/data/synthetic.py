"""Synthetic data that needs no files: the toy distributions of papers A and B.

* :func:`gaussian_pair` -- paper A §6.1: p_1 = N((1, 1), I_2), p_2 = N((0, 0), I_2), with exact
  posterior (:func:`gaussian_pair_posterior`) and Bayes error (:func:`gaussian_pair_bayes_error`).
* :func:`rdss_toy_distribution` -- the four 2-D distributions of paper B, App. D.1
  (names in :data:`RDSS_TOY_DISTRIBUTIONS`, parameters in :data:`RDSS_TOY_SPECS`).
* :func:`gmm10` -- the 10-component, uniform-weight Gaussian mixture of paper B, App. D.3.

Every sampler takes an integer ``seed`` (one ``numpy.random.default_rng`` stream) and returns
``(X, labels)``: ``X`` float64 of shape (n, 2), ``labels`` int64 of shape (n,) (class or mixture
component of each point).
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from sslkit._checks import check_count, check_seed

__all__ = [
    "GAUSSIAN_PAIR_MEANS",
    "gaussian_pair",
    "gaussian_pair_posterior",
    "gaussian_pair_bayes_error",
    "RDSS_TOY_DISTRIBUTIONS",
    "RDSS_TOY_SPECS",
    "rdss_toy_distribution",
    "gmm10",
    "gmm10_means",
]


def _check_prior(prior, name: str = "prior") -> float:
    if isinstance(prior, (bool, np.bool_)) or not isinstance(prior, numbers.Real):
        raise TypeError(f"{name} must be a real number in (0, 1), got {prior!r}")
    prior = float(prior)
    if not 0.0 < prior < 1.0:
        raise ValueError(f"{name} must lie in (0, 1), got {prior}")
    return prior


def _sample_mixture(rng, n: int, weights, sample_component):
    """Draw ``n`` i.i.d. points from a mixture: component counts are multinomial(n, weights)."""
    counts = rng.multinomial(n, weights)
    parts = [sample_component(rng, k, int(m)) for k, m in enumerate(counts)]
    labels = np.repeat(np.arange(len(weights), dtype=np.int64), counts)
    order = rng.permutation(n)
    return np.concatenate(parts, axis=0)[order].astype(np.float64), labels[order]


# --------------------------------------------------------------------------------------------------
# Paper A §6.1: the Gaussian pair
# --------------------------------------------------------------------------------------------------

#: Paper A §6.1: class means of p_1 (label 0, paper A class 1) and p_2 (label 1, class 2); covariance I_2.
GAUSSIAN_PAIR_MEANS = ((1.0, 1.0), (0.0, 0.0))


def gaussian_pair(n, *, prior=None, seed):
    """Sample paper A §6.1's 2-D Gaussian pair: p_1 = N((1,1)^T, I_2), p_2 = N((0,0)^T, I_2).

    Label 0 is paper A's class 1 (density p_1, prior theta_1), label 1 is class 2.

    * ``n = (n_1, n_2)``: labeled data, exactly ``n_1`` points from p_1 then ``n_2`` from p_2
      (``prior`` must be None).
    * ``n`` an int: ``n`` i.i.d. points from the marginal theta_1 p_1 + (1 - theta_1) p_2 with
      ``theta_1 = prior`` (default 0.5) -- unlabeled data; the returned labels are the hidden classes.

    Returns ``(X, y)``: float64 (n, 2) and int64 (n,).
    """
    seed = check_seed(seed)
    rng = np.random.default_rng(seed)
    means = np.asarray(GAUSSIAN_PAIR_MEANS)
    if isinstance(n, (tuple, list)):
        if len(n) != 2:
            raise ValueError(f"n must be an int or a pair (n_1, n_2), got {n!r}")
        if prior is not None:
            raise ValueError("prior applies to mixture samples (n an int), not to per-class counts (n_1, n_2)")
        counts = [check_count(n[0], "n[0] (n_1)"), check_count(n[1], "n[1] (n_2)")]
        y = np.repeat(np.array([0, 1], dtype=np.int64), counts)
    else:
        n = check_count(n, "n")
        theta = _check_prior(0.5 if prior is None else prior)
        y = (rng.random(n) >= theta).astype(np.int64)  # P(y = 0) = theta_1
    X = means[y] + rng.standard_normal((y.size, 2))
    return X.astype(np.float64), y


def gaussian_pair_posterior(X, prior=0.5) -> np.ndarray:
    """Exact p(class 1 | x) = p(label 0 | x) for the Gaussian pair with theta_1 = ``prior``.

    log p_1(x)/p_2(x) = x_1 + x_2 - 1 (equal identity covariances), so the posterior is
    sigmoid(x_1 + x_2 - 1 + log(theta_1 / (1 - theta_1))).
    """
    theta = _check_prior(prior)
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[1] != 2:
        raise ValueError(f"X must have shape (n, 2), got {X.shape}")
    logit = X.sum(axis=1) - 1.0 + math.log(theta / (1.0 - theta))
    return 1.0 / (1.0 + np.exp(-logit))


def gaussian_pair_bayes_error(prior=0.5) -> float:
    """Exact Bayes error of the Gaussian pair with theta_1 = ``prior``.

    With s = x_1 + x_2 (s ~ N(2, 2) under p_1, N(0, 2) under p_2), the Bayes rule predicts class 1 iff
    s > t, t = 1 - log(theta_1 / (1 - theta_1)); error = theta_1 Phi((t - 2)/sqrt 2)
    + (1 - theta_1) (1 - Phi(t / sqrt 2)). For theta_1 = 0.5 this is Phi(-1/sqrt 2) ~ 0.2398.
    """
    theta = _check_prior(prior)
    t = 1.0 - math.log(theta / (1.0 - theta))

    def phi(z):
        return 0.5 * (1.0 + math.erf(z / math.sqrt(2.0)))

    return theta * phi((t - 2.0) / math.sqrt(2.0)) + (1.0 - theta) * (1.0 - phi(t / math.sqrt(2.0)))


# --------------------------------------------------------------------------------------------------
# Paper B App. D.1: four 2-D distributions
# --------------------------------------------------------------------------------------------------

_G_MEANS = ((1.0, 2.0), (-3.0, -5.0), (-5.0, 4.0), (15.0, 10.0))
_G_COV_DIAGS = ((2.0, 5.0), (1.0, 2.0), (8.0, 6.0), (4.0, 9.0))

#: Names accepted by :func:`rdss_toy_distribution`.
RDSS_TOY_DISTRIBUTIONS = ("gmm1", "gmm2", "uniform1", "uniform2")

#: Paper B, App. D.1, as printed. The GMMs share G_1..G_4 = N(mean_k, diag(cov_diag_k)); the printed
#: matrices are read as covariances (not standard deviations). "uniform1" is a mixture of the uniform
#: distribution on the disk of radius 0.5 and on the annulus 4 <= r <= 6, both centred at the origin;
#: the paper gives neither the centre nor the mixture weights -- we choose the origin and equal
#: weights (0.5, 0.5). "uniform2" is uniform on [-10, 10]^2.
RDSS_TOY_SPECS = {
    "gmm1": dict(weights=(0.95, 0.01, 0.02, 0.02), means=_G_MEANS, cov_diags=_G_COV_DIAGS),
    "gmm2": dict(weights=(0.3, 0.2, 0.15, 0.35), means=_G_MEANS, cov_diags=_G_COV_DIAGS),
    "uniform1": dict(weights=(0.5, 0.5), radii=((0.0, 0.5), (4.0, 6.0))),
    "uniform2": dict(weights=(1.0,), box=(-10.0, 10.0)),
}


def _uniform_annulus(rng, m: int, r_in: float, r_out: float) -> np.ndarray:
    # Uniform in area: r^2 is uniform on [r_in^2, r_out^2]; the angle is uniform.
    r = np.sqrt(rng.uniform(r_in**2, r_out**2, size=m))
    angle = rng.uniform(0.0, 2.0 * np.pi, size=m)
    return np.column_stack([r * np.cos(angle), r * np.sin(angle)])


def rdss_toy_distribution(name: str, n: int, *, seed):
    """Sample ``n`` i.i.d. points from one of paper B's App. D.1 distributions on R^2.

    ``name`` is one of :data:`RDSS_TOY_DISTRIBUTIONS` (see :data:`RDSS_TOY_SPECS` for the parameters
    and the choices we made where the paper is silent). Paper B draws n in {1000, 3000, 10000, 30000}.
    Returns ``(X, component)``: float64 (n, 2) and the int64 mixture component of each point
    (0..3 for the GMMs, 0 = disk / 1 = annulus for "uniform1", all 0 for "uniform2").
    """
    if name not in RDSS_TOY_SPECS:
        raise ValueError(f"unknown distribution {name!r}; choose one of {RDSS_TOY_DISTRIBUTIONS}")
    n = check_count(n, "n")
    rng = np.random.default_rng(check_seed(seed))
    spec = RDSS_TOY_SPECS[name]
    if name in ("gmm1", "gmm2"):
        means = np.asarray(spec["means"])
        stds = np.sqrt(np.asarray(spec["cov_diags"]))

        def component(rng, k, m):
            return means[k] + stds[k] * rng.standard_normal((m, 2))
    elif name == "uniform1":

        def component(rng, k, m):
            return _uniform_annulus(rng, m, *spec["radii"][k])
    else:

        def component(rng, k, m):
            return rng.uniform(*spec["box"], size=(m, 2))

    return _sample_mixture(rng, n, spec["weights"], component)


# --------------------------------------------------------------------------------------------------
# Paper B App. D.3: 10-component GMM
# --------------------------------------------------------------------------------------------------


def gmm10_means(radius: float = 8.0) -> np.ndarray:
    """Means of :func:`gmm10`: 10 points evenly spaced on a circle, mean k at angle 2 pi k / 10."""
    angles = 2.0 * np.pi * np.arange(10) / 10
    return radius * np.column_stack([np.cos(angles), np.sin(angles)])


def gmm10(n: int = 5000, *, radius: float = 8.0, std: float = 1.0, seed):
    """Sample paper B App. D.3's 10-component Gaussian mixture on R^2 with uniform weights (n = 5000).

    The paper gives no means or covariances. Our choice: means evenly spaced on a circle of ``radius``
    8 (:func:`gmm10_means`; neighbouring means are 2 * 8 * sin(pi/10) ~ 4.9 apart) and isotropic
    covariance ``std**2 * I_2`` with ``std`` = 1, so the clusters are visible but not far apart.
    Returns ``(X, component)``: float64 (n, 2) and the int64 component (0..9) of each point.
    """
    n = check_count(n, "n")
    for value, name in ((radius, "radius"), (std, "std")):
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
            raise TypeError(f"{name} must be a positive number, got {value!r}")
        if not (math.isfinite(value) and value > 0):
            raise ValueError(f"{name} must be a positive number, got {value!r}")
    rng = np.random.default_rng(check_seed(seed))
    means = gmm10_means(float(radius))

    def component(rng, k, m):
        return means[k] + float(std) * rng.standard_normal((m, 2))

    return _sample_mixture(rng, n, np.full(10, 0.1), component)
