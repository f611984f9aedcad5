"""What every active-learning selection of :mod:`sslkit.active` shares: input checks, a model's class
probabilities and penultimate features on a pool, and the deterministic "m best scores" rule.

Each selection in this package scores the unlabeled pool (or a random candidate subset of it) and labels the
``m`` best-scored rows; ties are broken by the lower row index (a stable sort), so a selection is a function of
its inputs and seed alone.
"""

from __future__ import annotations

import contextlib

import torch
from torch import nn

from sslkit._checks import check_count, check_seed
from sslkit.algorithms.base import eval_logits, forward
from sslkit.algorithms.views import Views
from sslkit.device import resolve_device

__all__ = [
    "as_inputs",
    "check_budget",
    "check_model",
    "candidate_rows",
    "class_probabilities",
    "evaluating",
    "view_function",
    "augmented_probabilities",
    "ViewSelection",
    "penultimate_features",
    "top_m",
]


def as_inputs(X, name: str = "X", *, device=None, min_dim: int = 2) -> torch.Tensor:
    """``X`` (numpy array or tensor, one sample per row) as a finite float32 tensor on ``device`` (its own
    device when None); a clear error for anything else (integer images: convert them first)."""
    if isinstance(X, torch.Tensor):
        t = X.detach()
    else:
        try:
            t = torch.as_tensor(X)
        except (TypeError, ValueError, RuntimeError) as exc:
            raise TypeError(f"{name} must be a numeric array or tensor, got {type(X).__name__}") from exc
    if not t.is_floating_point():
        raise TypeError(
            f"{name} must hold floats, got dtype {t.dtype} (convert uint8 images with sslkit.data.images_to_tensor)"
        )
    if t.dim() < min_dim:
        raise ValueError(
            f"{name} must have shape (n_samples, ...) with at least {min_dim} dimensions, got {tuple(t.shape)}"
        )
    if t.shape[0] == 0:
        raise ValueError(f"{name} is empty (0 rows)")
    t = t.to(device=resolve_device(device) if device is not None else t.device, dtype=torch.float32)
    if not bool(torch.isfinite(t).all()):
        raise ValueError(f"{name} contains NaN or infinite values")
    return t


def check_budget(m, n: int, what: str = "unlabeled rows") -> int:
    """``m`` as a positive int no larger than ``n`` (the rows it is chosen from)."""
    m = check_count(m, "m", allow_zero=False)
    if m > n:
        raise ValueError(f"m = {m} exceeds the {n} {what} to choose from")
    return m


def check_model(model, name: str = "model") -> nn.Module:
    if not isinstance(model, nn.Module):
        raise TypeError(f"{name} must be a torch.nn.Module, got {type(model).__name__}")
    return model


def candidate_rows(n: int, subset, seed) -> torch.Tensor:
    """The pool rows a selection scores: all ``n`` (``subset=None``), or ``subset`` of them drawn uniformly
    without replacement by a CPU generator seeded with ``seed`` (LearnLoss' and TOD's random candidate set),
    in increasing order."""
    if subset is None or subset >= n:
        return torch.arange(n)
    subset = check_count(subset, "subset", allow_zero=False)
    gen = torch.Generator().manual_seed(check_seed(seed))
    return torch.randperm(n, generator=gen)[:subset].sort().values


def class_probabilities(model, X: torch.Tensor, batch_size: int = 1024) -> torch.Tensor:
    """``softmax`` of ``model``'s logits on ``X`` in eval mode, without gradients (float32, ``X``'s device);
    the model's train/eval flags are restored afterwards."""
    return torch.softmax(eval_logits(check_model(model), X, chunk=batch_size), dim=1)


def penultimate_features(model, X: torch.Tensor, batch_size: int = 1024) -> torch.Tensor:
    """The penultimate features ``h(x)`` a model returns beside its logits (``model(x) = (logits, h, ...)``),
    in eval mode without gradients, float32 on ``X``'s device."""
    out = []
    with evaluating(check_model(model)), torch.no_grad():
        for i in range(0, X.shape[0], batch_size):
            _, h = forward(model, X[i : i + batch_size])
            if h is None:
                raise ValueError("the model returns bare logits: it must return (logits, features, ...)")
            out.append(h.float().flatten(1))
    return torch.cat(out)


