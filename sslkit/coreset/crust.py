"""CRUST (Mirzasoleiman, Cao & Leskovec, NeurIPS 2020, "Coresets for robust training of deep neural networks
against noisy labels") adapted to SSL as paper C's robust-SSL baseline (§4, F.3).

CRUST selects, for every class separately, a facility-location (CRAIG) coreset of the last-layer
gradients, with a per-class budget proportional to the class size, weights each medoid by the size of its
cluster, and trains on the coreset with mixup (Zhang et al. 2018). Paper C's SSL adaptation: the elements are
the unlabeled samples' gradients ``m_j ∇l_u(x_j, θ_t)`` (as for CRAIG, App. D) and the classes are the model's
hypothesized labels (pseudo-labels ``argmax_c f(x_j)_c``; "the hypothesized labels used for MixUP in the
earlier stages of training are noisy", §4); mixup mixes the chosen unlabeled samples
(:class:`sslkit.algorithms.CrustMixup`).

* :func:`proportional_budgets` -- ``k_c`` by largest remainders of ``k n_c / N`` (Hamilton): the budgets sum
  to ``k``, each within one of its exact share and at most ``n_c``.
* :class:`Crust` -- per class: :func:`~sslkit.coreset.craig_similarity` and
  :func:`~sslkit.coreset.facility_location` on that class's rows, weights = Voronoi cell sizes inside the
  class (ties to the earlier pick, as :class:`~sslkit.coreset.Craig`).
* :func:`mixup` -- ``x̃ = λ x + (1 - λ) x[π]``, ``λ ~ Beta(α, α)``, ``π`` a random permutation.
"""

from __future__ import annotations

import math
import numbers
import time

import torch

from sslkit._checks import check_budget, check_count, check_gradients, check_labels
from sslkit.coreset.craig import METRICS, craig_similarity, facility_location
from sslkit.coreset.strategy import CoresetStrategy, SelectionInputs, require

__all__ = ["Crust", "proportional_budgets", "mixup"]


def proportional_budgets(counts, k: int) -> torch.Tensor:
    """Per-class budgets ``k_c`` (int64) proportional to ``counts`` and summing to ``k``: the floors of
    ``k n_c / N`` plus one for the largest remainders (ties to the smaller class index), never above ``n_c``."""
    n = torch.as_tensor(counts).reshape(-1)
    if n.is_floating_point() or n.is_complex() or n.dtype == torch.bool:
        raise TypeError(f"counts must be integer class sizes, got dtype {n.dtype} (floats would be truncated)")
    n = n.to(torch.long)
    if n.numel() == 0 or bool((n < 0).any()):
        raise ValueError("counts must be a non-empty vector of non-negative class sizes")
    total = int(n.sum())
    k = check_budget(k, total, what="samples over all classes")
    exact = n.to(torch.float64) * k / total
    base = torch.floor(exact).to(torch.long)
    left = k - int(base.sum())
    frac = (exact - base).masked_fill(base >= n, -1.0)
    order = sorted(range(n.numel()), key=lambda c: (-float(frac[c]), c))
    for c in order[:left]:
        base[c] += 1
    return base


class Crust(CoresetStrategy):
    """``Crust(k, metric="sqeuclidean").fit(unlabeled_grads, classes)`` (module docstring).

    ``unlabeled_grads``: ``N x d`` rows; ``classes``: ``N`` (pseudo-)labels. Attributes after ``fit``:
    ``indices_`` (int64 numpy, class by class in increasing class order, each class in its pick order),
    ``weights_`` (float32 cluster sizes; they sum to ``N``), ``budgets_`` (per class), ``classes_`` (the class
    of each chosen index), ``seconds_``, ``timings_``. ``select(inputs)``: :meth:`fit` on ``inputs.gradients`` and
    ``inputs.pseudo_labels``.
    """

    needs = ("gradients", "pseudo_labels")

    def __init__(self, k, *, metric: str = "sqeuclidean"):
        self.k = check_count(k, "k", allow_zero=False)
        if metric not in METRICS:
            raise ValueError(f"metric must be one of {METRICS}, got {metric!r}")
        self.metric = metric

    def fit(self, unlabeled_grads, classes):
        t0 = time.perf_counter()
        G = check_gradients(unlabeled_grads)
        N = G.shape[0]
        check_budget(self.k, N)
        c = torch.as_tensor(classes) if not isinstance(classes, torch.Tensor) else classes
        if c.dim() != 1:
            raise ValueError(f"classes must be 1-D (one class per gradient row), got shape {tuple(c.shape)}")
        if c.dtype.is_floating_point or c.dtype == torch.bool:
            raise TypeError(f"classes must be integer class indices, got dtype {c.dtype}")
        n_classes = int(c.max()) + 1 if c.numel() else 1
        c = check_labels(c, N, n_classes, device=G.device)
        counts = torch.bincount(c, minlength=n_classes).cpu()
        budgets = proportional_budgets(counts, self.k)
        idx, wts, cls = [], [], []
        for k_c in range(n_classes):
            b = int(budgets[k_c])
            if b == 0:
                continue
            members = torch.nonzero(c == k_c).reshape(-1)
            S = craig_similarity(G[members], self.metric)
            order, _ = facility_location(S, b)
            order = order.to(S.device)
            cell = torch.argmax(S[:, order], dim=1)
            idx.append(members[order].cpu())
            wts.append(torch.bincount(cell.cpu(), minlength=b).to(torch.float32))
            cls.append(torch.full((b,), k_c, dtype=torch.long))
        self.classes_, self.budgets_ = torch.cat(cls), budgets
        self.timings_ = {"total": time.perf_counter() - t0}
        return self._set_result(torch.cat(idx), torch.cat(wts), t0)

    def fit_inputs(self, inputs: SelectionInputs):
        require(inputs, "Crust", "gradients", "pseudo_labels")
        return self.with_params().fit(inputs.gradients, inputs.pseudo_labels)

    def __repr__(self):
        return f"Crust(k={self.k}, metric={self.metric!r})"


def mixup(x: torch.Tensor, alpha: float = 1.0):
    """Mixup of the rows of ``x``: ``(x̃, π, λ)`` with ``x̃ = λ x + (1 - λ) x[π]``, ``λ ~ Beta(α, α)`` (one
    per batch, as Zhang et al.'s ``mixup_data`` that CRUST calls) and ``π`` a random permutation of the rows;
    both drawn from the global torch RNG (which the trainer seeds)."""
    if not isinstance(x, torch.Tensor) or x.dim() < 1 or x.shape[0] == 0:
        raise ValueError("x must be a non-empty tensor with samples along dimension 0")
    if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real) or not math.isfinite(alpha) or alpha <= 0:
        raise ValueError(f"alpha must be a positive finite number, got {alpha!r}")
    a = torch.tensor(float(alpha), dtype=torch.float64)
    lam = float(torch.distributions.Beta(a, a).sample())
    perm = torch.randperm(x.shape[0]).to(x.device)
    return lam * x + (1.0 - lam) * x[perm], perm, lam
