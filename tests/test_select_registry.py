"""sslkit.select.registry: paper B's selectors by the names of its tables (Table 1's order), any spelling of a name,
RDSS's alpha = 1 - 1/sqrt(m) (§7.1), and clear errors."""

import math

import numpy as np
import pytest

from sslkit.select import GKHR
from sslkit.select.registry import SELECTORS, make_selector, selector_name


def test_table_1_order():
    assert list(SELECTORS) == ["Stratified", "Random", "k-Means", "USL", "ActiveFT", "RDSS"]


@pytest.mark.parametrize(
    "spelling,name",
    [("rdss", "RDSS"), ("kmeans", "k-Means"), ("k_means", "k-Means"), ("K-MEANS", "k-Means"), ("activeft", "ActiveFT")],
)
def test_any_case_with_or_without_dashes(spelling, name):
    assert selector_name(spelling) == name


@pytest.mark.parametrize("bad", ["herding", "", None, 3])
def test_unknown_names_are_refused_with_the_list(bad):
    with pytest.raises(ValueError, match=r"selector must be one of \('Stratified', 'Random'"):
        selector_name(bad)


@pytest.mark.parametrize("name", list(SELECTORS))
def test_make_selector_builds_the_class_with_budget_and_seed(name):
    sel = make_selector(name.lower(), 7, seed=3)
    assert isinstance(sel, SELECTORS[name]) and sel.m == 7


def test_rdss_is_gkhr_with_alpha_one_minus_one_over_sqrt_m():
    X = np.random.default_rng(0).normal(size=(64, 3)).astype(np.float32)
    sel = make_selector("RDSS", 16, seed=1)
    assert type(sel) is GKHR and sel.bandwidth == "median"
    sel.fit(X)
    assert math.isclose(sel.alpha_, 1 - 1 / math.sqrt(16)) and len(sel.indices_) == 16


def test_bad_budget_and_seed():
    with pytest.raises(ValueError, match="m"):
        make_selector("Random", 0)
    with pytest.raises((TypeError, ValueError), match="seed"):
        make_selector("Random", 3, seed=-1)


def test_an_approximate_mu_is_refused_for_another_selector():
    with pytest.raises(ValueError, match="applies to RDSS only"):
        make_selector("kmeans", 3, mu_method="landmarks")
