"""sslkit.algorithms.mean_teacher: under 60 lines on the trainer's EMA teacher; its loss is the ramped MSE between
student and teacher softmax."""

import inspect
import math

import pytest
import torch
from engine_problem import data

from sslkit.algorithms import MeanTeacher, sigmoid_rampup
from sslkit.engine import Trainer
from sslkit.models import MLP


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
