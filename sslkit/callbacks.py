"""Training callbacks built on the engine contract: paper C's Algorithm 1 (coreset selection of the
unlabeled set every R epochs) and a wall-clock stop (paper C's Full-EarlyStop).

:class:`CoresetSelection` -- paper C Algorithm 1 (§3.3-3.5):

* before epoch 1 (no warm start): a uniformly random initial coreset of ``k`` unlabeled samples; with a
  warm start of ``warm_epochs`` epochs on the full unlabeled set (§3.4, ``T_w = κ T k / m``) the first
  selection comes from the warm model instead;
* then every ``every`` epochs (R = 20 in the paper) a new selection from the current model;
* the trainer restricts its unlabeled sampler to the coreset with the strategy's per-sample weights (CRAIG's
  Voronoi-cell sizes, GradMatch's OMP weights; ones for Retrieve and Random), which multiply the unlabeled
  loss (eq. 2); with ``Trainer(iterations_per_epoch="unlabeled")`` one epoch is ``|S| / batch`` iterations
  (§3.5);
* the selection's wall-clock is part of the run's (it is a hook: ``trainer.timings_["hook:coreset"]`` and
  ``timings_["total"]`` include it; CORDS' ``train_ssl.py`` never adds it to its total time).

Three pieces: the selection inputs at the current model (:class:`~sslkit.coreset.SelectionInputs`: what the
strategy ``needs``), a strategy object (:func:`sslkit.coreset.make_strategy`, every option checked at
construction) and a schedule (one :class:`~sslkit.algorithms.Hook`).

Gradients (§3.4). For every unlabeled sample the algorithm's own per-sample unlabeled loss ``m_j l_u(x_j)``
(its pure :meth:`~sslkit.algorithms.SSLAlgorithm.unlabeled_losses`, which changes no state) is
differentiated with respect to its logits; the last-layer gradient follows in closed form
(:func:`sslkit.coreset.last_layer_gradients`):
``gradients="bias"`` (CORDS' ``linear_layer=False``) or ``"bias_weight"`` (``[g0 | g0 ⊗ h]``). The labeled
side is the labeled set's logits and features at θ_t. ``mode="eval"`` (default) computes both with dropout
off and BatchNorm running statistics; ``mode="train"`` as CORDS does (train mode, BatchNorm statistics left
untouched), which makes two selections from the same model differ (D8). Retrieve's step size α_t is the
optimiser's current (scheduled) learning rate (the base rate with ``cords_compatible=True``, as CORDS) and
λ_t the algorithm's ``lambda_u`` (:func:`sslkit.coreset.round_step`).

:class:`WallClockStop` -- stop a run once its wall-clock since the start of training passes ``seconds``
(Full-EarlyStop: the full run stopped at Retrieve's wall-clock, selection included).
"""

from __future__ import annotations

import contextlib
import math
import time

import torch

from sslkit._checks import check_bool, check_count, check_real, check_seed
from sslkit.algorithms.base import Hook, eval_logits, forward, frozen_bn
from sslkit.coreset import (
    STRATEGIES,
    CoresetStrategy,
    RandomCoreset,
    SelectionInputs,
    last_layer_gradients,
    logit_gradients,
    make_strategy,
)

__all__ = ["CoresetSelection", "STRATEGIES", "WallClockStop", "warm_start_epochs"]

GRADIENTS = ("bias", "bias_weight")
MODES = ("eval", "train")


def warm_start_epochs(kappa: float, epochs: int, fraction: float) -> int:
    """Paper C §3.4: ``T_w = κ T k / m`` epochs on the full unlabeled set (rounded to the nearest epoch);
    the iterations they take equal κ of a coreset run of T epochs (``κ T k / B``), the budget CORDS uses."""
    kappa = check_real(kappa, "kappa", low=0.0, high=1.0, high_open=True)
    fraction = check_real(fraction, "fraction", low=0.0, high=1.0, low_open=True)
    return int(round(kappa * check_count(epochs, "epochs") * fraction))


