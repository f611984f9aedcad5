"""The quadratic-form machinery behind paper A's variance results (Theorems 2-8): input checks, the float64
numpy / torch context, the system ``A a = b`` of Theorem 3 and its solve, and the variance ``Σ_m w_m (Qa -
d_m)ᵀ C_m (Qa - d_m)`` (+ the finite-n_U term). :mod:`sslkit.risk.variance` states the theorems with it."""

from __future__ import annotations

import math
import numbers

import numpy as np
import torch

from sslkit.risk.estimators import (
    check_prior,
    float_array,
    tensor_template,
)

COND_LIMIT = 1e12

#: Relative tolerance of the covariance checks: an asymmetry or a negative eigenvalue up to
#: ``PSD_TOL * max|eigenvalue|`` of the matrix is round-off (e.g. of a singular covariance such as a
#: symmetric loss's, ``C_m 1 = 0``); anything larger is refused.
PSD_TOL = 1e-8


# ----------------------------------------------------------------------------- helpers
class Ctx:
    """float64 arithmetic in numpy, or in torch on the device of the first tensor argument."""

    def __init__(self, *xs):
        self.like = tensor_template(*xs)
        self.torch = self.like is not None

    def arr(self, x, name):
        if self.torch:
            return float_array(x, name, self.like, torch.float64)
        return float_array(x, name)

    def eye(self, k):
        return torch.eye(k, dtype=torch.float64, device=self.like.device) if self.torch else np.eye(k)

    def ones(self, k):
        return torch.ones(k, dtype=torch.float64, device=self.like.device) if self.torch else np.ones(k)

    def diag(self, v):
        return torch.diag(v) if self.torch else np.diag(v)

    def solve(self, A, b):
        return torch.linalg.solve(A, b) if self.torch else np.linalg.solve(A, b)

    def cond(self, A):
        c = torch.linalg.cond(A) if self.torch else np.linalg.cond(A)
        return float(c)

    def out(self, x):
        if self.torch:
            dt = self.like.dtype if self.like.is_floating_point() else torch.float64
            return x.to(dt)
        return np.float64(x) if np.ndim(x) == 0 else x

    def finite(self, x, name):
        ok = bool(torch.isfinite(x).all()) if self.torch else bool(np.isfinite(x).all())
        if not ok:
            raise ValueError(f"{name} contains NaN or infinite values")


def check_counts(ctx, n_per_class, k, name="n_per_class"):
    n = ctx.arr(n_per_class, name)
    if n.ndim != 1 or n.shape[0] != k:
        raise ValueError(f"{name} must have shape ({k},) (one count per class), got {tuple(n.shape)}")
    ctx.finite(n, name)
    nn = n.cpu().numpy() if ctx.torch else n
    if (nn <= 0).any():
        raise ValueError(f"{name} must be strictly positive (every class needs a labeled sample), got {nn.tolist()}")
    return n


def check_psd(ctx, C, name):
    """Refuse a covariance (``(s, s)`` or a stack ``(k, s, s)``) that is not symmetric positive semidefinite.

    Both tests are relative to the largest absolute eigenvalue of each matrix (:data:`PSD_TOL`), so
    round-off in an estimated or singular covariance passes while a real negative direction (for which
    the "variance" could be negative and a* would maximise instead of minimise) is named.
    """
    stack = C if C.ndim == 3 else C[None]
    X = stack.detach().cpu().numpy() if ctx.torch else stack
    for m, Cm in enumerate(X):
        which = name if C.ndim == 2 else f"{name}[{m}]"
        eig = np.linalg.eigvalsh((Cm + Cm.T) / 2)
        scale = max(float(np.abs(eig).max()), np.finfo(np.float64).tiny)
        asym = float(np.abs(Cm - Cm.T).max())
        if asym > PSD_TOL * scale:
            raise ValueError(f"{which} is not symmetric (largest |C - Cᵀ| entry {asym:.3g}); a covariance must be")
        if eig[0] < -PSD_TOL * scale:
            raise ValueError(
                f"{which} is not positive semidefinite: smallest eigenvalue {eig[0]:.3g} "
                f"(largest |eigenvalue| {scale:.3g}); a covariance has no negative eigenvalue"
            )


def check_covariances(ctx, covariances, k, name="covariances", allow_truncated=False):
    C = ctx.arr(covariances, name)
    shapes = [(k, k, k)] + ([(k, k - 1, k - 1)] if allow_truncated else [])
    if tuple(C.shape) not in shapes:
        want = " or ".join(str(s) for s in shapes)
        raise ValueError(
            f"{name} must have shape {want} for {k} classes (one k x k matrix C_m per class), got {tuple(C.shape)}"
        )
    ctx.finite(C, name)
    check_psd(ctx, C, name)
    return C


def setup_problem(covariances, prior, n_per_class, *extra):
    ctx = Ctx(covariances, prior, n_per_class, *extra)
    p = check_prior(prior, ctx.like)
    p = ctx.arr(p, "prior")
    k = p.shape[0]
    n = check_counts(ctx, n_per_class, k)
    return ctx, p, k, n


