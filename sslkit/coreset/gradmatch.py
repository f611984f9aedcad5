"""GradMatch for SSL, per batch (paper C App. E, eq. (51)-(52); Killamsetty et al. 2021; CORDS ``GradMatchStrategy``).

GradMatch matches the full unlabeled gradient by a non-negative weighted sum of a few elements' gradients,

    min_{S, w >= 0}  || sum_i G_i - sum_{j in S} w_j G_j ||^2 + lam ||w||^2,      |S| <= k      (eq. (51)-(52))

solved by non-negative orthogonal matching pursuit (OMP) with L2 regularisation ``lam`` (CORDS' SSL
GradMatch uses ``lam = 0.5``): at each step the element most positively correlated with the residual
joins the support, then all weights of the support are re-fitted by non-negative ridge least squares
(:func:`nonnegative_ridge`, an exact Lawson-Hanson active-set solver, where CORDS solves the ridge system
and drops negative weights one at a time); elements whose weight drops to zero leave the support and may
come back later (each such step strictly lowers the objective, so supports never repeat; the loop is
capped at ``3 k + 10`` steps). OMP stops early when the relative residual falls below ``tol`` or no
element correlates positively (then the weights are optimal over all elements); the rest of the budget
is then filled uniformly at random with weight 1 (CORDS), from a seeded CPU ``torch.Generator``.

Per batch (as paper C runs it): the elements are the mini-batch mean gradients and the target is their
sum (CORDS ``PerBatch``, ``valid=False``); ``ceil(k / B)`` batches are chosen and each index of a chosen batch
gets its batch's weight. ``batch_size=1`` is the per-sample version (eq. (51)).
"""

from __future__ import annotations

import time

import torch

from sslkit._checks import (
    check_batch_size,
    check_budget,
    check_count,
    check_features,
    check_gradients,
    check_positive,
    check_seed,
)
from sslkit.coreset.batches import batch_means, expand_batches
from sslkit.coreset.strategy import CoresetStrategy, SelectionInputs, require

__all__ = ["GradMatch", "nonnegative_ridge", "omp_nonnegative"]


