"""Paper B §7.3 and App. D.6: RDSS against semi-supervised active learning (Table 3), and SSL with 40 labels
beside the AL runs (Table 6, Figures 4-5).

* Table 3 (:func:`table3_run`): SSAL inside FlexMatch / FreeMatch at 40 labels = 20 random + 20 selected: the
  SSL model trained on the 20 random labels picks 20 more (CoreSetSSL, MMA, CBSSAL, TOD-Semi), then the SSL
  model is retrained from scratch on the 40; Random adds 20 random, Stratified and RDSS select all 40 before
  training.
* Table 6 (:func:`table6_run`): SSL (FlexMatch / FreeMatch) with 40 labels chosen by RDSS or at random, on the
  pool of Table 2's runs, so that the three paradigms share one pool and one test set.
* :data:`PAPER_TABLE3_B`, :data:`PAPER_TABLE6_B`: the paper's numbers (:mod:`sslkit.experiments.paper_numbers`).

Protocols (:data:`TABLE3_PROTOCOLS`): ``"paper"`` (CIFAR-10, USB's WRN-28-2; a GPU), ``"cpu"`` (Table 1's CPU
stand-in: an MLP head on frozen features), ``"lenet"`` (Table 1's LeNet stand-in: MNIST's LeNet end to end, FreeMatch
on its reading that passes the controls) and ``"quick"`` (scikit-learn's digits).
"""

from __future__ import annotations

import time

import numpy as np

from sslkit._checks import check_seed
from sslkit.experiments.paper_numbers import load as load_paper_numbers

from .active import resolve_protocol, table2_run
from .ssl import (
    HEAD_PROTOCOL,
    LENET_DATA,
    USB_PROTOCOL,
    select_indices,
    table1_data,
    table1_run,
    train_ssl,
)
from .ssl_protocols import LENET_EMA_PROTOCOL

#: Table 3's rows.
TABLE3_METHODS = ("Stratified", "Random", "CoreSetSSL", "MMA", "CBSSAL", "TOD-Semi", "RDSS")
#: The model-based SSAL selections of Table 3 (the others are model-free).
SSAL_METHODS = ("CoreSetSSL", "MMA", "CBSSAL", "TOD-Semi")
SSL_ALGORITHMS = ("FlexMatch", "FreeMatch")

#: ``{(method, algorithm): accuracy %}``: paper B Table 3 (CIFAR-10, 40 labels).
PAPER_TABLE3_B = {(r["method"], r["algorithm"]): r["acc"] for r in load_paper_numbers("b_table3")}
#: Paper B Table 6 (App. D.6, the numbers of Figures 4-5, compiled from [7], [11], [16]): one dict per
#: printed cell, ``paradigm`` ("AL", "SSAL", "SSL"), ``method``, ``dataset``, ``budget``, ``acc``.
PAPER_TABLE6_B = load_paper_numbers("b_table6")

# --------------------------------------------------------------------------------------------------
# Table 3: SSAL inside FlexMatch / FreeMatch, 20 random + 20 selected
# --------------------------------------------------------------------------------------------------

#: Table 3's protocols: ``data`` for :func:`table3_data`, ``ssl`` for :func:`~.ssl.train_ssl` (its "usb"
#: protocol = the paper's, "head" = Table 1's CPU stand-in: an MLP on frozen features), ``random`` + ``selected``
#: labels, ``subset``: TOD's candidate pool, ``cbssal_views``: CBSSAL's augmentations.
TABLE3_PROTOCOLS = {
    "paper": {
        "data": {"dataset": "cifar10", "extractor": "efficientnet_lite0", "variant": "auto"},
        "ssl": USB_PROTOCOL,
        "random": 20,
        "selected": 20,
        "subset": 10000,
        "cbssal_views": 5,
    },
    "cpu": {
        "data": {"dataset": "cifar10", "extractor": "efficientnet_lite0", "variant": "lossless"},
        "ssl": HEAD_PROTOCOL,
        "random": 20,
        "selected": 20,
        "subset": None,
        "cbssal_views": 5,
    },
    # Table 1's LeNet stand-in on its reading that passes the controls (FreeMatch's threshold EMA scaled)
    "lenet": {
        "data": {**LENET_DATA, "variant": None},
        "ssl": LENET_EMA_PROTOCOL,
        "random": 20,
        "selected": 20,
        "subset": None,
        "cbssal_views": 5,
    },
    "quick": {
        "data": {"dataset": "digits"},
        "ssl": {**HEAD_PROTOCOL, "epochs": 2},
        "random": 20,
        "selected": 20,
        "subset": None,
        "cbssal_views": 5,
    },
}


