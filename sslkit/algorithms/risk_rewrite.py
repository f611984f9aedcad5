"""Paper A's risk-rewrite learners: the linear risk R̂_lin^a trained by SGD (§5.2, Algorithm 1, App. C).

All methods minimise ``R̂_lin^a = Σ_j [ a_j R̂_jj + c_j Δ_j ]``, ``c_j = 1 - a_j/θ_j``,
``Δ_j = R̂_Uj - Σ_{i≠j} θ_i R̂_ij`` (§5.2; :func:`sslkit.risk.linear_risk`, :func:`sslkit.risk.partial_risks`)
and differ only in ``a``:

* :class:`SupervisedRisk` -- ``a = θ``: the PN risk Σ θ_i R̂_ii (every c_j = 0, unlabeled data unused);
* :class:`PNU` -- binary only, ``a = pnu_to_a(θ, pnu_eta(θ, n))`` (Sakai et al. 2017; App. C);
* :class:`OursEC` -- ``a = equal_covariance_a(θ, n)``, fixed, no warm-up (§5.2 item 2, App. C);
* :class:`OursIter` -- Algorithm 1: ``a = θ`` during ``warmup_epochs``, then ``a = a*`` (Thm 3) re-estimated
  every ``update_every`` epochs from validation-set covariances (App. C: shrinkage 0.5, Tikhonov 1e-4);
* :class:`LinearRiskAlgorithm` -- any fixed ``a`` (the base class).

Here ``n`` are the class counts of the **full** labeled set. They come from ``n_per_class=`` or, when the
trainer provides it, from the labeled set in the fit context (``ctx.data["y_l"]``) at
:meth:`~LinearRiskAlgorithm.setup`.

Mini-batch estimate (Horvitz–Thompson)
--------------------------------------
Paper A's R̂_ij (eq. 1) is a mean over the ``n_i`` labeled samples of class ``i`` of the whole labeled set.
A training step sees a uniformly drawn batch ``B`` of ``|B|`` of the ``n_L`` labeled samples, in which a
class may be absent. We use the Horvitz–Thompson estimate (:func:`batch_component_risks`)::

    R̂_ij^B = Σ_{s ∈ B, y_s = i} L[s, j] * n_L / (|B| n_i)

Every labeled sample is in ``B`` with probability ``|B| / n_L``, so ``E_B[R̂^B] = R̂`` exactly (and the
epoch partition used by :class:`sslkit.engine.Trainer` -- each batch a uniform subset -- keeps this for
every batch, including a smaller last one); it is defined when a class is missing (its row is 0).
``R̂_Uj`` is the mean over the unlabeled batch (eq. 2). Labeled and unlabeled batches go through the model
in **one** concatenated forward (BatchNorm, if any, sees both; the paper's MLPs and LeNets have none).

Non-negative correction (§5.2, App. D.4): the gradient rule
------------------------------------------------------------
With ``nonnegative=True`` the *value* of the risk is ``Σ_j [a_j R̂_jj + c_j max(0, Δ_j)]`` -- this is the
logged ``"loss"``. Only terms with ``c_j ≠ 0`` are "active" (a = θ has none). A term *violates* when it is
active and ``Δ_j < 0``. The paper says only "similarly to the approach by Kiryo et al. [16]"; nnPU (one
partial risk) takes, on a violating batch, a gradient step on ``-γ R_N^-`` alone. For k partial risks we
offer (``nn_rule``):

* ``"per_term"`` (**default**): back-propagate ``Σ_j a_j R̂_jj + Σ_{j ok} c_j Δ_j - γ Σ_{j viol} |c_j| Δ_j``:
  non-violating terms keep their ordinary gradient, each violating term is replaced by gradient ascent on
  its Δ_j (weighted by its coefficient's size). Chosen because with k up to 10 partial risks and 64
  labeled samples per batch some Δ_j is often negative, and the all-or-nothing rule would then discard the
  supervised gradient of most steps.
* ``"kiryo"``: if any term violates, back-propagate only ``-γ Σ_{j viol} |c_j| Δ_j`` (nnPU's rule: the
  rest of that batch's gradient is dropped); otherwise the raw risk. For the binary PNPU case (one active
  term, c_2 = η) this is nnPU's step scaled by η.
* ``"clip"``: back-propagate the clipped value itself (zero gradient through a violating Δ_j).

``γ = gamma`` (default 1, as nnPU). With ``nonnegative=False`` the raw unbiased R̂_lin^a is both
back-propagated and logged. Logs per step: ``loss`` (the nn-corrected value), ``risk_raw`` (uncorrected),
``delta_j`` (raw Δ_j) and ``delta_nn_j`` (``max(0, Δ_j)``) for each class j (0-based), and
``nn_violations`` (number of violating terms) -- the last three only when the unlabeled batch is used.

Per-sample unlabeled losses (the engine contract, :class:`sslkit.algorithms.UnlabeledLosses`) are not
returned: the unlabeled data enter only through the class-wise means R̂_U, and the non-negative correction
acts on those means, so the risk is not a mean of per-sample terms. Per-sample weights of the batch
(``batch.u_weight``) are honoured: R̂_U becomes the weighted mean.
"""

