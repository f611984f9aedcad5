"""One record of each paper-B experiment whose run needs more than one call (what the catalog runs and replays):
Table 1's CPU stand-in on its data (:func:`table1_head_run`) and the paper's USB protocol (:func:`table1_paper_run`),
Table 4's CPU stand-in on the same data (:func:`table4_head_run`) and on Table 1's LeNet stand-in
(:func:`table4_lenet_run`),
and Table 5's two parts (:func:`table5_run`) with the CIFAR-10 features the defects part needs, built once per
process (:func:`defect_features`)."""

from __future__ import annotations

import functools

from .selection import table4_ssl_run
from .ssl import LENET_DATA, TABLE1_DATASETS, USB_PROTOCOL, table1_run
from .ssl_protocols import LENET_EMA_PROTOCOL
from .timing import defects_run, random_init_features, table5_timing_run

#: the data of each (dataset, pool) of the CPU stand-in (the head protocol): MNIST's first 4000 / 2000 images, the
#: lossless CIFAR-10 subset (4 000 / 1 000 images, pool "subset"), and the paper's whole CIFAR-10 pool, 50 000 / 10 000
#: images from the lossy JPEG q75 copy (pool "full": the only full copy offline)
HEAD_DATA = {
    ("mnist", "subset"): {"n_pool": 4000, "n_test": 2000, "variant": None},
    ("cifar10", "subset"): {"n_pool": None, "n_test": None, "variant": "lossless"},
    ("cifar10", "full"): {"n_pool": None, "n_test": None, "variant": "jpeg"},
}


def head_data(pool: str = "subset") -> dict:
    """``{dataset: load options}`` of :data:`HEAD_DATA` for one ``pool``."""
    return {d: opts for (d, p), opts in HEAD_DATA.items() if p == pool}


def _pool(dataset: str, pool: str) -> dict:
    """:data:`HEAD_DATA`'s load options of (``dataset``, ``pool``); an unknown pair is refused by name."""
    if (dataset, pool) not in HEAD_DATA:
        known = sorted(HEAD_DATA)
        raise ValueError(f"no head-protocol data for dataset {dataset!r} with pool {pool!r}; known: {known}")
    return HEAD_DATA[dataset, pool]


def table1_head_run(dataset, extractor, selector, algorithm, m, seed, *, pool="subset", device="cpu") -> dict:
    """One cell of Table 1's CPU stand-in: :func:`table1_run` with the head protocol on :data:`HEAD_DATA`
    (``pool``: ``"subset"``, or ``"full"`` for CIFAR-10's 50 000 training images)."""
    kw = dict(_pool(dataset, pool), protocol="head", extractor=extractor, device=device)
    return table1_run(dataset, selector, algorithm, m, seed, **kw)


def table4_head_run(alpha, m, seed, *, dataset, extractor, pca_dim, pool="subset", device="cpu") -> dict:
    """One cell of Table 4's CPU stand-in: :func:`~.selection.table4_ssl_run` with the head protocol on
    :data:`HEAD_DATA` (``pool``: ``"subset"``, or ``"full"`` for CIFAR-10's 50 000 training images)."""
    kw = dict(_pool(dataset, pool), protocol="head", dataset=dataset, extractor=extractor, pca_dim=pca_dim)
    return table4_ssl_run(alpha, m, seed, device=device, **kw)


def table4_lenet_run(alpha, m, seed, *, device="cpu") -> dict:
    """One cell of Table 4 on Table 1's LeNet stand-in (``b_table1_lenet``, its reading that passes the controls):
    GKHR picks ``m`` of :data:`~.ssl.LENET_DATA`'s pool with the row's ``alpha`` on 50 principal components of the
    pixels, then FreeMatch with its threshold EMA at :data:`~.ssl.LENET_FREEMATCH_EMA` trains MNIST's LeNet end to
    end under :data:`~.ssl_protocols.LENET_EMA_PROTOCOL` (:func:`~.selection.table4_ssl_run`)."""
    return table4_ssl_run(
        alpha, m, seed, protocol=LENET_EMA_PROTOCOL, variant=None, pca_dim=50, device=device, **LENET_DATA
    )


