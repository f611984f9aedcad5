"""Paper B §7.3 and App. D.5: RDSS against active learning under supervised learning (Table 2), and the one
active-learning loop.

* :func:`active_learning_loop` -- the AL loop (train -> select a batch -> retrain), for any training function
  and any selection; :func:`table2_run` plugs the engine's :class:`~sslkit.engine.Trainer`
  (:func:`train_supervised`) into it.
* Table 2 (:func:`table2_run`): an initial random labeled set, then ``cycles`` rounds of "train from scratch,
  let the method pick ``step`` more, retrain"; the methods are :mod:`sslkit.active`'s CoreSet, VAAL, LearnLoss
  and MCDAL and a Random baseline; "SL+RDSS" trains the same supervised model on RDSS's selection of each
  budget (made before any training, on model-free features); "Whole dataset" trains on the whole pool.
* :data:`PAPER_TABLE2_B`: the paper's numbers (:mod:`sslkit.experiments.paper_numbers`).

Protocols (:data:`TABLE2_PROTOCOLS`): ``"paper"`` (CIFAR-10, ResNet-18, the paper's training; a GPU), ``"cpu"``
(a CPU stand-in that is a real experiment, stated in the protocol) and ``"quick"`` (scikit-learn's digits,
minutes, no data directory). Semi-supervised active learning (Table 3) is :mod:`.ssal`.
"""

from __future__ import annotations

import copy
import time

import numpy as np

from sslkit._checks import check_count, check_seed
from sslkit.experiments.paper_numbers import load as load_paper_numbers

from .ssl import select_indices

#: Protocol version of the records of :func:`table2_run` and of :mod:`.ssal`'s runs.
PROTOCOL_VERSION = 1

#: Table 2's rows: the four AL methods, a Random baseline (not in the paper's table) and SL + RDSS;
#: "Whole dataset" (the paper's last row) trains on the whole pool.
TABLE2_METHODS = ("Random", "CoreSet", "VAAL", "LearnLoss", "MCDAL", "SL+RDSS")
#: The AL methods of Table 2 (the rows the paper compares SL + RDSS with).
AL_METHODS = ("CoreSet", "VAAL", "LearnLoss", "MCDAL")
WHOLE = "Whole dataset"

#: ``{(method, dataset, budget): accuracy %}``: paper B Table 2 (single numbers; "Whole Dataset" with the
#: budget 50 000, the whole CIFAR training set).
PAPER_TABLE2_B = {(r["method"], r["dataset"], r["budget"]): r["acc"] for r in load_paper_numbers("b_table2")}

# --------------------------------------------------------------------------------------------------
# the AL loop
# --------------------------------------------------------------------------------------------------


