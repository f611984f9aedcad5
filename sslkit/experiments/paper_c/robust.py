"""Paper C (Retrieve), robust SSL: OOD and class-imbalanced unlabeled data (§4 "Robust SSL", Figure 6 a-d,
Tables 11-13, App. F.1.2, F.3, H).

One job: train VAT, Supervised, L2RW, DS3L, CRUST (with its MixUp, or without it: :data:`ABLATIONS`) or a
coreset method (Retrieve, Random) on an unlabeled set polluted by OOD classes or class imbalance, and record
the in-distribution test accuracy, the wall-clock (selection included) and, at every selection round, what the
coreset contains: its OOD fraction and its class proportions (the unlabeled set's hidden labels are used for
this diagnostic only).

Settings (App. F.3): every method uses VAT as its SSL loss; no warm start ("training on an entire unlabeled
set (containing OOD or class imbalance) creates a biased model"), except Retrieve-Warm for Table 11;
Nesterov SGD lr 0.03 (MNIST: 0.003), weight decay 5e-4, momentum 0.9, cosine schedule, batches 50 / 50.
All methods train for the same number of *epochs*; an epoch is one pass over the unlabeled set the method
trains on (§3.5), so a coreset of k points trains ``T ceil(k / B)`` iterations and the full-set methods
``T ceil(m / B)``; Supervised takes as many iterations as VAT.

The coreset budget of the robust experiments is not stated. CORDS' configs carry ``fraction = 0.1``; the
paper's own times imply about one half (Table 12: Retrieve 1.37 h vs VAT 2.46 h on MNIST, 17.0 h vs 30.3 h
on CIFAR-10, a ratio of 0.56 for a method whose time is ``fraction`` x VAT's plus selection). The reading
changes the result, so both are run (:data:`FRACTIONS`).

Protocols: :mod:`.robust_protocols` (:data:`PROTOCOLS`, re-exported here).
"""

from __future__ import annotations

import functools
import math
import time

import numpy as np
import torch

from sslkit.algorithms import DS3L, L2RW, VAT, CrustMixup, Hook, Supervised
from sslkit.callbacks import CoresetSelection, warm_start_epochs
from sslkit.data import (
    images_to_tensor,
    imbalanced_split,
    load_dataset,
    ood_split,
    standardize,
)
from sslkit.models import MLP, PaperCMNISTCNN, wrn28_2
from sslkit.task import Task

from .meta_sets import MetaDS3L, MetaL2RW
from .robust_features import featurized
from .robust_paper import PAPER_TABLE11, PAPER_TABLE12
from .robust_protocols import FINAL_MODEL, LONG_EPOCHS, PROTOCOLS
from .robust_records import coreset_composition, robust_rows
from .tradeoff import selection_seconds, train_with_curve, trainer_options

__all__ = [
    "PROTOCOL_VERSION",
    "FRACTIONS",
    "METHODS",
    "ABLATIONS",
    "MetaDS3L",
    "MetaL2RW",
    "PAPER_TABLE11",
    "PAPER_TABLE12",
    "PROTOCOLS",
    "FINAL_MODEL",
    "LONG_EPOCHS",
    "build_task",
    "diverged_run",
    "narrow_ratios",
    "robust_grid",
    "robust_rows",
    "robust_run",
    "schedule_rows",
]

#: Protocol version of the records that this module's run functions make: notebooks and drivers pass it as
#: ``run_grid(..., version=PROTOCOL_VERSION)`` and each record stores it (``protocol_version``; records without
#: it are version 1). Bump it with a change that alters those runs' results: the runner then refuses to reuse
#: the older records silently (:class:`sslkit.experiments.runs.store.StaleResultsError`).
PROTOCOL_VERSION = 1

#: the schedule-length study of the CPU stand-in (issue 23: is Full VAT converged after the stand-in's T = 4?):
#: Full VAT at the middle OOD ratio with T doubled up to 32 epochs (T = 4 is the main grid's run)
SCHEDULE_EPOCHS = (8, 16, 32)
SCHEDULE_RATIO = 0.5

