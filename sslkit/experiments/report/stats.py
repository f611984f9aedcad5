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

Two sides without any spread (every seed gives the same value) have ``se = 0``: their difference is then exact
(p = 0 when it is not zero, 1 when it is).

:func:`within` judges "A is close to B" claims: it holds when the whole 95 % interval of the difference lies
within ``± margin``, does not hold when the interval lies wholly outside it, and is not resolved otherwise (the
two one-sided tests at 2.5 %).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from scipy import stats as _st

__all__ = ["ALPHA", "RULE", "Comparison", "compare", "format_p", "within"]

ALPHA = 0.05
HIGHER, LOWER, OPEN = "higher", "lower", "not resolved"
#: the rule in one sentence, for pages and tables
RULE = (
    "Welch's t-test with Welch–Satterthwaite degrees of freedom (paired t-test over seeds where both sides ran "
    "the same seeds), two-sided at 5 %; 'not resolved' otherwise"
)


@dataclass(frozen=True)
class Comparison:
    """The outcome of :func:`compare`: ``diff`` = mean(a) − mean(b) (paired: the mean per-seed difference),
    its standard error ``se``, the 95 % interval ``ci``, ``t``, ``df``, the two-sided ``p``, the sample sizes
    ``n`` = (n_a, n_b), ``test`` ("welch" or "paired") and ``verdict`` ("higher", "lower", "not resolved")."""

    diff: float
    se: float
    ci: tuple
    t: float
    df: float
    p: float
    n: tuple
    test: str
    verdict: str

    def text(self, digits: int = 2, unit: str = "") -> str:
        """E.g. ``"+0.53 (95 % CI −0.12 to +1.18; Welch t = 2.1, df = 3.4, p = 0.11)"``."""
        if not math.isfinite(self.p):
            return f"{self.diff:+.{digits}f}{unit} (n = {self.n[0]} vs {self.n[1]}: too few seeds for a test)"
        lo, hi = self.ci
        name = "paired t" if self.test == "paired" else "Welch t"
        return (
            f"{self.diff:+.{digits}f}{unit} (95 % CI {lo:+.{digits}f} to {hi:+.{digits}f}; {name} = {self.t:.2f}, "
            f"df = {self.df:.1f}, p = {format_p(self.p)})"
        )

    def as_dict(self) -> dict:
        return {
            "diff": self.diff,
            "ci_low": self.ci[0],
            "ci_high": self.ci[1],
            "p": self.p,
            "df": self.df,
            "test": self.test,
            "verdict": self.verdict,
        }


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
    verdict = (HIGHER if diff > 0 else LOWER) if p < alpha else OPEN
    return Comparison(float(diff), float(se), ci, float(t), float(df), p, n, test, verdict)


def compare(a, b, *, alpha: float = ALPHA) -> Comparison:
    """Is ``a`` above ``b``? The module's rule on two sets of per-seed values.

    ``a`` and ``b``: sequences of values, or mappings ``seed -> value``; two mappings with the same seeds are
    compared paired by seed, anything else with Welch's test. Raises ``ValueError`` for a non-finite value, an
    empty side, or ``alpha`` outside (0, 1)."""
    if isinstance(alpha, bool) or not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
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


def within(a, b, margin: float, *, alpha: float = ALPHA) -> tuple[str, Comparison]:
    """Is ``a`` within ``± margin`` of ``b``? ``("holds" | "does not hold" | "not resolved", comparison)``: holds
    when the whole (1 − alpha) interval of the difference lies inside ``(−margin, margin)``, does not hold when
    it lies wholly outside, not resolved otherwise (also with too few seeds)."""
    if isinstance(margin, bool) or not isinstance(margin, (int, float)) or not margin > 0:
        raise ValueError(f"margin must be a positive number, got {margin!r}")
    c = compare(a, b, alpha=alpha)
    lo, hi = c.ci
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return OPEN, c
    if -margin < lo and hi < margin:
        return "holds", c
    if lo >= margin or hi <= -margin:
        return "does not hold", c
    return OPEN, c
