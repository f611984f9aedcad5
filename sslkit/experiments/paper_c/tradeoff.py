"""Paper C (Retrieve), traditional SSL: the accuracy / speed-up trade-off of Figure 4 (a-e) and Tables 5-10.

One job: train an SSL algorithm (VAT, Mean Teacher, FixMatch) on the full unlabeled set or on a coreset
re-chosen every R epochs (Random, CRAIG, GradMatch, Retrieve; :class:`sslkit.callbacks.CoresetSelection`)
and record the test accuracy and the wall-clock, selection included. Full-EarlyStop is the Full run stopped
at another run's wall-clock; it is read off the Full run's per-epoch curve (:func:`full_earlystop`).

Protocols (:data:`PROTOCOLS`):

* ``"paper_cifar10"`` / ``"paper_svhn"`` -- paper C §4 / App. F.4: WRN-28-2, Nesterov SGD lr 0.03, weight
  decay 5e-4, momentum 0.9, cosine schedule, batches 50 / 50, 500 (CIFAR-10) / 340 (SVHN) epochs, R = 20,
  κ = 0.5, 4 000 / 1 000 labels. For a GPU. The paper trains Full with Adam "following the SSL papers"; we
  train every method with the same SGD (a difference, so that the comparison isolates the coreset).
* ``"cpu"`` -- a CPU stand-in that is a real experiment: MNIST, 100 labels (10 per class), 10 000 unlabeled,
  5 000 test, paper C's two-layer MNIST CNN (App. F.4), lr 0.03, 40 epochs, R = 10, κ = 0.5.
* ``"quick"`` -- minutes on 2 cores with no data directory: scikit-learn's 8x8 digits as 64 standardised
  features, an MLP, 20 epochs, R = 5.

Epochs and the warm start (§3.4-3.5). A Full run has ``T`` epochs of ``ceil(m / B)`` iterations. A coreset
run with budget ``k = fraction · m``: ``T_w = κ T k / m`` warm epochs on the full set, then ``(1 − κ) T``
epochs over the coreset (``ceil(k / B)`` iterations each), so its iterations are ``≈ T k / B`` -- the
budget CORDS uses (``κ`` of ``fraction ×`` the full iterations on the full set, then the rest on subsets);
ideally ``1 / fraction`` times faster than Full. The §4 phrase "training for 50% epochs on the entire
unlabeled set" read literally (κ T full epochs) bounds the speed-up by ``1 / (κ + (1 − κ) fraction)``
(1.8x at 10 %), below the paper's reported 2.7-4.4x, so the book uses the §3.4 reading. Without warm start
(``warm=False``) a random coreset is trained from epoch 1 and re-selected every R epochs for T epochs.
"""

from __future__ import annotations

import functools
import math
import time

import numpy as np
import torch

from sslkit.algorithms import VAT, FixMatch, Hook, MeanTeacher
from sslkit.callbacks import CoresetSelection, warm_start_epochs
from sslkit.data import images_to_tensor, load_dataset, make_split, standardize
from sslkit.engine import USB_SGD, TrainConfig, fit
from sslkit.experiments import paper_numbers
from sslkit.models import MLP, PaperCMNISTCNN, wrn28_2
from sslkit.task import Task

__all__ = [
    "PROTOCOL_VERSION",
    "PAPER_CLAIMS",
    "PAPER_TABLES",
    "ALGORITHMS",
    "EXTRA_METHODS",
    "FRACTIONS",
    "METHODS",
    "PROTOCOLS",
    "build_task",
    "full_earlystop",
    "make_algorithm",
    "make_model",
    "run_schedule",
    "tradeoff_grid",
    "tradeoff_rows",
    "tradeoff_run",
    "MAIN_KEYS",
    "cached_task",
    "protocol_of",
    "full_by_seed",
    "train_with_curve",
    "trainer_options",
]