#: Table 12's rows, then the extra rows of this book: Random coresets (the mechanism's comparison) and
#: Retrieve-Warm (Table 11)
METHODS = ("vat", "supervised", "l2rw", "ds3l", "crust", "retrieve", "random", "retrieve_warm")
#: runs outside the main grid: CRUST's coresets trained with plain VAT, without its MixUp (§4: "the performance gain
#: due to MixUP for coreset selection in the SSL setting is minimal"; a reading of the CPU stand-in's grid)
ABLATIONS = ("crust_nomixup",)
CORESET_METHODS = ("crust", "retrieve", "random", "retrieve_warm", "crust_nomixup")
#: the two readings of the unstated coreset budget (module docstring)
FRACTIONS = (0.1, 0.5)

_MEANS = {"mnist": ([0.1307], [0.3081]), "cifar10": ([0.4914, 0.4822, 0.4465], [0.2470, 0.2435, 0.2616])}


def _protocol(protocol) -> dict:
    if protocol not in PROTOCOLS:
        raise ValueError(f"protocol must be one of {tuple(PROTOCOLS)}, got {protocol!r}")
    return PROTOCOLS[protocol]


def _check_ratio(p: dict, ratio) -> float:
    if isinstance(ratio, bool) or not isinstance(ratio, (int, float)) or ratio not in p["ratios"]:
        raise ValueError(f"ratio must be one of {p['ratios']} for a {p['scenario']} protocol, got {ratio!r}")
    return float(ratio)


def build_task(protocol: str, ratio: float, seed: int) -> Task:
    """The :class:`~sslkit.task.Task` of one run: ``X_l, y_l, X_u, X_test, y_test`` (float32 tensors / int64
    arrays), the number of classes, and in ``meta`` the normalisation of image inputs and two diagnostics of the
    unlabeled set that training never sees: ``is_ood`` (bool per unlabeled sample; all False under imbalance)
    and ``y_u`` (its hidden labels, -1 for OOD samples).

    OOD: :func:`sslkit.data.ood_split`; labels are remapped to ``0..5``; the test set is the ID part of the
    official test split (digits: the split's ``n_val`` ID samples, as digits has no test split).
    Imbalance: :func:`sslkit.data.imbalanced_split`; the official test split (digits: the ``n_val``
    samples). Paper-scale validation sets are drawn (so the unlabeled and labeled draws match the paper's
    sizes); a protocol with ``"validation"`` (``cpu_val``) also returns them as ``X_val, y_val`` (ID labels),
    the others do not use them (``meta``: the trainer does not see them)."""
    p = _protocol(protocol)
    ratio = _check_ratio(p, ratio)
    ds = featurized(p["dataset"], p["variant"], p["features"]) if "features" in p else load_dataset(p["dataset"])
    has_test = ds.X_test is not None
    if p["scenario"] == "ood":
        split = ood_split(ds.y, **p["split"], ood_ratio=ratio, seed=seed)
        y_l = split.relabel(ds.y[split.labeled])
        y_u = split.relabel(ds.y[split.unlabeled])
        if has_test:
            y_all = split.relabel(ds.y_test)
            keep = np.flatnonzero(y_all >= 0)
            X_test_raw, y_test = ds.X_test[keep], y_all[keep]
        else:
            X_test_raw, y_test = ds.X[split.val], split.relabel(ds.y[split.val])
        is_ood = split.unlabeled_is_ood
        num_classes = len(split.label_map)
        y_val = split.relabel(ds.y[split.val])
    else:
        split = imbalanced_split(ds.y, ratio, **p["split"], seed=seed)
        y_l, y_u = ds.y[split.labeled], ds.y[split.unlabeled]
        X_test_raw, y_test = (ds.X_test, ds.y_test) if has_test else (ds.X[split.val], ds.y[split.val])
        is_ood = np.zeros(len(split.unlabeled), dtype=bool)
        num_classes = ds.num_classes
        y_val = ds.y[split.val]
    if p.get("validation") and (len(split.val) == 0 or not has_test):
        raise ValueError("a validation protocol needs a test split and n_val > 0 (the validation set is not the test)")
    raw = [ds.X[split.labeled], ds.X[split.unlabeled], X_test_raw] + ([ds.X[split.val]] if p.get("validation") else [])
    mean = std = None
    if p["model"] == "mlp":
        flat = [a.reshape(len(a), -1).astype(np.float32) for a in raw]
        X_l, X_u, X_test, *X_val = (torch.as_tensor(a, dtype=torch.float32) for a in standardize(*flat))
    else:
        mean, std = _MEANS[p["dataset"]]
        X_l, X_u, X_test, *X_val = (images_to_tensor(a, mean, std) for a in raw)
    # the validation set is the run's own (model selection, the meta set of L2RW / DS3L): the trainer never sees it
    val = {"X_val": X_val[0], "y_val": np.asarray(y_val, dtype=np.int64)} if X_val else {}
    return Task(
        X_l=X_l,
        y_l=np.asarray(y_l, dtype=np.int64),
        X_u=X_u,
        X_test=X_test,
        y_test=np.asarray(y_test, dtype=np.int64),
        num_classes=num_classes,
        meta={
            "y_u": np.asarray(y_u, dtype=np.int64),  # hidden labels (-1 = OOD): diagnostics only
            "is_ood": np.asarray(is_ood, dtype=bool),  # diagnostics only
            "mean": mean,
            "std": std,
            "source": ds.source,
            **val,
        },
    )


