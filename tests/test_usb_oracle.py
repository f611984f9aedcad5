"""sslkit's six USB-family algorithms against USB itself (``semilearn`` 0.3.2, the reference implementation
paper B trains with): FixMatch, FlexMatch, FreeMatch, VAT, Mean Teacher and Pseudo-Label.

Each test gives an sslkit algorithm and USB's algorithm object (built by its own ``__init__``,
tests/usb_reference.py) the same network, the same batch and the same state, runs one or more steps of both
(USB's ``train_step``, which computes the loss; its parameter update is a separate hook that is never
called) and requires the losses, the gradients they send to the network, the masks, the pseudo-labels and
the algorithm state (FlexMatch's ``selected_label`` / ``classwise_acc``, FreeMatch's ``time_p`` /
``p_model`` / ``label_hist``, VAT's adversarial perturbation, the EMA teacher) to agree.

Precision: the networks are float64 (VAT's float32, see its section); sslkit casts logits to float32 before
its losses (for mixed precision) while USB keeps the network's dtype, so values agree to float32 rounding
(``rtol=1e-5``).
Masks, pseudo-labels and USB's per-sample state agree exactly; each test asserts that its data put
samples on both sides of the thresholds, so an agreement of masks is not vacuous.

Where USB differs on purpose or by a bug, the test asserts the difference explicitly (``test_*_differs_*``
and ``test_usb_*``), and the sslkit docstring of the algorithm says which reading sslkit follows and why.
"""

from __future__ import annotations

import copy
import functools
import logging
import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from sslkit.algorithms import (
    VAT,
    Batch,
    FitContext,
    FixMatch,
    FlexMatch,
    FreeMatch,
    Hook,
    MeanTeacher,
    PseudoLabel,
    freematch_fairness_loss,
    frozen_bn,
    masked_ce,
    pseudo_labels,
    sigmoid_rampup,
    supervised_ce,
    weighted_mean,
)
from sslkit.algorithms.vat import kl_per_sample
from sslkit.engine import Trainer
from sslkit.seeding import make_generator

try:
    import usb_reference

    USB = usb_reference.usb_modules()
except ImportError as exc:  # semilearn is installed by .ci/setup; elsewhere these tests are skipped
    pytest.skip(f"USB (semilearn 0.3.2) is not importable: {exc}", allow_module_level=True)

pytestmark = pytest.mark.usefixtures("one_thread")

F32 = dict(rtol=1e-5, atol=1e-6)  # sslkit computes its losses in float32, USB in the network's float64
K = 3  # classes
D = 5  # tabular input width
QUIET = logging.getLogger("usb-oracle")
QUIET.disabled = True


# --------------------------------------------------------------------------------------------- set-up


class Tabular(nn.Module):
    """Linear -> (BatchNorm1d) -> tanh -> Linear; ``(logits, features)``; ``scale`` widens the logits so that
    some softmax confidences pass 0.95. ``seen`` records every input (VAT's perturbed passes)."""

    def __init__(self, seed=0, bn=False, scale=3.0, hidden=6):
        super().__init__()
        torch.manual_seed(seed)
        self.body = nn.Sequential(nn.Linear(D, hidden), *([nn.BatchNorm1d(hidden)] if bn else []), nn.Tanh())
        self.classifier = nn.Linear(hidden, K)
        with torch.no_grad():
            self.classifier.weight.mul_(scale)
        self.seen = []
        self.double()

    def forward(self, x):
        self.seen.append(x.detach().clone())
        h = self.body(x)
        return self.classifier(h), h


class Image(nn.Module):
    """Conv 3x3 -> BatchNorm2d -> tanh -> Linear on (N, 1, 4, 4) images; records its inputs."""

    def __init__(self, seed=0):
        super().__init__()
        torch.manual_seed(seed)
        self.conv, self.bn = nn.Conv2d(1, 2, 3, padding=1), nn.BatchNorm2d(2)
        self.classifier = nn.Linear(32, K)
        self.seen = []
        self.double()

    def forward(self, x):
        self.seen.append(x.detach().clone())
        h = torch.tanh(self.bn(self.conv(x))).flatten(1)
        return self.classifier(h), h


def ident(x):
    return x


def strong_view(x):
    """A fixed 'strong augmentation': deterministic, so both implementations see the same strong view."""
    return 0.6 * x + 0.8 * torch.roll(x, 1, dims=1) - 0.3


def data(seed, n_l=6, n_u=10, shape=(D,), spread=2.0):
    g = make_generator(seed)
    x_l = torch.randn(n_l, *shape, generator=g, dtype=torch.float64) * spread
    y_l = torch.randint(0, K, (n_l,), generator=g)
    x_u = torch.randn(n_u, *shape, generator=g, dtype=torch.float64) * spread
    return x_l, y_l, x_u


def build(algorithm, model, **kwargs):
    return usb_reference.build(algorithm, model, K, logger=QUIET, **kwargs)


def spy(obj, name, hook=None, arg=None):
    """Record what ``obj.name`` (or USB hook ``hook``'s ``name``) returns each time it is called (or, with
    ``arg=i``, its i-th positional argument)."""
    target = obj.hooks_dict[hook] if hook is not None else obj
    method, seen = getattr(target, name), []

    def wrapper(*args, **kwargs):
        out = method(*args, **kwargs)
        seen.append(out if arg is None else args[arg])
        return out

    setattr(target, name, wrapper)
    return seen


def grads(loss, model):
    return torch.autograd.grad(loss, list(model.parameters()))


def assert_close_all(ours, ref, **tol):
    assert len(ours) == len(ref)
    for a, b in zip(ours, ref):
        torch.testing.assert_close(a.double(), b.double(), **(tol or F32))


def bn_buffers(model):
    return [b.clone() for name, b in model.named_buffers() if "running" in name]


