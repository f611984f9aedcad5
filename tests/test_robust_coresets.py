"""CRUST (per-pseudo-class facility location, mixup) and the Bayesian coreset (GIGA) of paper C §4 / Figure 5."""

import numpy as np
import pytest
import torch

from sslkit.algorithms import VAT, Batch, CrustMixup, LossOutput, SSLAlgorithm, UnlabeledLosses
from sslkit.callbacks import CoresetSelection
from sslkit.coreset import (
    BayesianCoreset,
    Crust,
    craig_similarity,
    facility_location,
    giga_step,
    mixup,
    proportional_budgets,
)
from sslkit.engine import Trainer
from sslkit.models import MLP


# ---------------------------------------------------------------------------------------------------- CRUST
def test_proportional_budgets():
    assert proportional_budgets([50, 30, 20], 10).tolist() == [5, 3, 2]
    assert proportional_budgets([1, 1, 1], 2).tolist() == [1, 1, 0]  # ties: smaller class
    assert proportional_budgets([7, 2, 1], 5).tolist() == [4, 1, 0]  # 3.5, 1, 0.5 -> 3+1, 1, 0
    b = proportional_budgets([0, 13, 4, 9], 11)
    assert (
        int(b.sum()) == 11
        and b[0] == 0
        and all(abs(float(b[c]) - 11 * n / 26) < 1 for c, n in enumerate([0, 13, 4, 9]))
    )
    assert proportional_budgets([3, 1], 4).tolist() == [3, 1]  # never above n_c
    with pytest.raises(ValueError, match="exceeds"):
        proportional_budgets([2, 2], 5)
    with pytest.raises(ValueError, match="non-negative"):
        proportional_budgets([-1, 2], 1)


def test_crust_is_facility_location_per_class_with_cluster_weights():
    g = torch.Generator().manual_seed(0)
    G = torch.randn(60, 5, generator=g)
    cls = torch.randint(0, 3, (60,), generator=g)
    sel = Crust(12).fit(G, cls)
    counts = torch.bincount(cls, minlength=3)
    assert sel.budgets_.tolist() == proportional_budgets(counts, 12).tolist()
    assert sel.indices_.size == 12 and np.unique(sel.indices_).size == 12
    assert float(sel.weights_.sum()) == 60.0
    for c in range(3):
        members = torch.nonzero(cls == c).reshape(-1)
        S = craig_similarity(G[members])
        order, _ = facility_location(S, int(sel.budgets_[c]))
        assert sel.indices_[sel.classes_ == c].tolist() == members[order].tolist()
        assert bool((cls[sel.indices_[sel.classes_ == c]] == c).all())
        cell = torch.argmax(S[:, order], dim=1)
        assert sel.weights_[sel.classes_ == c].tolist() == torch.bincount(cell, minlength=len(order)).float().tolist()


def test_crust_bad_inputs():
    G = torch.randn(10, 3)
    with pytest.raises(ValueError, match="exceeds"):
        Crust(11).fit(G, torch.zeros(10, dtype=torch.long))
    with pytest.raises(TypeError, match="integer"):
        Crust(2).fit(G, torch.zeros(10))
    with pytest.raises(ValueError, match="labels"):
        Crust(2).fit(G, torch.zeros(9, dtype=torch.long))
    with pytest.raises(ValueError, match="metric"):
        Crust(2, metric="cosine")


def test_mixup_mixes_rows_with_one_beta_draw():
    x = torch.arange(12.0).reshape(6, 2)
    torch.manual_seed(0)
    xm, perm, lam = mixup(x, 1.0)
    assert 0.0 <= lam <= 1.0 and sorted(perm.tolist()) == list(range(6))
    assert torch.allclose(xm, lam * x + (1 - lam) * x[perm])
    torch.manual_seed(0)
    xm2, _, lam2 = mixup(x, 1.0)
    assert lam2 == lam and torch.equal(xm, xm2)
    with pytest.raises(ValueError, match="alpha"):
        mixup(x, 0.0)
    with pytest.raises(ValueError, match="non-empty"):
        mixup(torch.zeros(0, 2))


class Recorder(SSLAlgorithm):
    name, uses_unlabeled, lambda_u = "recorder", True, 1.0

    def unlabeled_losses(self, model, x_u, u_idx=None):
        self.seen_u = x_u
        z = model(x_u)[0]
        return UnlabeledLosses(z.pow(2).sum(1), None, z, None)

    def loss(self, model, batch):
        self.seen = batch
        z = model(batch.x_u)[0]
        per = z.pow(2).sum(1)
        return LossOutput(per.mean(), {"unsup_loss": per.mean().detach()}, UnlabeledLosses(per, None, z, None))


def test_crust_mixup_hands_the_mixed_coreset_batch_to_the_base():
    rec = Recorder()
    algo = CrustMixup(rec, alpha=0.5)
    x_u, w = torch.randn(8, 4), torch.rand(8)
    batch = Batch(torch.randn(2, 4), torch.zeros(2, dtype=torch.long), x_u, torch.arange(8), w)
    model = MLP(4, 2, hidden=(4,))
    torch.manual_seed(3)
    out = algo.loss(model, batch)
    torch.manual_seed(3)
    xm, _, lam = mixup(x_u, 0.5)
    assert torch.allclose(rec.seen.x_u, xm) and rec.seen.u_weight is w and out.logs["mixup_lambda"] == lam
    algo.unlabeled_losses(model, x_u)  # a selection pass: the samples themselves, unmixed
    assert rec.seen_u is x_u