@functools.lru_cache(maxsize=2)
def cached_task(protocol: str, ratio: float, seed: int) -> Task:
    """:func:`build_task` of ``(protocol, ratio, seed)``, built once and shared by the runs that need it in this
    process (a run does not modify its task)."""
    return build_task(protocol, ratio, seed)


def _model(p: dict, task: Task, seed: int) -> torch.nn.Module:
    torch.manual_seed(seed)
    k = task.num_classes
    if p["model"] == "mlp":
        return MLP(task.X_l.shape[1], k, hidden=(128,))
    if p["model"] == "paper_c_cnn":
        return PaperCMNISTCNN(k)
    return wrn28_2(k)


def _algorithm(method: str, p: dict, task: Task | None = None, seed: int = 0):
    vat = VAT(p["vat_eps"], lambda_ent=p.get("vat_ent", 0.0))
    if method == "supervised":
        return Supervised()
    meta = {"meta_batch_size": p["batch_size"], "seed": seed}
    if method == "l2rw":  # Ren et al.'s look-ahead step uses the optimiser's learning rate
        if p.get("validation"):
            return MetaL2RW(vat, inner_lr=p["lr"]).bind_meta_set(task.meta["X_val"], task.meta["y_val"], **meta)
        return L2RW(vat, inner_lr=p["lr"])
    if method == "ds3l":
        if p.get("validation"):
            return MetaDS3L(vat).bind_meta_set(task.meta["X_val"], task.meta["y_val"], **meta)
        return DS3L(vat)
    if method == "crust":
        return CrustMixup(vat)  # "crust_nomixup" (ABLATIONS): CRUST's coresets, plain VAT
    return vat


