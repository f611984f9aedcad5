"""Empirical component risks and the linear (risk-rewrite) estimator of paper A.

Notation (paper A §2): ``k`` classes, class prior ``theta`` (k,), a loss matrix ``L`` of shape
(n, k) with ``L[s, j] = l(g(x_s), j)`` -- the loss of sample ``s`` evaluated at *every* label ``j``.
Labels are 0-based here: paper A's class ``i`` is index ``i - 1``.

Every function accepts numpy arrays or torch tensors (any device) and returns the same kind. If any
array argument is a torch tensor, the others are converted to tensors on its device; torch results
keep their autograd graph, so a training loss can back-propagate through :func:`component_risks`,
:func:`unlabeled_risks` and :func:`linear_risk`. Loss matrices are always checked for NaN / inf; the
(k, k) risk inputs of :func:`partial_risks` / :func:`linear_risk` are checked only when they are numpy
(for tensors only shapes are checked, so a training step does not wait on a device synchronisation;
a NaN there simply propagates to the result).
"""

from __future__ import annotations

import numbers

import numpy as np
import torch

__all__ = [
    "component_risks",
    "unlabeled_risks",
    "partial_risks",
    "linear_risk",
    "symmetric_linear_risk",
    "symmetric_reduce_a",
]

PRIOR_ATOL = 1e-6


# ----------------------------------------------------------------------------- backend helpers
def _is_torch(*xs) -> bool:
    return any(isinstance(x, torch.Tensor) for x in xs)


def tensor_template(*xs):
    """The first torch tensor among ``xs`` (it decides device and dtype), else ``None``."""
    for x in xs:
        if isinstance(x, torch.Tensor):
            return x
    return None


def float_array(x, name, like=None, dtype=None):
    """``x`` as a floating array of the backend of ``like`` (torch if ``like`` is a tensor)."""
    if isinstance(x, (str, bytes)) or x is None:
        raise TypeError(f"{name} must be an array of numbers, got {x!r}")
    if like is not None:
        if isinstance(x, torch.Tensor):
            t = x.to(device=like.device)
            if not t.is_floating_point():
                t = t.to(dtype or (like.dtype if like.is_floating_point() else torch.float64))
            elif dtype is not None:
                t = t.to(dtype)
            return t
        try:
            arr = np.asarray(x, dtype=np.float64)
        except (TypeError, ValueError) as err:
            raise TypeError(f"{name} must be an array of numbers, got {x!r}") from err
        target = dtype or (like.dtype if like.is_floating_point() else torch.float64)
        return torch.as_tensor(arr, dtype=target, device=like.device)
    try:
        return np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise TypeError(f"{name} must be an array of numbers, got {x!r}") from err


def _all_finite(x) -> bool:
    if isinstance(x, torch.Tensor):
        return bool(torch.isfinite(x.detach()).all())
    return bool(np.isfinite(x).all())


def _check_finite(x, name):
    if not _all_finite(x):
        raise ValueError(f"{name} contains NaN or infinite values")


def check_prior(prior, like=None, k=None, name="prior"):
    """Validate a class prior: 1-D, finite, every entry > 0, sums to 1 (within 1e-6)."""
    p = float_array(prior, name, like)
    if p.ndim != 1 or p.shape[0] < 2:
        raise ValueError(f"{name} must be a 1-D array with at least 2 entries, got shape {tuple(p.shape)}")
    if k is not None and p.shape[0] != k:
        raise ValueError(f"{name} has {p.shape[0]} entries but there are {k} classes")
    _check_finite(p, name)
    pn = p.detach().cpu().numpy() if isinstance(p, torch.Tensor) else p
    if (pn <= 0).any():
        raise ValueError(f"{name} must have strictly positive entries, got {pn.tolist()}")
    if abs(float(pn.sum()) - 1.0) > PRIOR_ATOL:
        raise ValueError(f"{name} must sum to 1, got sum {float(pn.sum())!r}")
    return p


def check_num_classes(num_classes):
    if isinstance(num_classes, (bool, np.bool_)) or not isinstance(num_classes, numbers.Integral):
        raise TypeError(f"num_classes must be an integer, got {num_classes!r}")
    if num_classes < 2:
        raise ValueError(f"num_classes must be at least 2, got {num_classes}")
    return int(num_classes)


def check_losses(losses, name="losses", k=None):
    if isinstance(losses, torch.Tensor):
        L = losses if losses.is_floating_point() else losses.to(torch.float64)
    else:
        L = float_array(losses, name)
    if L.ndim != 2:
        raise ValueError(f"{name} must be a 2-D (n_samples, num_classes) matrix, got shape {tuple(L.shape)}")
    if k is not None and L.shape[1] != k:
        raise ValueError(f"{name} has {L.shape[1]} columns but num_classes is {k}")
    _check_finite(L, name)
    return L


