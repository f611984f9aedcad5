"""The book's one verdict rule: is one method's per-seed metric above another's?

Every verdict in the book and the claims ledger comes from :func:`compare` (and :func:`within` for claims of
closeness), so a reader learns one rule:

* **Welch's t-test** (unequal variances) with **Welch–Satterthwaite degrees of freedom**, two-sided at
  :data:`ALPHA` = 5 %, on the per-seed values of the two sides::

      d = mean(a) - mean(b),   se = sqrt(s_a^2 / n_a + s_b^2 / n_b),
      df = se^4 / ((s_a^2 / n_a)^2 / (n_a - 1) + (s_b^2 / n_b)^2 / (n_b - 1)),
      t = d / se,   p = 2 P(T_df > |t|),   95 % CI = d ± t_{df, 0.975} se;

* **paired by seed** where the runs pair: when both sides are given per seed (mappings ``seed -> value``) and
  hold the same seeds, a seed's two runs share their data split and initialisation, and the test is the paired
  t-test on the per-seed differences (``se = s_diff / sqrt(n)``, ``df = n - 1``);
* the verdict is ``"higher"`` / ``"lower"`` when ``p < ALPHA`` (the sign of ``d``), else ``"not resolved"`` --
  also when a side has fewer than two values, since then no variance can be estimated.

Two other inputs follow the same rule: :func:`compare_summaries` takes each side's mean, standard deviation and
number of seeds (a paper's printed mean ± std over its seeds), and :func:`compare_estimates` two Monte Carlo
estimates with their standard errors (thousands of trials each, so the degrees of freedom are infinite and the
test is the normal one). A per-seed quantity against a fixed number (a paper's printed speed-up, say) uses the
one-sample t-test (:func:`compare_to`: ``se = s / sqrt(n)``, ``df = n - 1``), read the same way.

Two sides without any spread (every seed gives the same value) have ``se = 0``: their difference is then exact
(p = 0 when it is not zero, 1 when it is).

:func:`within` judges "A is close to B" claims: it holds when the whole 95 % interval of the difference lies
within ``± margin``, does not hold when the interval lies wholly outside it, and is not resolved otherwise (the
two one-sided tests at 2.5 %). :func:`not_below` is its one-sided form for "A matches or beats B": holds when the
whole interval lies above ``-margin``, does not hold when it lies wholly below. This is the one margin rule of
every "no worse than" / "close to" claim: a significant difference *inside* the margin is what such a claim
allows, so it never decides against it; only an interval wholly beyond the margin does. Both are decided by the
shifted comparisons (:func:`shifted`: the difference minus the margin), so that Holm's correction applies to
them like to any other comparison.

**Many comparisons in one claim** (:class:`Family`, :func:`holm`). A claim that tests k comparisons ("in every
row", "at some budget") is evaluated twice: the first pass collects the comparisons its test judges
(:func:`judge`), the second gives each of them its Holm-adjusted p (:func:`holm`, over the claim's own k
comparisons) and reads ``verdict`` off the adjusted p; ``p`` stays the raw p, shown beside it. Outside a claim
(``Family`` not active) nothing is adjusted.

**Power** (:func:`mde`, :func:`seeds_for`): the minimum detectable effect of a comparison is the true difference
that its own test (the same se, df, two-sided 5 %) detects with 80 % probability -- from the noncentral t
distribution, ``P(|T'_{df, delta/se}| > t_{df, 0.975}) = 0.8`` (the normal one for z-tests, where it is
``(z_0.975 + z_0.8) se``); :func:`seeds_for` scales ``se`` by ``sqrt(n / n')`` to find the seeds per side that
bring it below a given effect.
"""

from __future__ import annotations

import contextvars
import math
from collections.abc import Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np
from scipy import stats as _st

__all__ = [
    "ALPHA",
    "RULE",
    "Comparison",
    "Family",
    "aside",
    "compare",
    "compare_estimates",
    "compare_summaries",
    "compare_to",
    "decided_by",
    "format_p",
    "holm",
    "judge",
    "mde",
    "not_below",
    "p_text",
    "seeds_for",
    "shifted",
    "within",
]

