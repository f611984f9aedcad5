"""Tests of paper A's training algorithms: the risk rewrite (SupervisedRisk, PNU, OursEC, OursIter;
sslkit.algorithms.risk_rewrite), and over all of paper A's methods the unlabeled gradients, the prior-weighted
supervised term and short fits. Pseudo-Label's, VAT's and FixMatch's own tests (with this file's toy models):
test_algorithms_pseudo_label.py, test_algorithms_vat.py, test_algorithms_fixmatch.py."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn

from sslkit.algorithms import (
    PNU,
    VAT,
    Batch,
    FitContext,
    FixMatch,
    LinearRiskAlgorithm,
    OursEC,
    OursIter,
    PseudoLabel,
    SupervisedRisk,
    prior_class_weights,
)
from sslkit.algorithms.base import logits_of
from sslkit.data import gaussian_pair
from sslkit.engine import Trainer
from sslkit.models import MLP
from sslkit.risk import (
    component_risks,
    equal_covariance_a,
    linear_risk,
    loss_covariances,
    loss_matrix,
    optimal_a,
    partial_risks,
    pnu_eta,
    pnu_to_a,
    unlabeled_risks,
)

torch.set_num_threads(1)
CPU = torch.device("cpu")


class Table(nn.Module):
    """logits = one_hot(x) @ W: every sample's logits are free parameters (x holds integer ids)."""

    def __init__(self, n, k):
        super().__init__()
        self.W = nn.Parameter(torch.randn(n, k))

    def forward(self, x):
        return self.W[x[:, 0].long()], None


class BNNet(nn.Module):
    def __init__(self, d=3, k=3):
        super().__init__()
        self.fc, self.bn, self.out = nn.Linear(d, 8), nn.BatchNorm1d(8), nn.Linear(8, k)

    def forward(self, x):
        h = F.relu(self.bn(self.fc(x)))
        return self.out(h), h


def ids(a, b):
    return torch.arange(a, b, dtype=torch.float32).view(-1, 1)


def setup(algo, k, model=None):
    algo.setup(model, FitContext(num_classes=k, device=CPU))
    return algo


def blobs(n_per_class, seed, k=3, d=2):
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(k), n_per_class)
    centres = 2.5 * np.stack([np.cos(2 * np.pi * np.arange(k) / k), np.sin(2 * np.pi * np.arange(k) / k)], 1)
    return (centres[y] + rng.standard_normal((y.size, d))).astype(np.float32), y.astype(np.int64)


# ------------------------------------------------------------------------- the a of each method


def test_supervised_risk_equals_pn_risk_and_ignores_unlabeled():
    torch.manual_seed(0)
    prior = [0.2, 0.3, 0.5]
    model, y = Table(9, 3), torch.tensor([0, 0, 1, 1, 1, 2, 2, 2, 2])
    algo = setup(SupervisedRisk(prior, n_per_class=np.bincount(y.numpy())), 3)
    assert algo.uses_unlabeled is False and np.allclose(algo.a_, prior)
    out = algo.loss(model, Batch(ids(0, 9), y, None, step=0))
    R = component_risks(loss_matrix(model.W, "ce"), y, 3)
    pn = sum(prior[i] * R[i, i] for i in range(3))
    assert torch.allclose(out.loss, pn) and torch.allclose(out.logs["loss"], pn.detach())
    # a = θ through the base class gives the same value with any unlabeled batch
    base = setup(LinearRiskAlgorithm(prior, prior, n_per_class=[2, 3, 4]), 3)
    assert torch.allclose(base.loss(model, Batch(ids(0, 9), y, ids(0, 4), step=0)).loss, pn)


def test_linear_risk_full_batch_equals_sslkit_risk_value():
    torch.manual_seed(1)
    prior, a = np.array([0.3, 0.7]), np.array([0.1, 0.9])
    model, y = Table(10, 2), torch.tensor([0, 0, 0, 1, 1, 1, 1])
    algo = setup(LinearRiskAlgorithm(prior, a, nonnegative=False, n_per_class=[3, 4]), 2)
    out = algo.loss(model, Batch(ids(0, 7), y, ids(7, 10), step=0))
    L = loss_matrix(model.W, "ce")
    ref = linear_risk(component_risks(L[:7], y, 2), unlabeled_risks(L[7:]), prior, a)
    assert torch.allclose(out.loss, ref.float(), atol=1e-6)


