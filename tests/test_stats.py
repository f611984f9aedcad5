"""The one verdict rule (sslkit.experiments.report.stats):
Welch's t with Welch-Satterthwaite df, paired by seed where runs
pair, against scipy's own tests and the closed forms."""

import math

import numpy as np
import pytest
from scipy import stats as st

from sslkit.experiments.report.stats import (
    RULE,
    compare,
    compare_estimates,
    compare_summaries,
    compare_to,
    format_p,
    within,
)


@pytest.mark.parametrize("seed", range(6))
def test_welch_matches_scipy(seed):
    rng = np.random.default_rng(seed)
    a = rng.normal(1.0, 1.0, size=3 + seed)
    b = rng.normal(0.0, 3.0, size=5)
    c = compare(a, b)
    ref = st.ttest_ind(a, b, equal_var=False)
    lo, hi = ref.confidence_interval(0.95)
    assert c.test == "welch" and c.n == (len(a), len(b))
    assert c.p == pytest.approx(ref.pvalue, rel=1e-10) and c.t == pytest.approx(ref.statistic, rel=1e-10)
    assert c.df == pytest.approx(ref.df, rel=1e-10)
    assert c.ci[0] == pytest.approx(lo, rel=1e-10) and c.ci[1] == pytest.approx(hi, rel=1e-10)
    assert c.verdict == ("not resolved" if c.p >= 0.05 else "higher" if c.diff > 0 else "lower")


def test_welch_satterthwaite_df_closed_form():
    a, b = [1.0, 2.0, 4.0], [0.0, 0.5, 0.4, 0.3]
    va, vb = np.var(a, ddof=1) / 3, np.var(b, ddof=1) / 4
    df = (va + vb) ** 2 / (va**2 / 2 + vb**2 / 3)
    assert compare(a, b).df == pytest.approx(df)
    assert compare(a, b).df < len(a) + len(b) - 2  # never the pooled df when the variances differ


def test_paired_by_seed_matches_scipy_and_gains_power():
    rng = np.random.default_rng(0)
    shared = rng.normal(90, 3, size=5)  # seed effects (data split, init) shared by both runs of a seed
    a = {s: float(shared[s] + 0.4 + rng.normal(0, 0.1)) for s in range(5)}
    b = {s: float(shared[s]) for s in range(5)}
    c = compare(a, b)
    ref = st.ttest_rel(list(a.values()), list(b.values()))
    assert c.test == "paired" and c.df == 4
    assert c.p == pytest.approx(ref.pvalue, rel=1e-10)
    assert c.verdict == "higher"
    unpaired = compare(list(a.values()), list(b.values()))
    assert unpaired.test == "welch" and unpaired.verdict == "not resolved"  # the seed effect hides it unpaired


def test_mappings_with_other_seeds_are_not_paired():
    c = compare({0: 1.0, 1: 2.0, 2: 3.0}, {0: 0.0, 1: 0.5, 3: 0.2})
    assert c.test == "welch"


def test_too_few_seeds_is_not_resolved():
    c = compare([99.0], [1.0, 2.0, 3.0])
    assert c.verdict == "not resolved" and math.isnan(c.p)
    assert "too few seeds" in c.text()


def test_no_spread_is_exact():
    assert compare([9.8, 9.8, 9.8], [9.8, 9.8]).verdict == "not resolved"
    c = compare([10.0, 10.0, 10.0], [9.0, 9.0])
    assert c.verdict == "higher" and c.p == 0 and c.ci == (1.0, 1.0)


def test_three_seeds_two_se_is_not_significant():
    """The old rule (two standard errors) calls this "higher"; with df ~ 2-4 the t quantile is ~2.8-4.3, so the
    sound rule does not."""
    a, b = [1.0, 1.5, 2.0], [0.0, 0.5, 1.0]
    c = compare(a, b)
    assert c.diff > 2 * c.se and c.verdict == "not resolved" and c.p > 0.05


def test_text_shows_p_and_ci():
    c = compare([1.0, 1.2, 1.4, 1.1], [0.1, 0.2, 0.0, 0.3])
    s = c.text()
    assert "95 % CI" in s and "p < 0.001" in s and "Welch" in s
    assert format_p(0.0004) == "< 0.001" and format_p(0.0312) == "0.031"
    assert "Welch" in RULE and "5 %" in RULE


