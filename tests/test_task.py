"""sslkit.task.Task: the one task type every run trains on (checks at construction, read-only, meta by key)."""

import pytest
from task_problem import small_task as _task


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
