"""sslkit.coreset.retrieve: Retrieve's greedy (paper C Algorithm 2, eq. (5)-(7)) on the last-layer problem of
coreset_problem.py (its gradients: test_coreset_gradients.py).

The references here are independent of the library's closed forms: autograd through a real
``nn.Linear`` for every gradient, the one-step objective f(S) of eq. (6) and the greedy argmax sequence.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from coreset_problem import C, D, last_layer_problem

import sslkit.coreset.retrieve as retrieve_module
from sslkit.coreset import (
    Retrieve,
    batch_means,
    expand_batches,
    labeled_gradient,
    one_step_objective,
    stochastic_candidates,
)

pytestmark = pytest.mark.usefixtures("one_thread")  # conftest.py


@pytest.fixture()
def problem():
    return last_layer_problem()


# --------------------------------------------------------------------------------------------------
# references for Retrieve: f(S) of eq. (6) and grad L_S(theta^S) by autograd through nn.Linear
# --------------------------------------------------------------------------------------------------


def stepped_linear(p, subset, lr, lam, weight=True, cords=False):
    """theta^S as (W, b) leaves: paper eq. (5), or CORDS' theta_t - eta sum_S G_j (D4)."""
    lin, h_l, y, G = p["lin"], p["h_l"], p["y"], p["G"]
    W = lin.weight.detach().clone().requires_grad_()
    b = lin.bias.detach().clone().requires_grad_()
    gb, gW = torch.autograd.grad(F.cross_entropy(h_l @ W.T + b, y), (b, W))
    if cords:
        gb, gW = torch.zeros_like(gb), torch.zeros_like(gW)
    if not weight:
        gW = torch.zeros_like(gW)
    Gs = G[list(subset)].sum(0) if len(subset) else torch.zeros(G.shape[1], dtype=G.dtype)
    step = lr if cords else lr * lam
    W1 = W.detach() - lr * gW - (step * Gs[C:].view(C, D) if weight else 0.0)
    b1 = b.detach() - lr * gb - step * Gs[:C]
    return W1.requires_grad_(), b1.requires_grad_()


def f_reference(p, subset, lr, lam, weight=True):
    W, b = stepped_linear(p, subset, lr, lam, weight)
    return float(-F.cross_entropy(p["h_l"] @ W.detach().T + b.detach(), p["y"]))


def outer_gradient_reference(p, subset, lr, lam, weight=True, cords=False, malformed=False):
    W, b = stepped_linear(p, subset, lr, lam, weight, cords)
    z = p["h_l"] @ W.T + b
    if malformed:  # CORDS' D3: soft-target CE with targets y_i of shape (n, 1)
        loss = -(p["y"][:, None].double() * F.log_softmax(z, 1)).sum(1).mean()
    else:
        loss = F.cross_entropy(z, p["y"])
    gb, gW = torch.autograd.grad(loss, (b, W))
    return torch.cat([gb, gW.flatten()]) if weight else gb


def brute_force_greedy(p, k, lr, lam, weight=True, cords=False, sizes=None):
    """Algorithm 2 with all points as candidates (or r rounds of ``sizes``), by autograd."""
    G = p["G"] if weight else p["G"][:, :C]
    chosen, gains = [], []
    for t, size in enumerate(sizes or [1] * k):
        v = outer_gradient_reference(p, chosen, lr, lam, weight, cords, malformed=cords and t > 0)
        g = (G @ v) * (1.0 if cords else lr * lam)
        g[chosen] = -math.inf
        order = torch.sort(g, descending=True, stable=True).indices[:size].tolist()  # ties: smaller index
        chosen += order
        gains += g[order].tolist()
    return chosen, gains


def fit(p, k, weight=True, **kw):
    G = p["G"] if weight else p["G"][:, :C]
    return Retrieve(k, **kw).fit(G, p["Z"], p["y"], p["h_l"] if weight else None)


# --------------------------------------------------------------------------------------------------
# Retrieve
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("weight", [True, False], ids=["bias+weight", "bias"])
def test_one_step_objective_is_eq6(problem, weight):
    G = problem["G"] if weight else problem["G"][:, :C]
    H = problem["h_l"] if weight else None
    for subset in ([], [3], [3, 17, 5]):
        got = one_step_objective(G, problem["Z"], problem["y"], H, subset, lr=0.2, lam=0.7)
        assert got == pytest.approx(f_reference(problem, subset, 0.2, 0.7, weight), rel=1e-12)


def test_taylor_gain_is_first_order_change_of_f(problem):
    """g(e) = f(S + e) - f(S) + O(a^2): the relative error shrinks ~10x when the step shrinks 10x."""
    errors = []
    for lr in (1e-2, 1e-3):
        sel = fit(problem, 6, greedy="naive", lr=lr, lam=0.5)
        idx = sel.indices_.tolist()
        rel = []
        for t in range(6):
            exact = f_reference(problem, idx[: t + 1], lr, 0.5) - f_reference(problem, idx[:t], lr, 0.5)
            rel.append(abs(exact - float(sel.gains_[t])) / abs(exact))
        errors.append(max(rel))
    assert errors[1] < 2e-3
    assert errors[0] / errors[1] > 5.0


