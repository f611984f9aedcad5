"""Data layer: real datasets, synthetic toy distributions and seeded splits.

* loading -- :func:`load_dataset` returns a :class:`Dataset` (``DATASETS`` lists the names);
  :func:`standardize` (tabular, fitted on training rows only) and :func:`images_to_tensor`.
* splits -- :func:`make_split` / :class:`Split`, :func:`binary_task`, :func:`paper_a_regime`,
  :func:`ood_split` / :class:`OODSplit`, :func:`imbalanced_split` and the papers' constants.
* synthetic -- :func:`gaussian_pair` (paper A §6.1), :func:`rdss_toy_distribution` (paper B App. D.1),
  :func:`gmm10` (paper B App. D.3).
"""

from sslkit.data.dataset import Dataset
from sslkit.data.images import image_stats, images_to_tensor
from sslkit.data.registry import DATASETS, ChecksumError, DatasetNotFoundError, available_datasets, load_dataset
from sslkit.data.robust_splits import (
    IMBALANCE_PRESETS,
    OOD_PRESETS,
    PAPER_C_IMBALANCE_RATIOS,
    PAPER_C_OOD_RATIOS,
    OODSplit,
    imbalanced_split,
    ood_split,
)
from sslkit.data.splits import (
    PAPER_A_BINARY_SETTINGS,
    PAPER_A_N_UNLABELED,
    PAPER_A_N_VAL,
    PAPER_A_REGIMES,
    Split,
    binary_task,
    make_split,
    paper_a_regime,
)
from sslkit.data.synthetic import (
    GAUSSIAN_PAIR_MEANS,
    RDSS_TOY_DISTRIBUTIONS,
    RDSS_TOY_SPECS,
    gaussian_pair,
    gaussian_pair_bayes_error,
    gaussian_pair_posterior,
    gmm10,
    gmm10_means,
    rdss_toy_distribution,
)
from sslkit.data.tabular import standardize

__all__ = [
    # loading (sslkit.data.dataset / registry / tabular / images)
    "Dataset",
    "load_dataset",
    "available_datasets",
    "DATASETS",
    "DatasetNotFoundError",
    "ChecksumError",
    "standardize",
    "image_stats",
    "images_to_tensor",
    # splits
    "Split",
    "OODSplit",
    "make_split",
    "binary_task",
    "paper_a_regime",
    "ood_split",
    "imbalanced_split",
    "PAPER_A_REGIMES",
    "PAPER_A_BINARY_SETTINGS",
    "PAPER_A_N_UNLABELED",
    "PAPER_A_N_VAL",
    "OOD_PRESETS",
    "PAPER_C_OOD_RATIOS",
    "IMBALANCE_PRESETS",
    "PAPER_C_IMBALANCE_RATIOS",
    # synthetic
    "GAUSSIAN_PAIR_MEANS",
    "gaussian_pair",
    "gaussian_pair_posterior",
    "gaussian_pair_bayes_error",
    "RDSS_TOY_DISTRIBUTIONS",
    "RDSS_TOY_SPECS",
    "rdss_toy_distribution",
    "gmm10",
    "gmm10_means",
]

# batched augmentations (FixMatch, paper A App. D.1)
from sslkit.data.augment import (  # noqa: E402
    AUGMENTATIONS,
    cifar_strong,
    cifar_weak,
    color_jitter,
    mnist_strong,
    mnist_weak,
    random_affine,
    random_crop,
    random_erasing,
    random_grayscale,
    random_hflip,
    tabular_strong,
    tabular_weak,
)

__all__ += [
    "AUGMENTATIONS",
    "tabular_weak",
    "tabular_strong",
    "mnist_weak",
    "mnist_strong",
    "cifar_weak",
    "cifar_strong",
    "random_affine",
    "random_crop",
    "random_hflip",
    "color_jitter",
    "random_grayscale",
    "random_erasing",
]
