"""Input validation shared by the whole package (clear errors at the boundary, never silent wrong answers).

The one bottom module of checks: :mod:`sslkit.risk`, :mod:`sslkit.select` and :mod:`sslkit.coreset` (the three
papers' mathematics) import their input checks from here and never from each other. Every check names the
argument and says what was wrong.

* scalars: :func:`check_seed`, :func:`check_count`, :func:`check_bool`, :func:`check_real`,
  :func:`check_positive`, :func:`check_open_unit`;
* arrays: :func:`check_features` (2-D, non-empty, real, finite), :func:`check_gradients` (the same, named
  for gradient matrices), :func:`check_labels` (integer class indices),
  :func:`check_indices` (integer positions into ``range(n)``: no floats, no negative or wrapped-around
  values, optionally distinct), :func:`check_symmetric`;
* budgets: :func:`check_budget`, :func:`check_batch_size`, :func:`check_labeled_not_empty`;
* the ecosystem's conventions: :class:`Params` (scikit-learn's ``get_params`` / ``set_params``, so that
  :func:`sklearn.base.clone` works), :func:`from_torch_data`, :func:`pairs_from_torch_data` (a PyTorch
  ``Dataset`` or ``DataLoader`` as arrays),
  :func:`split_unlabeled` (scikit-learn's ``y = -1`` for unlabeled rows).
"""

from __future__ import annotations

import math
import numbers
import warnings

import numpy as np
import torch

__all__ = [
    "check_seed",
    "check_count",
    "check_bool",
    "check_real",
    "check_positive",
    "check_open_unit",
    "check_features",
    "check_gradients",
    "check_labels",
    "check_indices",
    "check_symmetric",
    "check_budget",
    "check_batch_size",
    "check_labeled_not_empty",
    "Params",
    "from_torch_data",
    "pairs_from_torch_data",
    "split_unlabeled",
    "UNLABELED",
]


# ------------------------------------------------------------------------------------------------ scalars


def check_seed(seed, name: str = "seed") -> int:
    """Return ``seed`` as a Python int; raise ``TypeError`` if it is not an integer (bools are refused)."""
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {seed!r} of type {type(seed).__name__}")
    seed = int(seed)
    if seed < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {seed}")
    return seed


