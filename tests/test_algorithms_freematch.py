"""Tests of FreeMatch (sslkit.algorithms.freematch), paper B's SSL method: the self-adaptive thresholds' EMA
updates before masking against hand computations, the clip, the fairness term (a hand example, its gradient, the
empty mask) and bad inputs. The tests over both FlexMatch and FreeMatch (gradients of the unsupervised loss,
missing classes, an end-to-end fit) live in test_algorithms_flexmatch.py, with the helpers imported here."""

import math

import numpy as np
import pytest
import torch
from test_algorithms_flexmatch import LogitsAreInputs, free, logits_for

from sslkit.algorithms import Batch, FreeMatch, freematch_fairness_loss

torch.set_num_threads(1)


def test_fairness_term_has_gradient():
    torch.manual_seed(0)
    z = torch.randn(6, 3, requires_grad=True)
    mask = torch.tensor([1.0, 1, 0, 1, 0, 1])
    loss = freematch_fairness_loss(z, mask, torch.tensor([0.5, 0.3, 0.2]), torch.tensor([0.4, 0.4, 0.2]))
    loss.backward()
    assert torch.isfinite(z.grad).all() and z.grad[mask.bool()].abs().max() > 0
    assert torch.all(z.grad[~mask.bool()] == 0)  # unmasked rows do not enter


def test_freematch_initial_state():
    a = free(4)
    torch.testing.assert_close(a.p_model_, torch.full((4,), 0.25))
    torch.testing.assert_close(a.label_hist_, torch.full((4,), 0.25))
    assert float(a.time_p_) == pytest.approx(0.25)


@pytest.mark.parametrize("use_quantile", [False, True])
def test_freematch_ema_updates_before_masking_equal_hand_computation(use_quantile):
    m = 0.5
    a = free(2, ema_p=m, use_quantile=use_quantile)
    p = torch.tensor([[0.9, 0.1], [0.6, 0.4], [0.7, 0.3], [0.2, 0.8]])
    out = a.loss(LogitsAreInputs(), Batch(logits_for([[0.9, 0.1]]), torch.tensor([0]), logits_for(p), step=0))
    conf = np.array([0.9, 0.6, 0.7, 0.8])
    batch_tau = np.quantile(conf, 0.8) if use_quantile else conf.mean()  # mean 0.75; quantile 0.82
    tau = m * 0.5 + (1 - m) * batch_tau
    p_model = m * 0.5 + (1 - m) * np.array([0.6, 0.4])  # mean p = (0.6, 0.4)
    hist = m * 0.5 + (1 - m) * np.array([3, 1]) / 4  # argmax = 0, 0, 0, 1
    assert float(a.time_p_) == pytest.approx(tau, abs=1e-6)
    np.testing.assert_allclose(a.p_model_.numpy(), p_model, atol=1e-6)
    np.testing.assert_allclose(a.label_hist_.numpy(), hist, atol=1e-6)
    assert float(out.logs["tau"]) == pytest.approx(tau, abs=1e-6)
    # the mask uses the *updated* statistics: thresholds tau * (1, 0.45 / 0.55)
    thr = tau * p_model / p_model.max()
    mask_after = conf >= thr[[0, 0, 0, 1]]
    mask_before = conf >= 0.5  # with the initial tau = 1/2 and p~ uniform: all four in
    assert mask_before.all() and not mask_after.all()
    assert float(out.logs["mask_rate"]) == pytest.approx(mask_after.mean())