def table3_grid(protocol: str = "cpu", algorithms=SSL_ALGORITHMS) -> list[dict]:
    """The configurations of a Table 3 grid (``table3_run(**config, seed=...)``), algorithm-major so that the
    first-stage SSL model of a (seed, algorithm) is trained once for the four SSAL methods."""
    return [{"protocol": protocol, "algorithm": a, "method": m} for a in algorithms for m in TABLE3_METHODS]


def table3_data(protocol="cpu", *, data_root=None):
    """``(X_pool, y_pool, X_test, y_test, F_pool, F_test, info)`` of a Table 3 protocol: the training inputs of
    the SSL model (``X_*``: images for "usb", feature vectors for "head") and the model-free features the
    model-free selectors (RDSS, Stratified) see. Digits (quick): a fixed 1297 / 500 split of the 64 pixel
    counts, which are the features too."""
    p = resolve_protocol(protocol, TABLE3_PROTOCOLS)
    d = p["data"]
    if d["dataset"] == "digits":
        from sslkit.data import load_dataset

        ds = load_dataset("digits")
        perm = np.random.default_rng(0).permutation(len(ds.y))
        X, y = ds.X[perm].astype(np.float32), ds.y[perm].astype(np.int64)
        info = {"data": ds.source, "extractor": "pixels", "num_classes": 10, "n_pool": 1297, "n_test": 500}
        return X[:1297], y[:1297], X[1297:1797], y[1297:1797], X[:1297], X[1297:1797], info
    rows = {"n_pool": d.get("n_pool"), "n_test": d.get("n_test")}
    Xp, yp, Xs, ys, Fp, info = table1_data(
        d["dataset"], extractor=d["extractor"], variant=d["variant"], data_root=data_root, device="cpu", **rows
    )
    Ft = info["F_test"]
    info = {k: v for k, v in info.items() if k != "F_test"}
    if p["ssl"]["model"] == "mlp":
        return Fp, yp.astype(np.int64), Ft, ys.astype(np.int64), Fp, Ft, info
    return Xp, yp.astype(np.int64), Xs, ys.astype(np.int64), Fp, Ft, info


_STAGE1: dict = {}


def table3_run(method: str, algorithm: str, seed: int, *, protocol="cpu", device="auto", data_root=None) -> dict:
    """One cell of Table 3: ``method`` (:data:`TABLE3_METHODS`) chooses 40 labels (``random`` + ``selected``)
    for ``algorithm`` ("FlexMatch" / "FreeMatch") under ``protocol`` (:data:`TABLE3_PROTOCOLS`), seed ``seed``.

    The first ``random`` labels are drawn with ``seed`` (the same for every method). An SSAL method
    (:data:`SSAL_METHODS`) trains the SSL model on them (once per seed and algorithm, shared by the four
    methods), picks ``selected`` more with that model, and the SSL model is trained again from scratch on all
    of them; Random adds random rows; Stratified (a label oracle) and RDSS choose all 40 from the model-free
    features before any training. Returns ``test_acc`` (%), ``first_stage_acc`` (the SSL model that selected;
    SSAL methods only), ``labeled_classes``, ``min_class_count``, ``select_seconds`` and the data names.
    """
    from sslkit.active import CBSSAL, MMA, CoreSetSSL, TODSemi

    seed = check_seed(seed)
    p = resolve_protocol(protocol, TABLE3_PROTOCOLS)
    if method not in TABLE3_METHODS:
        raise ValueError(f"method must be one of {TABLE3_METHODS}, got {method!r}")
    X, y, Xs, ys, F, _, info = table3_data(p, data_root=data_root)
    K = info["num_classes"]
    n, m0, m1 = len(y), p["random"], p["selected"]
    first = np.random.default_rng([seed, 3]).choice(n, m0, replace=False).astype(np.int64)
    ssl = {"algorithm": algorithm, "protocol": p["ssl"], "num_classes": K, "device": device, "seed": seed}
    out = {"data": info["data"], "extractor": info.get("extractor"), "n_pool": n, "n_test": len(ys)}
    first_acc, sec = None, 0.0
    if method in ("Stratified", "RDSS"):
        labeled, sec = select_indices(method, F, y, m0 + m1, seed=seed)
    elif method == "Random":
        rest = np.setdiff1d(np.arange(n), first)
        labeled = np.concatenate([first, np.random.default_rng([seed, 4]).choice(rest, m1, replace=False)])
    else:
        key = (repr(sorted((k, str(v)) for k, v in p.items())), algorithm, seed)
        if key not in _STAGE1:
            for k in [k for k in _STAGE1 if (k[0], k[2]) != (key[0], key[2])]:
                del _STAGE1[k]  # keep the (protocol, seed) being run: both algorithms
            _STAGE1[key] = train_ssl(X, y, first, Xs, ys, return_models=True, **ssl)
        st = _STAGE1[key]
        first_acc = st["test_acc"]
        inputs, model = st["inputs"], st["model"]
        unlabeled = np.setdiff1d(np.arange(n), first)
        import torch

        Xu, Xl = inputs[torch.as_tensor(unlabeled)], inputs[torch.as_tensor(first)]
        views = st["views"]
        start = time.perf_counter()
        if method == "CoreSetSSL":
            sel = CoreSetSSL(m1, device=next(model.parameters()).device).fit(Xu, Xl, model=model)
        elif method == "MMA":
            sel = MMA(m1, seed=seed, **views).fit(model, Xu)
        elif method == "CBSSAL":
            sel = CBSSAL(m1, n_views=p["cbssal_views"], seed=seed, **views).fit(model, Xu)
        else:
            sel = TODSemi(m1, subset=p["subset"], seed=seed).fit(model, st["initial_model"], Xu)
        sec = time.perf_counter() - start
        labeled = np.concatenate([first, unlabeled[sel.indices_.cpu().numpy()]])
    res = train_ssl(X, y, labeled, Xs, ys, **ssl)
    counts = np.bincount(y[labeled], minlength=K)
    out.update(
        test_acc=res["test_acc"],
        first_stage_acc=first_acc,
        labeled_classes=int((counts > 0).sum()),
        min_class_count=int(counts.min()),
        select_seconds=round(float(sec), 4),
        train_seconds=res["train_seconds"],
        steps=res["steps"],
    )
    return out


