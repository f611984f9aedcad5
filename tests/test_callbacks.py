"""Paper C Algorithm 1 as a callback (sslkit.callbacks): the schedule of selections, the sampler they drive,
the gradients they use (= autograd), the wall-clock stop, and their errors."""

from __future__ import annotations

import time

import numpy as np
import pytest
import torch
from torch import nn

from sslkit.algorithms import VAT, CrustMixup, FixMatch, OursEC, Supervised
from sslkit.callbacks import CoresetSelection, WallClockStop, warm_start_epochs
from sslkit.coreset import Retrieve
from sslkit.engine import Trainer
from sslkit.models import MLP


def data(seed=0, n_u=120):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(30 + n_u, 5)).astype(np.float32)
    y = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(np.int64)
    return X[:30], y[:30], X[30:]


def last_linear(model) -> nn.Linear:
    return [m for m in model.modules() if isinstance(m, nn.Linear)][-1]


def fit(strategy, *, epochs=7, every=3, warm=0, algo=None, k=40, **opts):
    X_l, y_l, X_u = data()
    cb = CoresetSelection(strategy, k, every=every, warm_epochs=warm, batch_size=10, seed=1, **opts)
    torch.manual_seed(0)
    tr = Trainer(
        MLP(5, 2, hidden=(16,)),
        algo or VAT(1.0),
        epochs=epochs,
        iterations_per_epoch="unlabeled",
        batch_size=10,
        unlabeled_batch_size=10,
        hooks=cb.hooks(),
        progress=False,
        seed=0,
    )
    return tr.fit(X_l, y_l, X_u), cb


def test_selection_schedule_random_start_and_restricted_sampler():
    tr, cb = fit("retrieve", epochs=7, every=3)
    assert [s["epoch"] for s in cb.selections_] == [0, 3, 6]  # before epochs 1, 4, 7
    assert [r["iterations"] for r in tr.history_] == [4] * 7  # ceil(40 / 10) per coreset epoch
    first, last = cb.selections_[0], cb.selections_[-1]
    assert first["indices"].numel() == 40 and torch.equal(tr.sampler_.indices.cpu(), last["indices"])
    selection = sum(s["seconds"] for s in cb.selections_)  # the hooks' clock holds the selections, little else
    assert cb.seconds_ == selection and selection <= tr.timings_["hooks"] <= selection + 0.05
    tr2, cb2 = fit("retrieve", epochs=7, every=3, warm=2)
    assert [s["epoch"] for s in cb2.selections_] == [2, 5]
    assert [r["iterations"] for r in tr2.history_] == [12, 12, 4, 4, 4, 4, 4]  # full pool while warm


def test_selection_is_retrieve_on_the_models_gradients():
    tr, cb = fit("retrieve", epochs=4, every=3, warm=3)
    # the selection made before epoch 4 from the model of epoch 3: recompute it from gradients_at
    # (deterministic in eval mode) -- same inputs, same indices
    assert [s["epoch"] for s in cb.selections_] == [3]
    G, Z, y, H = cb.gradients_at(tr)
    assert G.shape == (120, 2) and Z.shape == (30, 2) and H is None
    # training moved the model after the selection; the recomputation is checked on the stored model state
    again = Retrieve(40, lr=tr.optimizer_.param_groups[0]["lr"], lam=1.0, seed=1).fit(G, Z, y)
    assert again.indices_.size == 40 and len(set(again.indices_.tolist())) == 40


def test_gradients_at_equal_per_sample_autograd_of_the_last_layer():
    X_l, y_l, X_u = data(n_u=12)
    algo = FixMatch(0.0, weak=lambda x: x, strong=lambda x: x)  # deterministic views
    tr = Trainer(
        MLP(5, 3, hidden=(8,)), algo, epochs=1, batch_size=10, unlabeled_batch_size=6, progress=False, num_classes=3
    ).fit(X_l, y_l, X_u)
    for grads in ("bias", "bias_weight"):
        G, _, _, _ = CoresetSelection("retrieve", 4, gradients=grads, chunk=5).gradients_at(tr)
        lin = last_linear(tr.model)
        tr.model.eval()
        for j in range(12):
            x = torch.as_tensor(X_u[j : j + 1])
            z = tr.model(x)[0]
            label = z.argmax(1).detach()
            loss = nn.functional.cross_entropy(z, label)
            gb, gw = torch.autograd.grad(loss, [lin.bias, lin.weight])
            want = gb if grads == "bias" else torch.cat([gb, gw.flatten()])
            assert torch.allclose(G[j], want, atol=1e-6), (grads, j)


