"""sslkit.engine.fit and TrainConfig: the one fit seeds, builds the model and trains as the Trainer alone would."""

import pytest
import torch
from task_problem import small_task as _task

from sslkit.algorithms import Supervised
from sslkit.engine import TrainConfig, Trainer, fit
from sslkit.models import MLP
from sslkit.seeding import seed_everything


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
