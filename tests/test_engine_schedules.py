"""sslkit.engine.schedules: FixMatch's cosine factor cos(7 pi t / (16 T)) at hand-computed points, clipped past T, and
EarlyStopping's strict improvement rule and input checks. The loop that uses both: test_engine_trainer.py; the
cosine learning rate each step of a fit uses: test_cosine_schedule_values."""

import math

import pytest
from engine_problem import Recorder, blobs, net, quiet

from sslkit.algorithms import Hook
from sslkit.engine.schedules import EarlyStopping, cosine_lr_factor


def test_cosine_factor_at_hand_computed_points():
    assert cosine_lr_factor(0, 100) == 1.0
    assert cosine_lr_factor(50, 100) == pytest.approx(math.cos(7 * math.pi / 32))
    assert cosine_lr_factor(100, 100) == pytest.approx(math.cos(7 * math.pi / 16)) == pytest.approx(0.19509, abs=1e-5)
    assert cosine_lr_factor(250, 100) == cosine_lr_factor(100, 100)  # clipped to T: never below cos(7 pi / 16) > 0
    f = [cosine_lr_factor(t, 40) for t in range(41)]
    assert all(a > b for a, b in zip(f, f[1:]))  # strictly decreasing on [0, T]


@pytest.mark.parametrize("step,total,exc", [(-1, 10, ValueError), (1, 0, ValueError), (1.5, 10, TypeError)])
def test_cosine_factor_bad_inputs(step, total, exc):
    with pytest.raises(exc):
        cosine_lr_factor(step, total)


def test_early_stopping_improves_only_strictly_beyond_min_delta():
    es = EarlyStopping(patience=3, min_delta=0.01)
    assert es.is_improvement(0.52, 0.5) and not es.is_improvement(0.51, 0.5) and not es.is_improvement(0.505, 0.5)
    assert EarlyStopping(min_delta=0).is_improvement(0.5000001, 0.5) and not EarlyStopping(min_delta=0).is_improvement(
        0.5, 0.5
    )
    assert (EarlyStopping().patience, EarlyStopping().min_delta) == (20, 1e-4)  # paper A App. C


@pytest.mark.parametrize(
    "kw,exc,match",
    [
        ({"patience": 0}, ValueError, "patience must be positive"),
        ({"min_delta": -0.1}, ValueError, "min_delta must be a finite number >= 0"),
        ({"min_delta": math.inf}, ValueError, "min_delta"),
        ({"min_delta": True}, ValueError, "min_delta"),
        ({"start_epoch": -1}, ValueError, "start_epoch must be non-negative"),
        ({"watch_warmup": 1}, TypeError, "watch_warmup must be True or False"),
    ],
)
def test_early_stopping_bad_inputs(kw, exc, match):
    with pytest.raises(exc, match=match):
        EarlyStopping(**kw)


def test_cosine_schedule_values():
    X, y = blobs(64)
    algo = Recorder()
    seen = []
    T = 4 * 4
    tr = quiet(
        net(0),
        algo,
        optimizer="sgd",
        lr=0.1,
        schedule="cosine",
        epochs=4,
        batch_size=16,
        hooks=[Hook(lambda t: seen.append(t.optimizer_.param_groups[0]["lr"]), unit="iteration")],
    )
    algo.trainer = tr
    tr.fit(X, y)
    used = [c["lr"] for c in algo.calls]  # lr used by step t = 0 .. T-1
    assert tr.total_steps_ == T and tr.context_.total_steps == T
    assert used[0] == pytest.approx(0.1, abs=0, rel=1e-12)
    assert used[T // 2] == pytest.approx(0.1 * math.cos(7 * math.pi / 32), rel=1e-12)
    assert seen[-1] == pytest.approx(0.1 * math.cos(7 * math.pi / 16), rel=1e-12)  # after T steps
    assert used == pytest.approx([0.1 * math.cos(7 * math.pi * t / (16 * T)) for t in range(T)], rel=1e-12)
    assert tr.history_[-1]["lr"] == seen[-1]
    assert cosine_lr_factor(0, 10) == 1.0 and cosine_lr_factor(10, 10) == pytest.approx(math.cos(7 * math.pi / 16))