def robust_run(
    *, protocol, method, ratio, seed, fraction=None, normalize_weights=False, epochs=None, device="auto", task=None
) -> dict:
    """Train one (protocol, method, ratio, seed[, fraction]) and return its metrics.

    ``fraction``: the coreset budget of CRUST, Retrieve, Random and Retrieve-Warm (one of
    :data:`FRACTIONS`); None for the full-set methods. ``normalize_weights`` (CRUST only): scale CRUST's
    cluster-size weights (mean ``N / k``, as CORDS multiplies the loss by them) to mean 1 over the coreset --
    the second reading of the unlabeled weights (:class:`~sslkit.callbacks.CoresetSelection`). ``epochs``: the
    number of epochs ``T`` in place of the protocol's (the schedule-length study, :data:`SCHEDULE_EPOCHS`; the
    cosine schedule spans the ``T`` given); None: the protocol's.
    Metrics: ``test_acc`` (%, ID test set; the final model, or under a validation protocol the epoch of the
    highest validation accuracy, with ``final_test_acc``, ``best_epoch`` (1-based) and ``val_acc`` per epoch beside
    it; the validation passes are left out of the clocks),
    ``seconds`` (training + selection wall-clock, evaluation excluded), ``cpu_seconds`` (the same in process
    CPU time), ``selection_seconds``, ``selection_cpu_seconds``, ``iterations``, ``epochs``, ``k``,
    ``pool``: the unlabeled pool's composition, ``selections``: per selection round its ``epoch`` and
    composition (:func:`coreset_composition`), and ``curve``: ``[seconds, test_acc, cpu_seconds]`` per
    epoch."""
    if method not in METHODS + ABLATIONS:
        raise ValueError(f"method must be one of {METHODS + ABLATIONS}, got {method!r}")
    p = _protocol(protocol)
    if method in CORESET_METHODS:
        if fraction not in FRACTIONS:
            raise ValueError(f"method {method!r} needs a fraction in {FRACTIONS}, got {fraction!r}")
    elif fraction is not None:
        raise ValueError(f"method {method!r} trains on the whole unlabeled set; fraction must be None")
    if not isinstance(normalize_weights, bool):
        raise TypeError(f"normalize_weights must be a bool, got {normalize_weights!r}")
    if normalize_weights and method != "crust":
        raise ValueError(f"normalize_weights applies to CRUST's weights only (others weigh 1), not {method!r}")
    if epochs is not None and (isinstance(epochs, bool) or not isinstance(epochs, int) or epochs < 1):
        raise ValueError(f"epochs must be a positive int or None (the protocol's {p['epochs']}), got {epochs!r}")
    task = task if task is not None else cached_task(protocol, ratio, seed)
    n_u, B, T = task.X_u.shape[0], p["batch_size"], epochs or p["epochs"]
    hooks, selector = [], None
    epochs, total = T, T * math.ceil(n_u / B)
    if method in CORESET_METHODS:
        k = int(round(fraction * n_u))
        warm = warm_start_epochs(p["kappa"], T, fraction) if method == "retrieve_warm" else 0
        subset_epochs = T - int(round(p["kappa"] * T)) if warm else T
        epochs, total = warm + subset_epochs, warm * math.ceil(n_u / B) + subset_epochs * math.ceil(k / B)
        strategy = {"retrieve_warm": "retrieve", "crust_nomixup": "crust"}.get(method, method)
        selector = CoresetSelection(
            strategy,
            k,
            every=p["every"],
            warm_epochs=warm,
            batch_size=B,
            seed=seed,
            normalize_weights=normalize_weights,
        )
    algo = _algorithm(method, p, task, seed)
    val_acc, val_cpu = [], []
    if p.get("validation"):

        def validate(tr):  # model selection: accuracy on the validation set after every epoch (CPU time kept apart)
            c0 = time.process_time()
            val_acc.append(round(100.0 * tr.score(task.meta["X_val"], task.meta["y_val"]), 4))
            val_cpu.append(time.process_time() - c0 + (val_cpu[-1] if val_cpu else 0.0))

        hooks.append(Hook(validate, name="validation"))
    t0, c0 = time.perf_counter(), time.process_time()
    try:
        tr, curve = train_with_curve(
            _model(p, task, seed),
            algo,
            task,
            selection=selector,
            hooks=hooks,
            epochs=epochs,
            iterations_per_epoch="unlabeled" if algo.uses_unlabeled else math.ceil(n_u / B),
            total_steps=total,
            seed=seed,
            device=device,
            **trainer_options(p),
        )
    except FloatingPointError as e:  # a diverged run is a recorded failure (issue 44), never a number averaged in
        return diverged_run(e, time.perf_counter() - t0, time.process_time() - c0, task, selector, bool(val_acc))
    sel = selection_seconds(selector)
    rounds = [] if selector is None else selector.selections_
    selected = {}
    if val_acc:
        curve = [[t, acc, round(cpu - v, 4)] for (t, acc, cpu), v in zip(curve, val_cpu)]
        best = int(np.argmax(val_acc))  # the first epoch of the highest validation accuracy
        selected = {"final_test_acc": curve[-1][1], "best_epoch": best + 1, "val_acc": val_acc}
    return {
        "test_acc": curve[best][1] if val_acc else curve[-1][1],
        **selected,
        "seconds": round(tr.timings_["train"] + sel, 4),
        "cpu_seconds": curve[-1][2],
        "selection_seconds": round(sel, 4),
        "selection_cpu_seconds": round(sum(s["cpu_seconds"] for s in rounds), 4),
        "iterations": tr.iteration,
        "epochs": tr.epochs_run_,
        "k": n_u if selector is None else selector.k,
        "pool": coreset_composition(np.arange(n_u), task),
        "selections": [{"epoch": s["epoch"], **coreset_composition(s["indices"].cpu().numpy(), task)} for s in rounds],
        "curve": curve,
    }