def perturb(model, seed, size):
    """Add ``size · N(0, 1)`` noise to every weight (the same noise for the same seed and architecture)."""
    g = make_generator(seed)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(torch.randn(p.shape, generator=g, dtype=p.dtype) * size)


def perturb_both(model, usb_alg, seed, size=0.3):
    """The same random change of the weights in both networks (so predictions move between steps)."""
    perturb(model, seed, size)
    perturb(usb_alg.model, seed, size)


# ------------------------------------------------------------------------------------- shared helpers


def test_loss_helpers_match_usb_criterions():
    """``supervised_ce`` = USB ``ce_loss(mean)``; ``masked_ce`` + ``weighted_mean`` = USB
    ``consistency_loss(..., 'ce', mask)`` (mean over the whole batch, masked terms count as 0); USB's soft-target
    ``ce_loss`` with one-hot targets is the hard CE; VAT's ``kl_per_sample`` = USB ``kl_div_with_logit``."""
    g = make_generator(0)
    z, z_t = torch.randn(9, K, generator=g, dtype=torch.float64) * 2, torch.randn(9, K, generator=g) * 2
    y = torch.randint(0, K, (9,), generator=g)
    mask = (torch.rand(9, generator=g) > 0.4).double()
    assert 0 < mask.sum() < 9
    crit = USB.criterions
    torch.testing.assert_close(supervised_ce(z, y).double(), crit.ce_loss(z, y, reduction="mean"), **F32)
    ours = masked_ce(z, y, mask)
    torch.testing.assert_close(ours.double(), crit.ce_loss(z, y) * mask, **F32)
    torch.testing.assert_close(weighted_mean(ours, None).double(), crit.consistency_loss(z, y, "ce", mask), **F32)
    torch.testing.assert_close(crit.ce_loss(z, F.one_hot(y, K).double()), crit.ce_loss(z, y))
    # masked_ce is the mean over the whole batch, not over the confident samples
    assert not torch.isclose(weighted_mean(ours, None), ours.sum() / mask.sum())
    # VAT's KL: batch mean of KL(softmax(z_t) || softmax(z))
    usb_kl = USB.classes["vat"].kl_div_with_logit(None, z_t.double(), z)
    torch.testing.assert_close(kl_per_sample(torch.softmax(z_t.double(), 1), z).mean().double(), usb_kl, **F32)


# -------------------------------------------------------------------------------------------- FixMatch


@pytest.mark.parametrize("bn", [False, True])
def test_fixmatch_step_agrees_with_usb(bn):
    """One FixMatch step: mask (fixed τ, ``>=``), hard pseudo-labels, sup / unsup / total loss, gradients
    and (with BatchNorm, one concatenated forward in both) the running statistics."""
    tau, lam = 0.8, 0.7
    model = Tabular(bn=bn)
    x_l, y_l, x_u = data(1)
    ours = FixMatch(tau, lambda_u=lam, weak=ident, strong=strong_view)
    usb = build("fixmatch", model, p_cutoff=tau, T=0.5, hard_label=True, ulb_loss_ratio=lam)
    our_masks, usb_masks = spy(ours, "unlabeled_mask"), spy(usb, "masking", "MaskingHook")
    usb_labels = spy(usb, "gen_ulb_targets", "PseudoLabelingHook")

    out = ours.loss(model, Batch(x_l, y_l, x_u))
    ref, log = usb.train_step(x_lb=x_l, y_lb=y_l, x_ulb_w=x_u, x_ulb_s=strong_view(x_u))

    (labels, mask), usb_mask = our_masks[0], usb_masks[0]
    assert 0 < mask.sum() < len(x_u)  # τ splits the batch
    assert torch.equal(mask.double(), usb_mask)
    assert torch.equal(labels, usb_labels[0])
    torch.testing.assert_close(out.loss.double(), ref["loss"], **F32)
    assert out.logs["sup_loss"].item() == pytest.approx(log["train/sup_loss"], rel=1e-5)
    assert out.logs["unsup_loss"].item() == pytest.approx(log["train/unsup_loss"], rel=1e-5)
    assert out.logs["mask_rate"].item() == pytest.approx(log["train/util_ratio"])
    assert_close_all(grads(out.loss, model), grads(ref["loss"], usb.model))
    assert_close_all(bn_buffers(model), bn_buffers(usb.model), rtol=1e-12, atol=1e-12)


def test_usb_fixmatch_soft_labels_ignore_the_temperature():
    """USB's soft-label FixMatch (``hard_label=False``) passes probabilities with ``softmax=False`` to its
    pseudo-labelling hook, which then returns them unchanged: T is never applied (the hook sharpens only when
    it computes the softmax itself, as in FreeMatch). sslkit's FixMatch has hard labels only (Sohn et al. eq. 2,
    paper A App. D.1), i.e. USB's default ``hard_label=True``, which the previous test matches."""
    model = Tabular()
    x_l, y_l, x_u = data(2)
    losses = []
    for T in (0.5, 2.0):
        usb = build("fixmatch", model, p_cutoff=0.8, T=T, hard_label=False)
        targets = spy(usb, "gen_ulb_targets", "PseudoLabelingHook")
        _, log = usb.train_step(x_lb=x_l, y_lb=y_l, x_ulb_w=x_u, x_ulb_s=strong_view(x_u))
        torch.testing.assert_close(targets[0], torch.softmax(model(x_u)[0], 1))  # unsharpened probabilities
        losses.append(log["train/unsup_loss"])
    assert losses[0] == losses[1]
    hook = USB.hooks.PseudoLabelingHook()  # with softmax=True the same hook does apply T
    z = torch.randn(4, K, dtype=torch.float64)
    torch.testing.assert_close(hook.gen_ulb_targets(usb, z, use_hard_label=False, T=0.5), torch.softmax(z / 0.5, 1))
    ours = FixMatch(0.8, weak=ident, strong=strong_view).loss(model, Batch(x_l, y_l, x_u))
    assert ours.logs["unsup_loss"].item() != pytest.approx(losses[0], rel=1e-3)  # hard labels differ from soft


