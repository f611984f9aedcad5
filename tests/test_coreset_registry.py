"""sslkit.coreset.registry: every registered strategy is built by name with its budget, its options are a tuple of
names, unknown names and options are refused, and a name builds the very class."""

import numpy as np
import pytest

import sslkit.coreset as coreset
from sslkit.coreset import NEEDS, STRATEGIES, CoresetStrategy, make_strategy, strategy_options


@pytest.mark.parametrize("name", sorted(STRATEGIES))
def test_every_registered_strategy_is_built_by_name_with_its_budget(name):
    s = make_strategy(name, 7, batch_size=5, seed=3)
    assert isinstance(s, CoresetStrategy) and s.k == 7
    assert set(s.needs) <= set(NEEDS) and isinstance(strategy_options(name), tuple)
    assert all(isinstance(o, str) for o in strategy_options(name))


def test_make_strategy_refuses_an_unknown_name_and_names_the_known_ones():
    with pytest.raises(ValueError, match="retrieve"):
        make_strategy("kmeans", 3)
    with pytest.raises(ValueError, match="has no option"):
        make_strategy("random", 3, greedy="naive")  # Retrieve's option, not Random's


def test_random_coreset_through_the_registry_is_the_class_itself():
    a = make_strategy("random", 5, seed=2).fit(np.zeros((20, 1), dtype=np.float32)).indices_
    b = coreset.RandomCoreset(5, seed=2).fit(20).indices_
    assert a.tolist() == b.tolist()
