"""Paper A, Appendix D (Tables 3–10): FixMatch, covariance-set size, equal-covariance diagnostic, nn-correction.

One run at a time, on top of :mod:`sslkit.experiments.paper_a` (same data protocol, models and training
protocol of App. C; see that module's docstring for every data choice):

* :func:`run_fixmatch` -- Table 3 (App. D.1): FixMatch with confidence threshold τ ∈ {0.8, 0.9, 0.95},
  λ_U = 1, App. D.1's augmentations; the threshold of a row is chosen afterwards by the highest mean
  best-validation accuracy (:func:`select_threshold`).
* :func:`run_cov_size` -- Table 4 (App. D.2): Ours (Iter) with a* estimated on a held-out *covariance set* of
  ``cov_per_class`` labeled examples per class instead of the validation set.
* :func:`run_ec_diagnostic` -- Table 5 (App. D.3): test accuracy of Ours (Iter) and the "Cov. rel. Fro."
  of its trained model (:func:`cov_rel_fro`).
* :func:`run_nn` -- Tables 6–10 (App. D.4): Ours (Iter) with the non-negative correction on / off.
* :data:`PAPER_TABLE3` ... :data:`PAPER_TABLE10` -- the paper's numbers (:mod:`sslkit.experiments.paper_numbers`).

Choices where Appendix D is silent (also stated in the notebooks ``a_fixmatch`` and ``a_ablations``):

* **Table 3 rows.** "Bal. (60)" / "Bal. (200)" / "Imb. (60)" / "Imb. (200)" of the binary tasks are Table 1's
  (30,30) / (100,100) / (15,45) / (50,150) (:data:`TABLE3_BINARY_SETTINGS`). FixMatch's supervised term is
  plain cross-entropy on the weakly augmented labeled batch (as in FixMatch), n_U and validation as Table 1/2.
* **Table 4 covariance set.** ``cov_per_class`` examples of every class, drawn (seeded) from the training
  pool minus the validation, labeled and unlabeled rows; the validation set is still used for early stopping.
  A class with fewer than 2 covariance examples (``cov_per_class = 1``) has no sample covariance: its C_m is
  the covariance of *all* covariance examples pooled (labels ignored) -- for that class the
  equal-covariance approximation. Shrinkage 0.5 and Tikhonov 1e-4 as App. C.
* **Table 5.** The paper does not name the method behind "Test acc."; its numbers sit between Table 2's
  Ours (Iter) and Ours (EC). We use Ours (Iter) (``method=`` allows "Ours (EC)"). Σ_i is the covariance of
  the loss vector ``(l(g(x), 1), ..., l(g(x), k))`` (cross-entropy) over the *test* rows of class i, at the
  best-validation weights, without shrinkage (the C_i of Thm 2 at the trained g); the diagnostic averages
  the relative Frobenius distance over all pairs i < j of classes with at least 2 test rows.
* **Tables 6–10.** "NN on" is Ours (Iter) of Tables 1–2 (:func:`sslkit.experiments.paper_a.run_one`); "NN off"
  the same algorithm with ``nonnegative=False`` (raw unbiased R̂_lin^a back-propagated). Table 8's
  "Labeled 20/50/150" (10 classes) and "10/20/50" (7 classes) are per-class counts: the balanced regimes.
  CIFAR-10 (10 classes, not in Table 2) follows MNIST's protocol (validation 200, n_U 5000, MNIST's regime
  counts) with the LeNet-like CIFAR CNN.
"""

from __future__ import annotations

import numpy as np
import torch

from sslkit._checks import check_count, check_seed
from sslkit.experiments import paper_a
from sslkit.experiments.paper_numbers import load as load_paper_numbers
from sslkit.experiments.paper_numbers import mean_std

#: Protocol version of the records that this module's run functions make: notebooks and drivers pass it as
#: ``run_grid(..., version=PROTOCOL_VERSION)`` and each record stores it (``protocol_version``; records without
#: it are version 1). Bump it with a change that alters those runs' results: the runner then refuses to reuse
#: the older records silently (:class:`sslkit.experiments.runs.store.StaleResultsError`).
PROTOCOL_VERSION = 1

