"""All three papers in one fit: which samples to label (paper B), how to learn from them and the unlabeled set
(paper A, or any SSL method), and on which unlabeled samples to spend the training (paper C).

:class:`SSLPipeline` chains the three stages on the one engine (:class:`sslkit.engine.Trainer`):

1. **labels (B)** -- a label-free selector chooses ``n_labels`` rows of the pool ``X``: RDSS
   (:class:`sslkit.select.GKHR`, α = 1 − 1/√m, median bandwidth; paper B Algorithm 1) on ``features`` (by default
   the rows of ``X`` flattened), or uniformly at random (``selector="random"``: the stage switched off). The
   ``labels`` argument of :meth:`SSLPipeline.fit` is the oracle: an array of the pool's labels, of which only the
   chosen rows are read, or a function ``labels(indices) -> their labels`` (the annotator);
2. **learning (A)** -- ``algorithm`` trains ``model`` on the chosen rows and the unlabeled pool (by default all
   of ``X``, the labeled rows included, as USB and paper B do): paper A's risk rewrite
   (:class:`~sslkit.algorithms.OursIter`, :class:`~sslkit.algorithms.OursEC`) or any other
   :class:`~sslkit.algorithms.SSLAlgorithm` (e.g. :class:`~sslkit.algorithms.FreeMatch`: the stage switched off);
3. **unlabeled data (C)** -- Retrieve (paper C Algorithm 1, :class:`sslkit.callbacks.CoresetSelection`) trains on
   a coreset of ``coreset`` × the unlabeled pool, re-chosen every ``every`` epochs after a warm start on the
   full pool; ``coreset=None`` trains on the full pool every epoch (the stage switched off).

Schedule (paper C §3.4-3.5). An epoch is one pass over the current unlabeled pool
(``Trainer(iterations_per_epoch="unlabeled")``). Without a coreset: ``epochs`` (T) epochs over the full pool. With a
coreset of ``k = coreset · N``: ``T_w = κ T k / N`` warm epochs on the full pool
(:func:`sslkit.callbacks.warm_start_epochs`; at least the algorithm's ``warmup_epochs``, so that Ours (Iter)
has its first a* before the first selection) and then ``T − round(κ T)`` epochs over the coreset: about
``coreset`` × the optimiser steps of the full run. The cosine schedule spans the steps actually planned.

Paper A's learners have no per-sample unlabeled losses (their non-negative correction acts on class means);
with a coreset they are wrapped in :class:`~sslkit.algorithms.PerSampleRisk`, whose per-sample terms
``Σ_j c_j ℓ(f(x), j)`` drive Retrieve while training stays the learner's own.

Usage (a pool ``X`` of images or features, an annotator ``ask(indices) -> labels``, a validation set for Ours
(Iter)'s a*, the class prior θ)::

    from sslkit.algorithms import OursIter
    from sslkit.models import MLP
    from sslkit.pipeline import SSLPipeline

    model, learner = MLP(784, 10, hidden=(256,)), OursIter(prior, warmup_epochs=3)
    pipe = SSLPipeline(model, learner, n_labels=100, selector="rdss", coreset=0.2,
                       epochs=30, seed=0)
    pipe.fit(X, ask, X_val=X_val, y_val=y_val)
    print(pipe.labeled_indices_[:10], pipe.timings_)
    accuracy = pipe.score(X_test, y_test)
"""

from __future__ import annotations

import math
import numbers
import time

import numpy as np
import torch

from sslkit._checks import (
    Params,
    check_bool,
    check_count,
    check_real,
    check_seed,
    from_torch_data,
    pairs_from_torch_data,
)
from sslkit.algorithms import LinearRiskAlgorithm, PerSampleRisk, SSLAlgorithm
from sslkit.callbacks import CoresetSelection, warm_start_epochs
from sslkit.engine import USB_SGD, TrainConfig, Trainer, fit
from sslkit.engine.optim import fresh_start
from sslkit.select import make_selector, selector_name
from sslkit.task import Task

__all__ = ["SELECTORS", "SSLPipeline", "coreset_schedule"]

#: the label selectors by name: RDSS (paper B), its switched-off stage (uniform random) and paper B's label-free
#: baselines (:func:`sslkit.select.make_selector`; any case)
SELECTORS = ("rdss", "random", "kmeans", "usl", "activeft")
#: the Trainer options the pipeline sets itself (its schedule and stages)
_OWN_OPTIONS = ("iterations_per_epoch", "total_steps", "epochs", "seed", "device", "num_classes", "progress")