from __future__ import annotations

import math
import numbers

import numpy as np
import torch

from sslkit.algorithms.base import (
    FitContext,
    Hook,
    LossOutput,
    SSLAlgorithm,
    UnlabeledLosses,
    eval_logits,
    forward,
    logits_of,
)
from sslkit.algorithms.risk_terms import batch_component_risks, check_class_counts, check_prior_vector, positive_number
from sslkit.risk import (
    equal_covariance_a,
    linear_risk,
    loss_covariances,
    loss_matrix,
    optimal_a,
    partial_risks,
    pnu_eta,
    pnu_to_a,
)

__all__ = [
    "LinearRiskAlgorithm",
    "SupervisedRisk",
    "PNU",
    "OursEC",
    "OursIter",
    "PerSampleRisk",
    "batch_component_risks",
    "NN_RULES",
]

NN_RULES = ("per_term", "kiryo", "clip")
_TRAINABLE_LOSSES = ("ce", "bce")
_ACTIVE_TOL = 1e-12


class LinearRiskAlgorithm(SSLAlgorithm):
    """Train with paper A's linear risk R̂_lin^a for a fixed ``a`` (§5.2; module docstring for details).

    Parameters
    ----------
    prior : (k,) class prior θ (known, as in the paper), positive, summing to 1.
    a : (k,) risk parameter; subclasses compute it at :meth:`setup` and pass None.
    nonnegative : apply the non-negative correction Δ_j -> max(0, Δ_j) (App. C: on for every method).
    loss : "ce" (softmax cross-entropy on (n, k) logits) or "bce" (binary; the model's score is
        ``logits[:, 0] - logits[:, 1]`` for a 2-logit model, see :func:`sslkit.risk.loss_matrix`).
    nn_rule : "per_term" (default), "kiryo" or "clip" -- the gradient rule of a violating Δ_j.
    gamma : step size γ of the gradient ascent on violating Δ_j (nnPU's γ, default 1).
    n_per_class : (k,) class counts of the full labeled set; None -> taken from ``ctx.data["y_l"]`` at
        :meth:`setup` (the trainer's labeled set; else setup raises).

    Attributes after setup: ``a_`` (numpy, the current a), ``n_per_class_``.
    """

    name = "linear_risk"
    uses_unlabeled = True

    def __init__(self, prior, a=None, *, nonnegative=True, loss="ce", nn_rule="per_term", gamma=1.0, n_per_class=None):
        self.prior = check_prior_vector(prior)
        self.k = self.prior.shape[0]
        if a is not None:
            a = np.asarray(a, dtype=np.float64)
            if a.shape != (self.k,) or not np.isfinite(a).all():
                raise ValueError(f"a must be {self.k} finite numbers (one per class), got {a.tolist()}")
        self.a = a
        if loss not in _TRAINABLE_LOSSES:
            raise ValueError(f"loss must be one of {_TRAINABLE_LOSSES} (differentiable), got {loss!r}")
        if loss == "bce" and self.k != 2:
            raise ValueError(f"loss 'bce' is binary but prior has {self.k} classes")
        if nn_rule not in NN_RULES:
            raise ValueError(f"nn_rule must be one of {NN_RULES}, got {nn_rule!r}")
        self.nonnegative, self.loss_name, self.nn_rule = bool(nonnegative), loss, nn_rule
        self.gamma = positive_number(gamma, "gamma")
        self.n_per_class = None if n_per_class is None else check_class_counts(n_per_class, self.k)

    # ------------------------------------------------------------------------------------ setup
    def setup(self, model, ctx: FitContext):
        """Check ``ctx.num_classes`` against the prior, fix the labeled class counts, compute ``a``."""
        if ctx.num_classes != self.k:
            raise ValueError(f"prior has {self.k} classes but the model/labels have num_classes={ctx.num_classes}")
        if self.n_per_class is not None:
            counts = self.n_per_class
        elif ctx.get("y_l") is not None:
            y_l = torch.as_tensor(ctx.get("y_l")).detach().cpu().numpy()
            counts = check_class_counts(np.bincount(y_l, minlength=self.k)[: self.k], self.k)
        else:
            raise ValueError(
                f"{type(self).__name__} needs the class counts of the full labeled set: pass "
                "n_per_class=np.bincount(y_l) (or a FitContext with data['y_l'], as the trainer does)"
            )
        self.n_per_class_ = counts
        self.device_ = ctx.device
        self._n_t = torch.as_tensor(counts, dtype=torch.float32, device=self.device_)
        self._prior_t = torch.as_tensor(self.prior, dtype=torch.float32, device=self.device_)
        self.set_a(self.initial_a())

    def initial_a(self) -> np.ndarray:
        """The ``a`` used from the first step (subclasses override)."""
        if self.a is None:
            raise ValueError(f"{type(self).__name__} needs a (the risk parameter)")
        return self.a

    def set_a(self, a) -> None:
        """Use ``a`` from the next step on (also updates the active-term mask)."""
        a = np.asarray(a, dtype=np.float64).reshape(-1)
        if a.shape != (self.k,) or not np.isfinite(a).all():
            raise ValueError(f"a must be {self.k} finite numbers, got {a.tolist()}")
        self.a_ = a
        coef = 1.0 - a / self.prior
        self._active_np = np.abs(coef) > _ACTIVE_TOL
        self._any_active = bool(self._active_np.any())
        self._a_t = torch.as_tensor(a, dtype=torch.float32, device=self.device_)
        self._coef_t = torch.as_tensor(coef, dtype=torch.float32, device=self.device_)
        self._active_t = torch.as_tensor(self._active_np, device=self.device_)

    # ------------------------------------------------------------------------------------- loss
    def _loss_matrix(self, logits: torch.Tensor) -> torch.Tensor:
        logits = logits.float()
        if self.loss_name == "bce" and logits.dim() == 2 and logits.shape[1] == 2:
            logits = logits[:, 0] - logits[:, 1]
        return loss_matrix(logits, self.loss_name)

    def risk_terms(self, model, x_l, y_l, x_u, u_weight=None):
        """Per-batch ``(R̂ (k, k), R̂_U (k,) or None)``: Horvitz–Thompson labeled estimate, unlabeled mean
        (with ``u_weight``, the weighted mean ``mean_i w_i ℓ(f(x_i), j)``, paper C eq. 2's weights).

        The unlabeled batch is skipped (R̂_U None) when no term is active (c_j = 0 for all j), since it
        then has coefficient 0 (e.g. ``a = θ`` during OursIter's warm-up)."""
        use_u = self.uses_unlabeled and self._any_active and x_u is not None
        if use_u:
            logits = logits_of(model, torch.cat([x_l, x_u]))
            L = self._loss_matrix(logits)
            L_l, L_u = L[: x_l.shape[0]], L[x_l.shape[0] :]
            R_u = L_u.mean(dim=0) if u_weight is None else (L_u * u_weight.to(L_u.dtype)[:, None]).mean(dim=0)
        else:
            L_l = self._loss_matrix(logits_of(model, x_l))
            R_u = None
        return batch_component_risks(L_l, y_l, self._n_t), R_u

    def loss(self, model, batch):
        R, R_u = self.risk_terms(model, batch.x_l, batch.y_l, batch.x_u, batch.u_weight)
        prior = self._prior_t
        if R_u is None:  # no active term: the risk is Σ_j a_j R̂_jj whatever R̂_U is
            raw = linear_risk(R, torch.zeros_like(R[0]), prior, self._a_t)
            return LossOutput(loss=raw, logs={"loss": raw.detach(), "risk_raw": raw.detach()})
        delta = partial_risks(R, R_u, prior)
        coef, g = self._coef_t, self.gamma
        # the §5.2 form of R̂_lin^a (what sslkit.risk.linear_risk computes), assembled from the same Δ so the
        # graph holds Δ once and the per-term gradient rules below act on its terms
        raw = (self._a_t * torch.diagonal(R)).sum() + (coef * delta).sum()
        d = delta.detach()
        viol = (d < 0) & self._active_t
        if not self.nonnegative:
            backprop, logged = raw, raw.detach()
        else:
            # = linear_risk(R, R_u, prior, a, nonnegative=True): replacing Δ_j by max(0, Δ_j) adds c_j max(0, -Δ_j)
            logged = raw.detach() + (coef * torch.clamp(-d, min=0)).sum()
            if self.nn_rule == "per_term":
                backprop = raw - (viol * (coef + g * coef.abs()) * delta).sum()
            elif self.nn_rule == "kiryo":
                ascent = -g * (viol * coef.abs() * delta).sum()
                backprop = torch.where(viol.any(), ascent, raw)
            else:  # clip
                backprop = raw - (viol * coef * delta).sum()
        logs = {"loss": logged, "risk_raw": raw.detach(), "nn_violations": viol.sum().float()}
        for j, (dj, dnn) in enumerate(zip(d.unbind(), d.clamp(min=0).unbind())):
            logs[f"delta_{j}"] = dj
            logs[f"delta_nn_{j}"] = dnn
        return LossOutput(loss=backprop, logs=logs)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(prior={self.prior.round(4).tolist()}, nonnegative={self.nonnegative}, "
            f"loss={self.loss_name!r}, nn_rule={self.nn_rule!r})"
        )