def check_labels(y, n, k, like=None):
    if isinstance(y, torch.Tensor):
        yy = y.detach()
        if yy.is_floating_point() or yy.dtype == torch.bool:
            raise TypeError(f"y must hold integer class labels, got dtype {yy.dtype}")
        ynp = yy.cpu().numpy()
    else:
        ynp = np.asarray(y)
        if ynp.dtype.kind not in "iu":
            raise TypeError(f"y must hold integer class labels, got dtype {ynp.dtype}")
    if ynp.ndim != 1:
        raise ValueError(f"y must be 1-D, got shape {ynp.shape}")
    if ynp.shape[0] != n:
        raise ValueError(f"y has {ynp.shape[0]} labels but losses has {n} rows")
    if n and (ynp.min() < 0 or ynp.max() >= k):
        raise ValueError(f"y must contain labels in [0, {k}), got range [{ynp.min()}, {ynp.max()}]")
    if like is not None:
        return torch.as_tensor(ynp, dtype=torch.long, device=like.device), ynp
    return ynp.astype(np.int64), ynp


def _check_square(R, k, name):
    if R.ndim != 2 or R.shape[0] != R.shape[1]:
        raise ValueError(f"{name} must be a square (k, k) matrix, got shape {tuple(R.shape)}")
    if k is not None and R.shape[0] != k:
        raise ValueError(f"{name} has shape {tuple(R.shape)} but prior has {k} entries")


def _check_vector(v, k, name):
    if v.ndim != 1 or v.shape[0] != k:
        raise ValueError(f"{name} must have shape ({k},), got {tuple(v.shape)}")


def _scalar_out(x, torch_mode):
    return x if torch_mode else np.float64(x)


# ----------------------------------------------------------------------------- component risks
def component_risks(losses, y, num_classes, *, normalizer=None):
    """Empirical component risks R̂_ij (paper A eq. 1), shape (k, k).

    ``R̂[i, j]`` = mean of ``losses[s, j]`` over the labeled samples ``s`` of class ``i`` -- the
    empirical version of ``R_ij(g) = E_{x ~ p_i}[l(g(x), j)]``.

    Parameters
    ----------
    losses : (n, k) array or tensor, ``losses[s, j] = l(g(x_s), j)`` (see :func:`sslkit.risk.loss_matrix`).
    y : (n,) integer labels in ``[0, k)``.
    num_classes : k.
    normalizer : optional (k,) positive array. If given, ``R̂[i, j] = sum_{s: y_s = i} losses[s, j] /
        normalizer[i]`` instead of the class mean. With ``normalizer[i] = n_i * B / N_L`` (``n_i`` the
        class count of the *full* labeled set, ``B`` the batch size, ``N_L`` the labeled-set size) this is
        the Horvitz-Thompson estimate for a uniformly drawn mini-batch: unbiased for the full-set mean and
        defined even when a class is absent from the batch (its row is then 0).

    Raises ``ValueError`` if a class has no labeled sample (without ``normalizer``), on shape mismatch,
    labels out of range, or NaN / infinite losses.
    """
    k = check_num_classes(num_classes)
    L = check_losses(losses, k=k)
    torch_mode = isinstance(L, torch.Tensor)
    yy, ynp = check_labels(y, L.shape[0], k, like=L if torch_mode else None)
    counts = np.bincount(ynp.astype(np.int64), minlength=k) if ynp.size else np.zeros(k, np.int64)
    if torch_mode:  # (k, n) indicator built contiguous: a transposed (n, k) operand is very slow on CPU
        member = (yy[None, :] == torch.arange(k, device=yy.device)[:, None]).to(L.dtype)
    else:
        member = (yy[None, :] == np.arange(k)[:, None]).astype(np.float64)
    sums = member @ L  # (k, k): row i = sum of loss rows of class i
    if normalizer is None:
        empty = np.flatnonzero(counts == 0)
        if empty.size:
            raise ValueError(
                f"class(es) {empty.tolist()} have no labeled sample; R_ij needs at least one sample "
                "per class (pass normalizer= for a Horvitz-Thompson batch estimate)"
            )
        denom = float_array(counts, "counts", L if torch_mode else None, dtype=L.dtype if torch_mode else None)
    else:
        denom = float_array(normalizer, "normalizer", L if torch_mode else None, dtype=L.dtype if torch_mode else None)
        _check_vector(denom, k, "normalizer")
        _check_finite(denom, "normalizer")
        dn = denom.detach().cpu().numpy() if torch_mode else denom
        if (dn <= 0).any():
            raise ValueError(f"normalizer must be strictly positive, got {dn.tolist()}")
    return sums / denom[:, None]


def unlabeled_risks(losses_u):
    """Empirical unlabeled risks R̂_Uj (paper A eq. 2): column means of the (n_U, k) loss matrix."""
    L = check_losses(losses_u, name="losses_u")
    if L.shape[0] == 0:
        raise ValueError("losses_u has no rows; R_Uj needs at least one unlabeled sample")
    return L.mean(0) if isinstance(L, torch.Tensor) else L.mean(axis=0)


