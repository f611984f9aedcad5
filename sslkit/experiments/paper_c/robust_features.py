"""Paper C's CIFAR-10 robust scenario on frozen features (issue 44, item 5): the dataset with every image replaced by
its EfficientNet-Lite0 feature vector, so that a protocol with ``"features"`` (:data:`.robust.PROTOCOLS`'s
``cpu_cifar10``) splits, labels and trains on 1 280 numbers per image where the paper trains WRN-28-2 on pixels.

The features are those paper B's Table 1 reads (:func:`sslkit.experiments.paper_b.ssl.table1_data`): the same
extractor, the same images and the same cache entries (``<dataset>-<variant>-train`` / ``-test``), so one extraction
serves both papers. On a fresh machine the first run that needs them extracts them: CIFAR-10's 60 000 JPEG images
take about 32 minutes on two CPU cores (:data:`.experiments_cifar10.FEATURE_SECONDS`), saved chunk by chunk, so a
killed extraction resumes."""

from __future__ import annotations

import functools

from sslkit.data import Dataset, load_dataset
from sslkit.features import extract_features

__all__ = ["featurized"]


@functools.lru_cache(maxsize=1)
def featurized(dataset: str, variant: str | None, extractor: str) -> Dataset:
    """``load_dataset(dataset, variant=variant)`` with ``X`` and ``X_test`` replaced by their ``extractor`` features
    (float32, one row per image, disk-cached by :func:`sslkit.features.extract_features`); labels, classes and source
    unchanged, ``notes`` saying which features they are. Built once per process."""
    ds = load_dataset(dataset, **({} if variant is None else {"variant": variant}))
    if ds.X_test is None:
        raise ValueError(f"dataset {dataset!r} has no test split; a feature protocol evaluates on it")
    label = dataset if variant is None else f"{dataset}-{variant}"
    F = extract_features(ds.X, extractor, device="cpu", cache_key=f"{label}-train")
    F_test = extract_features(ds.X_test, extractor, device="cpu", cache_key=f"{label}-test")
    note = f"{extractor} features (frozen, ImageNet-pretrained) of the images"
    return Dataset(
        name=ds.name,
        X=F,
        y=ds.y,
        X_test=F_test,
        y_test=ds.y_test,
        classes=ds.classes,
        source=ds.source,
        notes=f"{ds.notes}; {note}" if ds.notes else note,
    )
