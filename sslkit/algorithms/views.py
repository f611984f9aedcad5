"""Augmented views of a batch -- the weak and strong views that FixMatch, FlexMatch, FreeMatch and Mean
Teacher compose (paper A App. D.1, USB, paper C App. C).

:class:`Views` picks the augmentation family from the input shape (``augment="auto"``: 2-D ``(N, d)``
tabular -- noise σ 0.1 / σ 0.2 + feature dropout 0.1; ``(N, 1, H, W)`` MNIST-family; ``(N, 3, H, W)``
CIFAR-family; :mod:`sslkit.data.augment`) or uses the named family, or ``weak=`` / ``strong=`` callables.

Images must reach the augmentations in ``[0, 1]``. If the inputs given to the trainer were normalised
(``images_to_tensor(X, mean, std)``), pass the same ``mean`` / ``std``: a view is computed as
``normalize(aug(denormalize(x)))`` -- App. D.1's "followed by normalization".
"""

from __future__ import annotations

import torch

from sslkit.algorithms.base import forward
from sslkit.data.augment import AUGMENTATIONS

__all__ = ["Views", "weak_strong_forward", "unlabeled_forward", "SELECTION_PREFIX_ROWS"]

#: Rows of a stand-in labeled batch that :func:`unlabeled_forward` puts in front of the unlabeled rows (see there).
SELECTION_PREFIX_ROWS = 1


def _per_channel(v, name):
    if v is None:
        return None
    t = torch.as_tensor(v, dtype=torch.float32).reshape(-1)
    if not torch.isfinite(t).all():
        raise ValueError(f"{name} must be finite, got {v!r}")
    return t


class Views:
    """Weak and strong views of a batch (module docstring).

    ``augment`` in ("auto", "tabular", "mnist", "cifar"); ``weak`` / ``strong``: optional callables batch ->
    batch overriding the family's; ``mean`` / ``std``: per-channel normalisation the inputs carry (None:
    inputs in [0, 1] or tabular).
    """

    def __init__(self, augment="auto", *, weak=None, strong=None, mean=None, std=None):
        if augment != "auto" and augment not in AUGMENTATIONS:
            raise ValueError(f"augment must be 'auto' or one of {tuple(AUGMENTATIONS)}, got {augment!r}")
        for f, nm in ((weak, "weak"), (strong, "strong")):
            if f is not None and not callable(f):
                raise TypeError(f"{nm} must be callable (batch -> batch) or None, got {type(f).__name__}")
        if (mean is None) != (std is None):
            raise ValueError("give both mean and std, or neither")
        self.augment, self.weak_fn, self.strong_fn = augment, weak, strong
        self.mean, self.std = _per_channel(mean, "mean"), _per_channel(std, "std")
        if self.std is not None and (self.std <= 0).any():
            raise ValueError(f"std must be positive, got {std!r}")

    def family(self, x: torch.Tensor) -> str:
        """The augmentation family for a batch shape (``augment="auto"``)."""
        if self.augment != "auto":
            return self.augment
        if x.dim() == 2:
            return "tabular"
        if x.dim() == 4 and x.shape[1] in (1, 3):
            return "mnist" if x.shape[1] == 1 else "cifar"
        raise ValueError(
            f"cannot pick augmentations for inputs of shape {tuple(x.shape)}: pass augment= or weak=/strong= callables"
        )

    def _functions(self, x: torch.Tensor):
        weak_fn, strong_fn = (None, None)
        if self.weak_fn is None or self.strong_fn is None:
            weak_fn, strong_fn = AUGMENTATIONS[self.family(x)]
        return self.weak_fn or weak_fn, self.strong_fn or strong_fn

    def _apply(self, fn, x: torch.Tensor) -> torch.Tensor:
        if self.mean is None:
            return fn(x)
        shape = (1, -1) + (1,) * (x.dim() - 2)
        m, s = self.mean.to(x.device, x.dtype).view(shape), self.std.to(x.device, x.dtype).view(shape)
        return (fn(x * s + m) - m) / s

    def weak(self, x: torch.Tensor) -> torch.Tensor:
        """The weak view of ``x``."""
        return self._apply(self._functions(x)[0], x)

    def strong(self, x: torch.Tensor) -> torch.Tensor:
        """The strong view of ``x``."""
        return self._apply(self._functions(x)[1], x)

    def pair(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(weak(x), strong(x))``, in that order (the order the random draws are taken in)."""
        return self.weak(x), self.strong(x)

    def __repr__(self) -> str:
        return f"Views(augment={self.augment!r})"


def weak_strong_forward(model, views: Views, x_l: torch.Tensor, x_u: torch.Tensor):
    """One forward over ``[weak(x_l), weak(x_u), strong(x_u)]`` (one BatchNorm batch, USB's ``use_cat``).

    Returns ``(z_l, z_w, z_s, h_s)``: float32 logits of the three parts and the penultimate features of the
    strong view (None for a model that returns bare logits). The views are drawn in that order.
    """
    n_l, n_u = x_l.shape[0], x_u.shape[0]
    x_lw = views.weak(x_l)
    x_uw, x_us = views.pair(x_u)
    logits, feats = forward(model, torch.cat([x_lw, x_uw, x_us]))
    logits = logits.float()
    h_s = None if feats is None else feats[n_l + n_u :]
    return logits[:n_l], logits[n_l : n_l + n_u], logits[n_l + n_u :], h_s


def unlabeled_forward(model, views: Views, x_u: torch.Tensor, *, strong: bool = True):
    """The unlabeled part of a training step's forward, without a labeled batch (the methods'
    :meth:`~sslkit.algorithms.SSLAlgorithm.unlabeled_losses`).

    ``strong=True``: ``(z_w, z_s, h_s)`` as :func:`weak_strong_forward` returns them for ``x_u`` (FixMatch,
    FlexMatch, FreeMatch); ``strong=False``: ``(z_w, h_w)``, the logits and features of one weak view of
    ``x_u`` (Mean Teacher's student).

    Compatibility (documented choice, issue 20): the first :data:`SELECTION_PREFIX_ROWS` rows of ``x_u`` also
    go in front, as the stand-in of a labeled batch -- their weak view is drawn first and forwarded with the
    rest, then dropped. The views are random, so this keeps the draws of the global RNG (and the shape of
    the one forward) of the coreset selections in the committed paper C records, which were computed from a
    training step with one labeled row in front. In eval mode (the selection's default) the rows are
    independent in the forward, so the prefix changes no loss (in train mode BatchNorm's batch statistics
    include it, as they included the labeled row); set :data:`SELECTION_PREFIX_ROWS` to 0 when those records
    are regenerated.
    """
    x_p = x_u[:SELECTION_PREFIX_ROWS]
    if strong:
        _, z_w, z_s, h_s = weak_strong_forward(model, views, x_p, x_u)
        return z_w, z_s, h_s
    n_p = x_p.shape[0]
    logits, feats = forward(model, torch.cat([views.weak(x_p), views.weak(x_u)]))
    return logits[n_p:].float(), None if feats is None else feats[n_p:]