def check_count(value, name: str, *, allow_zero: bool = True) -> int:
    """Return ``value`` as a non-negative (or positive) int, with an error naming ``name`` otherwise."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {value!r}")
    value = int(value)
    if value < 0 or (value == 0 and not allow_zero):
        bound = "non-negative" if allow_zero else "positive"
        raise ValueError(f"{name} must be {bound}, got {value}")
    return value


def check_bool(value, name: str) -> bool:
    """``value`` if it is True or False (numpy bools accepted); ``TypeError`` for anything else (1, "yes")."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def check_real(value, name: str, *, low=None, high=None, low_open: bool = False, high_open: bool = False) -> float:
    """A finite real number (bools refused) in the interval given by ``low`` / ``high`` (None: unbounded;
    ``low_open`` / ``high_open``: the bound itself is excluded)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {value!r}")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value}")
    below = low is not None and (value < low or (low_open and value == low))
    above = high is not None and (value > high or (high_open and value == high))
    if below or above:
        lo = "(-inf" if low is None else ("(" if low_open else "[") + f"{low:g}"
        hi = "inf)" if high is None else f"{high:g}" + (")" if high_open else "]")
        raise ValueError(f"{name} must lie in {lo}, {hi}, got {value}")
    return value


def check_positive(value, name: str, *, allow_zero: bool = False) -> float:
    """A finite float > 0 (or >= 0 with ``allow_zero``)."""
    value = check_real(value, name)
    if value < 0.0 or (value == 0.0 and not allow_zero):
        raise ValueError(f"{name} must be {'non-negative' if allow_zero else 'positive'}, got {value}")
    return value


def check_open_unit(value, name: str) -> float:
    """A float in the open interval (0, 1)."""
    value = check_real(value, name)
    if not 0.0 < value < 1.0:
        raise ValueError(f"{name} must lie in the open interval (0, 1), got {value}")
    return value


# ------------------------------------------------------------------------------------------------- arrays


def check_features(X, name: str = "X", *, device=None, dtype=None) -> torch.Tensor:
    """Return ``X`` as a 2-D floating tensor on ``device`` (numpy arrays, tensors and lists accepted).

    float64 input stays float64; every other input becomes float32 unless ``dtype`` says otherwise.
    Raises ``TypeError`` for non-numeric input and ``ValueError`` when ``X`` is not 2-D, has no rows or
    columns, or contains NaN or infinite values.
    """
    if isinstance(X, torch.Tensor):
        t = X.detach()
    else:
        try:
            arr = np.asarray(X)
        except Exception as exc:  # pragma: no cover - exotic inputs
            raise TypeError(f"{name} must be a numpy array or torch tensor, got {type(X).__name__}") from exc
        if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == np.bool_):
            raise TypeError(f"{name} must hold numbers, got dtype {arr.dtype}")
        arr = np.ascontiguousarray(arr)
        with warnings.catch_warnings():  # a read-only array (np.load(mmap_mode="r")) is read, never written
            warnings.filterwarnings("ignore", message="The given NumPy array is not writable")
            t = torch.from_numpy(arr)
    if t.is_complex():
        raise TypeError(f"{name} must be real, got dtype {t.dtype}")
    if t.ndim != 2:
        raise ValueError(f"{name} must be 2-D (n_samples, n_features), got shape {tuple(t.shape)}")
    if t.shape[0] == 0 or t.shape[1] == 0:
        raise ValueError(f"{name} must have at least one row and one column, got shape {tuple(t.shape)}")
    if dtype is None:
        dtype = torch.float64 if t.dtype == torch.float64 else torch.float32
    t = t.to(device=device if device is not None else t.device, dtype=dtype)
    # one pass: a NaN or an infinity makes the sum non-finite, so the exact test (several full-size temporaries:
    # 0.1 s for 50 000 x 512 on the 2-core CPU) runs only then, and tells an overflowing sum of finite entries apart
    if not bool(torch.isfinite(t.sum())) and not bool(torch.isfinite(t).all()):
        raise ValueError(f"{name} contains NaN or infinite values")
    return t


def check_gradients(G, name: str = "unlabeled gradients", *, device=None, dtype=None) -> torch.Tensor:
    """:func:`check_features` for a large gradient matrix (the same one-pass finiteness test)."""
    return check_features(G, name, device=device, dtype=dtype)


def check_labels(y, n: int, n_classes: int, *, device=None, name: str = "labels") -> torch.Tensor:
    """``y`` as a 1-D int64 tensor of ``n`` class indices in ``[0, n_classes)`` (floats, bools refused)."""
    if isinstance(y, torch.Tensor):
        t = y.detach()
    else:
        arr = np.asarray(y)
        if arr.dtype == object or not np.issubdtype(arr.dtype, np.number):
            raise TypeError(f"{name} must be integers, got dtype {arr.dtype}")
        t = torch.from_numpy(np.ascontiguousarray(arr))
    if t.dtype.is_floating_point or t.is_complex() or t.dtype == torch.bool:
        raise TypeError(f"{name} must be integer class indices, got dtype {t.dtype}")
    if t.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {tuple(t.shape)}")
    if t.shape[0] != n:
        raise ValueError(f"got {t.shape[0]} {name} for {n} rows")
    t = t.to(device=device if device is not None else t.device, dtype=torch.long)
    if n and (int(t.min()) < 0 or int(t.max()) >= n_classes):
        raise ValueError(
            f"{name} must lie in [0, {n_classes}) (the number of classes), got range [{int(t.min())}, {int(t.max())}]"
        )
    return t


def check_indices(indices, n: int, name: str = "indices", *, distinct: bool = False, allow_empty: bool = False):
    """``indices`` as a 1-D int64 numpy array of positions in ``[0, n)``.

    Refused, each with an error naming ``name``: floats (even whole-valued ones: they would be truncated),
    bools (a mask is not a list of positions), anything not 1-D, negative positions (Python and torch would
    wrap them around to the end), positions ``>= n``, an empty array (unless ``allow_empty``) and, with
    ``distinct``, a repeated position.
    """
    if isinstance(indices, torch.Tensor):
        arr = indices.detach().cpu().numpy()
    else:
        arr = np.asarray(indices)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {arr.shape}")
    if arr.size == 0:  # an empty list has no integer dtype of its own
        if not allow_empty:
            raise ValueError(f"{name} is empty: select at least one position")
        return np.zeros(0, dtype=np.int64)
    if arr.dtype == object or arr.dtype.kind not in "iu" or arr.dtype == np.bool_:
        raise TypeError(f"{name} must be integer positions, got dtype {arr.dtype} (floats would be truncated)")
    lo, hi = int(arr.min()), int(arr.max())
    if lo < 0 or hi >= n:
        raise ValueError(f"{name} must lie in [0, {n}), got values in [{lo}, {hi}] (negative values are not wrapped)")
    arr = arr.astype(np.int64, copy=False)
    if distinct:
        uniq, counts = np.unique(arr, return_counts=True)
        if uniq.size != arr.size:
            raise ValueError(f"{name} must be distinct, but {uniq[counts > 1][:5].tolist()} occur more than once")
    return arr


def check_symmetric(S: torch.Tensor, name: str = "similarity", *, rtol: float = 1e-6, atol: float = 1e-9) -> None:
    """Raise unless the square matrix ``S`` equals its transpose up to ``atol + rtol max|S|``."""
    if S.ndim != 2 or S.shape[0] != S.shape[1]:
        raise ValueError(f"{name} must be a square matrix, got shape {tuple(S.shape)}")
    gap = float((S - S.T).abs().max()) if S.numel() else 0.0
    scale = float(S.abs().max()) if S.numel() else 0.0
    if gap > atol + rtol * scale:
        raise ValueError(
            f"{name} must be symmetric (s_ij = s_ji): the largest |s_ij - s_ji| is {gap:.3g} "
            f"(tolerance {atol + rtol * scale:.3g})"
        )


# ------------------------------------------------------------------------------------------------ budgets


def check_budget(k, n: int, name: str = "k", what: str = "unlabeled samples") -> int:
    """A positive int ``k <= n`` (a coreset never repeats an element)."""
    k = check_count(k, name, allow_zero=False)
    if k > n:
        raise ValueError(f"{name} = {k} exceeds the number of {what} ({n}); a coreset has distinct elements")
    return k


def check_batch_size(batch_size, name: str = "batch_size") -> int:
    """A positive int mini-batch size."""
    return check_count(batch_size, name, allow_zero=False)


def check_labeled_not_empty(logits) -> None:
    """A clear error for an empty labeled set (before the generic "at least one row" of the matrix check)."""
    if isinstance(logits, (torch.Tensor, np.ndarray)) and logits.ndim == 2 and logits.shape[0] == 0:
        raise ValueError("the labeled set is empty: L_S (the labeled loss) needs at least one labeled sample")


# ---------------------------------------------------------------------------------- the ecosystem's conventions

#: scikit-learn's mark of an unlabeled row in ``y`` (``sklearn.semi_supervised``)
UNLABELED = -1


class Params:
    """scikit-learn's parameter protocol, without importing scikit-learn: :meth:`get_params` reads the constructor's
    arguments back from the attributes of the same names (the constructor stores each argument as given), and
    :meth:`set_params` re-runs the constructor with some of them changed, so every value is checked again.
    :func:`sklearn.base.clone` therefore works: it builds an unfitted copy from ``get_params(deep=False)``."""

    @classmethod
    def _get_param_names(cls) -> list:
        import inspect

        sig = inspect.signature(cls.__init__)
        return sorted(
            n for n, p in sig.parameters.items() if n != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        )

    def get_params(self, deep: bool = True) -> dict:
        """The constructor's arguments (with ``deep``, also ``name__key`` for every parameter of a nested estimator)."""
        out = {}
        for name in self._get_param_names():
            value = getattr(self, name)
            if deep and hasattr(value, "get_params") and not isinstance(value, type):
                out.update((f"{name}__{k}", v) for k, v in value.get_params(deep=True).items())
            out[name] = value
        return out

    def set_params(self, **params):
        """Change constructor arguments (``name__key`` changes a nested estimator's); every value is checked again, and
        an unknown name is refused with the valid ones. Returns ``self`` (unfitted state of the constructor)."""
        if not params:
            return self
        valid = self.get_params(deep=False)
        own, nested = {}, {}
        for key, value in params.items():
            name, _, sub = key.partition("__")
            if name not in valid:
                raise ValueError(f"{type(self).__name__} has no parameter {name!r}; its parameters: {sorted(valid)}")
            if sub:
                nested.setdefault(name, {})[sub] = value
            else:
                own[name] = value
        for name, sub in nested.items():
            target = own.get(name, valid[name])
            if not hasattr(target, "set_params"):
                raise ValueError(f"{type(self).__name__}.{name} has no parameters to set ({sorted(sub)})")
            target.set_params(**sub)
        checked = type(self)(**{**valid, **own})  # raises before anything of self changes
        self.__dict__.update(checked.__dict__)
        return self

    #: scikit-learn's estimator type: "classifier" for the trainers (``fit(X, y)``, ``predict``, ``score``), None for
    #: the selectors (``fit(X)``, no target)
    _estimator_type = None

    def __sklearn_tags__(self):
        """scikit-learn's tags (imported only when scikit-learn asks for them)."""
        from sklearn.utils import ClassifierTags, Tags, TargetTags

        classifier = self._estimator_type == "classifier"
        return Tags(
            estimator_type=self._estimator_type,
            target_tags=TargetTags(required=classifier),
            classifier_tags=ClassifierTags() if classifier else None,
        )

    def __sklearn_clone__(self):
        """:func:`sklearn.base.clone`: an unfitted copy built from deep copies of the parameters (the constructor's
        checks may normalise a value, e.g. ``0`` to ``0.0``, so scikit-learn's identity test is not applied); a
        model trained in place by ``fit`` is copied at the weights it had when the first ``fit`` began."""
        from sklearn.base import clone

        new = type(self)(**{k: clone(v, safe=False) for k, v in self.get_params(deep=False).items()})
        initial = getattr(self, "_initial_model", None)  # a fitted trainer's model: back to its first-fit weights
        trained_in_place = initial is not None and initial[0] is getattr(self, "model", None)
        if trained_in_place and getattr(new, "model", None) is not None:
            new.model.load_state_dict(initial[1])
        return new

    # IPython shows the plain repr (scikit-learn's BaseEstimator would add an HTML diagram)
    _repr_html_ = None
    _repr_mimebundle_ = None


