"""sslkit.algorithms.meta_step, what L2RW and DS3L (paper C §4, F.3) share: the functional one-step update, the labeled
loss at the stepped weights, the robust wrappers' contract and input checks; and the meta-set variants of the
robust experiments. L2RW's and DS3L's own tests (with this file's toy problem): test_algorithms_l2rw.py,
test_algorithms_ds3l.py."""

import copy

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from sslkit.algorithms import (
    DS3L,
    L2RW,
    VAT,
    Batch,
    CrustMixup,
    FitContext,
    LossOutput,
    PseudoLabel,
    SSLAlgorithm,
    Supervised,
    UnlabeledLosses,
    weighted_mean,
)
from sslkit.algorithms.meta_step import labeled_loss_at, one_step, split_base_loss


class Toy(SSLAlgorithm):
    """Deterministic base: CE on the labeled batch + λ · CE of the unlabeled batch against fixed targets."""

    name, uses_unlabeled = "toy", True

    def __init__(self, targets, lambda_u=1.0):
        self.targets, self.lambda_u = targets, lambda_u

    def unlabeled_losses(self, model, x_u, u_idx=None):
        z = model(x_u)
        return UnlabeledLosses(F.cross_entropy(z, self.targets[u_idx], reduction="none"), None, z, None)

    def loss(self, model, batch):
        sup = F.cross_entropy(model(batch.x_l), batch.y_l)
        z = model(batch.x_u)
        per = F.cross_entropy(z, self.targets[batch.u_idx], reduction="none")
        unsup = weighted_mean(per, batch.u_weight)
        total = sup + self.lambda_u * unsup
        return LossOutput(total, {"unsup_loss": unsup.detach()}, UnlabeledLosses(per, None, z, None))


def toy_problem(seed=0, n_u=12, harmful=6):
    g = torch.Generator().manual_seed(seed)
    x_l = torch.randn(10, 3, generator=g)
    y_l = (x_l[:, 0] > 0).long()
    x_u = torch.randn(n_u, 3, generator=g)
    truth = (x_u[:, 0] > 0).long()
    targets = truth.clone()
    targets[:harmful] = 1 - truth[:harmful]  # wrong consistency targets: harmful points
    torch.manual_seed(seed)
    model = nn.Linear(3, 2)
    return model, Batch(x_l, y_l, x_u, torch.arange(n_u)), targets


def explicit_l2rw(model, batch, targets, lr, lam, supervised=True):
    """The sign-clipped negative meta-gradient through an explicit one-step update of (W, b)."""
    W, b = model.weight.detach().clone().requires_grad_(), model.bias.detach().clone().requires_grad_()
    eps = torch.zeros(batch.x_u.shape[0], requires_grad=True)
    l_u = F.cross_entropy(batch.x_u @ W.T + b, targets[batch.u_idx], reduction="none")
    inner = lam * (eps * l_u).sum() + (F.cross_entropy(batch.x_l @ W.T + b, batch.y_l) if supervised else 0)
    gW, gb = torch.autograd.grad(inner, (W, b), create_graph=True)
    meta = F.cross_entropy(batch.x_l @ (W - lr * gW).T + (b - lr * gb), batch.y_l)
    (g,) = torch.autograd.grad(meta, eps)
    w = torch.clamp(-g, min=0)
    return w / w.sum() if w.sum() > 0 else w, l_u.detach()


def test_one_step_is_the_functional_sgd_step_and_labeled_loss_uses_it():
    model, batch, targets = toy_problem()
    loss = F.cross_entropy(model(batch.x_l), batch.y_l)
    theta = one_step(model, loss, 0.3)
    ref = copy.deepcopy(model)
    ref.zero_grad()
    F.cross_entropy(ref(batch.x_l), batch.y_l).backward()
    with torch.no_grad():
        for p in ref.parameters():
            p -= 0.3 * p.grad
    assert torch.allclose(theta["weight"], ref.weight) and torch.allclose(theta["bias"], ref.bias)
    assert float(labeled_loss_at(model, theta, batch.x_l, batch.y_l).detach()) == pytest.approx(
        float(F.cross_entropy(ref(batch.x_l), batch.y_l).detach()), rel=1e-6
    )
    assert theta["weight"].requires_grad and theta["weight"].grad_fn is not None  # differentiable


def test_labeled_loss_at_leaves_batchnorm_statistics_alone():
    model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Linear(4, 2)).train()
    before = model[1].running_mean.clone()
    theta = dict(model.named_parameters())
    labeled_loss_at(model, theta, torch.randn(8, 3), torch.zeros(8, dtype=torch.long))
    assert torch.equal(model[1].running_mean, before)


def test_robust_wrappers_cannot_be_nested():
    targets = torch.zeros(4, dtype=torch.long)
    for outer in (L2RW, DS3L, CrustMixup):
        for inner in (L2RW, DS3L, CrustMixup):
            with pytest.raises(ValueError, match="robust-SSL wrapper"):
                outer(inner(Toy(targets)))


