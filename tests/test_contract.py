"""The engine contract, checked over every registered algorithm (scikit-learn's ``check_estimator`` idea).

For each algorithm in :data:`sslkit.algorithms.REGISTRY`: it trains two epochs on tiny data; its loss
depends on the unlabeled batch (non-zero gradient with respect to ``x_u``); when it returns per-sample
unlabeled losses they average (weighted) to its logged ``unsup_loss`` and have a non-zero gradient with
respect to their logits; it is deterministic under a seed; per-sample unlabeled weights reach its loss;
it runs on every available device.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from sslkit.algorithms import (
    DS3L,
    L2RW,
    PNU,
    REGISTRY,
    VAT,
    Batch,
    CrustMixup,
    FitContext,
    FixMatch,
    FlexMatch,
    FreeMatch,
    MeanTeacher,
    OursEC,
    OursIter,
    PseudoLabel,
    Supervised,
    SupervisedRisk,
    weighted_mean,
)
from sslkit.engine import Trainer
from sslkit.models import MLP

PRIOR = [0.5, 0.5]

#: a valid, "active" instance of every registered algorithm on a 2-class tabular task
FACTORIES = {
    "supervised": lambda: Supervised(),
    "sup_risk": lambda: SupervisedRisk(PRIOR),
    "pnu": lambda: PNU(PRIOR, nonnegative=False),
    "ours_ec": lambda: OursEC(PRIOR, nonnegative=False),
    "ours_iter": lambda: OursIter(PRIOR, warmup_epochs=1, nonnegative=False),
    "pseudo_label": lambda: PseudoLabel(0.0, warmup_epochs=0),
    "vat": lambda: VAT(1.0),
    "fixmatch": lambda: FixMatch(0.0),
    "flexmatch": lambda: FlexMatch(0.0),
    "freematch": lambda: FreeMatch(),
    "mean_teacher": lambda: MeanTeacher(rampup=0.0),
    "l2rw": lambda: L2RW(VAT(1.0), inner_lr=0.1),
    "ds3l": lambda: DS3L(VAT(1.0), inner_lr=0.1, hidden=8),
    "crust": lambda: CrustMixup(VAT(1.0)),
}
#: configurations beyond each algorithm's default that change its loss's structure, held to the same contract:
#: VAT with entropy minimisation (an extra term through the clean pass), alone and as DS3L's base
VARIANTS = {
    "vat+entropy": lambda: VAT(1.0, lambda_ent=0.06),
    "ds3l+entropy": lambda: DS3L(VAT(1.0, lambda_ent=0.06), inner_lr=0.1, hidden=8),
}
CASES = {**FACTORIES, **VARIANTS}
#: methods whose loss does not depend on the unlabeled batch (or not at the first step)
NO_UNLABELED_TERM = {"supervised", "sup_risk"}
DEVICES = (
    ["cpu"]
    + (["cuda"] if torch.cuda.is_available() else [])
    + (["mps"] if getattr(torch.backends, "mps", None) and torch.backends.mps.is_available() else [])
)


def test_every_registered_algorithm_has_a_factory():
    assert set(FACTORIES) == set(REGISTRY)
    for name, make in FACTORIES.items():
        assert type(make()) is REGISTRY[name] and REGISTRY[name].name == name


def data(seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(120, 4)).astype(np.float32)
    y = (X[:, 0] > 0).astype(np.int64)
    return X[:24], y[:24], X[24:96], X[96:], y[96:]


def trainer(name, seed=0, device="cpu", epochs=2):
    torch.manual_seed(seed)
    return Trainer(
        MLP(4, 2, hidden=(8,)),
        CASES[name](),
        epochs=epochs,
        batch_size=8,
        unlabeled_batch_size=16,
        ema_decay=0.9 if name == "mean_teacher" else None,
        device=device,
        seed=seed,
        progress=False,
    )


def prepared(name, device="cpu"):
    """An algorithm after setup (through a one-epoch fit, so its context is the trainer's) and a batch."""
    tr = trainer(name, device=device, epochs=1)
    X_l, y_l, X_u, X_v, y_v = data()
    tr.fit(X_l, y_l, X_u, X_v, y_v)
    algo = tr.algorithm
    if isinstance(algo, OursIter):
        algo.set_a([0.2, 0.8])  # past the warm-up: the unlabeled term is active
    dev = tr.device_
    x_u = torch.as_tensor(X_u[:16], device=dev)
    batch = Batch(
        torch.as_tensor(X_l[:8], device=dev),
        torch.as_tensor(y_l[:8], device=dev),
        x_u,
        torch.arange(16, device=dev),
        step=3,
        epoch=1,
    )
    return tr, algo, batch


@pytest.mark.parametrize("name", sorted(CASES))
def test_trains_two_epochs_and_is_deterministic_under_a_seed(name):
    X_l, y_l, X_u, X_v, y_v = data()
    a = trainer(name, seed=5).fit(X_l, y_l, X_u, X_v, y_v)
    b = trainer(name, seed=5).fit(X_l, y_l, X_u, X_v, y_v)
    assert a.epochs_run_ == 2 and len(a.history_) == 2 and np.isfinite(a.history_[-1]["loss"])
    for (k, va), vb in zip(a.model.state_dict().items(), b.model.state_dict().values()):
        assert torch.equal(va, vb), k
    drop = {"seconds"}
    assert [{k: v for k, v in r.items() if k not in drop} for r in a.history_] == [
        {k: v for k, v in r.items() if k not in drop} for r in b.history_
    ]
    c = trainer(name, seed=6).fit(X_l, y_l, X_u, X_v, y_v)
    assert any(not torch.equal(va, vc) for va, vc in zip(a.model.state_dict().values(), c.model.state_dict().values()))


@pytest.mark.parametrize("name", sorted(set(CASES) - NO_UNLABELED_TERM))
def test_the_loss_depends_on_the_unlabeled_batch(name):
    tr, algo, batch = prepared(name)
    batch.x_u = batch.x_u.clone().requires_grad_(True)
    torch.manual_seed(0)
    out = algo.loss(tr.model, batch)
    (g,) = torch.autograd.grad(out.loss, batch.x_u, allow_unused=True)
    assert g is not None and float(g.abs().sum()) > 0


@pytest.mark.parametrize("name", sorted(CASES))
def test_per_sample_unlabeled_losses_average_to_the_logged_unsup_loss(name):
    tr, algo, batch = prepared(name)
    model = tr.model
    w = torch.rand(16, generator=torch.Generator().manual_seed(0)) + 0.5
    for weight in (None, w):
        batch.u_weight = weight
        torch.manual_seed(2)
        out = algo.loss(model, batch)
        if out.unlabeled is None:
            # only methods without a per-sample decomposition may omit it (documented in their modules)
            assert name in NO_UNLABELED_TERM | {"pnu", "ours_ec", "ours_iter"}
            return
        u = out.unlabeled
        assert u.losses.shape == (16,) and u.logits.shape == (16, 2) and u.features.shape == (16, 8)
        assert float(weighted_mean(u.masked(), weight).detach()) == pytest.approx(
            float(out.logs["unsup_loss"]), rel=1e-5
        )
        (g0,) = torch.autograd.grad(u.masked().sum(), u.logits, retain_graph=True)
        assert float(g0.abs().sum()) > 0  # the gradient paper C's selection uses: dl/dz, per sample


@pytest.mark.parametrize("name", sorted(set(CASES) - NO_UNLABELED_TERM))
def test_unlabeled_weights_reach_the_loss(name):
    tr, algo, batch = prepared(name)
    model = tr.model
    values = {}
    for key, weight in (("none", None), ("ones", torch.ones(16)), ("twos", torch.full((16,), 2.0))):
        batch.u_weight = weight
        torch.manual_seed(3)
        values[key] = float(algo.loss(model, batch).loss.detach())
    assert values["ones"] == pytest.approx(values["none"], rel=1e-6)
    assert values["twos"] != pytest.approx(values["none"], rel=1e-6)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", sorted(CASES))
def test_runs_on_every_available_device(name, device):
    X_l, y_l, X_u, X_v, y_v = data()
    tr = trainer(name, device=device, epochs=1).fit(X_l, y_l, X_u, X_v, y_v)
    assert tr.device_.type == device and next(tr.model.parameters()).device.type == device
    assert 0.0 <= tr.score(X_v, y_v) <= 1.0


def test_setup_outside_a_trainer_takes_a_hand_built_context():
    ctx = FitContext(num_classes=2, device="cpu", data={"y_l": torch.tensor([0, 1, 1]), "X_u": torch.zeros(5, 4)})
    assert ctx.class_counts.tolist() == [1, 2] and ctx.num_unlabeled == 5 and ctx.get("X_val") is None
    algo = FlexMatch()
    algo.setup(None, ctx)
    assert algo.selected_label_.shape == (5,)
    with pytest.raises(ValueError, match="num_classes"):
        FitContext(num_classes=0)
    with pytest.raises(ValueError, match="EMA teacher"):
        MeanTeacher().setup(None, ctx)


def _state(algo):
    """Every tensor the algorithm holds (its statistics, thresholds, meta-network, teacher), cloned."""
    out = {}
    for key, value in vars(algo).items():
        if isinstance(value, torch.Tensor):
            out[key] = value.clone()
        elif isinstance(value, torch.nn.Module):
            out.update({f"{key}.{n}": t.clone() for n, t in value.state_dict().items()})
        elif isinstance(value, torch.optim.Optimizer):
            out[f"{key}.steps"] = repr(value.state_dict()["state"])
        elif key == "base":
            out.update({f"base.{n}": t for n, t in _state(value).items()})
    return out


def _same(a, b):
    return a.keys() == b.keys() and all(
        torch.equal(a[k], b[k]) if isinstance(a[k], torch.Tensor) else a[k] == b[k] for k in a
    )


@pytest.mark.parametrize("name", sorted(set(CASES) - NO_UNLABELED_TERM - {"pnu", "ours_ec", "ours_iter"}))
def test_unlabeled_losses_are_the_losses_of_a_step_and_change_no_state(name):
    tr, algo, batch = prepared(name)
    model = tr.model
    before = _state(algo)
    torch.manual_seed(4)
    u = algo.unlabeled_losses(model, batch.x_u, batch.u_idx)
    assert _same(before, _state(algo)), "unlabeled_losses changed the algorithm's state"
    assert u.losses.shape == (16,) and u.logits.shape == (16, 2) and u.features.shape == (16, 8)
    (g0,) = torch.autograd.grad(u.masked().sum(), u.logits)
    assert float(g0.abs().sum()) > 0
    if name in ("vat", "vat+entropy", "pseudo_label"):  # no random views: a step's losses, exactly (dropout off)
        model.eval()
        torch.manual_seed(4)
        step = algo.loss(model, batch).unlabeled
        torch.manual_seed(4)
        again = algo.unlabeled_losses(model, batch.x_u, batch.u_idx)
        assert torch.allclose(step.masked(), again.masked(), atol=1e-6)


@pytest.mark.parametrize("name", ["flexmatch", "freematch"])
def test_a_training_step_updates_the_stateful_algorithms(name):
    tr, algo, batch = prepared(name)
    before = _state(algo)
    algo.loss(tr.model, batch)
    assert not _same(before, _state(algo))


def test_algorithms_without_per_sample_losses_say_so():
    for name in NO_UNLABELED_TERM | {"pnu", "ours_ec", "ours_iter"}:
        algo = FACTORIES[name]()
        assert not algo.has_unlabeled_losses()
        with pytest.raises(NotImplementedError, match="per-sample unlabeled losses"):
            algo.unlabeled_losses(None, torch.zeros(2, 4))
    assert all(
        FACTORIES[n]().has_unlabeled_losses()
        for n in set(FACTORIES) - NO_UNLABELED_TERM - {"pnu", "ours_ec", "ours_iter"}
    )


def test_contract_attributes_are_declared():
    for name, make in FACTORIES.items():
        algo = make()
        assert isinstance(algo.lambda_u, float) and algo.lambda_u >= 0, name
        assert isinstance(algo.warmup_epochs, int) and algo.warmup_epochs >= 0, name
    assert FACTORIES["ours_iter"]().warmup_epochs == 1 and FACTORIES["mean_teacher"]().lambda_u == 8.0
    assert Supervised().warmup_epochs == 0 and PseudoLabel(0.9, warmup_epochs=3).warmup_epochs == 3
