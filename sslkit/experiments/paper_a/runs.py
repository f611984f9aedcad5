"""Paper A, §6.2: the variants of a run (class orders, supervised terms, Ours (Iter) options), the runner grids of
Tables 1-2, the hyper-parameter choice of PL / VAT (:func:`select_hyper`) and the supervised-baseline page's
run. :func:`run_one` is one (dataset, setting, method, seed) with the training protocol of App. C."""

from __future__ import annotations

import functools
import time

import numpy as np

from .protocol import (
    METHODS,
    PROTOCOL,
    TABLE1_DATASETS,
    TABLE2_DATASETS,
    build_task,
    hyper_grid,
    labeled_counts,
    methods_of,
    n_unlabeled_of,
    n_val_of,
    placed,
    regime_class_order,
    settings_of,
    source_dataset,
    supervised_config,
)


def fit_task(task, algorithm, seed: int, *, scale: str = "paper", device="auto", watch_warmup: bool = False):
    """Train ``algorithm`` on ``task`` with App. C's protocol and score the test set; ``(metrics, trainer)``.

    The one place the tables' training protocol lives (:func:`run_one` and the appendix runs use it). Early
    stopping watches only the epochs after an algorithm's ``warmup_epochs`` (Ours (Iter), Pseudo Label):
    otherwise a validation peak in the first epochs ends the run before a* or the pseudo-labels were used.
    ``watch_warmup=True`` lets the warm-up epochs compete for the best checkpoint too (patience still counts
    after them only; :class:`sslkit.engine.EarlyStopping`); the tables use False.
    """
    from sslkit.engine import EarlyStopping, TrainConfig, fit

    if scale not in PROTOCOL:
        raise ValueError(f"scale must be one of {tuple(PROTOCOL)}, got {scale!r}")
    p = PROTOCOL[scale]
    start = time.perf_counter()
    stopping = EarlyStopping(
        patience=p["patience"],
        min_delta=p["min_delta"],
        start_epoch=algorithm.warmup_epochs,
        watch_warmup=watch_warmup,
    )
    config = TrainConfig(
        optimizer="adam",
        lr=p["lr"],
        weight_decay=p["weight_decay"],
        epochs=p["epochs"],
        batch_size=p["batch_size"],
        unlabeled_batch_size=p["unlabeled_batch_size"],
        early_stopping=stopping,
    )
    trainer = fit(task, algorithm, config, seed=seed, device=device)
    metrics = {
        "test_acc": 100.0 * trainer.score(task.X_test, task.y_test),
        "best_val_acc": 100.0 * float(trainer.best_val_acc_),
        "epochs": int(trainer.epochs_run_),
        "best_epoch": int(trainer.best_epoch_),
        "seconds": round(time.perf_counter() - start, 3),
        "n_labeled": task.labeled_counts,
    }
    return metrics, trainer


def run_one(
    dataset: str,
    setting,
    method: str,
    seed: int,
    *,
    scale: str = "paper",
    device="auto",
    hyper=None,
    data_root=None,
    return_trainer: bool = False,
):
    """One run of paper A §6.2: build the task, train ``method`` with App. C's protocol, score the test set.

    Protocol (``scale="paper"``): Adam (lr 1e-3, weight decay 1e-4), at most 200 epochs (an epoch = one pass
    over the labeled set), labeled / unlabeled batches 64 / 256, early stopping on validation accuracy with
    patience 20 and min-delta 1e-4; the best-validation weights are tested; warm-up of Ours (Iter) and PL 20
    epochs, which early stopping does not watch (see :func:`fit_task`; App. C's "20-epoch warm-up ... prior
    to joint optimization"). ``scale="quick"``: at most 30 epochs, patience 8, warm-up 5, n_U = 1000 for
    images and multiclass (binary tabular keeps 300).

    Returns ``{"test_acc", "best_val_acc", "epochs", "best_epoch", "seconds", "n_labeled"}`` (accuracies in %).
    """
    if scale not in PROTOCOL:
        raise ValueError(f"scale must be one of {tuple(PROTOCOL)}, got {scale!r}")
    if method not in METHODS:
        raise ValueError(f"method must be one of {tuple(METHODS)}, got {method!r}")
    if method == "PNU" and dataset not in TABLE1_DATASETS:
        raise ValueError("PNU is binary only (paper A §6.2): use it on a Table 1 dataset")
    if method in ("PL", "VAT") and hyper is None:
        raise ValueError(f"{method} needs hyper= (one of {hyper_grid(dataset, method)})")
    task = build_task(
        dataset, setting, seed, n_unlabeled=n_unlabeled_of(dataset, scale), n_val=n_val_of(dataset), data_root=data_root
    )
    algo = METHODS[method](task.prior, hyper, np.asarray(task.labeled_counts), PROTOCOL[scale]["warmup_epochs"])
    metrics, trainer = fit_task(task, algo, seed, scale=scale, device=device)
    return (metrics, trainer) if return_trainer else metrics


#: Which class gets which count of an imbalanced regime (notebook a_table2): our rule and two alternatives.
REGIME_ORDERS = ("label encoder (the tables)", "data file", "most frequent first")