def test_ours_ec_and_pnu_use_the_risk_formulas():
    prior, n = np.array([0.4, 0.6]), np.array([30, 10])
    ec = setup(OursEC(prior, n_per_class=n), 2)
    assert np.allclose(ec.a_, equal_covariance_a(prior, n))
    pnu = setup(PNU(prior, n_per_class=n), 2)
    assert np.allclose(pnu.a_, pnu_to_a(prior, pnu_eta(prior, n)))
    assert pnu.eta_ == pytest.approx(float(pnu_eta(prior, n)))
    p3, n3 = [0.2, 0.3, 0.5], [5, 10, 20]
    assert np.allclose(setup(OursEC(p3, n_per_class=n3), 3).a_, equal_covariance_a(np.array(p3), np.array(n3)))
    with pytest.raises(ValueError, match="binary"):
        PNU(p3)


def test_counts_from_the_fit_context_and_clear_errors():
    algo = OursEC([0.5, 0.5])
    with pytest.raises(ValueError, match="n_per_class"):
        algo.setup(None, FitContext(num_classes=2, device=CPU))
    algo.setup(None, FitContext(num_classes=2, device=CPU, data={"y_l": torch.tensor([0, 1, 1, 1])}))
    assert algo.n_per_class_.tolist() == [1, 3]
    with pytest.raises(ValueError, match="no sample of class"):
        OursEC([0.5, 0.5], n_per_class=[4, 0])
    with pytest.raises(ValueError, match="num_classes"):
        OursEC([0.5, 0.5], n_per_class=[1, 1]).setup(None, FitContext(num_classes=3, device=CPU))
    with pytest.raises(ValueError, match="sum to 1"):
        OursEC([0.5, 0.6])
    with pytest.raises(ValueError, match="nn_rule"):
        OursEC([0.5, 0.5], nn_rule="abs")
    with pytest.raises(ValueError, match="loss"):
        OursEC([0.5, 0.5], loss="zero_one")
    with pytest.raises(ValueError, match="update_every"):
        OursIter([0.5, 0.5], update_every=0)


# ------------------------------------------------------------------------- nn-correction


def _violating_case():
    """k = 2, θ = (.5, .5): class-1 labeled samples are confidently class 1 (large loss at label 0) and the
    unlabeled samples have a small loss at label 0, so Δ_0 = R_U0 - θ_1 R_10 < 0 while Δ_1 > 0."""
    model = Table(8, 2)
    with torch.no_grad():
        model.W.copy_(
            torch.tensor([[2.0, -1], [1.5, -0.5], [-2, 2.5], [-1.5, 2], [-2, 3], [3.0, -1], [2.5, -2], [-0.5, 0.2]])
        )
    return model, ids(0, 5), torch.tensor([0, 0, 1, 1, 1]), ids(5, 8)


def _grads(model, loss):
    (g,) = torch.autograd.grad(loss, model.W)
    return g


def _reference_terms(model, x_l, y_l, x_u, prior, a):
    L = loss_matrix(model.W, "ce")
    R = component_risks(L[:5], y_l, 2)
    R_u = unlabeled_risks(L[5:])
    return R, R_u, partial_risks(R, R_u, prior), linear_risk(R, R_u, prior, a)


