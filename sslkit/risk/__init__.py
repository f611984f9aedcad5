"""Paper A (generalized risk rewrite): component risks, the linear unbiased risk estimator and its variance.

* :mod:`sslkit.risk.losses` -- loss matrices l(g(x), j) for every label j (CE, BCE, 0-1, ramp);
* :mod:`sslkit.risk.estimators` -- R̂_ij (eq. 1), R̂_Uj (eq. 2), Δ_j and R̂_lin^a (eq. 7, §5.2, eq. 14);
* :mod:`sslkit.risk.variance` -- covariances C_m, Var[R̂_lin^a] (Thm 2, 7), a* (Thm 3, 8), the
  equal-covariance a (§5.2), PNU (Thm 5, 9) and the closed forms of Thm 4-5;
* :mod:`sslkit.risk.monte_carlo` -- the samplers and vectorised resampling trials that check those formulas.

Numpy arrays or torch tensors in (any device), the same kind out.
"""

from sslkit.risk.estimators import (
    component_risks,
    linear_risk,
    partial_risks,
    symmetric_linear_risk,
    symmetric_reduce_a,
    unlabeled_risks,
)
from sslkit.risk.losses import LOSSES, is_symmetric, loss_matrix, symmetric_constant
from sslkit.risk.variance import (
    equal_covariance_a,
    estimator_variance,
    loss_covariances,
    minimum_variance,
    mixture_covariance,
    optimal_a,
    pnu_eta,
    pnu_minimum_variance,
    pnu_optimal_a,
    pnu_optimal_eta,
    pnu_to_a,
    pnu_variance_gap,
    symmetric_estimator_variance,
    symmetric_minimum_variance,
    symmetric_optimal_a,
    variance_reduction,
    variance_reduction_equal_cov,
    variance_reduction_upper_bound,
)

__all__ = [
    "LOSSES",
    "loss_matrix",
    "is_symmetric",
    "symmetric_constant",
    "component_risks",
    "unlabeled_risks",
    "partial_risks",
    "linear_risk",
    "symmetric_linear_risk",
    "symmetric_reduce_a",
    "loss_covariances",
    "mixture_covariance",
    "estimator_variance",
    "optimal_a",
    "minimum_variance",
    "variance_reduction",
    "equal_covariance_a",
    "pnu_eta",
    "pnu_to_a",
    "pnu_optimal_eta",
    "pnu_optimal_a",
    "pnu_minimum_variance",
    "symmetric_estimator_variance",
    "symmetric_optimal_a",
    "symmetric_minimum_variance",
    "variance_reduction_equal_cov",
    "variance_reduction_upper_bound",
    "pnu_variance_gap",
]