class SupervisedRisk(LinearRiskAlgorithm):
    """The supervised PN risk ``Σ_i θ_i R̂_ii`` (``a = θ``; paper A §6.1 / Table rows "Sup" in risk form).

    Uses no unlabeled data. Note it weights classes by the prior θ, not by their labeled frequency (plain
    cross-entropy :class:`sslkit.algorithms.Supervised` does the latter)."""

    name = "sup_risk"
    uses_unlabeled = False

    def __init__(self, prior, *, loss="ce", n_per_class=None):
        super().__init__(prior, None, nonnegative=False, loss=loss, n_per_class=n_per_class)

    def initial_a(self):
        return self.prior.copy()


class PNU(LinearRiskAlgorithm):
    """PNU learning (Sakai et al. 2017) as a member of the linear family (paper A Thm 5, App. C).

    Binary only. ``η = pnu_eta(θ, n)`` (equal-variance heuristic ψ_m = θ_m²/n_m) and
    ``a = pnu_to_a(θ, η)``; non-negative correction on by default (App. C)."""

    name = "pnu"

    def __init__(self, prior, *, nonnegative=True, loss="ce", nn_rule="per_term", gamma=1.0, n_per_class=None):
        p = check_prior_vector(prior)
        if p.shape[0] != 2:
            raise ValueError(
                f"PNU is binary only (k = 2), but prior has {p.shape[0]} classes; "
                "use OursEC or OursIter for multiclass tasks"
            )
        super().__init__(
            p, None, nonnegative=nonnegative, loss=loss, nn_rule=nn_rule, gamma=gamma, n_per_class=n_per_class
        )

    def initial_a(self):
        self.eta_ = float(pnu_eta(self.prior, self.n_per_class_))
        return np.asarray(pnu_to_a(self.prior, self.eta_), dtype=np.float64)


