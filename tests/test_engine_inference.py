"""sslkit.engine.inference.Predictor: what a fitted Trainer predicts with (predict_proba, predict, score)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from sslkit.algorithms import Supervised
from sslkit.engine import Predictor, Trainer
from sslkit.models import MLP


def blobs(n, seed=0):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 2
    X = (rng.normal(size=(n, 2)) + 3.0 * y[:, None]).astype(np.float32)
    return X, y


def fitted(epochs=20, **options):
    X, y = blobs(100)
    tr = Trainer(lambda: MLP(2, 2, hidden=(16,)), Supervised(), lr=1e-2, epochs=epochs, progress=False, **options)
    return tr.fit(X, y), X, y


def test_the_trainer_predicts_through_the_mixin():
    assert issubclass(Trainer, Predictor)
    assert {"predict", "predict_proba", "score", "eval_model"} <= set(vars(Predictor))


def test_predict_proba_predict_score_consistent():
    tr, X, y = fitted()
    proba = tr.predict_proba(X)
    pred = tr.predict(X, batch_size=7)
    assert isinstance(proba, np.ndarray) and proba.shape == (100, 2) and proba.dtype == np.float32
    assert np.allclose(proba.sum(1), 1, atol=1e-6)
    assert pred.dtype == np.int64 and np.array_equal(pred, proba.argmax(1))
    assert tr.score(X, y) == pytest.approx(np.mean(pred == y))
    assert isinstance(tr.score(X, y), float) and tr.score(X, y) > 0.9  # separable blobs: it learned
    with pytest.raises(ValueError, match="sample shape"):
        tr.predict(np.zeros((3, 5), dtype=np.float32))


def test_tensor_input_gives_tensors_and_batches_do_not_change_the_answer():
    tr, X, _ = fitted()
    Xt = torch.from_numpy(X)
    proba = tr.predict_proba(Xt, batch_size=1)
    assert isinstance(proba, torch.Tensor) and proba.device == Xt.device
    assert torch.allclose(proba, torch.from_numpy(tr.predict_proba(X)), atol=1e-6)
    assert torch.equal(tr.predict(Xt), torch.from_numpy(tr.predict(X)))


def test_eval_model_is_the_ema_teacher_when_ema_is_on():
    tr, X, _ = fitted(ema_decay=0.9)
    assert tr.eval_model is tr.ema_model_ and tr.eval_model is not tr.model
    with torch.no_grad():
        expect = tr.ema_model_.eval()(torch.from_numpy(X))
        expect = (expect[0] if isinstance(expect, tuple) else expect).argmax(1).numpy()
    assert np.array_equal(tr.predict(X), expect)
    plain, _, _ = fitted()
    assert plain.eval_model is plain.model


def test_unfitted_and_bad_batch_size_are_refused():
    tr = Trainer(lambda: MLP(2, 2), Supervised(), progress=False)
    with pytest.raises(RuntimeError, match="not fitted"):
        tr.predict(np.zeros((2, 2), dtype=np.float32))
    tr, X, y = fitted(epochs=1)
    with pytest.raises(ValueError, match="batch_size"):
        tr.predict(X, batch_size=0)
    with pytest.raises(ValueError, match="X has 100 samples but y has 99"):
        tr.score(X, y[:99])
