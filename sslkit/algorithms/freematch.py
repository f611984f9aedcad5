"""FreeMatch (Wang et al., ICLR 2023, "FreeMatch: Self-adaptive Thresholding for Semi-supervised
Learning"), as run by USB for paper B (RDSS) §7.2 / Table 1.

With ``p = softmax(f(weak(x)))`` detached on the unlabeled batch of size μB, ``ŷ = argmax p`` and the EMA
momentum ``m = ema_p`` (0.999), FreeMatch keeps three statistics, initialised (USB) to
``τ_t = 1/C``, ``p̃ = (1/C)·1`` and ``h̃ = (1/C)·1``, and updates them **before** masking, each step, from
the current batch (USB's ``FreeMatchThresholdingHook`` order):

* self-adaptive global threshold: ``τ_t ← m τ_t + (1 − m) · mean_b max p_b`` (with ``use_quantile`` the
  0.8-quantile of ``max p`` instead of the mean; with ``clip_thresh`` τ_t is clipped to [0, 0.95]);
* class-wise expectation of the model's predictions: ``p̃ ← m p̃ + (1 − m) · mean_b p_b``;
* histogram of the weak-view predictions: ``h̃ ← m h̃ + (1 − m) · hist(ŷ) / μB``.

Self-adaptive local thresholds (``MaxNorm``): sample b is masked in when
``max p_b >= τ_t · p̃_{ŷ_b} / max_c p̃_c``.

Self-adaptive fairness (:func:`freematch_fairness_loss`), over the masked-in samples only: with ``q̄`` the
mean softmax of their **strong**-view logits and ``h_s`` the normalised histogram of their strong-view
argmax, ``SumNorm(v) = v / Σ v`` and ``1/0 := 0``,
``L_f = Σ_c SumNorm(p̃ / h̃)_c · log(SumNorm(q̄ / h_s)_c + 1e-12)`` -- the negative cross-entropy
``−H(SumNorm(p̃/h̃), SumNorm(q̄/h_s))`` of the paper; ``L_f = 0`` when no sample is masked in. Gradients flow
through ``q̄`` only (``p̃``, ``h̃`` and ``h_s`` are statistics). The 1e-12 inside the log is USB's.

Total loss: ``CE(f(weak(x_l)), y_l) + lambda_u · mean_{U-batch}(mask · CE(f(strong(x)), ŷ)) + lambda_e · L_f``
(unsupervised mean over the **whole** unlabeled batch, as USB).

Defaults: ``lambda_e = 0.001`` is USB's ``ent_loss_ratio`` in ``freematch_cifar10_40_0.yaml`` (the
CIFAR-10 @ 40 labels configuration paper B's Table 1 starts from); USB's command-line default is 0.01.
``ema_p = 0.999``, ``use_quantile = False``, ``clip_thresh = False`` as in that configuration.

Labeled sets with missing classes (RDSS' small budgets) need nothing special: every statistic
is computed on unlabeled predictions, the ``1/h`` terms map empty classes to 0 instead of inf, and the
masked means use ``max(#masked, 1)`` so nothing divides by zero. The whole step is free of host
synchronisation (the "nothing masked" case is handled arithmetically, not with a Python ``if``).

The views (:class:`sslkit.algorithms.views.Views`) and the joint forward over ``[labeled weak, unlabeled weak,
unlabeled strong]`` (one BatchNorm batch, USB ``use_cat``) are those FixMatch uses. Per-sample weights of the
batch multiply the consistency term; the fairness term is a batch statistic and is not weighted.
:meth:`~FreeMatch.unlabeled_losses` (an inspection) masks with the current statistics and changes none.
Logs: ``loss``, ``sup_loss``, ``unsup_loss``, ``fair_loss`` (L_f), ``mask_rate``, ``tau`` (τ_t).

Checked against USB (``semilearn`` 0.3.2, tests/test_usb_oracle.py): τ_t, p̃, h̃ (also with ``use_quantile`` and
``clip_thresh``), masks, pseudo-labels, the fairness term (USB's ``entropy_loss``, value and gradient), losses
and gradients agree over several steps; no difference was found.
"""

from __future__ import annotations

import math
import numbers

import torch
import torch.nn.functional as F

from sslkit.algorithms.base import FitContext, LossOutput, SSLAlgorithm, UnlabeledLosses, weighted_mean
from sslkit.algorithms.views import Views, unlabeled_forward, weak_strong_forward

