"""The front of sslkit.data: what it exports (loading, splits, synthetic data, augmentations), the refusal of an
unknown dataset, and ``available_datasets``' split of names into those that load and one plain sentence about the
others. Each module's own behaviour: test_data_<module>.py."""

import pytest
from package_front import check_exports

import sslkit.data as data
from sslkit.data import DATASETS, DatasetNotFoundError, available_datasets, load_dataset


def test_exports_are_the_modules_objects():
    check_exports(data)


def test_an_unknown_dataset_is_refused_with_the_valid_names():
    with pytest.raises(ValueError, match="unknown dataset 'mnist2'; valid names: mnist, cifar10"):
        load_dataset("mnist2")
    assert len(DATASETS) == len(set(DATASETS)) and {"mnist", "cifar10", "digits"} <= set(DATASETS)


def test_available_datasets_keeps_the_order_and_names_the_missing_without_a_path():
    def load(name):
        if name.startswith("gone"):
            raise DatasetNotFoundError(f"{name}: not in /secret/data/dir")
        return name

    names, note = available_datasets(["b", "gone1", "a", "gone2"], load, what="the quick scale")
    assert names == ["b", "a"]
    assert note.startswith("The quick scale") and "gone1" in note and "gone2" in note and "/secret" not in note
    assert available_datasets(["a", "b"], load) == (["a", "b"], "")


def test_available_datasets_lets_any_other_error_through():
    def load(name):
        raise OSError("disk on fire")

    with pytest.raises(OSError, match="disk on fire"):
        available_datasets(["a"], load)
