"""Monte Carlo resampling of paper A's risk estimators: the samplers and the vectorised trials that test the
variance formulas of :mod:`sslkit.risk.variance` (Thm 2, Thm 7, the finite-n_U term).

A classifier g is *fixed*; a trial draws ``n_m`` labeled samples of every class m and ``n_U`` unlabeled samples
from the mixture p(x) = Σ_m θ_m p_m(x) and gives the component risks R̂ (k, k) and unlabeled risks R̂_U (k,),
and from them every linear estimator R̂_lin^a (:func:`sslkit.risk.linear_risk`). Over many trials the empirical
mean of R̂_lin^a estimates R(g) and its empirical variance estimates Var[R̂_lin^a].

Vectorised: a trial is one row of a (trials, D) tensor of float64 uniforms, laid out as

    [ n_1 draws of class 1 | ... | n_k draws of class k | n_U draws from the mixture ]

so every random number of every trial is drawn in one call per chunk of trials and turned into losses by an
inverse CDF: an index into a held-out pool (:class:`PoolSampler`) or a Gaussian quantile
(:class:`LinearGaussianSampler`); there is no Python loop over trials. One uniform per unlabeled draw picks both
its (hidden) class and the point within the class. Because torch's CPU generator fills a (T, D) tensor in
row-major order, the per-trial loop :func:`naive_resample_estimates` (one ``torch.rand(D)`` per trial) sees
exactly the same numbers; the tests check that both give the same estimates.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from sslkit._checks import check_count, check_real, check_seed

__all__ = [
    "PoolSampler",
    "LinearGaussianSampler",
    "Population",
    "linear_coefficients",
    "resample_risks",
    "resample_estimates",
    "naive_resample_estimates",
    "mean_with_se",
    "variance_with_se",
    "variance_ratio",
    "theoretical_variance",
    "check_prior",
    "check_n_per_class",
    "check_n_unlabeled",
]

_DTYPE = torch.float64
_TINY = 2.0**-60  # uniforms are clamped to [_TINY, 1 - _TINY] before an inverse CDF


# ------------------------------------------------------------------------------------------ validation
def check_prior(prior, k: int) -> np.ndarray:
    p = np.asarray(prior, dtype=np.float64)
    if p.ndim != 1 or p.shape[0] != k:
        raise ValueError(f"prior must have shape ({k},) for {k} classes, got {p.shape}")
    if not np.isfinite(p).all() or (p <= 0).any() or abs(p.sum() - 1.0) > 1e-6:
        raise ValueError(f"prior must have positive entries summing to 1, got {p.tolist()}")
    return p


def check_n_per_class(n_per_class, k: int) -> list[int]:
    if np.ndim(n_per_class) == 0:
        n_per_class = [n_per_class] * k
    n = [check_count(v, "n_per_class entry", allow_zero=False) for v in n_per_class]
    if len(n) != k:
        raise ValueError(f"n_per_class must have {k} entries (one per class), got {len(n)}")
    return n


def check_n_unlabeled(n_unlabeled):
    if n_unlabeled is None or (isinstance(n_unlabeled, float) and math.isinf(n_unlabeled)):
        return None
    return check_count(n_unlabeled, "n_unlabeled", allow_zero=False)


# ------------------------------------------------------------------------------------------ samplers
@dataclass(frozen=True)
class Population:
    """Exact population quantities of a sampler's class-conditional loss distributions.

    ``component_risks[i, j] = R_ij = E_{x~p_i}[l(g(x), j)]`` (eq. 1) and ``covariances[m] = C_m``
    (§3.3), both computed with :mod:`sslkit.risk` on the sampler's support.
    """

    component_risks: np.ndarray
    covariances: np.ndarray

    @property
    def num_classes(self) -> int:
        return self.component_risks.shape[0]

    def unlabeled_risks(self, prior) -> np.ndarray:
        """R_Uj = Σ_m θ_m R_mj (eq. 2 for the mixture p = Σ θ_m p_m)."""
        return check_prior(prior, self.num_classes) @ self.component_risks

    def risk(self, prior) -> float:
        """R(g) = Σ_i θ_i R_ii (§2)."""
        return float(check_prior(prior, self.num_classes) @ np.diag(self.component_risks))

    def unlabeled_covariance(self, prior) -> np.ndarray:
        """C_U = Cov_{x~p}[l(g(x), ·)] of the mixture (:func:`sslkit.risk.mixture_covariance`)."""
        from sslkit.risk import mixture_covariance

        p = check_prior(prior, self.num_classes)
        return np.asarray(mixture_covariance(self.covariances, self.component_risks, p))


def _population_from_support(losses: torch.Tensor, y: torch.Tensor, k: int) -> Population:
    """R_ij and C_m of equally weighted support points per class. ddof=0: drawing with replacement from
    a finite pool has the population covariance (divisor n_m), not the unbiased sample one."""
    from sslkit.risk import component_risks, loss_covariances

    R = component_risks(losses, y, k).numpy()
    C = loss_covariances(losses, y, k, ddof=0).numpy()
    return Population(component_risks=R, covariances=C)


class PoolSampler:
    """Losses of a fixed g on a finite held-out pool; class m draws are i.i.d. uniform over the pool's
    class-m rows (with replacement), so the pool's class-conditional empirical distributions *are* the
    p_m of the experiment and :meth:`population` is exact.

    losses : (N, k) array/tensor, ``losses[s, j] = l(g(x_s), j)`` (:func:`sslkit.risk.loss_matrix`).
    y : (N,) int labels in [0, k). Every class needs at least 2 rows.
    """

    def __init__(self, losses, y):
        L = torch.as_tensor(np.asarray(losses) if not isinstance(losses, torch.Tensor) else losses)
        L = L.detach().to("cpu", _DTYPE)
        yy = torch.as_tensor(np.asarray(y) if not isinstance(y, torch.Tensor) else y)
        if yy.is_floating_point() or yy.is_complex() or yy.dtype == torch.bool:
            raise TypeError(f"y must hold integer class labels, got dtype {yy.dtype} (floats would be truncated)")
        yy = yy.to("cpu", torch.int64)
        if L.ndim != 2 or L.shape[1] < 2:
            raise ValueError(f"losses must have shape (N, k) with k >= 2, got {tuple(L.shape)}")
        if yy.ndim != 1 or yy.shape[0] != L.shape[0]:
            raise ValueError(f"y must have shape ({L.shape[0]},) to match losses, got {tuple(yy.shape)}")
        if not torch.isfinite(L).all():
            raise ValueError("losses contains NaN or infinite values")
        k = L.shape[1]
        if yy.numel() and (yy.min() < 0 or yy.max() >= k):
            raise ValueError(f"y must hold labels in [0, {k}), got range [{int(yy.min())}, {int(yy.max())}]")
        counts = torch.bincount(yy, minlength=k)
        if (counts < 2).any():
            raise ValueError(f"every class needs at least 2 pool rows, got counts {counts.tolist()}")
        order = torch.argsort(yy, stable=True)
        self.losses = L[order]
        self.y = yy[order]
        self.counts = counts
        self.starts = torch.cumsum(counts, 0) - counts
        self.num_classes = k
        self._population = None
        self._cdf = {}

    def labeled(self, m: int, u: torch.Tensor) -> torch.Tensor:
        """Losses (…, k) of i.i.d. draws from class ``m``'s pool rows, one per uniform in ``u``."""
        count = int(self.counts[m])
        offset = torch.clamp((u * count).to(torch.int64), max=count - 1)
        return self.losses[int(self.starts[m]) + offset]

    def unlabeled(self, prior, u: torch.Tensor) -> torch.Tensor:
        """Losses (…, k) of i.i.d. draws from the mixture Σ_m θ_m p_m: row s of class m has probability
        θ_m / N_m; the inverse CDF of that distribution maps each uniform in ``u`` to a row."""
        key = tuple(float(v) for v in prior)
        if key not in self._cdf:
            weight = torch.as_tensor(prior, dtype=_DTYPE)[self.y] / self.counts[self.y].to(_DTYPE)
            cdf = torch.cumsum(weight, 0)
            self._cdf = {key: cdf[:-1] / cdf[-1]}  # keep one prior (the experiments loop over priors)
        idx = torch.searchsorted(self._cdf[key], u.contiguous(), right=True)
        return self.losses[idx]

    def population(self) -> Population:
        if self._population is None:
            self._population = _population_from_support(self.losses, self.y, self.num_classes)
        return self._population


