"""The bounds of paper B's theory (§5, Appendices B-C) as functions: the right-hand sides the book checks.

* :func:`lemma_b1_bound` -- Lemma B.1 (Pronzato's Lemma 2): ``t_k < A (2 + log k) / (k + 1)``.
* :func:`theorem_5_6_bound` -- eq. (9), GKHR: ``C_alpha^2 + B (2 + log m) / (m + 1)``, ``B = 2K``.
* :func:`lemma_b2_bound` -- eq. (10), GKH: ``M_alpha^2 + B (2 + log m) / (m + 1)``.
* :func:`affine_minimiser` -- App. C, eq. (11): ``w-hat``, the minimiser of the weighted alpha-MMD^2 on
  ``1^T w = 1`` (weights of any sign), and :func:`simplex_min_alpha_mmd2` -- ``M_alpha^2`` of Lemma B.2, its
  minimum over the probability simplex (``w >= 0``), with a certified lower bound.
* :func:`theorem_5_4_bound` -- Theorem 5.4's right-hand side as printed, and as its proof (App. C) gives it.

The weighted alpha-MMD^2 of App. A.1 is ``w^T K w - 2 alpha w^T p + alpha^2 K-bar`` with ``p = K 1 / n`` (the
``mu`` of Algorithm 1) and ``K-bar = 1^T K 1 / n^2``; the dense functions here take the ``n x n`` kernel matrix
``K`` (small ``n``: the book's checks), as a numpy array or a tensor, and return numpy / floats.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from sslkit._checks import check_real
from sslkit.select.kernel import check_alpha

__all__ = [
    "lemma_b1_bound",
    "theorem_5_6_bound",
    "lemma_b2_bound",
    "affine_minimiser",
    "simplex_min_alpha_mmd2",
    "weighted_alpha_mmd2",
    "theorem_5_4_bound",
]


def _budgets(m) -> np.ndarray:
    m = np.asarray(m)
    if m.dtype.kind not in "iu":
        raise TypeError(f"m must be an integer budget (or an array of them), got dtype {m.dtype}")
    if np.any(m < 1):
        raise ValueError("m must be >= 1")
    return m.astype(np.float64)


def _scalar_or_array(x: np.ndarray):
    return float(x) if x.ndim == 0 else x


def lemma_b1_bound(k, A: float):
    """Lemma B.1 (Pronzato's Lemma 2, paper B App. B): ``A (2 + log k) / (k + 1)`` (natural log).

    If ``t_1 <= A`` and ``t_{k+1} <= (1 - 1/(k+1)) t_k + A / (k+1)^2`` then ``t_k < A (2 + log k) / (k + 1)`` for
    every ``k > 1``; with equality in the recursion ``t_k = A H_k / k`` (``H_k`` the harmonic number), which
    the book derives. ``k`` may be an array.
    """
    A = check_real(A, "A", low=0.0, low_open=True)
    k = _budgets(k)
    return _scalar_or_array(A * (2.0 + np.log(k)) / (k + 1.0))


def theorem_5_6_bound(m, alpha, mean_kernel, *, max_diag: float = 1.0):
    """Right-hand side of paper B Theorem 5.6 (eq. (9)): ``C_alpha^2 + B (2 + log m) / (m + 1)``.

    ``C_alpha^2 = (1 - alpha)^2 K-bar`` with ``K-bar = mean_kernel = sum_{i,j} k(x_i,x_j) / n^2`` (Lemma
    B.6; ``mean(mu)``), ``B = 2 K`` with ``K = max_x k(x, x) = max_diag`` (1 for the Gaussian kernel),
    ``log`` natural (Lemma B.1, from Pronzato). Valid under Assumption 5.5 for every ``m >= 1``.
    ``m`` may be an array (the bound along a run).
    """
    alpha = check_alpha(alpha)
    mean_kernel = check_real(mean_kernel, "mean_kernel", low=0.0)
    B = 2.0 * check_real(max_diag, "max_diag", low=0.0, low_open=True)
    return _scalar_or_array((1.0 - alpha) ** 2 * float(mean_kernel) + np.asarray(lemma_b1_bound(m, B)))


def lemma_b2_bound(m, min_value, *, max_diag: float = 1.0):
    """Right-hand side of paper B Lemma B.2 (eq. (10)), GKH's finite-sample bound:
    ``M_alpha^2 + B (2 + log m) / (m + 1)`` with ``M_alpha^2 = min_value`` (the minimum of the weighted
    alpha-MMD^2 over the probability simplex, :func:`simplex_min_alpha_mmd2`) and ``B = 2K``, ``K = max_diag``.

    ``B = 2K`` bounds ``(e_j - w_p)^T K (e_j - w_p) = k(x_j, x_j) - 2 (K w_p)_j + w_p^T K w_p`` only for a
    kernel with non-negative values (the Gaussian kernel); for a general bounded kernel the bound is ``4K``.
    """
    min_value = check_real(min_value, "min_value", low=0.0)
    B = 2.0 * check_real(max_diag, "max_diag", low=0.0, low_open=True)
    return _scalar_or_array(min_value + np.asarray(lemma_b1_bound(m, B)))


def _dense_kernel(K) -> np.ndarray:
    K = np.asarray(K.detach().cpu().numpy() if isinstance(K, torch.Tensor) else K, dtype=np.float64)
    if K.ndim != 2 or K.shape[0] != K.shape[1] or K.shape[0] < 1:
        raise ValueError(f"K must be a square n x n kernel matrix, got shape {K.shape}")
    if not np.isfinite(K).all():
        raise ValueError("K contains NaN or infinite values")
    if not np.allclose(K, K.T, rtol=1e-6, atol=1e-9):
        raise ValueError("K must be symmetric (a kernel matrix)")
    return K


def weighted_alpha_mmd2(K, w, alpha) -> float:
    """The weighted alpha-MMD^2 of App. A.1: ``w^T K w - 2 alpha w^T p + alpha^2 K-bar``, ``p = K 1 / n``.

    On ``w_p`` (weight ``1/p`` on each of ``p`` picks, repeats adding up) it is eq. (6)'s alpha-MMD^2 of the
    selection; it is ``|| sum_i w_i phi(x_i) - alpha mean_i phi(x_i) ||^2 >= 0`` for weights of any sign."""
    alpha = check_alpha(alpha)
    K = _dense_kernel(K)
    w = np.asarray(w, dtype=np.float64)
    if w.shape != (K.shape[0],):
        raise ValueError(f"w must have shape ({K.shape[0]},), got {w.shape}")
    p = K.mean(axis=1)
    return float(w @ K @ w - 2.0 * alpha * (w @ p) + alpha * alpha * p.mean())


def affine_minimiser(K, alpha) -> np.ndarray:
    """``w-hat`` of paper B App. C, eq. (11): the minimiser of the weighted alpha-MMD^2 over ``1^T w = 1``,

        w-hat = alpha (K^-1 - K^-1 1 1^T K^-1 / (1^T K^-1 1)) p + K^-1 1 / (1^T K^-1 1),

    computed in its simplified form ``alpha 1/n + (1 - alpha) K^-1 1 / (1^T K^-1 1)`` (``K^-1 p = 1/n`` since
    ``p = K 1 / n``; the book derives both). Needs ``K`` invertible: a ``ValueError`` when it is numerically
    singular (condition number above 1e12). The minimum value is ``(1 - alpha)^2 / (1^T K^-1 1)``.
    """
    alpha = check_alpha(alpha)
    K = _dense_kernel(K)
    if np.linalg.cond(K) > 1e12:
        raise ValueError("K is numerically singular (condition number above 1e12): eq. (11) needs K^-1")
    n = K.shape[0]
    u = np.linalg.solve(K, np.ones(n))
    return alpha * np.full(n, 1.0 / n) + (1.0 - alpha) * u / u.sum()


def simplex_min_alpha_mmd2(K, alpha, *, penalty: float = 1e4) -> tuple[float, float, np.ndarray]:
    """``M_alpha^2`` of paper B Lemma B.2: ``min_{w >= 0, 1^T w = 1}`` of the weighted alpha-MMD^2 (App. A.1).

    Returns ``(value, lower, w)``: ``w`` a feasible point (non-negative, summing to 1), ``value`` the objective
    there (an upper bound of ``M_alpha^2``) and ``lower`` the Frank-Wolfe certificate
    ``F(w) + min_i grad_i - grad^T w`` (convexity: no feasible point is below it), so
    ``lower <= M_alpha^2 <= value``. Solved as a non-negative least-squares problem
    ``|| G w - alpha G 1/n ||^2 + penalty^2 (1^T w - 1)^2`` with ``G^T G = K`` (scipy's NNLS), then renormalised.
    """
    from scipy.optimize import nnls

    alpha = check_alpha(alpha)
    K = _dense_kernel(K)
    penalty = check_real(penalty, "penalty", low=0.0, low_open=True)
    n = K.shape[0]
    lam, V = np.linalg.eigh(K)
    G = np.sqrt(np.clip(lam, 0.0, None))[:, None] * V.T  # G^T G = K (up to K's negative rounding eigenvalues)
    A = np.vstack([G, penalty * np.ones((1, n))])
    b = np.concatenate([alpha * G @ np.full(n, 1.0 / n), [penalty]])
    w, _ = nnls(A, b, maxiter=50 * n)
    if w.sum() <= 0:
        w = np.full(n, 1.0 / n)
    w = w / w.sum()
    value = max(weighted_alpha_mmd2(K, w, alpha), 0.0)  # a squared norm: clamp the rounding below 0
    grad = 2.0 * (K @ w - alpha * K.mean(axis=1))
    lower = value + float(grad.min() - grad @ w)
    return value, max(lower, 0.0), w


def theorem_5_4_bound(mmd_alpha, alpha, norm_h, norm_m, norm_s, *, max_diag: float, form: str = "proof") -> float:
    """The right-hand side of paper B Theorem 5.4 (the core-set loss ``|R_T(h) - R_S(h)|``), in one of two forms.

    * ``form="printed"`` -- as the theorem is printed: ``K_c (MMD_{k,alpha} + (1 - alpha) sqrt(K))^2`` with the
      constant its proof (App. C) gives, ``K_c = K_h^2 + 2 K_h K_m + K_s``, for ``k = k_1^2 + k_1 k_2 + k_3``.
    * ``form="proof"`` -- what the proof's chain actually yields, corrected: ``K_c (MMD_{k,alpha} +
      (1 - alpha) sqrt(K))`` (linear: ``|<f, mu_T - mu_S>| <= ||f|| MMD_k``, then Lemma B.3), with
      ``K_c = (K_h + K_m)^2 + K_s`` for ``k = k_1^2 + k_1 k_2 + k_2^2 + k_3``: the conditional squared loss is
      ``E[(Y - h(x))^2 | x] = s(x) + (m(x) - h(x))^2``, whose ``m(x)^2`` the proof's expansion drops.

    ``mmd_alpha``: ``MMD_{k,alpha}(X_S, X_T)`` (the square root of eq. (6)) for the kernel ``k`` of that form;
    ``norm_h``, ``norm_m``, ``norm_s``: the RKHS norms ``K_h``, ``K_m``, ``K_s`` (Assumptions 5.1-5.3) or bounds
    on them; ``max_diag``: ``K = max_x k(x, x)`` of that ``k``. The "empirical risks" it bounds are those of the
    proof: ``R_T(h) = mean_{x in T} E[(Y - h(x))^2 | X = x]`` (the labels' noise integrated out).
    """
    if form not in ("proof", "printed"):
        raise ValueError(f"form must be 'proof' or 'printed', got {form!r}")
    mmd_alpha = check_real(mmd_alpha, "mmd_alpha", low=0.0)
    alpha = check_real(alpha, "alpha", low=0.0, high=1.0)
    Kh, Km, Ks = (check_real(v, k, low=0.0) for v, k in ((norm_h, "norm_h"), (norm_m, "norm_m"), (norm_s, "norm_s")))
    K = check_real(max_diag, "max_diag", low=0.0)
    term = mmd_alpha + (1.0 - alpha) * math.sqrt(K)
    if form == "printed":
        return (Kh * Kh + 2.0 * Kh * Km + Ks) * term * term
    return ((Kh + Km) ** 2 + Ks) * term