def run_order_variant(
    dataset: str, setting: str, order: str, seed: int, *, scale: str = "paper", device="auto", data_root=None
) -> dict:
    """Sup. on a Table 2 regime whose counts are placed on the classes in ``order`` (:data:`REGIME_ORDERS`):
    :func:`regime_class_order` (the tables), the data file's class order, or by falling class frequency.
    Same task and protocol as :func:`run_one` otherwise; the metrics of :func:`fit_task` plus ``counts``."""
    if order not in REGIME_ORDERS:
        raise ValueError(f"order must be one of {REGIME_ORDERS}, got {order!r}")
    if dataset not in TABLE2_DATASETS:
        raise ValueError(f"dataset must be a Table 2 dataset {TABLE2_DATASETS}, got {dataset!r}")
    ds = source_dataset(dataset, data_root)
    base = labeled_counts(dataset, setting)
    if order == REGIME_ORDERS[0]:
        ranks = regime_class_order(dataset, ds.classes)
    elif order == REGIME_ORDERS[1]:
        ranks = list(range(ds.num_classes))
    else:
        ranks = [int(c) for c in np.argsort(-np.bincount(np.asarray(ds.y), minlength=ds.num_classes), kind="stable")]
    counts = placed(base, ranks)
    task = build_task(
        dataset, counts, seed, n_unlabeled=n_unlabeled_of(dataset, scale), n_val=n_val_of(dataset), data_root=data_root
    )
    algo = METHODS["Sup."](task.prior, None, np.asarray(task.labeled_counts), PROTOCOL[scale]["warmup_epochs"])
    metrics, _ = fit_task(task, algo, seed, scale=scale, device=device)
    return {**metrics, "counts": [int(c) for c in counts]}


#: The supervised term of PL / VAT (notebook a_table2): App. C's "supervised cross-entropy" read as the plain
#: batch mean (the tables), or as the PN risk Σ_j θ_j R̂_jj that Sup. minimises (they differ when the labeled
#: class counts are not proportional to the prior θ: every Shuttle row, the imbalanced Dry Beans rows).
SUPERVISED_TERMS = ("cross-entropy (the tables)", "PN risk (Sup.'s)")


def run_supervised_term_variant(
    dataset: str,
    setting,
    method: str,
    hyper,
    term: str,
    seed: int,
    *,
    scale: str = "paper",
    device="auto",
    data_root=None,
) -> dict:
    """PL or VAT (``hyper``: threshold / ε from :func:`hyper_grid`) with the supervised term ``term`` of
    :data:`SUPERVISED_TERMS`; same task and protocol as :func:`run_one` (the first term is exactly run_one)."""
    from sslkit.algorithms.pseudo_label import PseudoLabel
    from sslkit.algorithms.vat import VAT

    if method not in ("PL", "VAT"):
        raise ValueError(f"method must be 'PL' or 'VAT', got {method!r}")
    if term not in SUPERVISED_TERMS:
        raise ValueError(f"term must be one of {SUPERVISED_TERMS}, got {term!r}")
    if hyper not in hyper_grid(dataset, method):
        raise ValueError(f"hyper must be one of {hyper_grid(dataset, method)} for {method} on {dataset}, got {hyper!r}")
    task = build_task(
        dataset, setting, seed, n_unlabeled=n_unlabeled_of(dataset, scale), n_val=n_val_of(dataset), data_root=data_root
    )
    prior = None if term == SUPERVISED_TERMS[0] else task.prior
    if method == "PL":
        algo = PseudoLabel(threshold=float(hyper), warmup_epochs=PROTOCOL[scale]["warmup_epochs"], prior=prior)
    else:
        algo = VAT(eps=float(hyper), prior=prior)
    metrics, _ = fit_task(task, algo, seed, scale=scale, device=device)
    return metrics


#: Diagnosis of Ours (Iter) where it trails Sup. (notebook a_table1): Algorithm 1 as in the tables, then one
#: change at a time (OursIter options, or model selection that may keep a warm-up checkpoint).
ITER_VARIANTS = {
    "Algorithm 1 (as in the tables)": {},
    "nn rule: kiryo": {"nn_rule": "kiryo"},
    "nn rule: clip": {"nn_rule": "clip"},
    "nn correction off": {"nonnegative": False},
    "a* at the actual n_U": {"finite_unlabeled": True},
    "best checkpoint may be a warm-up one": {"watch_warmup": True},
}


def run_iter_variant(
    dataset: str, setting, variant: str, seed: int, *, scale: str = "paper", device="auto", data_root=None
) -> dict:
    """One run of Ours (Iter) under a variant of :data:`ITER_VARIANTS` (same task and protocol as
    :func:`run_one`); the metrics dict of :func:`fit_task` plus ``a_final`` (the last a)."""
    from sslkit.algorithms.risk_rewrite import OursIter

    if variant not in ITER_VARIANTS:
        raise ValueError(f"variant must be one of {tuple(ITER_VARIANTS)}, got {variant!r}")
    options = dict(ITER_VARIANTS[variant])
    watch = options.pop("watch_warmup", False)
    task = build_task(
        dataset, setting, seed, n_unlabeled=n_unlabeled_of(dataset, scale), n_val=n_val_of(dataset), data_root=data_root
    )
    algo = OursIter(
        task.prior,
        n_per_class=np.asarray(task.labeled_counts),
        rare_class_rows="labeled",
        warmup_epochs=PROTOCOL[scale]["warmup_epochs"],
        **options,
    )
    metrics, _ = fit_task(task, algo, seed, scale=scale, device=device, watch_warmup=watch)
    return {**metrics, "a_final": [float(v) for v in algo.a_]}