#: Protocol version of the records that this module's run functions make: notebooks and drivers pass it as
#: ``run_grid(..., version=PROTOCOL_VERSION)`` and each record stores it (``protocol_version``; records without
#: it are version 1). Bump it with a change that alters those runs' results: the runner then refuses to reuse
#: the older records silently (:class:`sslkit.experiments.runs.store.StaleResultsError`).
PROTOCOL_VERSION = 1

ALGORITHMS = ("vat", "mean_teacher", "fixmatch")
#: the methods that are trained (Full-EarlyStop is derived from the Full run)
METHODS = ("full", "random", "craig", "gradmatch", "retrieve")
#: coreset methods outside Figure 4's grid: the SSL Bayesian coreset (GIGA) of Figure 5 and per-class Retrieve
EXTRA_METHODS = ("bayesian", "retrieve_per_class")
FRACTIONS = (0.1, 0.2, 0.3)

#: Tables 5-10: (algorithm, dataset, method, fraction) -> {"mean", "std", "hours", "tables"} (Full repeated
#: under every budget, as printed)
PAPER_TABLES = {
    (r["algorithm"], r["dataset"], r["method"], r["fraction"]): {
        "mean": r["mean"],
        "std": r["std"],
        "hours": r["hours"],
        "tables": (r["table_acc"], r["table_std"]),
    }
    for r in paper_numbers.load("c_tables5_10")
}
#: the speed-up / accuracy-loss pairs quoted in §4 ("Retrieve achieves speedup gains of 2.7x ...")
PAPER_CLAIMS = {
    (r["algorithm"], r["dataset"]): {"speedup": r["speedup"], "degradation": r["degradation"]}
    for r in paper_numbers.load("c_claims")
}

PROTOCOLS = {
    "quick": {
        "dataset": "digits",
        "labeled_per_class": 10,
        "n_unlabeled": 1200,
        "n_test": 400,
        "model": "mlp",
        "epochs": 20,
        "every": 5,
        "kappa": 0.5,
        "batch_size": 50,
        "vat_eps": 1.0,
        **USB_SGD,
    },
    "cpu": {
        "dataset": "mnist",
        "labeled_per_class": 10,
        "n_unlabeled": 10000,
        "n_test": 5000,
        "model": "paper_c_cnn",
        "epochs": 40,
        "every": 10,
        "kappa": 0.5,
        "batch_size": 50,
        "vat_eps": 2.0,
        **USB_SGD,
    },
    "paper_cifar10": {
        "dataset": "cifar10",
        "labeled_per_class": 400,
        "n_unlabeled": None,
        "n_test": None,
        "model": "wrn28_2",
        "epochs": 500,
        "every": 20,
        "kappa": 0.5,
        "batch_size": 50,
        "vat_eps": 6.0,
        **USB_SGD,
    },
    "paper_svhn": {
        "dataset": "svhn",
        "labeled_per_class": 100,
        "n_unlabeled": None,
        "n_test": None,
        "model": "wrn28_2",
        "epochs": 340,
        "every": 20,
        "kappa": 0.5,
        "batch_size": 50,
        "vat_eps": 6.0,
        **USB_SGD,
    },
}
_MEANS = {
    "mnist": ([0.1307], [0.3081]),
    "cifar10": ([0.4914, 0.4822, 0.4465], [0.2470, 0.2435, 0.2616]),
    "svhn": ([0.4377, 0.4438, 0.4728], [0.1980, 0.2010, 0.1970]),
}