@pytest.mark.parametrize("ema_p", [0.999, 0.99])
def test_freematch_threshold_after_t_steps_equals_the_closed_form(ema_p):
    """With every batch at one confidence c, tau_T = m^T / C + (1 - m^T) c: after the LeNet stand-in's 300 steps
    USB's m = 0.999 has moved tau only 26 % of the way from 1/C to c, m = 0.99 95 % (paper B's Table 1 page, the
    reading freematch_ema, rests on this)."""
    k, c, steps = 10, 0.9, 300
    a = free(k, ema_p=ema_p)
    probs = torch.full((4, k), (1 - c) / (k - 1))
    probs[:, 0] = c
    for _ in range(steps):
        a.update(probs)
    closed = ema_p**steps / k + (1 - ema_p**steps) * c
    assert float(a.time_p_) == pytest.approx(closed, abs=1e-5)
    moved = (float(a.time_p_) - 1 / k) / (c - 1 / k)
    assert moved == pytest.approx({0.999: 0.259, 0.99: 0.951}[ema_p], abs=1e-3)


def test_freematch_clip_thresh():
    a = free(2, ema_p=0.0, clip_thresh=True)
    a.update(torch.tensor([[0.99, 0.01], [0.02, 0.98]]))
    assert float(a.time_p_) == pytest.approx(0.95)


def test_fairness_term_on_a_hand_example():
    # strong-view probabilities of 3 samples, C = 3; the third is masked out
    q = np.array([[0.7, 0.2, 0.1], [0.6, 0.3, 0.1], [0.1, 0.1, 0.8]])
    mask = torch.tensor([1.0, 1.0, 0.0])
    p_model, label_hist = np.array([0.5, 0.3, 0.2]), np.array([0.5, 0.5, 0.0])  # empty class: 1/0 -> 0
    # by hand: target = SumNorm(p~/h~) = SumNorm(1.0, 0.6, 0) = (0.625, 0.375, 0)
    # q_bar = (0.65, 0.25, 0.1); h_s = (1, 0, 0) -> q_bar/h_s = (0.65, 0, 0) -> SumNorm = (1, 0, 0)
    # L_f = 0.625 log(1 + 1e-12) + 0.375 log(1e-12) + 0 = 0.375 * log(1e-12)
    expected = 0.625 * math.log(1 + 1e-12) + 0.375 * math.log(1e-12)
    got = freematch_fairness_loss(
        logits_for(q), mask, torch.tensor(p_model, dtype=torch.float32), torch.tensor(label_hist, dtype=torch.float32)
    )
    assert float(got) == pytest.approx(expected, rel=1e-5)
    # a second example where both masked samples predict different classes
    q2 = np.array([[0.7, 0.2, 0.1], [0.2, 0.5, 0.3]])
    q_bar, h_s = q2.mean(0), np.array([0.5, 0.5, 0.0])
    mod_q = q_bar * np.array([2.0, 2.0, 0.0])
    mod_q /= mod_q.sum()
    target = np.array([0.5, 0.3, 0.2]) / np.array([0.25, 0.25, 0.5])
    target /= target.sum()
    expected2 = float((target * np.log(mod_q + 1e-12)).sum())
    got2 = freematch_fairness_loss(
        logits_for(q2), torch.ones(2), torch.tensor([0.5, 0.3, 0.2]), torch.tensor([0.25, 0.25, 0.5])
    )
    assert float(got2) == pytest.approx(expected2, rel=1e-5)
    assert h_s.sum() == 1.0


def test_fairness_term_is_zero_with_finite_gradient_when_nothing_is_masked():
    z = torch.randn(5, 4, requires_grad=True)
    loss = freematch_fairness_loss(z, torch.zeros(5), torch.full((4,), 0.25), torch.full((4,), 0.25))
    assert float(loss.detach()) == 0.0
    loss.backward()
    assert torch.equal(z.grad, torch.zeros(5, 4))


def test_freematch_bad_inputs():
    with pytest.raises(ValueError, match="ema_p"):
        FreeMatch(ema_p=1.0)
    with pytest.raises(ValueError, match="lambda_e"):
        FreeMatch(lambda_e=-1)
    with pytest.raises(TypeError, match="use_quantile"):
        FreeMatch(use_quantile=1)
    with pytest.raises(ValueError, match="augment"):
        FreeMatch(augment="audio")
    with pytest.raises(RuntimeError, match="setup"):
        FreeMatch().class_thresholds()
