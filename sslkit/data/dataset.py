"""The :class:`Dataset` record returned by :func:`sslkit.data.load_dataset`."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, eq=False, repr=False)
class Dataset:
    """A labelled dataset exactly as its source ships it (no standardisation, no split).

    Attributes
    ----------
    name : the registry name (``"mnist"``, ``"adult"``, ...).
    X, y : training rows and their labels. Images are ``uint8`` as stored: ``(N, 28, 28)`` for MNIST,
        ``(N, H, W, 3)`` (HWC) for colour images. Tabular data is ``float64`` ``(N, d)`` with categoricals
        one-hot encoded where documented (Adult, Credit). ``y`` is ``int64`` in ``0 .. K-1``.
    X_test, y_test : the official test split, or ``None`` when the source has none.
    classes : human-readable class names; ``classes[k]`` names label ``k``.
    source : where the data came from (files read and verified, download URL, or scikit-learn).
    notes : anything a result built on this data must say (lossy copy, subset, encoding choices).
    """

    name: str
    X: np.ndarray
    y: np.ndarray
    X_test: np.ndarray | None
    y_test: np.ndarray | None
    classes: tuple[str, ...]
    source: str
    notes: str = ""

    def __post_init__(self):
        object.__setattr__(self, "classes", tuple(str(c) for c in self.classes))
        object.__setattr__(self, "y", _labels(self.y, "y", len(self.classes)))
        if len(self.X) != len(self.y):
            raise ValueError(f"X has {len(self.X)} rows but y has {len(self.y)}")
        if (self.X_test is None) != (self.y_test is None):
            raise ValueError("X_test and y_test must both be None or both be arrays")
        if self.y_test is not None:
            object.__setattr__(self, "y_test", _labels(self.y_test, "y_test", len(self.classes)))
            if len(self.X_test) != len(self.y_test):
                raise ValueError(f"X_test has {len(self.X_test)} rows but y_test has {len(self.y_test)}")
            if self.X_test.shape[1:] != self.X.shape[1:]:
                raise ValueError(f"X_test rows have shape {self.X_test.shape[1:]}, X rows {self.X.shape[1:]}")

    @property
    def num_classes(self) -> int:
        """Number of classes K (labels are ``0 .. K-1``)."""
        return len(self.classes)

    def __repr__(self) -> str:
        test = "None" if self.X_test is None else f"{self.X_test.shape} {self.X_test.dtype}"
        return (
            f"Dataset(name={self.name!r}, X={self.X.shape} {self.X.dtype}, X_test={test}, "
            f"num_classes={self.num_classes}, source={self.source!r}, notes={self.notes!r})"
        )


def _labels(y, name: str, num_classes: int) -> np.ndarray:
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {y.shape}")
    if y.size and not np.issubdtype(y.dtype, np.integer):
        raise TypeError(f"{name} must hold integer labels, got dtype {y.dtype}")
    y = y.astype(np.int64, copy=False)
    if y.size and (y.min() < 0 or y.max() >= num_classes):
        raise ValueError(f"{name} must be in 0..{num_classes - 1}, got range {y.min()}..{y.max()}")
    return y
