"""The checks of the three theory lectures (notebooks/a_theory.md, b_theory.md, c_theory.md), asserted.

Each lecture derives a paper's theorems (sympy, or numbers against ``sslkit``) and shows every check as a table:
the claim and its result, a simplified difference that reads 0 when the paper is right, or a yes / no. The pages
only show; the assertions live here. Each page's code cells run once (at quick scale, as the book runs them),
every check it records in ``CHECKS`` must hold, and the list of checks must be the one below, so a check that
disappears from a page, or a new one, fails here until the list says so.
"""

from __future__ import annotations

import contextlib
import functools
import io
import os
from pathlib import Path

import jupytext
import matplotlib
import pytest
import sympy as sp
import torch
from IPython.core.inputtransformer2 import TransformerManager

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"


def run_page(name: str) -> dict:
    """The namespace a page's code cells leave behind, run in the page's folder with its printing silenced (the
    folder and torch's default dtype, which c_theory sets to float64, are restored for the tests that follow)."""
    matplotlib.use("Agg")
    namespace: dict = {}
    transform = TransformerManager().transform_cell  # the Colab cell's `!pip` line becomes Python
    cwd, dtype = os.getcwd(), torch.get_default_dtype()
    os.chdir(NOTEBOOKS)
    try:
        for i, cell in enumerate(jupytext.read(NOTEBOOKS / f"{name}.md").cells):
            if cell.cell_type == "code":
                with contextlib.redirect_stdout(io.StringIO()):
                    exec(compile(transform(cell.source), f"{name} cell {i}", "exec"), namespace)
    finally:
        os.chdir(cwd)
        torch.set_default_dtype(dtype)
    return namespace


def holds(result) -> bool:
    """A check's result holds when it is True, or a number / sympy expression / matrix that simplifies to 0."""
    if isinstance(result, bool):
        return result
    if isinstance(result, sp.MatrixBase):
        return all(sp.simplify(e) == 0 for e in result)
    return sp.simplify(result) == 0


def test_holds_tells_a_wrong_result():
    """The rule itself: a non-zero difference, a False, a non-zero count or matrix entry fails."""
    x = sp.Symbol("x")
    assert holds(0) and holds(True) and holds(sp.sin(x) ** 2 + sp.cos(x) ** 2 - 1) and holds(sp.zeros(2, 1))
    assert not holds(False) and not holds(1) and not holds(x - x**2) and not holds(sp.Matrix([0, x]))