# ------------------------------------------------------------------------------------------- FlexMatch


@pytest.mark.parametrize("warmup", [True, False])
def test_flexmatch_steps_agree_with_usb(warmup):
    """Eight FlexMatch steps over a pool of 8 unlabeled samples, the network changing between steps: per step
    the class-wise mask, the pseudo-labels, the losses and gradients; after each step ``selected_label`` and
    ``classwise_acc`` (β, with and without the threshold warm-up) -- USB's order: mask with the previous β,
    then record the confident labels and recompute β."""
    n = 8
    model = Tabular(seed=3, scale=8.0)
    _, _, pool = data(3, n_u=n)
    ours = FlexMatch(0.95, thresh_warmup=warmup, num_unlabeled=n, weak=ident, strong=strong_view)
    ours.setup(model, FitContext(num_classes=K))
    usb = build("flexmatch", model, p_cutoff=0.95, T=0.5, hard_label=True, thresh_warmup=warmup, ulb_dest_len=n)
    hook = usb.hooks_dict["MaskingHook"]
    our_masks, usb_masks = spy(ours, "unlabeled_mask"), spy(usb, "masking", "MaskingHook")
    usb_labels = spy(usb, "gen_ulb_targets", "PseudoLabelingHook")
    g = make_generator(4)
    split_masks = 0
    for step in range(8):
        idx = torch.randperm(n, generator=g)[:6]
        x_l, y_l, _ = data(10 + step, n_u=1)
        out = ours.loss(model, Batch(x_l, y_l, pool[idx], u_idx=idx, step=step))
        ref, log = usb.train_step(x_lb=x_l, y_lb=y_l, idx_ulb=idx, x_ulb_w=pool[idx], x_ulb_s=strong_view(pool[idx]))
        (labels, mask), usb_mask = our_masks[-1], usb_masks[-1]
        assert torch.equal(mask.double(), usb_mask), step
        assert torch.equal(labels, usb_labels[-1]), step
        split_masks += bool(0 < mask.sum() < len(idx))
        torch.testing.assert_close(out.loss.double(), ref["loss"], **F32)
        assert out.logs["unsup_loss"].item() == pytest.approx(log["train/unsup_loss"], rel=1e-5, abs=1e-7)
        assert_close_all(grads(out.loss, model), grads(ref["loss"], usb.model))
        assert torch.equal(ours.selected_label_, hook.selected_label), step
        torch.testing.assert_close(ours.classwise_acc_, hook.classwise_acc, rtol=0, atol=1e-7)
        torch.testing.assert_close(
            ours.class_thresholds(), 0.95 * (hook.classwise_acc / (2.0 - hook.classwise_acc)), rtol=0, atol=1e-7
        )
        perturb_both(model, usb, seed=20 + step)
    assert ours.index_mode_ == "exact"
    # the data exercised the interesting cases
    assert split_masks >= 3
    assert 0 < (ours.selected_label_ >= 0).sum() < n  # some samples confident, some never
    assert ((ours.classwise_acc_ > 0) & (ours.classwise_acc_ < 1)).any()


def _flex_pair(n, warmup):
    ours = FlexMatch(0.95, thresh_warmup=warmup, num_unlabeled=n, weak=ident, strong=ident)
    ours.setup(None, FitContext(num_classes=K))
    return ours, USB.FlexMatchThresholdingHook(ulb_dest_len=n, num_classes=K, thresh_warmup=warmup)


def _flex_step(ours, hook, probs, idx):
    usb_alg = type("Alg", (), {"p_cutoff": 0.95})()
    usb_mask = hook.masking(usb_alg, probs, idx, softmax_x_ulb=False)
    our_mask = ours.mask(probs)
    ours.update(probs, idx)
    return our_mask, usb_mask


@pytest.mark.parametrize("warmup", [True, False])
def test_flexmatch_thresholding_matches_usb_hook_over_many_steps(warmup):
    """``FlexMatch.mask`` / ``update`` against USB's ``FlexMatchThresholdingHook`` on 40 random batches
    (probabilities drawn directly, 20% of them confident): masks, ``selected_label``, ``classwise_acc``."""
    n = 30
    ours, hook = _flex_pair(n, warmup)
    g = make_generator(5)
    for _ in range(40):
        idx = torch.randperm(n, generator=g)[:7]
        logits = torch.randn(7, K, generator=g) * 2
        logits[torch.rand(7, generator=g) < 0.2, 0] += 6  # some confident ones
        probs = torch.softmax(logits[:, torch.randperm(K, generator=g)], 1)
        our_mask, usb_mask = _flex_step(ours, hook, probs, idx)
        assert torch.equal(our_mask, usb_mask)
        assert torch.equal(ours.selected_label_, hook.selected_label)
        torch.testing.assert_close(ours.classwise_acc_, hook.classwise_acc, rtol=0, atol=1e-7)
    assert 0 < (ours.selected_label_ >= 0).sum() < n


def test_flexmatch_differs_from_usb_when_every_sample_has_the_same_label():
    """The one documented deviation (FlexMatch module docstring): USB skips the β update when all N_U samples
    carry the same label (its ``max(counter) < N`` test, meant for "nothing selected yet"); sslkit recomputes β.
    5 samples, class 0: first 2 confident (β_0 = 2 / max(2, 3 unused) = 2/3 in both), then the other 3."""
    ours, hook = _flex_pair(5, True)
    confident = torch.tensor([[0.97, 0.02, 0.01]] * 3)
    _flex_step(ours, hook, confident[:2], torch.tensor([0, 1]))
    torch.testing.assert_close(ours.classwise_acc_, torch.tensor([2 / 3, 0.0, 0.0]))
    torch.testing.assert_close(hook.classwise_acc, torch.tensor([2 / 3, 0.0, 0.0]))
    _flex_step(ours, hook, confident, torch.tensor([2, 3, 4]))
    assert torch.equal(ours.selected_label_, hook.selected_label)  # both record the labels ...
    torch.testing.assert_close(hook.classwise_acc, torch.tensor([2 / 3, 0.0, 0.0]))  # ... USB keeps the old β
    torch.testing.assert_close(ours.classwise_acc_, torch.tensor([1.0, 0.0, 0.0]))  # σ_0 / max(σ, #unused) = 5/5


