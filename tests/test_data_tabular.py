"""sslkit.data.tabular: standardisation with the training statistics only (a constant column keeps std 1), its
input checks, and one-hot coding with unknown values as zero rows."""

import numpy as np
import pytest

from sslkit.data.tabular import one_hot, standardize


def test_standardize_uses_train_statistics_only():
    X_train = np.array([[1.0, 5.0], [3.0, 5.0]])  # column 1 is constant
    X_test = np.array([[2.0, 7.0], [100.0, 5.0]])
    Z_train, Z_test, none = standardize(X_train, X_test, None)
    np.testing.assert_allclose(Z_train, [[-1.0, 0.0], [1.0, 0.0]])
    np.testing.assert_allclose(Z_test, [[0.0, 2.0], [98.0, 0.0]])  # mean 2, std 1; constant col: std -> 1
    assert none is None
    (Z_again,) = standardize(X_train)
    np.testing.assert_array_equal(Z_again, Z_train)


def test_standardize_errors():
    good = np.ones((2, 2))
    with pytest.raises(ValueError, match="X_train contains NaN"):
        standardize(np.array([[1.0, np.nan], [0.0, 1.0]]))
    with pytest.raises(ValueError, match=r"others\[1\] contains NaN or infinite"):
        standardize(good, good, np.array([[np.inf, 0.0]]))
    with pytest.raises(ValueError, match=r"others\[0\] has 3 columns"):
        standardize(good, np.ones((1, 3)))
    with pytest.raises(ValueError, match="X_train must be 2-D"):
        standardize(np.ones(3))


def test_one_hot_unknown_is_zero():
    np.testing.assert_array_equal(one_hot(["b", None, "a"], ["a", "b"]), [[0, 1], [0, 0], [1, 0]])