# ---------------------------------------------------------------------------------------------------- GIGA
def unit(v):
    return v / v.norm(dim=-1, keepdim=True)


def test_giga_step_matches_a_brute_force_geodesic_step():
    g = torch.Generator().manual_seed(1)
    G = torch.randn(7, 4, generator=g, dtype=torch.float64) + 0.5
    ell_n, ell = unit(G), unit(G.sum(0))
    ell_w = unit(0.6 * ell_n[2] + 0.4 * ell_n[5])
    n, gamma, _ = giga_step(ell_n, ell, ell_w)
    # direction: the vertex whose tangent at ℓ(w) is best aligned with the target's tangent
    d = ell - (ell @ ell_w) * ell_w
    cos = []
    for j in range(7):
        dj = ell_n[j] - (ell_n[j] @ ell_w) * ell_w
        cos.append(float(dj @ d) / float(dj.norm() * d.norm()))
    assert n == int(np.argmax(cos))
    # step: the exact line search along the geodesic toward ℓ_n
    grid = torch.linspace(0, 1, 200001, dtype=torch.float64)
    path = unit((1 - grid)[:, None] * ell_w + grid[:, None] * ell_n[n])
    assert gamma == pytest.approx(float(grid[torch.argmax(path @ ell)]), abs=2e-5)
    # first iteration: the best-aligned vertex, γ = 1
    n0, g0, _ = giga_step(ell_n, ell, None)
    assert n0 == int(torch.argmax(ell_n @ ell)) and g0 == 1.0


def test_bayesian_coreset_weights_and_approximation():
    g = torch.Generator().manual_seed(0)
    G = torch.randn(200, 40, generator=g) + 0.3
    L = G.sum(0)
    sel = BayesianCoreset(20).fit(G)
    assert sel.indices_.size == 20 and np.unique(sel.indices_).size == 20
    assert bool((sel.weights_ >= 0).all()) and float(sel.weights_.sum()) > 0
    approx = sel.weights_ @ G[sel.indices_]
    err = float((L - approx).norm() / L.norm())
    assert err == pytest.approx(sel.error_, rel=1e-4)
    # the output scaling is the orthogonal projection of L on the coreset's direction
    assert float((L - approx) @ approx) == pytest.approx(0.0, abs=1e-3 * float(L.norm()) ** 2)
    rng = np.random.default_rng(0)
    random_err = np.mean(
        [float((L - 10.0 * G[rng.choice(200, 20, replace=False)].sum(0)).norm() / L.norm()) for _ in range(50)]
    )
    assert err < random_err / 3
    assert BayesianCoreset(60).fit(G).error_ <= err + 1e-6


def test_bayesian_coreset_bad_inputs():
    with pytest.raises(ValueError, match="exceeds"):
        BayesianCoreset(5).fit(torch.randn(4, 2))
    with pytest.raises(ValueError, match="sum to zero"):
        BayesianCoreset(1).fit(torch.tensor([[1.0, 0.0], [-1.0, 0.0]]))


def test_bayesian_coreset_of_a_flat_loss_is_exact_and_says_so():
    """All gradients zero (a saturated model): any weighting is exact; the first k samples with weights N / k,
    error 0 and ``flat_`` set, not a crash in the middle of a training run."""
    bc = BayesianCoreset(3).fit(torch.zeros(12, 4))
    assert bc.indices_.tolist() == [0, 1, 2] and bc.weights_.tolist() == [4.0, 4.0, 4.0]
    assert bc.error_ == 0.0 and bc.iterations_ == 0 and bc.flat_
    assert not BayesianCoreset(3).fit(torch.randn(12, 4, generator=torch.Generator().manual_seed(0))).flat_
    with pytest.raises(ValueError):
        BayesianCoreset(1).fit(torch.tensor([[float("nan"), 0.0]]))
    with pytest.raises(ValueError):
        BayesianCoreset(0)


# ------------------------------------------------------------------------------------------- in a trainer
@pytest.mark.parametrize("strategy", ["crust", "bayesian"])
def test_strategies_run_as_coreset_callbacks(strategy):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(100, 4)).astype(np.float32)
    y = (X[:, 0] > 0).astype(np.int64)
    cb = CoresetSelection(strategy, 20, every=1, warm_epochs=1)
    algo = CrustMixup(VAT(1.0)) if strategy == "crust" else VAT(1.0)
    torch.manual_seed(0)
    tr = Trainer(
        MLP(4, 2, hidden=(8,)),
        algo,
        epochs=3,
        batch_size=8,
        unlabeled_batch_size=10,
        hooks=cb.hooks(),
        iterations_per_epoch="unlabeled",
        progress=False,
        seed=0,
    )
    tr.fit(X[:20], y[:20], X[20:])
    assert len(cb.selections_) == 2 and all(s["indices"].numel() == 20 for s in cb.selections_)
    assert tr.history_[-1]["iterations"] == 2
