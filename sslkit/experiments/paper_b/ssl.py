"""Paper B (RDSS) Table 1: select the labeled set, train FlexMatch / FreeMatch (Table 5's timings: :mod:`.timing`).

* Table 1 (§7.1-7.2): :func:`table1_run` -- one cell of the grid "selector x SSL algorithm x dataset x budget":
  image features (:mod:`sslkit.features`) -> a selector of :mod:`sslkit.select` picks ``m`` samples -> those
  are labeled, every training sample is unlabeled (USB's classic-CV setup) -> FlexMatch
  or FreeMatch -> top-1 test accuracy. Two protocols (:data:`PROTOCOLS`): ``"usb"`` is the paper's (WRN-28-2
  on the images, SGD 0.03 / 0.9 Nesterov, weight decay 5e-4 without BN and biases, cosine 7π/16 over 2^20
  iterations, batch 64, unlabeled ratio 7, EMA 0.999; GPU), ``"head"`` is the CPU stand-in (a small MLP on the
  frozen, z-scored features with feature-noise augmentations, a few hundred iterations). ``"lenet"`` is the CPU
  stand-in where SSL acts (:func:`table1_lenet_run`: MNIST's LeNet trained end to end on the images and their
  weak / strong views, beside a supervised arm).
* :data:`PAPER_TABLE1_B`, :data:`PAPER_TABLE5_B`: the paper's numbers (from :mod:`sslkit.experiments.paper_numbers`).
"""

from __future__ import annotations

import copy
import functools
import math
import time

import numpy as np

from sslkit._checks import check_count, check_real, check_seed
from sslkit.experiments.paper_numbers import load as load_paper_numbers
from sslkit.experiments.paper_numbers import mean_std
from sslkit.select.registry import SELECTORS, make_selector

from .ssl_protocols import (
    HEAD_PROTOCOL,
    LENET_FREEMATCH_EMA,
    LENET_PROTOCOL,
    PROTOCOLS,
    USB_PROTOCOL,
    check_protocol,
)

__all__ = [
    "PROTOCOL_VERSION",
    "TABLE1_SELECTORS",
    "TABLE1_ALGORITHMS",
    "ARMS",
    "TABLE1_BUDGETS",
    "TABLE1_DATASETS",
    "PAPER_TABLE1_B",
    "PAPER_TABLE5_B",
    "PROTOCOLS",
    "USB_PROTOCOL",
    "HEAD_PROTOCOL",
    "LENET_PROTOCOL",
    "LENET_DATA",
    "LENET_BUDGETS",
    "LENET_FREEMATCH_EMA",
    "OFFICIAL_BANDWIDTH",
    "make_selector",
    "select_indices",
    "train_ssl",
    "table1_data",
    "table1_run",
    "table1_lenet_run",
]

#: Protocol version of the records that this module's run functions make: notebooks and drivers pass it as
#: ``run_grid(..., version=PROTOCOL_VERSION)`` and each record stores it (``protocol_version``; records without
#: it are version 1). Bump it with a change that alters those runs' results: the runner then refuses to reuse
#: the older records silently (:class:`sslkit.experiments.runs.store.StaleResultsError`).
PROTOCOL_VERSION = 1

# --------------------------------------------------------------------------------------------------
# the paper's numbers
# --------------------------------------------------------------------------------------------------

#: Table 1's rows, in the paper's order. "Stratified" reads the labels (an oracle; greyed out in the paper).
TABLE1_SELECTORS = tuple(SELECTORS)
#: The two SSL algorithms of Table 1 (USB implementations in the paper; :mod:`sslkit.algorithms` here).
TABLE1_ALGORITHMS = ("FlexMatch", "FreeMatch")
#: What :func:`train_ssl` trains: Table 1's two SSL algorithms and their supervised arm (the same network, labels,
#: weak views of the labeled batch and schedule, no unlabeled loss: the positive control "SSL above supervised").
ARMS = ("Supervised",) + TABLE1_ALGORITHMS
#: Budgets of Table 1 (§7.1).
TABLE1_BUDGETS = {
    "CIFAR-10": (40, 250, 4000),
    "CIFAR-100": (400, 2500, 10000),
    "SVHN": (250, 1000),
    "STL-10": (40, 250),
}
#: Table 1's dataset labels -> :func:`sslkit.data.load_dataset` names.
TABLE1_DATASETS = {"CIFAR-10": "cifar10", "CIFAR-100": "cifar100", "SVHN": "svhn", "STL-10": "stl10"}

