"""sslkit.pipeline.SSLPipeline (issue 24): the three stages chained -- determinism under a seed, each stage switched
off, bad input refused -- and PerSampleRisk, the per-sample form of paper A's unlabeled term that drives Retrieve."""

import math

import numpy as np
import pytest
import torch

from sslkit.algorithms import (
    Batch,
    FitContext,
    FreeMatch,
    OursEC,
    OursIter,
    PerSampleRisk,
    SSLAlgorithm,
    Supervised,
)
from sslkit.models import MLP
from sslkit.pipeline import SSLPipeline, coreset_schedule
from sslkit.select import GKHR, RandomSelector

K = 3
PRIOR = np.full(K, 1.0 / K)


def blobs(n=240, d=5, seed=0):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % K
    centers = rng.normal(0, 3, (K, d))
    X = (centers[y] + rng.normal(0, 1, (n, d))).astype(np.float32)
    return X, y.astype(np.int64)


X, Y = blobs()
X_VAL, Y_VAL = blobs(60, seed=1)


def model(seed=0):
    torch.manual_seed(seed)
    return MLP(X.shape[1], K, hidden=(16,))


def pipe(algorithm=None, seed=0, **options):
    options = {"n_labels": 12, "epochs": 4, "every": 2, "batch_size": 8, "unlabeled_batch_size": 32, **options}
    return SSLPipeline(model(), algorithm or OursEC(PRIOR), seed=seed, device="cpu", num_classes=K, **options)


def weights(p):
    return torch.cat([t.detach().flatten() for t in p.model.state_dict().values()])


# ------------------------------------------------------------------------------------------ determinism


@pytest.mark.parametrize("make", [lambda: OursIter(PRIOR, warmup_epochs=1), lambda: FreeMatch(augment="tabular")])
def test_the_same_seed_gives_the_same_fit(make):
    a = pipe(make(), coreset=0.25).fit(X, Y, X_val=X_VAL, y_val=Y_VAL)
    b = pipe(make(), coreset=0.25).fit(X, Y, X_val=X_VAL, y_val=Y_VAL)
    assert np.array_equal(a.labeled_indices_, b.labeled_indices_)
    assert all(torch.equal(s["indices"], t["indices"]) for s, t in zip(a.coreset_.selections_, b.coreset_.selections_))
    assert torch.equal(weights(a), weights(b))
    assert np.array_equal(a.predict(X_VAL), b.predict(X_VAL))


def test_another_seed_draws_other_random_labels():
    a = pipe(selector="random", coreset=None, seed=0).fit(X, Y)
    b = pipe(selector="random", coreset=None, seed=1).fit(X, Y)
    assert not np.array_equal(np.sort(a.labeled_indices_), np.sort(b.labeled_indices_))


# ---------------------------------------------------------------------------------------------- stages


def test_stage_b_is_rdss_or_random_on_the_given_features():
    F = np.random.default_rng(3).normal(size=(len(X), 4))
    rdss = pipe(coreset=None).fit(X, Y, features=F)
    assert np.array_equal(rdss.labeled_indices_, GKHR(12, device="cpu").fit(F).indices_)
    assert np.array_equal(rdss.y_labeled_, Y[rdss.labeled_indices_])
    rand = pipe(selector="random", coreset=None, seed=5).fit(X, Y)
    assert np.array_equal(rand.labeled_indices_, RandomSelector(12, seed=5).fit(X).indices_)


def test_the_oracle_may_be_a_function_asked_once_for_the_chosen_rows():
    asked = []

    def ask(idx):
        asked.append(idx.copy())
        return Y[idx]

    p = pipe(coreset=None).fit(X, ask)
    assert len(asked) == 1 and np.array_equal(asked[0], p.labeled_indices_)
    assert np.array_equal(p.y_labeled_, Y[p.labeled_indices_])


def test_the_default_optimiser_is_usbs_nesterov_sgd_and_an_option_overrides_it():
    from sslkit.engine import USB_SGD

    opt = pipe(coreset=None).fit(X, Y).trainer_.optimizer_
    group = opt.param_groups[0]
    assert isinstance(opt, torch.optim.SGD) and group["nesterov"] and group["momentum"] == 0.9
    assert USB_SGD["lr"] == 0.03 and USB_SGD["weight_decay"] == 5e-4  # paper C App. C.3
    assert pipe(coreset=None, lr=0.1).trainer_options["lr"] == 0.1