def _solve(Q: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
    return torch.linalg.lstsq(Q, c[:, None], driver="gelsd").solution[:, 0]


def nonnegative_ridge(A, b, lam: float = 0.0, *, max_iter: int | None = None) -> torch.Tensor:
    """``argmin_{w >= 0} ||A^T w - b||^2 + lam ||w||^2`` for ``A`` (``m x d``: one row per atom), ``b`` (``d``).

    Lawson-Hanson active-set method on the normal equations ``Q = A A^T + lam I``, ``c = A b`` (CPU,
    float64: the systems are ``m x m`` with ``m <= k / B``). Exact up to rounding; equals
    ``scipy.optimize.nnls`` on the augmented system ``[A^T; sqrt(lam) I] w = [b; 0]``.
    """
    lam = check_positive(lam, "lam (the ridge coefficient)", allow_zero=True)
    max_iter = None if max_iter is None else check_count(max_iter, "max_iter", allow_zero=False)
    A = torch.as_tensor(A).detach().to("cpu", torch.float64)
    b = torch.as_tensor(b).detach().to("cpu", torch.float64).reshape(-1)
    if A.ndim != 2 or b.shape[0] != A.shape[1]:
        raise ValueError(f"A must be m x d and b must have d entries, got shapes {tuple(A.shape)} and {tuple(b.shape)}")
    m = A.shape[0]
    Q = A @ A.T + lam * torch.eye(m, dtype=torch.float64)
    c = A @ b
    w = torch.zeros(m, dtype=torch.float64)
    passive = torch.zeros(m, dtype=torch.bool)
    tol = 1e-12 * max(1.0, float(c.abs().max())) if m else 0.0
    for _ in range(max_iter or 3 * m + 10):
        grad = c - Q @ w  # minus the gradient of 1/2 w'Qw - c'w
        grad[passive] = -torch.inf
        if passive.all() or float(grad.max()) <= tol:
            break
        passive[int(torch.argmax(grad))] = True
        while True:
            s = torch.zeros(m, dtype=torch.float64)
            p = torch.nonzero(passive).flatten()
            s[p] = _solve(Q[p][:, p], c[p])
            if bool((s[p] > 0).all()):
                w = s
                break
            neg = p[s[p] <= 0]  # step back to the boundary, drop what hits zero
            step = float((w[neg] / (w[neg] - s[neg]).clamp_min(1e-300)).min())
            w = w + step * (s - w)
            passive &= w > 1e-15
            w[~passive] = 0.0
    return w


def omp_nonnegative(A, b, n_atoms: int, *, lam: float = 0.5, tol: float = 1e-100):
    """Non-negative regularised OMP (module docstring). ``A``: ``m x d`` atoms (any device), ``b``: ``d``.

    Returns ``(support int64, weights float64)`` on the CPU, in the order atoms joined the support (all
    weights positive; at most ``n_atoms`` of them, fewer when OMP stops early).
    """
    n_atoms = check_count(n_atoms, "n_atoms", allow_zero=False)
    lam = check_positive(lam, "lam (the ridge coefficient)", allow_zero=True)
    tol = check_positive(tol, "tol", allow_zero=True)
    A = check_features(A, "A (the atoms)")
    b = torch.as_tensor(b, dtype=A.dtype, device=A.device).reshape(-1)
    if b.shape[0] != A.shape[1]:
        raise ValueError(f"b has {b.shape[0]} entries but the atoms have width {A.shape[1]}")
    support: list[int] = []
    w = torch.zeros(0, dtype=torch.float64)
    resid = b.clone()
    norm_b = float(b.norm())
    for _ in range(3 * n_atoms + 10):
        if len(support) == n_atoms or norm_b == 0.0 or float(resid.norm()) <= tol * norm_b:
            break
        corr = A @ resid
        if support:
            corr[support] = -torch.inf
        j = int(torch.argmax(corr))
        if float(corr[j]) <= 0.0:  # KKT: no atom can lower the objective any more
            break
        support.append(j)
        w = nonnegative_ridge(A[support], b, lam)
        keep = w > 0
        support = [s for s, kept in zip(support, keep.tolist()) if kept]
        w = w[keep]
        resid = b - (A[support].T.to(torch.float64) @ w.to(A.device)).to(A.dtype)
    return torch.tensor(support, dtype=torch.long), w


class GradMatch(CoresetStrategy):
    """Per-batch GradMatch: ``GradMatch(k, batch_size=50, lam=0.5, tol=1e-100, seed=0).fit(unlabeled_grads)``.

    ``unlabeled_grads``: ``N x d`` per-sample gradients (rows in the unlabeled set's order); ``target``
    (optional, ``d``): the gradient to match, default the sum of the batch-mean gradients (eq. (52)).
    ``lam``: the ridge coefficient (>= 0), ``tol``: OMP's relative-residual stopping tolerance (CORDS' SSL
    configs: 1e-100, i.e. run to the budget).

    Attributes after ``fit``: ``batches_`` (OMP's picks in order, then the random fill), ``batch_weights_``
    (float32; 1 for the fill), ``n_omp_`` (how many OMP chose), ``residual_`` (relative residual of OMP's
    fit), ``indices_`` / ``weights_`` (expanded to samples), ``seconds_``, ``timings_``.
    """

    def __init__(self, k, *, batch_size: int = 50, lam: float = 0.5, tol: float = 1e-100, seed=0):
        self.k = check_count(k, "k", allow_zero=False)
        self.batch_size = check_batch_size(batch_size)
        self.lam = check_positive(lam, "lam", allow_zero=True)
        self.tol = check_positive(tol, "tol", allow_zero=True)
        self.seed = check_seed(seed)

    def fit(self, unlabeled_grads, target=None):
        t0 = time.perf_counter()
        G = check_gradients(unlabeled_grads)
        n = G.shape[0]
        check_budget(self.k, n)
        X = batch_means(G, self.batch_size)
        nb = X.shape[0]
        kb = check_budget(-(-self.k // self.batch_size), nb, "ceil(k / batch_size)", "batches")
        if target is None:
            b = X.sum(dim=0)
        else:
            b = check_gradients(torch.as_tensor(target).reshape(1, -1), "target", device=G.device, dtype=G.dtype)[0]
            if b.shape[0] != G.shape[1]:
                raise ValueError(f"target has {b.shape[0]} entries but the gradients have width {G.shape[1]}")
        support, w = omp_nonnegative(X, b, kb, lam=self.lam, tol=self.tol)
        fit = (X[support.to(X.device)].T.to(torch.float64) @ w.to(X.device)) if len(support) else 0.0
        self.residual_ = float((b.to(torch.float64) - fit).norm() / b.norm().clamp_min(1e-300))
        self.n_omp_ = len(support)
        batches, weights = support, w.to(torch.float32)
        if len(support) < kb:  # fill up at random with weight 1 (CORDS)
            gen = torch.Generator().manual_seed(self.seed)
            rest = torch.ones(nb, dtype=torch.bool)
            rest[support] = False
            free = torch.nonzero(rest).flatten()
            extra = free[torch.randperm(free.numel(), generator=gen)[: kb - len(support)]]
            batches = torch.cat([support, extra])
            weights = torch.cat([weights, torch.ones(extra.numel())])
        self.batches_, self.batch_weights_ = batches, weights
        self.timings_ = {"total": time.perf_counter() - t0}
        return self._set_result(*expand_batches(batches, weights, n, self.batch_size), t0)

    def fit_inputs(self, inputs: SelectionInputs):
        """:meth:`fit` on ``inputs.gradients`` with the seed ``seed + inputs.draw`` (the random fill)."""
        require(inputs, "GradMatch", "gradients")
        return self.with_params(seed=self.seed + inputs.draw).fit(inputs.gradients)

    def __repr__(self):
        return f"GradMatch(k={self.k}, batch_size={self.batch_size}, lam={self.lam}, tol={self.tol}, seed={self.seed})"