ALPHA = 0.05
HIGHER, LOWER, OPEN = "higher", "lower", "not resolved"
#: the power at which the minimum detectable effect is computed
POWER = 0.8
#: the rule in one sentence, for pages and tables
RULE = (
    "Welch's t-test with Welch–Satterthwaite degrees of freedom (paired t-test over seeds where both sides ran "
    "the same seeds), two-sided at 5 %; 'not resolved' otherwise"
)


@dataclass(frozen=True)
class Comparison:
    """The outcome of :func:`compare`: ``diff`` = mean(a) − mean(b) (paired: the mean per-seed difference),
    its standard error ``se``, the 95 % interval ``ci``, ``t``, ``df``, the two-sided ``p``, the sample sizes
    ``n`` = (n_a, n_b), ``test`` ("welch", "paired" or "z") and ``verdict`` ("higher", "lower", "not resolved")."""

    diff: float
    se: float
    ci: tuple
    t: float
    df: float
    p: float
    n: tuple
    test: str
    verdict: str
    #: the Holm-adjusted p within the claim being tested (:class:`Family`); ``p`` outside one
    p_adj: float = math.nan

    @property
    def key(self) -> str:
        """What identifies this comparison within a claim (the same inputs give the same key)."""
        return f"{self.test}|{self.n}|{self.diff:.12g}|{self.se:.12g}|{self.df:.12g}"

    @property
    def p_decides(self) -> float:
        """The p that decides the verdict: the adjusted one within a claim, else the raw one."""
        return self.p if math.isnan(self.p_adj) else self.p_adj

    def _digits(self, digits) -> int | str:
        if digits is not None:
            return digits
        scale = max([abs(self.diff), *(abs(x) for x in self.ci if math.isfinite(x))])
        return "3g" if 0 < scale < 0.1 else 2

    def _num(self, x, digits) -> str:
        return f"{x:+.{digits}}" if isinstance(digits, str) else f"{x:+.{digits}f}"

    def text(self, digits: int | None = None, unit: str = "") -> str:
        """E.g. ``"+0.53 (95 % CI −0.12 to +1.18; Welch t = 2.1, df = 3.4, p = 0.11)"`` (``digits``: decimals;
        None: 2, or 3 significant digits for differences below 0.1)."""
        d = self._digits(digits)
        if not math.isfinite(self.p):
            return f"{self._num(self.diff, d)}{unit} (n = {self.n[0]} vs {self.n[1]}: too few seeds for a test)"
        lo, hi = self.ci
        name = {"paired": "paired t", "z": "z", "one-sample": "one-sample t"}.get(self.test, "Welch t")
        return (
            f"{self._num(self.diff, d)}{unit} (95 % CI {self._num(lo, d)} to {self._num(hi, d)}; {name} = "
            f"{self.t:.2f}, " + (f"df = {self.df:.1f}, " if math.isfinite(self.df) else "") + f"{self._p()})"
        )

    def _p(self) -> str:
        if math.isnan(self.p_adj) or self.p_adj == self.p:
            return p_text(self.p)
        return f"{p_text(self.p)}, Holm {format_p(self.p_adj)}"

    def short(self, digits: int | None = None, unit: str = "") -> str:
        """E.g. ``"+0.53 (95 % CI −0.12 to +1.18, p = 0.11)"``: the difference, its interval and p, for a table."""
        d = self._digits(digits)
        if not math.isfinite(self.p):
            return f"{self._num(self.diff, d)}{unit} (n = {self.n[0]} vs {self.n[1]}: too few for a test)"
        lo, hi = self.ci
        return f"{self._num(self.diff, d)}{unit} (95 % CI {self._num(lo, d)} to {self._num(hi, d)}, {self._p()})"

    def as_dict(self) -> dict:
        return {
            "diff": self.diff,
            "ci_low": self.ci[0],
            "ci_high": self.ci[1],
            "p": self.p,
            "p_adj": self.p_decides,
            "df": self.df,
            "test": self.test,
            "verdict": self.verdict,
        }


