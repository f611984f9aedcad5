"""The copies of two datasets that ship inside scikit-learn (Breast Cancer Wisconsin, the 8x8 digits): the last
resort of :func:`~sslkit.data.load_dataset` when no verified file is found, and always offline."""

from __future__ import annotations

import numpy as np

from . import parsers as P


def sklearn_breast_cancer() -> P.Parsed:
    from sklearn.datasets import load_breast_cancer

    b = load_breast_cancer()  # target: 0 = malignant, 1 = benign (same convention as the WDBC parser)
    return P.Parsed(
        np.asarray(b.data, np.float64),
        np.asarray(b.target, np.int64),
        None,
        None,
        P.BREAST_CANCER_CLASSES,
        P.BREAST_CANCER_NOTES,
    )


def sklearn_digits() -> P.Parsed:
    from sklearn.datasets import load_digits

    d = load_digits()
    return P.Parsed(
        np.asarray(d.data, np.float64),
        np.asarray(d.target, np.int64),
        None,
        None,
        P.DIGITS,
        "scikit-learn's 8x8 digits (UCI optdigits test part): 64 pixel counts 0..16 as float64 "
        "features; no official test split",
    )


def sklearn_version() -> str:
    import sklearn

    return sklearn.__version__