# ------------------------------------------------------------------------------------------- FreeMatch


@pytest.mark.parametrize("use_quantile, clip_thresh", [(False, False), (True, True)])
def test_freematch_steps_agree_with_usb(use_quantile, clip_thresh):
    """Four FreeMatch steps (EMA momentum 0.9 so the statistics move): after each step τ_t (``time_p``), p̃
    (``p_model``), h̃ (``label_hist``); the self-adaptive mask, the pseudo-labels, the total loss with the
    fairness term and its gradients. The state starts as if mid-training (τ_t = 0.6, non-uniform p̃ and h̃; with
    ``clip_thresh`` τ_t = 0.99, so the clip acts)."""
    lam_u, lam_e, m = 1.0, 0.3, 0.9
    model = Tabular(seed=6, bn=True, scale=4.0)
    ours = FreeMatch(
        lambda_u=lam_u, lambda_e=lam_e, ema_p=m, use_quantile=use_quantile, clip_thresh=clip_thresh,
        weak=ident, strong=strong_view,
    )  # fmt: skip
    ours.setup(model, FitContext(num_classes=K))
    usb = build(
        "freematch", model, T=0.5, hard_label=True, ema_p=m, ent_loss_ratio=lam_e, use_quantile=use_quantile,
        clip_thresh=clip_thresh, ulb_loss_ratio=lam_u,
    )  # fmt: skip
    hook = usb.hooks_dict["MaskingHook"]
    ours.time_p_, hook.time_p = torch.tensor(0.99 if clip_thresh else 0.6), torch.tensor(0.99 if clip_thresh else 0.6)
    ours.p_model_, hook.p_model = torch.tensor([0.5, 0.3, 0.2]), torch.tensor([0.5, 0.3, 0.2])
    ours.label_hist_, hook.label_hist = torch.tensor([0.2, 0.3, 0.5]), torch.tensor([0.2, 0.3, 0.5])
    our_probs, our_masks = spy(ours, "update", arg=0), spy(ours, "mask")
    usb_masks, usb_labels = spy(usb, "masking", "MaskingHook"), spy(usb, "gen_ulb_targets", "PseudoLabelingHook")
    split = 0
    for step in range(4):
        x_l, y_l, x_u = data(30 + step, n_u=12)
        out = ours.loss(model, Batch(x_l, y_l, x_u, step=step))
        ref, log = usb.train_step(x_lb=x_l, y_lb=y_l, x_ulb_w=x_u, x_ulb_s=strong_view(x_u))
        mask, usb_mask = our_masks[-1], usb_masks[-1]
        assert torch.equal(mask.double(), usb_mask), step
        assert torch.equal(our_probs[-1].argmax(1), usb_labels[-1]), step
        split += bool(0 < mask.sum() < len(x_u))
        if clip_thresh and step == 0:  # 0.9 * 0.99 + 0.1 * mean(max p) > 0.95: clipped in both
            assert ours.time_p_.item() == pytest.approx(0.95) and hook.time_p.item() == pytest.approx(0.95)
        torch.testing.assert_close(ours.time_p_.double(), hook.time_p.double(), **F32)
        torch.testing.assert_close(ours.p_model_.double(), hook.p_model.double(), **F32)
        torch.testing.assert_close(ours.label_hist_.double(), hook.label_hist.double(), **F32)
        torch.testing.assert_close(out.loss.double(), ref["loss"], **F32)
        assert out.logs["unsup_loss"].item() == pytest.approx(log["train/unsup_loss"], rel=1e-5, abs=1e-7)
        assert_close_all(grads(out.loss, model), grads(ref["loss"], usb.model))
        # USB's fairness term (its entropy_loss: the total minus sup and unsup) = sslkit's logged L_f
        fair = ref["loss"] - log["train/sup_loss"] - lam_u * log["train/unsup_loss"]
        assert out.logs["fair_loss"].item() * lam_e == pytest.approx(fair.item(), rel=1e-4, abs=1e-7)
        perturb_both(model, usb, seed=40 + step, size=0.2)
    assert split >= 2
    assert abs(out.logs["fair_loss"].item()) > 1e-3  # the fairness term is not trivially 0


def test_freematch_fairness_matches_usb_entropy_loss():
    """``freematch_fairness_loss`` = USB's ``entropy_loss`` (value and gradient w.r.t. the strong logits),
    including classes absent from the masked strong predictions (``1/0 -> 0``)."""
    g = make_generator(7)
    z = (torch.randn(10, K, generator=g, dtype=torch.float64) * 2).requires_grad_(True)
    mask = torch.zeros(10, dtype=torch.float64)
    keep = (z.detach().argmax(1) != 2).nonzero().flatten()[:4]
    assert len(keep) >= 2
    mask[keep] = 1.0  # no masked sample predicts class 2: h_s[2] = 0
    p_model = torch.softmax(torch.randn(K, generator=g), 0)
    label_hist = torch.softmax(torch.randn(K, generator=g), 0)
    ours = freematch_fairness_loss(z, mask, p_model, label_hist)
    ref, _ = USB.freematch.entropy_loss(mask, z, p_model, label_hist)
    torch.testing.assert_close(ours.double(), ref, **F32)
    assert_close_all(torch.autograd.grad(ours, z), torch.autograd.grad(ref, z))
    assert ours.item() != 0