class LinearGaussianSampler:
    """Losses of a linear score g(x) = w^T x + b when x | class m ~ N(μ_m, σ² I) (paper A §6.1).

    The score is then exactly Gaussian within each class, g(x) | m ~ N(w^T μ_m + b, σ² |w|²), so a draw
    is ``loc_m + sd · Φ^{-1}(u)`` and the loss matrix is :func:`sslkit.risk.loss_matrix` of that score.
    :meth:`population` integrates over the score with a midpoint rule in probability space on
    ``support_size`` quantiles per class (error O(1/support_size) even for the 0-1 loss's step).
    """

    def __init__(self, w, b, means, loss, *, sigma=1.0, support_size=1_000_000):
        from sslkit.risk import loss_matrix

        w = np.asarray(w, dtype=np.float64).reshape(-1)
        means = np.asarray(means, dtype=np.float64)
        if means.ndim != 2 or means.shape[1] != w.shape[0]:
            raise ValueError(f"means must have shape (k, {w.shape[0]}) to match w, got {means.shape}")
        if not (np.isfinite(w).all() and np.isfinite(means).all()):
            raise ValueError("w and means must be finite")
        b, sigma = check_real(b, "b"), check_real(sigma, "sigma", low=0.0, low_open=True)
        self.loc = torch.as_tensor(means @ w + b, dtype=_DTYPE)
        self.sd = sigma * float(np.linalg.norm(w))
        if self.sd == 0:
            raise ValueError("w must not be zero (the score would be constant)")
        self.loss = loss
        if means.shape[0] != 2:
            raise ValueError(f"a real score g describes 2 classes, so means must have 2 rows, got {means.shape[0]}")
        if loss_matrix(np.zeros(1), loss).shape[1] != 2:
            raise ValueError(f"loss {loss!r} does not give 2 columns for a real score")
        self.num_classes = 2
        self.support_size = check_count(support_size, "support_size", allow_zero=False)
        self._loss_matrix = loss_matrix
        self._population = None

    def _losses(self, loc, z):
        score = loc + self.sd * z
        return self._loss_matrix(score.reshape(-1), self.loss).reshape(*score.shape, -1)

    def labeled(self, m: int, u: torch.Tensor) -> torch.Tensor:
        """Losses (…, 2) of draws from class ``m``: score = loc_m + sd · Φ^{-1}(u)."""
        return self._losses(self.loc[m], torch.special.ndtri(u.clamp(_TINY, 1 - _TINY)))

    def unlabeled(self, prior, u: torch.Tensor) -> torch.Tensor:
        """Losses (…, 2) of draws from the mixture: u < θ_1 picks class 1 and u/θ_1 is then uniform
        within it, else class 2 with (u - θ_1)/θ_2 (one uniform gives both the class and the point)."""
        theta1 = float(prior[0])
        first = u < theta1
        v = torch.where(first, u / theta1, (u - theta1) / (1 - theta1))
        loc = torch.where(first, self.loc[0], self.loc[1])
        return self._losses(loc, torch.special.ndtri(v.clamp(_TINY, 1 - _TINY)))

    def population(self) -> Population:
        if self._population is None:
            N, k = self.support_size, self.num_classes
            z = torch.special.ndtri((torch.arange(N, dtype=_DTYPE) + 0.5) / N)
            scores = (self.loc[:, None] + self.sd * z[None, :]).reshape(-1)
            y = torch.arange(k).repeat_interleave(N)
            losses = self._loss_matrix(scores, self.loss)
            self._population = _population_from_support(losses, y, k)
        return self._population


