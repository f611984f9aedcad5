"""Sample selection for labelling (paper B: RDSS) with a scikit-learn-style interface.

Every selector: ``Selector(m, ...).fit(X[, y]).indices_`` — an int64 numpy array of row indices of
``X`` in selection order (the index type of paper C's coreset strategies too), ``seconds_`` the fit's
wall-clock; numpy or torch input, any device (``device="auto"``), deterministic given
its ``seed``.

* :mod:`sslkit.select.kernel`: Gaussian kernel ``exp(-||x-y||^2 / sigma^2)`` (§6; the convention is
  explained there), :func:`median_bandwidth`, blockwise :func:`kernel_row_sums`.
* :mod:`sslkit.select.mmd`: :func:`alpha_mmd2` (eq. (6)), :func:`mmd2` (eq. (4)), :func:`alpha_mmd2_path`.
* :mod:`sslkit.select.theory`: the bounds of §5 and Apps. B-C: :func:`theorem_5_6_bound` (eq. (9)),
  :func:`lemma_b1_bound`, :func:`lemma_b2_bound` (eq. (10)), :func:`affine_minimiser` (eq. (11)),
  :func:`simplex_min_alpha_mmd2` (Lemma B.2's ``M_alpha^2``), :func:`weighted_alpha_mmd2` (App. A.1),
  :func:`theorem_5_4_bound`.
* :mod:`sslkit.select.herding`: :class:`GKHR` (Algorithm 1, RDSS) and :class:`GKH` (Algorithm 2).
* :mod:`sslkit.select.baselines`: :class:`RandomSelector`, :class:`StratifiedSelector` (label oracle),
  :class:`KMeansSelector`, :class:`USLSelector`.
* :mod:`sslkit.select.kernel_mean`: :func:`approximate_mu` (Algorithm 1's ``mu`` from ``s`` landmarks or random
  Fourier features, ``O(n s d)``, for pools of a million) and its error bound :func:`mu_error_bound`.
* :mod:`sslkit.select.ray_mu`: :func:`ray_kernel_row_sums` (Algorithm 1's ``mu`` by tiles on Ray workers, equal
  to :func:`kernel_row_sums` bit for bit).
* :mod:`sslkit.select.activeft`: :class:`ActiveFTSelector` and its objective :func:`~.activeft.activeft_loss`.
* :mod:`sslkit.select.registry`: :data:`SELECTORS` (paper B's names -> classes), :func:`make_selector`,
  :func:`selector_name` (``"rdss"`` -> ``"RDSS"``).
"""

from sslkit.select.activeft import ActiveFTSelector, activeft_loss
from sslkit.select.baselines import (
    KMeansSelector,
    RandomSelector,
    StratifiedSelector,
    USLSelector,
    kmeans,
)
from sslkit.select.herding import GKH, GKHR, auto_alpha
from sslkit.select.kernel import gaussian_kernel, kernel_row_sums, median_bandwidth
from sslkit.select.kernel_mean import approximate_mu, mu_error_bound
from sslkit.select.mmd import alpha_mmd2, alpha_mmd2_path, mmd2
from sslkit.select.ray_mu import ray_kernel_row_sums
from sslkit.select.registry import SELECTORS, make_selector, selector_name
from sslkit.select.theory import (
    affine_minimiser,
    lemma_b1_bound,
    lemma_b2_bound,
    simplex_min_alpha_mmd2,
    theorem_5_4_bound,
    theorem_5_6_bound,
    weighted_alpha_mmd2,
)

__all__ = [
    "GKHR",
    "GKH",
    "auto_alpha",
    "RandomSelector",
    "StratifiedSelector",
    "KMeansSelector",
    "USLSelector",
    "ActiveFTSelector",
    "activeft_loss",
    "kmeans",
    "gaussian_kernel",
    "median_bandwidth",
    "kernel_row_sums",
    "approximate_mu",
    "mu_error_bound",
    "ray_kernel_row_sums",
    "alpha_mmd2",
    "mmd2",
    "alpha_mmd2_path",
    "theorem_5_6_bound",
    "lemma_b1_bound",
    "lemma_b2_bound",
    "affine_minimiser",
    "simplex_min_alpha_mmd2",
    "weighted_alpha_mmd2",
    "theorem_5_4_bound",
    "SELECTORS",
    "make_selector",
    "selector_name",
]
