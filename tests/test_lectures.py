"""The three lectures: each method written out from scratch equals the library, and the pages are built to teach.

The from-scratch code of a_lecture (paper A's rewritten risk, a*, the non-negative correction), c_lecture (Retrieve's
one-step gain and stochastic greedy) and b_lecture (GKHR) is repeated here, short as it is on the pages, and checked
against ``sslkit`` on inputs other than the pages' toys. The page checks: learning goals and a reading order at the
top, 3-5 exercises each followed by a folded solution cell (tags ``hide-cell`` and ``solution``) that asserts its
answer, no ``assert`` in any other cell, shown code and printed output at most 88 columns.
"""

import math
import re
from pathlib import Path

import jupytext
import nbformat
import numpy as np
import pytest
import torch
import torch.nn.functional as F

from sslkit.algorithms import Batch, FitContext, OursEC
from sslkit.callbacks import CoresetSelection
from sslkit.coreset import Retrieve
from sslkit.risk import equal_covariance_a, linear_risk, loss_covariances, optimal_a, partial_risks
from sslkit.select import GKHR

pytestmark = pytest.mark.usefixtures("one_thread")

ROOT = Path(__file__).resolve().parents[1]
LECTURES = {"a_lecture": "paper_a", "b_lecture": "paper_b", "c_lecture": "paper_c"}
WIDTH = 88


# ----------------------------------------------------------------------------- paper A, as on a_lecture
def rewritten_risk(L_l, y_l, L_u, theta, a, nonnegative=False):
    k = len(theta)
    member = (y_l == np.arange(k)[:, None]).astype(float)
    R = member @ L_l / member.sum(1)[:, None]
    R_u = L_u.mean(0)
    delta = R_u - theta @ R + theta * np.diag(R)
    if nonnegative:
        delta = np.maximum(delta, 0.0)
    return np.sum(a * np.diag(R)) + np.sum((1 - a / theta) * delta)


def solve_a_star(C, theta, n):
    k = len(theta)
    w, Q, d = theta**2 / n, np.diag(1 / theta), 1 - np.eye(k)
    A = sum(w[m] * Q @ C[m] @ Q for m in range(k))
    b = sum(w[m] * Q @ C[m] @ d[m] for m in range(k))
    return np.linalg.solve(A, b)


def rewritten_risk_torch(model, x_l, y_l, x_u, theta, a):
    L_l = -torch.log_softmax(model(x_l), dim=1)
    L_u = -torch.log_softmax(model(x_u), dim=1)
    member = F.one_hot(y_l, len(theta)).T.float()
    R = member @ L_l / member.sum(1)[:, None]
    delta = (L_u.mean(0) - theta @ R + theta * torch.diagonal(R)).clamp(min=0)
    return (a * torch.diagonal(R)).sum() + ((1 - a / theta) * delta).sum()


def _losses(rng, k, n_l, n_u):
    y = np.concatenate([np.arange(k), rng.integers(0, k, n_l - k)])  # every class present
    return rng.exponential(size=(n_l, k)), y, rng.exponential(size=(n_u, k))


@pytest.mark.parametrize("k", [2, 3, 5])
def test_rewritten_risk_from_scratch_equals_linear_risk_to_the_last_digit(k):
    from sslkit.risk import component_risks, unlabeled_risks

    rng = np.random.default_rng(k)
    theta = rng.dirichlet(np.ones(k))
    L_l, y, L_u = _losses(rng, k, 40, 7)  # few unlabeled rows: some Delta_j is negative
    R, R_u = component_risks(L_l, y, k), unlabeled_risks(L_u)
    assert (partial_risks(R, R_u, theta) < 0).any() or k == 2
    for a in (theta, rng.normal(size=k), equal_covariance_a(theta, np.bincount(y, minlength=k))):
        for nn in (False, True):
            assert rewritten_risk(L_l, y, L_u, theta, a, nn) == linear_risk(R, R_u, theta, a, nonnegative=nn)


def test_the_correction_changes_the_risk_where_a_delta_is_negative():
    rng = np.random.default_rng(7)
    theta = np.array([0.2, 0.3, 0.5])
    L_l, y, L_u = _losses(rng, 3, 30, 3)
    L_u[:, 0] = 0.0  # R_U1 = 0 < sum_{i != 1} theta_i R_i1: Delta_1 < 0
    a = np.array([0.1, 0.3, 0.5])  # 1 - a_1 / theta_1 = 0.5
    raw, nn = rewritten_risk(L_l, y, L_u, theta, a), rewritten_risk(L_l, y, L_u, theta, a, True)
    R = np.stack([L_l[y == i].mean(0) for i in range(3)])
    delta_1 = -(theta[1] * R[1, 0] + theta[2] * R[2, 0])
    np.testing.assert_allclose(nn - raw, 0.5 * -delta_1, rtol=1e-12)