def p_text(p: float) -> str:
    """``"p = 0.031"`` or ``"p < 0.001"``."""
    shown = format_p(p)
    return f"p {shown}" if shown.startswith("<") else f"p = {shown}"


def format_p(p: float) -> str:
    """``p`` with two significant digits, ``"< 0.001"`` below a thousandth."""
    if not math.isfinite(p):
        return "n/a"
    return "< 0.001" if p < 0.001 else f"{p:.2g}"


def _values(x, name: str) -> np.ndarray:
    arr = np.asarray(list(x.values()) if isinstance(x, Mapping) else x, dtype=float).ravel()
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} holds a non-finite value: {arr.tolist()}")
    return arr


def _outcome(diff, se, df, n, test, alpha) -> Comparison:
    if se == 0:  # no spread on either side: the difference is exact
        p = 0.0 if diff != 0 else 1.0
        t = math.copysign(math.inf, diff) if diff != 0 else 0.0
        ci = (diff, diff)
    else:
        t = diff / se
        p = float(2 * _st.t.sf(abs(t), df))
        half = float(_st.t.ppf(1 - alpha / 2, df)) * se
        ci = (diff - half, diff + half)
    c = Comparison(float(diff), float(se), ci, float(t), float(df), p, n, test, OPEN)
    family = _FAMILY.get()
    p_adj = family.adjusted.get(c.key, p) if family is not None and family.adjusted is not None else math.nan
    decides = p if math.isnan(p_adj) else p_adj
    verdict = (HIGHER if diff > 0 else LOWER) if decides < alpha else OPEN
    return Comparison(c.diff, c.se, ci, c.t, c.df, p, n, test, verdict, p_adj)


# ------------------------------------------------------------------------------------- one claim's comparisons


@dataclass
class Family:
    """The comparisons one claim's test judges (:func:`judge`), in the order judged: ``judged[(key, label)] =
    (comparison, good, shift, label)`` -- two cells whose numbers happen to coincide are two hypotheses, one
    comparison judged twice under one label is one. ``adjusted``: ``{key: Holm-adjusted p}`` on the second pass
    (None on the first), which :func:`compare` and the other tests then read their verdicts from."""

    adjusted: dict | None = None
    judged: dict = field(default_factory=dict)
    #: which records decide, when the test chose among several (:func:`decided_by`)
    decides: str = ""

    def holm(self) -> dict:
        """``{key: Holm-adjusted p}`` over the judged comparisons that have a p (:func:`holm`)."""
        tested = [c for c, *_ in self.judged.values() if math.isfinite(c.p)]
        out: dict = {}
        for c, p in zip(tested, holm([c.p for c in tested]), strict=True):
            out[c.key] = max(p, out.get(c.key, 0.0))  # equal numbers in two cells: the larger adjusted p
        return out


_FAMILY: contextvars.ContextVar = contextvars.ContextVar("sslkit_family", default=None)


@contextmanager
def family(adjusted: dict | None = None):
    """Collect the comparisons judged inside the block into a :class:`Family` (yielded); with ``adjusted``, the
    comparisons made inside read their verdicts from those adjusted p-values."""
    f = Family(adjusted)
    token = _FAMILY.set(f)
    try:
        yield f
    finally:
        _FAMILY.reset(token)


@contextmanager
def aside():
    """Comparisons made inside the block are shown, not judged: no :class:`Family` collects them (a claim's
    sensitivity readings), and none is adjusted."""
    token = _FAMILY.set(None)
    try:
        yield
    finally:
        _FAMILY.reset(token)


def decided_by(text: str) -> None:
    """Name the evidence that decides the claim being tested (e.g. the protocol chosen among several); a no-op
    outside a :func:`family`."""
    f = _FAMILY.get()
    if f is not None:
        f.decides = f"{f.decides}; {text}" if f.decides and text not in f.decides else text