#: ``{(algorithm, selector, "CIFAR-10 @ 40"): (mean, std)}``: paper B Table 1 (% top-1, mean ± std over five
#: runs), from sslkit/experiments/paper_numbers/b_table1.csv.
PAPER_TABLE1_B = {
    (r["algorithm"], r["selector"], f"{r['dataset']} @ {r['m']}"): mean_std(r) for r in load_paper_numbers("b_table1")
}

#: Paper B Table 5 (App. D.4): time complexity and seconds to select m = 400 of CIFAR-100's 50 000 training
#: images (mean of three runs, "an idle server"; CPU/GPU not stated). Random and Stratified are printed
#: as "≈ 0" (``seconds = 0.0`` here, ``approx_zero = True``).
PAPER_TABLE5_B = {
    r["selector"]: {"complexity": r["complexity"], "seconds": r["seconds"], "approx_zero": r["approx_zero"]}
    for r in load_paper_numbers("b_table5")
}

#: The official code's kernel (its defect B2): ``exp(-0.5 ||x - y||^2)``, i.e. our
#: ``exp(-||x - y||^2 / sigma^2)`` with ``sigma = sqrt(2)``, whatever the scale of the features.
OFFICIAL_BANDWIDTH = math.sqrt(2.0)

# --------------------------------------------------------------------------------------------------
# protocols
# --------------------------------------------------------------------------------------------------

#: The LeNet stand-in's data: MNIST's first 10 000 training images as the pool (every one unlabeled, as Table 2's
#: CPU pool), its 10 000 test images, and the selectors' features: 50 principal components of the pixels.
LENET_DATA = {"dataset": "mnist", "extractor": "pixels_pca", "n_pool": 10000, "n_test": 10000}
#: Its budgets: Table 1's two smallest CIFAR-10 budgets (10 classes as CIFAR-10's) and, below them, one label per
#: class: 40 labels are not scarce on MNIST, so the smallest budget scaled to its ease is 10 (FreeMatch's control,
#: :mod:`.controls`).
LENET_BUDGETS = (10, 40, 250)


# --------------------------------------------------------------------------------------------------
# selection
# --------------------------------------------------------------------------------------------------


def select_indices(name: str, features, labels, m: int, *, seed=0, device="cpu", bandwidth="median"):
    """``(indices, seconds)``: ``m`` rows of ``features`` chosen by selector ``name`` and the wall-clock it took.

    Only Stratified sees ``labels``; every other selector sees the features alone.
    """
    sel = make_selector(name, m, seed=seed, device=device, bandwidth=bandwidth)
    start = time.perf_counter()
    sel.fit(features, labels) if name == "Stratified" else sel.fit(features)
    seconds = time.perf_counter() - start
    idx = np.asarray(sel.indices_, dtype=np.int64)
    if idx.shape != (m,) or np.unique(idx).size != m:
        raise RuntimeError(f"selector {name!r} returned {idx.size} indices ({np.unique(idx).size} distinct), not {m}")
    return idx, seconds


# --------------------------------------------------------------------------------------------------
# training
# --------------------------------------------------------------------------------------------------


