"""FlexMatch (Zhang et al., NeurIPS 2021, "FlexMatch: Boosting Semi-Supervised Learning with Curriculum
Pseudo Labeling"), as run by USB for paper B (RDSS) §7.2 / Table 1.

FlexMatch is FixMatch with a **class-wise** threshold ("curriculum pseudo labeling", CPL). With ``p`` the
detached softmax of the weak view, ``ŷ = argmax p`` and τ the fixed threshold (0.95):

* learning effect (FlexMatch §3.2): ``σ_c = #{unlabeled samples whose latest confident (max p >= τ)
  prediction is c}`` -- a per-sample state ``selected_label_`` of length N_U, initialised to −1
  ("never confident"), so that ``σ_c = #{i : selected_label_[i] = c}`` and ``#unused = #{i : ... = −1}``;
* normalised effect with the threshold warm-up (FlexMatch §3.3, ``thresh_warmup=True``):
  ``β_c = σ_c / max(max_c' σ_c', #unused)``; without warm-up ``β_c = σ_c / max_c' σ_c'``;
* class-wise threshold with the convex mapping ``M(x) = x / (2 − x)`` (FlexMatch §3.4, USB's choice):
  ``T_c = τ · β_c / (2 − β_c)``;
* loss: ``CE(f(weak(x_l)), y_l) + lambda_u · mean_{x in U-batch}(1[max p >= T_ŷ] · CE(f(strong(x)), ŷ))``,
  the mean taken over the **whole** unlabeled batch (USB).

Order within one step, as in USB's ``FlexMatchThresholdingHook`` : the
mask uses the thresholds of the **previous** β; only **after** masking are ``selected_label_`` (for the
batch samples with ``max p >= τ``, the fixed τ) and then β (``classwise_acc_``) updated.

Initial state: ``classwise_acc_ = 0``, hence every class threshold is ``τ · 0 / 2 = 0`` and **at the
start FlexMatch uses every pseudo-label** (USB/TorchSSL behaviour, TorchSSL issue #1). With the warm-up,
β stays small while most unlabeled samples are still unused (``#unused`` dominates the normaliser), so
thresholds rise gradually. A class that is never predicted confidently keeps β_c = 0, i.e. threshold 0.

Labeled sets with missing classes (RDSS, Random or k-means at m = 40)
are harmless: β is computed from unlabeled predictions only, and its normaliser is never 0 (with the
warm-up ``max(max σ, #unused) >= 1`` because ``Σσ + #unused = N_U``; without it β keeps its previous
value until some sample is selected). Pass ``num_classes`` to the trainer when the labeled set may miss
the highest classes.

Implementation: vectorised, no per-sample Python and no host synchronisation per step (except the one
range check of a given ``u_idx``); σ comes from one ``bincount`` over ``selected_label_ + 1``. Writes go through a
scratch slot, so unselected rows write
nowhere. One deviation from USB: USB skips the β update when *all* N_U samples carry the same label
(its ``max(counter) < N`` test, meant to detect "nothing selected yet"); here β is always recomputed,
which coincides with USB whenever at least one sample was selected and not all N_U share one class.
Everything else -- masks, ``selected_label_``, ``classwise_acc_`` with and without the warm-up, losses and
gradients over several steps -- agrees with USB (``semilearn`` 0.3.2) in tests/test_usb_oracle.py, which also
shows this one difference.

Sample indices. The per-sample state needs the dataset indices of the unlabeled batch: ``batch.u_idx``
(int64, one index in ``[0, N_U)`` per row of ``x_u``), which :class:`sslkit.engine.Trainer` always passes.
An index may occur twice in one batch (the trainer's batches are cut from a stream of permutations, and a
batch can straddle two of them); that sample's slot then keeps one of its two writes.
When ``u_idx`` is None (a batch built by hand) FlexMatch falls back to a documented approximation:
``selected_label_`` is used as a **ring buffer** -- each confident prediction is written into the next
slot (modulo N_U), so σ_c counts class c among the last N_U confident predictions and ``#unused`` is the
number of slots never written. It agrees with the exact rule until the first sample is confident twice;
afterwards it over-counts samples that are repeatedly confident. ``index_mode_`` records which rule the
last step used ("exact" or "ring").

FlexMatch is :class:`sslkit.algorithms.FixMatch` with another :meth:`~FlexMatch.unlabeled_mask`: the views,
the joint forward over ``[labeled weak, unlabeled weak, unlabeled strong]`` (one BatchNorm batch, USB
``use_cat``), the weighted per-sample consistency loss are FixMatch's. :meth:`~FlexMatch.unlabeled_losses`
(an inspection, e.g. a coreset selection) masks with the current thresholds and changes no state. Logs:
``loss``, ``sup_loss``, ``unsup_loss``, ``mask_rate``,
``unused_rate`` (``#unused / N_U`` after the update).
"""