def unlabeled_term(ctx, n_unlabeled, unlabeled_covariance, size, truncate=False):
    """None for n_U -> ∞, else (n_U, C_U) validated; with ``truncate`` C_U may be (k, k), cut to ``size``."""
    if n_unlabeled is None or (isinstance(n_unlabeled, numbers.Real) and math.isinf(n_unlabeled) and n_unlabeled > 0):
        return None
    if isinstance(n_unlabeled, (bool, np.bool_)) or not isinstance(n_unlabeled, numbers.Real) or not n_unlabeled > 0:
        raise ValueError(f"n_unlabeled must be a positive number (or None / inf for n_U -> ∞), got {n_unlabeled!r}")
    if unlabeled_covariance is None:
        raise ValueError(
            "unlabeled_covariance is required when n_unlabeled is finite (the covariance C_U of the loss vector "
            "under p = Σ θ_m p_m; see mixture_covariance)"
        )
    CU = ctx.arr(unlabeled_covariance, "unlabeled_covariance")
    sizes = (size, size + 1) if truncate else (size,)
    if CU.ndim != 2 or CU.shape[0] != CU.shape[1] or CU.shape[0] not in sizes:
        want = " or ".join(f"({s}, {s})" for s in sizes)
        raise ValueError(f"unlabeled_covariance must be a {want} matrix, got shape {tuple(CU.shape)}")
    ctx.finite(CU, "unlabeled_covariance")
    check_psd(ctx, CU, "unlabeled_covariance")
    return float(n_unlabeled), CU[:size, :size]


def check_vector(ctx, a, size, name="a"):
    v = ctx.arr(a, name)
    if v.ndim != 1 or v.shape[0] != size:
        raise ValueError(f"{name} must have shape ({size},), got {tuple(v.shape)}")
    ctx.finite(v, name)
    return v


def solve_checked(ctx, A, b, ridge, what):
    if (
        isinstance(ridge, (bool, np.bool_))
        or not isinstance(ridge, numbers.Real)
        or not ridge >= 0
        or math.isinf(ridge)
    ):
        raise ValueError(f"ridge must be a finite number >= 0, got {ridge!r}")
    size = A.shape[0]
    A = A + ridge * ctx.eye(size)
    if ctx.cond(A) > COND_LIMIT:
        raise ValueError(
            f"{what} is singular (condition number > {COND_LIMIT:.0e}); pass ridge > 0 (paper A App. C uses "
            "ridge=1e-4), or use the symmetric_* functions if the loss is symmetric (Σ_j l(g, j) constant)"
        )
    return ctx.solve(A, b)


def quadratic_system(C, p, n, D, U):
    """(A, b, c) of Var(a) = aᵀAa - 2bᵀa + c (Thm 2, eq. 8) for the rows d_m of D, plus the U term."""
    w = p[: D.shape[0]] ** 2 / n  # D has one row per class m
    q = 1 / p[: D.shape[1]]
    S = (w[:, None, None] * C).sum(0)
    A = q[:, None] * S * q[None, :]
    b = q * (w[:, None] * (C @ D[:, :, None])[..., 0]).sum(0)
    c = (w * ((D[:, None, :] @ C @ D[:, :, None])[:, 0, 0])).sum()
    if U is not None:
        nU, CU = U
        one = D.new_ones(D.shape[1]) if isinstance(D, torch.Tensor) else np.ones(D.shape[1])
        A = A + q[:, None] * CU * q[None, :] / nU
        b = b + q * (CU @ one) / nU
        c = c + one @ CU @ one / nU
    return A, b, c


def quadratic_variance(C, p, n, D, U, a):
    """Σ_m w_m (Qa - d_m)ᵀ C_m (Qa - d_m) + (1/n_U) vᵀ C_U v, v = 1 - Qa (first form of eq. 8)."""
    w = p**2 / n
    qa = a / p[: a.shape[0]]
    X = qa[None, :] - D  # row m: Qa - d_m
    var = (w * ((X[:, None, :] @ C @ X[:, :, None])[:, 0, 0])).sum()
    if U is not None:
        nU, CU = U
        v = 1 - qa
        var = var + v @ CU @ v / nU
    return var


def d_full(ctx, k):
    return ctx.ones(k)[None, :] - ctx.eye(k)  # row m = d_m = 1 - e_m


def d_sym(ctx, k):
    D = ctx.ones(k - 1)[None, :] - ctx.eye(k)[:, : k - 1]  # rows m < k: 1 - e_m (truncated)
    D[k - 1] = 2.0  # row k: ď_k = 2·1 (Thm 7)
    return D


def reduction_term(ctx, S, u, U, what):
    M = S if U is None else S + U[1] / U[0]
    if ctx.cond(M) > COND_LIMIT:
        raise ValueError(
            f"{what} is singular (condition number > {COND_LIMIT:.0e}); the minimum is not unique -- use "
            "optimal_a(..., ridge=...) and estimator_variance, or the symmetric_* functions for a symmetric loss"
        )
    return u @ ctx.solve(M, u)
