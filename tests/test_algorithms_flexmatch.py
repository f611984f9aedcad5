"""Tests of FlexMatch (sslkit.algorithms.flexmatch), paper B's SSL method: thresholds and their update order
against hand computations (reference notes §4.2, §6 item 5), bad inputs; and over both FlexMatch and FreeMatch:
gradients of the unsupervised losses, labeled sets with missing classes and a tiny fit (FreeMatch's own tests,
its fairness term among them: test_algorithms_freematch.py)."""

import math

import numpy as np
import pytest
import torch
from torch import nn

from sslkit.algorithms import Batch, FitContext, FlexMatch, FreeMatch, flexmatch_thresholds
from sslkit.engine import Trainer
from sslkit.models import MLP

torch.set_num_threads(1)
CPU = torch.device("cpu")


def ident(x):
    return x


class LogitsAreInputs(nn.Module):
    """logits = x * w with w = 1 initially: the inputs *are* the logits, yet the loss has parameters."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(()))

    def forward(self, x):
        return x * self.w, None


def logits_for(probs):
    return torch.log(torch.as_tensor(probs, dtype=torch.float32))


def flex(n_u, k, **kw):
    a = FlexMatch(weak=ident, strong=ident, num_unlabeled=n_u, **kw)
    a.setup(None, FitContext(num_classes=k, device=CPU))
    return a


def free(k, **kw):
    a = FreeMatch(weak=ident, strong=ident, **kw)
    a.setup(None, FitContext(num_classes=k, device=CPU))
    return a


def blobs(n_per_class, k=3, d=2, seed=0, spread=0.4):
    g = np.random.default_rng(seed)
    centres = 3.0 * np.stack([np.cos(2 * np.pi * np.arange(k) / k), np.sin(2 * np.pi * np.arange(k) / k)], 1)
    centres = np.concatenate([centres, np.zeros((k, d - 2))], 1)
    y = np.repeat(np.arange(k), n_per_class)
    X = centres[y] + spread * g.standard_normal((len(y), d))
    return X.astype(np.float32), y.astype(np.int64)


# ------------------------------------------------------------------------------------------ gradients


@pytest.mark.parametrize("cls", [FlexMatch, FreeMatch])
def test_unsupervised_loss_has_gradient_wrt_model_parameters(cls):
    X, y = blobs(20, k=3, d=4)
    x_l, y_l, x_u = torch.from_numpy(X[::10]), torch.from_numpy(y[::10]), torch.from_numpy(X)
    grads = []
    for lam in (1.0, 0.0):
        torch.manual_seed(0)
        model = MLP(4, 3, hidden=(16,), dropout=0.0)
        kw = {"num_unlabeled": len(X)} if cls is FlexMatch else {"lambda_e": 0.0}
        algo = cls(lambda_u=lam, augment="tabular", **kw)
        algo.setup(model, FitContext(num_classes=3, device=CPU))
        torch.manual_seed(1)  # same augmentations in both runs
        out = algo.loss(model, Batch(x_l, y_l, x_u, step=0))
        model.zero_grad()
        out.loss.backward()
        grads.append(torch.cat([p.grad.reshape(-1) for p in model.parameters()]))
        if lam == 1.0:
            assert float(out.logs["mask_rate"]) > 0 and float(out.logs["unsup_loss"]) > 0
    # the difference of the two gradients is the gradient of the unsupervised term
    assert (grads[0] - grads[1]).abs().max() > 1e-6


# ------------------------------------------------------------------------------------------- FlexMatch


def test_flexmatch_threshold_starts_at_zero_so_every_pseudo_label_passes():
    a = flex(5, 3)
    assert torch.equal(a.class_thresholds(), torch.zeros(3))
    assert torch.equal(a.selected_label_, torch.full((5,), -1))
    probs = torch.tensor([[0.34, 0.33, 0.33], [0.2, 0.5, 0.3], [0.1, 0.1, 0.8]])
    assert torch.equal(a.mask(probs), torch.ones(3))
    # through loss(): the first step masks everything in, even unconfident rows
    out = a.loss(
        LogitsAreInputs(),
        Batch(logits_for(probs[:1]), torch.tensor([0]), logits_for(probs), step=0, u_idx=torch.tensor([0, 1, 2])),
    )
    assert float(out.logs["mask_rate"]) == 1.0


@pytest.mark.parametrize("warmup, beta", [(True, [3 / 4, 2 / 4, 1 / 4]), (False, [1.0, 2 / 3, 1 / 3])])
def test_flexmatch_threshold_formula_on_hand_state(warmup, beta):
    # N_U = 10: samples 0-2 confidently class 0, 3-4 class 1, 5 class 2, 6-9 never confident
    # -> sigma = (3, 2, 1), #unused = 4; warm-up normaliser max(3, 4) = 4, else max sigma = 3
    a = flex(10, 3, thresh_warmup=warmup)
    labels = torch.tensor([0, 0, 0, 1, 1, 2, 0, 1, 2, 0])
    conf = torch.tensor([0.99, 0.96, 0.95, 0.97, 0.99, 0.951, 0.9, 0.5, 0.94, 0.4])
    probs = torch.full((10, 3), 0.0)
    probs[torch.arange(10), labels] = conf
    probs[torch.arange(10), (labels + 1) % 3] = 1 - conf
    a.update(probs, torch.arange(10))
    assert a.selected_label_.tolist() == [0, 0, 0, 1, 1, 2, -1, -1, -1, -1]
    torch.testing.assert_close(a.classwise_acc_, torch.tensor(beta))
    expected = [0.95 * b / (2 - b) for b in beta]  # e.g. warm-up: 0.57, 0.31667, 0.13571
    torch.testing.assert_close(a.class_thresholds(), torch.tensor(expected))
    torch.testing.assert_close(flexmatch_thresholds(torch.tensor(beta), 0.95), torch.tensor(expected))


def test_flexmatch_without_warmup_keeps_beta_until_something_is_selected():
    a = flex(4, 2, thresh_warmup=False)
    a.update(torch.tensor([[0.6, 0.4], [0.5, 0.5]]), torch.tensor([0, 1]))
    assert torch.equal(a.classwise_acc_, torch.zeros(2)) and torch.isfinite(a.classwise_acc_).all()


def test_flexmatch_updates_after_masking_and_keeps_latest_confident_label():
    model = LogitsAreInputs()
    a = flex(4, 2)
    x_l, y_l = logits_for([[0.9, 0.1]]), torch.tensor([0])
    # step 1: thresholds 0 -> all in; afterwards samples 0, 1 are confident class 0
    p1 = torch.tensor([[0.99, 0.01], [0.97, 0.03], [0.6, 0.4]])
    out = a.loss(model, Batch(x_l, y_l, logits_for(p1), step=0, u_idx=torch.tensor([0, 1, 2])))
    assert float(out.logs["mask_rate"]) == 1.0
    assert a.selected_label_.tolist() == [0, 0, -1, -1]
    # beta = (2, 0) / max(2, #unused = 2) = (1, 0): thresholds (0.95, 0)
    torch.testing.assert_close(a.class_thresholds(), torch.tensor([0.95, 0.0]))
    # step 2 uses those thresholds: 0.96 (class 0) in, 0.6 (class 0) out, 0.55 class 1 in (threshold 0)
    before = a.class_thresholds().clone()
    p2 = torch.tensor([[0.96, 0.04], [0.6, 0.4], [0.45, 0.55], [0.02, 0.98]])
    out = a.loss(model, Batch(x_l, y_l, logits_for(p2), step=1, u_idx=torch.tensor([2, 0, 3, 1])))
    expected_mask = (p2.max(1).values >= before[p2.argmax(1)]).float()
    assert expected_mask.tolist() == [1.0, 0.0, 1.0, 1.0]
    assert float(out.logs["mask_rate"]) == pytest.approx(0.75)
    # then the update (fixed tau = 0.95): sample 2 -> 0, sample 1 -> 1 (the latest confident label wins),
    # sample 0 keeps 0 (0.6 < 0.95), sample 3 stays unused (0.55 < 0.95, although it was masked in)
    assert a.selected_label_.tolist() == [0, 1, 0, -1]
    assert a.index_mode_ == "exact"
    torch.testing.assert_close(a.classwise_acc_, torch.tensor([1.0, 0.5]))  # sigma (2, 1) / max(2, 1)
    assert float(out.logs["unused_rate"]) == 0.25


def test_flexmatch_ring_buffer_fallback_without_indices():
    a = flex(4, 3)
    p = torch.tensor([[0.99, 0.005, 0.005], [0.5, 0.3, 0.2], [0.01, 0.98, 0.01], [0.0, 0.04, 0.96]])
    a.update(p, None)  # 3 confident predictions -> slots 0, 1, 2
    assert a.index_mode_ == "ring" and a.selected_label_.tolist() == [0, 1, 2, -1]
    a.update(p[[2, 1, 3]], None)  # 2 confident -> slots 3, 0 (wrap-around)
    assert a.selected_label_.tolist() == [2, 1, 2, 1]
    torch.testing.assert_close(a.classwise_acc_, torch.tensor([0.0, 1.0, 1.0]))


def test_flexmatch_bad_inputs():
    with pytest.raises(ValueError, match="threshold"):
        FlexMatch(1.5)
    with pytest.raises(TypeError, match="thresh_warmup"):
        FlexMatch(thresh_warmup="yes")
    with pytest.raises(ValueError, match="num_unlabeled"):
        FlexMatch(num_unlabeled=0)
    with pytest.raises(ValueError, match="num_unlabeled"):
        FlexMatch().setup(None, FitContext(num_classes=3, device=CPU))
    with pytest.raises(RuntimeError, match="setup"):
        FlexMatch(num_unlabeled=3).class_thresholds()
    a = flex(4, 2)
    x_l, y_l, x_u = logits_for([[0.9, 0.1]]), torch.tensor([0]), logits_for([[0.9, 0.1], [0.2, 0.8]])
    for bad, err in (
        (torch.tensor([0, 4]), ValueError),
        (torch.tensor([0]), ValueError),
        (torch.tensor([0.0, 1.0]), ValueError),
        ([0, 1], TypeError),
    ):
        with pytest.raises(err, match="u_idx"):
            a.loss(LogitsAreInputs(), Batch(x_l, y_l, x_u, step=0, u_idx=bad))


def test_flexmatch_exact_state_matches_brute_force_in_a_local_training_loop():
    """A tiny trainer stub that passes the unlabeled indices (the engine change FlexMatch asks for)."""
    torch.manual_seed(0)
    X, y = blobs(30, k=3, d=2, seed=1)
    X, n_u = torch.from_numpy(X), len(X)
    lab = torch.tensor([0, 30, 60])
    model = MLP(2, 3, hidden=(8,), dropout=0.0)  # no BN/dropout: rows are independent
    algo = FlexMatch(0.7, weak=ident, strong=lambda x: x + 0.3 * torch.randn_like(x), num_unlabeled=n_u)
    algo.setup(model, FitContext(num_classes=3, device=CPU))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    latest = {}
    g = torch.Generator().manual_seed(0)
    for step in range(30):
        u_idx = torch.randperm(n_u, generator=g)[:16]
        with torch.no_grad():  # brute force: per-sample dict of the latest confident label
            conf, pred = torch.softmax(model(X[u_idx])[0], 1).max(1)
        for i, c, p in zip(u_idx.tolist(), conf.tolist(), pred.tolist()):
            if c >= 0.7:
                latest[i] = p
        out = algo.loss(model, Batch(X[lab], torch.tensor([0, 1, 2]), X[u_idx], step=step, u_idx=u_idx))
        opt.zero_grad()
        out.loss.backward()
        opt.step()
    expected = torch.full((n_u,), -1)
    for i, p in latest.items():
        expected[i] = p
    assert len(latest) > 0 and torch.equal(algo.selected_label_, expected)
    sigma = torch.bincount(expected[expected >= 0], minlength=3).float()
    torch.testing.assert_close(algo.classwise_acc_, sigma / max(sigma.max().item(), float((expected < 0).sum())))


# ----------------------------------------------------------------- missing classes and end-to-end fits


def _fit(algo, X_l, y_l, X_u, k, epochs=3):
    torch.manual_seed(0)
    model = MLP(X_l.shape[1], k, hidden=(16,), dropout=0.0)
    tr = Trainer(
        model,
        algo,
        device="cpu",
        optimizer="sgd",
        lr=0.03,
        weight_decay=5e-4,
        schedule="cosine",
        epochs=epochs,
        iterations_per_epoch=10,
        batch_size=8,
        unlabeled_batch_size=32,
        ema_decay=0.9,
        seed=0,
        progress=False,
        num_classes=k,
        decay_norm_and_bias=False,
    )
    return tr.fit(X_l, y_l, X_u)


@pytest.mark.parametrize("make", [lambda: FlexMatch(augment="tabular"), lambda: FreeMatch(augment="tabular")])
def test_labeled_set_missing_classes_gives_finite_losses(make):
    X, y = blobs(40, k=4, d=3)
    keep = np.flatnonzero(y < 2)[::8]  # classes 2 and 3 have no label
    algo = make()
    tr = _fit(algo, X[keep], y[keep], X, 4, epochs=2)
    for rec in tr.history_:
        assert all(math.isfinite(rec[key]) for key in ("loss", "sup_loss", "unsup_loss", "mask_rate"))
    state = algo.classwise_acc_ if isinstance(algo, FlexMatch) else algo.p_model_
    assert state.shape == (4,) and torch.isfinite(state).all()


def test_end_to_end_fit_with_the_engine():
    X, y = blobs(60, k=3, d=2, seed=3)
    lab = np.array([0, 60, 120, 1, 61, 121])
    flexm = FlexMatch(augment="tabular")
    tr = _fit(flexm, X[lab], y[lab], X, 3, epochs=4)
    # "ring" (documented fallback) while the engine passes no unlabeled indices, "exact" once it does
    assert flexm.index_mode_ in ("ring", "exact")
    assert (flexm.selected_label_ >= 0).any() and len(tr.history_) == 4
    assert tr.score(X, y) > 0.8
    freem = FreeMatch(augment="tabular")
    tr = _fit(freem, X[lab], y[lab], X, 3, epochs=4)
    assert float(freem.time_p_) != pytest.approx(1 / 3) and "fair_loss" in tr.history_[0]
    assert tr.score(X, y) > 0.8