class OursEC(LinearRiskAlgorithm):
    """Ours (EC): ``a = equal_covariance_a(θ, n)`` -- ``a_i = θ_i (1 - w_i/W)``, ``w_i = θ_i²/n_i`` --
    fixed for the whole training, no warm-up, no validation data (paper A §5.2 item 2, App. C)."""

    name = "ours_ec"

    def __init__(self, prior, *, nonnegative=True, loss="ce", nn_rule="per_term", gamma=1.0, n_per_class=None):
        super().__init__(
            prior, None, nonnegative=nonnegative, loss=loss, nn_rule=nn_rule, gamma=gamma, n_per_class=n_per_class
        )

    def initial_a(self):
        return np.asarray(equal_covariance_a(self.prior, self.n_per_class_), dtype=np.float64)


class OursIter(LinearRiskAlgorithm):
    """Ours (Iter): paper A Algorithm 1 with the App. C settings.

    * epochs 1..``warmup_epochs``: ``a = θ`` (the supervised risk; the unlabeled batch is not used);
    * after epoch ``E`` with ``E >= warmup_epochs`` and ``(E - warmup_epochs) % update_every == 0``
      (E >= 1) -- the hook schedule ``Hook(start=warmup_epochs, every=update_every)`` -- an epoch hook re-estimates
      ``a = a*`` (Thm 3, :func:`sslkit.risk.optimal_a`) from the
      current model's losses on the validation set ``trainer.data_["X_val"], ["y_val"]``: covariances
      :func:`sslkit.risk.loss_covariances` with diagonal shrinkage ``shrinkage`` (0.5), ridge ``ridge``
      (1e-4), and ``n`` = the training labeled counts (the variance being minimised is that of the
      training estimator). The model is evaluated in eval mode (dropout off), raw weights (not EMA).
      The new ``a`` is used from the next epoch on.

    The paper does not state m (``update_every``); default 1 (every epoch). ``a_history_`` lists
    ``(epoch, a)`` pairs: ``(0, θ)`` then one per update (the a in use from epoch ``epoch + 1``).
    Each ``trainer.history_`` record also gets ``a_0 .. a_{k-1}``, the a used during that epoch.
    Validation data are required: missing ones raise ``ValueError`` after the first epoch.

    ``rare_class_rows="labeled"`` (an addition to Algorithm 1, off by default): a class with fewer than 2
    validation rows has its covariance C_m estimated from its validation rows plus its labeled training rows
    (``trainer.data_["X_l"], ["y_l"]``). Without it, such a class has no sample covariance; paper A's Shuttle
    rows need it (4 of its 7 classes have priors below 0.5 %, so 60 random validation rows rarely hold them).

    ``finite_unlabeled=True`` (not in the paper, off by default): a* minimises the variance at the actual
    ``n_U`` (Thm 2 plus the unlabeled term ``(1/n_U) vᵀ C_U v``, ``v = 1 - a/θ``; see
    :func:`sslkit.risk.optimal_a`) with ``C_U`` the covariance of the current model's loss vector over the
    unlabeled training set ``trainer.data_["X_u"]`` (no labels needed). The paper's a* takes ``n_U → ∞``.
    """

    name = "ours_iter"

    def __init__(
        self,
        prior,
        *,
        update_every=1,
        warmup_epochs=20,
        shrinkage=0.5,
        ridge=1e-4,
        nonnegative=True,
        loss="ce",
        nn_rule="per_term",
        gamma=1.0,
        n_per_class=None,
        rare_class_rows=None,
        finite_unlabeled=False,
    ):
        super().__init__(
            prior, None, nonnegative=nonnegative, loss=loss, nn_rule=nn_rule, gamma=gamma, n_per_class=n_per_class
        )
        if rare_class_rows not in (None, "labeled"):
            raise ValueError(f"rare_class_rows must be None or 'labeled', got {rare_class_rows!r}")
        self.rare_class_rows = rare_class_rows
        if not isinstance(finite_unlabeled, (bool, np.bool_)):
            raise TypeError(f"finite_unlabeled must be True or False, got {finite_unlabeled!r}")
        self.finite_unlabeled = bool(finite_unlabeled)
        self._unlabeled = None
        for v, name, zero in ((update_every, "update_every", False), (warmup_epochs, "warmup_epochs", True)):
            if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < (0 if zero else 1):
                raise ValueError(f"{name} must be an integer >= {0 if zero else 1}, got {v!r}")
        if isinstance(shrinkage, bool) or not isinstance(shrinkage, numbers.Real) or not 0 <= shrinkage <= 1:
            raise ValueError(f"shrinkage must be in [0, 1], got {shrinkage!r}")
        if isinstance(ridge, bool) or not isinstance(ridge, numbers.Real) or not math.isfinite(ridge) or ridge < 0:
            raise ValueError(f"ridge must be a finite number >= 0, got {ridge!r}")
        self.update_every, self.warmup_epochs = int(update_every), int(warmup_epochs)
        self.shrinkage, self.ridge = float(shrinkage), float(ridge)

    def setup(self, model, ctx: FitContext):
        super().setup(model, ctx)
        self.a_history_ = [(0, tuple(self.a_.tolist()))]
        if ctx.data and ctx.get("X_val") is None:
            raise ValueError(self._no_val_message())

    def initial_a(self):
        return self.prior.copy()

    def is_update_epoch(self, epoch: int) -> bool:
        """True when a is re-estimated after ``epoch`` completed epochs."""
        return self._update_hook().due(epoch)

    def _update_hook(self) -> Hook:
        return Hook(self._update, start=self.warmup_epochs, every=self.update_every, unit="epoch", name="ours_iter_a")

    def _no_val_message(self) -> str:
        return (
            "OursIter re-estimates a* on validation data (paper A Algorithm 1): pass X_val and y_val "
            "to Trainer.fit (or use OursEC, which needs none)"
        )

    def _eval_losses(self, model, X) -> np.ndarray:
        """(n, k) float64 losses of ``model`` (eval mode, no gradient) at every label."""
        return self._loss_matrix(eval_logits(model, X)).double().cpu().numpy()

    def estimate_a(self, model, X_val, y_val) -> np.ndarray:
        """a* (Thm 3) from ``model``'s losses on ``(X_val, y_val)`` with the App. C shrinkage and ridge
        (with ``finite_unlabeled``, at the actual n_U with C_U from the unlabeled set)."""
        L = self._eval_losses(model, X_val)
        y = torch.as_tensor(y_val).cpu().numpy()
        C = loss_covariances(L, y, self.k, shrinkage=self.shrinkage)
        kw = {}
        if self.finite_unlabeled:
            if self._unlabeled is None:
                raise ValueError("finite_unlabeled=True needs the unlabeled set: train with Trainer.fit(..., X_u, ...)")
            LU = self._eval_losses(model, self._unlabeled)
            kw = {"n_unlabeled": LU.shape[0], "unlabeled_covariance": np.cov(LU.T, ddof=1)}
        return np.asarray(optimal_a(C, self.prior, self.n_per_class_, ridge=self.ridge, **kw), dtype=np.float64)

    def _check_val(self, trainer) -> dict:
        data = trainer.data_
        if data.get("X_val") is None or data.get("y_val") is None:
            raise ValueError(self._no_val_message())
        return data

    def _record(self, trainer) -> None:
        """Every epoch: the a used during that epoch goes into its history record (``trainer.log``)."""
        self._check_val(trainer)
        trainer.log(**{f"a_{j}": float(v) for j, v in enumerate(self.a_)})

    def _update(self, trainer) -> None:
        """After the warm-up, every ``update_every`` epochs: re-estimate a = a* (used from the next epoch)."""
        data = self._check_val(trainer)
        self._unlabeled = data.get("X_u")
        X_val, y_val = data["X_val"], data["y_val"]
        if self.rare_class_rows == "labeled":
            X_val, y_val = self._with_rare_labeled(X_val, y_val, data["X_l"], data["y_l"])
        self.set_a(self.estimate_a(trainer.model, X_val, y_val))
        self.a_history_.append((trainer.epoch, tuple(self.a_.tolist())))

    def _with_rare_labeled(self, X_val, y_val, X_l, y_l):
        """Validation rows plus the labeled rows of every class with fewer than 2 validation rows."""
        y_val = torch.as_tensor(y_val, device=X_val.device)
        y_l = torch.as_tensor(y_l)
        few = torch.nonzero(torch.bincount(y_val, minlength=self.k) < 2).squeeze(1).to(y_l.device)
        if few.numel() == 0:
            return X_val, y_val
        rows = torch.isin(y_l, few)
        return (torch.cat([X_val, X_l[rows].to(X_val.device)]), torch.cat([y_val, y_l[rows].to(y_val.device)]))

    def hooks(self):
        return [Hook(self._record, every=1, unit="epoch", name="ours_iter_record_a"), self._update_hook()]


