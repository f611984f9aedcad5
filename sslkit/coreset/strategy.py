"""One interface for paper C's coreset strategies: ``strategy.select(inputs) -> (indices, weights)``.

Paper C's Algorithm 1 re-selects a coreset every ``R`` epochs from the current model. Every strategy
(:class:`~sslkit.coreset.RandomCoreset`, :class:`~sslkit.coreset.Retrieve`,
:class:`~sslkit.coreset.PerClassRetrieve`, :class:`~sslkit.coreset.Craig`, :class:`~sslkit.coreset.GradMatch`,
:class:`~sslkit.coreset.Crust`, :class:`~sslkit.coreset.BayesianCoreset`) reads what it needs from one
:class:`SelectionInputs` record -- the per-sample unlabeled gradients ``G`` (§3.4), the labeled logits,
labels and features, the pseudo-labels of the pool, the step size ``α_t`` and ``λ_t`` of eq. (5), and the
selection round -- and returns the chosen indices with their per-sample weights. ``needs`` says which
fields a strategy reads, so the caller computes only those (:class:`sslkit.callbacks.CoresetSelection`).

``select`` does not change the strategy object: the round's values (``α_t``, ``λ_t``, the seed
``seed + draw``) go to a copy (:meth:`CoresetStrategy.with_params`), which is fitted with the strategy's
scikit-learn-style ``fit`` -- the same computation a direct ``fit`` call makes; :meth:`CoresetStrategy.fit_inputs`
returns that fitted copy (its ``seconds_``, ``timings_`` and the strategy's other fitted attributes).

One result type for every strategy (and every label selector of :mod:`sslkit.select`): ``indices_`` is a numpy
``int64`` array of distinct pool indices; a coreset's ``weights_`` a float32 CPU tensor, one per index; and
``seconds_`` the wall-clock seconds of the ``fit`` (:meth:`CoresetStrategy._set_result`).
"""

from __future__ import annotations

import inspect
import time
from dataclasses import dataclass

import numpy as np
import torch

from sslkit._checks import Params, check_count, check_real

__all__ = ["SelectionInputs", "CoresetStrategy", "NEEDS", "require"]

#: what a strategy may read: "gradients" (G, N x d), "labeled" (logits, labels, features of the labeled
#: set), "pseudo_labels" (the pool's hypothesised classes)
NEEDS = ("gradients", "labeled", "pseudo_labels")


@dataclass
class SelectionInputs:
    """What a selection round knows (the fields a strategy does not need may be None).

    ``n``: size of the unlabeled pool; ``gradients``: ``n x d`` per-sample last-layer gradients
    ``m_j ∇l_u(x_j, θ_t)`` in pool order; ``labeled_logits`` (``n_L x C``), ``labels`` (``n_L``),
    ``labeled_features`` (``n_L x D`` or None: bias-only gradients); ``pseudo_labels``: ``n`` hypothesised
    classes (the model's argmax); ``lr``: ``α_t``, the optimiser's current (scheduled) learning rate;
    ``base_lr``: the unscheduled rate (CORDS passes it, D4); ``lam``: ``λ_t``, the algorithm's ``lambda_u``;
    ``draw``: the selection round (0-based), which seeds the random parts (``seed + draw``).
    """

    n: int
    gradients: torch.Tensor | None = None
    labeled_logits: torch.Tensor | None = None
    labels: torch.Tensor | None = None
    labeled_features: torch.Tensor | None = None
    pseudo_labels: torch.Tensor | None = None
    lr: float | None = None
    base_lr: float | None = None
    lam: float | None = None
    draw: int = 0

    def __post_init__(self):
        self.n = check_count(self.n, "n", allow_zero=False)
        self.draw = check_count(self.draw, "draw")
        if self.gradients is not None and (self.gradients.ndim != 2 or self.gradients.shape[0] != self.n):
            raise ValueError(
                f"gradients must have one row per unlabeled sample ({self.n}), got shape {tuple(self.gradients.shape)}"
            )
        if self.pseudo_labels is not None and (self.pseudo_labels.ndim != 1 or self.pseudo_labels.shape[0] != self.n):
            raise ValueError(
                f"pseudo_labels must have one class per unlabeled sample ({self.n}), "
                f"got shape {tuple(self.pseudo_labels.shape)}"
            )
        for name in ("lr", "base_lr", "lam"):
            value = getattr(self, name)
            if value is not None:
                setattr(self, name, check_real(value, name, low=0.0))

    def require(self, who: str, *fields: str) -> None:
        """Raise a clear error naming the fields ``who`` needs that are None."""
        missing = [f for f in fields if getattr(self, f) is None]
        if missing:
            raise ValueError(f"{who} needs {', '.join(missing)} in its SelectionInputs, got None")