@pytest.mark.parametrize("rule", ["per_term", "kiryo", "clip"])
def test_nn_correction_logs_clipped_risk_and_follows_the_gradient_rule(rule):
    prior, a = np.array([0.5, 0.5]), np.array([0.2, 0.3])
    model, x_l, y_l, x_u = _violating_case()
    algo = setup(LinearRiskAlgorithm(prior, a, nn_rule=rule, gamma=0.7, n_per_class=[2, 3]), 2)
    out = algo.loss(model, Batch(x_l, y_l, x_u, step=0))
    R, R_u, delta, raw = _reference_terms(model, x_l, y_l, x_u, prior, a)
    assert delta[0] < 0 < delta[1]
    clipped = linear_risk(R, R_u, prior, a, nonnegative=True)
    assert float(out.logs["loss"]) == pytest.approx(float(clipped.detach()), rel=1e-6)
    assert float(out.logs["risk_raw"]) == pytest.approx(float(raw.detach()), rel=1e-6)
    assert float(out.logs["delta_0"]) == pytest.approx(float(delta[0].detach()), rel=1e-6)
    assert float(out.logs["delta_nn_0"]) == 0.0 and float(out.logs["delta_nn_1"]) == pytest.approx(
        float(delta[1].detach()), rel=1e-6
    )
    assert float(out.logs["nn_violations"]) == 1.0
    c = 1 - a / prior  # (0.6, 0.4)
    if rule == "per_term":
        expect = a[0] * R[0, 0] + a[1] * R[1, 1] + c[1] * delta[1] - 0.7 * abs(c[0]) * delta[0]
    elif rule == "kiryo":
        expect = -0.7 * abs(c[0]) * delta[0]
    else:
        expect = clipped
    assert torch.allclose(_grads(model, out.loss), _grads(model, expect).float(), atol=1e-6)


def test_nn_correction_without_violation_and_when_off_is_the_plain_risk():
    prior, a = np.array([0.5, 0.5]), np.array([0.2, 0.3])
    model, x_l, y_l, x_u = _violating_case()
    off = setup(LinearRiskAlgorithm(prior, a, nonnegative=False, n_per_class=[2, 3]), 2)
    out = off.loss(model, Batch(x_l, y_l, x_u, step=0))
    raw = _reference_terms(model, x_l, y_l, x_u, prior, a)[3]
    assert float(out.logs["loss"]) == pytest.approx(float(raw.detach()), rel=1e-6)  # raw, negative Δ kept
    assert torch.allclose(_grads(model, out.loss), _grads(model, raw).float(), atol=1e-6)
    torch.manual_seed(0)
    model2 = Table(8, 2)  # random logits: check a batch with no violation gives the raw gradient
    for rule in ("per_term", "kiryo", "clip"):
        algo = setup(LinearRiskAlgorithm(prior, a, nn_rule=rule, n_per_class=[2, 3]), 2)
        o = algo.loss(model2, Batch(x_l, y_l, x_u, step=0))
        _, _, delta, raw2 = _reference_terms(model2, x_l, y_l, x_u, prior, a)
        if (delta >= 0).all():
            assert torch.allclose(_grads(model2, o.loss), _grads(model2, raw2).float(), atol=1e-6)
    # inactive terms (c_j = 0) never trigger the correction
    pn = setup(LinearRiskAlgorithm(prior, prior, n_per_class=[2, 3]), 2)
    o = pn.loss(model, Batch(x_l, y_l, x_u, step=0))
    assert "nn_violations" not in o.logs and float(o.logs["loss"]) == pytest.approx(float(o.loss.detach()))


# ------------------------------------------------------------------------- OursIter (Algorithm 1)

ITER_PRIOR = np.array([0.3, 0.3, 0.4])


def _fit_ours_iter(epochs, val_counts=(10, 10, 10), **options):
    """OursIter trained on three blobs; returns (trainer, model, algo, data dict)."""
    X, y = blobs([6, 8, 10], seed=0)
    Xu, _ = blobs([30, 30, 30], seed=1)
    Xv, yv = blobs(list(val_counts), seed=2)
    torch.manual_seed(0)
    model = MLP(2, 3, hidden=(16,), dropout=0.0)
    algo = OursIter(ITER_PRIOR, n_per_class=np.bincount(y), **options)
    tr = Trainer(
        model, algo, epochs=epochs, batch_size=8, unlabeled_batch_size=16, device="cpu", progress=False, seed=0
    )
    tr.fit(X, y, Xu, Xv, yv)
    model.eval()
    return tr, model, algo, {"X": X, "y": y, "Xu": Xu, "Xv": Xv, "yv": yv}


def _ce_losses(model, X):
    with torch.no_grad():
        return loss_matrix(model(torch.as_tensor(X))[0].double(), "ce").numpy()