#: The checks each page shows, in order: a_theory (Theorems 1-10 of paper A, and sympy against sslkit.risk),
#: b_theory (paper B's eq. (6), App. A.1, the lemmas of App. B, Theorems 5.4 and 5.6 against sslkit.select),
#: c_theory (paper C's eq. (6)-(7) and Theorem 1 against sslkit.coreset). Filled from the pages' CHECKS.
EXPECTED: dict[str, list[str]] = {
    "a_theory": [
        "Thm 1, k = 2: solved family - eq. (7)",
        "§5.2, k = 2: Delta form - eq. (7)",
        "Thm 1, k = 3: solved family - eq. (7)",
        "§5.2, k = 3: Delta form - eq. (7)",
        "Thm 1, k = 4: solved family - eq. (7)",
        "§5.2, k = 4: Delta form - eq. (7)",
        "k = 2: c_1 - theta_1 (Q a - d_1)",
        "k = 2: c_2 - theta_2 (Q a - d_2)",
        "k = 2: variance - eq. (8), line 1",
        "k = 2: eq. (8), line 1 - line 2",
        "k = 3: c_1 - theta_1 (Q a - d_1)",
        "k = 3: c_2 - theta_2 (Q a - d_2)",
        "k = 3: c_3 - theta_3 (Q a - d_3)",
        "k = 3: variance - eq. (8), line 1",
        "k = 3: eq. (8), line 1 - line 2",
        "k = 2: minimum - eq. (10)",
        "k = 2: a* - theta (1 - S^-1 u)",
        "k = 3 (i): A - Q S Q",
        "k = 3 (i): b - Q (S 1 - u)",
        "k = 3 (i): c - (1'S1 - 2 1'u + sum w C_mm)",
        "(ii) for a generic 3 x 3 S: solves and minimum",
        "(iii) trial 0: minimum - eq. (10)",
        "(iii) trial 1: minimum - eq. (10)",
        "(iii) trial 2: minimum - eq. (10)",
        "(iii) trial 3: minimum - eq. (10)",
        "(iii) trial 4: minimum - eq. (10)",
        "k = 2: A a* - b",
        "k = 2: S w / W - u (S^-1 u = w / W)",
        "k = 2: u'S^-1 u - closed form",
        "k = 3: A a* - b",
        "k = 3: S w / W - u (S^-1 u = w / W)",
        "k = 3: u'S^-1 u - closed form",
        "k = 4: A a* - b",
        "k = 4: S w / W - u (S^-1 u = w / W)",
        "k = 4: u'S^-1 u - closed form",
        "any common C, k = 2: A a* - b",
        "any common C, k = 3: A a* - b",
        "W (bound - value) - certificate",
        "violations of the upper bound in 20000 draws",
        "closed form = linear solve to 1e-9 (relative)",
        "PNPU - eq. (7) at a = (theta_1, theta_2 (1 - eta))",
        "PNNU - eq. (7) at a = (theta_1 (1 - eta), theta_2)",
        "PNPU minimum - the paper's",
        "optimum of eq. (7) - Theorems 3 + 4",
        "PNPU gap - eq. (12)",
        "PNNU gap - eq. (12)",
        "eta*_PU - (w_2 - w_1) / (w_1 + w_2)",
        "eta*_NU - (w_1 - w_2) / (w_1 + w_2)",
        "PNPU gap at rho_2 = -rho_1",
        "PNNU gap at rho_2 = -rho_1",
        "k = 2: eq. (7) at a + t theta - at a",
        "k = 2: C_m 1 (so A theta = 0)",
        "k = 3: eq. (7) at a + t theta - at a",
        "k = 3: C_m 1 (so A theta = 0)",
        "k = 2: reduced - (a~, b~, alpha (sum_i a_ik + b_k))",
        "k = 3: reduced - (a~, b~, alpha (sum_i a_ik + b_k))",
        "k = 2: one solution",
        "k = 2: solved family - eq. (14)",
        "k = 3: one solution",
        "k = 3: solved family - eq. (14)",
        "k = 2: variance - Theorem 7",
        "k = 2: Theorem 2 route - Theorem 7",
        "k = 3: variance - Theorem 7",
        "k = 3: Theorem 2 route - Theorem 7",
        "k = 2: minimum - eq. (15)",
        "k = 2: a* - theta_1 (1 - S^-1 u)",
        "k = 3: A - Q S Q",
        "k = 3: b - Q (S 1 - u)",
        "k = 3: c - (1'S1 - 2 1'u + diagonal terms)",
        "minimum for a generic 2 x 2 S",
        "k = 3, trial 0: minimum - eq. (15)",
        "k = 3, trial 1: minimum - eq. (15)",
        "k = 3, trial 2: minimum - eq. (15)",
        "k = 3, trial 3: minimum - eq. (15)",
        "k = 3, trial 4: minimum - eq. (15)",
        "PNPU - eq. (14) at a_1 = theta_1 (1 + eta)",
        "PNNU - eq. (14) at a_1 = theta_1 (1 - eta)",
        "PNPU at eta - PNNU at -eta",
        "eq. (14) - PNPU at eta = a_1 / theta_1 - 1",
        "eq. (14) - PNNU at eta = 1 - a_1 / theta_1",
        "a* - theta_1 (1 + eta), eta = (w_2 - w_1) / (w_1 + w_2)",
        "a = theta: log-log slopes -1/2 (variance), -1 (range)",
        "a = theta: variance term = range term at n*",
        "a = theta: first n where variance dominates is one step above n*",
        "a = a*: log-log slopes -1/2 (variance), -1 (range)",
        "a = a*: variance term = range term at n*",
        "a = a*: first n where variance dominates is one step above n*",
        "exact root - (b l / 3 + sqrt(u + v))",
        "(sqrt u + sqrt v)^2 - (u + v) - 2 sqrt(u v)",
        "stated - (b l / 3 + sqrt u + sqrt v)",
        "a = θ (supervised): linear_risk = this R_lin^a",
        "a = θ (supervised): Monte Carlo variance = eq. (44) within 10 %",
        "a = θ (supervised): tail <= delta / N (+ 3 binomial s.e.)",
        "a = θ (supervised): excess <= 2 sup deviation, every draw",
        "a = θ (supervised): excess <= 2 deviation <= bound < 1 (95 %)",
        "a = a* (equal covariance): linear_risk = this R_lin^a",
        "a = a* (equal covariance): Monte Carlo variance = eq. (44) within 10 %",
        "a = a* (equal covariance): tail <= delta / N (+ 3 binomial s.e.)",
        "a = a* (equal covariance): excess <= 2 sup deviation, every draw",
        "a = a* (equal covariance): excess <= 2 deviation <= bound < 1 (95 %)",
        "eq. (7) / §5.2 linear_risk: sympy = sslkit",
        "Thm 2 estimator_variance: sympy = sslkit",
        "Thm 3 optimal_a: sympy = sslkit",
        "Thm 3 minimum_variance: sympy = sslkit",
        "Thm 4 equal_covariance_a: sympy = sslkit",
        "Thm 4 variance_reduction_equal_cov: sympy = sslkit",
        "Thm 5 pnu_variance_gap: sympy = sslkit",
        "Thm 7 symmetric_estimator_variance: sympy = sslkit",
        "Thm 8 symmetric_minimum_variance: sympy = sslkit",
    ],
    "b_theory": [
        "(a) S_k = Q/m**2: line 1 - (alpha (5) + constant)",
        "(a) S_k = Q/m: line 1 - (alpha (5) + constant)",
        "(b) S_k = Q/m: line 1 - line 2",
        "(b) S_k of eq. (2): line 1 - line 2 is not 0",
        "(b) S_k of eq. (2): line 1 - line 2 at m = 1",
        "(b) S_k of eq. (2): line 1 - line 2 at alpha = 1",
        "(c) S_k of eq. (2), lambda = (1 - alpha)/alpha: line 1 - line 2",
        "alpha = 0.3: |line 3 - line 2| < 1e-10",
        "alpha = 0.9: |line 3 - line 2| < 1e-10",
        "alpha = 1.0: |line 3 - line 2| < 1e-10",
        "weighted alpha-MMD - w'K_* w, on 1'w = 1",
        "weighted alpha-MMD at w_p - eq. (6)",
        "FW score x p - f of eq. (7), x_0",
        "FW score x p - f of eq. (7), x_1",
        "FW score x p - f of eq. (7), x_2",
        "FW score x p - f of eq. (7), x_3",
        "uniform step - Algorithm 1's running mean",
        "alpha = 0.5: Frank-Wolfe with replacement = GKH",
        "alpha = 0.5: Frank-Wolfe without = GKHR",
        "alpha = 0.9: Frank-Wolfe with replacement = GKH",
        "alpha = 0.9: Frank-Wolfe without = GKHR",
        "alpha = 1.0: Frank-Wolfe with replacement = GKH",
        "alpha = 1.0: Frank-Wolfe without = GKHR",
        "Lemma B.3 on 200 cases: max <= 0",
        "alpha = 0.01: whole set = (1 - alpha)^2 K-bar",
        "alpha = 0.3: whole set = (1 - alpha)^2 K-bar",
        "alpha = 0.7: whole set = (1 - alpha)^2 K-bar",
        "alpha = 1.0: whole set = (1 - alpha)^2 K-bar",
        "200 subsets: alpha_mmd2 = dense eq. (6) to 1e-5",
        "Assumption 5.5 at every step",
        "alpha-MMD^2 <= Theorem 5.6's bound at every p",
        "1/sqrt m <= sqrt(log m / m) just for m >= 3",
        "m = 40: auto_alpha = left end",
        "m = 40: table4_in_interval = alphas >= left end",
        "m = 250: auto_alpha = left end",
        "m = 250: table4_in_interval = alphas >= left end",
        "m = 400: auto_alpha = left end",
        "m = 400: table4_in_interval = alphas >= left end",
        "m = 4000: auto_alpha = left end",
        "m = 4000: table4_in_interval = alphas >= left end",
        "MMD of GKHR's selection falls as alpha rises",
        "A H_k / k - the recursion at equality",
        "t_1 - A",
        "sum_2^k 1/j - (H_k - 1)",
        "int_1^k dx / x - log k",
        "(2 + log k) k - (1 + log k)(k + 1) - (k - 1 - log k)",
        "g(x) = x - 1 - log x at x = 1",
        "g'(x) - (1 - 1/x)",
        "A = 1, k <= 10^5: t_k = H_k / k",
        "A = 1, k <= 10^5: t_k < lemma_b1_bound",
        "A = 1, k <= 10^5: t_k > log k / (k + 1)",
        "eq. (11) as printed - alpha 1/n - (1 - alpha) K^-1 1 / (1'K^-1 1)",
        "(p_alpha - K w-hat)_1 - its entry 2",
        "(p_alpha - K w-hat)_1 - its entry 3",
        "F(w-hat) - (1 - alpha)^2 / (1'K^-1 1)",
        "F(1/n) - C_alpha^2 (Lemma B.6)",
        "Delta_alpha(w) - (g(w) - g(w_*)), 1'w = 1",
        "alpha = 0.3: affine_minimiser = eq. (11)",
        "alpha = 0.3: affine_minimiser = KKT",
        "alpha = 0.3: its alpha-MMD^2 = the minimum",
        "alpha = 0.9: affine_minimiser = eq. (11)",
        "alpha = 0.9: affine_minimiser = KKT",
        "alpha = 0.9: its alpha-MMD^2 = the minimum",
        "alpha = 1.0: affine_minimiser = eq. (11)",
        "alpha = 1.0: affine_minimiser = KKT",
        "alpha = 1.0: its alpha-MMD^2 = the minimum",
        "g(w_(p+1)) - the expansion of (12)",
        "(12) along the GKHR run, every step",
        "linear kernel on {-1, 1}: (e - w)'K(e - w) = 4K",
        "alpha = 0.3: Lemma B.2 at every p",
        "alpha = 0.3: M_alpha^2 within 1e-6 of its lower bound",
        "alpha = 0.3: M_alpha^2 <= C_alpha^2",
        "alpha = 0.7: Lemma B.2 at every p",
        "alpha = 0.7: M_alpha^2 within 1e-6 of its lower bound",
        "alpha = 0.7: M_alpha^2 <= C_alpha^2",
        "alpha = 0.9293: Lemma B.2 at every p",
        "alpha = 0.9293: M_alpha^2 within 1e-6 of its lower bound",
        "alpha = 0.9293: M_alpha^2 <= C_alpha^2",
        "alpha = 1: Lemma B.2 at every p",
        "alpha = 1: M_alpha^2 within 1e-6 of its lower bound",
        "alpha = 1: M_alpha^2 <= C_alpha^2",
        "alpha = 0.3: steps above the rate term alone",
        "B.4: <phi1 (x) phi2 (x), phi1 (x) phi2 (y)> - k1 k2",
        "B.4: <h (x) m, phi1 (x) phi2 (x)> - h(x) m(x)",
        "B.4: ||h (x) m||^2 - ||h||^2 ||m||^2",
        "B.5: ||f + g||^2 - (a0^2 + (a1 + b0)^2 / 2 + b1^2)",
        "B.5: ||f||^2 + ||g||^2 - ||f + g||^2 - (a1 - b0)^2 / 2",
        "B.5: concatenated features' kernel - (k1 + k2)",
        "product of Gaussians - Gaussian with 1/s^2 = 1/s1^2 + 1/s2^2",
        "Schur product of two Gram matrices is PSD (200 digits)",
        "E[(Y - h)^2 | x] - App. C's line - m^2",
        "K_m^2 + 2 K_h K_m + K_h^2 - (K_h + K_m)^2",
        "s(x) > 0 on the 300 points",
        "the corrected bound holds on every subset",
        "the printed (squared) bound fails on some subset",
        "gap / MMD^2 grows with n",
        "gap / MMD^2 grows more than 5-fold, n = 50 to 800",
        "gap / MMD <= corrected K_c",
    ],
    "c_theory": [
        "d/dt f(S + t e) at 0 - grad L_S' G_e",
        "grad L_S - mean (p_i - e_y_i) [1, h_i]'",
        "alpha_t term of exact - eq. (7)",
        "alpha_t^2 term of exact - eq. (7) is not 0",
        "alpha_t term of the exact gain - lambda_t grad' G_e",
        "alpha_t^2 term + lambda_t^2 / 2 G_e' H G_e",
        "log-log slope of the error within 0.05 of 2",
        "Retrieve's first pick = argmax of eq. (7)'s gain",
        "Retrieve's first gain = that maximum",
        "last_layer_gradients = autograd to 1e-12, 3 losses",
        "labeled_gradient = autograd to 1e-12",
        "closed forms = autograd to 1e-12",
        "App. B's formulas differ from +-autograd by > 1e-2",
        "max of |d l_u / d z_0| - 16/27",
        "16/27 > 1/2",
        "C = 2..6: 1/2 < max found <= 16/27",
        "S = []: f(S) = one_step_objective",
        "S = [3]: f(S) = one_step_objective",
        "S = [0, 2, 5]: f(S) = one_step_objective",
        "S = [0, 1, 2, 3, 4, 5, 6, 7]: f(S) = one_step_objective",
        "f(S) - f({}) = f1 + f2 - alpha lambda g_hat_max |S|, 256 subsets",
        "f_hat: alpha-submodular, every triple",
        "f_hat, paper's alpha: every triple",
        "f_hat: monotone, every pair",
        "f: fails on some triple in every row",
        "f: some negative gain in every row",
        "over half the negative gains negative in (7)",
        "under 5 % of failures have G_X(e) >= 0",
        "G(e) < (1 - alpha) G(e): the counterexample",
        "a failure with G_X(e) < 0 was found",
        "Lemma 1 for f_hat, every instance",
        "§3's stochastic bound is negative",
        "naive Retrieve's worst ratio > stochastic's",
        "CORDS' selection differs on some instance",
    ],
}


@functools.cache
def page_checks(name: str) -> dict:
    """claim -> result of every check the page shows (its ``CHECKS``), the page run once per session."""
    return run_page(name)["CHECKS"]


@pytest.mark.slow  # runs the page: minutes
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_page_shows_exactly_these_checks(name):
    assert list(page_checks(name)) == EXPECTED[name]


@pytest.mark.slow
@pytest.mark.parametrize("name, claim", [(name, claim) for name, claims in EXPECTED.items() for claim in claims])
def test_check_holds(name, claim):
    result = page_checks(name).get(claim, False)
    assert holds(result), f"{name}: {claim!r} gives {result}"