def active_learning_loop(n_pool: int, initial, batches, train, select, *, seed=0):
    """The active-learning loop: train on the labeled rows, let ``select`` pick the next batch, retrain.

    ``n_pool``: rows of the pool; ``initial``: the first labeled set, an int (that many rows drawn uniformly
    with ``numpy.random.default_rng(seed)``) or an array of rows; ``batches``: the size of each round's pick;
    ``train(labeled) -> (state, metrics)`` trains on the rows ``labeled`` (int64 array) and returns whatever the
    selection needs plus a dict of metrics; ``select(state, labeled, unlabeled, k) -> positions`` returns ``k``
    distinct positions into ``unlabeled`` (the pool rows not labeled yet, increasing).

    Returns ``(history, labeled)``: one dict per training (``cycle``, ``n_labeled``, the metrics, and for every
    training after the first ``select_seconds``, the wall-clock of the pick before it) and the final labeled
    rows in the order they were added.
    """
    n_pool = check_count(n_pool, "n_pool", allow_zero=False)
    if isinstance(initial, (int, np.integer)) and not isinstance(initial, bool):
        k0 = check_count(initial, "initial", allow_zero=False)
        if k0 > n_pool:
            raise ValueError(f"initial = {k0} exceeds the pool of {n_pool} rows")
        labeled = np.random.default_rng(check_seed(seed)).choice(n_pool, k0, replace=False).astype(np.int64)
    else:
        labeled = np.asarray(initial, dtype=np.int64).reshape(-1)
        if labeled.size == 0 or np.unique(labeled).size != labeled.size or labeled.min() < 0 or labeled.max() >= n_pool:
            raise ValueError(f"initial must be distinct rows in [0, {n_pool})")
    batches = [check_count(b, "batch size", allow_zero=False) for b in batches]
    if labeled.size + sum(batches) > n_pool:
        raise ValueError(f"{labeled.size} initial + {sum(batches)} selected rows exceed the pool of {n_pool}")
    history, select_seconds = [], None
    for cycle in range(len(batches) + 1):
        state, metrics = train(labeled.copy())
        record = {"cycle": cycle, "n_labeled": int(labeled.size), **metrics}
        if select_seconds is not None:
            record["select_seconds"] = round(select_seconds, 4)
        history.append(record)
        if cycle == len(batches):
            break
        unlabeled = np.setdiff1d(np.arange(n_pool), labeled)
        start = time.perf_counter()
        pos = np.asarray(select(state, labeled.copy(), unlabeled, batches[cycle]), dtype=np.int64).reshape(-1)
        select_seconds = time.perf_counter() - start
        if (
            pos.size != batches[cycle]
            or np.unique(pos).size != pos.size
            or pos.min() < 0
            or pos.max() >= unlabeled.size
        ):
            raise RuntimeError(f"the selection returned {pos.size} positions, not {batches[cycle]} distinct positions")
        labeled = np.concatenate([labeled, unlabeled[pos]])
    return history, labeled


# --------------------------------------------------------------------------------------------------
# Table 2: AL under supervised learning
# --------------------------------------------------------------------------------------------------

_SGD_D5 = {"lr": 0.1, "momentum": 0.9, "weight_decay": 5e-4, "batch_size": 128, "schedule": "cosine"}

#: Table 2's protocols. ``initial`` random labels, then ``cycles`` picks of ``step`` (paper: 5000 + 2500 + 2500
#: of CIFAR-10's 50 000, i.e. 10 / 15 / 20 %; the paper reports 7500 and 10000). Training (App. D.5): SGD lr 0.1,
#: momentum 0.9, weight decay 5e-4, batch 128, ``epochs`` passes over the labeled set, a fresh model (same
#: seed) every cycle; the schedule is not stated in the paper (cosine here). The CPU stand-in's LeNet (no
#: BatchNorm, unlike ResNet-18) trains at lr 0.01: at 0.1 its seed-0 model on 60 labels stayed at chance.
#: ``augment``: the weak view of every labeled batch (the paper does not state it; flip + crop is what the AL
#: code it compares with uses).
#: ``vaal``: VAAL's settings (``epochs``: VAE/discriminator iterations = epochs x ceil(labeled / its batch)).
#: ``rdss_features``: the model-free features RDSS selects on. ``subset``: LearnLoss' candidate pool.
TABLE2_PROTOCOLS = {
    "paper": {
        "dataset": "cifar10",
        "n_pool": None,
        "n_test": None,
        "model": "resnet18",
        "initial": 5000,
        "step": 2500,
        "cycles": 2,
        "epochs": 300,
        "whole_epochs": 300,
        "augment": "cifar",
        **_SGD_D5,
        "vaal": {"epochs": 100, "batch_size": 128, "channels": (128, 256, 512, 1024), "latent_dim": 32},
        "subset": 10000,
        "rdss_features": "efficientnet_lite0",
    },
    "cpu": {
        "dataset": "mnist",
        "n_pool": 10000,
        "n_test": 10000,
        "model": "lenet_mnist",
        "initial": 60,
        "step": 30,
        "cycles": 2,
        "epochs": 300,
        "whole_epochs": 20,
        "augment": "mnist",
        **{**_SGD_D5, "lr": 0.01},  # LeNet has no BatchNorm: at lr 0.1 it collapsed to chance on 60 labels
        "vaal": {"epochs": 150, "batch_size": 64, "channels": (16, 32, 64), "latent_dim": 32},
        "subset": None,
        "rdss_features": "pixels_pca",
    },
    "quick": {
        "dataset": "digits",
        "n_pool": 1297,
        "n_test": 500,
        "model": "mlp",
        "initial": 30,
        "step": 15,
        "cycles": 2,
        "epochs": 100,
        "whole_epochs": 100,
        "augment": "tabular",
        **{**_SGD_D5, "lr": 0.05, "batch_size": 32},
        "vaal": {"epochs": 50, "batch_size": 32, "channels": (64,), "latent_dim": 8},
        "subset": None,
        "rdss_features": "inputs",
    },
}