def train_ssl(
    X_train,
    y_train,
    labeled,
    X_test,
    y_test,
    *,
    algorithm: str = "FreeMatch",
    protocol="usb",
    num_classes=None,
    device="auto",
    seed=0,
    progress=False,
    return_models=False,
) -> dict:
    """Train ``algorithm`` ("FlexMatch" or "FreeMatch") with rows ``labeled`` of ``X_train`` as the labeled set
    and *all* rows of ``X_train`` as the unlabeled set; return the test accuracy of the (EMA) model.
    ``algorithm="Supervised"`` is the supervised arm: the same network, labeled batches (their weak views),
    optimiser, schedule and EMA, and no unlabeled data (cross-entropy on the labeled batch only).

    ``protocol`` (:data:`PROTOCOLS` or a dict overriding :data:`USB_PROTOCOL`):

    * model ``"wrn28_2"`` / ``"lenet_mnist"``: ``X_*`` are uint8 images ``(N, H, W[, C])``, scaled to [0, 1] and
      normalised with the training images' per-channel mean / std (the algorithms' augmentations undo and
      redo that normalisation);
    * model ``"mlp"``: ``X_*`` are feature vectors ``(N, d)``, z-scored with the training rows' statistics;
      views = feature noise (``augment="tabular"``).

    Optimiser: SGD with the protocol's lr / momentum / Nesterov / weight decay (not applied to BN and biases,
    USB's ``bn_wd_skip``), cosine schedule over ``epochs x iterations_per_epoch`` steps, labeled batch
    ``min(batch_size, m)``, unlabeled batch ``uratio x batch_size``. Returns ``test_acc`` (%), the number of
    classes in the labeled set, steps and seconds. With ``return_models=True`` (an active-learning loop that
    selects with the trained model) also ``model`` (the evaluated, EMA model), ``initial_model`` (a copy of the
    weights before training), ``inputs`` (the training rows as the model sees them: z-scored features or
    normalised images) and ``views`` (``augment``, ``mean``, ``std`` of its augmentations); these are not
    JSON-serialisable and must be removed before the dict becomes a record.
    """
    import torch

    from sslkit.algorithms import FlexMatch, FreeMatch, Supervised
    from sslkit.data import image_stats, images_to_tensor
    from sslkit.engine import Hook, TrainConfig, fit
    from sslkit.models import MLP, LeNetMNIST, wrn28_2
    from sslkit.task import Task

    if algorithm not in ARMS:
        raise ValueError(f"algorithm must be one of {ARMS}, got {algorithm!r}")
    p = check_protocol(protocol)
    seed = check_seed(seed)
    X_train, X_test = np.asarray(X_train), np.asarray(X_test)
    y_train, y_test = np.asarray(y_train, dtype=np.int64), np.asarray(y_test, dtype=np.int64)
    if y_train.shape != (X_train.shape[0],) or y_test.shape != (X_test.shape[0],):
        raise ValueError(
            f"labels must be 1-D with one entry per row: X_train {X_train.shape[0]} rows vs y_train "
            f"{y_train.shape}, X_test {X_test.shape[0]} rows vs y_test {y_test.shape}"
        )
    labeled = np.asarray(labeled, dtype=np.int64)
    if labeled.ndim != 1 or labeled.size == 0 or labeled.min() < 0 or labeled.max() >= X_train.shape[0]:
        raise ValueError(f"labeled must be a non-empty 1-D array of row indices in [0, {X_train.shape[0]})")
    if num_classes is None:
        num_classes = int(max(y_train.max(), y_test.max())) + 1
    num_classes = check_count(num_classes, "num_classes", allow_zero=False)

    if p["model"] == "mlp":
        if X_train.ndim != 2:
            raise ValueError(f"protocol model 'mlp' needs feature vectors (N, d), got X_train of shape {X_train.shape}")
        mean, std = X_train.mean(axis=0), X_train.std(axis=0)
        std[std == 0] = 1.0
        Xt = torch.as_tensor((X_train - mean) / std, dtype=torch.float32)
        Xs = torch.as_tensor((X_test - mean) / std, dtype=torch.float32)
        norm, augment = {}, "tabular"
    elif p["model"] in ("wrn28_2", "lenet_mnist"):
        if X_train.dtype != np.uint8 or X_train.ndim not in (3, 4):
            raise ValueError(
                f"protocol model {p['model']!r} needs uint8 images (N, H, W[, C]), got dtype "
                f"{X_train.dtype} and shape {X_train.shape}"
            )
        mean, std = image_stats(X_train)
        Xt, Xs = images_to_tensor(X_train, mean=mean, std=std), images_to_tensor(X_test, mean=mean, std=std)
        norm, augment = {"mean": mean, "std": std}, "auto"
    else:
        raise ValueError(f"protocol model must be 'wrn28_2', 'lenet_mnist' or 'mlp', got {p['model']!r}")

    if p["model"] == "mlp":
        factory = functools.partial(MLP, Xt.shape[1], num_classes, hidden=(256,), dropout=0.0)
    elif p["model"] == "lenet_mnist":
        factory = functools.partial(LeNetMNIST, num_classes)
    else:
        factory = functools.partial(wrn28_2, num_classes)
    if algorithm == "FreeMatch":
        ema = {"ema_p": p["freematch_ema_p"]} if "freematch_ema_p" in p else {}
        algo = FreeMatch(augment=augment, **ema, **norm)
    elif algorithm == "FlexMatch":
        algo = FlexMatch(num_unlabeled=Xt.shape[0], augment=augment, **norm)
    else:
        algo = Supervised(augment=augment, **norm)
    # labeled: the chosen rows; unlabeled: every training row (USB's classic-CV setup)
    task = Task(
        X_l=Xt[torch.as_tensor(labeled)],
        y_l=torch.as_tensor(y_train[labeled]),
        X_u=Xt,
        X_test=Xs,
        y_test=torch.as_tensor(y_test),
        num_classes=num_classes,
        model_factory=factory,
    )
    config = TrainConfig(
        optimizer="sgd",
        lr=p["lr"],
        weight_decay=p["weight_decay"],
        momentum=p["momentum"],
        nesterov=p["nesterov"],
        schedule=p["schedule"],
        epochs=p["epochs"],
        iterations_per_epoch=p["iterations_per_epoch"],
        batch_size=p["batch_size"],
        unlabeled_batch_size=p["uratio"] * p["batch_size"],
        ema_decay=p["ema_decay"],
        decay_norm_and_bias=False,
    )
    initial = []  # the weights before training, for an active-learning loop that compares with them
    hooks = [Hook(lambda tr: initial.append(copy.deepcopy(tr.model)), every=None, when="before", name="initial")]
    start = time.perf_counter()
    trainer = fit(task, algo, config, seed=seed, device=device, hooks=hooks if return_models else (), progress=progress)
    out = {
        "test_acc": 100.0 * float(trainer.score(task.X_test, task.y_test)),
        "labeled_classes": int(np.unique(y_train[labeled]).size),
        "steps": int(p["epochs"] * p["iterations_per_epoch"]),
        "train_seconds": round(time.perf_counter() - start, 3),
    }
    if return_models:
        out.update(
            model=trainer.eval_model,
            initial_model=initial[0],
            inputs=Xt,
            views={"augment": augment, "mean": norm.get("mean"), "std": norm.get("std")},
        )
    return out


