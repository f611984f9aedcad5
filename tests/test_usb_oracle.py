"""sslkit's six USB-family algorithms against USB itself (``semilearn`` 0.3.2, the reference implementation
paper B trains with): FixMatch, FlexMatch, FreeMatch and Pseudo-Label here; VAT in test_algorithms_vat.py, Mean
Teacher in test_algorithms_mean_teacher.py, the trainer's EMA teacher in test_engine_optim.py, the loss helpers and
frozen_bn in test_algorithms_base.py (shared set-up: tests/usb_problem.py).

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

import pytest
import torch
from usb_problem import (
    F32,
    USB,
    USB_MISSING,
    K,
    Tabular,
    assert_close_all,
    bn_buffers,
    build,
    data,
    grads,
    ident,
    perturb_both,
    spy,
    strong_view,
)

from sslkit.algorithms import (
    Batch,
    FitContext,
    FixMatch,
    FlexMatch,
    FreeMatch,
    PseudoLabel,
    freematch_fairness_loss,
    pseudo_labels,
    supervised_ce,
)
from sslkit.seeding import make_generator

if USB is None:  # semilearn is installed by .ci/setup; elsewhere these tests are skipped
    pytest.skip(USB_MISSING, allow_module_level=True)

pytestmark = pytest.mark.usefixtures("one_thread")


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
