"""Variance of the linear risk estimator and its minimisers (paper A §3.3-3.5, §4.3-4.4, App. A).

Notation: ``k`` classes, prior θ (k,), labeled counts n (k,), ``w_m = θ_m²/n_m``, ``W = Σ_m w_m``,
``C_m`` (k, k) the covariance of the loss vector (l(g(x), 1), ..., l(g(x), k)) under x ~ p_m,
``Q = diag(1/θ)``, ``d_m = 1 - e_m``, ``S = Σ_m w_m C_m``, ``u = Σ_m w_m C_m e_m``.

Finite unlabeled sample (not in the paper, which takes n_U -> ∞)
----------------------------------------------------------------
In eq. (7) the unlabeled part is ``Σ_j v_j R̂_Uj`` with ``v_j = 1 - a_j/θ_j`` (i.e. v = 1 - Qa), and the
unlabeled sample is independent of the labeled ones, so

    Var[R̂_lin^a] = Σ_m w_m (Qa - d_m)ᵀ C_m (Qa - d_m)  +  (1/n_U) vᵀ C_U v,           (Thm 2 + U term)

where ``C_U`` is the covariance of the loss vector under the marginal p = Σ_m θ_m p_m. By the law of total
covariance ``C_U = Σ_m θ_m C_m + Σ_m θ_m (μ_m - μ̄)(μ_m - μ̄)ᵀ`` with μ_m = (R_m1, ..., R_mk) the class
means of the loss vector and μ̄ = Σ_m θ_m μ_m (:func:`mixture_covariance`). The U term adds
``(1/n_U) Q C_U Q`` to A, ``(1/n_U) Q C_U 1`` to b and ``(1/n_U) 1ᵀ C_U 1`` to c, so everything in Thm 3
carries over with S replaced by ``M = S + C_U/n_U``:

    a* = θ ∘ (1 - M⁻¹ u),      min_a Var = Σ_m w_m (C_m)_mm - uᵀ M⁻¹ u.

The same holds for symmetric losses with the (k-1)-truncated matrices (C_U truncated too).

Inputs may be numpy arrays or torch tensors; the computation runs in float64 (numpy, or torch on the
device of the first tensor argument) and returns the kind of the inputs (torch results in that tensor's
floating dtype). Scalars come back as ``numpy.float64`` or a 0-d tensor.
"""

from __future__ import annotations

import math
import numbers

import numpy as np
import torch

from sslkit.risk.estimators import (
    check_labels,
    check_losses,
    check_num_classes,
    check_prior,
)
from sslkit.risk.quadratic import (
    Ctx,
    check_counts,
    check_covariances,
    check_vector,
    d_full,
    d_sym,
    quadratic_system,
    quadratic_variance,
    reduction_term,
    setup_problem,
    solve_checked,
    unlabeled_term,
)