def test_every_strategy_runs_and_weights_reach_the_sampler():
    for strategy in ("random", "craig", "gradmatch"):
        tr, cb = fit(strategy, epochs=4, every=2, warm=1)
        s = cb.selections_[-1]
        assert torch.equal(tr.sampler_.indices.cpu(), s["indices"])
        if strategy == "craig":  # Voronoi-cell sizes of the 4 chosen batches sum to the 12 batches
            assert float(s["weights"].sum()) == pytest.approx(12 * 10)
        if strategy == "random":
            assert torch.equal(s["weights"], torch.ones(40))


def test_normalized_weights_have_mean_one_and_keep_their_proportions():
    _, raw = fit("craig", epochs=4, every=2, warm=1)
    tr, norm = fit("craig", epochs=4, every=2, warm=1, normalize_weights=True)
    w_raw, w = raw.selections_[0]["weights"], norm.selections_[0]["weights"]
    assert torch.equal(raw.selections_[0]["indices"], norm.selections_[0]["indices"])  # same model, same pick
    assert float(w_raw.mean()) == pytest.approx(3.0)  # 120 pool / 40 chosen
    assert float(w.mean()) == pytest.approx(1.0) and torch.allclose(w * w_raw.mean(), w_raw)
    assert torch.equal(tr.sampler_.weights.cpu(), norm.selections_[-1]["weights"])
    with pytest.raises(TypeError, match="normalize_weights"):
        CoresetSelection("craig", 10, normalize_weights="yes")


def test_bad_inputs_are_refused():
    with pytest.raises(ValueError, match="strategy"):
        CoresetSelection("glister", 10)
    with pytest.raises(ValueError, match="gradients"):
        CoresetSelection("retrieve", 10, gradients="all")
    with pytest.raises(ValueError, match=r"has no option\(s\) \['greedy'\]; its options: \['metric'\]"):
        CoresetSelection("craig", 10, greedy="naive")
    with pytest.raises(ValueError, match="positive"):
        CoresetSelection("retrieve", 0)
    with pytest.raises(ValueError, match="exceeds"):
        fit("random", k=500)
    with pytest.raises(ValueError, match="per-sample unlabeled losses"):
        fit("retrieve", warm=1, algo=OursEC([0.5, 0.5]))
    X_l, y_l, _ = data()
    cb = CoresetSelection("random", 5)
    with pytest.raises(ValueError, match="unlabeled sampler"):
        Trainer(MLP(5, 2), Supervised(), epochs=1, hooks=cb.hooks(), progress=False).fit(X_l, y_l)
    with pytest.raises(ValueError, match="kappa"):
        warm_start_epochs(1.0, 500, 0.1)
    with pytest.raises(ValueError, match="fraction"):
        warm_start_epochs(0.5, 500, 0.0)
    with pytest.raises(ValueError, match="seconds"):
        WallClockStop(0)


def test_warm_start_epochs_is_kappa_t_k_over_m():
    assert warm_start_epochs(0.5, 500, 0.1) == 25 and warm_start_epochs(0.5, 340, 0.3) == 51
    assert warm_start_epochs(0.0, 500, 0.3) == 0


def test_wall_clock_stop_ends_the_run():
    X_l, y_l, _ = data()
    stop = WallClockStop(0.05)
    slow = Trainer(
        MLP(5, 2),
        Supervised(),
        epochs=1000,
        progress=False,
        hooks=stop.hooks() + [type(stop.hooks()[1])(lambda t: time.sleep(0.01), unit="iteration")],
    )
    slow.fit(X_l, y_l)
    assert 1 <= slow.epochs_run_ < 1000


def test_a_selection_records_when_every_unlabeled_gradient_is_zero():
    """``flat``: FixMatch at a threshold no untrained prediction reaches masks every unlabeled loss, so every
    gradient is exactly zero; GIGA then takes its first k with uniform weights N / k (its ``flat_`` case), and the
    record says so. A VAT run's gradients are not zero: ``flat`` False."""
    tr, cb = fit("bayesian", epochs=4, every=2, warm=1, algo=FixMatch(0.9999))
    assert [s["flat"] for s in cb.selections_] == [True, True]
    assert torch.equal(cb.selections_[0]["indices"], torch.arange(40))
    assert torch.allclose(cb.selections_[0]["weights"], torch.full((40,), 3.0))  # 120 pool / 40 chosen
    _, vat = fit("bayesian", epochs=4, every=2, warm=1)
    assert [s["flat"] for s in vat.selections_] == [False, False]


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