# ------------------------------------------------------------------------------------------ estimators
def linear_coefficients(prior, a):
    """Coefficients (α (k, k), β (k,)) with R̂_lin^a = Σ_ij α_ij R̂_ij + Σ_j β_j R̂_Uj.

    R̂_lin^a is linear in (R̂, R̂_U) (eq. 7 / eq. 14), so the coefficients are read off by evaluating
    :func:`sslkit.risk.linear_risk` (``a`` with k entries) or :func:`sslkit.risk.symmetric_linear_risk`
    (``a`` with k - 1 entries) on unit inputs. This lets all trials be evaluated with one ``einsum``.
    """
    from sslkit.risk import linear_risk, symmetric_linear_risk

    p = np.asarray(prior, dtype=np.float64)
    k = p.shape[0]
    a = np.asarray(a, dtype=np.float64).reshape(-1)
    if a.shape[0] == k:
        fn = linear_risk
    elif a.shape[0] == k - 1:
        fn = symmetric_linear_risk
    else:
        raise ValueError(f"a must have {k} entries (eq. 7) or {k - 1} (symmetric loss, eq. 14), got {a.shape[0]}")
    zero_R, zero_u = np.zeros((k, k)), np.zeros(k)
    alpha = np.zeros((k, k))
    beta = np.zeros(k)
    for i in range(k):
        for j in range(k):
            unit = zero_R.copy()
            unit[i, j] = 1.0
            alpha[i, j] = fn(unit, zero_u, p, a)
        unit_u = zero_u.copy()
        unit_u[i] = 1.0
        beta[i] = fn(zero_R, unit_u, p, a)
    return alpha, beta


