"""The engine's extension points: scheduled hooks, the unlabeled sampler, the EMA teacher -- and the
acceptance test of the engine redesign: Mean Teacher and a random-coreset callback, each under 60 lines,
written against the public contract with no edit to the engine."""

from __future__ import annotations

import inspect
import math

import numpy as np
import pytest
import torch

from sslkit.algorithms import VAT, Hook, MeanTeacher, Supervised, sigmoid_rampup, weighted_mean
from sslkit.engine import Trainer, UnlabeledSampler
from sslkit.models import MLP
from sslkit.seeding import make_generator


def data(n_l=24, n_u=80, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_l + n_u + 30, 4)).astype(np.float32)
    y = (X[:, 0] > 0).astype(np.int64)
    return X[:n_l], y[:n_l], X[n_l : n_l + n_u], X[n_l + n_u :], y[n_l + n_u :]


# ---------------------------------------------------------------------------------------- schedules


def test_hook_schedule_table():
    after = Hook(print, start=3, every=2)
    assert [c for c in range(10) if after.due(c)] == [3, 5, 7, 9]
    once = Hook(print, start=4, every=None)
    assert [c for c in range(10) if once.due(c)] == [4]
    before = Hook(print, every=3, when="before")
    assert [c for c in range(8) if before.due(c)] == [0, 3, 6]
    assert [c for c in range(8) if Hook(print, every=3).due(c)] == [3, 6]  # "after" never fires at 0
    for bad in ({"start": -1}, {"every": 0}, {"when": "during"}, {"unit": "step"}):
        with pytest.raises(ValueError):
            Hook(print, **bad)


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


def test_unrestricted_sampler_cuts_successive_permutations():
    s = UnlabeledSampler(10, 4, make_generator(0), torch.device("cpu"))
    got = torch.cat([s.next()[0] for _ in range(5)])  # 20 = two full permutations
    g = make_generator(0)
    want = torch.cat([torch.randperm(10, generator=g), torch.randperm(10, generator=g)])
    assert torch.equal(got, want) and s.next()[1] is None and s.size == 10


def test_restricted_sampler_draws_only_the_subset_with_its_weights():
    s = UnlabeledSampler(50, 4, make_generator(1), torch.device("cpu"))
    subset, w = torch.tensor([3, 7, 11, 19, 23, 42]), torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    s.restrict(subset, w)
    seen = []
    for _ in range(6):
        idx, wt = s.next()
        assert idx.numel() == 4 and set(idx.tolist()) <= set(subset.tolist())
        assert torch.equal(wt, w[torch.searchsorted(subset, idx)])
        seen += idx.tolist()
    assert sorted(seen[:6]) == subset.tolist()  # one epoch over the subset visits each sample once
    assert s.size == 6 and s.restricted
    s.reset()
    assert s.size == 50 and not s.restricted and s.next()[1] is None


@pytest.mark.parametrize(
    "indices, weights, match",
    [
        ([], None, "non-empty"),
        ([0.5, 1.0], None, "integer"),
        ([0, 50], None, r"\[0, 50\)"),
        ([-1, 2], None, "lie in"),
        ([1, 1], None, "distinct"),
        ([1, 2], [1.0], "one entry per index"),
        ([1, 2], [1.0, -1.0], "non-negative"),
        ([1, 2], [0.0, 0.0], "not all zero"),
        ([1, 2], [1.0, float("nan")], "finite"),
    ],
)
def test_sampler_refuses_bad_subsets(indices, weights, match):
    s = UnlabeledSampler(50, 4, make_generator(1), torch.device("cpu"))
    with pytest.raises(ValueError, match=match):
        s.restrict(indices, weights)


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


