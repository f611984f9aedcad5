"""A small Task shared by tests/test_task.py and tests/test_engine_fitting.py."""

import numpy as np

from sslkit.models import MLP
from sslkit.task import Task


def small_task(**kw):
    """40 rows of 5 features, 20 labeled, a validation and a test split, 2 classes, an MLP factory; ``kw`` overrides."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 5)).astype(np.float32)
    y = (X[:, 0] > 0).astype(np.int64)
    fields = dict(X_l=X[:20], y_l=y[:20], X_u=X[20:], X_val=X[:10], y_val=y[:10], X_test=X[20:], y_test=y[20:])
    return Task(**{**fields, "num_classes": 2, "model_factory": lambda: MLP(5, 2, hidden=(8,)), **kw})