# --------------------------------------------------------------------------------------------------
# Table 6: SSL with 40 labels on the pool of Table 2's runs
# --------------------------------------------------------------------------------------------------

#: The SSL budget of Table 6's comparison (the paper's smallest CIFAR-10 budget).
TABLE6_BUDGET = 40


def table6_run(dataset: str, seed: int, *, algorithm=None, selector=None, m=None, method=None, device="auto") -> dict:
    """One run of Table 6's comparison on one pool: SSL (``algorithm``: FlexMatch / FreeMatch) with ``m`` labels
    chosen by ``selector`` ("RDSS" / "Random"), or, with ``method``, an AL run of Table 2 (:func:`table2_run`).

    ``dataset="digits"``: the quick protocols -- SSL is :func:`table3_run` at its quick protocol (20 + 20 = 40
    labels; ``m`` must be 40), AL is :func:`table2_run` at its quick protocol. Another dataset (MNIST): SSL is
    Table 1's CPU head protocol (:func:`~.ssl.table1_run`: an MLP on 50 principal components of the pixels,
    feature-noise views, 300 steps) on the pool and test set of Table 2's CPU protocol (its first ``n_pool``
    training and ``n_test`` test images), so its records sit beside Table 2's AL runs; AL there comes from
    Table 2's own records."""
    from .active import TABLE2_PROTOCOLS

    if method is not None:
        if dataset != "digits" or algorithm is not None or selector is not None:
            raise ValueError(f"an AL run of Table 6 is Table 2's quick protocol on digits, got dataset={dataset!r}")
        return table2_run(method, seed, protocol="quick", device=device)
    if selector not in ("RDSS", "Random") or algorithm not in SSL_ALGORITHMS:
        raise ValueError(f"selector must be 'RDSS' or 'Random' and algorithm one of {SSL_ALGORITHMS}")
    if dataset == "digits":
        if m != TABLE6_BUDGET:
            raise ValueError(f"the quick protocol labels 20 random + 20 selected = 40 rows, got m={m!r}")
        return table3_run(selector, algorithm, seed, protocol="quick", device=device)
    pool = TABLE2_PROTOCOLS["cpu"]
    if dataset != pool["dataset"]:
        raise ValueError(f"Table 6's CPU comparison runs on Table 2's CPU pool ({pool['dataset']}), got {dataset!r}")
    return table1_run(
        dataset,
        selector,
        algorithm,
        m,
        seed,
        protocol="head",
        extractor="pixels_pca",
        n_pool=pool["n_pool"],
        n_test=pool["n_test"],
        device=device,
    )