def _prepare(R, R_u, prior, a=None, a_len=None):
    like = tensor_template(R, R_u, a, prior)
    dtype = like.dtype if like is not None and like.is_floating_point() else None
    Rm = float_array(R, "R", like, dtype)
    _check_square(Rm, None, "R")
    k = Rm.shape[0]
    Ru = float_array(R_u, "R_u", like, dtype)
    _check_vector(Ru, k, "R_u")
    p = check_prior(prior, like, k)
    if like is not None:
        p = p.to(Rm.dtype)
    out = [Rm, Ru, p]
    if a is not None:
        av = float_array(a, "a", like, dtype)
        n_a = k if a_len is None else a_len
        if av.ndim != 1 or av.shape[0] != n_a:
            raise ValueError(f"a must have shape ({n_a},) for {k} classes, got {tuple(av.shape)}")
        out.append(av)
    if like is None:  # tensors: shapes only, so a training step never waits on a device sync
        for name, v in zip(("R", "R_u", "a"), out[:2] + out[3:]):
            _check_finite(v, name)
    return like is not None, out


def _diag(M):
    return torch.diagonal(M) if isinstance(M, torch.Tensor) else np.diag(M)


def partial_risks(R, R_u, prior):
    """Partial risks Δ_j = R̂_Uj - Σ_{i≠j} θ_i R̂_ij (paper A §5.2), shape (k,).

    Δ_j is a risk-rewriting estimate of θ_j R_jj (it uses p = Σ_i θ_i p_i); it can be negative for a
    flexible model, which is what the non-negative correction guards against.
    """
    _, (Rm, Ru, p) = _prepare(R, R_u, prior)
    return Ru - (p @ Rm) + p * _diag(Rm)


def linear_risk(R, R_u, prior, a, nonnegative=False):
    """The linear risk estimator R̂_lin^a (paper A Thm 1, eq. 7, in the §5.2 form).

    ``R̂_lin^a = Σ_j [ a_j R̂_jj + (1 - a_j/θ_j) Δ_j ]`` with Δ from :func:`partial_risks`. This equals
    eq. (7): ``Σ_i θ_i R̂_ii + Σ_{i,j} θ_i (a_j/θ_j - 1) R̂_ij - Σ_j (a_j/θ_j - 1) R̂_Uj``, and is
    unbiased for R(g) for every ``a`` in R^k. ``a = θ`` is the supervised (PN) risk.

    nonnegative : if True, each Δ_j is replaced by max(0, Δ_j) (§5.2, "Δ^nn"). The value is then the
        nn-corrected risk; its torch gradient is the plain gradient of that expression (zero through a
        clipped Δ_j). Training-time gradient rules such as nnPU's "step on -γΔ" are the algorithm's job.
    """
    torch_mode, (Rm, Ru, p, av) = _prepare(R, R_u, prior, a)
    delta = Ru - (p @ Rm) + p * _diag(Rm)
    if nonnegative:
        delta = torch.clamp(delta, min=0) if torch_mode else np.maximum(delta, 0.0)
    value = (av * _diag(Rm)).sum() + ((1 - av / p) * delta).sum()
    return _scalar_out(value, torch_mode)


def symmetric_linear_risk(R, R_u, prior, a, nonnegative=False):
    """The symmetric-loss linear estimator of paper A Thm 6 (eq. 14), ``a`` with k - 1 entries.

    ``R̂ = Σ_i θ_i R̂_ii + Σ_i Σ_{j<k} θ_i (a_j/θ_j - 1) R̂_ij - Σ_{j<k} (a_j/θ_j - 1) R̂_Uj``,
    which is eq. (7) with ``a_k = θ_k``; it is computed as ``linear_risk(R, R_u, prior, [a, θ_k])``.
    For a symmetric loss (Σ_j l(g(x), j) = α) every member of the eq. (7) family equals one of these:
    see :func:`symmetric_reduce_a`.
    """
    like = tensor_template(R, R_u, a, prior)
    p = check_prior(prior, like)
    k = p.shape[0]
    av = float_array(a, "a", like)
    if av.ndim != 1 or av.shape[0] != k - 1:
        raise ValueError(
            f"a must have shape ({k - 1},) (k - 1 parameters, Thm 6) for {k} classes, got {tuple(av.shape)}"
        )
    if like is not None:
        full = torch.cat([av.to(p.dtype), p[-1:]])
    else:
        full = np.concatenate([av, p[-1:]])
    return linear_risk(R, R_u, prior, full, nonnegative=nonnegative)


def symmetric_reduce_a(a, prior):
    """Map a full parameter ``a`` (k,) to the k - 1 parameters of Thm 6 giving the same estimator.

    For a symmetric loss, R̂_ik = α - Σ_{j<k} R̂_ij and R̂_Uk = α - Σ_{j<k} R̂_Uj hold sample by sample, and
    substituting them into eq. (7) gives eq. (14) with ``a'_j = a_j - θ_j (a_k/θ_k - 1)`` for j < k.
    Hence ``linear_risk(R, R_u, θ, a) == symmetric_linear_risk(R, R_u, θ, symmetric_reduce_a(a, θ))``
    exactly (not only in expectation) when the loss is symmetric.
    """
    like = tensor_template(a, prior)
    p = check_prior(prior, like)
    k = p.shape[0]
    av = float_array(a, "a", like, p.dtype if like is not None else None)
    _check_vector(av, k, "a")
    return av[:-1] - p[:-1] * (av[-1] / p[-1] - 1)