FIXMATCH_THRESHOLDS = (0.8, 0.9, 0.95)
#: Table 3's binary rows -> Table 1's settings (n_1, n_2).
TABLE3_BINARY_SETTINGS = {
    "Bal. (60)": "(30,30)",
    "Bal. (200)": "(100,100)",
    "Imb. (60)": "(15,45)",
    "Imb. (200)": "(50,150)",
}
TABLE3_DATASETS = ("adult", "banknote", "mnist_4v9", "breast_cancer", "credit_default", "mnist")
TABLE3_MNIST_SETTINGS = (
    "Bal. (200)",
    "Bal. (500)",
    "Bal. (1500)",
    "Mild (500)",
    "Mild (1500)",
    "Sev. (500)",
    "Sev. (1500)",
)
#: Table 4: covariance examples per class.
COV_SIZES = (1, 2, 3, 5, 10, 20, 50, 100, 1000)
NN_MODES = ("on", "off")
DATASETS = paper_a.TABLE1_DATASETS + paper_a.TABLE2_DATASETS + paper_a.EXTRA_DATASETS
#: The task builder and its sizes are paper A's (CIFAR-10's 10-class task is one of its datasets).
build_task, n_val_of, n_unlabeled_of = paper_a.build_task, paper_a.n_val_of, paper_a.n_unlabeled_of


# ------------------------------------------------------------------------------------------------------
# data: Table 3's settings, extra rows of a task's source and its image statistics
# ------------------------------------------------------------------------------------------------------


def table3_setting(dataset: str, setting: str) -> str:
    """Table 3's row label -> the setting :func:`paper_a.build_task` understands ("Imb. (60)" -> "(15,45)");
    explicit per-class counts (a list, e.g. ``[45, 15]``) are passed through."""
    if isinstance(setting, (list, tuple)):
        return [check_count(c, "setting[]") for c in setting]
    if dataset in paper_a.TABLE1_DATASETS:
        if setting not in TABLE3_BINARY_SETTINGS:
            raise ValueError(
                f"Table 3 setting of binary {dataset!r} must be one of {tuple(TABLE3_BINARY_SETTINGS)}, got {setting!r}"
            )
        return TABLE3_BINARY_SETTINGS[setting]
    return setting


def _training_rows(task, n_rows: int) -> np.ndarray:
    """Rows of the source that are neither test nor validation (the "training pool" the features are
    normalised with in :func:`paper_a.build_task`)."""
    idx = task.indices
    return np.setdiff1d(np.arange(n_rows), np.concatenate([idx["test"], idx["val"]]))


def image_stats(task, data_root=None):
    """The per-channel ``(mean, std)`` the images of ``task`` were normalised with (for FixMatch's
    de-/re-normalisation around its augmentations)."""
    from sslkit.data import image_stats as stats

    ds = paper_a.source_dataset(task.dataset, data_root)
    return stats(ds.X[_training_rows(task, ds.X.shape[0])])


def extra_rows(task, rows, data_root=None):
    """``(X, y)`` tensors for more rows of the source's training data, preprocessed exactly as ``task``'s
    (z-scores of the training pool for tabular data, the pool's per-channel normalisation for images)."""
    from sslkit.data import images_to_tensor, standardize

    ds = paper_a.source_dataset(task.dataset, data_root)
    rows = np.asarray(rows, np.int64)
    y = torch.as_tensor(np.asarray(ds.y, np.int64)[rows])
    if task.dataset in paper_a.IMAGE:
        mean, std = image_stats(task, data_root)
        return images_to_tensor(ds.X[rows], mean, std), y
    _, X = standardize(ds.X[_training_rows(task, ds.X.shape[0])], ds.X[rows])
    return torch.as_tensor(X, dtype=torch.float32), y


def covariance_rows(task, cov_per_class: int, seed: int, data_root=None) -> np.ndarray:
    """Table 4's covariance set: ``cov_per_class`` rows of every class (seeded), drawn from the training pool
    minus the validation, labeled and unlabeled rows of ``task``. ValueError when a class has too few."""
    cov_per_class = check_count(cov_per_class, "cov_per_class", allow_zero=False)
    ds = paper_a.source_dataset(task.dataset, data_root)
    y = np.asarray(ds.y, np.int64)
    idx = task.indices
    free = np.setdiff1d(_training_rows(task, y.size), np.concatenate([idx["labeled"], idx["unlabeled"]]))
    rng = np.random.default_rng([check_seed(seed), 4])
    out = []
    for c in range(task.num_classes):
        rows = free[y[free] == c]
        if rows.size < cov_per_class:
            raise ValueError(
                f"class {c} of {task.dataset} has only {rows.size} rows outside the labeled, unlabeled, "
                f"validation and test sets; cov_per_class={cov_per_class} is too large"
            )
        out.append(rng.choice(rows, size=cov_per_class, replace=False))
    return np.sort(np.concatenate(out))