def judge(c: Comparison, good: str = HIGHER, *, shift: float = 0.0, label: str = "") -> Comparison:
    """Mark ``c`` as a comparison the claim's verdict reads, with the direction ``good`` ("higher" / "lower")
    that supports the claim; ``shift``: the margin added to the difference (:func:`shifted`), so that the effect
    shown is ``c.diff - shift``. Returns ``c``; a no-op outside a :func:`family`."""
    if good not in (HIGHER, LOWER):
        raise ValueError(f"good must be 'higher' or 'lower', got {good!r}")
    f = _FAMILY.get()
    if f is not None and (c.key, label) not in f.judged:
        f.judged[(c.key, label)] = (c, good, float(shift), label)
    return c


def holm(pvalues) -> list:
    """Holm's step-down adjustment of ``pvalues`` (in their order): sorted ascending, the j-th smallest (1-based)
    becomes ``max_{i <= j} min(1, (m - i + 1) p_(i))``; controls the family-wise error at the level read off."""
    ps = np.asarray(list(pvalues), dtype=float)
    if ps.size and (not np.all(np.isfinite(ps)) or ps.min() < 0 or ps.max() > 1):
        raise ValueError(f"p-values must lie in [0, 1], got {ps.tolist()}")
    m = len(ps)
    order = np.argsort(ps, kind="stable")
    adj = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * ps[order]))
    out = np.empty(m)
    out[order] = adj
    return out.tolist()


def shifted(c: Comparison, by: float, *, alpha: float = ALPHA) -> Comparison:
    """``c`` with ``by`` added to its difference: the same se and df, its p the test of ``diff + by = 0`` (e.g.
    ``by = margin``: is ``a`` above ``b − margin``?)."""
    by = _finite(by, "by")
    if not math.isfinite(c.se):
        nan = math.nan
        return Comparison(c.diff + by, nan, (nan, nan), nan, nan, nan, c.n, c.test, OPEN)
    return _outcome(c.diff + by, c.se, c.df, c.n, c.test, alpha)


def mde(c: Comparison, *, power: float = POWER, alpha: float = ALPHA) -> float:
    """The minimum detectable effect of ``c``'s test: the true difference it detects (two-sided ``alpha``) with
    probability ``power``, at its own se and df -- the noncentral t (normal for a z-test, infinite df); nan
    without a variance estimate, 0 when the sides have no spread."""
    return _mde(c.se, c.df, power, alpha)


def _mde(se, df, power=POWER, alpha=ALPHA) -> float:
    if not math.isfinite(se):
        return math.nan
    if se == 0:
        return 0.0
    if not math.isfinite(df):
        return float((_st.norm.ppf(1 - alpha / 2) + _st.norm.ppf(power)) * se)
    crit = _st.t.ppf(1 - alpha / 2, df)

    def gap(ncp):  # the far tail (below -crit) vanishes at large ncp, where scipy may return nan for it
        return _st.nct.sf(crit, df, ncp) + np.nan_to_num(_st.nct.cdf(-crit, df, ncp)) - power

    from scipy.optimize import brentq

    hi = crit + _st.t.ppf(power, df) + 10.0
    return float(brentq(gap, 0.0, hi, xtol=1e-10) * se)


def seeds_for(c: Comparison, effect: float, *, power: float = POWER, alpha: float = ALPHA, most: int = 10_000) -> float:
    """The seeds per side at which ``c``'s test (its spread, se scaled by ``sqrt(n / n')``) has an MDE at most
    ``effect``: the current count when it already has; nan for a z-test (no seeds), without a variance estimate or
    a positive ``effect``; inf beyond ``most``."""
    if c.test == "z" or not math.isfinite(c.se) or not (effect > 0):
        return math.nan
    n0 = min(x for x in c.n if x) if any(c.n) else 0
    if n0 < 2:
        return math.nan

    def enough(n) -> bool:
        df = c.df * (n - 1) / (n0 - 1) if math.isfinite(c.df) else math.inf
        return _mde(c.se * math.sqrt(n0 / n), df, power, alpha) <= effect

    if enough(n0):
        return float(n0)
    lo, hi = n0, n0
    while not enough(hi):  # MDE falls with n: double, then bisect
        lo, hi = hi, hi * 2
        if hi > most:
            return math.inf
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if enough(mid) else (mid, hi)
    return float(hi)