__all__ = [
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


# ----------------------------------------------------------------------------- covariances
def loss_covariances(losses, y, num_classes, shrinkage=0.0, *, ddof=1):
    """Per-class covariance matrices C_m of the loss vector (paper A §3.3), shape (k, k, k).

    ``C[m] = Cov_{x ~ p_m}[l(g(x), i), l(g(x), j)]`` estimated from the samples of class m (denominator
    ``n_m - ddof``), then shrunk toward its diagonal as in App. C:
    ``Σ <- (1 - shrinkage) Σ + shrinkage · diag(Σ)`` (the paper's Ours (Iter) uses shrinkage = 0.5).
    Needs more than ``ddof`` samples in every class (pass ``ddof=0`` for the maximum-likelihood estimate
    with a single sample per class).
    """
    k = check_num_classes(num_classes)
    L = check_losses(losses, k=k)
    if isinstance(shrinkage, (bool, np.bool_)) or not isinstance(shrinkage, numbers.Real) or not 0 <= shrinkage <= 1:
        raise ValueError(f"shrinkage must be a number in [0, 1], got {shrinkage!r}")
    if ddof not in (0, 1):
        raise ValueError(f"ddof must be 0 or 1, got {ddof!r}")
    torch_mode = isinstance(L, torch.Tensor)
    yy, ynp = check_labels(y, L.shape[0], k, like=L if torch_mode else None)
    counts = np.bincount(ynp.astype(np.int64), minlength=k) if ynp.size else np.zeros(k, np.int64)
    few = np.flatnonzero(counts <= ddof)
    if few.size:
        raise ValueError(
            f"class(es) {few.tolist()} have {counts[few].tolist()} samples; the covariance C_m needs more than "
            f"ddof={ddof} samples per class"
        )
    covs = []
    for m in range(k):
        X = L[yy == m]
        Xc = X - X.mean(0)
        C = Xc.T @ Xc / (counts[m] - ddof)
        if shrinkage:
            diag = torch.diag(torch.diagonal(C)) if torch_mode else np.diag(np.diag(C))
            C = (1 - shrinkage) * C + shrinkage * diag
        covs.append(C)
    return torch.stack(covs) if torch_mode else np.stack(covs)


def mixture_covariance(covariances, class_means, prior):
    """Covariance C_U of the loss vector under the marginal p = Σ_m θ_m p_m (law of total covariance).

    ``C_U = Σ_m θ_m C_m + Σ_m θ_m (μ_m - μ̄)(μ_m - μ̄)ᵀ`` with ``μ_m = class_means[m]`` (the mean loss vector
    of class m, i.e. row m of the component-risk matrix R_mj) and ``μ̄ = Σ_m θ_m μ_m`` (= R_Uj, eq. 2).
    Needed for the finite-n_U variance term ``(1/n_U) vᵀ C_U v`` (module docstring). Returns (k, k).
    """
    ctx = Ctx(covariances, class_means, prior)
    p = ctx.arr(check_prior(prior, ctx.like), "prior")
    k = p.shape[0]
    C = check_covariances(ctx, covariances, k)
    mu = ctx.arr(class_means, "class_means")
    if tuple(mu.shape) != (k, k):
        raise ValueError(
            f"class_means must have shape ({k}, {k}) (row m = mean loss vector of class m), got {tuple(mu.shape)}"
        )
    ctx.finite(mu, "class_means")
    centred = mu - p @ mu
    within = (p[:, None, None] * C).sum(0)
    between = (p[:, None, None] * (centred[:, :, None] * centred[:, None, :])).sum(0)
    return ctx.out(within + between)


# ----------------------------------------------------------------------------- Theorems 2-3
def estimator_variance(a, covariances, prior, n_per_class, *, n_unlabeled=None, unlabeled_covariance=None):
    """Var[R̂_lin^a] (paper A Thm 2, eq. 8): ``Σ_m (θ_m²/n_m) (Qa - d_m)ᵀ C_m (Qa - d_m)``.

    With a finite ``n_unlabeled`` the unlabeled term ``(1/n_U) vᵀ C_U v``, ``v = 1 - a/θ``, is added
    (``unlabeled_covariance`` = C_U, see :func:`mixture_covariance`); ``None`` (default) or ``inf`` is
    the paper's n_U -> ∞. Holds for any loss (for a symmetric one, see also
    :func:`symmetric_estimator_variance`).
    """
    ctx, p, k, n = setup_problem(covariances, prior, n_per_class, a, unlabeled_covariance)
    C = check_covariances(ctx, covariances, k)
    av = check_vector(ctx, a, k)
    U = unlabeled_term(ctx, n_unlabeled, unlabeled_covariance, k)
    return ctx.out(quadratic_variance(C, p, n, d_full(ctx, k), U, av))


def optimal_a(covariances, prior, n_per_class, ridge=0.0, *, n_unlabeled=None, unlabeled_covariance=None):
    """The variance-minimising a* (paper A eq. 9 / Thm 3): solves ``(A + ridge·I) a = b`` with
    ``A = Σ_m w_m Q C_m Q`` and ``b = Σ_m w_m Q C_m d_m`` (eq. 8). Without ridge, a* = θ ∘ (1 - S⁻¹u).

    ``ridge`` is App. C's Tikhonov term (1e-4 in the paper). A singular A (e.g. a symmetric loss, whose
    C_m all have C_m 1 = 0) raises ``ValueError`` suggesting ``ridge``. Finite ``n_unlabeled``: the U term
    is included (module docstring).
    """
    ctx, p, k, n = setup_problem(covariances, prior, n_per_class, unlabeled_covariance)
    C = check_covariances(ctx, covariances, k)
    U = unlabeled_term(ctx, n_unlabeled, unlabeled_covariance, k)
    A, b, _ = quadratic_system(C, p, n, d_full(ctx, k), U)
    return ctx.out(solve_checked(ctx, A, b, ridge, "the system A a = b of Thm 3"))


def variance_reduction(covariances, prior, n_per_class, *, n_unlabeled=None, unlabeled_covariance=None):
    """``uᵀ S⁻¹ u`` (paper A eq. 10): how much the optimal linear estimator's variance is below the
    supervised one's. With finite n_U, S is replaced by ``S + C_U/n_U``."""
    ctx, p, k, n = setup_problem(covariances, prior, n_per_class, unlabeled_covariance)
    C = check_covariances(ctx, covariances, k)
    U = unlabeled_term(ctx, n_unlabeled, unlabeled_covariance, k)
    w = p**2 / n
    S = (w[:, None, None] * C).sum(0)
    u = _u_vector(ctx, C, w, k)
    return ctx.out(reduction_term(ctx, S, u, U, "S = Σ_m w_m C_m"))


def _u_vector(ctx, C, w, k):
    """u = Σ_m w_m C_m e_m: column m of C_m, weighted."""
    idx = torch.arange(k, device=C.device) if ctx.torch else np.arange(k)
    cols = C[idx, :, idx]  # (k, k): row m = C_m[:, m]
    return (w[:, None] * cols).sum(0)


def minimum_variance(covariances, prior, n_per_class, *, n_unlabeled=None, unlabeled_covariance=None):
    """min_a Var[R̂_lin^a] (paper A Thm 3, eq. 10): ``Σ_m w_m (C_m)_mm - uᵀ S⁻¹ u``.

    The first term is the variance of the supervised estimator (a = θ). With finite ``n_unlabeled``, S is
    replaced by ``M = S + C_U/n_U`` (module docstring). Raises ``ValueError`` if S (or M) is singular.
    """
    ctx, p, k, n = setup_problem(covariances, prior, n_per_class, unlabeled_covariance)
    C = check_covariances(ctx, covariances, k)
    U = unlabeled_term(ctx, n_unlabeled, unlabeled_covariance, k)
    w = p**2 / n
    S = (w[:, None, None] * C).sum(0)
    u = _u_vector(ctx, C, w, k)
    idx = torch.arange(k, device=C.device) if ctx.torch else np.arange(k)
    supervised = (w * C[idx, idx, idx]).sum()
    return ctx.out(supervised - reduction_term(ctx, S, u, U, "S = Σ_m w_m C_m"))


def equal_covariance_a(prior, n_per_class):
    """Data-free a of Ours (EC) (paper A §5.2): ``a_i = θ_i (1 - w_i/W)``, ``w_i = θ_i²/n_i``.

    It is a* of Thm 3 whenever all classes share one invertible covariance C_m = C (any such C, not only
    the ρ1/ρ2 form of Thm 4): then S = W C, u = C w and a* = θ ∘ (1 - w/W).

    ``n_per_class`` must hold whole class counts (an integer or float array of whole numbers), as
    :class:`sslkit.algorithms.OursEC` requires; a fractional count raises ``ValueError``.
    """
    ctx = Ctx(prior, n_per_class)
    p = ctx.arr(check_prior(prior, ctx.like), "prior")
    n = check_counts(ctx, n_per_class, p.shape[0])
    nn = n.cpu().numpy() if ctx.torch else n
    if (nn != np.round(nn)).any():
        raise ValueError(
            f"n_per_class must be whole class counts (numbers of labeled samples), got {nn.tolist()}; "
            "OursEC refuses fractional counts too"
        )
    w = p**2 / n
    return ctx.out(p * (1 - w / w.sum()))


# ----------------------------------------------------------------------------- PNU (binary)
def _binary(ctx, prior, name="prior"):
    p = ctx.arr(check_prior(prior, ctx.like), name)
    if p.shape[0] != 2:
        raise ValueError(f"PNU is binary: {name} must have 2 entries, got {p.shape[0]}")
    return p


def pnu_eta(prior, n_per_class):
    """PNU mixing weight of Sakai et al. (2017) as used in paper A App. C:
    ``η = (ψ2 - ψ1)/(ψ1 + ψ2)``, ``ψ_m = θ_m²/n_m`` (η ≥ 0: PNPU, η < 0: PNNU). Binary only."""
    ctx = Ctx(prior, n_per_class)
    p = _binary(ctx, prior)
    n = check_counts(ctx, n_per_class, 2)
    psi = p**2 / n
    return ctx.out((psi[1] - psi[0]) / (psi[0] + psi[1]))


def pnu_to_a(prior, eta):
    """The a of eq. (7) that equals the PNU risk (proof of paper A Thm 5).

    η ≥ 0: ``R_PNPU^η = (1-η) R_PN + η R_PU``  ->  a = (θ1, θ2 (1 - η));
    η < 0: ``R_PNNU^|η| = (1-|η|) R_PN + |η| R_NU``  ->  ``a = (θ1 (1 - |η|), θ2)``.
    Any finite real η is accepted (Sakai et al. restrict η to [-1, 1]; Thm 5 optimises over R).
    """
    ctx = Ctx(prior, eta)
    p = _binary(ctx, prior)
    e = ctx.arr(eta, "eta")
    if e.ndim != 0:
        raise ValueError(f"eta must be a scalar, got shape {tuple(e.shape)}")
    ctx.finite(e, "eta")
    e0, e1 = ctx.eye(2)
    if float(e) >= 0:
        a = p * (e0 + (1 - e) * e1)  # PNPU: (θ1, θ2 (1 - η))
    else:
        a = p * ((1 + e) * e0 + e1)  # PNNU with |η| = -η: (θ1 (1 - |η|), θ2)
    return ctx.out(a)


def _pnu_direction(ctx, p, family):
    """a(η) = a0 + η δ for the PNPU ("pu") or PNNU ("nu") family with η ∈ R."""
    e0, e1 = ctx.eye(2)
    if family == "pu":
        return p, -p * e1
    if family == "nu":
        return p, -p * e0
    raise ValueError(f"family must be 'pu' (PNPU) or 'nu' (PNNU), got {family!r}")


def pnu_optimal_eta(covariances, prior, n_per_class, family, *, n_unlabeled=None, unlabeled_covariance=None):
    """η* = argmin over η ∈ R of Var(R̂_PNPU^η) (``family="pu"``) or Var(R̂_PNNU^η) (``"nu"``) (Thm 5).

    PNPU^η is a = (θ1, θ2(1-η)), PNNU^η is a = (θ1(1-η), θ2); the variance (eq. 8, plus the U term
    for finite n_U) is quadratic in η, minimised in closed form.
    """
    ctx, p, k, n = setup_problem(covariances, prior, n_per_class, unlabeled_covariance)
    if k != 2:
        raise ValueError(f"PNU is binary: prior must have 2 entries, got {k}")
    C = check_covariances(ctx, covariances, k)
    U = unlabeled_term(ctx, n_unlabeled, unlabeled_covariance, k)
    A, b, _ = quadratic_system(C, p, n, d_full(ctx, k), U)
    a0, delta = _pnu_direction(ctx, p, family)
    curv = delta @ A @ delta
    if float(curv) <= 0:
        raise ValueError("Var(PNU^η) is constant in η (degenerate covariances); η* is not unique")
    return ctx.out((b - A @ a0) @ delta / curv)


def pnu_optimal_a(covariances, prior, n_per_class, *, n_unlabeled=None, unlabeled_covariance=None):
    """The a of the best PNU estimator: min over S_PNPU ∪ S_PNNU with η ∈ R (paper A §6.1, Thm 5)."""
    ctx = Ctx(covariances, prior, n_per_class, unlabeled_covariance)
    p = ctx.arr(check_prior(prior, ctx.like), "prior")
    kw = dict(n_unlabeled=n_unlabeled, unlabeled_covariance=unlabeled_covariance)
    best = None
    for family in ("pu", "nu"):
        eta = ctx.arr(pnu_optimal_eta(covariances, prior, n_per_class, family, **kw), "eta")
        a0, delta = _pnu_direction(ctx, p, family)
        a = a0 + eta * delta
        var = float(estimator_variance(a, covariances, prior, n_per_class, **kw))
        if best is None or var < best[0]:
            best = (var, a)
    return ctx.out(best[1])


def pnu_minimum_variance(covariances, prior, n_per_class, *, n_unlabeled=None, unlabeled_covariance=None):
    """min(Var(PNPU^η*_PU), Var(PNNU^η*_NU)) -- the PNU side of eq. (11)."""
    a = pnu_optimal_a(
        covariances, prior, n_per_class, n_unlabeled=n_unlabeled, unlabeled_covariance=unlabeled_covariance
    )
    return estimator_variance(
        a, covariances, prior, n_per_class, n_unlabeled=n_unlabeled, unlabeled_covariance=unlabeled_covariance
    )


# ----------------------------------------------------------------------------- symmetric loss (Thm 6-8)
def _sym_setup(covariances, prior, n_per_class, *extra):
    ctx, p, k, n = setup_problem(covariances, prior, n_per_class, *extra)
    C = check_covariances(ctx, covariances, k, allow_truncated=True)[:, : k - 1, : k - 1]
    return ctx, p, k, n, C


def symmetric_estimator_variance(a, covariances, prior, n_per_class, *, n_unlabeled=None, unlabeled_covariance=None):
    """Var[R̂_lin^a] for a symmetric loss, a with k - 1 entries (paper A Thm 7):
    ``Σ_m w_m (Q̌a - ď_m)ᵀ Č_m (Q̌a - ď_m)``, Č_m the top-left (k-1)x(k-1) block of C_m,
    ``ď_m = 1 - e_m`` (m < k), ``ď_k = 2·1``. ``covariances`` may be the full (k, k, k) matrices or
    the truncated (k, k-1, k-1) ones. Finite n_U adds ``(1/n_U) v̌ᵀ Č_U v̌``, ``v̌ = 1 - Q̌a``.
    """
    ctx, p, k, n, C = _sym_setup(covariances, prior, n_per_class, a, unlabeled_covariance)
    av = check_vector(ctx, a, k - 1)
    U = unlabeled_term(ctx, n_unlabeled, unlabeled_covariance, k - 1, truncate=True)
    return ctx.out(quadratic_variance(C, p, n, d_sym(ctx, k), U, av))


def symmetric_optimal_a(covariances, prior, n_per_class, ridge=0.0, *, n_unlabeled=None, unlabeled_covariance=None):
    """a* (k - 1 entries) minimising :func:`symmetric_estimator_variance` (paper A Thm 8):
    solves ``(Ǎ + ridge·I) a = b̌``, ``Ǎ = Q̌ Š Q̌``, ``b̌ = Σ_m w_m Q̌ Č_m ď_m = Q̌(Š1 - ǔ)``."""
    ctx, p, k, n, C = _sym_setup(covariances, prior, n_per_class, unlabeled_covariance)
    U = unlabeled_term(ctx, n_unlabeled, unlabeled_covariance, k - 1, truncate=True)
    A, b, _ = quadratic_system(C, p, n, d_sym(ctx, k), U)
    return ctx.out(solve_checked(ctx, A, b, ridge, "the truncated system Ǎ a = b̌ of Thm 8"))


def symmetric_minimum_variance(covariances, prior, n_per_class, *, n_unlabeled=None, unlabeled_covariance=None):
    """min_a Var[R̂_lin^a] for a symmetric loss (paper A Thm 8, eq. 15):
    ``Σ_m w_m (C_m)_mm - ǔᵀ Š⁻¹ ǔ``, ``Š = Σ_m w_m Č_m``, ``ǔ = Σ_{m<k} w_m Č_m e_m - w_k Č_k 1``.

    (C_k)_kk is taken as ``1ᵀ Č_k 1`` (= Var l(g, k) for a symmetric loss), so truncated covariances suffice.
    """
    ctx, p, k, n, C = _sym_setup(covariances, prior, n_per_class, unlabeled_covariance)
    U = unlabeled_term(ctx, n_unlabeled, unlabeled_covariance, k - 1, truncate=True)
    w = p**2 / n
    S = (w[:, None, None] * C).sum(0)
    km = k - 1
    idx = torch.arange(km, device=C.device) if ctx.torch else np.arange(km)
    cols = C[idx, :, idx]  # row m = Č_m e_m, m < k
    one = ctx.ones(km)
    u = (w[:km, None] * cols).sum(0) - w[km] * (C[km] @ one)
    supervised = (w[:km] * C[idx, idx, idx]).sum() + w[km] * (one @ C[km] @ one)
    return ctx.out(supervised - reduction_term(ctx, S, u, U, "Š = Σ_m w_m Č_m"))


# ----------------------------------------------------------------------------- closed forms (Thm 4, 5)
def _rho(rho1, rho2):
    for name, r in (("rho1", rho1), ("rho2", rho2)):
        if isinstance(r, (bool, np.bool_)) or not isinstance(r, numbers.Real) or not math.isfinite(r):
            raise ValueError(f"{name} must be a finite real number, got {r!r}")
    if not rho1 > 0:
        raise ValueError(f"rho1 (the common variance (C)_ii) must be > 0, got {rho1!r}")
    if not rho1 > rho2:
        raise ValueError(
            f"rho1 must exceed rho2 (C = (ρ1-ρ2)I + ρ2 11ᵀ positive definite needs ρ1 > ρ2), got {rho1!r} <= {rho2!r}"
        )
    return float(rho1), float(rho2)


def _np(x):
    return x.detach().cpu().numpy() if isinstance(x, torch.Tensor) else x


def _w(prior, n_per_class):
    """w = θ²/n as numpy float64 (the closed forms of Thm 4-5 return numpy scalars)."""
    ctx = Ctx()
    p = check_prior(_np(prior))
    n = check_counts(ctx, _np(n_per_class), p.shape[0])
    return p**2 / n


def variance_reduction_equal_cov(rho1, rho2, prior, n_per_class):
    """uᵀS⁻¹u in closed form when every C_m = C with C_ii = ρ1, C_ij = ρ2 (paper A Thm 4):
    ``(ρ1 - ρ2) Σ_m w_m² / W + ρ2 W``. Returns ``numpy.float64``."""
    r1, r2 = _rho(rho1, rho2)
    w = _w(prior, n_per_class)
    k = w.shape[0]
    if abs(r1 + (k - 1) * r2) < 1e-12 * r1:
        raise ValueError(f"C is singular: ρ1 + (k-1)ρ2 = 0 for ρ1={r1}, ρ2={r2}, k={k} (Thm 4 assumes C invertible)")
    W = w.sum()
    return np.float64((r1 - r2) * (w**2).sum() / W + r2 * W)


def variance_reduction_upper_bound(rho1, rho2, prior, n_per_class):
    """The upper bound of paper A Thm 4: ``ρ1 max_m w_m + ρ2 (W - max_m w_m)`` (needs ρ1 > ρ2)."""
    r1, r2 = _rho(rho1, rho2)
    w = _w(prior, n_per_class)
    return np.float64(r1 * w.max() + r2 * (w.sum() - w.max()))


def pnu_variance_gap(rho1, rho2, prior, n_per_class):
    """Paper A Thm 5, eq. (12): min(Var PNPU*, Var PNNU*) - Var(R̂_lin^{a*}) for k = 2, n_U -> ∞ and
    C_1 = C_2 with diagonal ρ1, off-diagonal ρ2:
    ``min(w1², w2²) (ρ1² - ρ2²) / ((w1 + w2) ρ1)``. Returns ``numpy.float64``."""
    r1, r2 = _rho(rho1, rho2)
    w = _w(prior, n_per_class)
    if w.shape[0] != 2:
        raise ValueError(f"Theorem 5 is binary: prior must have 2 entries, got {w.shape[0]}")
    return np.float64(min(w[0] ** 2, w[1] ** 2) * (r1**2 - r2**2) / (w.sum() * r1))