# ------------------------------------------------------------------------------------------------------
# the diagnostic of Table 5 and the covariance-set algorithm of Table 4
# ------------------------------------------------------------------------------------------------------


def cov_rel_fro(covariances, classes=None) -> float:
    """App. D.3's "Cov. rel. Fro.": mean over pairs i < j of ``‖Σ_i − Σ_j‖_F / ((‖Σ_i‖_F + ‖Σ_j‖_F) / 2)``.

    ``covariances`` is a (k, k, k) stack of class-conditional covariance matrices of the loss vector (e.g.
    :func:`sslkit.risk.loss_covariances`); ``classes`` restricts the pairs to those classes (default all).
    0 when all are equal; at most 2 (triangle inequality). A pair of two zero matrices counts 0.
    """
    C = np.asarray(torch.as_tensor(covariances).detach().cpu().double().numpy())
    if C.ndim != 3 or C.shape[1] != C.shape[2] or C.shape[0] < 2:
        raise ValueError(f"covariances must be a stack (k, d, d) of at least 2 square matrices, got shape {C.shape}")
    if not np.isfinite(C).all():
        raise ValueError("covariances contain NaN or infinite values")
    classes = list(range(C.shape[0])) if classes is None else [int(c) for c in classes]
    if len(classes) < 2 or len(set(classes)) != len(classes) or min(classes) < 0 or max(classes) >= C.shape[0]:
        raise ValueError(f"classes must be at least 2 distinct indices in [0, {C.shape[0]}), got {classes}")
    norms = np.linalg.norm(C.reshape(C.shape[0], -1), axis=1)
    values = []
    for a, i in enumerate(classes):
        for j in classes[a + 1 :]:
            den = (norms[i] + norms[j]) / 2
            values.append(0.0 if den == 0 else float(np.linalg.norm(C[i] - C[j]) / den))
    return float(np.mean(values))


def _eval_losses(model, X: torch.Tensor, device) -> torch.Tensor:
    """(n, k) cross-entropy loss matrix ``l(g(x), j)`` of ``model`` in eval mode (chunks of 1024)."""
    from sslkit.algorithms.base import eval_logits
    from sslkit.risk import loss_matrix

    return loss_matrix(eval_logits(model, X.to(device)).cpu().double(), "ce")


def loss_covariance_diagnostic(model, X, y, num_classes: int, device="cpu") -> dict:
    """``{"cov_rel_fro", "classes_used"}`` of ``model`` on ``(X, y)``: raw class covariances (no shrinkage) of
    the CE loss vector; classes with fewer than 2 rows are left out of the pairs."""
    L = _eval_losses(model, X, device).numpy()
    y = torch.as_tensor(y).cpu().numpy()
    counts = np.bincount(y, minlength=num_classes)
    used = [c for c in range(num_classes) if counts[c] >= 2]
    if len(used) < 2:
        raise ValueError(f"fewer than 2 classes have 2 or more rows (counts {counts.tolist()})")
    C = np.zeros((num_classes, num_classes, num_classes))
    for c in used:  # = sslkit.risk.loss_covariances (ddof 1, no shrinkage) on the classes that have one
        C[c] = np.cov(L[y == c].T, ddof=1)
    return {"cov_rel_fro": cov_rel_fro(C, used), "classes_used": len(used)}


def _pooled_covariances(L: np.ndarray, y: np.ndarray, k: int, shrinkage: float) -> np.ndarray:
    """C_m of every class (ddof 1, App. C diagonal shrinkage); a class with < 2 rows gets the covariance of
    all rows pooled (labels ignored)."""

    def shrink(S):
        return (1 - shrinkage) * S + shrinkage * np.diag(np.diag(S))

    pooled = shrink(np.cov(L.T, ddof=1)) if L.shape[0] >= 2 else np.zeros((k, k))
    out = []
    for m in range(k):
        rows = L[y == m]
        out.append(shrink(np.cov(rows.T, ddof=1)) if rows.shape[0] >= 2 else pooled)
    return np.stack(out)