def diverged_run(error, seconds: float, cpu_seconds: float, task: Task, selector, validation: bool) -> dict:
    """The record of a run whose training diverged (the engine's or L2RW's ``FloatingPointError``: a non-finite loss,
    weights or meta-gradient): ``test_acc`` None (and ``final_test_acc`` under a validation protocol), which
    :func:`.divergence.is_diverged` counts and :func:`robust_rows` leaves out, ``diverged``: the error's message (its
    epoch), the clocks up to the failure, and the composition of the coresets selected before it."""
    return {
        "test_acc": None,
        **({"final_test_acc": None} if validation else {}),
        "diverged": str(error),
        "seconds": round(seconds, 4),
        "cpu_seconds": round(cpu_seconds, 4),
        "k": task.X_u.shape[0] if selector is None else selector.k,
        "pool": coreset_composition(np.arange(task.X_u.shape[0]), task),
        "selections": [
            {"epoch": s["epoch"], **coreset_composition(s["indices"].cpu().numpy(), task)}
            for s in ([] if selector is None else selector.selections_)
        ],
    }


def robust_grid(protocol: str, methods=METHODS, fractions=FRACTIONS) -> list[dict]:
    """The run configurations of Figure 6 / Tables 11-12 for one protocol: every method at every ratio,
    the coreset methods at every budget in ``fractions``; Retrieve-Warm (Table 11) at ratio 50 % only, and
    only at budgets where ``T_w = κ T k / m`` rounds to at least one epoch (else it is Retrieve)."""
    p = _protocol(protocol)
    bad = [m for m in methods if m not in METHODS + ABLATIONS]
    if bad:
        raise ValueError(f"unknown methods {bad}; choose from {METHODS + ABLATIONS}")
    grid = []
    for r in p["ratios"]:
        for m in methods:
            for f in fractions if m in CORESET_METHODS else (None,):
                if m == "retrieve_warm" and (r != 0.5 or warm_start_epochs(p["kappa"], p["epochs"], f) == 0):
                    continue  # Table 11: ratio 50 % only, and only where the warm start lasts an epoch
                grid.append({"protocol": protocol, "method": m, "ratio": r, "fraction": f})
    return grid


def narrow_ratios(grid: list, ratios) -> list:
    """The configs of ``grid`` at ``ratios`` (a ratio or a list; None: all of them, e.g. the positive controls' ratio
    first); ValueError when no config of the grid has one of them."""
    if ratios is None:
        return list(grid)
    ratios = [ratios] if isinstance(ratios, (int, float)) else list(ratios)
    have = sorted({c["ratio"] for c in grid})
    if not set(have) & set(ratios):
        raise ValueError(f"no run of the grid has a ratio in {ratios}; its ratios: {have}")
    return [c for c in grid if c["ratio"] in ratios]


def schedule_rows(records, protocol: str = "cpu", method: str = "vat", ratio: float = SCHEDULE_RATIO) -> dict:
    """``{T: {seed: test_acc}}`` of ``method`` at ``ratio`` under ``protocol``: the protocol's own ``T`` from its
    main-grid records and each other ``T`` from the schedule-length study's (config ``epochs``)."""
    own = _protocol(protocol)["epochs"]
    out: dict = {}
    for r in records:
        c = r["config"]
        key = (c["protocol"], c["method"], c["ratio"], c.get("normalize_weights", False))
        if key != (protocol, method, ratio, False):
            continue
        T = c.get("epochs") or own
        cell = out.setdefault(T, {})
        if r["seed"] in cell:
            raise ValueError(f"two records of seed {r['seed']} for {method} at T = {T}")
        cell[r["seed"]] = r["metrics"]["test_acc"]
    return dict(sorted(out.items()))
