"""One run of the chapter "All three together": a task (:func:`build_task`), an SSL method (:data:`METHODS`) and
the stages switched on or off (:data:`ARMS`), trained by :class:`sslkit.pipeline.SSLPipeline`.

Protocols (:data:`PROTOCOLS`):

* ``"cpu"`` -- MNIST: a pool of 8 000 training images (the unlabeled set; the labels are chosen from it), 100
  labels, 100 validation images from the rest of the training set (Ours (Iter) estimates a* on them; every arm
  gets them, none trains on them), 5 000 test images of the official test split; the pixels flattened and
  normalised (MNIST's mean 0.1307, std 0.3081); an MLP with one hidden layer of 256; 20 epochs over the pool,
  unlabeled batch 128, labeled batch 64; FreeMatch with Nesterov SGD lr 0.03 and the cosine schedule (USB, papers B
  and C), paper A's learners with Adam lr 1e-3, weight decay 1e-4 (paper A App. C; with the SGD of USB Ours (Iter)
  collapsed to 14 % on seed 0 in a trial). No early stopping: every run is tested with its final weights. RDSS
  selects on the first 50 principal components of the pool's pixels (paper B's CPU stand-in features; the PCA's
  time counts as selection time). Retrieve keeps 20 % of the pool, re-chosen every 4 epochs after a warm start
  of κ = 0.5 (paper C §3.4). A run takes well under a minute on one thread.
* ``"quick"`` -- the same with no data files: scikit-learn's 8x8 digits (64 standardised features), a pool of
  1 200, 50 labels, 100 validation and ~500 test rows, an MLP of 128, 10 epochs, selections every 3 epochs.

Every draw (pool, validation, test rows; the model's initial weights; batches) follows from the seed, and the
arms and methods of one seed share them: the comparisons pair by seed. The class prior θ that paper A's learners
need is the class frequencies of the whole training set (paper A assumes it known).
"""

from __future__ import annotations

import functools
import time

import numpy as np
import torch

from sslkit._checks import check_seed

__all__ = ["ARMS", "METHODS", "PROTOCOLS", "PROTOCOL_VERSION", "build_task", "pipeline_run"]

#: Protocol version of the records :func:`pipeline_run` makes (bump it with a change that alters their results)
PROTOCOL_VERSION = 1

#: arm -> (label selector, coreset): none of the two stages, B only, C only, both
ARMS = {"none": ("random", False), "B": ("rdss", False), "C": ("random", True), "B+C": ("rdss", True)}
#: the SSL methods: paper A's two risk-rewrite learners and FreeMatch (paper B's SSL method)
METHODS = ("FreeMatch", "Ours (Iter)", "Ours (EC)")

#: paper A's optimiser (App. C) for its learners: Adam, lr 1e-3, weight decay 1e-4, no schedule
_ADAM = {"optimizer": "adam", "lr": 1e-3, "weight_decay": 1e-4, "schedule": None}

PROTOCOLS = {
    "cpu": {
        "dataset": "mnist",
        "n_pool": 8000,
        "n_labels": 100,
        "n_val": 200,
        "n_test": 5000,
        "hidden": 256,
        "epochs": 20,
        "every": 4,
        "coreset": 0.2,
        "kappa": 0.5,
        "warmup_epochs": 2,
        "pca_dim": 50,
    },
    "quick": {
        "dataset": "digits",
        "n_pool": 1200,
        "n_labels": 50,
        "n_val": 100,
        "n_test": None,
        "hidden": 128,
        "epochs": 10,
        "every": 3,
        "coreset": 0.2,
        "kappa": 0.5,
        "warmup_epochs": 2,
        "pca_dim": 20,
    },
}


def protocol_of(protocol: str) -> dict:
    if protocol not in PROTOCOLS:
        raise ValueError(f"protocol must be one of {tuple(PROTOCOLS)}, got {protocol!r}")
    return PROTOCOLS[protocol]


@functools.lru_cache(maxsize=2)
def build_task(protocol: str, seed: int) -> dict:
    """The arrays of one seed: ``X_pool`` (float32, flattened and normalised), ``y_pool`` (the oracle: only the
    selected rows are read), ``X_val, y_val, X_test, y_test``, the prior θ and the data's name."""
    from sslkit.data import load_dataset

    p = protocol_of(protocol)
    seed = check_seed(seed)
    ds = load_dataset(p["dataset"])
    X = np.asarray(ds.X).reshape(len(ds.y), -1).astype(np.float32)
    y = np.asarray(ds.y, dtype=np.int64)
    prior = np.bincount(y, minlength=ds.num_classes) / y.size
    rng = np.random.default_rng([seed, 24])
    order = rng.permutation(len(y))
    pool, val = order[: p["n_pool"]], order[p["n_pool"] : p["n_pool"] + p["n_val"]]
    if ds.X_test is not None:
        Xt = np.asarray(ds.X_test).reshape(len(ds.y_test), -1).astype(np.float32)
        yt = np.asarray(ds.y_test, dtype=np.int64)
        test = np.sort(rng.choice(len(yt), p["n_test"], replace=False)) if p["n_test"] else np.arange(len(yt))
        Xt, yt = Xt[test], yt[test]
    else:  # digits: the rows left after the pool and validation set
        rest = order[p["n_pool"] + p["n_val"] :]
        Xt, yt = X[rest], y[rest]
    if p["dataset"] == "mnist":
        mean, std = 0.1307 * 255.0, 0.3081 * 255.0
    else:
        mean, std = X[pool].mean(axis=0), X[pool].std(axis=0) + 1e-6
    norm = lambda a: torch.as_tensor((a - mean) / std, dtype=torch.float32)  # noqa: E731
    return {
        "X_pool": norm(X[pool]),
        "y_pool": y[pool],
        "X_val": norm(X[val]),
        "y_val": y[val],
        "X_test": norm(Xt),
        "y_test": yt,
        "prior": prior,
        "num_classes": ds.num_classes,
        "data": p["dataset"],
    }


