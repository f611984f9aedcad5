"""Paper C's coreset strategies by the names its experiments use, built with every option checked at once."""

from __future__ import annotations

import inspect

from sslkit.coreset.craig import Craig
from sslkit.coreset.crust import Crust
from sslkit.coreset.giga import BayesianCoreset
from sslkit.coreset.gradmatch import GradMatch
from sslkit.coreset.per_class import PerClassRetrieve
from sslkit.coreset.retrieve import Retrieve
from sslkit.coreset.strategy import CoresetStrategy
from sslkit.coreset.uniform import RandomCoreset

__all__ = ["STRATEGIES", "make_strategy", "strategy_options"]

#: name -> strategy class: Random, Retrieve (and per class), CRAIG and GradMatch (per batch), CRUST (robust SSL,
#: §4), the Bayesian coreset (GIGA, Figure 5)
STRATEGIES = {
    "random": RandomCoreset,
    "retrieve": Retrieve,
    "retrieve_per_class": PerClassRetrieve,
    "craig": Craig,
    "gradmatch": GradMatch,
    "crust": Crust,
    "bayesian": BayesianCoreset,
}
#: arguments :func:`make_strategy` fills itself (not options)
_GIVEN = ("self", "k", "batch_size", "seed")
#: Retrieve's values that every selection round sets (α_t, λ_t): refused as options, they would be ignored
_PER_ROUND = ("lr", "lam")


def strategy_options(name: str) -> tuple[str, ...]:
    """The options the strategy called ``name`` takes (keyword arguments besides ``k``, ``batch_size``,
    ``seed`` and, for Retrieve, the per-round ``lr`` and ``lam``)."""
    cls = STRATEGIES[name]
    params = inspect.signature(cls.__init__).parameters
    if any(p.kind is p.VAR_KEYWORD for p in params.values()):  # PerClassRetrieve: Retrieve's options
        params = {**params, **inspect.signature(Retrieve.__init__).parameters}
    names = [n for n, p in params.items() if n not in _GIVEN and p.kind is p.KEYWORD_ONLY]
    if cls in (Retrieve, PerClassRetrieve):
        names = [n for n in names if n not in _PER_ROUND]
    return tuple(sorted(names))


def make_strategy(name: str, k, *, batch_size: int = 50, seed=0, **options) -> CoresetStrategy:
    """The strategy called ``name`` (:data:`STRATEGIES`) with budget ``k``; ``batch_size`` goes to the
    per-batch ones (CRAIG, GradMatch), ``seed`` to the seeded ones (Random, Retrieve, GradMatch); ``options``
    to the constructor, which checks their values now. An unknown option, or Retrieve's per-round ``lr`` /
    ``lam``, is refused with the list of valid options."""
    if name not in STRATEGIES:
        raise ValueError(f"strategy must be one of {tuple(STRATEGIES)}, got {name!r}")
    cls = STRATEGIES[name]
    valid = strategy_options(name)
    per_round = sorted(set(options) & set(_PER_ROUND)) if cls in (Retrieve, PerClassRetrieve) else []
    if per_round:
        raise ValueError(
            f"strategy {name!r}: {per_round} are set at every selection (lr: the optimiser's current learning "
            "rate α_t; lam: the algorithm's lambda_u), not options"
        )
    unknown = sorted(set(options) - set(valid))
    if unknown:
        raise ValueError(f"strategy {name!r} ({cls.__name__}) has no option(s) {unknown}; its options: {list(valid)}")
    params = inspect.signature(cls.__init__).parameters
    given = {"batch_size": batch_size, "seed": seed}
    return cls(k, **{key: v for key, v in given.items() if key in params}, **options)
