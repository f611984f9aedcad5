"""The ecosystem's conventions on the main estimators: scikit-learn's ``get_params`` / ``set_params`` / ``clone``,
``fit`` starting afresh, ``y = -1`` for unlabeled rows; PyTorch's ``Dataset`` / ``DataLoader`` inputs and the
user's own optimiser and scheduler; early, clear errors for an unknown device and for ``strategy.select(50)``."""

import functools

import numpy as np
import pytest
import torch
from sklearn.base import clone
from torch.utils.data import DataLoader, TensorDataset

from sslkit.algorithms import OursEC, PseudoLabel, Supervised
from sslkit.coreset import STRATEGIES, make_strategy
from sslkit.engine import Trainer
from sslkit.models import MLP
from sslkit.pipeline import SSLPipeline
from sslkit.select import GKH, GKHR, SELECTORS, make_selector, selector_name

K = 3


def blobs(n=150, d=4, seed=0):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % K
    X = (rng.normal(0, 3, (K, d))[y] + rng.normal(0, 1, (n, d))).astype(np.float32)
    return X, y.astype(np.int64)


X, Y = blobs()


def mlp(seed=0):
    torch.manual_seed(seed)
    return MLP(4, K, hidden=(16,))


def trainer(model=None, algorithm=None, **kw):
    kw = {"epochs": 3, "progress": False, "device": "cpu", "batch_size": 32, **kw}
    return Trainer(model if model is not None else mlp(), algorithm or Supervised(), **kw)


def weights(model):
    return torch.cat([p.detach().flatten() for p in model.parameters()])


# ------------------------------------------------------------------------------------------- scikit-learn


def test_clone_gives_an_unfitted_copy_with_a_copy_of_the_model():
    t = trainer(lr=0.01, epochs=4)
    t.fit(X, Y)
    c = clone(t)
    assert c.model is not t.model and not hasattr(c, "history_")
    assert {k: v for k, v in c.get_params(deep=False).items() if k not in ("model", "algorithm")} == {
        k: v for k, v in t.get_params(deep=False).items() if k not in ("model", "algorithm")
    }
    assert c.lr == 0.01 and c.epochs == 4


def test_clone_of_a_fitted_estimator_starts_from_the_initial_weights():
    """The model is trained in place; its clone is copied at the weights it had before the first fit."""
    model = mlp()
    initial = weights(model)
    t = trainer(model).fit(X, Y)
    assert not torch.equal(weights(t.model), initial)
    assert torch.equal(weights(clone(t).model), initial)
    pipe = SSLPipeline(mlp(), OursEC(np.full(K, 1 / K)), 12, coreset=None, epochs=2, progress=False, device="cpu")
    before = weights(pipe.model)
    pipe.fit(X, Y)
    assert torch.equal(weights(clone(pipe).model), before)


def test_set_params_checks_again_and_refuses_unknown_names():
    t = trainer()
    assert t.set_params(lr=0.5, epochs=7) is t and (t.lr, t.epochs) == (0.5, 7)
    with pytest.raises(ValueError, match="lr must be a finite number"):
        t.set_params(lr=-1.0)
    with pytest.raises(ValueError, match="has no parameter 'learning_rate'"):
        t.set_params(learning_rate=0.1)


@pytest.mark.parametrize("name", list(SELECTORS))
def test_every_label_selector_clones(name):
    sel = make_selector(name, 5, seed=3)
    c = clone(sel)
    assert type(c) is type(sel) and c.get_params() == sel.get_params() and c is not sel


@pytest.mark.parametrize("name", list(STRATEGIES))
def test_every_coreset_strategy_clones(name):
    s = make_strategy(name, 7, seed=2)
    c = clone(s)
    assert type(c) is type(s) and c.get_params() == s.get_params()


def test_pipeline_clones_with_its_trainer_options_and_set_params_reaches_them():
    pipe = SSLPipeline(mlp(), OursEC(np.full(K, 1 / K)), 12, coreset=None, epochs=2, lr=0.05, progress=False)
    c = clone(pipe)
    assert c.get_params(deep=False)["lr"] == 0.05 and c.model is not pipe.model
    c.set_params(lr=0.2, selector="RDSS")
    assert c.trainer_options["lr"] == 0.2 and c.selector == "RDSS"