@pytest.mark.parametrize(
    "a, b, margin, verdict",
    [
        ([1.00, 1.01, 0.99, 1.0], [1.0, 1.02, 0.98, 1.0], 0.5, "holds"),
        ([5.0, 5.1, 4.9], [1.0, 1.1, 0.9], 1.0, "does not hold"),
        ([1.0, 3.0, 2.0], [1.0, 0.0, 2.0], 1.0, "not resolved"),
    ],
)
def test_within(a, b, margin, verdict):
    assert within(a, b, margin)[0] == verdict


@pytest.mark.parametrize(
    "args, match",
    [
        (([1.0, float("nan")], [1.0, 2.0]), "non-finite"),
        (([], [1.0, 2.0]), "at least one value"),
    ],
)
def test_bad_input(args, match):
    with pytest.raises(ValueError, match=match):
        compare(*args)
    with pytest.raises(ValueError, match="alpha"):
        compare([1.0, 2.0], [1.0, 2.0], alpha=1.5)
    with pytest.raises(ValueError, match="margin"):
        within([1.0, 2.0], [1.0, 2.0], margin=-1)


@pytest.mark.parametrize(("na", "nb"), [(3, 30), (5, 5), (2, 10)])
def test_summaries_match_scipy_welch_from_stats(na, nb):
    c = compare_summaries((80.0, 1.0, na), (78.5, 2.5, nb))
    ref = st.ttest_ind_from_stats(80.0, 1.0, na, 78.5, 2.5, nb, equal_var=False)
    assert c.test == "welch" and c.p == pytest.approx(ref.pvalue, rel=1e-10)
    assert c.t == pytest.approx(ref.statistic, rel=1e-10)
    # the same numbers as values with those means and stds give the same comparison
    a = 80.0 + np.array([-1.0, 0.0, 1.0]) if na == 3 else None
    if a is not None:
        assert compare(a, [78.5 + 2.5 * x for x in (-1.0, 0.0, 1.0)] * 10).diff == pytest.approx(c.diff)
    assert compare_summaries((1.0, 0.5, 1), (0.0, 0.5, 30)).verdict == "not resolved"
    with pytest.raises(ValueError, match="std"):
        compare_summaries((1.0, -0.5, 3), (0.0, 0.5, 3))


def test_estimates_are_the_normal_test():
    c = compare_estimates(1.0, 0.3, 0.2, 0.2)
    z = 0.8 / math.hypot(0.3, 0.2)
    assert c.test == "z" and c.df == math.inf and c.t == pytest.approx(z)
    assert c.p == pytest.approx(2 * st.norm.sf(z), rel=1e-12) and c.verdict == "higher"
    assert c.ci[0] == pytest.approx(0.8 - st.norm.ppf(0.975) * math.hypot(0.3, 0.2))
    assert compare_estimates(1.0, 0.3, 0.9, 0.2).verdict == "not resolved"  # |z| < 1.96
    assert "z = " in c.text() and "df" not in c.text() and c.short().endswith("p = 0.027)")
    assert within(compare_estimates(1.0, 0.001, 1.002, 0.001), None, 0.01)[0] == "holds"
    with pytest.raises(ValueError, match="se_a"):
        compare_estimates(1.0, float("nan"), 0.0, 0.1)


def test_one_sample_matches_scipy():
    a = [2.9, 3.4, 2.6, 3.1, 2.2]
    c = compare_to(a, 3.0)
    ref = st.ttest_1samp(a, 3.0)
    lo, hi = ref.confidence_interval(0.95)
    assert c.test == "one-sample" and c.df == 4 and c.p == pytest.approx(ref.pvalue, rel=1e-10)
    assert c.ci == pytest.approx((lo - 3.0, hi - 3.0), rel=1e-10) and c.verdict == "not resolved"
    assert compare_to([3.5, 3.6, 3.4], 3.0).verdict == "higher" and "one-sample t" in compare_to(a, 3.0).text()
    assert compare_to([9.0], 3.0).verdict == "not resolved"
    with pytest.raises(ValueError, match="target"):
        compare_to(a, float("inf"))