def compare(a, b, *, alpha: float = ALPHA) -> Comparison:
    """Is ``a`` above ``b``? The module's rule on two sets of per-seed values.

    ``a`` and ``b``: sequences of values, or mappings ``seed -> value``; two mappings with the same seeds are
    compared paired by seed, anything else with Welch's test. Raises ``ValueError`` for a non-finite value, an
    empty side, or ``alpha`` outside (0, 1)."""
    _check_alpha(alpha)
    xa, xb = _values(a, "a"), _values(b, "b")
    if not len(xa) or not len(xb):
        raise ValueError(f"compare needs at least one value on each side, got {len(xa)} and {len(xb)}")
    n = (len(xa), len(xb))
    if isinstance(a, Mapping) and isinstance(b, Mapping) and set(a) == set(b) and len(a) >= 2:
        seeds = sorted(a)
        d = np.array([a[s] for s in seeds], dtype=float) - np.array([b[s] for s in seeds], dtype=float)
        se = float(d.std(ddof=1) / math.sqrt(len(d)))
        return _outcome(float(d.mean()), se, len(d) - 1, n, "paired", alpha)
    diff = float(xa.mean() - xb.mean())
    if min(n) < 2:
        return Comparison(diff, math.nan, (math.nan, math.nan), math.nan, math.nan, math.nan, n, "welch", OPEN)
    va, vb = xa.var(ddof=1) / n[0], xb.var(ddof=1) / n[1]
    se = math.sqrt(va + vb)
    df = (va + vb) ** 2 / (va**2 / (n[0] - 1) + vb**2 / (n[1] - 1)) if se > 0 else float(n[0] + n[1] - 2)
    return _outcome(diff, se, df, n, "welch", alpha)


def _check_alpha(alpha) -> None:
    if isinstance(alpha, bool) or not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")


def _finite(value, name: str, *, positive: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)):
        raise TypeError(f"{name} must be a number, got {value!r}")
    value = float(value)
    if not math.isfinite(value) or (positive and value < 0):
        raise ValueError(f"{name} must be a finite{' non-negative' if positive else ''} number, got {value!r}")
    return value


def compare_summaries(a: tuple, b: tuple, *, alpha: float = ALPHA) -> Comparison:
    """:func:`compare` from summary statistics: ``a`` and ``b`` are ``(mean, std, n)`` of each side (the std with
    ``n - 1`` in its denominator, as papers print mean ± std over seeds). Welch's test; "not resolved" when a side
    has ``n < 2``."""
    _check_alpha(alpha)
    (ma, sa, na), (mb, sb, nb) = a, b
    ma, sa, mb, sb = (
        _finite(ma, "a's mean"),
        _finite(sa, "a's std", positive=True),
        _finite(mb, "b's mean"),
        _finite(sb, "b's std", positive=True),
    )
    for n, name in ((na, "a's n"), (nb, "b's n")):
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise ValueError(f"{name} must be a positive integer, got {n!r}")
    diff, n = ma - mb, (int(na), int(nb))
    if min(n) < 2:
        return Comparison(diff, math.nan, (math.nan, math.nan), math.nan, math.nan, math.nan, n, "welch", OPEN)
    va, vb = sa**2 / na, sb**2 / nb
    se = math.sqrt(va + vb)
    df = (va + vb) ** 2 / (va**2 / (na - 1) + vb**2 / (nb - 1)) if se > 0 else float(na + nb - 2)
    return _outcome(diff, se, df, n, "welch", alpha)