def test_freematch_nothing_masked_agrees_with_usb():
    """τ_t near 1 in both: nothing is masked in, the fairness term is 0 in sslkit and skipped in USB."""
    model = Tabular(seed=8)
    x_l, y_l, x_u = data(8)
    ours = FreeMatch(lambda_e=0.5, weak=ident, strong=strong_view)
    ours.setup(model, FitContext(num_classes=K))
    usb = build("freematch", model, T=0.5, hard_label=True, ema_p=0.999, ent_loss_ratio=0.5, use_quantile=False,
                clip_thresh=False)  # fmt: skip
    ours.time_p_ = usb.hooks_dict["MaskingHook"].time_p = torch.tensor(0.9999)
    out = ours.loss(model, Batch(x_l, y_l, x_u))
    ref, log = usb.train_step(x_lb=x_l, y_lb=y_l, x_ulb_w=x_u, x_ulb_s=strong_view(x_u))
    assert out.logs["mask_rate"].item() == 0 == log["train/util_ratio"]
    assert out.logs["fair_loss"].item() == 0
    torch.testing.assert_close(out.loss.double(), ref["loss"], **F32)
    torch.testing.assert_close(out.loss.double(), supervised_ce(model(x_l)[0], y_l).double(), **F32)


# ------------------------------------------------------------------------------------------------- VAT
# float32 networks here: sslkit computes its KL in float32 whatever the network's dtype, USB in the network's
# dtype, so float32 is where both do the same arithmetic. ξ = 0.1 (passed to USB's vat_loss): the finite
# difference ``softmax(z + J ξd) − p`` is then far above float32 rounding, and the two directions agree to
# ~2e-5 ε on every CPU dispatch level. At USB's and paper A's ξ = 1e-6 that difference is of the order of
# float32 rounding, so both implementations' directions are mostly rounding (on these tiny networks they still
# agree with each other, but a test of that would test rounding, not the method).


@pytest.fixture
def usb_vat_on_cpu(monkeypatch):
    """USB's ``vat_loss`` moves its random direction with ``d.cuda(self.gpu)``; ``Tensor.cuda`` is the identity
    while USB's code runs on the CPU. (It draws the direction with ``torch.Tensor(size).normal_()``, which gives
    the same numbers as sslkit's ``torch.randn_like`` from the same seed for float32 inputs.)"""
    monkeypatch.setattr(torch.Tensor, "cuda", lambda self, *args, **kwargs: self)


def usb_vat(model, eps, lam=1.0, xi=None, **kwargs):
    args = dict(ent_loss_ratio=0.0, vat_eps=eps, vat_embed=False, unsup_warm_up=0.4, ulb_loss_ratio=lam)
    usb = build("vat", model, **{**args, **kwargs})
    if xi is not None:  # USB's train_step calls vat_loss with its default xi = 1e-6
        usb.vat_loss = functools.partial(type(usb).vat_loss, usb, xi=xi)
    return usb


def image_data(seed):
    return tuple(t.float() if t.is_floating_point() else t for t in data(seed, shape=(1, 4, 4)))


@pytest.mark.usefixtures("usb_vat_on_cpu")
def test_vat_step_agrees_with_usb():
    """One VAT step on (N, 1, 4, 4) images with BatchNorm2d, the same random start (same seed): the probe
    ``x + ξ d/|d|``, the adversarial perturbation ``r_adv`` (per-sample norm ε), sup / unsup / total loss,
    gradients, and the running statistics (unlabeled passes frozen in both, so only the labeled pass counts).
    USB's entropy-minimisation weight is 0 and its ramp at 1 here (both differ on purpose: next tests)."""
    eps, xi, lam = 1.5, 0.1, 0.8
    model = Image().float()
    x_l, y_l, x_u = image_data(50)
    ours = VAT(eps, xi=xi, lambda_u=lam)
    ours.setup(model, FitContext(num_classes=K))
    usb = usb_vat(model, eps, lam, xi=xi)
    usb.it = usb.num_train_iter  # USB's unsupervised ramp at 1
    torch.manual_seed(11)
    out = ours.loss(model, Batch(x_l, y_l, x_u))
    torch.manual_seed(11)
    ref, log = usb.train_step(x_lb=x_l, y_lb=y_l, x_ulb_w=x_u)
    seen, usb_seen = model.seen, usb.model.net.seen  # passes: labeled, clean unlabeled, probe, adversarial
    assert len(seen) == len(usb_seen) == 4
    torch.testing.assert_close(seen[2], usb_seen[2], rtol=0, atol=1e-7)  # the same probe x + ξ d/|d|
    r_ours, r_usb = seen[3] - x_u, usb_seen[3] - x_u
    torch.testing.assert_close(r_ours.flatten(1).norm(dim=1), torch.full((len(x_u),), eps))
    torch.testing.assert_close(r_ours, r_usb, rtol=0, atol=2e-4 * eps)
    torch.testing.assert_close(out.loss, ref["loss"], rtol=1e-5, atol=1e-6)
    assert out.logs["unsup_loss"].item() == pytest.approx(log["train/unsup_loss"], rel=1e-4)
    assert out.logs["unsup_loss"].item() > 1e-3
    assert_close_all(grads(out.loss, model), grads(ref["loss"], usb.model), rtol=1e-4, atol=1e-6)
    assert_close_all(bn_buffers(model), bn_buffers(usb.model), rtol=1e-6, atol=1e-7)