@pytest.mark.parametrize("weight", [True, False], ids=["bias+weight", "bias"])
@pytest.mark.parametrize("cords", [False, True], ids=["paper", "cords"])
def test_naive_greedy_is_the_brute_force_argmax_sequence(problem, weight, cords):
    lr, lam = 0.5, 0.8  # large steps: the re-linearisation matters
    sel = fit(problem, 12, weight, greedy="naive", lr=lr, lam=lam, cords_compatible=cords)
    ref, ref_gains = brute_force_greedy(problem, 12, lr, lam, weight, cords)
    assert sel.indices_.tolist() == ref
    np.testing.assert_allclose(sel.gains_.numpy(), ref_gains, rtol=1e-9, atol=1e-14)
    assert sel.indices_.dtype == np.int64 and sel.weights_.tolist() == [1.0] * 12
    # the re-linearisation changes the order compared with the first-step gains alone
    first = brute_force_greedy(problem, 1, lr, lam, weight, cords, sizes=[12])[0]
    assert first != ref


@pytest.mark.parametrize("cords", [False, True], ids=["paper", "cords"])
def test_per_batch_retrieve_is_brute_force_on_batch_means(problem, cords):
    """Batch-mean rows are not rank one: the general step (not the g0 (x) h shortcut) is checked too."""
    p = dict(problem, G=batch_means(problem["G"], 4))  # 10 batches of 4
    sel = fit(p, 6, greedy="naive", lr=0.5, lam=0.8, cords_compatible=cords)
    assert sel.indices_.tolist() == brute_force_greedy(p, 6, 0.5, 0.8, cords=cords)[0]
    idx, w = expand_batches(sel.indices_, sel.weights_, 40, 4)
    assert idx.shape == (24,) and w.tolist() == [1.0] * 24


def test_paper_and_cords_choices_select_differently(problem):
    a = fit(problem, 12, greedy="naive", lr=0.5, lam=0.8).indices_.tolist()
    b = fit(problem, 12, greedy="naive", lr=0.5, lam=0.8, cords_compatible=True).indices_.tolist()
    assert a != b


def test_rounds_greedy_is_brute_force_rounds(problem):
    sel = fit(problem, 10, greedy="rounds", rounds=3, lr=0.5, lam=0.8)
    ref, _ = brute_force_greedy(problem, 10, 0.5, 0.8, sizes=[4, 3, 3])
    assert sel.indices_.tolist() == ref
    assert (
        fit(problem, 10, greedy="rounds", rounds=10, lr=0.5, lam=0.8).indices_.tolist()
        == fit(problem, 10, greedy="naive", lr=0.5, lam=0.8).indices_.tolist()
    )


@pytest.mark.parametrize("greedy", ["stochastic", "naive", "rounds"])
def test_no_repeats_full_budget(problem, greedy):
    sel = fit(problem, 40, greedy=greedy, rounds=7)
    assert sorted(sel.indices_.tolist()) == list(range(40))
    assert sel.gains_.shape == (40,) and set(sel.timings_) == {"setup", "loop", "total"}


def test_stochastic_candidate_count(problem, monkeypatch):
    assert stochastic_candidates(50_000, 5_000, 0.01) == 47  # ceil(10 ln 100) = ceil(46.05)
    assert stochastic_candidates(50_000, 5_000, 0.01, cords_compatible=True) == 46  # CORDS' int()
    assert stochastic_candidates(10, 9, 0.5, cords_compatible=True) == 1
    assert stochastic_candidates(100, 1, 1e-3) == 100  # capped at n
    seen = []
    real = retrieve_module._distinct_positions

    def spy(r, s, gen):
        pos = real(r, s, gen)
        seen.append((r, s, pos.size, len(set(pos.tolist()))))
        return pos

    monkeypatch.setattr(retrieve_module, "_distinct_positions", spy)
    sel = fit(problem, 30, epsilon=0.2)
    s = math.ceil(40 / 30 * math.log(5))  # 3
    assert sel.n_candidates_ == s
    assert seen == [(40 - t, min(s, 40 - t), min(s, 40 - t), min(s, 40 - t)) for t in range(30)]


def test_distinct_positions_are_uniform():
    gen = torch.Generator().manual_seed(0)
    for s, r in [(3, 50), (20, 30)]:  # rejection branch and permutation branch
        counts = np.zeros(r)
        for _ in range(3000):
            pos = retrieve_module._distinct_positions(r, s, gen)
            assert len(set(pos)) == s and pos.min() >= 0 and pos.max() < r
            counts[pos] += 1
        expected = 3000 * s / r
        assert np.abs(counts - expected).max() < 5 * math.sqrt(expected)


def test_stochastic_with_all_candidates_is_naive(problem):
    a = fit(problem, 8, epsilon=1e-30, lr=0.5)  # s >= N: every step sees all points
    assert a.n_candidates_ == 40
    assert a.indices_.tolist() == fit(problem, 8, greedy="naive", lr=0.5).indices_.tolist()