# --------------------------------------------------------------------------------------------------
# Table 1
# --------------------------------------------------------------------------------------------------

_DATA_MEMO: dict = {}


def _source_label(source: str) -> str:
    """A dataset's ``source`` without the machine's directories (``/a/b/cifar10 (x)`` -> ``cifar10 (x)``), so
    that committed records hold no absolute paths."""
    import re

    return re.sub(r"(?:[A-Za-z]:)?[/\\](?:[^\s()/\\]+[/\\])*([^\s()/\\]+)", r"\1", str(source))


_SELECTION_MEMO: dict = {}
_MU_MEMO: dict = {}


def pool_mu(F, bandwidth: float, key, device="cpu"):
    """Algorithm 1's ``mu`` of the pool features ``F`` at ``bandwidth`` (``kernel_row_sums / n``, float64), memoised
    per process under ``(key, bandwidth)``: ``key`` names the pool (e.g. :func:`table1_data`'s memo key). Every
    selection of one pool and bandwidth then pays the ``O(n^2 d)`` pass once; the values are the ones each call
    would compute (the same blockwise sums)."""
    from sslkit.select import kernel_row_sums

    mkey = (key, float(bandwidth), str(device))
    if mkey not in _MU_MEMO:
        _MU_MEMO.clear()  # one pool at a time: n floats, but no need to keep old pools
        _MU_MEMO[mkey] = kernel_row_sums(F, bandwidth=bandwidth, device=device) / len(F)
    return _MU_MEMO[mkey]