def build_task(protocol: str, seed: int) -> Task:
    """The :class:`~sslkit.task.Task` of one run: ``X_l, y_l, X_u, X_test, y_test`` (float32 tensors / int64
    arrays), the number of classes, and in ``meta`` the hidden labels ``y_u`` of the unlabeled set (only for
    diagnostics such as a coreset's class proportions), the normalisation (``mean``, ``std``) of image inputs and
    the data's provenance (``source``, ``notes``).

    The labeled set is class-balanced (``labeled_per_class``); the unlabeled set is drawn from the rest of
    the training split (all of it when ``n_unlabeled`` is None, as in paper C: the labeled images are not
    in the unlabeled set here, unlike CORDS, which appends them); the official test split where one
    exists."""
    p = protocol_of(protocol)
    ds = load_dataset(p["dataset"])
    has_test = ds.X_test is not None
    split = make_split(
        ds.y, p["labeled_per_class"], n_unlabeled=p["n_unlabeled"], n_test=0 if has_test else p["n_test"], seed=seed
    )
    if has_test:
        rng = np.random.default_rng(seed)
        test = (
            np.arange(ds.X_test.shape[0])
            if p["n_test"] is None
            else np.sort(rng.choice(ds.X_test.shape[0], p["n_test"], replace=False))
        )
        X_test_raw, y_test = ds.X_test[test], ds.y_test[test]
    else:
        X_test_raw, y_test = ds.X[split.test], ds.y[split.test]
    mean = std = None
    if p["model"] == "mlp":
        X_l, X_u, X_test = (
            torch.as_tensor(a, dtype=torch.float32)
            for a in standardize(
                ds.X[split.labeled].reshape(len(split.labeled), -1).astype(np.float32),
                ds.X[split.unlabeled].reshape(len(split.unlabeled), -1).astype(np.float32),
                X_test_raw.reshape(len(X_test_raw), -1).astype(np.float32),
            )
        )
    else:
        mean, std = _MEANS[p["dataset"]]
        X_l, X_u, X_test = (
            images_to_tensor(a, mean, std) for a in (ds.X[split.labeled], ds.X[split.unlabeled], X_test_raw)
        )
    return Task(
        X_l=X_l,
        y_l=ds.y[split.labeled],
        X_u=X_u,
        X_test=X_test,
        y_test=y_test,
        num_classes=ds.num_classes,
        # the unlabeled set's hidden labels ``y_u`` are for diagnostics only
        meta={"y_u": ds.y[split.unlabeled], "mean": mean, "std": std, "source": ds.source, "notes": ds.notes},
    )


@functools.lru_cache(maxsize=2)
def cached_task(protocol: str, seed: int) -> Task:
    """:func:`build_task` of ``(protocol, seed)``, built once and shared by the runs of that seed in this process
    (a run does not modify its task). Two are kept: a grid runs seed by seed."""
    return build_task(protocol, seed)


def protocol_of(protocol) -> dict:
    if protocol not in PROTOCOLS:
        raise ValueError(f"protocol must be one of {tuple(PROTOCOLS)}, got {protocol!r}")
    return PROTOCOLS[protocol]


def trainer_options(p: dict) -> dict:
    """The :class:`~sslkit.engine.Trainer` options every run of protocol ``p`` (a trade-off or robust protocol's
    dict) shares: the batch sizes, the optimiser settings of :data:`sslkit.engine.USB_SGD` (paper C App. C.3) and
    weight decay on norm and bias parameters except for WRN-28-2 (USB's ``bn_wd_skip`` there)."""
    return {
        "batch_size": p["batch_size"],
        "unlabeled_batch_size": p["batch_size"],
        "decay_norm_and_bias": p["model"] != "wrn28_2",
        **{key: p[key] for key in USB_SGD},
    }


def make_model(protocol: str, task: Task, seed: int) -> torch.nn.Module:
    """The protocol's network, initialised under ``seed``."""
    p = protocol_of(protocol)
    torch.manual_seed(seed)
    k = task.num_classes
    if p["model"] == "mlp":
        return MLP(task.X_l.shape[1], k, hidden=(128,))
    if p["model"] == "paper_c_cnn":
        return PaperCMNISTCNN(k)
    return wrn28_2(k)