@pytest.mark.usefixtures("usb_vat_on_cpu")
@pytest.mark.parametrize("eps", [0.5, 2.0])
def test_vat_power_iterations_agree_with_usb(eps):
    """``VAT.adversarial_perturbation`` with 1, 2 and 3 power iterations = USB's ``vat_loss(num_iters=...)``
    (same seed, BatchNorm frozen in both); the direction changes with the number of iterations, so a wrong
    count would fail."""
    xi = 0.1
    model = Image(seed=1).float()
    _, _, x_u = image_data(51)
    usb = usb_vat(model, eps)
    found = {}
    for n_power in (1, 2, 3):
        with frozen_bn(model):
            p = torch.softmax(model(x_u)[0], dim=1)
            torch.manual_seed(12)
            r_ours = VAT(eps, xi=xi, n_power=n_power).adversarial_perturbation(model, x_u, p)
        usb.bn_controller.freeze_bn(usb.model)
        ul_y = usb.model(x_u)["logits"]
        torch.manual_seed(12)
        usb.vat_loss(usb.model, x_u, ul_y, xi=xi, eps=eps, num_iters=n_power)
        usb.bn_controller.unfreeze_bn(usb.model)
        r_usb = usb.model.net.seen[-1] - x_u
        torch.testing.assert_close(r_ours, r_usb, rtol=0, atol=2e-4 * eps)
        found[n_power] = r_ours
    assert (found[1] - found[3]).abs().max() > 1e-2 * eps


@pytest.mark.usefixtures("usb_vat_on_cpu")
def test_vat_differs_from_usb_by_entropy_minimisation_and_ramp():
    """USB's VAT adds ``ent_loss_ratio · H(softmax(f(x_u)))`` (0.06) and ramps the VAT term linearly over 40% of
    training; sslkit follows paper A App. C (no entropy term, no ramp): ``CE + λ·KL``."""
    eps, lam, xi = 1.0, 1.0, 0.1
    model = Image(seed=2).float()
    x_l, y_l, x_u = image_data(52)
    ours = VAT(eps, xi=xi, lambda_u=lam)
    ours.setup(model, FitContext(num_classes=K))
    usb = usb_vat(model, eps, lam, xi=xi, ent_loss_ratio=0.06, num_train_iter=100)
    usb.it = 20  # ramp 20 / 40 = 0.5
    torch.manual_seed(13)
    out = ours.loss(model, Batch(x_l, y_l, x_u, step=20))
    torch.manual_seed(13)
    ref, log = usb.train_step(x_lb=x_l, y_lb=y_l, x_ulb_w=x_u)
    with frozen_bn(model):
        p = torch.softmax(model(x_u)[0], dim=1)
    entropy = -(p * p.log()).sum(1).mean().item()
    assert log["train/loss_entmin"] == pytest.approx(entropy, rel=1e-5)
    usb_total = log["train/sup_loss"] + lam * 0.5 * log["train/unsup_loss"] + 0.06 * entropy
    assert ref["loss"].item() == pytest.approx(usb_total, rel=1e-5)
    assert out.loss.item() == pytest.approx(out.logs["sup_loss"].item() + lam * out.logs["unsup_loss"].item(), rel=1e-6)
    assert out.logs["unsup_loss"].item() == pytest.approx(log["train/unsup_loss"], rel=1e-4)  # the same KL
    assert abs(out.loss.item() - ref["loss"].item()) > 1e-2


@pytest.mark.usefixtures("usb_vat_on_cpu")
def test_usb_vat_does_not_normalise_tabular_directions():
    """USB's ``_l2_normalize`` divides by the norm only for 3-D and 4-D arrays; a 2-D (N, d) tabular batch passes
    through unchanged. USB's tabular VAT therefore probes with ``ξ · N(0, I)`` and perturbs by ``ε ·`` the raw KL
    gradient, whose norm is tiny: the perturbation and the VAT term all but vanish. sslkit normalises every sample
    over all its non-batch dimensions (``r_adv`` of norm ε), as in Miyato et al. (paper A uses VAT on tabular data)."""
    eps = 1.0
    model = Tabular(seed=4).float()
    x_l, y_l, x_u = (t.float() if t.is_floating_point() else t for t in data(53))
    ours = VAT(eps)
    ours.setup(model, FitContext(num_classes=K))
    usb = usb_vat(model, eps)
    usb.it = usb.num_train_iter
    torch.manual_seed(14)
    out = ours.loss(model, Batch(x_l, y_l, x_u))
    torch.manual_seed(14)
    _, log = usb.train_step(x_lb=x_l, y_lb=y_l, x_ulb_w=x_u)
    torch.manual_seed(14)
    raw = torch.randn_like(x_u)
    torch.testing.assert_close(usb.model.net.seen[2] - x_u, 1e-6 * raw)  # the probe: ξ times the raw draw
    r_ours, r_usb = model.seen[3] - x_u, usb.model.net.seen[3] - x_u
    torch.testing.assert_close(r_ours.norm(dim=1), torch.full((len(x_u),), eps))
    assert r_usb.norm(dim=1).max() < 1e-3 * eps
    assert log["train/unsup_loss"] < 1e-6 < 1e-3 < out.logs["unsup_loss"].item()


def test_usb_bn_controller_freezes_only_2d_batchnorm():
    """USB's ``Bn_Controller`` (used around the unlabeled passes of VAT, Mean Teacher and Pseudo-Label) restores
    only ``BatchNorm2d`` / ``SyncBatchNorm`` statistics: a ``BatchNorm1d`` (tabular networks) keeps the updates of
    the "frozen" passes. sslkit's ``frozen_bn`` freezes every BatchNorm."""
    net = nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4), nn.Unflatten(1, (1, 2, 2)), nn.BatchNorm2d(1))
    x = torch.randn(6, 4) * 3 + 1
    before = copy.deepcopy(net.state_dict())
    with frozen_bn(net):
        net(x)
    assert all(torch.equal(before[k], v) for k, v in net.state_dict().items())
    controller = USB.misc.Bn_Controller()
    controller.freeze_bn(net)
    net(x)
    controller.unfreeze_bn(net)
    after = net.state_dict()
    assert torch.equal(after["3.running_mean"], before["3.running_mean"])  # BatchNorm2d restored
    assert not torch.equal(after["1.running_mean"], before["1.running_mean"])  # BatchNorm1d updated


# ---------------------------------------------------------------------------------------- Mean Teacher