def compare_estimates(a: float, se_a: float, b: float, se_b: float, *, alpha: float = ALPHA) -> Comparison:
    """:func:`compare` for two independent Monte Carlo estimates with their standard errors (each from thousands of
    trials): ``se = sqrt(se_a^2 + se_b^2)``, infinite degrees of freedom (the normal test); ``test = "z"`` and
    ``n = (0, 0)`` (no seeds)."""
    _check_alpha(alpha)
    a, b = _finite(a, "a"), _finite(b, "b")
    se = math.hypot(_finite(se_a, "se_a", positive=True), _finite(se_b, "se_b", positive=True))
    return _outcome(a - b, se, math.inf, (0, 0), "z", alpha)


def compare_to(a, target: float, *, alpha: float = ALPHA) -> Comparison:
    """Is the mean of the per-seed values ``a`` above the fixed number ``target``? The one-sample t-test
    (``se = s / sqrt(n)``, ``df = n - 1``), read like :func:`compare`; ``n`` is ``(len(a), 0)``."""
    if isinstance(alpha, bool) or not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    if isinstance(target, bool) or not isinstance(target, (int, float)) or not math.isfinite(target):
        raise ValueError(f"target must be a finite number, got {target!r}")
    xa = _values(a, "a")
    if not len(xa):
        raise ValueError("compare_to needs at least one value")
    diff = float(xa.mean() - target)
    if len(xa) < 2:
        nan = math.nan
        return Comparison(diff, nan, (nan, nan), nan, nan, nan, (len(xa), 0), "one-sample", OPEN)
    se = float(xa.std(ddof=1) / math.sqrt(len(xa)))
    return _outcome(diff, se, len(xa) - 1, (len(xa), 0), "one-sample", alpha)


def _margin(margin) -> float:
    if isinstance(margin, bool) or not isinstance(margin, (int, float)) or not margin > 0:
        raise ValueError(f"margin must be a positive number, got {margin!r}")
    return float(margin)


def within(a, b, margin: float, *, alpha: float = ALPHA, label: str = "") -> tuple[str, Comparison]:
    """Is ``a`` within ``± margin`` of ``b``? ``("holds" | "does not hold" | "not resolved", comparison)``: holds
    when the whole (1 − alpha) interval of the difference lies inside ``(−margin, margin)``, does not hold when
    it lies wholly outside, not resolved otherwise (also with too few seeds). ``within(c, None, margin)`` judges
    a :class:`Comparison` already made (e.g. by :func:`compare_estimates`). Decided by the two shifted tests
    (``diff + margin`` above 0, ``diff − margin`` below 0; :func:`shifted`), each judged for the claim (as
    ``label``)."""
    margin = _margin(margin)
    c = a if isinstance(a, Comparison) and b is None else compare(a, b, alpha=alpha)
    if not math.isfinite(c.p):
        return OPEN, c
    above = judge(shifted(c, margin, alpha=alpha), HIGHER, shift=margin, label=label)
    below = judge(shifted(c, -margin, alpha=alpha), LOWER, shift=-margin, label=label)
    if above.verdict == HIGHER and below.verdict == LOWER:
        return "holds", c
    if above.verdict == LOWER or below.verdict == HIGHER:
        return "does not hold", c
    return OPEN, c


def not_below(a, b, margin: float, *, alpha: float = ALPHA, label: str = "") -> tuple[str, Comparison]:
    """Does ``a`` match or beat ``b`` (non-inferiority at ``margin``)? ``("holds" | "does not hold" | "not
    resolved", comparison)``: holds when the whole (1 − alpha) interval of ``a − b`` lies above ``−margin``, does
    not hold when it lies wholly below ``−margin``, not resolved otherwise (also with too few seeds) --
    :func:`within`'s construction, one-sided; a significant drop inside the margin holds. ``not_below(c, None,
    margin)`` judges a :class:`Comparison`. Decided by the shifted test ``diff + margin`` (:func:`shifted`)."""
    margin = _margin(margin)
    c = a if isinstance(a, Comparison) and b is None else compare(a, b, alpha=alpha)
    if not math.isfinite(c.p):
        return OPEN, c
    up = judge(shifted(c, margin, alpha=alpha), HIGHER, shift=margin, label=label)
    return {HIGHER: "holds", LOWER: "does not hold"}.get(up.verdict, OPEN), c