@pytest.mark.parametrize("k", [2, 4])
def test_a_star_from_eq_8_and_9_equals_optimal_a_up_to_rounding(k):
    rng = np.random.default_rng(10 + k)
    theta = rng.dirichlet(np.ones(k))
    L_l, y, _ = _losses(rng, k, 200, 1)
    C = loss_covariances(L_l, y, k, shrinkage=0.5)
    n = np.bincount(y, minlength=k)
    np.testing.assert_allclose(solve_a_star(C, theta, n), optimal_a(C, theta, n), rtol=1e-10, atol=1e-12)
    same = np.stack([C[0]] * k)  # equal covariances: a* is Ours (EC)'s closed form (exercise 2)
    np.testing.assert_allclose(solve_a_star(same, theta, n), equal_covariance_a(theta, n), rtol=1e-10)


@pytest.mark.parametrize("unlabeled_from", [0, 1])
def test_torch_training_loss_from_scratch_equals_ours_ec_with_clipping(unlabeled_from):
    """Value = OursEC's logged nn-corrected loss; gradient = nn_rule='clip' (the paper's max{0, Delta_j} as written).
    With unlabeled inputs of one class only, a Delta_j is negative, so the clipped branch is exercised."""
    torch.manual_seed(unlabeled_from)
    theta = np.array([0.4, 0.6])
    y = torch.tensor([0] * 12 + [1] * 8)
    x_l = torch.randn(20, 3) + 2.0 * (1 - 2 * y[:, None].float())
    x_u = torch.randn(50, 3) + (2.0 if unlabeled_from == 0 else -2.0)
    model = torch.nn.Linear(3, 2)
    with torch.no_grad():  # a confident model: far from its own class an input's loss is large
        model.weight.copy_(torch.tensor([[1.0, 1.0, 1.0], [-1.0, -1.0, -1.0]]) + 0.1 * torch.randn(2, 3))
    algo = OursEC(prior=theta, nn_rule="clip")
    algo.setup(model, FitContext(num_classes=2, data={"y_l": y}))
    out = algo.loss(model, Batch(x_l=x_l, y_l=y, x_u=x_u))
    assert float(out.logs["nn_violations"]) >= 1
    lib_grad = torch.autograd.grad(out.loss, list(model.parameters()))
    mine = rewritten_risk_torch(
        model, x_l, y, x_u, torch.tensor(theta, dtype=torch.float32), torch.tensor(algo.a_, dtype=torch.float32)
    )
    torch.testing.assert_close(mine.detach(), out.logs["loss"])
    for g_mine, g_lib in zip(torch.autograd.grad(mine, list(model.parameters())), lib_grad):
        torch.testing.assert_close(g_mine, g_lib)


# ----------------------------------------------------------------------------- paper C, as on c_lecture
def retrieve_greedy(G, z_l, h_l, y_l, k, lr, lam, epsilon=0.01, seed=0):
    C = z_l.shape[1]

    def labeled_grad(step):
        step = step.detach().requires_grad_(True)
        loss = F.cross_entropy(z_l + step[:C] + h_l @ step[C:].view(C, -1).T, y_l)
        return torch.autograd.grad(loss, step)[0]

    N = G.shape[0]
    s = min(N, math.ceil(N / k * math.log(1 / epsilon)))
    gen = torch.Generator().manual_seed(seed)
    step = -lr * labeled_grad(torch.zeros(G.shape[1]))
    left = np.arange(N)
    picks, gains = [], []
    for t in range(k):
        pos = torch.randperm(N - t, generator=gen)[:s].numpy()
        gain = lr * lam * G[left[pos]] @ labeled_grad(step)
        best = pos[int(torch.argmax(gain))]
        picks.append(int(left[best]))
        gains.append(float(gain.max()))
        step = step - lr * lam * G[left[best]]
        left[best] = left[N - t - 1]
    return picks, gains


@pytest.mark.parametrize("seed", [0, 3])
def test_retrieve_from_scratch_picks_what_sslkit_retrieve_picks(seed):
    gen = torch.Generator().manual_seed(seed)
    n_l, n_u, C, D, k = 15, 300, 3, 6, 25
    h_l = torch.randn(n_l, D, generator=gen)
    z_l = torch.randn(n_l, C, generator=gen)
    y_l = torch.randint(0, C, (n_l,), generator=gen)
    g0 = torch.randn(n_u, C, generator=gen) * (torch.rand(n_u, 1, generator=gen) < 0.7)  # masked rows: zero
    h_u = torch.randn(n_u, D, generator=gen)
    G = torch.cat([g0, (g0[:, :, None] * h_u[:, None, :]).reshape(n_u, -1)], dim=1)
    s = math.ceil(n_u / k * math.log(100))
    assert s * s > n_u  # the regime where sslkit draws candidates as the lecture does
    lib = Retrieve(k, lr=0.05, lam=0.7, seed=seed).fit(G, z_l, y_l, labeled_features=h_l)
    picks, gains = retrieve_greedy(G, z_l, h_l, y_l, k, 0.05, 0.7, seed=seed)
    assert picks == lib.indices_.tolist()
    torch.testing.assert_close(torch.tensor(gains, dtype=torch.float32), lib.gains_, rtol=1e-4, atol=1e-7)