def table1_data(
    dataset: str,
    *,
    extractor: str = "efficientnet_lite0",
    n_pool=None,
    n_test=None,
    variant=None,
    pca_dim: int = 50,
    data_root=None,
    device="cpu",
):
    """``(X_pool, y_pool, X_test, y_test, F_pool, info)`` for one Table 1 dataset (memoised per process).

    ``dataset``: a :func:`sslkit.data.load_dataset` name ("cifar10", "cifar100", "svhn", "stl10", "mnist").
    The pool is the training set (its first ``n_pool`` rows when given), the test set its first ``n_test`` rows.
    ``F_pool`` are the features of the pool images by ``extractor`` (:func:`sslkit.features.extract_features`,
    disk-cached); for ``"pixels_pca"`` the projection (``pca_dim`` components) is fitted on the pool and the test
    images together (no labels involved). ``variant`` is passed to ``load_dataset`` (cifar10: "lossless" =
    the exact 4000/1000 subset, "auto" = the official archive or else the JPEG q75 copy). ``info`` names the
    data source and the extractor. Also returns the test features inside ``info["F_test"]``.
    """
    from sslkit.data import load_dataset
    from sslkit.features import extract_features

    key = (dataset, extractor, n_pool, n_test, variant, pca_dim, str(data_root))
    if key in _DATA_MEMO:
        return _DATA_MEMO[key]
    opts = {} if variant is None else {"variant": variant}
    ds = load_dataset(dataset, root=data_root, **opts)
    if ds.X_test is None:
        raise ValueError(f"dataset {dataset!r} has no test split")
    Xp, yp, Xs, ys = ds.X, ds.y, ds.X_test, ds.y_test
    if n_pool is not None:
        Xp, yp = Xp[: check_count(n_pool, "n_pool", allow_zero=False)], yp[:n_pool]
    if n_test is not None:
        Xs, ys = Xs[: check_count(n_test, "n_test", allow_zero=False)], ys[:n_test]
    label = f"{dataset}{'-' + variant if variant else ''}"
    if extractor == "pixels_pca":
        F = extract_features(
            np.concatenate([Xp, Xs]),
            "pixels_pca",
            pca_dim=pca_dim,
            device=device,
            cache_key=f"{label}-pool{len(Xp)}-test{len(Xs)}",
        )
        Fp, Fs = F[: len(Xp)], F[len(Xp) :]
    else:
        Fp = extract_features(
            Xp, extractor, device=device, cache_key=f"{label}-train" + ("" if n_pool is None else str(len(Xp)))
        )
        Fs = extract_features(
            Xs, extractor, device=device, cache_key=f"{label}-test" + ("" if n_test is None else str(len(Xs)))
        )
    info = {
        "data": _source_label(ds.source),
        "extractor": extractor,
        "feature_dim": int(Fp.shape[1]),
        "n_pool": int(len(Xp)),
        "n_test": int(len(Xs)),
        "num_classes": ds.num_classes,
        "F_test": Fs,
    }
    out = (Xp, yp, Xs, ys, Fp, info)
    _DATA_MEMO[key] = out
    return out


