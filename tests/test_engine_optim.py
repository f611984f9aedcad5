"""sslkit.engine.optim through the loop: the optimiser defaults (Adam; SGD with Nesterov momentum), USB's
weight-decay exemption of biases and normalisation layers, the EMA teacher's update formula (with and without Mean
Teacher's warm-up; against USB's EMA) and the mixed-precision resolution on CPU."""

import copy

import numpy as np
import pytest
import torch
from engine_problem import blobs, data, net, quiet
from usb_problem import USB, D, K, Tabular, assert_close_all, ident, needs_usb

from sslkit.algorithms import Hook, MeanTeacher, Supervised
from sslkit.engine import Trainer
from sslkit.models import MLP
from sslkit.seeding import make_generator


def test_constant_lr_without_schedule_and_optimizer_settings():
    X, y = blobs(64)
    tr = quiet(net(0), optimizer="sgd", lr=0.05, weight_decay=5e-4, epochs=2).fit(X, y)
    g = tr.optimizer_.param_groups[0]
    assert isinstance(tr.optimizer_, torch.optim.SGD) and g["nesterov"] and g["momentum"] == 0.9
    assert g["weight_decay"] == 5e-4 and all(r["lr"] == 0.05 for r in tr.history_)
    tr = quiet(net(0), epochs=1).fit(X, y)
    assert isinstance(tr.optimizer_, torch.optim.Adam)
    assert tr.optimizer_.param_groups[0]["lr"] == 1e-3 and tr.optimizer_.param_groups[0]["weight_decay"] == 1e-4


def test_ema_after_one_step_matches_formula_and_is_used_for_prediction():
    X, y = blobs(64)
    model = net(0, bn=True)
    p0 = {k: v.detach().clone() for k, v in model.named_parameters()}
    d = 0.9
    tr = quiet(model, optimizer="sgd", lr=0.5, ema_decay=d, epochs=1, iterations_per_epoch=1, batch_size=16).fit(X, y)
    ema = dict(tr.ema_model_.named_parameters())
    for k, p1 in model.named_parameters():
        assert not torch.equal(p1, p0[k])
        assert torch.allclose(ema[k], d * p0[k] + (1 - d) * p1.detach(), rtol=1e-6, atol=1e-7)
    for (k, b), (_, eb) in zip(model.named_buffers(), tr.ema_model_.named_buffers()):
        assert torch.equal(b, eb), k  # buffers copied, not averaged
    assert tr.eval_model is tr.ema_model_ and tr.ema_model_ is not model
    with torch.no_grad():
        expect = tr.ema_model_.eval()(torch.tensor(X, dtype=torch.float32))[0].argmax(1).numpy()
    assert np.array_equal(tr.predict(X), expect)
    assert model.training  # raw model untouched by evaluation


def test_no_ema_by_default():
    X, y = blobs(32)
    tr = quiet(net(0), epochs=1).fit(X, y)
    assert tr.ema_model_ is None and tr.eval_model is tr.model


def test_amp_auto_off_on_cpu_and_amp_true_warns():
    X, y = blobs(32)
    tr = quiet(net(0), epochs=1).fit(X, y)
    assert tr.amp_dtype_ is None
    with pytest.warns(RuntimeWarning, match="amp=True"):
        tr = quiet(net(0), epochs=1, amp=True).fit(X, y)
    assert tr.amp_dtype_ is None


def test_decay_norm_and_bias_false_exempts_bias_and_bn_from_weight_decay():
    from torch import nn as _nn

    class BNNet(_nn.Module):
        def __init__(self):
            super().__init__()
            self.fc, self.bn, self.out = _nn.Linear(2, 4), _nn.BatchNorm1d(4), _nn.Linear(4, 2)

        def forward(self, x):
            h = self.bn(self.fc(x))
            return self.out(h), h

    X = np.random.default_rng(0).normal(size=(32, 2)).astype(np.float32)
    y = (X[:, 0] > 0).astype(np.int64)
    tr = Trainer(BNNet(), Supervised(), epochs=1, weight_decay=0.1, decay_norm_and_bias=False, progress=False)
    tr.fit(X, y)
    groups = {g["weight_decay"]: {id(p) for p in g["params"]} for g in tr.optimizer_.param_groups}
    m = tr.model
    assert groups[0.1] == {id(m.fc.weight), id(m.out.weight)}
    assert groups[0.0] == {id(m.fc.bias), id(m.bn.weight), id(m.bn.bias), id(m.out.bias)}
    tr2 = Trainer(BNNet(), Supervised(), epochs=1, weight_decay=0.1, progress=False).fit(X, y)
    assert [g["weight_decay"] for g in tr2.optimizer_.param_groups] == [0.1]


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


@needs_usb
@pytest.mark.parametrize("warmup", [False, True])
def test_trainer_ema_teacher_matches_usb_ema(warmup):
    """The trainer's EMA teacher over 6 SGD steps of Mean Teacher = USB's ``EMA`` (``shadow ← d·shadow +
    (1 − d)·θ``, from the initial weights; buffers copied from the student) applied to the same sequence of
    weights. With ``ema_warmup=True`` (Tarvainen & Valpola's ``d_t = min(d, 1 − 1/(t+1))``, paper C / CORDS) the
    first steps differ from USB's constant decay as the formula says."""
    d = 0.7
    model = Tabular(seed=12, bn=True).float()
    start = copy.deepcopy(model)
    snapshots = []

    def record(trainer):
        snapshots.append(
            (
                trainer.iteration,
                [p.detach().clone() for p in trainer.model.parameters()],
                [p.detach().clone() for p in trainer.ema_model_.parameters()],
                torch.equal(trainer.ema_model_.body[1].running_mean, trainer.model.body[1].running_mean),
            )
        )

    g = make_generator(66)
    X_l, y_l, X_u = (
        torch.randn(12, D, generator=g),
        torch.randint(0, K, (12,), generator=g),
        torch.randn(20, D, generator=g),
    )
    trainer = Trainer(
        model, MeanTeacher(lambda_u=1.0, weak=ident), device="cpu", optimizer="sgd", lr=0.5, epochs=1,
        iterations_per_epoch=6, batch_size=4, unlabeled_batch_size=4, ema_decay=d, ema_warmup=warmup,
        hooks=[Hook(record, unit="iteration")], progress=False,
    )  # fmt: skip
    trainer.fit(X_l, y_l, X_u)
    replica = copy.deepcopy(start)
    ema = USB.misc.EMA(replica, d)
    ema.register()
    previous = [p.detach().clone() for p in start.parameters()]
    for t, params, ours, buffers_copied in snapshots:
        with torch.no_grad():
            for p, v in zip(replica.parameters(), params):
                p.copy_(v)
        ema.update()
        usb_ema = [ema.shadow[name] for name, _ in replica.named_parameters()]
        if not warmup:
            assert_close_all(ours, usb_ema, rtol=1e-6, atol=1e-7)
        else:
            d_t = min(d, 1 - 1 / (t + 1))
            assert_close_all(ours, [d_t * a + (1 - d_t) * b for a, b in zip(previous, params)], rtol=1e-6, atol=1e-7)
            if t == 1:  # d_1 = 0.5 < 0.7
                assert max((a - b).abs().max().item() for a, b in zip(ours, usb_ema)) > 1e-3
        previous = ours
        assert buffers_copied
    assert len(snapshots) == 6
    assert max((a - b).abs().max().item() for a, b in zip(snapshots[-1][1], snapshots[0][1])) > 1e-3  # it trained
