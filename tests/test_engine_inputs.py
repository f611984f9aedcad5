"""sslkit.engine.inputs through Trainer.fit and its constructor: every bad input fails early with an error that names
the argument; numpy and tensor inputs are both taken; the number of classes is inferred and checked."""

import numpy as np
import pytest
import torch
from engine_problem import Recorder, blobs, net, quiet

from sslkit.algorithms import Supervised
from sslkit.engine import Trainer


def test_tensor_inputs_accepted():
    X, y = blobs(80)
    tr = quiet(net(0), epochs=2).fit(torch.tensor(X), torch.tensor(y))
    pred = tr.predict(torch.tensor(X, dtype=torch.float32))
    assert isinstance(pred, torch.Tensor) and pred.dtype == torch.int64


def test_num_classes_inference_and_checks():
    X, y = blobs(60)
    y3 = y.copy()
    tr = quiet(net(0, k=3), epochs=1).fit(X, y, X_val=X[:3], y_val=np.array([0, 1, 2]))
    assert tr.num_classes_ == 3
    tr = quiet(net(0, k=3), epochs=1, num_classes=3).fit(X, y3)
    assert tr.num_classes_ == 3
    with pytest.raises(ValueError, match="num_classes"):
        quiet(net(0, k=3), epochs=1).fit(X, y)  # inferred 2, model has 3 outputs
    with pytest.raises(ValueError, match="num_classes is 4"):
        quiet(net(0, k=3), epochs=1, num_classes=4).fit(X, y)


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        ({"X_l": np.zeros((10, 2)), "y_l": np.zeros(9, dtype=int)}, ValueError, "X_l has 10 samples but y_l has 9"),
        ({"y_l": np.zeros(10)}, TypeError, "y_l must contain integer"),
        ({"y_l": np.full(10, 2)}, ValueError, r"y_l has labels in \[2, 2\]"),
        ({"y_l": np.array([-2] + [0] * 9)}, ValueError, "y_l has labels"),  # -1 marks an unlabeled row
        ({"X_l": np.zeros((0, 2)), "y_l": np.zeros(0, dtype=int)}, ValueError, "X_l is empty"),
        ({"X_l": np.array([[np.nan, 0]] + [[0, 0]] * 9)}, ValueError, "X_l contains NaN"),
        ({"X_l": np.zeros((10, 2), dtype=np.uint8)}, TypeError, "X_l must have a floating dtype"),
        ({"X_l": np.zeros(10)}, ValueError, "X_l must have shape"),
        ({"X_val": np.zeros((4, 2))}, ValueError, "X_val and y_val"),
        ({"X_val": np.full((4, 2), np.inf), "y_val": np.zeros(4, dtype=int)}, ValueError, "X_val contains NaN"),
        ({"X_val": np.zeros((4, 3)), "y_val": np.zeros(4, dtype=int)}, ValueError, "X_val has sample shape"),
        ({"X_val": np.zeros((4, 2)), "y_val": np.array([0, 1, 2, 0])}, ValueError, "y_val has labels"),
    ],
)
def test_fit_input_errors_name_the_argument(kwargs, exc, match):
    args = {"X_l": np.zeros((10, 2)), "y_l": np.arange(10) % 2}
    args.update(kwargs)
    with pytest.raises(exc, match=match):
        quiet(net(0), epochs=1, num_classes=2).fit(**args)


def test_missing_unlabeled_data_and_bad_unlabeled_shape():
    X, y = blobs(20)
    with pytest.raises(ValueError, match="X_u"):
        quiet(net(0), Recorder(uses_unlabeled=True), epochs=1).fit(X, y)
    with pytest.raises(ValueError, match="X_u has sample shape"):
        quiet(net(0), Recorder(uses_unlabeled=True), epochs=1).fit(X, y, X_u=np.zeros((5, 3)))
    with pytest.raises(ValueError, match="X_u is empty"):
        quiet(net(0), Recorder(uses_unlabeled=True), epochs=1).fit(X, y, X_u=np.zeros((0, 2)))


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        ({"optimizer": "rmsprop"}, ValueError, "optimizer"),
        ({"schedule": "linear"}, ValueError, "schedule"),
        ({"epochs": 0}, ValueError, "epochs"),
        ({"batch_size": 2.5}, TypeError, "batch_size"),
        ({"lr": 0}, ValueError, "lr"),
        ({"ema_decay": 1.0}, ValueError, "ema_decay"),
        ({"amp": "yes"}, ValueError, "amp"),
        ({"seed": 1.5}, TypeError, "seed"),
        ({"hooks": [lambda t: None]}, TypeError, "Hook"),
        ({"early_stopping": 20}, TypeError, "early_stopping"),
        ({"num_classes": 0}, ValueError, "num_classes"),
    ],
)
def test_constructor_errors(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        Trainer(net(0), Supervised(), **kwargs)