from __future__ import annotations

import torch

from sslkit._checks import check_count
from sslkit.algorithms.base import FitContext
from sslkit.algorithms.fixmatch import FixMatch

__all__ = ["FlexMatch", "flexmatch_thresholds"]


def flexmatch_thresholds(classwise_acc: torch.Tensor, threshold: float) -> torch.Tensor:
    """Class-wise thresholds ``T_c = τ · β_c / (2 − β_c)`` (FlexMatch §3.4, convex mapping) for β in [0, 1]."""
    return threshold * classwise_acc / (2.0 - classwise_acc)


class FlexMatch(FixMatch):
    """FlexMatch (module docstring).

    Parameters
    ----------
    threshold : float in [0, 1]
        The fixed τ (USB: 0.95) that defines a confident prediction and scales the class thresholds.
    lambda_u : float >= 0
        Weight of the unsupervised loss (USB: 1).
    thresh_warmup : bool
        Use the warm-up normaliser ``max(max σ, #unused)`` (USB default True).
    num_unlabeled : int or None
        N_U, the size of the per-sample state; None takes ``ctx.num_unlabeled`` (the trainer's ``X_u``).
    augment, weak, strong, mean, std
        As in :class:`sslkit.algorithms.FixMatch`.

    Attributes (after ``setup``): ``selected_label_`` (int64, N_U, −1 = never confident),
    ``classwise_acc_`` (β, float32, C), ``num_classes_``, ``num_unlabeled_``, ``index_mode_``.
    """

    name = "flexmatch"
    uses_unlabeled = True

    def __init__(
        self,
        threshold=0.95,
        *,
        lambda_u=1.0,
        thresh_warmup=True,
        num_unlabeled=None,
        augment="auto",
        weak=None,
        strong=None,
        mean=None,
        std=None,
    ):
        super().__init__(threshold, lambda_u=lambda_u, augment=augment, weak=weak, strong=strong, mean=mean, std=std)
        if not isinstance(thresh_warmup, bool):
            raise TypeError(f"thresh_warmup must be True or False, got {thresh_warmup!r}")
        self.thresh_warmup = thresh_warmup
        self.num_unlabeled = (
            None if num_unlabeled is None else check_count(num_unlabeled, "num_unlabeled", allow_zero=False)
        )
        self.selected_label_ = self.classwise_acc_ = None
        self.index_mode_ = None

    # ------------------------------------------------------------------------------------- state
    def setup(self, model, ctx: FitContext):
        """Allocate ``selected_label_ = −1`` (N_U) and ``classwise_acc_ = 0`` (C) on ``ctx.device``."""
        num_classes, device, data_n = ctx.num_classes, ctx.device, ctx.num_unlabeled
        n = self.num_unlabeled if self.num_unlabeled is not None else data_n
        if n is None:
            raise ValueError(
                "FlexMatch needs the number of unlabeled samples: pass num_unlabeled= or a "
                "FitContext with data['X_u'] (the trainer's)"
            )
        if data_n is not None and n != data_n:
            raise ValueError(f"num_unlabeled={n} but the trainer's X_u has {data_n} samples")
        self.num_classes_, self.num_unlabeled_ = num_classes, n
        self.selected_label_ = torch.full((n,), -1, dtype=torch.int64, device=device)
        self.classwise_acc_ = torch.zeros(num_classes, dtype=torch.float32, device=device)
        self._cursor = torch.zeros((), dtype=torch.int64, device=device)
        self.index_mode_ = None

    def class_thresholds(self) -> torch.Tensor:
        """The current ``T_c = τ · β_c / (2 − β_c)`` (from the β of the previous step)."""
        self._check_setup()
        return flexmatch_thresholds(self.classwise_acc_, self.threshold)

    def _check_setup(self):
        if self.selected_label_ is None:
            raise RuntimeError(
                "FlexMatch.setup(model, FitContext(...)) must be called before use "
                "(the trainer does it at the start of fit)"
            )

    def mask(self, probs: torch.Tensor) -> torch.Tensor:
        """Float 0/1 mask ``max p >= T_{argmax p}`` with the current (previous-step) thresholds."""
        self._check_setup()
        conf, labels = probs.max(dim=1)
        return (conf >= self.class_thresholds().to(probs.device)[labels]).float()

    def update(self, probs: torch.Tensor, u_idx: torch.Tensor | None = None) -> None:
        """After masking: record ``argmax p`` as the latest confident label of every batch sample with
        ``max p >= τ`` (exact with ``u_idx``, ring buffer without; module docstring), then recompute β."""
        self._check_setup()
        n = self.num_unlabeled_
        conf, labels = probs.max(dim=1)
        sel = conf >= self.threshold
        if u_idx is not None:
            slot = torch.where(sel, u_idx, n)
            self.index_mode_ = "exact"
        else:
            pos = (self._cursor + torch.cumsum(sel.to(torch.int64), 0) - 1) % n
            slot = torch.where(sel, pos, n)
            self._cursor = (self._cursor + sel.sum()) % n
            self.index_mode_ = "ring"
        buf = torch.cat([self.selected_label_, self.selected_label_.new_full((1,), -1)])
        buf[slot] = torch.where(sel, labels, -1)
        self.selected_label_ = buf[:n]
        counts = torch.bincount(self.selected_label_ + 1, minlength=self.num_classes_ + 1)
        unused, sigma = counts[0], counts[1:].to(torch.float32)
        top = sigma.max()
        if self.thresh_warmup:
            self.classwise_acc_ = sigma / torch.maximum(top, unused.to(torch.float32))
        else:
            self.classwise_acc_ = torch.where(top > 0, sigma / top.clamp_min(1.0), self.classwise_acc_)

    def _check_indices(self, u_idx, n_rows: int, device) -> torch.Tensor:
        if not isinstance(u_idx, torch.Tensor):
            raise TypeError(f"u_idx must be a torch tensor of unlabeled sample indices, got {type(u_idx).__name__}")
        if u_idx.dtype not in (torch.int64, torch.int32) or u_idx.dim() != 1 or u_idx.shape[0] != n_rows:
            raise ValueError(
                f"u_idx must be a 1-D integer tensor with one index per row of x_u ({n_rows}), got "
                f"dtype {u_idx.dtype} and shape {tuple(u_idx.shape)}"
            )
        u_idx = u_idx.to(device=device, dtype=torch.int64)
        if bool(((u_idx < 0) | (u_idx >= self.num_unlabeled_)).any()):
            raise ValueError(f"u_idx must lie in [0, num_unlabeled={self.num_unlabeled_}) (never wrapped)")
        return u_idx

    # -------------------------------------------------------------------------------------- step
    def _follow(self, device) -> None:
        """Move the state to ``device`` (the trainer may move the model after ``setup``)."""
        self._check_setup()
        if self.selected_label_.device != device:
            self.selected_label_ = self.selected_label_.to(device)
            self.classwise_acc_ = self.classwise_acc_.to(device)
            self._cursor = self._cursor.to(device)

    def targets(self, z_w):
        """``(labels, mask)`` with the current class-wise thresholds; changes no state (an inspection, e.g.
        :meth:`unlabeled_losses`)."""
        self._follow(z_w.device)
        with torch.no_grad():
            probs = torch.softmax(z_w.detach(), dim=1)
            return probs.argmax(dim=1), self.mask(probs)

    def unlabeled_mask(self, z_w, batch):
        """A training step: mask with the thresholds of the previous β, then update the state from the
        batch (USB order); returns ``(labels, mask)``."""
        self._follow(z_w.device)
        u_idx = batch.u_idx
        if u_idx is not None:
            u_idx = self._check_indices(u_idx, z_w.shape[0], z_w.device)
        with torch.no_grad():
            probs = torch.softmax(z_w.detach(), dim=1)
            mask = self.mask(probs)  # thresholds of the previous β ...
            self.update(probs, u_idx)  # ... then the state is updated (USB order)
            labels = probs.argmax(dim=1)
        return labels, mask

    def extra_logs(self):
        return {"unused_rate": (self.selected_label_ < 0).float().mean()}

    def __repr__(self) -> str:
        return (
            f"FlexMatch(threshold={self.threshold}, lambda_u={self.lambda_u}, thresh_warmup={self.thresh_warmup}, "
            f"num_unlabeled={self.num_unlabeled}, augment={self.augment!r})"
        )