def make_algorithm(name: str, protocol: str, task: Task):
    """VAT (ε of the protocol, λ = 1), Mean Teacher (λ = 8, ramp-up over 40 % of the steps) or FixMatch
    (τ = 0.95, λ = 1), with the views of the data family."""
    p = protocol_of(protocol)
    views = {"mean": task.meta["mean"], "std": task.meta["std"]} if task.meta["mean"] is not None else {}
    if name == "vat":
        return VAT(p["vat_eps"])
    if name == "mean_teacher":
        return MeanTeacher(**views)
    if name == "fixmatch":
        return FixMatch(0.95, **views)
    raise ValueError(f"algorithm must be one of {ALGORITHMS}, got {name!r}")


def run_schedule(
    protocol: str, method: str, fraction: float, n_unlabeled: int, *, warm: bool = True, extend: float = 1.0
) -> dict:
    """Epochs, warm epochs, coreset size and planned iterations of one run (module docstring).

    ``extend`` (≥ 1, coreset runs only): the coreset phase lasts ``extend`` times its epochs -- the
    "extended" runs of Figure 4 (g-h) and App. G.3 (Figs. 8-9), where Retrieve trains longer than its budget;
    the warm start is unchanged and the cosine schedule spans the longer run."""
    p = protocol_of(protocol)
    T, B = p["epochs"], p["batch_size"]
    if isinstance(extend, bool) or not isinstance(extend, (int, float)) or not math.isfinite(extend) or extend < 1:
        raise ValueError(f"extend must be a finite number >= 1, got {extend!r}")
    if method == "full":
        if extend != 1:
            raise ValueError("extend applies to coreset runs; a Full run has the protocol's epochs")
        return {"epochs": T, "warm_epochs": T, "k": n_unlabeled, "total_steps": T * math.ceil(n_unlabeled / B)}
    if not 0 < fraction < 1:
        raise ValueError(f"fraction must be in (0, 1), got {fraction!r}")
    k = int(round(fraction * n_unlabeled))
    warm_epochs = warm_start_epochs(p["kappa"], T, fraction) if warm else 0
    subset_epochs = T - int(round(p["kappa"] * T)) if warm else T
    subset_epochs = int(round(extend * subset_epochs))
    steps = warm_epochs * math.ceil(n_unlabeled / B) + subset_epochs * math.ceil(k / B)
    return {"epochs": warm_epochs + subset_epochs, "warm_epochs": warm_epochs, "k": k, "total_steps": steps}


def train_with_curve(model, algorithm, task: Task, *, selection=None, hooks=(), **trainer_options):
    """Fit ``model`` with ``algorithm`` on ``task`` (``X_l, y_l, X_u``) through :func:`sslkit.engine.fit`, with
    ``selection`` (a :class:`~sslkit.callbacks.CoresetSelection` or None: its hooks run first), ``hooks`` and the
    Trainer options ``trainer_options`` (``seed`` and ``device`` among them), recording after every epoch one
    ``[seconds, test_acc, cpu_seconds]`` point on ``X_test, y_test``: training + selection wall-clock (the
    selection's ``seconds_``), accuracy in %, and the process CPU time since the first epoch began with the
    evaluations left out. Returns ``(trainer, curve)``; paper C's traditional and robust runs
    (:mod:`~sslkit.experiments.paper_c_robust`) both train through it."""
    curve, eval_cpu, start = [], [0.0], [None]

    def record_curve(tr):
        c0 = time.process_time()
        spent = tr.timings_["train"] + selection_seconds(selection)
        acc = round(100.0 * tr.score(task.X_test, task.y_test), 4)
        cpu = time.process_time() - start[0] - eval_cpu[0]
        eval_cpu[0] += time.process_time() - c0
        curve.append([round(spent, 4), acc, round(cpu, 4)])

    def start_clock(tr):
        start[0] = time.process_time()

    own = [] if selection is None else selection.hooks()
    hooks = [
        Hook(start_clock, every=None, when="before", name="cpu_clock"),
        *own,
        *hooks,
        Hook(record_curve, name="curve"),
    ]
    seed, device = trainer_options.pop("seed", 0), trainer_options.pop("device", "auto")
    tr = fit(task, algorithm, TrainConfig(**trainer_options), seed=seed, device=device, hooks=hooks, model=model)
    return tr, curve