__all__ = ["FreeMatch", "freematch_fairness_loss"]

_QUANTILE = 0.8
_CLIP = 0.95
_LOG_EPS = 1e-12


def _inverse_or_zero(v: torch.Tensor) -> torch.Tensor:
    """``1 / v`` with inf (and nan) replaced by 0 (USB's ``nan_to_num(1/h, posinf=0)``)."""
    return torch.nan_to_num(1.0 / v, nan=0.0, posinf=0.0, neginf=0.0)


def freematch_fairness_loss(
    logits_strong: torch.Tensor, mask: torch.Tensor, p_model: torch.Tensor, label_hist: torch.Tensor
) -> torch.Tensor:
    """Self-adaptive fairness ``L_f`` (module docstring) over the rows with ``mask = 1``; 0 when none.

    ``logits_strong``: (B, C) strong-view logits; ``mask``: (B,) 0/1 floats; ``p_model`` = p̃ and
    ``label_hist`` = h̃: (C,) statistics (treated as constants).
    """
    mask = mask.detach().to(torch.float32)
    probs = torch.softmax(logits_strong.float(), dim=1)
    k = probs.shape[1]
    n_in = mask.sum()
    denom = n_in.clamp_min(1.0)
    q_bar = (probs * mask[:, None]).sum(0) / denom
    onehot = torch.nn.functional.one_hot(probs.detach().argmax(1), k).to(torch.float32)
    h_s = (onehot * mask[:, None]).sum(0) / denom
    target = p_model.detach().float() * _inverse_or_zero(label_hist.detach().float())
    target = target / target.sum()
    mod_q = q_bar * _inverse_or_zero(h_s)
    mod_q = mod_q / mod_q.sum().clamp_min(_LOG_EPS)
    value = (target * torch.log(mod_q + _LOG_EPS)).sum()
    return value * (n_in > 0).to(value.dtype)


def _check_real(value, name, low, high, *, high_open=False):
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Real)
        or not math.isfinite(value)
        or value < low
        or value > high
        or (high_open and value == high)
    ):
        raise ValueError(f"{name} must be a finite number in [{low}, {high}{')' if high_open else ']'}, got {value!r}")
    return float(value)