class CoresetSelection:
    """Paper C Algorithm 1 as a callback (module docstring).

    ``CoresetSelection(strategy, k, every=20, warm_epochs=0, gradients="bias", mode="eval", chunk=512,
    batch_size=50, seed=0, normalize_weights=False, **strategy_options)``; register ``cb.hooks()`` with the
    trainer (or pass ``hooks=cb.hooks()``) and train with ``iterations_per_epoch="unlabeled"``.

    * ``strategy``: a name of :data:`sslkit.coreset.STRATEGIES` -- "random", "retrieve", "retrieve_per_class"
      (Retrieve inside each pseudo-class), "craig" (per batch), "gradmatch" (per batch), "crust" (per
      pseudo-class facility location; train with :class:`~sslkit.algorithms.CrustMixup`) or "bayesian" (GIGA,
      paper C Figure 5) -- built by :func:`sslkit.coreset.make_strategy` with ``k``, ``batch_size`` (the
      per-batch variants' mini-batch: the unlabeled batch size), ``seed`` and ``strategy_options``
      (Retrieve's ``greedy``, ``epsilon``, ``cords_compatible``...; GradMatch's ``lam``...; checked now); or
      a :class:`~sslkit.coreset.CoresetStrategy` object (then ``k`` is its own and ``strategy_options`` empty);
    * ``every``: R, the epochs between selections (None: one selection, kept to the end);
      ``warm_epochs``: epochs on the full pool before the first selection (0: a random first coreset);
    * ``gradients``: "bias" or "bias_weight"; ``mode``: "eval" or "train" (module docstring); ``chunk``:
      rows per forward pass of the gradient computation;
    * ``normalize_weights``: divide the strategy's weights by their mean over the coreset (the papers do
      not say how CRAIG's, GradMatch's or the Bayesian coreset's weights scale the loss; raw weights of
      ``N / k`` on average, or far more for GIGA's few large weights, multiply the unlabeled loss).

    Attributes: ``strategy_`` (the strategy object), ``selections_`` -- one dict per selection: ``epoch``
    (completed epochs), ``indices``, ``weights``, ``seconds`` (the whole selection: gradients + strategy),
    ``cpu_seconds`` (its process CPU time), ``strategy_seconds``, ``flat`` (every unlabeled gradient was
    exactly zero -- a saturated model: a gradient strategy had no direction, e.g. GIGA's ``flat_`` case).
    """

    def __init__(
        self,
        strategy,
        k=None,
        *,
        every=20,
        warm_epochs=0,
        gradients="bias",
        mode="eval",
        chunk=512,
        batch_size=50,
        seed=0,
        normalize_weights=False,
        **strategy_options,
    ):
        if gradients not in GRADIENTS:
            raise ValueError(f"gradients must be one of {GRADIENTS}, got {gradients!r}")
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
        self.gradients, self.mode = gradients, mode
        self.every = None if every is None else check_count(every, "every (R)", allow_zero=False)
        self.warm_epochs = check_count(warm_epochs, "warm_epochs")
        self.chunk = check_count(chunk, "chunk", allow_zero=False)
        self.batch_size = check_count(batch_size, "batch_size", allow_zero=False)
        self.seed = check_seed(seed)
        self.normalize_weights = check_bool(normalize_weights, "normalize_weights")
        self.strategy_ = self._strategy(strategy, k, strategy_options)
        self.strategy, self.k = strategy if isinstance(strategy, str) else type(strategy).__name__, self.strategy_.k
        self.initial_ = RandomCoreset(self.k, seed=self.seed)  # Algorithm 1's first coreset without a warm start
        self.selections_ = []

    def _strategy(self, strategy, k, options) -> CoresetStrategy:
        if isinstance(strategy, CoresetStrategy):
            if options or (k is not None and k != strategy.k):
                raise ValueError("a strategy object carries its own k and options: pass neither")
            return strategy
        if not isinstance(strategy, str) or strategy not in STRATEGIES:
            raise ValueError(f"strategy must be one of {tuple(STRATEGIES)} or a CoresetStrategy, got {strategy!r}")
        if k is None:
            raise TypeError(f"CoresetSelection({strategy!r}) needs the coreset size k")
        return make_strategy(strategy, k, batch_size=self.batch_size, seed=self.seed, **options)

    def hooks(self) -> list[Hook]:
        """The schedule: before epoch 1 (a check, and the random first coreset without a warm start), then
        before epoch ``warm_epochs + 1`` and every ``every``-th epoch after (once with ``every=None``)."""
        hooks = [Hook(self.select, start=self.warm_epochs, every=self.every, when="before", name="coreset")]
        if self.warm_epochs:  # the inputs are checked before training, not after the warm-up
            hooks.insert(0, Hook(self.check, every=None, when="before", name="coreset_check"))
        return hooks

    # ---------------------------------------------------------------------------------- selection
    def check(self, trainer) -> None:
        """Raise a clear error now for a trainer this selection cannot work with."""
        if trainer.sampler_ is None:
            raise ValueError(
                "CoresetSelection needs an algorithm that uses unlabeled data (the trainer has no unlabeled sampler)"
            )
        if self.k > trainer.sampler_.n:
            raise ValueError(f"k = {self.k} exceeds the unlabeled pool ({trainer.sampler_.n} samples)")
        if "gradients" in self.strategy_.needs and not trainer.algorithm.has_unlabeled_losses():
            raise ValueError(
                f"{type(trainer.algorithm).__name__} has no per-sample unlabeled losses (unlabeled_losses): "
                f"it cannot drive the gradient-based strategy {self.strategy!r}"
            )

    def select(self, trainer) -> None:
        """Choose a coreset from the current model and restrict the trainer's unlabeled sampler to it."""
        t0, c0 = time.perf_counter(), time.process_time()
        self.check(trainer)
        draw = len(self.selections_)
        strategy = self.initial_ if draw == 0 and self.warm_epochs == 0 else self.strategy_
        inputs = self.inputs_at(trainer, strategy.needs, draw)
        t_strategy = time.perf_counter()
        indices, weights = strategy.select(inputs)
        strategy_seconds = time.perf_counter() - t_strategy
        if self.normalize_weights:  # mean 1 over the coreset: the loss keeps the scale of unweighted training
            weights = weights / weights.mean()
        trainer.sampler_.restrict(indices, weights)
        self.selections_.append(
            {
                "epoch": trainer.epoch,
                "indices": indices.clone(),
                "weights": weights.clone(),
                "seconds": time.perf_counter() - t0,
                "cpu_seconds": time.process_time() - c0,
                "strategy_seconds": strategy_seconds,
                "flat": inputs.gradients is not None and not bool(inputs.gradients.any()),
            }
        )

    def inputs_at(self, trainer, needs=("gradients", "labeled", "pseudo_labels"), draw: int = 0) -> SelectionInputs:
        """The :class:`~sslkit.coreset.SelectionInputs` of the current model: the fields in ``needs`` (the
        gradients and the labeled side from :meth:`gradients_at`, the pseudo-labels from
        :meth:`pseudo_labels`), α_t (the optimiser's current rate), the base rate, λ_t (``lambda_u``)."""
        G = Z = y = H = classes = None
        if "gradients" in needs or "labeled" in needs:
            G, Z, y, H = self.gradients_at(trainer, labeled="labeled" in needs)
        if "pseudo_labels" in needs:
            classes = self.pseudo_labels(trainer)
        return SelectionInputs(
            trainer.sampler_.n,
            G,
            Z,
            y,
            H,
            classes,
            lr=trainer.optimizer_.param_groups[0]["lr"],
            base_lr=trainer.lr,
            lam=trainer.algorithm.lambda_u,
            draw=draw,
        )

    def pseudo_labels(self, trainer) -> torch.Tensor:
        """CRUST's hypothesized labels: ``argmax`` of the current model's logits on the unlabeled pool (eval
        mode: dropout off, BatchNorm running statistics; int64, pool order)."""
        return eval_logits(trainer.model, trainer.data_["X_u"], chunk=self.chunk).argmax(dim=1)

    def gradients_at(self, trainer, *, labeled: bool = True):
        """``(G, Z_l, y_l, H_l)`` at the current model: per-sample last-layer gradients of the unlabeled
        pool (``N x d``, in pool order) and, with ``labeled``, the labeled logits, labels and penultimate
        features (``H_l`` None with ``gradients="bias"``; the last three None without ``labeled``)."""
        model, algo, X_u, X_l = trainer.model, trainer.algorithm, trainer.data_["X_u"], trainer.data_["X_l"]
        with self._selection_mode(model):
            G = torch.cat([self._chunk_gradients(algo, model, X_u, i) for i in range(0, X_u.shape[0], self.chunk)])
            if not labeled:
                return G, None, None, None
            with torch.no_grad():
                Z_l, H_l = zip(*(forward(model, X_l[i : i + self.chunk]) for i in range(0, X_l.shape[0], self.chunk)))
        Z = torch.cat([z.float() for z in Z_l])
        H = torch.cat([h.float() for h in H_l]) if self.gradients == "bias_weight" else None
        return G, Z, trainer.data_["y_l"], H

    @contextlib.contextmanager
    def _selection_mode(self, model):
        """``mode``'s train/eval flags and frozen BatchNorm statistics; every module's flag restored after."""
        flags = [(m, m.training) for m in model.modules()]
        model.train(self.mode == "train")
        try:
            with frozen_bn(model):
                yield
        finally:
            for m, flag in flags:
                m.training = flag

    def _chunk_gradients(self, algo, model, X_u, start: int) -> torch.Tensor:
        """Last-layer gradients of the rows ``start .. start + chunk`` of the pool."""
        idx = torch.arange(start, min(start + self.chunk, X_u.shape[0]), device=X_u.device)
        u = algo.unlabeled_losses(model, X_u[idx], idx)
        if u.logits is None:
            raise ValueError(
                f"{type(algo).__name__}.unlabeled_losses returns no logits: it cannot be used for "
                "gradient-based coreset selection"
            )
        if self.gradients == "bias_weight" and u.features is None:
            raise ValueError(
                "gradients='bias_weight' needs the penultimate features: the model must return (logits, features)"
            )
        g0 = logit_gradients(u.masked(), u.logits)
        return last_layer_gradients(g0, u.features.detach() if self.gradients == "bias_weight" else None)

    def __repr__(self):
        return (
            f"CoresetSelection({self.strategy!r}, k={self.k}, every={self.every}, warm_epochs={self.warm_epochs}, "
            f"gradients={self.gradients!r}, mode={self.mode!r})"
        )


class WallClockStop:
    """Stop training once ``seconds`` of wall-clock have passed since the first epoch started (checked after
    every iteration): paper C's Full-EarlyStop, the full run stopped at another run's wall-clock."""

    def __init__(self, seconds: float):
        if (
            isinstance(seconds, bool)
            or not isinstance(seconds, (int, float))
            or not math.isfinite(seconds)
            or seconds <= 0
        ):
            raise ValueError(f"seconds must be a positive finite number, got {seconds!r}")
        self.seconds = float(seconds)
        self.start_ = None

    def hooks(self) -> list[Hook]:
        return [
            Hook(self._start, every=None, unit="epoch", when="before", name="wall_clock_start"),
            Hook(self._check, unit="iteration", name="wall_clock_stop"),
        ]

    def _start(self, trainer) -> None:
        self.start_ = time.perf_counter()

    def _check(self, trainer) -> None:
        if time.perf_counter() - self.start_ >= self.seconds:
            trainer.stop_training = True