class PerSampleRisk(SSLAlgorithm):
    """A risk-rewrite learner with per-sample unlabeled losses, so that paper C's gradient-based coreset selection
    (Retrieve, :class:`sslkit.callbacks.CoresetSelection`) can choose its unlabeled data.

    ``PerSampleRisk(base)`` trains exactly as ``base`` (any :class:`LinearRiskAlgorithm`: :class:`OursIter`,
    :class:`OursEC`...): ``setup``, ``loss`` and ``hooks`` are the base's, and so are ``name`` and
    ``warmup_epochs``. It only adds :meth:`unlabeled_losses`.

    The unlabeled part of ``R̂_lin^a`` (§5.2) is ``Σ_j c_j R̂_Uj = mean_x Σ_j c_j ℓ(f(x), j)``, ``c_j = 1 - a_j/θ_j``:
    a mean of the per-sample terms ``l_u(x) = Σ_j c_j ℓ(f(x), j)``, returned here (weight λ = 1: the ``c_j`` are
    the weights). These are the raw risk's terms: the non-negative correction acts on the class means Δ_j (a
    violating term turns to gradient ascent on Δ_j), so it has no per-sample form and is left out of the
    selection -- why ``base`` itself declares none. With ``a = θ`` (Ours (Iter)'s warm-up) every ``c_j`` is 0 and
    so is every ``l_u``: select after the warm-up (``CoresetSelection(warm_epochs >= base.warmup_epochs)``).
    """

    uses_unlabeled = True
    lambda_u = 1.0

    def __init__(self, base):
        if not isinstance(base, LinearRiskAlgorithm):
            raise TypeError(f"base must be a LinearRiskAlgorithm (OursIter, OursEC, ...), got {type(base).__name__}")
        self.base = base
        self.name = base.name
        self.warmup_epochs = getattr(base, "warmup_epochs", 0)

    def setup(self, model, ctx: FitContext):
        self.base.setup(model, ctx)

    def loss(self, model, batch):
        return self.base.loss(model, batch)

    def hooks(self):
        return self.base.hooks()

    def unlabeled_losses(self, model, x_u, u_idx=None) -> UnlabeledLosses:
        """``l_u(x) = Σ_j c_j ℓ(f(x), j)`` of the rows ``x_u`` with the logits and features they come from."""
        if not hasattr(self.base, "a_"):
            raise RuntimeError("PerSampleRisk.unlabeled_losses needs the fitted base: call setup() (the trainer does)")
        logits, features = forward(model, x_u)
        losses = self.base._loss_matrix(logits) @ self.base._coef_t.to(logits.device)
        return UnlabeledLosses(losses, None, logits, features)

    def __repr__(self) -> str:
        return f"PerSampleRisk({self.base!r})"