def _layout(n_per_class, n_unlabeled):
    return sum(n_per_class) + (0 if n_unlabeled is None else n_unlabeled)


def _trial_risks(sampler, u, n_per_class, prior, n_unlabeled, k):
    """R̂ (T, k, k) and R̂_U (T, k) (or None) from a (T, D) block of uniforms (layout in module doc)."""
    T = u.shape[0]
    R = torch.empty((T, k, k), dtype=_DTYPE)
    col = 0
    for m, n_m in enumerate(n_per_class):  # loop over classes, not trials
        R[:, m, :] = sampler.labeled(m, u[:, col : col + n_m]).mean(dim=1)
        col += n_m
    if n_unlabeled is None:
        return R, None
    return R, sampler.unlabeled(prior, u[:, col : col + n_unlabeled]).mean(dim=1)


def _setup(sampler, prior, n_per_class, n_unlabeled, trials, seed):
    k = sampler.num_classes
    p = check_prior(prior, k)
    n = check_n_per_class(n_per_class, k)
    n_u = check_n_unlabeled(n_unlabeled)
    trials = check_count(trials, "trials", allow_zero=False)
    seed = check_seed(seed)
    return k, p, n, n_u, trials, seed


def resample_risks(sampler, prior, n_per_class, n_unlabeled, *, trials, seed, chunk_size=None):
    """Draw ``trials`` independent data sets; return (R̂ (T, k, k), R̂_U (T, k)) as float64 tensors.

    Class m contributes ``n_per_class[m]`` labeled draws; the ``n_unlabeled`` unlabeled draws come i.i.d.
    from the mixture with class probabilities ``prior`` (so the number per class varies between trials).
    ``n_unlabeled=None`` (or ``math.inf``) means n_U → ∞: R̂_U is then the exact R_U of
    ``sampler.population()`` in every trial. ``chunk_size`` trials are drawn at a time (default: as many
    as keep one chunk's loss tensor near 4 M numbers); the result does not depend on it.
    """
    k, p, n, n_u, trials, seed = _setup(sampler, prior, n_per_class, n_unlabeled, trials, seed)
    D = _layout(n, n_u)
    chunk = _chunk_size(chunk_size, D, k)
    gen = torch.Generator().manual_seed(seed)
    Rs, Rus = [], []
    for start in range(0, trials, chunk):
        u = torch.rand((min(chunk, trials - start), D), generator=gen, dtype=_DTYPE)
        R, R_u = _trial_risks(sampler, u, n, p, n_u, k)
        Rs.append(R)
        Rus.append(R_u)
    R = torch.cat(Rs)
    if n_u is None:
        R_u = torch.as_tensor(sampler.population().unlabeled_risks(p), dtype=_DTYPE).expand(trials, k).clone()
    else:
        R_u = torch.cat(Rus)
    return R, R_u