def require(inputs, who: str, *fields: str) -> None:
    """``inputs`` must be a :class:`SelectionInputs` holding ``fields`` (a clear error otherwise: e.g. ``select(50)``
    names what ``select`` takes and how to build it)."""
    if not isinstance(inputs, SelectionInputs):
        raise TypeError(
            f"{who}.select takes a SelectionInputs (the round's gradients, labeled logits...; build one with "
            f"sslkit.coreset.selection_inputs(model, X_u, ...)), got {type(inputs).__name__}; the budget k is the "
            f"constructor's: {who}(k, ...)"
        )
    inputs.require(who, *fields)


class CoresetStrategy(Params):
    """Base class of the coreset strategies (module docstring).

    ``needs``: the :data:`NEEDS` a strategy reads. :meth:`select` returns ``(indices, weights)``: int64 numpy
    indices into the pool (distinct) and their float32 CPU weights (:meth:`result` of :meth:`fit_inputs`, the
    round's fitted copy). :meth:`get_params` / :meth:`with_params`: the constructor's arguments, and a copy with
    some of them changed (scikit-learn's ``get_params`` / ``clone``).
    """

    needs: tuple[str, ...] = ("gradients",)

    def fit_inputs(self, inputs: SelectionInputs) -> CoresetStrategy:
        """A copy of this strategy fitted on one selection round's ``inputs`` (``self`` is not changed)."""
        raise NotImplementedError(f"{type(self).__name__} must implement fit_inputs(inputs)")

    def select(self, inputs: SelectionInputs) -> tuple[np.ndarray, torch.Tensor]:
        """``(indices, weights)`` of one selection round: :meth:`fit_inputs` then :meth:`result`."""
        return self.fit_inputs(inputs).result()

    def get_params(self, deep: bool = True) -> dict:
        """The constructor's arguments, read back from the attributes of the same names (``**options`` from
        ``self.options``); scikit-learn's ``get_params`` (``deep`` changes nothing: no nested estimators)."""
        params = {}
        for name, p in inspect.signature(type(self).__init__).parameters.items():
            if name == "self":
                continue
            if p.kind is p.VAR_KEYWORD:
                params.update(self.options)
            else:
                params[name] = getattr(self, name)
        return params

    def with_params(self, **changes) -> CoresetStrategy:
        """A new strategy with the same arguments except ``changes`` (validated by the constructor)."""
        params = {**self.get_params(), **changes}
        k = params.pop("k")
        return type(self)(k, **params)

    def result(self) -> tuple[np.ndarray, torch.Tensor]:
        """``(indices_, weights_)`` of the last ``fit`` (each strategy's own)."""
        return self.indices_, self.weights_

    def _set_result(self, indices, weights, start: float) -> CoresetStrategy:
        """Set ``indices_`` (int64 numpy), ``weights_`` (float32 CPU tensor) and ``seconds_`` (wall-clock since
        ``start``, a ``time.perf_counter()``); every ``fit`` ends with it. Returns ``self``."""
        idx = indices.cpu().numpy() if isinstance(indices, torch.Tensor) else np.asarray(indices)
        self.indices_ = idx.astype(np.int64, copy=False).reshape(-1)
        self.weights_ = torch.as_tensor(weights, dtype=torch.float32).cpu().reshape(-1)
        self.seconds_ = time.perf_counter() - start
        return self