def resolve_protocol(protocol, table: dict) -> dict:
    if isinstance(protocol, str):
        if protocol not in table:
            raise ValueError(f"protocol must be one of {tuple(table)} or a dict, got {protocol!r}")
        return copy.deepcopy(table[protocol])
    if not isinstance(protocol, dict):
        raise TypeError(f"protocol must be a name in {tuple(table)} or a dict, got {type(protocol).__name__}")
    return copy.deepcopy(protocol)


def table2_budgets(protocol="cpu") -> list[int]:
    """The labeled-set sizes a Table 2 run reports: ``initial + k * step`` for k = 0 .. cycles."""
    p = resolve_protocol(protocol, TABLE2_PROTOCOLS)
    return [p["initial"] + k * p["step"] for k in range(p["cycles"] + 1)]


_DATA2: dict = {}


def table2_data(protocol="cpu", *, data_root=None):
    """``(X_pool, y_pool, X_test, y_test, F_pool, info)`` for a Table 2 protocol (memoised per process).

    ``X_*``: float32 tensors as the model sees them (images normalised with the pool's per-channel mean / std,
    ``(N, C, H, W)``; digits: z-scored 64-d vectors); ``F_pool``: the model-free features RDSS selects on
    (numpy); ``info``: ``data``, ``n_pool``, ``n_test``, ``num_classes``, ``mean`` / ``std`` (images), and
    ``rdss_features``.
    """
    import torch

    from sslkit.data import image_stats, images_to_tensor, load_dataset

    p = resolve_protocol(protocol, TABLE2_PROTOCOLS)
    key = (p["dataset"], p["n_pool"], p["n_test"], p["rdss_features"], str(data_root))
    if key in _DATA2:
        return _DATA2[key]
    if p["dataset"] == "digits":
        ds = load_dataset("digits")
        perm = np.random.default_rng(0).permutation(len(ds.y))
        X, y = ds.X[perm].astype(np.float32), ds.y[perm].astype(np.int64)
        Xp, yp = X[: p["n_pool"]], y[: p["n_pool"]]
        Xs, ys = X[p["n_pool"] : p["n_pool"] + p["n_test"]], y[p["n_pool"] : p["n_pool"] + p["n_test"]]
        mu, sd = Xp.mean(0), Xp.std(0)
        sd[sd == 0] = 1.0
        Xpt, Xst = torch.as_tensor((Xp - mu) / sd), torch.as_tensor((Xs - mu) / sd)
        F = Xpt.numpy().copy()
        info = {"data": ds.source, "mean": None, "std": None}
    else:
        from sslkit.features import extract_features

        opts = {"variant": "auto"} if p["dataset"] == "cifar10" else {}
        ds = load_dataset(p["dataset"], root=data_root, **opts)
        Xp, yp, Xs, ys = ds.X, ds.y.astype(np.int64), ds.X_test, ds.y_test.astype(np.int64)
        if p["n_pool"] is not None:
            Xp, yp = Xp[: p["n_pool"]], yp[: p["n_pool"]]
        if p["n_test"] is not None:
            Xs, ys = Xs[: p["n_test"]], ys[: p["n_test"]]
        mean, std = image_stats(Xp)
        Xpt, Xst = images_to_tensor(Xp, mean=mean, std=std), images_to_tensor(Xs, mean=mean, std=std)
        label = f"{p['dataset']}-pool{len(Xp)}"
        if p["rdss_features"] == "pixels_pca":
            F = extract_features(Xp, "pixels_pca", pca_dim=50, device="cpu", cache_key=label)
        else:
            F = extract_features(Xp, p["rdss_features"], cache_key=label)
        import re

        info = {"data": re.sub(r".*[/\\]", "", str(ds.source)), "mean": mean.tolist(), "std": std.tolist()}
    info.update(
        n_pool=int(len(yp)),
        n_test=int(len(ys)),
        num_classes=int(max(yp.max(), ys.max()) + 1),
        rdss_features=p["rdss_features"],
    )
    out = (Xpt, yp, Xst, ys, np.asarray(F, dtype=np.float32), info)
    _DATA2[key] = out
    return out