def test_stochastic_is_seeded(problem):
    a = fit(problem, 10, seed=3).indices_.tolist()
    assert a == fit(problem, 10, seed=3).indices_.tolist()
    assert a != fit(problem, 10, seed=4).indices_.tolist()


def test_stochastic_picks_the_best_candidate(problem):
    """Each stochastic pick is at most the naive pick's gain at the same S (same S via the stepped state)."""
    sel = fit(problem, 10, lr=0.5, lam=0.8)
    idx = sel.indices_.tolist()
    for t in range(10):
        v = outer_gradient_reference(problem, idx[:t], 0.5, 0.8)
        g = (problem["G"] @ v) * 0.4
        assert float(sel.gains_[t]) == pytest.approx(float(g[idx[t]]), rel=1e-9)
        g[idx[:t]] = -math.inf
        assert float(sel.gains_[t]) <= float(g.max()) + 1e-15


def test_float32_input_and_numpy_input(problem):
    a = fit(problem, 8, greedy="naive", lr=0.5).indices_.tolist()
    b = (
        Retrieve(8, greedy="naive", lr=0.5)
        .fit(problem["G"].float().numpy(), problem["Z"].float(), problem["y"].numpy(), problem["h_l"].float())
        .indices_.tolist()
    )
    assert a == b


# --------------------------------------------------------------------------------------------------
# bad input
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        (dict(k=0), ValueError, "k must be positive"),
        (dict(k=-3), ValueError, "k must be positive"),
        (dict(k=2.5), TypeError, "k must be an integer"),
        (dict(k=5, epsilon=0.0), ValueError, r"epsilon must lie in the open interval \(0, 1\)"),
        (dict(k=5, epsilon=1.0), ValueError, "open interval"),
        (dict(k=5, epsilon=float("nan")), ValueError, "finite"),
        (dict(k=5, greedy="lazy"), ValueError, "greedy must be one of"),
        (dict(k=5, greedy="rounds", rounds=0), ValueError, "rounds must be positive"),
        (dict(k=5, greedy="rounds", rounds=6), ValueError, "rounds = 6 exceeds k = 5"),
        (dict(k=5, lr=0.0), ValueError, "lr must be positive"),
        (dict(k=5, lam=-1.0), ValueError, "lam must be positive"),
        (dict(k=5, seed=-1), ValueError, "seed"),
    ],
)
def test_bad_hyper_parameters(kwargs, exc, match):
    k = kwargs.pop("k")
    with pytest.raises(exc, match=match):
        Retrieve(k, **kwargs)


def test_bad_fit_inputs(problem):
    G, Z, y, H = problem["G"], problem["Z"], problem["y"], problem["h_l"]
    with pytest.raises(ValueError, match="k = 41 exceeds the number of unlabeled samples"):
        Retrieve(41).fit(G, Z, y, H)
    bad = G.clone()
    bad[3, 2] = float("nan")
    with pytest.raises(ValueError, match="NaN or infinite"):
        Retrieve(5).fit(bad, Z, y, H)
    bad[3, 2] = float("inf")
    with pytest.raises(ValueError, match="NaN or infinite"):
        Retrieve(5).fit(bad, Z, y, H)
    with pytest.raises(ValueError, match="width 24, but the labeled side implies bias only"):
        Retrieve(5).fit(G, Z, y)
    with pytest.raises(ValueError, match=r"width 4, but the labeled side implies bias \+ weight"):
        Retrieve(5).fit(G[:, :C], Z, y, H)
    with pytest.raises(ValueError, match="labeled set is empty"):
        Retrieve(5).fit(G, Z[:0], y[:0], H[:0])
    with pytest.raises(ValueError, match="labeled set is empty"):
        Retrieve(5).fit(G, np.zeros((0, C)), [], None)
    with pytest.raises(ValueError, match="labeled set is empty"):
        labeled_gradient(np.zeros((0, C)), [])
    with pytest.raises(ValueError, match="got 14 labels for 15"):
        Retrieve(5).fit(G, Z, y[:14], H)
    with pytest.raises(ValueError, match="labeled features has 14 rows"):
        Retrieve(5).fit(G, Z, y, H[:14])
    with pytest.raises(ValueError, match=r"labels must lie in \[0, 4\)"):
        Retrieve(5).fit(G, Z, y + 1, H)
    with pytest.raises(TypeError, match="integer class indices"):
        Retrieve(5).fit(G, Z, y.double(), H)
    with pytest.raises(ValueError, match="2-D"):
        Retrieve(5).fit(G[0], Z, y, H)
    with pytest.raises(ValueError, match="labeled logits contains NaN"):
        Retrieve(5).fit(G, Z * float("nan"), y, H)


def test_huge_finite_gradients_are_accepted(problem):
    """The fast finiteness test (a sum) must not reject finite entries whose sum overflows."""
    G = problem["G"].float().clone()
    G[:, 0] = 3e38
    Retrieve(3, greedy="naive").fit(G, problem["Z"], problem["y"], problem["h_l"])