def coreset_schedule(epochs: int, n_unlabeled: int, fraction, batch_size: int, *, kappa=0.5, min_warm: int = 0):
    """``{"epochs", "warm_epochs", "k", "total_steps"}`` of a run (module docstring): ``fraction`` None trains
    ``epochs`` epochs on the full pool of ``n_unlabeled``; a fraction in (0, 1) gives ``k = round(fraction N)``,
    ``T_w = max(κ T k / N, min_warm)`` warm epochs and ``T − round(κ T)`` coreset epochs."""
    epochs = check_count(epochs, "epochs", allow_zero=False)
    n = check_count(n_unlabeled, "n_unlabeled", allow_zero=False)
    batch_size = check_count(batch_size, "unlabeled_batch_size", allow_zero=False)
    per_full = math.ceil(n / batch_size)
    if fraction is None:
        return {"epochs": epochs, "warm_epochs": 0, "k": n, "total_steps": epochs * per_full}
    fraction = check_real(fraction, "coreset", low=0.0, high=1.0, low_open=True, high_open=True)
    kappa = check_real(kappa, "kappa", low=0.0, high=1.0, high_open=True)
    k = max(1, int(round(fraction * n)))
    warm = max(warm_start_epochs(kappa, epochs, fraction), check_count(min_warm, "min_warm"))
    subset = max(1, epochs - int(round(kappa * epochs)))
    steps = warm * per_full + subset * math.ceil(k / batch_size)
    return {"epochs": warm + subset, "warm_epochs": warm, "k": k, "total_steps": steps}