def table1_paper_run(
    dataset: str,
    extractor: str,
    selector: str,
    algorithm: str,
    m: int,
    seed: int,
    *,
    epochs=None,
    iterations_per_epoch=None,
    device="auto",
) -> dict:
    """One cell of Table 1 at the paper's protocol (USB's WRN-28-2; a GPU job): ``dataset`` is the table's column
    label ("CIFAR-10", ...); ``epochs`` x ``iterations_per_epoch`` steps (default: the paper's 2^20)."""
    protocol = dict(USB_PROTOCOL)
    protocol.update(
        {k: v for k, v in (("epochs", epochs), ("iterations_per_epoch", iterations_per_epoch)) if v is not None}
    )
    return table1_run(
        TABLE1_DATASETS[dataset],
        selector,
        algorithm,
        m,
        seed,
        protocol=protocol,
        extractor=extractor,
        variant="auto" if dataset == "CIFAR-10" else None,
        device=device,
        select_device=device,
    )


#: the defects part's data per scale: pool and test rows of the lossless CIFAR-10 subset, and budgets
DEFECTS = {
    "quick": {"n_pool": 240, "n_test": 160, "budgets": (40,)},
    "paper": {"n_pool": 1000, "n_test": None, "budgets": (40, 100)},
}


@functools.lru_cache(maxsize=2)
def _defect_features(scale: str, random_init: bool, threads: int) -> dict:
    from sslkit.data import load_dataset
    from sslkit.features import extract_features

    ds = load_dataset("cifar10", variant="lossless")
    n_pool, n_test = DEFECTS[scale]["n_pool"], DEFECTS[scale]["n_test"]
    if scale == "paper":  # the cached features of the whole subset (Table 1's committed CPU run)
        P = extract_features(ds.X, "efficientnet_lite0", cache_key="cifar10-lossless-train")[:n_pool]
        Pt = extract_features(ds.X_test, "efficientnet_lite0", cache_key="cifar10-lossless-test")
        yt = ds.y_test
    else:
        P = extract_features(ds.X[:n_pool], "efficientnet_lite0", cache_key=f"cifar10-lossless-train{n_pool}")
        Pt = extract_features(ds.X_test[:n_test], "efficientnet_lite0", cache_key=f"cifar10-lossless-test{n_test}")
        yt = ds.y_test[:n_test]
    R = random_init_features(ds.X[:n_pool], seed=0) if random_init else None
    return {"pretrained": P, "random_init": R, "y_pool": ds.y[:n_pool], "pretrained_test": Pt, "y_test": yt}


def defect_features(scale: str, random_init: bool = True) -> dict:
    """The EfficientNet-Lite0 features of the defects part at ``scale`` (:data:`DEFECTS`): pretrained pool and
    test features, the random-init pool features (only when ``random_init``), the labels; built once per process
    and torch thread count (the extractor caches the pretrained ones on disk)."""
    import torch

    return _defect_features(scale, bool(random_init), torch.get_num_threads())


def table5_run(
    part: str,
    seed: int,
    *,
    scale: str,
    device="cpu",
    selector=None,
    n=None,
    m=None,
    d=512,
    features=None,
    bandwidth=None,
    n_pool=None,
) -> dict:
    """One record of Table 5's page: ``part="timing"`` is :func:`table5_timing_run` (``selector``, ``n``, ``m``,
    ``d``); ``part="defects"`` is :func:`defects_run` (``features``, ``bandwidth``, ``m``) on
    :func:`defect_features` of ``scale`` (``n_pool`` must be that scale's pool)."""
    if part == "timing":
        return table5_timing_run(selector, n, m, seed, d=d, device=device)
    if part != "defects":
        raise ValueError(f"part must be 'timing' or 'defects', got {part!r}")
    if scale not in DEFECTS or n_pool != DEFECTS[scale]["n_pool"]:
        raise ValueError(
            f"the defects part at scale {scale!r} has a pool of {DEFECTS.get(scale, {}).get('n_pool')} rows, "
            f"got n_pool={n_pool!r}"
        )
    return defects_run(features, bandwidth, m, seed, device=device, **defect_features(scale, features == "random_init"))