def selection_seconds(selection) -> float:
    """The wall-clock of ``selection``'s rounds so far (its ``seconds_``); 0 without a selection (a Full run)."""
    return 0.0 if selection is None else selection.seconds_


def tradeoff_run(
    *, protocol, algorithm, method, fraction, seed, warm=True, extend=1.0, device="auto", task=None, **selection_options
) -> dict:
    """Train one (protocol, algorithm, method, fraction, seed) and return its metrics.

    Metrics: ``test_acc`` (%, final model; the EMA teacher for Mean Teacher), ``seconds`` (training +
    selection wall-clock, evaluation excluded), ``cpu_seconds`` (the same in process CPU time, which other
    processes on a shared machine do not inflate; with one thread it is the compute the run needed),
    ``selection_seconds``, ``selection_cpu_seconds``, ``n_selections``, ``n_flat_selections`` (selections whose
    unlabeled gradients were all zero: a saturated model; records before 2026-12-04 lack it), ``epochs``,
    ``iterations``, ``k``, ``warm_epochs`` and ``curve``: one ``[seconds, test_acc, cpu_seconds]`` per epoch.
    ``selection_options`` go to :class:`~sslkit.callbacks.CoresetSelection` (e.g. ``cords_compatible``);
    ``extend``: see :func:`run_schedule`.
    """
    if method not in METHODS + EXTRA_METHODS:
        raise ValueError(f"method must be one of {METHODS + EXTRA_METHODS}, got {method!r}")
    p = protocol_of(protocol)
    task = task if task is not None else cached_task(protocol, seed)
    n_u = task.X_u.shape[0]
    sched = run_schedule(protocol, method, fraction, n_u, warm=warm, extend=extend)
    selector = None
    if method != "full":
        selector = CoresetSelection(
            method,
            sched["k"],
            every=p["every"],
            warm_epochs=sched["warm_epochs"],
            batch_size=p["batch_size"],
            seed=seed,
            **selection_options,
        )
    mt = algorithm == "mean_teacher"
    tr, curve = train_with_curve(
        make_model(protocol, task, seed),
        make_algorithm(algorithm, protocol, task),
        task,
        selection=selector,
        epochs=sched["epochs"],
        iterations_per_epoch="unlabeled",
        total_steps=sched["total_steps"],
        ema_decay=0.95 if mt else None,
        ema_warmup=mt,
        seed=seed,
        device=device,
        **trainer_options(p),
    )
    sel = selection_seconds(selector)
    sel_cpu = 0.0 if selector is None else sum(x["cpu_seconds"] for x in selector.selections_)
    return {
        "test_acc": curve[-1][1],
        "seconds": round(tr.timings_["train"] + sel, 4),
        "cpu_seconds": curve[-1][2],
        "selection_seconds": round(sel, 4),
        "selection_cpu_seconds": round(sel_cpu, 4),
        "n_selections": 0 if selector is None else len(selector.selections_),
        "n_flat_selections": 0 if selector is None else sum(x["flat"] for x in selector.selections_),
        "epochs": tr.epochs_run_,
        "iterations": tr.iteration,
        "k": sched["k"],
        "warm_epochs": sched["warm_epochs"] if method != "full" else None,
        "curve": curve,
    }


def full_earlystop(full_metrics: dict, seconds: float, clock: str = "seconds") -> float:
    """Full-EarlyStop's test accuracy: the Full run's accuracy after its last epoch that ended within
    ``seconds`` of ``clock`` ("seconds": wall-clock, "cpu_seconds": process CPU time) -- its first epoch's
    when even that took longer."""
    col = {"seconds": 0, "cpu_seconds": 2}[clock]
    curve = full_metrics["curve"]
    within = [point[1] for point in curve if point[col] <= seconds]
    return within[-1] if within else curve[0][1]


