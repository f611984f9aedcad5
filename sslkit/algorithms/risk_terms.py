"""The pieces of paper A's risk on a minibatch: the Horvitz-Thompson component risks of a batch
(:func:`batch_component_risks`, the module docstring of :mod:`sslkit.algorithms.risk_rewrite`), the prior and
class-count checks, and the per-class weights of the PN risk (``w_y = θ_y / n_y``)."""

from __future__ import annotations

import math
import numbers

import numpy as np
import torch

from sslkit.algorithms.base import FitContext


def batch_component_risks(losses: torch.Tensor, y: torch.Tensor, n_per_class) -> torch.Tensor:
    """Horvitz–Thompson mini-batch estimate of the component risks R̂_ij (paper A eq. 1), shape (k, k).

    ``losses`` ``(|B|, k)`` is the loss matrix of a labeled batch, ``y`` ``(|B|,)`` its labels and ``n_per_class``
    (k,) the class counts of the *full* labeled set (n_L = their sum). Returns
    ``R[i, j] = Σ_{s in B, y_s = i} losses[s, j] * n_L / (|B| n_i)``, whose expectation over uniformly drawn
    batches of size ``|B|`` (without replacement) is :func:`sslkit.risk.component_risks` of the full set. A
    class absent from the batch has a zero row. Gradients flow through ``losses``; no host synchronisation.
    """
    if losses.dim() != 2:
        raise ValueError(f"losses must be a (batch, k) matrix, got shape {tuple(losses.shape)}")
    k = losses.shape[1]
    n = torch.as_tensor(n_per_class, dtype=losses.dtype, device=losses.device)
    if n.shape != (k,):
        raise ValueError(f"n_per_class must have {k} entries (one per class), got shape {tuple(n.shape)}")
    if y.shape != (losses.shape[0],):
        raise ValueError(f"y must have shape ({losses.shape[0]},), got {tuple(y.shape)}")
    weights = n.sum() / (losses.shape[0] * n)  # (k,): n_L / (|B| n_i)
    onehot = torch.nn.functional.one_hot(y, k).to(losses.dtype)
    return (onehot * weights).T @ losses


def check_prior_vector(prior) -> np.ndarray:
    try:
        p = np.asarray(prior, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"prior must be a sequence of class probabilities, got {prior!r}") from exc
    if p.ndim != 1 or p.shape[0] < 2:
        raise ValueError(f"prior must be a 1-D array with at least 2 entries, got shape {p.shape}")
    if not np.isfinite(p).all() or (p <= 0).any():
        raise ValueError(f"prior must have finite, strictly positive entries, got {p.tolist()}")
    if abs(p.sum() - 1.0) > 1e-6:
        raise ValueError(f"prior must sum to 1, got sum {p.sum()!r}")
    return p


def check_class_counts(n, k: int) -> np.ndarray:
    arr = np.asarray(n)
    if arr.dtype.kind not in "iu" or arr.shape != (k,):
        raise ValueError(f"n_per_class must be {k} integer class counts, got {n!r}")
    if (arr <= 0).any():
        missing = np.flatnonzero(arr <= 0).tolist()
        raise ValueError(
            f"the labeled set has no sample of class(es) {missing}; the risk rewrite needs "
            "every class in the labeled set (R_ij is a mean over class i)"
        )
    return arr.astype(np.int64)


def prior_class_weights(prior, y_l, num_classes: int, device=None) -> torch.Tensor:
    """Per-class weights ``w_j = θ_j n_L / n_j`` that turn a batch mean of cross-entropy into paper A's PN risk.

    ``y_l`` are the labels of the **full** labeled set (n_j of class j, n_L in all). Weighting each sample
    of a uniformly drawn labeled batch B by ``w_{y_s}`` gives ``(1/|B|) Σ_s w_{y_s} CE_s``, the
    Horvitz–Thompson estimate of ``Σ_j θ_j R̂_jj`` (eq. 3 with a = θ; the diagonal of
    :func:`batch_component_risks` weighted by θ). Used by PL / VAT with ``prior=``
    (:func:`sslkit.algorithms.base.supervised_ce`). Errors: a prior that is not a distribution over
    ``num_classes`` classes, labels outside ``[0, num_classes)``, a class with no labeled sample.
    """
    p = check_prior_vector(prior)
    if p.shape[0] != num_classes:
        raise ValueError(f"prior has {p.shape[0]} entries but there are {num_classes} classes")
    y = torch.as_tensor(y_l).detach().cpu().long()
    if y.dim() != 1 or y.numel() == 0:
        raise ValueError(f"y_l must be a non-empty 1-D label vector, got shape {tuple(y.shape)}")
    if int(y.min()) < 0 or int(y.max()) >= num_classes:
        raise ValueError(f"labels must lie in [0, {num_classes}), got min {int(y.min())}, max {int(y.max())}")
    counts = check_class_counts(np.bincount(y.numpy(), minlength=num_classes), num_classes)
    return torch.as_tensor(p * y.numel() / counts, dtype=torch.float32, device=device)


def optional_prior(prior):
    """None, or ``prior`` validated as a class prior (the ``prior=`` argument of PL / VAT; checked against the
    number of classes at setup by :func:`labeled_class_weights`)."""
    return None if prior is None else check_prior_vector(prior)


def labeled_class_weights(prior, ctx: FitContext) -> torch.Tensor | None:
    """:func:`prior_class_weights` of ``prior`` over the labels of the full labeled set ``ctx.data["y_l"]``
    (None when ``prior`` is None: plain cross-entropy)."""
    if prior is None:
        return None
    y_l = ctx.get("y_l")
    if y_l is None:
        raise ValueError(
            "prior=... needs the labels of the full labeled set: train with sslkit.engine.Trainer, "
            "or pass FitContext(..., data={'y_l': y_l}) to setup"
        )
    return prior_class_weights(prior, y_l, ctx.num_classes, ctx.device)


def positive_number(v, name: str) -> float:
    if isinstance(v, bool) or not isinstance(v, numbers.Real) or not math.isfinite(v) or v <= 0:
        raise ValueError(f"{name} must be a positive finite number, got {v!r}")
    return float(v)