def from_torch_data(data, name: str, *, labels: bool = True):
    """``(X, y)`` tensors from a PyTorch ``Dataset`` or ``DataLoader`` (its items ``(x, y)``, or ``x`` alone when
    ``labels`` is False: then ``y`` is None and an item's second element, if any, is ignored); any other value is
    returned unchanged as ``(data, None)``. A loader is read once, in its own order (do not shuffle a loader whose
    row order matters, e.g. for the indices of a selection); items are stacked with ``torch.stack``."""
    from torch.utils.data import DataLoader, Dataset

    if not isinstance(data, (Dataset, DataLoader)):
        return data, None
    if isinstance(data, DataLoader):
        batches = list(data)
        stack = torch.cat
    else:
        try:
            size = len(data)
        except TypeError:
            raise TypeError(f"{name}: an iterable Dataset has no length: pass a DataLoader over it") from None
        batches = [data[i] for i in range(size)]
        stack = torch.stack
    if not batches:
        raise ValueError(f"{name} is empty (0 samples)")
    xs, ys = [], []
    for item in batches:
        if isinstance(item, (tuple, list)):
            if labels and len(item) < 2:
                raise ValueError(f"{name} must give (x, y) pairs, got items of length {len(item)}")
            xs.append(torch.as_tensor(item[0]))
            if labels:
                ys.append(torch.as_tensor(item[1]))
        elif labels:
            raise ValueError(f"{name} must give (x, y) pairs, got single {type(item).__name__} items")
        else:
            xs.append(torch.as_tensor(item))
    return stack(xs), (stack(ys) if labels else None)