def test_robust_wrappers_take_the_base_contract_attributes():
    base = PseudoLabel(0.9, warmup_epochs=7, lambda_u=0.5)
    for cls in (L2RW, DS3L, CrustMixup):
        algo = cls(base)
        assert algo.lambda_u == 0.5 and algo.warmup_epochs == 7 and algo.has_unlabeled_losses()


def test_bad_inputs_are_refused():
    targets = torch.zeros(4, dtype=torch.long)
    for cls in (L2RW, DS3L):
        with pytest.raises(TypeError, match="SSLAlgorithm"):
            cls("vat")
        with pytest.raises(ValueError, match="uses no unlabeled data"):
            cls(Supervised())
        with pytest.raises(ValueError, match="inner_lr"):
            cls(VAT(1.0), inner_lr=0.0)
        base = Toy(targets)
        base.lambda_u = None
        with pytest.raises(ValueError, match="lambda_u"):
            cls(base)
    with pytest.raises(ValueError, match="meta_lr"):
        DS3L(VAT(1.0), meta_lr=-1)
    with pytest.raises(ValueError, match="hidden"):
        DS3L(VAT(1.0), hidden=0)
    with pytest.raises(RuntimeError, match="setup"):
        model, batch, _ = toy_problem()
        DS3L(Toy(targets)).loss(model, batch)

    class NoPerSample(Toy):
        def loss(self, model, batch):
            return LossOutput(F.cross_entropy(model(batch.x_l), batch.y_l))

    model, batch, targets = toy_problem()
    with pytest.raises(ValueError, match="per-sample"):
        L2RW(NoPerSample(targets)).loss(model, batch)
    with pytest.raises(ValueError, match="unlabeled batch"):
        L2RW(Toy(targets)).loss(model, Batch(batch.x_l, batch.y_l))


def one_row_meta_set(model, batch, algo_cls, **kwargs):
    """A meta-algorithm bound to a meta-set of one row (so every meta-batch repeats it) and that row as a batch."""
    x_m, y_m = torch.tensor([[1.5, -0.3, 0.2]]), torch.tensor([0])
    algo = algo_cls(**kwargs).bind_meta_set(x_m, y_m, meta_batch_size=5, seed=0)
    torch.manual_seed(1)
    algo.setup(model, FitContext(num_classes=2))
    return algo, Batch(x_m.repeat(5, 1), y_m.repeat(5), batch.x_u, batch.u_idx)


def test_meta_l2rw_weights_are_the_meta_gradients_of_the_meta_set_not_the_labeled_batch():
    from sslkit.experiments.paper_c.robust import MetaL2RW

    model, batch, targets = toy_problem()
    algo, meta_batch = one_row_meta_set(
        model, batch, lambda: MetaL2RW(Toy(targets, lambda_u=0.7), inner_lr=0.5, inner_supervised=False)
    )
    algo.loss(model, batch)
    w_ref, _ = explicit_l2rw(model, meta_batch, targets, 0.5, 0.7, supervised=False)
    assert torch.allclose(algo.weights_, w_ref, atol=1e-6)
    w_labeled, _ = explicit_l2rw(model, batch, targets, 0.5, 0.7, supervised=False)
    assert not torch.allclose(algo.weights_, w_labeled, atol=1e-3)  # the labeled batch would weigh otherwise


def test_meta_ds3l_outer_objective_is_the_meta_set_loss_after_the_labeled_inner_step():
    from sslkit.experiments.paper_c.robust import MetaDS3L

    model, batch, targets = toy_problem(n_u=40, harmful=20)
    algo, meta_batch = one_row_meta_set(model, batch, lambda: MetaDS3L(Toy(targets), inner_lr=0.5, hidden=16))
    sup, losses, out = split_base_loss(algo.base, model, batch)
    probs = torch.softmax(out.unlabeled.logits.detach(), dim=1)
    got = algo.meta_objective(model, batch, sup, losses, probs)
    want = DS3L.meta_objective(algo, model, meta_batch, sup, losses, probs)  # the inner step keeps the labeled sup
    labeled = DS3L.meta_objective(algo, model, batch, sup, losses, probs)
    assert float(got.detach()) == pytest.approx(float(want.detach()), rel=1e-6)
    assert float(got.detach()) != pytest.approx(float(labeled.detach()), rel=1e-3)


def test_meta_set_draws_are_seeded_and_bad_meta_sets_are_refused():
    from sslkit.experiments.paper_c.robust import MetaL2RW

    model, batch, targets = toy_problem()
    X, y = torch.randn(30, 3), torch.randint(0, 2, (30,))
    draws = []
    for _ in range(2):
        algo = MetaL2RW(Toy(targets)).bind_meta_set(X, y, meta_batch_size=7, seed=3)
        algo.setup(model, FitContext(num_classes=2))
        draws.append(algo.meta_batch(batch).x_l)
    assert draws[0].shape == (7, 3) and torch.equal(draws[0], draws[1])
    with pytest.raises(ValueError, match="as many labels"):
        MetaL2RW(Toy(targets)).bind_meta_set(X, y[:3], meta_batch_size=7, seed=0)
    with pytest.raises(ValueError, match="meta_batch_size"):
        MetaL2RW(Toy(targets)).bind_meta_set(X, y, meta_batch_size=0, seed=0)