def ours_iter_with_covariance_set(prior, n_per_class, X_cov, y_cov, *, warmup_epochs=20, nonnegative=True):
    """Ours (Iter) (Algorithm 1, App. C) whose a* is estimated on ``(X_cov, y_cov)`` instead of the validation
    set (Table 4). Classes with fewer than 2 covariance rows: pooled covariance (module docstring)."""
    from sslkit.algorithms.risk_rewrite import OursIter
    from sslkit.risk import optimal_a

    class OursIterCovSet(OursIter):
        def estimate_a(self, model, X_val, y_val):
            L = _eval_losses(model, X_cov, X_val.device).numpy()
            C = _pooled_covariances(L, np.asarray(y_cov), self.k, self.shrinkage)
            return np.asarray(optimal_a(C, self.prior, self.n_per_class_, ridge=self.ridge), dtype=np.float64)

    return OursIterCovSet(prior, n_per_class=n_per_class, warmup_epochs=warmup_epochs, nonnegative=nonnegative)


# ------------------------------------------------------------------------------------------------------
# one run
# ------------------------------------------------------------------------------------------------------


def _task(dataset, setting, seed, scale, data_root):
    if scale not in paper_a.PROTOCOL:
        raise ValueError(f"scale must be one of {tuple(paper_a.PROTOCOL)}, got {scale!r}")
    return build_task(
        dataset, setting, seed, n_unlabeled=n_unlabeled_of(dataset, scale), n_val=n_val_of(dataset), data_root=data_root
    )


def fit(task, algorithm, seed: int, *, scale: str = "paper", device="auto"):
    """Train ``algorithm`` on ``task`` with App. C's protocol: :func:`paper_a.fit_task` (the one place it
    lives); returns ``(metrics, trainer)``."""
    return paper_a.fit_task(task, algorithm, seed, scale=scale, device=device)


def _seed_scale(seed, scale):
    seed = check_seed(seed)
    if scale not in paper_a.PROTOCOL:
        raise ValueError(f"scale must be one of {tuple(paper_a.PROTOCOL)}, got {scale!r}")
    return seed


def run_fixmatch(
    dataset: str, setting: str, threshold: float, seed: int, *, scale="paper", device="auto", data_root=None
) -> dict:
    """Table 3: FixMatch (τ = ``threshold``, λ_U = 1, App. D.1 augmentations) on one row; ``setting`` in
    Table 3's notation ("Imb. (60)", "Mild (500)", ...) or explicit per-class counts such as ``[45, 15]``.
    Metrics also hold ``mask_rate`` (last epoch)."""
    from sslkit.algorithms import FixMatch

    seed = _seed_scale(seed, scale)
    if threshold not in FIXMATCH_THRESHOLDS:
        raise ValueError(f"threshold must be one of App. D.1's {FIXMATCH_THRESHOLDS}, got {threshold!r}")
    task = _task(dataset, table3_setting(dataset, setting), seed, scale, data_root)
    mean = std = None
    if dataset in paper_a.IMAGE:
        mean, std = image_stats(task, data_root)
    algo = FixMatch(threshold=float(threshold), lambda_u=1.0, mean=mean, std=std)
    metrics, trainer = fit(task, algo, seed, scale=scale, device=device)
    last = trainer.history_[-1] if trainer.history_ else {}
    if "mask_rate" in last:
        metrics["mask_rate"] = round(float(last["mask_rate"]), 4)
    return metrics


def run_cov_size(
    dataset: str, setting: str, cov_per_class: int, seed: int, *, scale="paper", device="auto", data_root=None
) -> dict:
    """Table 4: Ours (Iter) with a* from a covariance set of ``cov_per_class`` examples per class."""
    seed = _seed_scale(seed, scale)
    task = _task(dataset, setting, seed, scale, data_root)
    X_cov, y_cov = extra_rows(task, covariance_rows(task, cov_per_class, seed, data_root), data_root)
    algo = ours_iter_with_covariance_set(
        task.prior,
        np.asarray(task.labeled_counts),
        X_cov,
        y_cov.numpy(),
        warmup_epochs=paper_a.PROTOCOL[scale]["warmup_epochs"],
    )
    metrics, _ = fit(task, algo, seed, scale=scale, device=device)
    metrics["a_final"] = [round(float(v), 6) for v in algo.a_]
    return metrics