def test_ours_iter_updates_a_at_the_scheduled_epochs_with_optimal_a_from_validation_losses():
    prior = ITER_PRIOR
    assert [e for e in range(1, 12) if OursIter(prior, warmup_epochs=3, update_every=2).is_update_epoch(e)] == [
        3,
        5,
        7,
        9,
        11,
    ]
    tr, model, algo, d = _fit_ours_iter(7, warmup_epochs=3, update_every=2)
    assert [e for e, _ in algo.a_history_] == [0, 3, 5, 7]
    assert np.allclose(algo.a_history_[0][1], prior)
    hist_a = [np.array([r[f"a_{j}"] for j in range(3)]) for r in tr.history_]
    assert all(np.allclose(h, prior) for h in hist_a[:3])  # warm-up: a = θ
    assert np.allclose(hist_a[3], algo.a_history_[1][1]) and np.allclose(hist_a[5], algo.a_history_[2][1])
    assert "delta_0" not in tr.history_[0] and "delta_0" in tr.history_[3]  # U batch used only after warm-up
    # the last update (after epoch 7) used the final model: recompute a* by hand
    C = loss_covariances(_ce_losses(model, d["Xv"]), d["yv"], 3, shrinkage=0.5)
    expect = optimal_a(C, prior, np.bincount(d["y"]), ridge=1e-4)
    assert np.allclose(algo.a_, expect, rtol=1e-5, atol=1e-7)
    assert np.allclose(algo.a_history_[-1][1], expect, rtol=1e-5, atol=1e-7)


def test_ours_iter_rare_class_rows_adds_the_labeled_rows_of_classes_with_under_two_validation_rows():
    # class 1 has a single validation row
    _, model, algo, d = _fit_ours_iter(3, val_counts=(10, 1, 10), warmup_epochs=1, rare_class_rows="labeled")
    X, y = d["X"], d["y"]
    Xc = np.concatenate([d["Xv"], X[y == 1]])  # validation rows + class 1's labeled rows
    yc = np.concatenate([d["yv"], y[y == 1]])
    expect = optimal_a(
        loss_covariances(_ce_losses(model, Xc), yc, 3, shrinkage=0.5), ITER_PRIOR, np.bincount(y), ridge=1e-4
    )
    assert np.allclose(algo.a_, expect, rtol=1e-5, atol=1e-7)
    # without the option the single row gives class 1 no covariance
    with pytest.raises(ValueError):
        loss_covariances(_ce_losses(model, d["Xv"]), d["yv"], 3, shrinkage=0.5)
    with pytest.raises(ValueError, match="rare_class_rows"):
        OursIter(ITER_PRIOR, rare_class_rows="validation")


def test_ours_iter_finite_unlabeled_minimises_the_variance_at_the_actual_n_u():
    _, model, algo, d = _fit_ours_iter(3, warmup_epochs=1, finite_unlabeled=True)
    C = loss_covariances(_ce_losses(model, d["Xv"]), d["yv"], 3, shrinkage=0.5)
    n = np.bincount(d["y"])
    expect = optimal_a(
        C, ITER_PRIOR, n, ridge=1e-4, n_unlabeled=90, unlabeled_covariance=np.cov(_ce_losses(model, d["Xu"]).T)
    )
    assert np.allclose(algo.a_, expect, rtol=1e-5, atol=1e-7)
    assert not np.allclose(expect, optimal_a(C, ITER_PRIOR, n, ridge=1e-4), atol=1e-4)  # n_U matters
    with pytest.raises(TypeError, match="finite_unlabeled"):
        OursIter(ITER_PRIOR, finite_unlabeled=1)


def test_ours_iter_without_validation_data_raises():
    X, y = blobs([5, 5, 5], seed=0)
    algo = OursIter([0.3, 0.3, 0.4], warmup_epochs=1, n_per_class=np.bincount(y))
    tr = Trainer(MLP(2, 3, hidden=(8,)), algo, epochs=3, device="cpu", progress=False)
    with pytest.raises(ValueError, match="X_val and y_val"):
        tr.fit(X, y, X)
    with pytest.raises(ValueError, match="X_val and y_val"):
        algo.setup(None, FitContext(num_classes=3, device=CPU, data={"y_l": torch.as_tensor(y), "X_val": None}))


# ------------------------------------------------------------------------- unlabeled gradients