def test_a_second_fit_starts_afresh():
    """A second ``fit`` gives exactly the first's weights (it restarts from the initial ones, it does not continue)."""
    model = mlp()
    initial = weights(model)
    t = trainer(model)
    t.fit(X, Y)
    first = weights(model)
    assert not torch.equal(first, initial)
    t.fit(X, Y)
    assert torch.equal(weights(model), first)


def test_a_second_pipeline_fit_starts_afresh():
    pipe = SSLPipeline(mlp(), OursEC(np.full(K, 1 / K)), 12, coreset=None, epochs=2, progress=False, device="cpu")
    pipe.fit(X, Y)
    first = weights(pipe.model)
    pipe.fit(X, Y)
    assert torch.equal(weights(pipe.model), first)


def test_minus_one_marks_unlabeled_rows():
    """``fit(X, y)`` with ``y = -1`` on the unlabeled rows is ``fit(X_l, y_l, X_u)``, bit for bit."""
    y = Y.copy()
    y[20:] = -1
    a = trainer(mlp(), PseudoLabel(), iterations_per_epoch=4).fit(X, y)
    b = trainer(mlp(), PseudoLabel(), iterations_per_epoch=4).fit(X[:20], Y[:20], X[20:])
    assert torch.equal(weights(a.model), weights(b.model))
    with pytest.raises(ValueError, match="X_u is given too"):
        trainer(mlp(), PseudoLabel()).fit(X, y, X[:5])
    with pytest.raises(ValueError, match="every row of y_l is -1"):
        trainer().fit(X, np.full(len(X), -1))


def test_minus_one_rows_leave_a_supervised_fit_unchanged():
    y = Y.copy()
    y[30:] = -1
    a = trainer(mlp()).fit(X, y)
    b = trainer(mlp()).fit(X[:30], Y[:30])
    assert torch.equal(weights(a.model), weights(b.model))


#: scikit-learn's estimator checks that pass on a Trainer (the others: float32 features and integer labels only, no
#: ``sample_weight`` / pandas / sparse / string-label / multi-output support, errors are sslkit's own (TypeError for a
#: float ``y``, RuntimeError before ``fit``), the model is trained in place (``check_estimators_overwrite_params``),
#: the hooks' live counters ``epoch`` / ``iteration`` / ``stop_training`` are public
#: (``check_dont_overwrite_parameters``)
#: and the constructor checks its arguments (``check_do_not_raise_errors_in_init_or_set_params``))
SKLEARN_CHECKS = (
    "check_no_attributes_set_in_init",
    "check_get_params_invariance",
    "check_set_params",
    "check_estimator_cloneable",
    "check_estimator_repr",
    "check_estimators_fit_returns_self",
    "check_fit_idempotent",
    "check_fit_check_is_fitted",
    "check_estimators_pickle",
    "check_dict_unchanged",
    "check_methods_subset_invariance",
    "check_methods_sample_order_invariance",
    "check_decision_proba_consistency",
    "check_f_contiguous_array_estimator",
    "check_fit2d_1sample",
    "check_pipeline_consistency",
)


@pytest.mark.filterwarnings(
    "ignore::UserWarning", "ignore::FutureWarning"
)  # "validate in fit" advice: sslkit checks early
@pytest.mark.parametrize("check", SKLEARN_CHECKS)
def test_sklearn_estimator_checks_that_apply(check):
    """Each check builds its own data (any number of features, 2 or 3 classes): a lazy first layer takes any width.
    ``check_fit_idempotent`` is "fit starts afresh": two fits give the same predictions."""
    from sklearn.utils import estimator_checks

    t = Trainer(torch.nn.LazyLinear(3), Supervised(), epochs=2, progress=False, device="cpu", num_classes=3)
    getattr(estimator_checks, check)("Trainer", t)


# ---------------------------------------------------------------------------------------------- PyTorch


