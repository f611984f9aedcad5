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

Gradients (§3.4). For every unlabeled sample the algorithm's own per-sample unlabeled loss ``m_j l_u(x_j)``
(the :class:`~sslkit.algorithms.UnlabeledLosses` of its :meth:`loss`, computed with
``Batch(update_state=False)`` so stateful methods change nothing) is differentiated with respect to its
logits; the last-layer gradient follows in closed form (:func:`sslkit.coreset.last_layer_gradients`):
``gradients="bias"`` (CORDS' ``linear_layer=False``) or ``"bias_weight"`` (``[g0 | g0 ⊗ h]``). The labeled
side is the labeled set's logits and features at θ_t. ``mode="eval"`` (default) computes both with dropout
off and BatchNorm running statistics; ``mode="train"`` as CORDS does (train mode, BatchNorm statistics left
untouched), which makes two selections from the same model differ (D8). Retrieve's step size α_t is the
optimiser's current (scheduled) learning rate (the base rate with ``cords_compatible=True``, as CORDS) and
λ_t the algorithm's ``lambda_u``.

:class:`WallClockStop` -- stop a run once its wall-clock since the start of training passes ``seconds``
(Full-EarlyStop: the full run stopped at Retrieve's wall-clock, selection included).
"""

from __future__ import annotations

import math
import time

import torch

from sslkit._checks import check_count, check_seed
from sslkit.algorithms.base import Batch, Hook, eval_logits, forward, frozen_bn
from sslkit.coreset import (
    BayesianCoreset,
    Craig,
    Crust,
    GradMatch,
    PerClassRetrieve,
    RandomCoreset,
    Retrieve,
    last_layer_gradients,
    logit_gradients,
)

__all__ = ["CoresetSelection", "STRATEGIES", "WallClockStop", "warm_start_epochs"]

#: selection strategies of paper C's traditional-SSL experiments
STRATEGIES = ("random", "retrieve", "retrieve_per_class", "craig", "gradmatch", "crust", "bayesian")
GRADIENTS = ("bias", "bias_weight")
MODES = ("eval", "train")


def warm_start_epochs(kappa: float, epochs: int, fraction: float) -> int:
    """Paper C §3.4: ``T_w = κ T k / m`` epochs on the full unlabeled set (rounded to the nearest epoch);
    the iterations they take equal κ of a coreset run of T epochs (``κ T k / B``), the budget CORDS uses."""
    if isinstance(kappa, bool) or not 0 <= kappa < 1:
        raise ValueError(f"kappa must be in [0, 1), got {kappa!r}")
    if isinstance(fraction, bool) or not 0 < fraction <= 1:
        raise ValueError(f"fraction must be in (0, 1], got {fraction!r}")
    return int(round(kappa * check_count(epochs, "epochs") * fraction))


class CoresetSelection:
    """Paper C Algorithm 1 as a callback (module docstring).

    ``CoresetSelection(strategy, k, every=20, warm_epochs=0, gradients="bias", mode="eval", chunk=512,
    batch_size=50, seed=0, normalize_weights=False, **strategy_options)``; register ``cb.hooks()`` with the
    trainer (or pass ``hooks=cb.hooks()``) and train with ``iterations_per_epoch="unlabeled"``.

    * ``strategy``: "random", "retrieve", "retrieve_per_class" (:class:`~sslkit.coreset.PerClassRetrieve`,
      Retrieve inside each pseudo-class), "craig" (per-batch), "gradmatch" (per-batch), "crust" (per
      pseudo-class facility location, :class:`~sslkit.coreset.Crust`, with :meth:`pseudo_labels`; train
      with :class:`~sslkit.algorithms.CrustMixup`) or "bayesian" (GIGA,
      :class:`~sslkit.coreset.BayesianCoreset`; paper C Figure 5); ``k``: coreset
      size; ``batch_size``: the mini-batch size of the per-batch variants (the unlabeled batch size);
      ``strategy_options``: passed to :class:`~sslkit.coreset.Retrieve` (``greedy``, ``epsilon``,
      ``cords_compatible``...) or :class:`~sslkit.coreset.GradMatch` (``lam``...);
      ``normalize_weights``: divide the strategy's weights by their mean over the coreset (the papers do
      not say how CRAIG's, GradMatch's or the Bayesian coreset's weights scale the loss; raw weights of
      ``N / k`` on average, or far more for GIGA's few large weights, multiply the unlabeled loss).

    Attributes: ``selections_`` -- one dict per selection: ``epoch`` (completed epochs), ``indices``,
    ``weights``, ``seconds`` (the whole selection: gradients + strategy), ``cpu_seconds`` (its process CPU
    time), ``strategy_seconds``.
    """

    def __init__(
        self,
        strategy,
        k,
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
        if strategy not in STRATEGIES:
            raise ValueError(f"strategy must be one of {STRATEGIES}, got {strategy!r}")
        if gradients not in GRADIENTS:
            raise ValueError(f"gradients must be one of {GRADIENTS}, got {gradients!r}")
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
        if strategy_options and strategy not in ("retrieve", "retrieve_per_class", "gradmatch"):
            raise ValueError(f"strategy {strategy!r} takes no options, got {sorted(strategy_options)}")
        self.strategy, self.gradients, self.mode = strategy, gradients, mode
        self.k = check_count(k, "k", allow_zero=False)
        self.every = check_count(every, "every (R)", allow_zero=False)
        self.warm_epochs = check_count(warm_epochs, "warm_epochs")
        self.chunk = check_count(chunk, "chunk", allow_zero=False)
        self.batch_size = check_count(batch_size, "batch_size", allow_zero=False)
        self.seed = check_seed(seed)
        if not isinstance(normalize_weights, bool):
            raise TypeError(f"normalize_weights must be a bool, got {normalize_weights!r}")
        self.normalize_weights = normalize_weights
        self.options = strategy_options
        self.selections_ = []

    def hooks(self) -> list[Hook]:
        """The selection hook: before epoch ``warm_epochs + 1``, then before every ``every``-th epoch after."""
        return [
            Hook(self.select, start=self.warm_epochs, every=self.every, unit="epoch", when="before", name="coreset")
        ]

    # ---------------------------------------------------------------------------------- selection
    def select(self, trainer) -> None:
        """Choose a coreset from the current model and restrict the trainer's unlabeled sampler to it."""
        t0, c0 = time.perf_counter(), time.process_time()
        sampler = trainer.sampler_
        if sampler is None:
            raise ValueError(
                "CoresetSelection needs an algorithm that uses unlabeled data (the trainer has no unlabeled sampler)"
            )
        if self.k > sampler.n:
            raise ValueError(f"k = {self.k} exceeds the unlabeled pool ({sampler.n} samples)")
        draw = len(self.selections_)
        t_strategy = time.perf_counter()
        if self.strategy == "random" or (draw == 0 and self.warm_epochs == 0):
            # Algorithm 1: a random initial coreset when there is no warm model to select from
            chosen = RandomCoreset(self.k, seed=self.seed).fit(sampler.n, draw=draw)
        else:
            G, Z_l, y_l, H_l = self.gradients_at(trainer)
            t_strategy = time.perf_counter()
            if self.strategy == "retrieve":
                args = (G, Z_l, y_l, H_l)
            elif self.strategy == "retrieve_per_class":
                args = (G, Z_l, y_l, self.pseudo_labels(trainer), H_l)
            elif self.strategy == "crust":
                args = (G, self.pseudo_labels(trainer))
            else:
                args = (G,)
            chosen = self._strategy(trainer).fit(*args)
        strategy_seconds = time.perf_counter() - t_strategy
        weights = chosen.weights_
        if self.normalize_weights:  # mean 1 over the coreset: the loss keeps the scale of unweighted training
            weights = weights / weights.mean()
        sampler.restrict(chosen.indices_, weights)
        self.selections_.append(
            {
                "epoch": trainer.epoch,
                "indices": chosen.indices_.clone(),
                "weights": weights.clone(),
                "seconds": time.perf_counter() - t0,
                "cpu_seconds": time.process_time() - c0,
                "strategy_seconds": strategy_seconds,
            }
        )

    def _strategy(self, trainer):
        if self.strategy in ("retrieve", "retrieve_per_class"):
            # α_t: the scheduled learning rate (eq. 3); CORDS passes the base rate (D4)
            lr = trainer.lr if self.options.get("cords_compatible") else trainer.optimizer_.param_groups[0]["lr"]
            lam = float(getattr(trainer.algorithm, "lambda_u", 1.0))
            cls = Retrieve if self.strategy == "retrieve" else PerClassRetrieve
            return cls(
                self.k, lr=lr, lam=lam if lam > 0 else 1.0, seed=self.seed + len(self.selections_), **self.options
            )
        if self.strategy == "craig":
            return Craig(self.k, batch_size=self.batch_size)
        if self.strategy == "crust":
            return Crust(self.k)
        if self.strategy == "bayesian":
            return BayesianCoreset(self.k)
        return GradMatch(self.k, batch_size=self.batch_size, seed=self.seed + len(self.selections_), **self.options)

    def pseudo_labels(self, trainer) -> torch.Tensor:
        """CRUST's hypothesized labels: ``argmax`` of the current model's logits on the unlabeled pool (eval
        mode: dropout off, BatchNorm running statistics; int64, pool order)."""
        return eval_logits(trainer.model, trainer.data_["X_u"], chunk=self.chunk).argmax(dim=1)

    def gradients_at(self, trainer):
        """``(G, Z_l, y_l, H_l)`` at the current model: per-sample last-layer gradients of the unlabeled
        pool (``N x d``, in pool order), the labeled logits, labels and penultimate features."""
        model, algo, data = trainer.model, trainer.algorithm, trainer.data_
        X_l, y_l, X_u = data["X_l"], data["y_l"], data["X_u"]
        flags = [(m, m.training) for m in model.modules()]
        model.train(self.mode == "train")
        try:
            with frozen_bn(model):
                rows = []
                # one labeled row rides along (the losses need a labeled batch; only the unlabeled part is used)
                for i in range(0, X_u.shape[0], self.chunk):
                    idx = torch.arange(i, min(i + self.chunk, X_u.shape[0]), device=X_u.device)
                    batch = Batch(
                        X_l[:1],
                        y_l[:1],
                        X_u[idx],
                        idx,
                        None,
                        step=trainer.iteration,
                        epoch=trainer.epoch,
                        update_state=False,
                    )
                    out = algo.loss(model, batch)
                    u = out.unlabeled
                    if u is None or u.logits is None:
                        raise ValueError(
                            f"{type(algo).__name__} returns no per-sample unlabeled losses with their "
                            "logits (LossOutput.unlabeled): it cannot be used for gradient-based "
                            "coreset selection"
                        )
                    if self.gradients == "bias_weight" and u.features is None:
                        raise ValueError(
                            "gradients='bias_weight' needs the penultimate features: the model must "
                            "return (logits, features)"
                        )
                    g0 = logit_gradients(u.masked(), u.logits)
                    rows.append(
                        last_layer_gradients(g0, u.features.detach() if self.gradients == "bias_weight" else None)
                    )
                with torch.no_grad():
                    Z_l, H_l = [], []
                    for i in range(0, X_l.shape[0], self.chunk):
                        z, h = forward(model, X_l[i : i + self.chunk])
                        Z_l.append(z.float())
                        H_l.append(None if h is None else h.float())
        finally:
            for m, flag in flags:
                m.training = flag
        G = torch.cat(rows)
        Z = torch.cat(Z_l)
        H = torch.cat(H_l) if self.gradients == "bias_weight" else None
        return G, Z, y_l, H

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