class FreeMatch(SSLAlgorithm):
    """FreeMatch (module docstring).

    Parameters
    ----------
    lambda_u : float >= 0
        Weight of the unsupervised loss (USB: 1).
    lambda_e : float >= 0
        Weight of the fairness term (USB CIFAR-10 @ 40: 0.001; USB CLI default 0.01).
    ema_p : float in [0, 1)
        EMA momentum m of τ_t, p̃, h̃ (USB: 0.999).
    use_quantile, clip_thresh : bool
        τ_t from the 0.8-quantile of the max confidences / clipped to [0, 0.95] (USB: both False).
    augment, weak, strong, mean, std
        As in :class:`sslkit.algorithms.FixMatch`.

    Attributes (after ``setup``): ``time_p_`` (τ_t, 0-d), ``p_model_`` (p̃, C), ``label_hist_`` (h̃, C),
    ``num_classes_``; all float32 tensors on the training device.
    """

    name = "freematch"
    uses_unlabeled = True

    def __init__(
        self,
        *,
        lambda_u=1.0,
        lambda_e=0.001,
        ema_p=0.999,
        use_quantile=False,
        clip_thresh=False,
        augment="auto",
        weak=None,
        strong=None,
        mean=None,
        std=None,
    ):
        self.lambda_u = _check_real(lambda_u, "lambda_u", 0.0, math.inf)
        self.lambda_e = _check_real(lambda_e, "lambda_e", 0.0, math.inf)
        self.ema_p = _check_real(ema_p, "ema_p", 0.0, 1.0, high_open=True)
        for v, nm in ((use_quantile, "use_quantile"), (clip_thresh, "clip_thresh")):
            if not isinstance(v, bool):
                raise TypeError(f"{nm} must be True or False, got {v!r}")
        self.use_quantile, self.clip_thresh = use_quantile, clip_thresh
        self.views = Views(augment, weak=weak, strong=strong, mean=mean, std=std)
        self.augment = augment
        self.time_p_ = self.p_model_ = self.label_hist_ = None

    def setup(self, model, ctx: FitContext):
        """Initialise ``τ_t = 1/C``, ``p̃ = h̃ = (1/C)·1`` (USB) on ``ctx.device``."""
        k, device = ctx.num_classes, ctx.device
        self.num_classes_ = k
        self.p_model_ = torch.full((k,), 1.0 / k, dtype=torch.float32, device=device)
        self.label_hist_ = torch.full((k,), 1.0 / k, dtype=torch.float32, device=device)
        self.time_p_ = self.p_model_.mean()

    def _check_setup(self):
        if self.p_model_ is None:
            raise RuntimeError(
                "FreeMatch.setup(model, FitContext(...)) must be called before use "
                "(the trainer does it at the start of fit)"
            )

    @torch.no_grad()
    def update(self, probs: torch.Tensor) -> None:
        """EMA updates of τ_t, p̃ and h̃ from the weak-view probabilities of one batch (before masking)."""
        self._check_setup()
        m = self.ema_p
        conf, labels = probs.max(dim=1)
        batch_tau = torch.quantile(conf, _QUANTILE) if self.use_quantile else conf.mean()
        self.time_p_ = m * self.time_p_ + (1 - m) * batch_tau
        if self.clip_thresh:
            self.time_p_ = self.time_p_.clamp(0.0, _CLIP)
        self.p_model_ = m * self.p_model_ + (1 - m) * probs.mean(dim=0)
        hist = torch.bincount(labels, minlength=self.num_classes_).to(torch.float32)
        self.label_hist_ = m * self.label_hist_ + (1 - m) * hist / hist.sum()

    def class_thresholds(self) -> torch.Tensor:
        """Self-adaptive local thresholds ``τ_t · p̃_c / max_c p̃_c`` (current state)."""
        self._check_setup()
        return self.time_p_ * self.p_model_ / self.p_model_.max()

    def mask(self, probs: torch.Tensor) -> torch.Tensor:
        """Float 0/1 mask ``max p >= τ_t · p̃_{argmax p} / max p̃`` with the current state."""
        conf, labels = probs.max(dim=1)
        return (conf >= self.class_thresholds()[labels]).float()

    def _follow(self, device) -> None:
        """Move the statistics to ``device`` (the trainer may move the model after ``setup``)."""
        self._check_setup()
        if self.p_model_.device != device:
            self.time_p_, self.p_model_, self.label_hist_ = (
                t.to(device) for t in (self.time_p_, self.p_model_, self.label_hist_)
            )

    def unlabeled_losses(self, model, x_u, u_idx=None):
        """Per-sample masked CE on the strong view of ``x_u``, masked with the current statistics (no EMA
        update: an inspection changes no state)."""
        self._follow(x_u.device)
        z_w, z_s, h_s = unlabeled_forward(model, self.views, x_u)
        with torch.no_grad():
            probs = torch.softmax(z_w.detach(), dim=1)
            mask = self.mask(probs)
            labels = probs.argmax(dim=1)
        return UnlabeledLosses(F.cross_entropy(z_s, labels, reduction="none"), mask, z_s, h_s)

    def loss(self, model, batch):
        """One FreeMatch step (module docstring)."""
        x_u = batch.x_u
        self._follow(x_u.device)
        z_l, z_w, z_s, h_s = weak_strong_forward(model, self.views, batch.x_l, x_u)
        sup = F.cross_entropy(z_l, batch.y_l)
        with torch.no_grad():
            probs = torch.softmax(z_w.detach(), dim=1)
            self.update(probs)  # statistics first ...
            mask = self.mask(probs)  # ... then the mask (USB order)
            labels = probs.argmax(dim=1)
        ce = F.cross_entropy(z_s, labels, reduction="none")
        unsup = weighted_mean(ce * mask, batch.u_weight)
        fair = freematch_fairness_loss(z_s, mask, self.p_model_, self.label_hist_)
        total = sup + self.lambda_u * unsup + self.lambda_e * fair
        logs = {
            "loss": total.detach(),
            "sup_loss": sup.detach(),
            "unsup_loss": unsup.detach(),
            "fair_loss": fair.detach(),
            "mask_rate": mask.mean(),
            "tau": self.time_p_.detach(),
        }
        return LossOutput(total, logs, UnlabeledLosses(ce, mask, z_s, h_s))

    def __repr__(self) -> str:
        return (
            f"FreeMatch(lambda_u={self.lambda_u}, lambda_e={self.lambda_e}, ema_p={self.ema_p}, "
            f"use_quantile={self.use_quantile}, clip_thresh={self.clip_thresh}, augment={self.augment!r})"
        )
