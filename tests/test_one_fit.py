"""One task, one fit: every training run of the reproduction goes through :func:`sslkit.engine.fit`.

* statically, over every module of ``sslkit.experiments`` and ``sslkit.pipeline`` (read with ``ast``): no
  :class:`~sslkit.engine.Trainer` is built anywhere else -- so the run functions of the catalog, which all live
  there, have no other training path;
* dynamically, over the catalog: each experiment's run function is called on its first quick-scale configuration
  with ``Trainer.fit`` replaced by a stub that records who called it and stops the run; every call must come from
  :func:`sslkit.engine.fit`.

And the two pieces themselves: :class:`sslkit.task.Task` and :class:`sslkit.engine.TrainConfig` refuse bad input,
and :func:`sslkit.engine.fit` seeds, builds and trains in the order that makes a run reproducible.
"""

import ast
import functools
import inspect
from pathlib import Path

import numpy as np
import pytest
import torch

from sslkit.algorithms import Supervised
from sslkit.data import DatasetNotFoundError
from sslkit.engine import TrainConfig, Trainer, fit
from sslkit.experiments import catalog
from sslkit.models import MLP
from sslkit.seeding import seed_everything
from sslkit.task import Task

ROOT = Path(__file__).resolve().parents[1]
#: where the reproduction's run functions and the pipeline live
SCANNED = sorted((ROOT / "sslkit" / "experiments").rglob("*.py")) + [ROOT / "sslkit" / "pipeline.py"]


