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
* the selection's wall-clock is part of the run's (the callback's ``seconds_``; the trainer's ``timings_["hooks"]``
  and ``timings_["total"]`` include it; CORDS' ``train_ssl.py`` never adds it to its total time).

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
    NEEDS,
    STRATEGIES,
    CoresetStrategy,
    RandomCoreset,
    SelectionInputs,
    last_layer_gradients,
    logit_gradients,
    make_strategy,
)

__all__ = ["CoresetSelection", "STRATEGIES", "WallClockStop", "selection_inputs", "warm_start_epochs"]

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
    (completed epochs), ``indices`` (int64 tensor), ``weights``, ``seconds`` (the whole selection: gradients +
    strategy), ``cpu_seconds`` (its process CPU time), ``strategy_seconds`` (the strategy's ``seconds_``), ``flat``
    (every unlabeled gradient was exactly zero -- a saturated model: a gradient strategy had no direction, e.g.
    GIGA's ``flat_`` case); ``seconds_``: the wall-clock of all selections so far (the sum of their ``seconds``).
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

    @property
    def seconds_(self) -> float:
        """Wall-clock seconds of all selections so far (gradients + strategy, each round's ``seconds``)."""
        return sum(s["seconds"] for s in self.selections_)

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
        fitted = strategy.fit_inputs(inputs)
        indices, weights = fitted.result()
        if self.normalize_weights:  # mean 1 over the coreset: the loss keeps the scale of unweighted training
            weights = weights / weights.mean()
        trainer.sampler_.restrict(indices, weights)
        self.selections_.append(
            {
                "epoch": trainer.epoch,
                "indices": torch.from_numpy(indices.copy()),  # the record keeps a tensor (as before)
                "weights": weights.clone(),
                "seconds": time.perf_counter() - t0,
                "cpu_seconds": time.process_time() - c0,
                "strategy_seconds": fitted.seconds_,
                "flat": inputs.gradients is not None and not bool(inputs.gradients.any()),
            }
        )

    def inputs_at(self, trainer, needs=NEEDS, draw: int = 0) -> SelectionInputs:
        """:func:`selection_inputs` with this selection's ``gradients``, ``mode`` and ``chunk``."""
        return selection_inputs(trainer, needs, gradients=self.gradients, mode=self.mode, chunk=self.chunk, draw=draw)

    def pseudo_labels(self, trainer) -> torch.Tensor:
        """CRUST's hypothesized labels (:func:`selection_inputs`' ``pseudo_labels``)."""
        return self.inputs_at(trainer, ("pseudo_labels",)).pseudo_labels

    def gradients_at(self, trainer, *, labeled: bool = True):
        """``(G, Z_l, y_l, H_l)`` of :func:`selection_inputs` (``gradients``, ``labeled_logits``, ``labels``,
        ``labeled_features``; the last three None without ``labeled``)."""
        x = self.inputs_at(trainer, ("gradients", "labeled") if labeled else ("gradients",))
        return x.gradients, x.labeled_logits, x.labels, x.labeled_features

    def __repr__(self):
        return (
            f"CoresetSelection({self.strategy!r}, k={self.k}, every={self.every}, warm_epochs={self.warm_epochs}, "
            f"gradients={self.gradients!r}, mode={self.mode!r})"
        )


def selection_inputs(
    trainer, needs=NEEDS, *, gradients: str = "bias", mode: str = "eval", chunk: int = 512, draw: int = 0
) -> SelectionInputs:
    """The :class:`~sslkit.coreset.SelectionInputs` of ``trainer``'s current model: what a coreset strategy reads
    (``strategy.select(selection_inputs(trainer, strategy.needs))``; module docstring, "Gradients").

    ``trainer``: a :class:`~sslkit.engine.Trainer` whose ``fit`` has started (its data and unlabeled sampler are
    set: inside a hook, or after ``fit``). ``needs``: which fields to compute (:data:`sslkit.coreset.NEEDS`):
    "gradients" (per-sample last-layer gradients of the unlabeled pool, ``N x d``, pool order; ``gradients`` =
    "bias" or "bias_weight"), "labeled" (the labeled logits, labels and, with "bias_weight", penultimate
    features) and "pseudo_labels" (the model's argmax on the pool); the others stay None. ``mode``: "eval"
    (dropout off, BatchNorm running statistics) or "train" (as CORDS; BatchNorm statistics untouched); every
    module's train flag is restored after. ``chunk``: rows per forward pass. Always set: ``n``, ``lr`` (α_t, the
    optimiser's current rate), ``base_lr``, ``lam`` (λ_t, the algorithm's ``lambda_u``) and ``draw``.
    """
    if gradients not in GRADIENTS:
        raise ValueError(f"gradients must be one of {GRADIENTS}, got {gradients!r}")
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    unknown = sorted(set(needs) - set(NEEDS))
    if unknown:
        raise ValueError(f"needs must be among {NEEDS}, got {unknown}")
    chunk = check_count(chunk, "chunk", allow_zero=False)
    if getattr(trainer, "sampler_", None) is None or getattr(trainer, "data_", None) is None:
        raise ValueError(
            "selection_inputs needs a trainer whose fit has started with unlabeled data (no unlabeled sampler yet)"
        )
    model, algo, X_u, X_l = trainer.model, trainer.algorithm, trainer.data_["X_u"], trainer.data_["X_l"]
    G = Z = y = H = classes = None
    with _selection_mode(model, mode):
        if "gradients" in needs:
            G = _pool_gradients(algo, model, X_u, chunk, gradients)
        if "labeled" in needs:
            with torch.no_grad():
                Z_l, H_l = zip(*(forward(model, X_l[i : i + chunk]) for i in range(0, X_l.shape[0], chunk)))
            Z, y = torch.cat([z.float() for z in Z_l]), trainer.data_["y_l"]
            H = torch.cat([h.float() for h in H_l]) if gradients == "bias_weight" else None
    if "pseudo_labels" in needs:  # eval mode whatever ``mode`` says (eval_logits sets and restores it)
        classes = eval_logits(model, X_u, chunk=chunk).argmax(dim=1)
    return SelectionInputs(
        trainer.sampler_.n,
        G,
        Z,
        y,
        H,
        classes,
        lr=trainer.optimizer_.param_groups[0]["lr"],
        base_lr=trainer.lr,
        lam=algo.lambda_u,
        draw=draw,
    )


@contextlib.contextmanager
def _selection_mode(model, mode: str):
    """``mode``'s train/eval flags and frozen BatchNorm statistics; every module's flag restored after."""
    flags = [(m, m.training) for m in model.modules()]
    model.train(mode == "train")
    try:
        with frozen_bn(model):
            yield
    finally:
        for m, flag in flags:
            m.training = flag


def _pool_gradients(algo, model, X_u, chunk: int, gradients: str) -> torch.Tensor:
    """The ``N x d`` last-layer gradients of the pool, chunk by chunk into one preallocated matrix: the chunks and
    their concatenation never coexist (half the peak memory of ``torch.cat``, and one fresh allocation of the
    matrix instead of two; at N = 40 000, d = 1 290 the page faults of the second one made the pass's time vary
    2.5-fold from call to call, ``benchmarks/cost_curves.py``)."""
    if len(X_u) == 0:
        raise ValueError("the unlabeled pool is empty: there are no gradients to select from")
    G = None
    for i in range(0, len(X_u), chunk):
        g = _chunk_gradients(algo, model, X_u[i : i + chunk], i, gradients)
        if G is None:
            G = torch.empty((len(X_u), g.shape[1]), dtype=g.dtype, device=g.device)
        G[i : i + g.shape[0]] = g
    return G


def _chunk_gradients(algo, model, x, start: int, gradients: str) -> torch.Tensor:
    """Last-layer gradients of the pool rows ``x`` (rows ``start .. start + len(x)`` of the pool)."""
    idx = torch.arange(start, start + x.shape[0], device=x.device)
    u = algo.unlabeled_losses(model, x, idx)
    if u.logits is None:
        raise ValueError(
            f"{type(algo).__name__}.unlabeled_losses returns no logits: it cannot be used for "
            "gradient-based coreset selection"
        )
    if gradients == "bias_weight" and u.features is None:
        raise ValueError(
            "gradients='bias_weight' needs the penultimate features: the model must return (logits, features)"
        )
    g0 = logit_gradients(u.masked(), u.logits)
    return last_layer_gradients(g0, u.features.detach() if gradients == "bias_weight" else None)


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