class Views:
    """A weak 'augmentation' that adds fresh noise on every call and records what it returned, so that USB can
    be given exactly the views sslkit drew (sslkit: weak(x_l), student weak(x_u), teacher weak(x_u))."""

    def __init__(self, seed):
        self.g, self.out = make_generator(seed), []

    def __call__(self, x):
        self.out.append(x + 0.3 * torch.randn(x.shape, generator=self.g, dtype=x.dtype))
        return self.out[-1]


def mean_teacher_pair(model, teacher, lam, total, bn=False):
    views = Views(60)
    ours = MeanTeacher(lambda_u=lam, rampup=0.4, weak=views)
    ours.setup(model, FitContext(num_classes=K, total_steps=total, ema_model=teacher))
    usb = build("meanteacher", model, unsup_warm_up=0.4, ulb_loss_ratio=lam, num_train_iter=total)
    usb.call_hook("before_run", "EMAHook")  # USB's EMA of the student: usb.ema
    usb.ema.shadow = {f"net.{name}": p.detach().clone() for name, p in teacher.named_parameters()}
    return ours, usb, views


def mean_teacher_step(ours, usb, views, model, x_l, y_l, x_u, step):
    views.out.clear()
    out = ours.loss(model, Batch(x_l, y_l, x_u, step=step))
    usb.it = step
    x_lb, x_student, x_teacher = views.out
    ref, log = usb.train_step(x_lb=x_lb, y_lb=y_l, x_ulb_w=x_teacher, x_ulb_s=x_student)
    return out, ref, log


def test_mean_teacher_step_agrees_with_usb():
    """One Mean Teacher step after the ramp-up (t ≥ 0.4 T): the teacher is the EMA weights (USB: ``ema.shadow``
    applied to the student; sslkit: the trainer's EMA model), on its own weak view; the student on another view;
    ``mean_c (softmax(z_s) − softmax(z_t))²`` averaged over the batch; sup / unsup / total loss and gradients.
    The unsupervised term does send a gradient to the student in semilearn 0.3.2 (USB issue #102, where the
    student logits were taken from the teacher's pass, is fixed in this release)."""
    lam, total = 8.0, 100
    model = Tabular(seed=9)
    teacher = copy.deepcopy(model).eval()
    perturb(teacher, seed=61, size=0.5)
    x_l, y_l, x_u = data(62)
    ours, usb, views = mean_teacher_pair(model, teacher, lam, total)
    out, ref, log = mean_teacher_step(ours, usb, views, model, x_l, y_l, x_u, step=60)
    assert out.logs["ramp"] == 1.0
    torch.testing.assert_close(out.loss.double(), ref["loss"], **F32)
    assert out.logs["sup_loss"].item() == pytest.approx(log["train/sup_loss"], rel=1e-5)
    assert out.logs["unsup_loss"].item() == pytest.approx(log["train/unsup_loss"], rel=1e-5)
    with torch.no_grad():  # the consistency term by hand: student on its view, teacher on the other
        p_s = torch.softmax(model(views.out[1])[0], 1)
        p_t = torch.softmax(teacher(views.out[2])[0], 1)
    assert out.logs["unsup_loss"].item() == pytest.approx(((p_s - p_t) ** 2).mean().item(), rel=1e-5)
    assert out.logs["unsup_loss"].item() > 1e-4
    usb_grads = grads(ref["loss"], usb.model)
    assert_close_all(grads(out.loss, model), usb_grads)
    sup_only = grads(F.cross_entropy(usb.model(views.out[0])["logits"], y_l), usb.model)
    assert max((a - b).abs().max().item() for a, b in zip(usb_grads, sup_only)) > 1e-4  # USB's unsup term has one
    assert_close_all(list(usb.model.parameters()), list(model.parameters()), rtol=0, atol=0)  # student restored


@pytest.mark.parametrize("step", [0, 10, 25])
def test_mean_teacher_ramp_differs_from_usb(step):
    """Before the end of the ramp-up (0.4 T = 40 steps) USB weights the consistency term linearly,
    ``min(t / 40, 1)``; sslkit uses Tarvainen & Valpola's sigmoid ``exp(−5 (1 − t/40)²)`` (the Mean Teacher paper,
    CORDS / paper C). The consistency value itself agrees."""
    lam, total = 8.0, 100
    model = Tabular(seed=10)
    teacher = copy.deepcopy(model).eval()
    perturb(teacher, seed=63, size=0.5)
    x_l, y_l, x_u = data(64)
    ours, usb, views = mean_teacher_pair(model, teacher, lam, total)
    out, ref, log = mean_teacher_step(ours, usb, views, model, x_l, y_l, x_u, step=step)
    unsup = log["train/unsup_loss"]
    assert out.logs["unsup_loss"].item() == pytest.approx(unsup, rel=1e-5)
    linear, sigmoid = step / 40, math.exp(-5 * (1 - step / 40) ** 2)
    assert out.logs["ramp"] == pytest.approx(sigmoid) == sigmoid_rampup(step, 40)
    assert ref["loss"].item() == pytest.approx(log["train/sup_loss"] + lam * linear * unsup, rel=1e-10)
    assert out.loss.item() == pytest.approx(log["train/sup_loss"] + lam * sigmoid * unsup, rel=1e-5)
    assert abs(linear - sigmoid) > 5e-3


def test_mean_teacher_batchnorm_differs_from_usb():
    """With BatchNorm the two differ by design. USB's teacher is the EMA weights loaded into the student in
    training mode (batch statistics of the unlabeled batch) and its student sees the unlabeled batch alone (BN
    frozen); sslkit's teacher is the trainer's EMA model in eval mode (running statistics, as the EMA copy is
    used for evaluation) and its student sees labeled and unlabeled weak views in one batch. With identical
    teacher and student weights and identical views USB's consistency is exactly 0, sslkit's is not."""
    model = Tabular(seed=11, bn=True)
    model(torch.randn(32, D, dtype=torch.float64) * 3 + 2)  # running statistics far from the batch's
    model.seen.clear()
    teacher = copy.deepcopy(model).eval()
    x_l, y_l, x_u = data(65)
    ours, usb, views = mean_teacher_pair(model, teacher, 1.0, 100)
    views.out.clear()
    out = ours.loss(model, Batch(x_l, y_l, x_u, step=50))
    usb.it = 50
    _, log = usb.train_step(x_lb=views.out[0], y_lb=y_l, x_ulb_w=views.out[1], x_ulb_s=views.out[1])
    assert log["train/unsup_loss"] == 0.0
    assert out.logs["unsup_loss"].item() > 1e-3


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