def pairs_from_torch_data(X, y, x_name: str, y_name: str):
    """``(X, y)`` with ``X`` a ``Dataset`` / ``DataLoader`` of ``(x, y)`` pairs read by :func:`from_torch_data` (then
    ``y`` must be None: the pairs hold the labels); arrays pass through unchanged."""
    X, pairs = from_torch_data(X, x_name)
    if pairs is None:
        return X, y
    if y is not None:
        raise ValueError(f"{x_name} is a Dataset or DataLoader of (x, y) pairs: pass {y_name}=None")
    return X, pairs


def split_unlabeled(X, y, name: str = "y"):
    """scikit-learn's semi-supervised convention: rows of ``y`` equal to ``-1`` are unlabeled. Returns ``(X_l, y_l,
    X_u)`` (``X_u`` None when no row is unlabeled); numpy or torch in, the same kind out. Other negative labels
    are left for the caller's label checks."""
    is_tensor = isinstance(y, torch.Tensor)
    mask = (y == UNLABELED) if is_tensor else (np.asarray(y) == UNLABELED)
    if not bool(mask.any()):
        return X, y, None
    if bool(mask.all()):
        raise ValueError(f"every row of {name} is -1 (unlabeled): give at least one labeled row")
    if isinstance(X, torch.Tensor):
        m = torch.as_tensor(mask, device=X.device)
        X_l, X_u = X[~m], X[m]
    else:
        m = mask.cpu().numpy() if is_tensor else mask
        X_l, X_u = np.asarray(X)[~m], np.asarray(X)[m]
    y_l = y[~mask] if is_tensor else np.asarray(y)[~mask]
    return X_l, y_l, X_u
