"""The engine's extension points in the loop: hooks fire before and after epochs and iterations in order, epochs
over the unlabeled pool -- and the acceptance test of the engine redesign: a random-coreset callback under 60 lines,
written against the public contract with no edit to the engine. Hook's schedule table: test_algorithms_base.py; the
sampler: test_engine_sampling.py; the EMA teacher: test_engine_optim.py; Mean Teacher (the other acceptance test):
test_algorithms_mean_teacher.py."""

from __future__ import annotations

import inspect
import math

import pytest
import torch
from engine_problem import data

from sslkit.algorithms import VAT, Hook, Supervised, weighted_mean
from sslkit.engine import Trainer
from sslkit.models import MLP

# ---------------------------------------------------------------------------------------- schedules


def test_hooks_fire_before_and_after_epochs_and_iterations_in_order():
    X_l, y_l, *_ = data()
    events = []
    hooks = [
        Hook(lambda t: events.append(("before_epoch", t.epoch)), when="before"),
        Hook(lambda t: events.append(("after_epoch", t.epoch)), start=1, every=2),
        Hook(lambda t: events.append(("before_it", t.iteration)), unit="iteration", when="before", start=2, every=None),
        Hook(lambda t: events.append(("after_it", t.iteration)), unit="iteration", every=3),
    ]
    tr = Trainer(MLP(4, 2, hidden=(8,)), Supervised(), epochs=3, iterations_per_epoch=2, progress=False, hooks=hooks)
    tr.fit(X_l, y_l)
    assert events == [
        ("before_epoch", 0),
        ("after_epoch", 1),
        ("before_epoch", 1),
        ("before_it", 2),
        ("after_it", 3),
        ("before_epoch", 2),
        ("after_it", 6),
        ("after_epoch", 3),
    ]


# --------------------------------------------------------------------------------------------- sampler


def test_epochs_over_the_unlabeled_pool_and_planned_steps():
    X_l, y_l, X_u, *_ = data(n_u=80)
    tr = Trainer(
        MLP(4, 2, hidden=(8,)),
        VAT(1.0),
        epochs=2,
        iterations_per_epoch="unlabeled",
        unlabeled_batch_size=16,
        progress=False,
    ).fit(X_l, y_l, X_u)
    assert [r["iterations"] for r in tr.history_] == [5, 5] and tr.total_steps_ == 10
    tr = Trainer(
        MLP(4, 2, hidden=(8,)),
        VAT(1.0),
        epochs=2,
        iterations_per_epoch=3,
        total_steps=100,
        schedule="cosine",
        optimizer="sgd",
        lr=0.1,
        progress=False,
    ).fit(X_l, y_l, X_u)
    assert tr.total_steps_ == 100 and tr.history_[-1]["lr"] == pytest.approx(0.1 * math.cos(7 * math.pi * 6 / 1600))
    with pytest.raises(ValueError, match="unlabeled"):
        Trainer(MLP(4, 2), Supervised(), iterations_per_epoch="unlabeled")


# --------------------------------------------------------------------------------------- EMA teacher


# ----------------------------------------------------------------------- acceptance: Mean Teacher


# ------------------------------------------------------------ acceptance: a random-coreset callback


class RandomCoreset:
    """Paper C Algorithm 1 with a random "selection": before epoch 1 and every ``every`` epochs after, the
    unlabeled sampler is restricted to ``k`` random samples with random positive weights (the shape of
    CRAIG / GradMatch weights). Written against the public engine contract only."""

    def __init__(self, k: int, every: int, seed: int = 0):
        self.k, self.every = k, every
        self.generator = torch.Generator().manual_seed(seed)
        self.selections = []

    def hook(self) -> Hook:
        return Hook(self.select, every=self.every, unit="epoch", when="before", name="random_coreset")

    def select(self, trainer) -> None:
        indices = torch.randperm(trainer.sampler_.n, generator=self.generator)[: self.k]
        weights = torch.rand(self.k, generator=self.generator) + 0.5
        trainer.sampler_.restrict(indices, weights)
        self.selections.append((trainer.epoch, indices, weights))


class Probe(VAT):
    """VAT that records what the engine feeds it."""

    def __init__(self):
        super().__init__(1.0)
        self.seen = []

    def loss(self, model, batch):
        out = super().loss(model, batch)
        self.seen.append((batch.epoch, batch.u_idx.clone(), batch.u_weight.clone(), out))
        return out


def test_random_coreset_callback_is_under_60_lines_and_drives_what_the_engine_samples():
    assert len(inspect.getsource(RandomCoreset).splitlines()) < 60
    X_l, y_l, X_u, X_v, y_v = data(n_u=80)
    coreset, probe = RandomCoreset(k=20, every=2), Probe()
    tr = Trainer(
        MLP(4, 2, hidden=(8,)),
        probe,
        epochs=5,
        iterations_per_epoch="unlabeled",
        unlabeled_batch_size=8,
        hooks=[coreset.hook()],
        progress=False,
    )
    tr.fit(X_l, y_l, X_u, X_v, y_v)
    assert [e for e, _, _ in coreset.selections] == [0, 2, 4]  # before epochs 1, 3, 5
    assert [r["iterations"] for r in tr.history_] == [3] * 5  # ceil(20 / 8) per epoch over the subset
    assert tr.timings_["hook:random_coreset"] > 0
    for epoch, u_idx, u_w, out in probe.seen:
        _, subset, weights = [s for s in coreset.selections if s[0] <= epoch][-1]
        pos = torch.tensor([subset.tolist().index(i) for i in u_idx.tolist()])  # raises if outside the subset
        assert torch.equal(u_w, weights[pos])  # the weights reach the loss ...
        unsup = weighted_mean(out.unlabeled.losses, u_w)
        assert float(unsup.detach()) == pytest.approx(float(out.logs["unsup_loss"]), rel=1e-6)  # ... and weigh it