class SSLPipeline(Params):
    """Label selection (B), semi-supervised learning (A) and unlabeled coresets (C) in one estimator (module
    docstring).

    Parameters
    ----------
    model : torch.nn.Module, trained in place (returning logits, or ``(logits, features)``).
    algorithm : an :class:`~sslkit.algorithms.SSLAlgorithm` that uses unlabeled data (``OursIter``, ``OursEC``,
        ``FreeMatch``...).
    n_labels : int, the labeling budget m (at most the pool size).
    selector : "rdss" (paper B's GKHR), "random", "kmeans", "usl", "activeft" (:func:`sslkit.select.make_selector`'s
        names, any case), or an object with ``fit(features)`` setting ``indices_``.
    coreset : float in (0, 1), the fraction of the unlabeled pool Retrieve keeps, or None (the full pool).
    every : epochs between two coreset selections (paper C's R).
    kappa : float in [0, 1), the warm-start share κ (paper C §3.4: 0.5).
    epochs : T, the epochs of the run without a coreset.
    batch_size, unlabeled_batch_size : labeled and unlabeled batch sizes.
    seed : seeds the random selector, the coreset's first draw and the trainer (batches, augmentations).
    device : "auto", "cpu", "cuda"... (the trainer's and the selector's).
    num_classes : the number of classes (None: the trainer infers it from the labels it sees).
    progress : progress bars over RDSS's picks and the training epochs (``SSLKIT_PROGRESS=0`` silences them).
    **trainer_options : any other :class:`~sslkit.engine.Trainer` option (optimiser, lr, EMA, hooks...); the
        default optimiser is Nesterov SGD, lr 0.03, weight decay 5e-4, cosine schedule (USB, papers B and C).

    scikit-learn's conventions: ``get_params`` / ``set_params`` (the Trainer options included) and
    :func:`sklearn.base.clone` (an unfitted copy with a copy of the model); every ``fit`` starts afresh from the
    weights the model had when the first ``fit`` began.

    Attributes after :meth:`fit`: ``labeled_indices_`` (int64 rows of ``X``, selection order), ``y_labeled_``
    (their labels), ``trainer_`` (the fitted :class:`~sslkit.engine.Trainer`), ``coreset_`` (the
    :class:`~sslkit.callbacks.CoresetSelection`, None without a coreset), ``schedule_`` (:func:`coreset_schedule`)
    and ``timings_``: wall-clock and process CPU seconds of the label selection (``label_selection``,
    ``label_selection_cpu``), of the coreset selections (``coreset_selection``, ``coreset_selection_cpu``) and of
    the rest of training (``training``, ``training_cpu``: the whole ``fit`` of the trainer minus the coreset
    selections).
    """

    _estimator_type = "classifier"

    def __init__(
        self,
        model,
        algorithm,
        n_labels,
        *,
        selector="rdss",
        coreset=0.2,
        every=5,
        kappa=0.5,
        epochs=30,
        batch_size=64,
        unlabeled_batch_size=128,
        seed=0,
        device="auto",
        num_classes=None,
        progress=True,
        **trainer_options,
    ):
        if not isinstance(model, torch.nn.Module):
            raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")
        if not isinstance(algorithm, SSLAlgorithm):
            raise TypeError(f"algorithm must be an sslkit.algorithms.SSLAlgorithm, got {type(algorithm).__name__}")
        if not algorithm.uses_unlabeled:
            raise ValueError(f"{type(algorithm).__name__} uses no unlabeled data: the pipeline needs an SSL algorithm")
        if isinstance(selector, str):
            if _selector_name(selector) is None:
                raise ValueError(f"selector must be one of {SELECTORS} or a selector object, got {selector!r}")
        elif not callable(getattr(selector, "fit", None)):
            raise TypeError(f"selector must be one of {SELECTORS} or an object with fit(), got {selector!r}")
        if coreset is not None:
            check_real(coreset, "coreset", low=0.0, high=1.0, low_open=True, high_open=True)
        own = sorted(set(trainer_options) & set(_OWN_OPTIONS))
        if own:
            raise ValueError(
                f"the pipeline sets {own} itself: pass epochs, seed, device, num_classes, progress as its arguments"
            )
        self.model, self.algorithm = model, algorithm
        self.n_labels = check_count(n_labels, "n_labels", allow_zero=False)
        self.selector, self.coreset = selector, coreset
        self.every = check_count(every, "every", allow_zero=False)
        self.kappa = check_real(kappa, "kappa", low=0.0, high=1.0, high_open=True)
        self.epochs = check_count(epochs, "epochs", allow_zero=False)
        self.batch_size = check_count(batch_size, "batch_size", allow_zero=False)
        self.unlabeled_batch_size = check_count(unlabeled_batch_size, "unlabeled_batch_size", allow_zero=False)
        self.seed, self.device = check_seed(seed), device
        self.num_classes = None if num_classes is None else check_count(num_classes, "num_classes", allow_zero=False)
        self.progress = check_bool(progress, "progress")
        self.trainer_options = {**USB_SGD, **trainer_options}
        self._given_options = trainer_options

    def get_params(self, deep: bool = True) -> dict:
        """The constructor's arguments, the Trainer options given to it included (scikit-learn's ``get_params``)."""
        return {**self._given_options, **super().get_params(deep)}

    # ------------------------------------------------------------------------------------------- stages
    def select_labels(self, features) -> np.ndarray:
        """Stage B: the ``n_labels`` rows of ``features`` (n, ...) to label, in selection order."""
        F = features.detach().cpu() if isinstance(features, torch.Tensor) else np.asarray(features)
        F = F.reshape(F.shape[0], -1)
        if self.n_labels > F.shape[0]:
            raise ValueError(f"n_labels = {self.n_labels} exceeds the pool ({F.shape[0]} samples)")
        if isinstance(self.selector, str):
            sel = make_selector(
                _selector_name(self.selector), self.n_labels, seed=self.seed, device=self.device, progress=self.progress
            )
        else:
            sel = self.selector
        idx = sel.fit(F).indices_
        idx = idx.detach().cpu().numpy() if isinstance(idx, torch.Tensor) else np.asarray(idx)
        if idx.dtype.kind not in "iu":  # 30.5 would silently become row 30
            raise TypeError(f"the selector returned indices of dtype {idx.dtype}: row indices must be integers")
        idx = idx.astype(np.int64)
        if idx.shape != (self.n_labels,) or np.unique(idx).size != idx.size or idx.min() < 0 or idx.max() >= len(F):
            raise ValueError(f"the selector returned {idx.size} indices, not {self.n_labels} distinct rows of the pool")
        return idx

    def _ask(self, labels, idx: np.ndarray, n: int) -> np.ndarray:
        """The oracle's labels of the rows ``idx``: ``labels[idx]`` for an array of the pool's labels, ``labels(idx)``
        for a function; checked (integers >= 0, one per row)."""
        if callable(labels):
            y = labels(idx.copy())
            where = "labels(indices)"
        else:
            arr = labels.detach().cpu().numpy() if isinstance(labels, torch.Tensor) else np.asarray(labels)
            if arr.shape != (n,):
                raise ValueError(f"labels must be one label per row of X ({n}) or a function, got shape {arr.shape}")
            y, where = arr[idx], "labels"
        y = y.detach().cpu().numpy() if isinstance(y, torch.Tensor) else np.asarray(y)
        if y.dtype.kind not in "iu":
            raise TypeError(f"{where} must give integer class labels, got dtype {y.dtype}")
        if y.shape != idx.shape:
            raise ValueError(f"{where} gave {y.shape} labels for {idx.size} rows")
        if y.size and y.min() < 0:
            raise ValueError(f"{where} gave a negative class label ({int(y.min())})")
        if self.num_classes is not None and y.size and y.max() >= self.num_classes:
            raise ValueError(f"{where} gave class {int(y.max())}, outside [0, num_classes = {self.num_classes})")
        return y.astype(np.int64)

    def _training_algorithm(self) -> SSLAlgorithm:
        """The algorithm as trained: paper A's learners get per-sample unlabeled losses when Retrieve selects."""
        if self.coreset is None or self.algorithm.has_unlabeled_losses():
            return self.algorithm
        if isinstance(self.algorithm, LinearRiskAlgorithm):
            return PerSampleRisk(self.algorithm)
        raise ValueError(
            f"{type(self.algorithm).__name__} has no per-sample unlabeled losses: Retrieve cannot select its "
            "unlabeled data (use coreset=None)"
        )

    # ---------------------------------------------------------------------------------------------- fit
    def fit(self, X, labels=None, *, features=None, X_unlabeled=None, X_val=None, y_val=None):
        """Select the labels, ask the oracle, train; returns ``self``.

        ``X``: the pool (n, ...), float features or normalised images; ``labels``: the oracle (module docstring);
        ``features``: what the selector sees, one row per row of ``X`` (default: ``X`` flattened); ``X_unlabeled``:
        the unlabeled set (default: ``X``); ``X_val``, ``y_val``: validation data (Ours (Iter) estimates a* on
        them).

        PyTorch inputs: ``X`` may be a ``Dataset`` or ``DataLoader`` of ``(x, y)`` pairs (then ``labels`` None: the
        pairs' ``y`` are the oracle, read only at the chosen rows) or of ``x`` alone; ``X_unlabeled`` one of ``x``;
        ``X_val`` one of ``(x, y)`` (then ``y_val`` None). Each is read once into tensors, in its own order.
        Every ``fit`` starts from the weights the model had when the first ``fit`` began."""
        X, labels, X_unlabeled, X_val, y_val = _torch_inputs(X, labels, X_unlabeled, X_val, y_val)
        if labels is None:
            raise ValueError("labels is required: the pool's labels, or a function indices -> labels (the oracle)")
        n = _rows(X, "X")
        if features is not None and _rows(features, "features") != n:
            raise ValueError(f"features has {_rows(features, 'features')} rows but X has {n}")
        if (X_val is None) != (y_val is None):
            raise ValueError("give both X_val and y_val, or neither")
        algorithm = self._training_algorithm()  # refuses a method Retrieve cannot drive before any work is done

        t0, c0 = time.perf_counter(), time.process_time()
        idx = self.select_labels(X if features is None else features)
        self.timings_ = {"label_selection": time.perf_counter() - t0, "label_selection_cpu": time.process_time() - c0}
        y_l = self._ask(labels, idx, n)
        self.labeled_indices_, self.y_labeled_ = idx, y_l

        X_u = X if X_unlabeled is None else X_unlabeled
        sched = coreset_schedule(
            self.epochs,
            _rows(X_u, "X_unlabeled"),
            self.coreset,
            self.unlabeled_batch_size,
            kappa=self.kappa,
            min_warm=algorithm.warmup_epochs,
        )
        self.schedule_ = sched
        options = dict(self.trainer_options)
        hooks = list(options.pop("hooks", ()))
        self.coreset_ = None
        if self.coreset is not None:
            self.coreset_ = CoresetSelection(
                "retrieve",
                sched["k"],
                every=self.every,
                warm_epochs=sched["warm_epochs"],
                batch_size=self.unlabeled_batch_size,
                seed=self.seed,
            )
            hooks += self.coreset_.hooks()
        self._initial_model = fresh_start(self.model, getattr(self, "_initial_model", None))
        config = TrainConfig(
            epochs=sched["epochs"],
            iterations_per_epoch="unlabeled",
            total_steps=sched["total_steps"],
            batch_size=self.batch_size,
            unlabeled_batch_size=self.unlabeled_batch_size,
            **options,
        )
        X_l = X[torch.as_tensor(idx)] if isinstance(X, torch.Tensor) else np.asarray(X)[idx]
        task = Task(X_l=X_l, y_l=y_l, X_u=X_u, X_val=X_val, y_val=y_val, num_classes=self.num_classes)
        t0, c0 = time.perf_counter(), time.process_time()
        self.trainer_ = fit(
            task,
            algorithm,
            config,
            seed=self.seed,
            device=self.device,
            hooks=hooks,
            model=self.model,
            progress=self.progress,
        )
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        picks = self.coreset_.selections_ if self.coreset_ is not None else []
        sel_wall, sel_cpu = sum(s["seconds"] for s in picks), sum(s["cpu_seconds"] for s in picks)
        self.timings_.update(
            coreset_selection=sel_wall,
            coreset_selection_cpu=sel_cpu,
            training=wall - sel_wall,
            training_cpu=cpu - sel_cpu,
        )
        return self

    # ----------------------------------------------------------------------------------------- inference
    def _fitted(self) -> Trainer:
        if not hasattr(self, "trainer_"):
            raise RuntimeError("this SSLPipeline is not fitted yet: call fit() first")
        return self.trainer_

    def predict(self, X):
        """Predicted labels of the trained model (:meth:`sslkit.engine.Trainer.predict`)."""
        return self._fitted().predict(X)

    def predict_proba(self, X):
        """Class probabilities of the trained model (:meth:`sslkit.engine.Trainer.predict_proba`)."""
        return self._fitted().predict_proba(X)

    def score(self, X, y) -> float:
        """Accuracy on ``(X, y)`` (:meth:`sslkit.engine.Trainer.score`)."""
        return self._fitted().score(X, y)

    def __repr__(self) -> str:
        return (
            f"SSLPipeline(algorithm={self.algorithm!r}, n_labels={self.n_labels}, selector={self.selector!r}, "
            f"coreset={self.coreset!r}, epochs={self.epochs}, seed={self.seed})"
        )


