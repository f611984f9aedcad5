"""Mean Teacher (Tarvainen & Valpola, NeurIPS 2017), as paper C runs it (App. C.2).

``L = CE(f(θ, weak(x_l)), y_l) + λ(t) · mean_{x in U-batch} w(x) · ||f(θ, weak(x)) − f(θ̂, weak'(x))||² / C``

with ``f`` the softmax, θ̂ the EMA of the student's weights (the trainer's EMA teacher: ``Trainer(ema_decay=…,
ema_warmup=True)`` gives Tarvainen's ``α_t = min(1 − 1/(t+1), α)``), two independent weak views of each
unlabeled sample (one for the student, one for the teacher), the squared error averaged over the C classes
(mask all ones, paper C App. C.2: "the unlabeled set loss function is a squared loss function") and the
sigmoid ramp-up ``λ(t) = λ · exp(−5 (1 − min(t / T_r, 1))²)`` with ``T_r = rampup · T`` (T the planned steps).

Settings. Paper C gives none for Mean Teacher beyond App. C.2 and "we follow the experimental setting from
the SSL papers"; CORDS vendors ``perrying/pytorch-consistency-regularization`` (Oliver et al. 2018's
protocol): consistency coefficient 8, EMA 0.95 with warm-up, sigmoid ramp-up over 200 k of 500 k
iterations -- the defaults here (``lambda_u=8``, ``rampup=0.4``; EMA ``0.95`` is set on the trainer).
The teacher runs in eval mode (dropout off, BatchNorm statistics copied from the student). Logs: ``loss``,
``sup_loss``, ``unsup_loss`` (before the ramp-up weight), ``ramp``.

Against USB (``semilearn`` 0.3.2, tests/test_algorithms_mean_teacher.py): for the same views and EMA weights the
consistency term, losses and gradients agree after the ramp-up, and the trainer's EMA equals USB's ``EMA`` (with
``ema_warmup=False``; tests/test_engine_optim.py). In 0.3.2 USB's consistency term does reach the student (its issue
#102, student logits taken from the teacher's pass, is fixed there). Differences by design, each shown by a test:
USB ramps λ linearly (``min(t / 0.4T, 1)``, λ = 50) where Tarvainen & Valpola and CORDS use the sigmoid above; USB's
student sees the strong view, here a second weak view (paper C App. C.2, CORDS); USB's teacher is the EMA weights
loaded into the student in training mode (batch statistics of the unlabeled batch, which the student also sees
alone), here the EMA model in eval mode (running statistics) with labeled and unlabeled views in one student batch;
``ema_warmup=True`` is Tarvainen's warm-up, which USB does not have.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from sslkit.algorithms.base import LossOutput, SSLAlgorithm, UnlabeledLosses, forward, logits_of, weighted_mean
from sslkit.algorithms.fixmatch import check_lambda
from sslkit.algorithms.views import Views, unlabeled_forward

__all__ = ["MeanTeacher", "sigmoid_rampup"]


def sigmoid_rampup(step: int, rampup_steps: float) -> float:
    """Tarvainen & Valpola's ``exp(−5 (1 − min(t / T_r, 1))²)`` (1 when ``T_r`` is 0)."""
    if rampup_steps <= 0:
        return 1.0
    return math.exp(-5.0 * (1.0 - min(step / rampup_steps, 1.0)) ** 2)


class MeanTeacher(SSLAlgorithm):
    """Mean Teacher (module docstring). ``lambda_u``: consistency weight λ; ``rampup``: fraction of the
    planned steps over which λ ramps up; ``augment`` / ``weak`` / ``mean`` / ``std``: the views (the
    strong view is not used)."""

    name = "mean_teacher"
    uses_unlabeled = True

    def __init__(self, *, lambda_u=8.0, rampup=0.4, augment="auto", weak=None, mean=None, std=None):
        self.lambda_u = check_lambda(lambda_u)
        if isinstance(rampup, bool) or not isinstance(rampup, (int, float)) or not 0 <= rampup <= 1:
            raise ValueError(f"rampup must be a fraction in [0, 1] of the planned steps, got {rampup!r}")
        self.rampup, self.augment = float(rampup), augment
        self.views = Views(augment, weak=weak, mean=mean, std=std)
        self.teacher_ = None

    def setup(self, model, ctx):
        if ctx.ema_model is None:
            raise ValueError(
                "MeanTeacher needs the trainer's EMA teacher: Trainer(..., ema_decay=0.95, ema_warmup=True)"
            )
        self.teacher_, self.rampup_steps_ = ctx.ema_model, self.rampup * (ctx.total_steps or 0)

    def consistency(self, z_u: torch.Tensor, x_u: torch.Tensor) -> torch.Tensor:
        """Per-sample ``||softmax(z_u) − f(θ̂, weak'(x_u))||² / C`` against the teacher on a fresh weak view."""
        with torch.no_grad():
            target = torch.softmax(logits_of(self._teacher(), self.views.weak(x_u)).float(), dim=1)
        return ((torch.softmax(z_u, dim=1) - target) ** 2).mean(dim=1)

    def _teacher(self):
        if self.teacher_ is None:
            raise RuntimeError("MeanTeacher.setup(model, ctx) must run first (the trainer calls it in fit)")
        return self.teacher_

    def unlabeled_losses(self, model, x_u, u_idx=None):
        """Per-sample consistency losses of ``x_u`` (before the ramp-up weight), student on a weak view."""
        z_u, h_u = unlabeled_forward(model, self.views, x_u, strong=False)
        return UnlabeledLosses(self.consistency(z_u, x_u), None, z_u, h_u)

    def loss(self, model, batch):
        n_l = batch.x_l.shape[0]
        logits, feats = forward(model, torch.cat([self.views.weak(batch.x_l), self.views.weak(batch.x_u)]))
        z_l, z_u = logits[:n_l].float(), logits[n_l:].float()
        per_sample = self.consistency(z_u, batch.x_u)
        sup, unsup = F.cross_entropy(z_l, batch.y_l), weighted_mean(per_sample, batch.u_weight)
        ramp = sigmoid_rampup(batch.step, self.rampup_steps_)
        total = sup + self.lambda_u * ramp * unsup
        logs = {"loss": total.detach(), "sup_loss": sup.detach(), "unsup_loss": unsup.detach(), "ramp": ramp}
        return LossOutput(total, logs, UnlabeledLosses(per_sample, None, z_u, None if feats is None else feats[n_l:]))

    def __repr__(self) -> str:
        return f"MeanTeacher(lambda_u={self.lambda_u}, rampup={self.rampup}, augment={self.augment!r})"