def test_coreset_selection_schedule_is_what_c_lecture_prints():
    """c_lecture prints the selection hook's schedule; with a warm start the first hook is the input check
    (every=None), which the page once printed as 'then every None'."""
    selection = CoresetSelection("retrieve", k=90, every=20, warm_epochs=10, seed=0)
    hooks = selection.hooks()
    assert [h.name for h in hooks] == ["coreset_check", "coreset"] and hooks[0].every is None
    select = next(h for h in hooks if h.name == "coreset")
    assert (select.start, select.every) == (10, 20)
    assert [c for c in range(80) if select.due(c)] == [10, 30, 50, 70]


# ----------------------------------------------------------------------------- paper B, as on b_lecture
def test_gkhr_from_scratch_picks_what_sslkit_gkhr_picks():
    rng = np.random.default_rng(5)
    X = np.concatenate([rng.normal(c, 0.7, (150, 2)) for c in ([0, 0], [3, 1], [-2, 2])])
    m = 20
    rdss = GKHR(m=m, device="cpu").fit(X)
    sigma, alpha = rdss.bandwidth_, rdss.alpha_
    K = np.exp(-((X[:, None, :] - X[None, :, :]) ** 2).sum(-1) / sigma**2)
    mu, S, picked = K.mean(axis=1), np.zeros(len(X)), []
    for p in range(1, m + 1):
        objective = S - alpha * mu
        objective[picked] = np.inf
        i = int(np.argmin(objective))
        picked.append(i)
        S = (1 - 1 / p) * S + (1 / p) * K[i]
    assert picked == list(rdss.indices_)


# ----------------------------------------------------------------------------- the pages
def _cells(name):
    return jupytext.read(ROOT / "notebooks" / f"{name}.md").cells


def _tags(cell):
    return set(cell.metadata.get("tags", []))


def _shown_code(cell):
    return cell.cell_type == "code" and not _tags(cell) & {"remove-cell", "remove-input"}


@pytest.mark.parametrize("name", LECTURES)
def test_lecture_opens_with_goals_and_a_reading_order(name):
    text = (ROOT / "notebooks" / f"{name}.md").read_text()
    head = text[: text.index("## The problem")]
    assert "{admonition} Learning goals" in head
    assert "What to read first" in head
    for link in ("<ssl_primer>", f"<../book/{LECTURES[name]}>", "<../book/references>"):
        assert link in head, f"{name}: the reading order does not link {link}"


@pytest.mark.parametrize("name", LECTURES)
def test_lecture_has_three_to_five_exercises_each_with_a_folded_solution_that_checks_itself(name):
    cells = _cells(name)
    exercises = [i for i, c in enumerate(cells) if c.cell_type == "markdown" and "{admonition} Exercise" in c.source]
    solutions = [i for i, c in enumerate(cells) if "solution" in _tags(c)]
    assert 3 <= len(exercises) <= 5, f"{name} has {len(exercises)} exercises"
    assert len(solutions) == len(exercises)
    for i, j in zip(exercises, solutions):
        assert j == i + 1, f"{name}: exercise cell {i} is not followed by its solution"
        cell = cells[j]
        assert cell.cell_type == "code" and "hide-cell" in _tags(cell), f"{name}: solution {j} is not folded"
        assert re.search(r"^\s*assert |np\.testing\.assert_", cell.source, re.M), f"{name}: solution {j} checks nothing"


@pytest.mark.parametrize("name", LECTURES)
def test_no_assert_outside_solution_cells(name):
    for i, cell in enumerate(_cells(name)):
        if cell.cell_type == "code" and "solution" not in _tags(cell):
            assert not re.search(r"^\s*assert\b", cell.source, re.M), f"{name} cell {i}: move the assert into tests/"


@pytest.mark.parametrize("name", [*LECTURES, "ssl_primer"])
def test_shown_code_and_printed_output_fit_88_columns(name):
    for i, cell in enumerate(_cells(name)):
        if _shown_code(cell):
            wide = [line for line in cell.source.splitlines() if len(line) > WIDTH]
            assert not wide, f"{name} cell {i}: code wider than {WIDTH} columns: {wide[0]!r}"
    twin = nbformat.read(ROOT / "notebooks" / f"{name}.ipynb", as_version=4)
    for i, cell in enumerate(twin.cells):
        if cell.cell_type != "code" or _tags(cell) & {"remove-cell", "remove-output"}:
            continue
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            if "text/html" in data or "image/png" in data:
                continue
            text = out.get("text") or data.get("text/plain", "")
            wide = [line for line in str(text).splitlines() if len(line) > WIDTH]
            assert not wide, f"{name}.ipynb cell {i}: output wider than {WIDTH} columns: {wide[0][:60]!r}"