@contextlib.contextmanager
def evaluating(model: nn.Module):
    """Context manager: ``model`` in eval mode inside the block; every submodule's train/eval flag restored
    on exit (also on an exception)."""
    flags = [(m, m.training) for m in model.modules()]
    model.eval()
    try:
        yield model
    finally:
        for m, flag in flags:
            m.training = flag


def top_m(scores: torch.Tensor, m: int, *, largest: bool = True) -> torch.Tensor:
    """Row indices of the ``m`` largest (``largest=False``: smallest) ``scores``, best first; equal scores in
    increasing row order (a stable sort), so the result never depends on the sorting kernel."""
    if scores.dim() != 1:
        raise ValueError(f"scores must be 1-D, got shape {tuple(scores.shape)}")
    m = check_budget(m, scores.shape[0], "scored rows")
    if torch.isnan(scores).any():
        raise ValueError("scores contain NaN")
    order = torch.argsort(-scores if largest else scores, stable=True)
    return order[:m]


def view_function(augment="auto", mean=None, std=None):
    """The random view ``x -> view(x)`` that an augmentation-based selection perturbs its inputs with: a
    callable as given, else the weak view of :class:`sslkit.algorithms.Views` (``augment`` = "auto",
    "tabular", "mnist" or "cifar"; ``mean`` / ``std``: the normalisation the inputs carry)."""
    if callable(augment):
        return augment
    return Views(augment, mean=mean, std=std).weak


def augmented_probabilities(
    model, X: torch.Tensor, view, n_views: int, *, include_original: bool, batch_size: int = 1024
):
    """Class probabilities of ``model`` (eval mode) on ``n_views`` random views of every row of ``X`` --
    preceded by the un-augmented row when ``include_original`` -- as a tensor ``(n_views [+ 1], n, K)``.
    The views draw from torch's global generator (seed it, e.g. inside ``torch.random.fork_rng``)."""
    n_views = check_count(n_views, "n_views", allow_zero=not include_original)
    out = []
    with evaluating(check_model(model)), torch.no_grad():
        for i in range(0, X.shape[0], batch_size):
            x = X[i : i + batch_size]
            xs = ([x] if include_original else []) + [view(x) for _ in range(n_views)]
            logits = forward(model, torch.cat(xs))[0].float()
            out.append(torch.softmax(logits, dim=1).view(len(xs), x.shape[0], -1))
    return torch.cat(out, dim=1)


class ViewSelection:
    """Base of the selections that score each unlabeled row by a model's class probabilities on random views of
    it (MMA, CBSSAL): ``fit(model, X_unlabeled)`` computes :func:`augmented_probabilities` (``n_views`` views
    by :func:`view_function` of ``augment`` / ``mean`` / ``std``, seeded with ``seed``; the un-augmented row
    first when the subclass sets ``include_original``), scores them with the subclass's ``view_scores`` and
    keeps the ``m`` largest (``largest = False``: smallest). Sets ``indices_`` (int64, best first) and
    ``scores_``."""

    include_original = False
    largest = True

    def __init__(self, m, *, n_views: int, augment="auto", mean=None, std=None, batch_size: int = 1024, seed=0):
        self.m, self.n_views, self.augment, self.mean, self.std = m, n_views, augment, mean, std
        self.batch_size, self.seed = batch_size, seed

    def view_scores(self, probabilities: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    def fit(self, model, X_unlabeled):
        check_model(model)
        X = as_inputs(X_unlabeled, "X_unlabeled", device=next(model.parameters()).device)
        m = check_budget(self.m, X.shape[0])
        view = view_function(self.augment, self.mean, self.std)
        n_views = check_count(self.n_views, "n_views", allow_zero=False)
        with torch.random.fork_rng(devices=[X.device] if X.device.type == "cuda" else []):
            torch.manual_seed(check_seed(self.seed))
            P = augmented_probabilities(
                model, X, view, n_views, include_original=self.include_original, batch_size=self.batch_size
            )
        self.scores_ = self.view_scores(P)
        self.indices_ = top_m(self.scores_, m, largest=self.largest)
        return self

    def __repr__(self) -> str:
        return f"{type(self).__name__}(m={self.m!r}, n_views={self.n_views!r})"
