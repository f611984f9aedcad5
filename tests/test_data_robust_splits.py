"""Paper C App. F.1.2 (Tables 3-4): the robust-SSL splits on real label vectors.

MNIST: the real 60 000 + 10 000 labels (``load_dataset("mnist")`` from ``SSLKIT_DATA_DIR``). CIFAR-10: the real
50 000 training labels in their original order (``cifar10/lossless/cifar10_labels.js``, see its SOURCE.txt);
the test labels are 1 000 per class (synthetic vector with those sizes). Skipped when the data are absent.
"""

import os
from pathlib import Path

import numpy as np
import pytest

from sslkit.data import (
    IMBALANCE_PRESETS,
    OOD_PRESETS,
    PAPER_C_IMBALANCE_RATIOS,
    PAPER_C_OOD_RATIOS,
    imbalanced_split,
    load_dataset,
    ood_split,
)

DATA = Path(os.environ.get("SSLKIT_DATA_DIR") or "/nonexistent")  # the real label vectors, when a copy is configured
CIFAR_LABELS = DATA / "cifar10" / "lossless" / "cifar10_labels.js"


@pytest.fixture(scope="module")
def mnist():
    if not (DATA / "mnist").is_dir():
        pytest.skip("MNIST not in SSLKIT_DATA_DIR")
    d = load_dataset("mnist")
    return np.asarray(d.y), np.asarray(d.y_test)


@pytest.fixture(scope="module")
def cifar10_train_labels():
    if not CIFAR_LABELS.is_file():
        pytest.skip("CIFAR-10 labels not in SSLKIT_DATA_DIR")
    text = CIFAR_LABELS.read_text()
    y = np.array([int(v) for v in text[text.index("[") + 1 : text.index("]")].split(",")[:50000]], dtype=np.int64)
    assert np.bincount(y).tolist() == [5000] * 10
    return y


def check_ood(split, y, ids, oods, n_lab, n_u, n_val, ratio):
    assert split.sizes() == {"labeled": n_lab * len(ids), "unlabeled": n_u, "val": n_val, "test": 0}
    assert np.bincount(y[split.labeled], minlength=10)[list(ids)].tolist() == [n_lab] * len(ids)
    assert np.isin(y[split.labeled], ids).all() and np.isin(y[split.val], ids).all()
    n_ood = int(np.isin(y[split.unlabeled], oods).sum())
    assert n_ood == int(np.floor(ratio * n_u + 0.5)) and n_ood == int(split.unlabeled_is_ood.sum())
    assert np.isin(y[split.unlabeled], ids + oods).all()
    assert n_ood / n_u == pytest.approx(ratio, abs=0.5 / n_u)  # U_ood / (U_ood + U_in)
    assert set(np.unique(y[split.unlabeled][split.unlabeled_is_ood])) == set(oods)  # every OOD class present


@pytest.mark.parametrize("ratio", PAPER_C_OOD_RATIOS)
def test_cifar10_ood_matches_table_3(cifar10_train_labels, ratio):
    y = cifar10_train_labels
    pre = OOD_PRESETS["cifar10"]
    # ID = bird cat deer dog frog horse (CIFAR-10 indices 2-7), OOD = airplane automobile ship truck
    assert pre["id_classes"] == (2, 3, 4, 5, 6, 7) and pre["ood_classes"] == (0, 1, 8, 9)
    s = ood_split(y, **pre, ood_ratio=ratio, seed=0)
    check_ood(s, y, (2, 3, 4, 5, 6, 7), (0, 1, 8, 9), 400, 20000, 5000, ratio)
    assert s.relabel(np.arange(10)).tolist() == [-1, -1, 0, 1, 2, 3, 4, 5, -1, -1]
    # the official test split (10 000, Table 3) restricted to the ID classes, as DS3L's split_test: 6 000
    y_test = np.repeat(np.arange(10), 1000)
    assert int((s.relabel(y_test) >= 0).sum()) == 6000


@pytest.mark.parametrize("ratio", PAPER_C_OOD_RATIOS)
def test_mnist_ood_matches_table_3(mnist, ratio):
    y, y_test = mnist
    pre = OOD_PRESETS["mnist"]
    # the paper's 1-based "classes 1-6" are digits 0-5 (DS3L's code: classes[:6] of the sorted digits)
    assert pre["id_classes"] == (0, 1, 2, 3, 4, 5) and pre["ood_classes"] == (6, 7, 8, 9)
    s = ood_split(y, **pre, ood_ratio=ratio, seed=0)
    check_ood(s, y, (0, 1, 2, 3, 4, 5), (6, 7, 8, 9), 10, 30000, 10000, ratio)
    assert int((s.relabel(y_test) >= 0).sum()) == 6031  # ID part of the 10 000 official test images


def test_mnist_ood_splits_are_disjoint_and_seeded(mnist):
    y, _ = mnist
    a = ood_split(y, **OOD_PRESETS["mnist"], ood_ratio=0.5, seed=1)
    b = ood_split(y, **OOD_PRESETS["mnist"], ood_ratio=0.5, seed=1)
    c = ood_split(y, **OOD_PRESETS["mnist"], ood_ratio=0.5, seed=2)
    parts = np.concatenate([a.labeled, a.unlabeled, a.val])
    assert np.unique(parts).size == parts.size
    assert np.array_equal(a.unlabeled, b.unlabeled) and not np.array_equal(a.unlabeled, c.unlabeled)


@pytest.mark.parametrize("ratio", PAPER_C_IMBALANCE_RATIOS)
def test_cifar10_imbalance_matches_table_4(cifar10_train_labels, ratio):
    y = cifar10_train_labels
    pre = IMBALANCE_PRESETS["cifar10"]
    # "classes 1-5" (1-based) = CIFAR-10 indices 0-4 imbalanced, "6-10" = 5-9 balanced
    assert pre["imbalanced_classes"] == (0, 1, 2, 3, 4)
    s = imbalanced_split(y, ratio, **pre, seed=0)
    assert s.sizes() == {"labeled": 2400, "unlabeled": 20000, "val": 5000, "test": 0}
    for part, n in ((s.labeled, 2400), (s.unlabeled, 20000)):
        counts = np.bincount(y[part], minlength=10)
        minor, major = int(counts[:5].sum()), int(counts[5:].sum())
        assert minor + major == n
        # ratio = #(classes 1-5) / #(classes 6-10), exact up to rounding one example
        assert minor == int(np.floor(n * ratio / (1 + ratio) + 0.5))
        assert abs(minor / major - ratio) <= 1.0 / major
        assert counts[:5].max() - counts[:5].min() <= 1 and counts[5:].max() - counts[5:].min() <= 1
    # the validation set follows the data's (balanced) class mix
    assert np.bincount(y[s.val], minlength=10).min() > 400