def pca_features(X: torch.Tensor, dim: int) -> np.ndarray:
    """The first ``dim`` principal components of the rows of ``X`` (label-free; exact SVD, deterministic)."""
    A = X.double() - X.double().mean(dim=0)
    _, _, V = torch.linalg.svd(A, full_matrices=False)
    return (A @ V[:dim].T).numpy()


def make_algorithm(method: str, task: dict, warmup_epochs: int):
    """FreeMatch (feature-noise views: the inputs are flat vectors), Ours (Iter) (a* re-estimated every epoch
    after ``warmup_epochs``) or Ours (EC), with the task's prior."""
    from sslkit.algorithms import FreeMatch, OursEC, OursIter

    if method == "FreeMatch":
        return FreeMatch(augment="tabular")
    if method == "Ours (Iter)":
        return OursIter(task["prior"], warmup_epochs=warmup_epochs, rare_class_rows="labeled")
    if method == "Ours (EC)":
        return OursEC(task["prior"])
    raise ValueError(f"method must be one of {METHODS}, got {method!r}")


def pipeline_run(*, method: str, arm: str, seed: int, protocol: str = "cpu", device="cpu") -> dict:
    """Train ``method`` with the stages of ``arm`` (:data:`ARMS`) on the task of ``(protocol, seed)``.

    Metrics: ``test_acc`` (%), the wall-clock and process CPU seconds of the label selection (PCA + RDSS, or the
    random draw: ``label_seconds``, ``label_cpu_seconds``), of the coreset selections (``coreset_seconds``,
    ``coreset_cpu_seconds``), of the rest of training (``train_seconds``, ``train_cpu_seconds``) and their sums
    (``seconds``, ``cpu_seconds``); ``labeled_classes`` and ``min_class_count`` of the chosen labels, ``k``,
    ``epochs``, ``iterations``, ``n_selections``."""
    from sslkit.models import MLP
    from sslkit.pipeline import SSLPipeline
    from sslkit.seeding import seed_everything

    if arm not in ARMS:
        raise ValueError(f"arm must be one of {tuple(ARMS)}, got {arm!r}")
    p = protocol_of(protocol)
    task = build_task(protocol, seed)
    selector, coreset = ARMS[arm]
    seed_everything(seed)
    model = MLP(task["X_pool"].shape[1], task["num_classes"], hidden=(p["hidden"],))
    pipe = SSLPipeline(
        model,
        make_algorithm(method, task, p["warmup_epochs"]),
        p["n_labels"],
        selector=selector,
        coreset=p["coreset"] if coreset else None,
        every=p["every"],
        kappa=p["kappa"],
        epochs=p["epochs"],
        seed=seed,
        device=device,
        num_classes=task["num_classes"],
        **(_ADAM if method != "FreeMatch" else {}),
    )
    t0, c0 = time.perf_counter(), time.process_time()
    features = pca_features(task["X_pool"], p["pca_dim"]) if selector == "rdss" else task["X_pool"]
    pca_wall, pca_cpu = time.perf_counter() - t0, time.process_time() - c0
    pipe.fit(task["X_pool"], task["y_pool"], features=features, X_val=task["X_val"], y_val=task["y_val"])
    t = pipe.timings_
    counts = np.bincount(pipe.y_labeled_, minlength=task["num_classes"])
    label = (pca_wall + t["label_selection"], pca_cpu + t["label_selection_cpu"])
    r = lambda v: round(float(v), 4)  # noqa: E731
    return {
        "test_acc": r(100.0 * pipe.score(task["X_test"], task["y_test"])),
        "label_seconds": r(label[0]),
        "label_cpu_seconds": r(label[1]),
        "coreset_seconds": r(t["coreset_selection"]),
        "coreset_cpu_seconds": r(t["coreset_selection_cpu"]),
        "train_seconds": r(t["training"]),
        "train_cpu_seconds": r(t["training_cpu"]),
        "seconds": r(label[0] + t["coreset_selection"] + t["training"]),
        "cpu_seconds": r(label[1] + t["coreset_selection_cpu"] + t["training_cpu"]),
        "labeled_classes": int((counts > 0).sum()),
        "min_class_count": int(counts.min()),
        "k": int(pipe.schedule_["k"]),
        "epochs": int(pipe.trainer_.epochs_run_),
        "iterations": int(pipe.trainer_.iteration),
        "n_selections": 0 if pipe.coreset_ is None else len(pipe.coreset_.selections_),
        "data": task["data"],
    }