def _make_backbone(p: dict, input_shape, num_classes: int):
    from sslkit.models import MLP, LeNetMNIST, ResNet18

    if p["model"] == "mlp":
        return MLP(input_shape[0], num_classes, hidden=(128,), dropout=0.0)
    if p["model"] == "lenet_mnist":
        return LeNetMNIST(num_classes)
    if p["model"] == "resnet18":
        return ResNet18(num_classes, in_channels=input_shape[0])
    raise ValueError(f"protocol model must be 'mlp', 'lenet_mnist' or 'resnet18', got {p['model']!r}")


#: The layers whose outputs feed LearnLoss' module, per model (the paper: the four ResNet stages).
LOSS_LAYERS = {
    "mlp": (("body.1",), True),
    "lenet_mnist": (("conv.2", "conv.5"), True),
    "resnet18": (("net.layer1", "net.layer2", "net.layer3", "net.layer4"), False),
}


def train_supervised(
    X,
    y,
    labeled,
    X_test,
    y_test,
    *,
    kind="plain",
    protocol="cpu",
    num_classes,
    mean=None,
    std=None,
    epochs=None,
    device="auto",
    seed=0,
):
    """Train one model on the rows ``labeled`` of ``X`` (tensors as the model sees them) under a Table 2
    protocol; return ``(model, metrics)``.

    ``kind``: ``"plain"`` (cross-entropy, :class:`~sslkit.algorithms.Supervised`), ``"learnloss"`` (a
    :class:`~sslkit.active.LossPredictionNet` trained with :class:`~sslkit.active.LearnLossTraining`) or
    ``"mcdal"`` (an :class:`~sslkit.active.MCDALNet` trained with :class:`~sslkit.active.MCDALTraining`; the
    rows not in ``labeled`` are its unlabeled data). Every kind sees the protocol's weak view of its batches
    (``mean`` / ``std``: the normalisation of image inputs). The model is initialised from ``seed`` (the same
    weights for every call with that seed). ``metrics``: ``test_acc`` (%), ``labeled_classes``,
    ``train_seconds``, ``steps``.
    """
    import torch

    from sslkit.active import LearnLossTraining, LossPredictionNet, MCDALNet, MCDALTraining
    from sslkit.algorithms import Supervised
    from sslkit.engine import TrainConfig, fit
    from sslkit.task import Task

    p = resolve_protocol(protocol, TABLE2_PROTOCOLS)
    labeled = np.asarray(labeled, dtype=np.int64)
    view = {"augment": p["augment"], "mean": mean, "std": std}
    X_u = None
    if kind == "plain":
        algo = Supervised(**view)
    elif kind == "learnloss":
        algo = LearnLossTraining(**view)
    elif kind == "mcdal":
        algo = MCDALTraining(**view)
        mask = np.ones(X.shape[0], dtype=bool)
        mask[labeled] = False
        X_u = X[torch.as_tensor(np.flatnonzero(mask))]
    else:
        raise ValueError(f"kind must be 'plain', 'learnloss' or 'mcdal', got {kind!r}")

    def make_model():  # the backbone, wrapped with the kind's extra heads
        backbone = _make_backbone(p, tuple(X.shape[1:]), num_classes)
        if kind == "learnloss":
            layers, with_features = LOSS_LAYERS[p["model"]]
            return LossPredictionNet(backbone, layers, tuple(X.shape[1:]), include_features=with_features)
        return MCDALNet(backbone) if kind == "mcdal" else backbone

    idx = torch.as_tensor(labeled)
    task = Task(
        X_l=X[idx],
        y_l=torch.as_tensor(y[labeled]),
        X_u=X_u,
        num_classes=num_classes,
        model_factory=make_model,
    )
    config = TrainConfig(
        optimizer="sgd",
        lr=p["lr"],
        momentum=p["momentum"],
        nesterov=False,
        weight_decay=p["weight_decay"],
        schedule=p["schedule"],
        epochs=p["epochs"] if epochs is None else epochs,
        batch_size=p["batch_size"],
        unlabeled_batch_size=p["batch_size"],
    )
    start = time.perf_counter()
    trainer = fit(task, algo, config, seed=check_seed(seed), device=device)
    metrics = {
        "test_acc": 100.0 * float(trainer.score(X_test, torch.as_tensor(y_test))),
        "labeled_classes": int(np.unique(y[labeled]).size),
        "train_seconds": round(time.perf_counter() - start, 3),
        "steps": int(trainer.iteration),
    }
    return trainer.model, metrics