def trainer_constructions(source: str) -> list:
    """Line numbers of the calls that build a Trainer (``Trainer(...)``, ``engine.Trainer(...)``) in ``source``."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
            if name == "Trainer":
                lines.append(node.lineno)
    return lines


def test_the_check_sees_a_trainer_built_outside_the_one_fit():
    planted = "from sslkit.engine import Trainer\n\ndef run(seed):\n    return Trainer(m, a, seed=seed).fit(X, y)\n"
    assert trainer_constructions(planted) == [4]
    assert trainer_constructions("import sslkit.engine as E\nE.Trainer(m, a)\n") == [2]
    assert trainer_constructions("from sslkit.engine import fit\nfit(task, a)\n") == []


def test_no_module_of_the_reproduction_builds_a_trainer_itself():
    found = {
        str(p.relative_to(ROOT)): lines
        for p in SCANNED
        if (lines := trainer_constructions(p.read_text(encoding="utf-8")))
    }
    assert found == {}, f"Trainer built outside sslkit.engine.fit: {found}"


def _run_functions():
    for e in catalog.experiments():
        for name, scale in e.scales.items():
            fn = scale.run or e.run
            while isinstance(fn, functools.partial):
                fn = fn.func
            yield e.name, name, fn


def test_every_run_function_of_the_catalog_is_in_the_scanned_modules():
    scanned = {str(p.relative_to(ROOT)) for p in SCANNED}
    outside = {
        (name, scale, fn.__module__)
        for name, scale, fn in _run_functions()
        if str(Path(inspect.getfile(fn)).resolve().relative_to(ROOT)) not in scanned
    }
    assert not outside, f"run functions the static check does not read: {sorted(outside)}"


class _Stopped(Exception):
    """Raised by the stubbed Trainer.fit: the run reached training (through the one fit)."""


def _quick_cases():
    """Each experiment's first configuration at its quick scale; an experiment with none (a GPU-only paper-scale
    protocol such as b_table4_ssl) is left to the static check above."""
    for e in catalog.experiments():
        configs = e.scale("quick").configs() if "quick" in e.scales else []
        if configs:
            yield pytest.param(e, "quick", configs[0], id=f"{e.name}/quick")


@pytest.mark.slow  # loads each experiment's data and runs it up to its first training step
@pytest.mark.parametrize(("experiment", "scale", "config"), list(_quick_cases()))
def test_each_run_function_trains_through_the_one_fit(experiment, scale, config, monkeypatch):
    callers = []

    def stub(self, *args, **kwargs):
        callers.append(inspect.stack()[1].frame.f_globals["__name__"] + "." + inspect.stack()[1].function)
        raise _Stopped

    monkeypatch.setattr(Trainer, "fit", stub)
    fn = experiment.call(scale, device="cpu")
    try:
        fn(**config, seed=experiment.scale(scale).seeds[0])
    except _Stopped:
        pass
    except DatasetNotFoundError as err:
        pytest.skip(f"data not here: {err}")
    assert set(callers) <= {"sslkit.engine.fitting.fit"}, callers


# ------------------------------------------------------------------------------------------ the pieces


def _task(**kw):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 5)).astype(np.float32)
    y = (X[:, 0] > 0).astype(np.int64)
    fields = dict(X_l=X[:20], y_l=y[:20], X_u=X[20:], X_val=X[:10], y_val=y[:10], X_test=X[20:], y_test=y[20:])
    return Task(**{**fields, "num_classes": 2, "model_factory": lambda: MLP(5, 2, hidden=(8,)), **kw})


def test_fit_seeds_then_builds_the_model_then_trains_as_the_trainer_alone_would():
    task, config = _task(), TrainConfig(epochs=3, batch_size=8, unlabeled_batch_size=8)
    tr = fit(task, Supervised(), config, seed=5, device="cpu")
    seed_everything(5)
    by_hand = Trainer(
        task.make_model(),
        Supervised(),
        epochs=3,
        batch_size=8,
        unlabeled_batch_size=8,
        seed=5,
        progress=False,
        num_classes=2,
        device="cpu",
    )
    by_hand.fit(task.X_l, task.y_l, task.X_u, task.X_val, task.y_val)
    for a, b in zip(tr.model.state_dict().values(), by_hand.model.state_dict().values()):
        assert torch.equal(a, b)
    assert tr.history_[-1]["val_acc"] == by_hand.history_[-1]["val_acc"] and tr.epochs_run_ == 3
    other = fit(task, Supervised(), config, seed=6, device="cpu")
    assert not torch.equal(next(iter(other.model.parameters())), next(iter(tr.model.parameters())))


def test_fit_trains_a_given_model_in_place_and_refuses_a_config_that_is_not_one():
    model = MLP(5, 2, hidden=(8,))
    before = [p.detach().clone() for p in model.parameters()]
    tr = fit(_task(model_factory=None), Supervised(), TrainConfig(epochs=1), model=model, device="cpu")
    assert tr.model is model and any(not torch.equal(a, b) for a, b in zip(before, model.parameters()))
    with pytest.raises(TypeError, match="TrainConfig"):
        fit(_task(), Supervised(), {"epochs": 1})
    with pytest.raises(ValueError, match="no model_factory"):
        fit(_task(model_factory=None), Supervised(), TrainConfig(epochs=1))


def test_train_config_takes_the_trainer_options_only_and_replace_changes_a_copy():
    c = TrainConfig(optimizer="sgd", lr=0.03)
    assert dict(c.replace(lr=0.1).options) == {"optimizer": "sgd", "lr": 0.1} and c.options["lr"] == 0.03
    with pytest.raises(ValueError, match="unknown Trainer options \\['lr_decay'\\]"):
        TrainConfig(lr_decay=0.9)
    with pytest.raises(ValueError, match="seed"):
        TrainConfig(seed=1)  # the fit's own argument, not a protocol option
    with pytest.raises(TypeError):
        c.options["lr"] = 1.0  # read-only


def test_task_refuses_half_a_split_and_reads_its_meta_by_key():
    with pytest.raises(ValueError, match="X_val and y_val"):
        _task(y_val=None)
    with pytest.raises(ValueError, match="X_test and y_test"):
        _task(X_test=None)
    with pytest.raises(TypeError, match="model_factory"):
        _task(model_factory="mlp")
    t = _task(meta={"mean": 0.5})
    assert t["X_l"] is t.X_l and t["mean"] == 0.5 and t["num_classes"] == 2
    with pytest.raises(KeyError, match="neither a field"):
        t["std"]
    with pytest.raises(AttributeError):
        t.X_l = None  # frozen: a run does not change its task