def _chunk_size(chunk_size, D, k):
    if chunk_size is None:
        return max(1, (1 << 22) // max(1, D * k))
    return check_count(chunk_size, "chunk_size", allow_zero=False)


def _check_estimators(estimators, k):
    if not isinstance(estimators, dict) or not estimators:
        raise TypeError("estimators must be a non-empty dict {name: a}")
    out = {}
    for name, a in estimators.items():
        a = np.asarray(a, dtype=np.float64).reshape(-1)
        if a.shape[0] not in (k, k - 1) or not np.isfinite(a).all():
            raise ValueError(
                f"estimators[{name!r}] must be a finite vector of {k} or {k - 1} entries, got {a.tolist()}"
            )
        out[name] = a
    return out


def resample_estimates(sampler, prior, n_per_class, n_unlabeled, estimators, *, trials, seed, chunk_size=None):
    """Values of several R̂_lin^a over the same ``trials`` resamples: ``{name: (T,) numpy array}``.

    ``estimators`` maps a name to ``a``: k entries for eq. (7) (:func:`sslkit.risk.linear_risk`, any
    loss), k - 1 entries for eq. (14) (:func:`sslkit.risk.symmetric_linear_risk`, symmetric loss). All
    estimators see the same draws (common random numbers), which makes their variance ratios precise.
    """
    k, p, n, n_u, trials, seed = _setup(sampler, prior, n_per_class, n_unlabeled, trials, seed)
    estimators = _check_estimators(estimators, k)
    coef = {
        name: [torch.as_tensor(c, dtype=_DTYPE) for c in linear_coefficients(p, a)] for name, a in estimators.items()
    }
    R, R_u = resample_risks(sampler, p, n, n_u, trials=trials, seed=seed, chunk_size=chunk_size)
    return {name: (torch.einsum("tij,ij->t", R, alpha) + R_u @ beta).numpy() for name, (alpha, beta) in coef.items()}


def naive_resample_estimates(sampler, prior, n_per_class, n_unlabeled, estimators, *, trials, seed):
    """The straightforward reference for :func:`resample_estimates`: one Python iteration per trial,
    drawing that trial's ``torch.rand(D)`` and calling :func:`sslkit.risk.component_risks`,
    :func:`~sslkit.risk.unlabeled_risks` and :func:`~sslkit.risk.linear_risk` (or the symmetric version)
    on it. Same seed -> same random numbers -> the same estimates (tested). Slow; used by tests and the
    Figure 1 benchmark only."""
    from sslkit.risk import component_risks, linear_risk, symmetric_linear_risk, unlabeled_risks

    k, p, n, n_u, trials, seed = _setup(sampler, prior, n_per_class, n_unlabeled, trials, seed)
    estimators = _check_estimators(estimators, k)
    D = _layout(n, n_u)
    gen = torch.Generator().manual_seed(seed)
    y_l = torch.arange(k).repeat_interleave(torch.as_tensor(n))
    R_u_exact = None if n_u is not None else torch.as_tensor(sampler.population().unlabeled_risks(p), dtype=_DTYPE)
    prior_t = torch.as_tensor(p, dtype=_DTYPE)
    out = {name: np.empty(trials) for name in estimators}
    n_l = sum(n)
    for t in range(trials):
        u = torch.rand(D, generator=gen, dtype=_DTYPE)
        losses_l = torch.cat(
            [
                sampler.labeled(m, u[start : start + n_m])
                for m, (start, n_m) in enumerate(zip(np.cumsum([0] + n[:-1]), n))
            ]
        )
        R = component_risks(losses_l, y_l, k)
        R_u = R_u_exact if n_u is None else unlabeled_risks(sampler.unlabeled(p, u[n_l:]))
        for name, a in estimators.items():
            fn = linear_risk if a.shape[0] == k else symmetric_linear_risk
            out[name][t] = float(fn(R, R_u, prior_t, torch.as_tensor(a, dtype=_DTYPE)))
    return out


# ------------------------------------------------------------------------------------------ statistics
def mean_with_se(x):
    """Sample mean and its standard error sd/sqrt(T)."""
    x = np.asarray(x, dtype=np.float64)
    return float(x.mean()), float(x.std(ddof=1) / math.sqrt(x.size))


def variance_with_se(x):
    """Sample variance (divisor T - 1) and its standard error.

    The SE is the delta-method one, sd((x - x̄)²)/sqrt(T), which uses the sample fourth moment instead of
    assuming normality (for Gaussian x it is ≈ var·sqrt(2/T), the textbook value).
    """
    x = np.asarray(x, dtype=np.float64)
    d2 = (x - x.mean()) ** 2
    return float(x.var(ddof=1)), float(d2.std(ddof=1) / math.sqrt(x.size))


def variance_ratio(x, y):
    """Var(x)/Var(y) over paired trials and its delta-method standard error.

    With common random numbers x and y are correlated, which the influence function
    (d_x² - v_x)/v_y - v_x (d_y² - v_y)/v_y² accounts for; SE = sd(influence)/sqrt(T).
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if x.shape != y.shape:
        raise ValueError(f"x and y must be paired trials of the same shape, got {x.shape} and {y.shape}")
    dx2, dy2 = (x - x.mean()) ** 2, (y - y.mean()) ** 2
    vx, vy = dx2.mean(), dy2.mean()
    infl = (dx2 - vx) / vy - vx * (dy2 - vy) / vy**2
    return float(vx / vy), float(infl.std(ddof=1) / math.sqrt(x.size))


# ------------------------------------------------------------------------------------------ theory
def theoretical_variance(population, prior, n_per_class, n_unlabeled, a) -> float:
    """Var[R̂_lin^a] from :mod:`sslkit.risk`: Thm 2 (``a`` with k entries, any loss) or Thm 7 (k - 1
    entries, symmetric loss), plus the finite-n_U term when ``n_unlabeled`` is not None."""
    from sslkit.risk import estimator_variance, symmetric_estimator_variance

    k = population.num_classes
    p = check_prior(prior, k)
    n = np.asarray(check_n_per_class(n_per_class, k), dtype=np.float64)
    n_u = check_n_unlabeled(n_unlabeled)
    a = np.asarray(a, dtype=np.float64).reshape(-1)
    C = population.covariances
    extra = {} if n_u is None else {"n_unlabeled": n_u, "unlabeled_covariance": population.unlabeled_covariance(p)}
    if a.shape[0] == k:
        return float(estimator_variance(a, C, p, n, **extra))
    if a.shape[0] == k - 1:
        return float(symmetric_estimator_variance(a, C, p, n, **extra))
    raise ValueError(f"a must have {k} or {k - 1} entries, got {a.shape[0]}")