def test_stage_c_off_trains_every_epoch_on_the_full_pool():
    p = pipe(coreset=None).fit(X, Y)
    assert p.coreset_ is None and not p.trainer_.sampler_.restricted
    steps = 4 * math.ceil(len(X) / 32)
    assert p.schedule_ == {"epochs": 4, "warm_epochs": 0, "k": len(X), "total_steps": steps}
    assert p.trainer_.iteration == steps and p.timings_["coreset_selection"] == 0


def test_stage_c_on_restricts_the_pool_to_retrieves_coreset_after_the_warm_start():
    p = pipe(coreset=0.25, epochs=8, every=2).fit(X, Y)
    s = p.schedule_
    assert s["k"] == 60 and s["warm_epochs"] == 1 and s["epochs"] == 1 + 4  # κ T k / N = 0.5 * 8 * 0.25
    assert [x["epoch"] for x in p.coreset_.selections_] == [1, 3]
    assert p.trainer_.sampler_.size == 60 and p.trainer_.iteration == s["total_steps"] == 8 + 4 * 2
    assert p.timings_["coreset_selection"] > 0 and p.timings_["coreset_selection_cpu"] >= 0


def test_stage_a_off_trains_any_ssl_method_and_paper_a_is_wrapped_only_for_retrieve():
    fm = pipe(FreeMatch(augment="tabular"), coreset=0.25).fit(X, Y)
    assert isinstance(fm.trainer_.algorithm, FreeMatch)
    ec = pipe(OursEC(PRIOR), coreset=0.25).fit(X, Y)
    assert isinstance(ec.trainer_.algorithm, PerSampleRisk) and ec.trainer_.algorithm.base is ec.algorithm
    full = pipe(OursEC(PRIOR), coreset=None).fit(X, Y)
    assert isinstance(full.trainer_.algorithm, OursEC)


def test_ours_iter_selects_only_after_its_warm_up_with_nonzero_gradients():
    algo = OursIter(PRIOR, warmup_epochs=3)
    p = pipe(algo, coreset=0.25, epochs=8, every=2)
    p.fit(X, Y, X_val=X_VAL, y_val=Y_VAL)
    assert p.schedule_["warm_epochs"] == 3  # max(κ T k / N = 1, the warm-up)
    assert p.coreset_.selections_[0]["epoch"] == 3 and len(algo.a_history_) > 1
    G, *_ = p.coreset_.gradients_at(p.trainer_, labeled=False)
    assert float(G.abs().sum()) > 0


def test_coreset_schedule_closed_form():
    steps = 2 * 63 + 10 * 13  # 2 warm epochs of ceil(8000 / 128), then 10 of ceil(1600 / 128)
    assert coreset_schedule(20, 8000, 0.2, 128) == {"epochs": 12, "warm_epochs": 2, "k": 1600, "total_steps": steps}
    assert coreset_schedule(20, 8000, None, 128)["total_steps"] == 20 * 63
    assert coreset_schedule(20, 8000, 0.2, 128, min_warm=5)["warm_epochs"] == 5


# ------------------------------------------------------------------------------------------ PerSampleRisk