def _iter_algorithm(task, scale, nonnegative=True):
    """Ours (Iter) exactly as Tables 1–2 build it (paper_a.METHODS), with the nn-correction on or off."""
    algo = paper_a.METHODS["Ours (Iter)"](
        task.prior, None, np.asarray(task.labeled_counts), paper_a.PROTOCOL[scale]["warmup_epochs"]
    )
    algo.nonnegative = bool(nonnegative)  # read at every step by LinearRiskAlgorithm.loss
    return algo


def run_nn(dataset: str, setting, nn: str, seed: int, *, scale="paper", device="auto", data_root=None) -> dict:
    """Tables 6–10: Ours (Iter) with the non-negative correction ``nn="on"`` (the default method) or ``"off"``."""
    seed = _seed_scale(seed, scale)
    if nn not in NN_MODES:
        raise ValueError(f"nn must be one of {NN_MODES}, got {nn!r}")
    task = _task(dataset, setting, seed, scale, data_root)
    metrics, _ = fit(task, _iter_algorithm(task, scale, nonnegative=nn == "on"), seed, scale=scale, device=device)
    return metrics


def run_ec_diagnostic(
    dataset: str, setting: str, seed: int, *, method="Ours (Iter)", scale="paper", device="auto", data_root=None
) -> dict:
    """Table 5: train ``method`` ("Ours (Iter)" or "Ours (EC)"), then the Cov. rel. Fro. of the trained model on
    the test set (:func:`loss_covariance_diagnostic`): metrics ``cov_rel_fro`` and ``classes_used``."""
    seed = _seed_scale(seed, scale)
    if method not in ("Ours (Iter)", "Ours (EC)"):
        raise ValueError(f"method must be 'Ours (Iter)' or 'Ours (EC)', got {method!r}")
    task = _task(dataset, setting, seed, scale, data_root)
    if method == "Ours (Iter)":
        algo = _iter_algorithm(task, scale)
    else:
        algo = paper_a.METHODS[method](task.prior, None, np.asarray(task.labeled_counts), 0)
    metrics, trainer = fit(task, algo, seed, scale=scale, device=device)
    diag = loss_covariance_diagnostic(trainer.model, task.X_test, task.y_test, task.num_classes, trainer.device_)
    metrics.update(diag)
    return metrics


def select_threshold(records, metric: str = "best_val_acc") -> list:
    """Keep, per (dataset, setting), the FixMatch threshold with the highest mean ``metric`` over seeds (App.
    D.1); each kept record gets ``config["selected"]``. Records need config keys dataset, setting, threshold.
    Ties (equal means) go to the threshold run on more seeds, then to the lowest threshold."""
    groups: dict = {}
    for r in records:
        c = r["config"]
        groups.setdefault((c["dataset"], c["setting"]), {}).setdefault(float(c["threshold"]), []).append(r)
    kept = []
    for by_t in groups.values():
        best = max(by_t, key=lambda t: (np.mean([r["metrics"][metric] for r in by_t[t]]), len(by_t[t]), -t))
        kept += [{**r, "config": {**r["config"], "selected": best}} for r in by_t[best]]
    return kept


# ------------------------------------------------------------------------------------------------------
# grids (the catalog runs them: ``sslkit run NAME --scale paper``)
# ------------------------------------------------------------------------------------------------------