def tradeoff_grid(protocol: str, algorithms=("vat",), fractions=FRACTIONS, methods=METHODS) -> list[dict]:
    """The run configurations of the trade-off figure: one Full run per algorithm (``fraction`` 1.0), then
    every coreset method at every budget -- Full first, so Full-EarlyStop can be read off it."""
    protocol_of(protocol)
    for name, values, allowed in (("algorithms", algorithms, ALGORITHMS), ("methods", methods, METHODS)):
        if isinstance(values, str) or not set(values) <= set(allowed):
            raise ValueError(f"{name} must be a list of {allowed}, got {values!r}")
    grid = [{"protocol": protocol, "algorithm": a, "method": "full", "fraction": 1.0} for a in algorithms]
    grid += [
        {"protocol": protocol, "algorithm": a, "method": m, "fraction": f}
        for a in algorithms
        for f in fractions
        for m in methods
        if m != "full"
    ]
    return grid


MAIN_KEYS = {"protocol", "algorithm", "method", "fraction"}


def full_by_seed(records) -> dict:
    """``(protocol, algorithm, seed) -> metrics`` of the main grid's Full runs in ``records``."""
    return {
        (r["config"]["protocol"], r["config"]["algorithm"], r["seed"]): r["metrics"]
        for r in records
        if set(r["config"]) == MAIN_KEYS and r["config"]["method"] == "full"
    }


def tradeoff_rows(records, clock: str = "seconds") -> list[dict]:
    """One row per (algorithm, method, fraction, seed) with the speed-up and the accuracy degradation
    relative to the Full run of the same algorithm and seed, plus Full-EarlyStop rows read off that Full
    run at Retrieve's wall-clock of the same budget and seed (paper C §4). Rows whose Full run is missing are
    left out. ``speedup_no_selection`` leaves the selection time out (what CORDS' logs report, D6).
    ``clock``: "seconds" (wall-clock) or "cpu_seconds" (process CPU time) for every time and ratio."""
    if clock not in ("seconds", "cpu_seconds"):
        raise ValueError(f"clock must be 'seconds' or 'cpu_seconds', got {clock!r}")
    sel_key = "selection_seconds" if clock == "seconds" else "selection_cpu_seconds"
    recs = [r for r in records if set(r["config"]) == MAIN_KEYS]  # the main grid, not its variants
    full = full_by_seed(recs)
    rows = []
    for r in recs:
        c, m = r["config"], r["metrics"]
        f = full.get((c["protocol"], c["algorithm"], r["seed"]))
        if f is None:
            continue
        base = {
            "protocol": c["protocol"],
            "algorithm": c["algorithm"],
            "seed": r["seed"],
            "fraction": c["fraction"] if c["method"] != "full" else None,
        }
        if c["method"] == "full":
            rows.append(
                {
                    **base,
                    "method": "full",
                    "test_acc": m["test_acc"],
                    "seconds": m[clock],
                    "speedup": 1.0,
                    "speedup_no_selection": 1.0,
                    "degradation": 0.0,
                }
            )
            continue
        rows.append(
            {
                **base,
                "method": c["method"],
                "test_acc": m["test_acc"],
                "seconds": m[clock],
                "speedup": f[clock] / m[clock],
                "speedup_no_selection": f[clock] / (m[clock] - m[sel_key]),
                "degradation": f["test_acc"] - m["test_acc"],
            }
        )
        if c["method"] == "retrieve":
            acc = full_earlystop(f, m[clock], clock)
            rows.append(
                {
                    **base,
                    "method": "full_earlystop",
                    "test_acc": acc,
                    "seconds": m[clock],
                    "speedup": f[clock] / m[clock],
                    "speedup_no_selection": None,
                    "degradation": f["test_acc"] - acc,
                }
            )
    return rows