_TRAIN_MEMO: dict = {}


def _train_memo(key, fn):
    """Trainings of Table 2 shared by several methods (the first cycle's plain model is the same for Random,
    CoreSet and VAAL of one seed): computed once per process. ``key = (protocol, kind, seed, labeled)``; the
    trainings of other (protocol, seed) pairs are dropped, so run a grid one seed at a time."""
    if key not in _TRAIN_MEMO:
        for k in [k for k in _TRAIN_MEMO if (k[0], k[2]) != (key[0], key[2])]:
            del _TRAIN_MEMO[k]
        _TRAIN_MEMO[key] = fn()
    return _TRAIN_MEMO[key]


def table2_grid(protocol: str = "cpu", methods=TABLE2_METHODS) -> list[dict]:
    """The configurations of a Table 2 grid (``table2_run(**config, seed=...)``): one per method of ``methods``
    (default :data:`TABLE2_METHODS`; :data:`WHOLE` is costly and run as its own part of the grid)."""
    return [{"protocol": protocol, "method": m} for m in methods]


def table2_run(method: str, seed: int, *, protocol="cpu", device="auto", data_root=None) -> dict:
    """One row of Table 2 for one seed: ``method`` (:data:`TABLE2_METHODS` or "Whole dataset") under
    ``protocol`` (:data:`TABLE2_PROTOCOLS`).

    AL methods run :func:`active_learning_loop` from ``initial`` random rows (drawn with ``seed``, the same for
    every method) for ``cycles`` picks of ``step`` rows; "SL+RDSS" trains the plain model on RDSS's selection
    (GKHR, α = 1 - 1/√m, median bandwidth, on the protocol's ``rdss_features``) of each budget; "Whole dataset"
    trains on the whole pool for ``whole_epochs`` epochs. Returns ``budgets``, ``test_acc_curve`` (%, one per
    budget), ``test_acc`` (the last), ``labeled_classes_curve``, ``select_seconds`` (all picks) and
    ``train_seconds``, plus the data / model names.
    """
    import torch

    from sslkit.active import MCDAL, VAAL, CoreSet, LearnLoss

    seed = check_seed(seed)
    p = resolve_protocol(protocol, TABLE2_PROTOCOLS)
    if method not in (*TABLE2_METHODS, WHOLE):
        raise ValueError(f"method must be one of {(*TABLE2_METHODS, WHOLE)}, got {method!r}")
    X, y, Xs, ys, F, info = table2_data(p, data_root=data_root)
    K = info["num_classes"]
    norm = {"mean": info["mean"], "std": info["std"]}
    common = {"protocol": p, "num_classes": K, "device": device, "seed": seed, **norm}
    pkey = repr(sorted((k, str(v)) for k, v in p.items()))
    budgets = table2_budgets(p)
    base = {"data": info["data"], "model": p["model"], "n_pool": info["n_pool"], "n_test": info["n_test"]}

    if method == WHOLE:
        _, mt = train_supervised(X, y, np.arange(len(y)), Xs, ys, epochs=p["whole_epochs"], **common)
        return {
            **base,
            "budgets": [len(y)],
            "test_acc_curve": [mt["test_acc"]],
            "test_acc": mt["test_acc"],
            "labeled_classes_curve": [mt["labeled_classes"]],
            "select_seconds": 0.0,
            "train_seconds": mt["train_seconds"],
            "epochs": p["whole_epochs"],
        }

    if method == "SL+RDSS":
        accs, classes, sel_sec, train_sec = [], [], 0.0, 0.0
        for b in budgets:
            idx, sec = select_indices("RDSS", F, None, b, seed=seed)
            _, mt = train_supervised(X, y, idx, Xs, ys, **common)
            accs.append(mt["test_acc"]), classes.append(mt["labeled_classes"])
            sel_sec, train_sec = sel_sec + sec, train_sec + mt["train_seconds"]
        return {
            **base,
            "budgets": budgets,
            "test_acc_curve": accs,
            "test_acc": accs[-1],
            "labeled_classes_curve": classes,
            "select_seconds": round(sel_sec, 4),
            "train_seconds": round(train_sec, 3),
            "rdss_features": info["rdss_features"],
        }

    kind = {"LearnLoss": "learnloss", "MCDAL": "mcdal"}.get(method, "plain")

    def train(labeled):
        key = (pkey, kind, seed, labeled.tobytes())
        model, mt = _train_memo(key, lambda: train_supervised(X, y, labeled, Xs, ys, kind=kind, **common))
        return model, mt

    rng = np.random.default_rng([seed, 1])

    def select(model, labeled, unlabeled, k):
        Xu, Xl = X[torch.as_tensor(unlabeled)], X[torch.as_tensor(labeled)]
        if method == "Random":
            return rng.choice(unlabeled.size, k, replace=False)
        if method == "CoreSet":
            return CoreSet(k, device=next(model.parameters()).device).fit(Xu, Xl, model=model).indices_.cpu().numpy()
        if method == "VAAL":
            v = p["vaal"]
            iters = v["epochs"] * -(-labeled.size // v["batch_size"])
            sel = VAAL(
                k,
                latent_dim=v["latent_dim"],
                channels=v["channels"],
                iterations=iters,
                batch_size=v["batch_size"],
                seed=seed + labeled.size,
                device=device,
            )
            return sel.fit(Xl, Xu).indices_.cpu().numpy()
        if method == "LearnLoss":
            return LearnLoss(k, subset=p["subset"], seed=seed + labeled.size).fit(model, Xu).indices_.cpu().numpy()
        return MCDAL(k).fit(model, Xu).indices_.cpu().numpy()

    history, labeled = active_learning_loop(len(y), p["initial"], [p["step"]] * p["cycles"], train, select, seed=seed)
    return {
        **base,
        "budgets": [h["n_labeled"] for h in history],
        "test_acc_curve": [h["test_acc"] for h in history],
        "test_acc": history[-1]["test_acc"],
        "labeled_classes_curve": [h["labeled_classes"] for h in history],
        "select_seconds": round(sum(h.get("select_seconds", 0.0) for h in history), 4),
        "train_seconds": round(sum(h["train_seconds"] for h in history), 3),
    }
