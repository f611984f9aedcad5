"""sslkit.data.dataset.Dataset: labels cast to int64, the class count, and the checks on rows, labels and the test
split."""

import numpy as np
import pytest

from sslkit.data.dataset import Dataset


def test_dataset_validates():
    X = np.zeros((3, 2))
    d = Dataset(
        name="t", X=X, y=np.array([0, 1, 1], np.int32), X_test=None, y_test=None, classes=("a", "b"), source="test"
    )
    assert d.num_classes == 2 and d.y.dtype == np.int64 and "X=(3, 2)" in repr(d)
    with pytest.raises(ValueError, match="X has 3 rows but y has 2"):
        Dataset(name="t", X=X, y=np.array([0, 1]), X_test=None, y_test=None, classes=("a", "b"), source="")
    with pytest.raises(ValueError, match=r"y must be in 0..1"):
        Dataset(name="t", X=X, y=np.array([0, 1, 2]), X_test=None, y_test=None, classes=("a", "b"), source="")
    with pytest.raises(ValueError, match="both be None"):
        Dataset(name="t", X=X, y=np.array([0, 1, 1]), X_test=X, y_test=None, classes=("a", "b"), source="")