# ---------------------------------------------------------------------------------------- Pseudo-Label


def test_pseudo_label_step_agrees_with_usb():
    """One Pseudo-Label step after the ramp (USB) / warm-up (sslkit), the teacher being the current network
    (sslkit ``warmup_epochs=0`` at the start of training): threshold mask (``>=`` τ), hard pseudo-labels, the
    masked CE averaged over the whole unlabeled batch, sup / unsup / total loss and gradients."""
    tau, lam = 0.8, 1.5
    model = Tabular(seed=13, scale=4.0)
    x_l, y_l, x_u = data(70)
    ours = PseudoLabel(tau, warmup_epochs=0, lambda_u=lam)
    ours.setup(model, FitContext(num_classes=K))
    usb = build("pseudolabel", model, p_cutoff=tau, unsup_warm_up=0.4, ulb_loss_ratio=lam)
    usb.it = usb.num_train_iter
    usb_masks, usb_labels = spy(usb, "masking", "MaskingHook"), spy(usb, "gen_ulb_targets", "PseudoLabelingHook")
    out = ours.loss(model, Batch(x_l, y_l, x_u))
    ref, log = usb.train_step(x_lb=x_l, y_lb=y_l, x_ulb_w=x_u)
    labels, mask = pseudo_labels(ours.teacher_(x_u)[0], tau)
    assert 0 < mask.sum() < len(x_u)
    assert torch.equal(out.unlabeled.mask, mask)
    assert torch.equal(mask.double(), usb_masks[0]) and torch.equal(labels, usb_labels[0])
    torch.testing.assert_close(out.loss.double(), ref["loss"], **F32)
    assert out.logs["unsup_loss"].item() == pytest.approx(log["train/unsup_loss"], rel=1e-5)
    assert out.logs["mask_rate"].item() == pytest.approx(log["train/util_ratio"])
    assert_close_all(grads(out.loss, model), grads(ref["loss"], usb.model))


def test_pseudo_label_differs_from_usb_by_ramp_and_frozen_teacher():
    """Two differences by design. (1) Weight: USB ramps the unsupervised term linearly from 0 over 40% of
    training, ``λ · min(t / 0.4T, 1)``; sslkit (paper A App. C: "a supervised classifier is trained, followed by
    generating predictions on unlabeled data") trains ``warmup_epochs`` on the labeled data only and then uses
    the full λ. (2) Labels: USB labels each batch with the current network (online self-training, train-mode
    forward); sslkit labels with the network frozen at the end of the warm-up (eval mode), which does not follow
    the student as it changes."""
    tau, lam = 0.8, 1.5
    model = Tabular(seed=14, scale=4.0)
    x_l, y_l, x_u = data(71)
    ours = PseudoLabel(tau, warmup_epochs=0, lambda_u=lam)
    ours.setup(model, FitContext(num_classes=K))
    usb = build("pseudolabel", model, p_cutoff=tau, unsup_warm_up=0.4, ulb_loss_ratio=lam, num_train_iter=100)
    usb_labels, usb_masks = spy(usb, "gen_ulb_targets", "PseudoLabelingHook"), spy(usb, "masking", "MaskingHook")
    # (1) at t = 0 USB's total is the supervised loss; sslkit's (after its warm-up) is not
    usb.it = 0
    ref, log = usb.train_step(x_lb=x_l, y_lb=y_l, x_ulb_w=x_u)
    out = ours.loss(model, Batch(x_l, y_l, x_u, step=0))
    assert ref["loss"].item() == pytest.approx(log["train/sup_loss"], rel=1e-12)
    assert (
        out.logs["unsup_loss"].item() == pytest.approx(log["train/unsup_loss"], rel=1e-5)
        and log["train/unsup_loss"] > 1e-3
    )
    assert out.loss.item() == pytest.approx(log["train/sup_loss"] + lam * log["train/unsup_loss"], rel=1e-5)
    usb.it = 20  # half-way up USB's ramp
    ref, log = usb.train_step(x_lb=x_l, y_lb=y_l, x_ulb_w=x_u)
    assert ref["loss"].item() == pytest.approx(log["train/sup_loss"] + lam * 0.5 * log["train/unsup_loss"], rel=1e-10)
    # sslkit during its warm-up: supervised only, whatever the step
    warm = PseudoLabel(tau, warmup_epochs=3, lambda_u=lam)
    warm.setup(model, FitContext(num_classes=K))
    early = warm.loss(model, Batch(x_l, y_l, x_u, step=50))
    assert early.unlabeled is None and early.loss.item() == pytest.approx(out.logs["sup_loss"].item(), rel=1e-6)
    # (2) the student moves: USB's labels follow it, sslkit's stay with the frozen teacher
    perturb_both(model, usb, seed=72, size=0.8)
    usb.it = 100
    usb.train_step(x_lb=x_l, y_lb=y_l, x_ulb_w=x_u)
    out = ours.loss(model, Batch(x_l, y_l, x_u, step=100))
    student_labels, student_mask = pseudo_labels(model(x_u)[0], tau)
    teacher_labels, teacher_mask = pseudo_labels(ours.teacher_(x_u)[0], tau)
    assert torch.equal(usb_labels[-1], student_labels) and torch.equal(usb_masks[-1], student_mask.double())
    assert torch.equal(out.unlabeled.mask, teacher_mask)
    assert not (torch.equal(student_labels, teacher_labels) and torch.equal(student_mask, teacher_mask))