def test_per_sample_risk_terms_are_the_unlabeled_part_of_the_raw_risk():
    """l_u(x) = Σ_j c_j ℓ(f(x), j); the raw risk (no nn correction) changes with the unlabeled batch by exactly
    the change of the mean of l_u (R̂_lin^a is linear in R̂_U with coefficients c_j)."""
    torch.manual_seed(0)
    net = MLP(X.shape[1], K, hidden=(8,)).eval()  # no dropout: the same forward every call
    a = np.array([0.2, 0.5, 0.3])
    base = OursEC(PRIOR, nonnegative=False)
    algo = PerSampleRisk(base)
    algo.setup(net, FitContext(num_classes=K, device=torch.device("cpu"), data={"y_l": torch.as_tensor(Y)}))
    base.set_a(a)
    xu, xu2 = torch.as_tensor(X[:40]), torch.as_tensor(X[40:80])
    out = algo.unlabeled_losses(net, xu)
    c = torch.as_tensor(1 - a / PRIOR, dtype=torch.float32)
    with torch.no_grad():  # ℓ(f(x), j) = cross-entropy at label j = -log softmax_j
        by_hand = -torch.log_softmax(net(xu)[0], dim=1) @ c
    assert torch.allclose(out.losses.detach(), by_hand, atol=1e-5)
    xl, yl = torch.as_tensor(X[100:130]), torch.as_tensor(Y[100:130])
    r1 = algo.loss(net, Batch(xl, yl, xu)).loss
    r2 = algo.loss(net, Batch(xl, yl, xu2)).loss
    mean2 = algo.unlabeled_losses(net, xu2).losses.mean()
    assert torch.allclose(r1 - r2, out.losses.mean() - mean2, atol=1e-5)
    assert out.logits is not None and out.mask is None and algo.has_unlabeled_losses()
    assert not base.has_unlabeled_losses()


def test_per_sample_risk_refuses_a_non_risk_learner():
    with pytest.raises(TypeError, match="LinearRiskAlgorithm"):
        PerSampleRisk(FreeMatch())


# ------------------------------------------------------------------------------------------- bad input


class NoPerSample(SSLAlgorithm):
    uses_unlabeled = True

    def loss(self, model, batch):  # pragma: no cover - never trained
        raise AssertionError


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"model": "net"}, TypeError, "torch.nn.Module"),
        ({"algorithm": "ours"}, TypeError, "SSLAlgorithm"),
        ({"algorithm": Supervised()}, ValueError, "uses no unlabeled data"),
        ({"selector": "stratified"}, ValueError, "selector must be one of"),  # needs every label
        ({"selector": object()}, TypeError, "object with fit"),
        ({"coreset": 1.0}, ValueError, "coreset"),
        ({"n_labels": 0}, ValueError, "n_labels"),
        ({"epochs": 0}, ValueError, "epochs"),
        ({"kappa": 1.0}, ValueError, "kappa"),
        ({"iterations_per_epoch": 3}, ValueError, "sets .* itself"),
    ],
)
def test_bad_constructor_arguments_are_refused(kwargs, error, match):
    options = {"model": model(), "algorithm": OursEC(PRIOR), "n_labels": 12, **kwargs}
    with pytest.raises(error, match=match):
        SSLPipeline(options.pop("model"), options.pop("algorithm"), options.pop("n_labels"), **options)


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda p: p.fit(X.tolist(), Y), TypeError, "numpy array or a torch tensor"),
        (lambda p: p.fit(X[:, 0], Y), ValueError, "n_samples"),
        (lambda p: p.fit(X, Y[:-1]), ValueError, "one label per row"),
        (lambda p: p.fit(X, Y.astype(float)), TypeError, "integer class labels"),
        (lambda p: p.fit(X, lambda idx: Y[idx][:-1]), ValueError, "labels for 12 rows"),
        (lambda p: p.fit(X, lambda idx: Y[idx] - 1), ValueError, "negative class label"),
        (lambda p: p.fit(X, Y + 1), ValueError, "outside \\[0, num_classes"),
        (lambda p: p.fit(X, Y, features=X[:10]), ValueError, "features has 10 rows"),
        (lambda p: p.fit(X, Y, X_val=X_VAL), ValueError, "both X_val and y_val"),
        (lambda p: p.fit(X[:5], Y[:5]), ValueError, "exceeds the pool"),
        (lambda p: p.predict(X), RuntimeError, "not fitted"),
    ],
)
def test_bad_fit_input_is_refused(call, error, match):
    with pytest.raises(error, match=match):
        call(pipe(coreset=None))


def test_a_missing_class_in_the_labels_is_a_clear_error_of_the_risk_rewrite():
    with pytest.raises(ValueError, match="no sample of class"):
        pipe(coreset=None).fit(X, lambda idx: np.zeros(len(idx), dtype=np.int64))


def test_retrieve_needs_per_sample_losses():
    with pytest.raises(ValueError, match="no per-sample unlabeled losses"):
        pipe(NoPerSample(), coreset=0.25).fit(X, Y)