def test_ema_warmup_uses_min_of_decay_and_one_minus_one_over_t_plus_one():
    X_l, y_l, *_ = data()
    snaps = []
    hooks = [
        Hook(
            lambda t: snaps.append(
                (
                    t.model.out.weight.detach().clone()
                    if hasattr(t.model, "out")
                    else list(t.model.parameters())[-2].detach().clone(),
                    list(t.ema_model_.parameters())[-2].detach().clone(),
                )
            ),
            unit="iteration",
        )
    ]
    torch.manual_seed(0)
    model = MLP(4, 2, hidden=(8,))
    w0 = list(model.parameters())[-2].detach().clone()
    Trainer(
        model,
        Supervised(),
        epochs=1,
        iterations_per_epoch=3,
        ema_decay=0.9,
        ema_warmup=True,
        hooks=hooks,
        progress=False,
    ).fit(X_l, y_l)
    (p1, e1), (p2, e2), (p3, e3) = snaps
    assert torch.allclose(e1, 0.5 * w0 + 0.5 * p1)  # t = 1: min(0.9, 1/2)
    assert torch.allclose(e2, (2 / 3) * e1 + (1 / 3) * p2)  # t = 2: min(0.9, 2/3)
    assert torch.allclose(e3, 0.75 * e2 + 0.25 * p3)  # t = 3: min(0.9, 3/4)
    with pytest.raises(ValueError, match="ema_decay"):
        Trainer(MLP(4, 2), Supervised(), ema_warmup=True)


# ----------------------------------------------------------------------- acceptance: Mean Teacher


def test_mean_teacher_is_under_60_lines_and_uses_the_trainers_ema_teacher():
    assert len(inspect.getsource(MeanTeacher).splitlines()) < 60
    X_l, y_l, X_u, X_v, y_v = data()
    tr = Trainer(MLP(4, 2, hidden=(8,)), MeanTeacher(), epochs=2, ema_decay=0.95, ema_warmup=True, progress=False)
    tr.fit(X_l, y_l, X_u, X_v, y_v)
    assert tr.algorithm.teacher_ is tr.ema_model_ and tr.algorithm.rampup_steps_ == pytest.approx(0.4 * tr.total_steps_)
    with pytest.raises(ValueError, match="EMA teacher"):
        Trainer(MLP(4, 2, hidden=(8,)), MeanTeacher(), epochs=1, progress=False).fit(X_l, y_l, X_u)


def test_mean_teacher_loss_is_the_ramped_mse_between_student_and_teacher_softmax():
    from sslkit.algorithms import Batch, FitContext

    torch.manual_seed(0)
    # eval mode: no batch statistics, so the joint forward equals the separate ones below
    student, teacher = MLP(4, 3, hidden=(8,)).eval(), MLP(4, 3, hidden=(8,)).eval()
    mt = MeanTeacher(lambda_u=8.0, rampup=0.5, weak=lambda x: x)
    mt.setup(student, FitContext(num_classes=3, ema_model=teacher, total_steps=100))
    x_l, y_l, x_u = torch.randn(5, 4), torch.tensor([0, 1, 2, 0, 1]), torch.randn(7, 4)
    out = mt.loss(student, Batch(x_l, y_l, x_u, step=10))
    z_l, z_u = student(x_l)[0], student(x_u)[0]
    mse = ((torch.softmax(z_u, 1) - torch.softmax(teacher(x_u)[0], 1).detach()) ** 2).mean(1)
    ramp = math.exp(-5 * (1 - 10 / 50) ** 2)
    want = torch.nn.functional.cross_entropy(z_l, y_l) + 8.0 * ramp * mse.mean()
    assert float(out.loss.detach()) == pytest.approx(float(want.detach()), rel=1e-6)
    assert torch.allclose(out.unlabeled.losses, mse) and out.logs["ramp"] == pytest.approx(ramp)
    assert sigmoid_rampup(60, 50) == 1.0 and sigmoid_rampup(0, 0) == 1.0
    same = mt.loss(teacher, Batch(x_l, y_l, x_u, step=10))  # student == teacher: no consistency cost
    # zero up to rounding: the student's joint forward of [x_l; x_u] and the teacher's of x_u alone may round
    # differently in the last bits on some CPUs (1e-16 here on an Intel Xeon); a real difference is >= 1e-6
    assert float(same.logs["unsup_loss"]) <= 1e-12


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