def _selector_name(name: str):
    """The :func:`sslkit.select.make_selector` name of a pipeline selector (None for an unknown one or "Stratified",
    which needs every label)."""
    try:
        known = selector_name(name)
    except ValueError:
        return None
    return None if known == "Stratified" else known


def _torch_inputs(X, labels, X_unlabeled, X_val, y_val):
    """``Dataset`` / ``DataLoader`` inputs of :meth:`SSLPipeline.fit` as tensors (pairs' labels as the oracle)."""
    from torch.utils.data import DataLoader, Dataset

    if isinstance(X, (Dataset, DataLoader)):
        try:
            X, y = from_torch_data(X, "X")
        except ValueError:  # items without labels
            X, y = from_torch_data(X, "X", labels=False)
        if y is not None:
            if labels is not None:
                raise ValueError(
                    "X is a Dataset or DataLoader of (x, y) pairs: pass labels=None (its y are the labels)"
                )
            labels = y
    X_unlabeled, _ = from_torch_data(X_unlabeled, "X_unlabeled", labels=False)
    X_val, y_val = pairs_from_torch_data(X_val, y_val, "X_val", "y_val")
    return X, labels, X_unlabeled, X_val, y_val


def _rows(X, name: str) -> int:
    """The number of rows of an array or tensor with at least 2 dimensions (a clear error otherwise)."""
    shape = getattr(X, "shape", None)
    if shape is None or isinstance(X, (str, bytes)) or not isinstance(shape, tuple | torch.Size):
        raise TypeError(f"{name} must be a numpy array or a torch tensor, got {type(X).__name__}")
    if len(shape) < 2 or shape[0] == 0 or not all(isinstance(s, numbers.Integral) for s in shape):
        raise ValueError(f"{name} must have shape (n_samples, ...) with n_samples >= 1, got {tuple(shape)}")
    return int(shape[0])