def _param_grad(model, loss):
    grads = torch.autograd.grad(loss, [p for p in model.parameters() if p.requires_grad], allow_unused=True)
    return torch.cat([torch.zeros(0) if g is None else g.flatten() for g in grads])


@pytest.mark.parametrize(
    "make",
    [
        lambda: OursEC([0.5, 0.5], n_per_class=[4, 12]),
        lambda: PNU([0.5, 0.5], n_per_class=[4, 12]),
        lambda: LinearRiskAlgorithm([0.5, 0.5], [0.3, 0.1], n_per_class=[4, 12]),
        lambda: PseudoLabel(0.0, warmup_epochs=0),
        lambda: VAT(1.0),
        lambda: FixMatch(0.0),
    ],
)
def test_unlabeled_part_of_each_ssl_loss_has_a_nonzero_parameter_gradient(make):
    torch.manual_seed(0)
    model = MLP(4, 2, hidden=(16,), dropout=0.0)
    algo = make()
    algo.setup(model, FitContext(num_classes=2, device=CPU))
    x_l, y_l = torch.randn(16, 4), torch.tensor([0] * 4 + [1] * 12)
    grads = []
    for x_u in (torch.randn(32, 4), torch.randn(32, 4) * 2 + 1):
        torch.manual_seed(1)  # same augmentation / noise draws; only the unlabeled batch differs
        grads.append(_param_grad(model, algo.loss(model, Batch(x_l, y_l, x_u, step=0)).loss))
    assert (grads[0] - grads[1]).abs().max() > 1e-6


@pytest.mark.parametrize("make", [lambda p: VAT(1.0, prior=p), lambda p: PseudoLabel(0.9, warmup_epochs=1, prior=p)])
def test_pl_and_vat_with_a_prior_use_the_pn_risk_as_supervised_term(make):
    X, y = blobs([12, 3, 6], seed=0)
    Xu, _ = blobs([20, 20, 20], seed=1)
    prior = np.array([0.2, 0.5, 0.3])
    with pytest.raises(ValueError, match="sum to 1"):
        make([0.2, 0.5, 0.2])  # refused at construction, not at the first fit
    algo = make(prior)
    assert "prior=[0.2, 0.5, 0.3]" in repr(algo)
    with pytest.raises(ValueError, match="needs the labels of the full labeled set"):
        algo.setup(MLP(2, 3, hidden=(8,)), FitContext(num_classes=3, device=CPU))  # no trainer: no train_data
    Trainer(MLP(2, 3, hidden=(8,)), algo, epochs=2, batch_size=7, device="cpu", progress=False).fit(X, y, Xu)
    assert torch.allclose(algo.class_weights_, prior_class_weights(prior, y, 3))
    model = MLP(2, 3, hidden=(8,)).eval()
    Xb, yb, Xub = (torch.as_tensor(v) for v in (X[:7], y[:7], Xu[:16]))
    out = algo.loss(model, Batch(Xb, yb, Xub, step=0))
    expected = (F.cross_entropy(logits_of(model, Xb), yb, reduction="none") * algo.class_weights_[yb]).mean()
    assert float(out.logs["sup_loss"]) == pytest.approx(float(expected.detach()), rel=1e-5)
    plain = make(None)
    plain.setup(MLP(2, 3, hidden=(8,)), FitContext(num_classes=3, device=CPU))
    assert plain.class_weights_ is None


# ------------------------------------------------------------------------- end to end


@pytest.mark.parametrize("make", [lambda n: OursEC([0.5, 0.5], n_per_class=n), lambda n: VAT(1.0)])
def test_short_fit_on_gaussian_pair_beats_chance(make):
    Xl, yl = gaussian_pair((20, 20), seed=0)
    Xu, _ = gaussian_pair(300, seed=1)
    Xt, yt = gaussian_pair(2000, seed=3)
    torch.manual_seed(0)
    tr = Trainer(
        MLP(2, 2, hidden=(32, 32)),
        make(np.bincount(yl)),
        epochs=15,
        batch_size=16,
        unlabeled_batch_size=64,
        device="cpu",
        progress=False,
        seed=0,
    ).fit(Xl, yl, Xu)
    assert tr.score(Xt, yt) > 0.65  # Bayes accuracy 0.76, chance 0.5
