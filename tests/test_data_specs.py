"""sslkit.data.specs: the dataset names in order, and every spec's sources, options and downloads are consistent."""

import re

from sslkit.data.specs import DATASETS, SPECS, Download, FileSpec, Source


def test_dataset_names_are_the_specs_in_order():
    assert DATASETS == tuple(SPECS) and len(set(DATASETS)) == len(DATASETS) == 13
    assert all(re.fullmatch(r"[a-z][a-z0-9_]*", n) for n in DATASETS)  # a folder name under the data directory
    # the papers' datasets: A's tables and images, B's four image sets, C's MNIST / CIFAR-10; images come first
    assert {"adult", "banknote", "shuttle", "dry_bean", "mnist", "cifar10", "cifar100", "svhn", "stl10"} <= set(
        DATASETS
    )
    assert DATASETS[:5] == ("mnist", "cifar10", "cifar100", "svhn", "stl10")


SHA256 = re.compile(r"[0-9a-f]{64}")


def test_every_spec_is_consistent():
    for name, spec in SPECS.items():
        assert spec.name == name and spec.homepage.startswith("http")
        keys = [s.key for s in spec.sources]
        assert len(keys) == len(set(keys)), name
        assert set(spec.auto) <= set(keys), f"{name}: auto names {set(spec.auto) - set(keys)}, not a source"
        assert spec.sources or spec.fallback is not None, name
        assert (spec.fallback is None) == (spec.fallback_source == ""), name
        for option, allowed in spec.options.items():
            assert allowed and len(allowed) == len(set(allowed)), f"{name}.{option}"
        for source in spec.sources:
            assert source.folders and callable(source.parse), f"{name}/{source.key}"
            for key, f in source.files.items():
                assert f.names and f.accepted(), f"{name}/{source.key}/{key} accepts no checksum"
                assert all(SHA256.fullmatch(h) for h in f.accepted()), f"{name}/{source.key}/{key}"
                assert all(d.url.startswith("http") and d.save_as for d in f.downloads), f"{name}/{key}"


def test_accepted_is_the_union_of_the_folder_and_download_checksums():
    a, b, c = "a" * 64, "b" * 64, "c" * 64
    f = FileSpec(
        ("x.gz",), (a,), (Download("https://m1/x.gz", "x.gz", (b,)), Download("https://m2/x.gz", "x.gz", (c, a)))
    )
    assert f.accepted() == frozenset({a, b, c})
    assert FileSpec(("x",)).accepted() == frozenset()


def test_a_source_is_downloadable_only_when_every_file_is():
    hosted = FileSpec(("x",), downloads=(Download("https://m/x", "x"),))
    local = FileSpec(("y",))
    assert Source("s", ("d",), {"x": hosted}, parse=lambda paths: None).downloadable()
    assert not Source("s", ("d",), {"x": hosted, "y": local}, parse=lambda paths: None).downloadable()
    # MNIST: every file from three mirrors; the CIFAR-10 lossless copy: the shared folder only
    assert SPECS["mnist"].sources[0].downloadable()
    assert all(len(f.downloads) == 3 for f in SPECS["mnist"].sources[0].files.values())