def test_dataset_and_dataloader_inputs_equal_the_arrays():
    Xt, yt = torch.from_numpy(X), torch.from_numpy(Y)
    a = trainer(mlp(), PseudoLabel(), iterations_per_epoch=3).fit(X[:30], Y[:30], X[30:], X[:20], Y[:20])
    b = trainer(mlp(), PseudoLabel(), iterations_per_epoch=3).fit(
        TensorDataset(Xt[:30], yt[:30]),
        None,
        DataLoader(TensorDataset(Xt[30:]), batch_size=7),
        DataLoader(TensorDataset(Xt[:20], yt[:20]), batch_size=8),
    )
    assert torch.equal(weights(a.model), weights(b.model))
    assert a.history_[-1]["val_acc"] == b.history_[-1]["val_acc"]
    with pytest.raises(ValueError, match="pass y_l=None"):
        trainer().fit(TensorDataset(Xt, yt), Y)
    with pytest.raises(ValueError, match=r"\(x, y\) pairs"):
        trainer().fit(TensorDataset(Xt), None)


def test_pipeline_takes_a_dataset_of_pairs():
    ds = TensorDataset(torch.from_numpy(X), torch.from_numpy(Y))
    opts = {"coreset": None, "epochs": 2, "progress": False, "device": "cpu", "selector": "random"}
    a = SSLPipeline(mlp(), OursEC(np.full(K, 1 / K)), 12, **opts).fit(X, Y)
    b = SSLPipeline(mlp(), OursEC(np.full(K, 1 / K)), 12, **opts).fit(DataLoader(ds, batch_size=50))
    assert np.array_equal(a.labeled_indices_, b.labeled_indices_)
    assert torch.equal(weights(a.model), weights(b.model))


def test_the_users_optimiser_and_scheduler():
    """An optimiser object is a template (a fresh one of its class and settings each fit); a function builds one;
    a scheduler function is stepped once per epoch."""
    model = mlp()
    template = torch.optim.AdamW(model.parameters(), lr=0.02, weight_decay=0.1)
    t = trainer(
        model, optimizer=template, schedule=functools.partial(torch.optim.lr_scheduler.StepLR, step_size=1, gamma=0.5)
    )
    t.fit(X, Y)
    assert type(t.optimizer_) is torch.optim.AdamW and t.optimizer_ is not template
    assert t.optimizer_.defaults["weight_decay"] == 0.1
    assert [round(r["lr"], 6) for r in t.history_] == [0.02, 0.01, 0.005]  # lr of each epoch's last step
    assert t.optimizer_.param_groups[0]["lr"] == pytest.approx(0.02 * 0.5**3)
    f = trainer(mlp(), optimizer=functools.partial(torch.optim.SGD, lr=0.1, momentum=0.5)).fit(X, Y)
    assert type(f.optimizer_) is torch.optim.SGD and f.optimizer_.defaults["momentum"] == 0.5
    # clone with an optimiser template: the copy trains its own model
    c = clone(t).fit(X, Y)
    assert c.optimizer_.param_groups[0]["params"][0] is next(c.model.parameters())
    with pytest.raises(TypeError, match="optimizer must be one of"):
        trainer(optimizer=3)
    with pytest.raises(TypeError, match="learning-rate scheduler"):
        trainer(schedule=lambda opt: 1).fit(X, Y)


def test_cosine_schedule_scales_each_groups_own_rate():
    t = trainer(optimizer=functools.partial(torch.optim.SGD, lr=0.4), schedule="cosine", epochs=2).fit(X, Y)
    assert 0 < t.optimizer_.param_groups[0]["lr"] < 0.4


@pytest.mark.parametrize("device", ["gpu", "tpu", "cuda:x", 3])
def test_an_unknown_device_is_refused_at_construction(device):
    with pytest.raises((ValueError, TypeError), match="device"):
        trainer(device=device)


def test_mps_without_mps_is_a_clear_error():
    if torch.backends.mps.is_available():
        pytest.skip("this machine has MPS")
    t = trainer(device="mps")
    with pytest.raises(RuntimeError, match="MPS is not available"):
        t.fit(X, Y)


# -------------------------------------------------------------------------------------------- selection


def test_make_selector_takes_the_pipelines_names():
    assert isinstance(make_selector("rdss", 5), GKHR) and not isinstance(make_selector("rdss", 5), GKH)
    assert selector_name("k_means") == "k-Means" and selector_name("ActiveFT") == "ActiveFT"
    assert np.array_equal(make_selector("rdss", 8).fit(X).indices_, make_selector("RDSS", 8).fit(X).indices_)
    with pytest.raises(ValueError, match="selector must be one of"):
        make_selector("herding", 5)
