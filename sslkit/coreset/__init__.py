"""Coreset selection of *unlabeled* data for efficient SSL (paper C: Retrieve), tensors in, indices out.

Every selector: ``Selector(k, ...).fit(gradients, ...)``; results in trailing-underscore attributes
(``indices_`` an int64 numpy array in selection order -- the index type of paper B's selectors too --,
``weights_`` float32 CPU tensor, one per index, ``seconds_`` the fit's wall-clock, ``timings_``); any device for
the computation, deterministic given its ``seed``. Every selector is also a
:class:`~sslkit.coreset.strategy.CoresetStrategy` with one method for Algorithm 1's rounds,
``select(SelectionInputs) -> (indices, weights)`` (``fit_inputs``: the round's fitted copy). The inputs at a
trainer's current model: :func:`sslkit.callbacks.selection_inputs`.

* :mod:`sslkit.coreset.strategy`: :class:`SelectionInputs`, :class:`CoresetStrategy`;
  :mod:`sslkit.coreset.inputs`: :func:`selection_inputs` (a round's inputs from the user's own training loop);
  :mod:`sslkit.coreset.registry`: :data:`STRATEGIES` (names -> classes), :func:`make_strategy`.

* :mod:`sslkit.coreset.gradients`: closed-form per-sample last-layer gradients (§3.4): bias part ``g0``,
  weight part ``g0 (x) h`` in ``nn.Linear`` layout, per class; :func:`logit_gradients` (``g0`` of any
  per-sample SSL loss by autograd), :func:`labeled_gradient` (``grad L_S``, mean CE).
* :mod:`sslkit.coreset.batches`: per-batch means and expansion of chosen batches (App. D/E).
* :mod:`sslkit.coreset.retrieve`: :class:`Retrieve` (Algorithm 2, eq. (5)-(7); stochastic / naive /
  r-round greedy; ``cords_compatible``), :func:`one_step_objective` (eq. (6)).
* :mod:`sslkit.coreset.retrieve_full`: :class:`RetrieveFullModel` (the same greedy with full-model gradients:
  §3.4's alternative, a diagnostic of its cost), :func:`per_sample_gradients`.
* :mod:`sslkit.coreset.per_class`: :class:`PerClassRetrieve` (CORDS' ``PerClass``: Retrieve inside each
  pseudo-class, proportional budgets).
* :mod:`sslkit.coreset.craig`: :class:`Craig` (App. D eq. (49)-(50), lazy facility location).
* :mod:`sslkit.coreset.gradmatch`: :class:`GradMatch` (App. E eq. (52), non-negative regularised OMP).
* :mod:`sslkit.coreset.uniform`: :class:`RandomCoreset`.
* :mod:`sslkit.coreset.crust`: :class:`Crust` (per-(pseudo-)class facility location, proportional budgets;
  robust-SSL baseline, §4), :func:`mixup`.
* :mod:`sslkit.coreset.giga`: :class:`BayesianCoreset` (Campbell & Broderick's GIGA; Figure 5).
"""

from sslkit.coreset.batches import batch_means, expand_batches, n_batches
from sslkit.coreset.craig import Craig, craig_similarity, facility_location
from sslkit.coreset.crust import Crust, mixup, proportional_budgets
from sslkit.coreset.giga import BayesianCoreset, giga_step
from sslkit.coreset.gradients import (
    cross_entropy_logit_gradients,
    labeled_gradient,
    last_layer_gradients,
    logit_gradients,
    split_last_layer,
)
from sslkit.coreset.gradmatch import GradMatch, nonnegative_ridge, omp_nonnegative
from sslkit.coreset.inputs import pseudo_label_losses, selection_inputs
from sslkit.coreset.per_class import PerClassRetrieve
from sslkit.coreset.registry import STRATEGIES, make_strategy, strategy_options
from sslkit.coreset.retrieve import Retrieve, one_step_objective, round_step, stochastic_candidates
from sslkit.coreset.retrieve_full import RetrieveFullModel, per_sample_gradients
from sslkit.coreset.strategy import NEEDS, CoresetStrategy, SelectionInputs
from sslkit.coreset.uniform import RandomCoreset

__all__ = [
    "SelectionInputs",
    "selection_inputs",
    "pseudo_label_losses",
    "NEEDS",
    "CoresetStrategy",
    "STRATEGIES",
    "make_strategy",
    "strategy_options",
    "Retrieve",
    "RetrieveFullModel",
    "per_sample_gradients",
    "round_step",
    "PerClassRetrieve",
    "one_step_objective",
    "stochastic_candidates",
    "Craig",
    "facility_location",
    "craig_similarity",
    "GradMatch",
    "omp_nonnegative",
    "nonnegative_ridge",
    "RandomCoreset",
    "Crust",
    "proportional_budgets",
    "mixup",
    "BayesianCoreset",
    "giga_step",
    "logit_gradients",
    "last_layer_gradients",
    "labeled_gradient",
    "cross_entropy_logit_gradients",
    "split_last_layer",
    "batch_means",
    "expand_batches",
    "n_batches",
]