def table1_run(
    dataset: str,
    selector: str,
    algorithm: str,
    m: int,
    seed: int,
    *,
    protocol="usb",
    extractor: str = "efficientnet_lite0",
    n_pool=None,
    n_test=None,
    variant=None,
    pca_dim: int = 50,
    data_root=None,
    device="auto",
    select_device="cpu",
) -> dict:
    """One cell of Table 1: ``selector`` picks ``m`` pool samples on the ``extractor`` features of ``dataset``
    (:func:`table1_data`), then :func:`train_ssl` trains ``algorithm`` under ``protocol`` ("usb": WRN-28-2 on
    the images, the paper's; "head": an MLP on the features, the CPU stand-in) and tests it.

    The selection is seeded with ``seed`` and memoised per process, so FlexMatch and FreeMatch of the same
    (dataset, selector, m, seed) train on the same labeled set. Returns the test accuracy and the selection's
    class coverage (``labeled_classes``), smallest class count, seconds and the data / extractor names.
    """
    from sslkit.select import alpha_mmd2, auto_alpha, median_bandwidth

    seed = check_seed(seed)
    m = check_count(m, "m", allow_zero=False)
    if selector not in TABLE1_SELECTORS:
        raise ValueError(f"selector must be one of {TABLE1_SELECTORS}, got {selector!r}")
    p = check_protocol(protocol)
    Xp, yp, Xs, ys, Fp, info = table1_data(
        dataset,
        extractor=extractor,
        n_pool=n_pool,
        n_test=n_test,
        variant=variant,
        pca_dim=pca_dim,
        data_root=data_root,
        device=select_device,
    )
    if m > len(Fp):
        raise ValueError(f"m = {m} exceeds the pool size {len(Fp)}")
    skey = (dataset, extractor, n_pool, variant, pca_dim, selector, m, seed)
    if skey not in _SELECTION_MEMO:
        idx, sec = select_indices(selector, Fp, yp, m, seed=seed, device=select_device)
        bw = median_bandwidth(Fp, seed=0, device=select_device)
        mu = pool_mu(Fp, bw, (dataset, extractor, n_pool, n_test, variant, pca_dim, str(data_root)), select_device)
        quality = alpha_mmd2(Fp, idx, auto_alpha(m), bw, mu=mu, device=select_device)
        _SELECTION_MEMO[skey] = (idx, sec, quality)
    idx, sec, quality = _SELECTION_MEMO[skey]
    if p["model"] == "mlp":
        out = train_ssl(
            Fp,
            yp,
            idx,
            info["F_test"],
            ys,
            algorithm=algorithm,
            protocol=p,
            num_classes=info["num_classes"],
            device=device,
            seed=seed,
        )
    else:
        out = train_ssl(
            Xp,
            yp,
            idx,
            Xs,
            ys,
            algorithm=algorithm,
            protocol=p,
            num_classes=info["num_classes"],
            device=device,
            seed=seed,
        )
    counts = np.bincount(yp[idx], minlength=info["num_classes"])
    out.update(
        min_class_count=int(counts.min()),
        select_seconds=round(sec, 4),
        alpha_mmd2=float(quality),
        data=info["data"],
        extractor=extractor,
        n_pool=info["n_pool"],
        n_test=info["n_test"],
        model=p["model"],
    )
    return out


def table1_lenet_run(selector: str, algorithm: str, m: int, seed: int, *, freematch_ema=None, device="cpu") -> dict:
    """One cell of Table 1's LeNet stand-in: ``selector`` picks ``m`` of :data:`LENET_DATA`'s pool on its
    principal-component features, then ``algorithm`` (:data:`ARMS`: FlexMatch, FreeMatch or the supervised arm)
    trains MNIST's LeNet end to end on the images under :data:`LENET_PROTOCOL` (:func:`table1_run`); the three
    arms of one (selector, m, seed) share the labeled set and the initial weights. ``freematch_ema`` (FreeMatch
    only; None: USB's 0.999): the EMA momentum of FreeMatch's threshold statistics, the reading
    :data:`LENET_FREEMATCH_EMA` runs."""
    protocol = "lenet"
    if freematch_ema is not None:
        if algorithm != "FreeMatch":
            raise ValueError(f"freematch_ema sets FreeMatch's EMA momentum; algorithm {algorithm!r} has none")
        # checked here, before the data are read and the labels selected (FreeMatch checks it again)
        check_real(freematch_ema, "freematch_ema", low=0.0, high=1.0, high_open=True)
        protocol = {**LENET_PROTOCOL, "freematch_ema_p": freematch_ema}
    kw = {k: v for k, v in LENET_DATA.items() if k != "dataset"}
    return table1_run(LENET_DATA["dataset"], selector, algorithm, m, seed, protocol=protocol, device=device, **kw)
