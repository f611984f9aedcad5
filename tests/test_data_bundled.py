"""sslkit.data.bundled: the scikit-learn copies (digits, breast cancer) load with no file and equal the UCI file."""

import data_problem
import numpy as np
from data_problem import SHARED, needs_data

from sslkit.data.registry import load_dataset

env = data_problem.env  # the isolated lookup (a fixture)


def test_sklearn_fallbacks_need_no_files(env):
    d = load_dataset("digits", download=False)
    assert d.X.shape == (1797, 64) and d.X.dtype == np.float64 and d.X_test is None
    assert d.classes == tuple("0123456789") and np.bincount(d.y).sum() == 1797
    b = load_dataset("breast_cancer", download=False)
    assert b.X.shape == (569, 30) and b.classes == ("malignant", "benign")
    assert np.bincount(b.y).tolist() == [212, 357] and "scikit-learn" in b.source


@needs_data
def test_breast_cancer_file_equals_sklearn(env):
    from_file = load_dataset("breast_cancer", root=SHARED, download=False)
    from_sklearn = load_dataset("breast_cancer", download=False)
    assert "breast_cancer_wdbc" in from_file.source and "scikit-learn" in from_sklearn.source
    np.testing.assert_array_equal(from_file.X, from_sklearn.X)
    np.testing.assert_array_equal(from_file.y, from_sklearn.y)
    assert from_file.classes == from_sklearn.classes == ("malignant", "benign")