def grid_of(datasets, settings=None, methods=None, *, hyper=True) -> list:
    """Runner grid ``[{"dataset", "setting", "method", "hyper"}, ...]`` over the paper's rows and methods.

    ``settings`` / ``methods``: None for the paper's; ``hyper=True`` expands PL / VAT over their whole grid,
    ``hyper="first"`` keeps one value each (the middle of the grid; quick scale).
    """
    grid = []
    for d in datasets:
        for s in settings_of(d) if settings is None else [s for s in settings if s in settings_of(d)]:
            for m in methods_of(d) if methods is None else [m for m in methods if m in methods_of(d)]:
                values = hyper_grid(d, m)
                if hyper == "first":
                    values = (values[len(values) // 2],)
                grid += [{"dataset": d, "setting": s, "method": m, "hyper": h} for h in values]
    return grid


def select_hyper(records, metric: str = "best_val_acc") -> list:
    """Keep, per (dataset, setting, method), the hyper value with the highest mean ``metric`` over seeds.

    This is App. D.1's rule (stated there for FixMatch's threshold) applied to PL's threshold and VAT's ε.
    Only seeds that every value of the group has finished are compared and kept (a partial sweep stays
    unbiased). Returns the kept records; each gets ``record["config"]["selected"] = hyper``.
    """
    groups: dict = {}
    for r in records:
        c = r["config"]
        groups.setdefault((c["dataset"], c["setting"], c["method"]), {}).setdefault(
            json_key(c.get("hyper")), []
        ).append(r)
    kept = []
    for _, by_hyper in groups.items():
        # compare the values on the seeds every value has finished (a sweep may be cut off mid-grid)
        common = set.intersection(*({r["seed"] for r in recs} for recs in by_hyper.values()))
        if not common:  # no seed shared by every value yet: use what each value has
            common = {r["seed"] for recs in by_hyper.values() for r in recs}
        score = {
            h: np.mean([r["metrics"][metric] for r in recs if r["seed"] in common] or [-np.inf])
            for h, recs in by_hyper.items()
        }
        best = max(by_hyper, key=lambda h: score[h])
        for r in by_hyper[best]:
            if r["seed"] not in common:
                continue
            r = {**r, "config": {**r["config"], "selected": r["config"].get("hyper")}}
            kept.append(r)
    return kept


def json_key(v):
    return "None" if v is None else repr(float(v))


# --------------------------------------------------------------------------- the supervised baseline page


@functools.cache
def baseline_dataset(name: str):
    """The dataset of the supervised-baseline page: Breast Cancer as loaded; Banknote with the paper's class 1
    (the positive class, source label 1) as our label 0."""
    from sslkit.data import binary_task, load_dataset

    ds = load_dataset(name)
    return binary_task(ds, 1, 0) if name == "banknote" else ds


def supervised_baseline_run(dataset: str, n1: int, n2: int, seed: int, *, device="auto") -> dict:
    """One run of the supervised-baseline page: an MLP (paper A's hidden sizes, dropout 0.2) trained with
    cross-entropy on ``n1 + n2`` labels (App. C: Adam 1e-3, weight decay 1e-4, batch 64, early stopping with
    patience 20 on 60 validation rows), 30 % of the data held out for test. The model is initialised under
    ``seed`` (``seed_everything`` before it is built), so a run does not depend on the runs before it."""
    from sslkit.algorithms import Supervised
    from sslkit.data import make_split, standardize
    from sslkit.engine import fit
    from sslkit.models import MLP, PAPER_A_MLP_HIDDEN
    from sslkit.task import Task

    ds = baseline_dataset(dataset)
    split = make_split(ds.y, [n1, n2], n_val=60, n_test=int(0.3 * len(ds.y)), seed=seed)
    train_rows = np.concatenate([split.labeled, split.unlabeled])
    _, X_l, X_val, X_test = standardize(ds.X[train_rows], ds.X[split.labeled], ds.X[split.val], ds.X[split.test])
    task = Task(
        X_l=X_l,
        y_l=ds.y[split.labeled],
        X_val=X_val,
        y_val=ds.y[split.val],
        X_test=X_test,
        y_test=ds.y[split.test],
        model_factory=functools.partial(MLP, ds.X.shape[1], 2, hidden=PAPER_A_MLP_HIDDEN[dataset], dropout=0.2),
    )
    trainer = fit(task, Supervised(), supervised_config(), seed=seed, device=device)
    return {
        "test_acc": 100 * trainer.score(task.X_test, task.y_test),
        "best_epoch": trainer.best_epoch_,
        "epochs": trainer.epochs_run_,
    }