def table_grid(table: int, datasets=None, settings=None) -> list:
    """The runner grid of Table ``table`` (3–10): config dicts with an ``experiment`` key ("fixmatch",
    "cov_size", "ec_diag", "nn") so the ablations of Tables 4–10 can share one results file."""
    paper = PAPER_TABLES.get(table)
    if paper is None:
        raise ValueError(f"table must be one of {tuple(PAPER_TABLES)}, got {table!r}")
    rows = list(dict.fromkeys((k[0], k[1]) for k in paper))
    if datasets is not None:
        rows = [r for r in rows if r[0] in datasets]
    if settings is not None:
        rows = [r for r in rows if r[1] in settings]
    grid = []
    for d, s in rows:
        if table == 3:
            grid += [
                {"experiment": "fixmatch", "dataset": d, "setting": s, "threshold": t} for t in FIXMATCH_THRESHOLDS
            ]
        elif table == 4:
            grid += [
                {"experiment": "cov_size", "dataset": d, "setting": s, "cov_per_class": c}
                for (dd, ss, c) in paper
                if (dd, ss) == (d, s)
            ]
        elif table == 5:
            grid.append({"experiment": "ec_diag", "dataset": d, "setting": s})
        else:
            grid += [{"experiment": "nn", "dataset": d, "setting": s, "nn": m} for m in NN_MODES]
    return grid


def run_config(
    experiment,
    dataset,
    setting,
    seed,
    *,
    scale="paper",
    device="auto",
    threshold=None,
    cov_per_class=None,
    nn=None,
    data_root=None,
) -> dict:
    """Dispatch one grid config of :func:`table_grid` to its run function."""
    kw = dict(scale=scale, device=device, data_root=data_root)
    if experiment == "fixmatch":
        return run_fixmatch(dataset, setting, threshold, seed, **kw)
    if experiment == "cov_size":
        return run_cov_size(dataset, setting, cov_per_class, seed, **kw)
    if experiment == "ec_diag":
        return run_ec_diagnostic(dataset, setting, seed, **kw)
    if experiment == "nn":
        return run_nn(dataset, setting, nn, seed, **kw)
    raise ValueError(f"experiment must be fixmatch, cov_size, ec_diag or nn, got {experiment!r}")


# ------------------------------------------------------------------------------------------------------
# the paper's numbers (Appendix D), from sslkit/experiments/paper_numbers/
# ------------------------------------------------------------------------------------------------------

#: Table 3 (FixMatch): ``{(dataset, setting): {"threshold", "test_acc": (mean, std), "best_val_acc": (mean, std)}}``.
PAPER_TABLE3 = {
    (r["dataset"], r["setting"]): {
        "threshold": r["threshold"],
        "test_acc": mean_std(r, "test_acc"),
        "best_val_acc": mean_std(r, "best_val_acc"),
    }
    for r in load_paper_numbers("a_table3")
}
#: Table 4 (MNIST, Ours (Iter), covariance examples per class): ``{(dataset, setting, c): (mean, std)}``.
PAPER_TABLE4 = {(r["dataset"], r["setting"], r["cov_per_class"]): mean_std(r) for r in load_paper_numbers("a_table4")}
#: Table 5 (equal-covariance diagnostic): ``{(dataset, setting): {"classes", "test_acc", "cov_rel_fro"}}``.
PAPER_TABLE5 = {
    (r["dataset"], r["setting"]): {
        "classes": r["classes"],
        "test_acc": mean_std(r, "test_acc"),
        "cov_rel_fro": mean_std(r, "cov_rel_fro"),
    }
    for r in load_paper_numbers("a_table5")
}


def _nn_table(name: str) -> dict:
    return {
        (r["dataset"], r["setting"]): {"on": mean_std(r, "on"), "off": mean_std(r, "off"), "delta": r["delta"]}
        for r in load_paper_numbers(name)
    }


#: Tables 6–10 (nn-correction ablation of Ours (Iter)): ``{(dataset, setting): {"on", "off": (mean, std),
#: "delta": NN off − NN on in pp}}``; settings in Tables 1–2's notation. Table 8's "Labeled" 20/50/150
#: (10 classes) and 10/20/50 (7 classes) per class are the balanced regimes.
PAPER_TABLE6, PAPER_TABLE7, PAPER_TABLE8, PAPER_TABLE9, PAPER_TABLE10 = (_nn_table(f"a_table{t}") for t in range(6, 11))

PAPER_TABLES = {
    3: PAPER_TABLE3,
    4: PAPER_TABLE4,
    5: PAPER_TABLE5,
    6: PAPER_TABLE6,
    7: PAPER_TABLE7,
    8: PAPER_TABLE8,
    9: PAPER_TABLE9,
    10: PAPER_TABLE10,
}
