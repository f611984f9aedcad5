"""Retrieve's greedy coreset selection (paper C Algorithm 2, eq. (5)-(7)), last layer in closed form.

Set function (eq. (6)), with ``G_j = m_j grad l_u(x_j, theta_t)`` the unlabeled per-sample gradients::

    f(S) = -L_S(theta^S),   theta^S = theta_t - a grad L_S(theta_t) - a lam sum_{j in S} G_j     (eq. (5))

``L_S`` = mean cross-entropy of the labeled set, ``a = alpha_t`` the current learning rate, ``lam =
lambda_t`` the unlabeled-loss coefficient. Greedy maximises the first-order (Taylor) gain of eq. (7)::

    g(e) = a lam grad L_S(theta^S)^T G_e        (= f(S + e) - f(S) + O(a^2 lam^2 |G_e|^2))

Only the last layer ``z = W h + b`` moves (§3.4), so ``theta^S`` acts on the labeled logits in closed
form: ``Z^S = Z - a (Db + H DW^T)`` for a step ``(Db, DW)`` (``H``: labeled penultimate features; without
features only the bias moves and the gradients are ``C``-dimensional). After every pick the labeled logits
are stepped by ``-a lam G_e`` and ``grad L_S(theta^S)`` is recomputed from them with the real cross-entropy
(re-linearisation); per step this touches only the ``n_L x C`` logits, one ``C x n_L x D`` product for the
weight part of ``grad L_S`` and, for the step of a single sample's rank-one gradient ``g0 (x) h``, one
``n_L x D`` matrix-vector product.

Greedy variants (``greedy=``):

* ``"stochastic"`` (default; Mirzasoleiman et al. 2015, "Lazier than lazy greedy"): each step evaluates
  ``s = ceil((N / k) ln(1 / eps))`` candidates drawn uniformly without replacement from the unselected
  points. Algorithm 2 prints ``ceil(N ln(1/eps))``, which exceeds ``N`` for every ``eps < 1/e`` (it would be
  naive greedy); the ``1 - 1/e - eps`` guarantee the paper quotes (§3.2) is Mirzasoleiman's and needs
  ``(N/k) ln(1/eps)``, which is also what CORDS samples (``int(N/k * ln 100)``). Candidates come from a CPU
  ``torch.Generator`` seeded with ``seed``, so the selection is deterministic on a CPU and the same
  candidates are drawn on any device.
* ``"naive"``: every step evaluates all unselected points.
  Ties (e.g. the zero gains of masked-out points) go to the smallest index, here and in every variant
  (stochastic: the first drawn candidate).
* ``"rounds"``: ``r`` rounds (``rounds=``), each adds the ``k/r`` points of largest gain (sizes differ by at
  most one and sum to ``k``), then re-linearises once.

``cords_compatible=True`` reproduces the official code's choices (CORDS' ``RETRIEVEStrategy``: D3, D4 below) so their
effect can be shown: the step is ``Z - eta sum_{j in S} G_j`` (no ``grad L_S`` term, no ``lam``, ``eta = lr``
meant as the base learning rate), the gains are ``grad^T G_e`` (no factor), the first gain uses the correct
CE gradient, and every later re-linearisation uses CORDS' malformed soft-target "CE"
``-y_i sum_c log p_ic`` (gradient ``y_i (C p_ic - 1)``, zero for class 0; D3); the stochastic candidate count
is CORDS' ``int((N/k) ln(1/eps))`` (at least 1). Its r-round variant selects ``int(k/r)`` per round until at
least ``k`` (it can overshoot, and loops forever for ``k < r``); ours always selects exactly ``k``.

Threads: the greedy's steps are small operations (per pick a few products of the ``n_L x C`` logits, the
``n_L x D`` features and the candidates' gradients), too short to gain from a second thread; beside another busy
process each would wait for a worker thread that is not running. The greedy runs with one thread
(:func:`sslkit.device.single_threaded`; ``benchmarks/contention.py``); the selection is the same.
"""

from __future__ import annotations

import math
import time

import numpy as np
import torch

from sslkit._checks import (
    check_bool,
    check_budget,
    check_count,
    check_features,
    check_gradients,
    check_indices,
    check_labeled_not_empty,
    check_labels,
    check_open_unit,
    check_positive,
    check_seed,
)
from sslkit.coreset.strategy import CoresetStrategy, SelectionInputs, require
from sslkit.device import single_threaded

__all__ = ["Retrieve", "one_step_objective", "stochastic_candidates", "round_step"]

GREEDY = ("stochastic", "naive", "rounds")


def stochastic_candidates(n: int, k: int, epsilon: float, *, cords_compatible: bool = False) -> int:
    """Candidates per stochastic-greedy step: ``ceil((n/k) ln(1/eps))`` (CORDS: ``max(1, int(...))``), at most ``n``."""
    s = (n / k) * math.log(1.0 / epsilon)
    s = max(1, int(s)) if cords_compatible else math.ceil(s)
    return min(s, n)


class _LabeledSide:
    """The labeled logits at the one-step point, stepped in closed form, and ``grad L_S`` there.

    Stored transposed (``C x n_L``, and ``H^T`` as ``D x n_L``): the softmax over the short leading
    dimension and the products run several times faster in this layout than row-major ``n_L x C``
    (measured on the 2-core CPU: the ``n_L x 10`` softmax alone took ~1 ms, the transposed one ~50 us).
    """

    def __init__(self, Z: torch.Tensor, y: torch.Tensor, H: torch.Tensor | None):
        self.n, self.C = Z.shape
        self.ZT = Z.T.contiguous()
        self.YT = torch.zeros_like(self.ZT)
        self.YT[y, torch.arange(self.n, device=Z.device)] = 1.0
        self.y, self.yf, self.H = y, y.to(Z.dtype), H
        self.HT = None if H is None else H.T.contiguous()
        self.ones = torch.ones(self.n, dtype=Z.dtype, device=Z.device)
        # grad L_S is written into one buffer (bias part, then the weight part as a C x D view): the greedy
        # computes it once per pick, and a fresh ~C (1 + D) vector plus a concatenation per pick cost more
        # than the arithmetic on the 2-core CPU. Callers use it before the next ``gradient``.
        d = self.C if H is None else self.C * (1 + H.shape[1])
        self._grad = torch.empty(d, dtype=Z.dtype, device=Z.device)

    def step(self, vector: torch.Tensor, scale: float) -> None:
        """``Z <- Z - scale (Db + H DW^T)`` for a last-layer step ``vector = [Db | DW flattened]``.

        A single sample's closed-form gradient has ``DW = Db h^T`` (rank one); then ``H DW^T = (H h) Db^T``
        and the step is one rank-one update with a matrix-vector product (``n_L D`` instead of ``n_L D C``
        multiply-adds). Any other step (sums, per-batch means, arbitrary rows) takes the general product.
        """
        C = self.C
        bias = vector[:C]
        if self.HT is None:
            self.ZT.sub_(bias[:, None], alpha=scale)
            return
        weight = vector[C:].view(C, -1)
        h = _rank_one_factor(bias, weight)
        if h is None:
            self.ZT.sub_(bias[:, None], alpha=scale)
            self.ZT.addmm_(weight, self.HT, alpha=-scale)
        else:  # Z^T <- Z^T - scale Db (1 + H h)^T
            self.ZT.addr_(bias, torch.addmv(self.ones, self.H, h), alpha=-scale)

    def gradient(self, malformed: bool = False) -> torch.Tensor:
        """``grad L_S`` at the current logits (mean CE; ``malformed``: CORDS' D3 loss instead)."""
        P = torch.softmax(self.ZT, dim=0)
        if malformed:  # d/dz [-y sum_c log p_c] = y (C p - 1)
            RT = P.mul_(self.C).sub_(1.0).mul_(self.yf)
        else:  # d/dz CE = p - onehot(y)
            RT = P.sub_(self.YT)
        out = self._grad
        torch.mean(RT, dim=1, out=out[: self.C])
        if self.H is not None:
            weight = out[self.C :].view(self.C, -1)
            torch.mm(RT, self.H, out=weight)
            weight.div_(self.n)
        return out

    def loss(self) -> float:
        return float(torch.nn.functional.cross_entropy(self.ZT.T, self.y))


def _check_inputs(unlabeled_grads, labeled_logits, labels, labeled_features):
    """Validate Retrieve's inputs; returns ``(G, Z, y, H)`` on ``G``'s device and dtype."""
    check_labeled_not_empty(labeled_logits)
    G = check_gradients(unlabeled_grads)
    Z = check_features(labeled_logits, "labeled logits", device=G.device, dtype=G.dtype)
    n_l, C = Z.shape
    y = check_labels(labels, n_l, C, device=G.device)
    H = None
    if labeled_features is not None:
        H = check_features(labeled_features, "labeled features", device=G.device, dtype=G.dtype)
        if H.shape[0] != n_l:
            raise ValueError(f"labeled features has {H.shape[0]} rows but labeled logits has {n_l}")
    want = C if H is None else C * (1 + H.shape[1])
    if G.shape[1] != want:
        what = (
            f"bias only (no labeled_features): C = {C}"
            if H is None
            else f"bias + weight: C (1 + D) = {C} x (1 + {H.shape[1]}) = {want}"
        )
        raise ValueError(f"unlabeled gradients have width {G.shape[1]}, but the labeled side implies {what}")
    return G, Z, y, H


def one_step_objective(
    unlabeled_grads, labeled_logits, labels, labeled_features=None, subset=(), *, lr: float, lam: float = 1.0
) -> float:
    """``f(S) = -L_S(theta_t - lr grad L_S(theta_t) - lr lam sum_{j in S} G_j)`` exactly (eq. (6)), last layer.

    Inputs as in :meth:`Retrieve.fit`; ``subset``: indices of rows of ``unlabeled_grads`` (a multiset is
    summed as written).
    """
    G, Z, y, H = _check_inputs(unlabeled_grads, labeled_logits, labels, labeled_features)
    lr, lam = check_positive(lr, "lr"), check_positive(lam, "lam")
    side = _LabeledSide(Z, y, H)
    side.step(side.gradient(), lr)
    idx = torch.from_numpy(check_indices(subset, G.shape[0], "subset", allow_empty=True)).to(G.device)
    if idx.numel():
        side.step(G[idx].sum(dim=0), lr * lam)
    return -side.loss()


class Retrieve(CoresetStrategy):
    """Retrieve's greedy selection of ``k`` unlabeled points (Algorithm 2; gains eq. (7)).

    ``Retrieve(k, greedy="stochastic", epsilon=0.01, rounds=15, lr=0.03, lam=1.0, cords_compatible=False,
    seed=0).fit(unlabeled_grads, labeled_logits, labels, labeled_features=None)``

    * ``k``: coreset size, ``1 <= k <= N``.
    * ``greedy``: ``"stochastic"``, ``"naive"`` or ``"rounds"`` (module docstring); ``epsilon`` in (0, 1) is
      the stochastic-greedy accuracy; ``rounds`` (``1 <= rounds <= k``) is ``r`` of the r-round greedy.
    * ``lr``: ``alpha_t``, the learning rate at the selection step (the scheduled one; CORDS passes the base
      rate); ``lam``: ``lambda_t``, the unlabeled-loss coefficient. Both positive.
    * ``cords_compatible``: reproduce CORDS (D3, D4; module docstring).

    ``fit`` inputs (any device; everything is moved to ``unlabeled_grads``' device and dtype):
    ``unlabeled_grads`` ``N x d``: rows ``m_j grad l_u(x_j, theta_t)`` from
    :func:`~sslkit.coreset.gradients.last_layer_gradients` (``d = C`` bias only, or ``C (1 + D)``);
    ``labeled_logits`` ``n_L x C`` and ``labels`` (``n_L`` ints) of the labeled set at ``theta_t``;
    ``labeled_features`` ``n_L x D`` (required exactly when the gradients include the weight part).

    Attributes after ``fit``: ``indices_`` (int64 numpy, selection order, distinct), ``weights_``
    (ones, float32: Retrieve's coreset is unweighted), ``seconds_`` (wall-clock of ``fit``), ``gains_`` (the gain
    of each pick when it was picked: ``lr lam grad L_S(theta^S)^T G_e``; CORDS mode: ``grad^T G_e``),
    ``n_candidates_`` (stochastic: candidates per step; else ``None``), ``timings_`` (seconds: ``setup``,
    ``loop``, ``total``).

    ``select(inputs)``: one round of Algorithm 1 -- :meth:`fit` with ``lr`` = ``inputs.lr`` (``α_t``, the
    scheduled rate; ``inputs.base_lr`` with ``cords_compatible``, as CORDS), ``lam`` = ``inputs.lam``
    (``λ_t``; 1 when it is 0 or None -- a zero-weight unlabeled term gives no step) and the seed
    ``seed + inputs.draw`` (:func:`round_step`); the constructor's ``lr`` and ``lam`` are for :meth:`fit`.
    """

    needs = ("gradients", "labeled")

    def __init__(
        self,
        k,
        *,
        greedy: str = "stochastic",
        epsilon: float = 0.01,
        rounds: int = 15,
        lr: float = 0.03,
        lam: float = 1.0,
        cords_compatible: bool = False,
        seed=0,
    ):
        self.k = check_count(k, "k", allow_zero=False)
        if greedy not in GREEDY:
            raise ValueError(f"greedy must be one of {GREEDY}, got {greedy!r}")
        self.greedy = greedy
        self.epsilon = check_open_unit(epsilon, "epsilon")
        self.rounds = check_count(rounds, "rounds", allow_zero=False)
        if greedy == "rounds" and self.rounds > self.k:
            raise ValueError(f"rounds = {self.rounds} exceeds k = {self.k}: each round must add at least one point")
        self.lr = check_positive(lr, "lr")
        self.lam = check_positive(lam, "lam")
        self.cords_compatible = check_bool(cords_compatible, "cords_compatible")
        self.seed = check_seed(seed)

    def fit(self, unlabeled_grads, labeled_logits, labels, labeled_features=None):
        t_start = time.perf_counter()
        G, Z, y, H = _check_inputs(unlabeled_grads, labeled_logits, labels, labeled_features)
        N = G.shape[0]
        k = check_budget(self.k, N)
        side = _LabeledSide(Z, y, H)
        if self.cords_compatible:  # D4: theta^S = theta_t - eta sum G_j, gains without a factor
            scale, factor = self.lr, 1.0
        else:  # eq. (5): theta^0 = theta_t - a grad L_S(theta_t)
            side.step(side.gradient(), self.lr)
            scale = factor = self.lr * self.lam
        return self._greedy(G, k, side, scale, factor, t_start)

    def _greedy(self, G, k, side, scale, factor, t_start):
        """The greedy of ``self.greedy`` over the rows of ``G`` from the labeled ``side`` at ``theta^0`` (steps of
        ``scale``, gains times ``factor``); sets the fitted attributes (``timings_`` from ``t_start``)."""
        _sync(G.device)
        t_loop = time.perf_counter()
        with single_threaded(G.device):  # latency-bound: k steps of small operations (module docstring)
            if self.greedy == "stochastic":
                indices, gains = self._stochastic(G, side, scale, factor)
            else:
                r = k if self.greedy == "naive" else self.rounds
                sizes = [k // r + (1 if i < k % r else 0) for i in range(r)]
                indices, gains = self._by_rounds(G, side, scale, factor, sizes)
        _sync(G.device)
        t_end = time.perf_counter()
        self.gains_ = gains
        self.n_samples_ = G.shape[0]
        self.timings_ = {"setup": t_loop - t_start, "loop": t_end - t_loop, "total": t_end - t_start}
        return self._set_result(indices, torch.ones(k), t_start)

    def fit_inputs(self, inputs: SelectionInputs):
        require(inputs, "Retrieve", "gradients", "labeled_logits", "labels")
        return self.with_params(**round_step(self, inputs)).fit(
            inputs.gradients, inputs.labeled_logits, inputs.labels, inputs.labeled_features
        )

    def _outer_gradient(self, side: _LabeledSide, step: int) -> torch.Tensor:
        # CORDS: the first gain is from the correct CE, every later one from the malformed loss (D3)
        return side.gradient(malformed=self.cords_compatible and step > 0)

    def _stochastic(self, G, side, scale, factor):
        N, k = G.shape[0], self.k
        s = stochastic_candidates(N, k, self.epsilon, cords_compatible=self.cords_compatible)
        self.n_candidates_ = s
        gen = torch.Generator().manual_seed(self.seed)
        # the bookkeeping is plain integers (numpy): per pick it is a few element reads and writes, which as
        # torch ops would cost more than the gains themselves
        remaining = np.arange(N)  # unselected points in positions [0, r): swap-remove
        indices = np.empty(k, dtype=np.int64)
        best = np.empty(k, dtype=np.float64)
        for t in range(k):
            r = N - t
            pos = _distinct_positions(r, min(s, r), gen)
            cand = remaining[pos]
            g = torch.mv(torch.index_select(G, 0, torch.from_numpy(cand).to(G.device)), self._outer_gradient(side, t))
            value, b = torch.max(g, 0)  # ties: the first drawn candidate
            b = int(b)
            e = indices[t] = cand[b]
            best[t] = float(value)
            remaining[pos[b]] = remaining[r - 1]
            side.step(G[e], scale)
        return torch.from_numpy(indices), torch.from_numpy(best).to(G.dtype) * factor

    def _by_rounds(self, G, side, scale, factor, sizes):
        self.n_candidates_ = None
        taken = torch.zeros(G.shape[0], dtype=torch.bool, device=G.device)
        picked, picked_gains = [], []
        for t, size in enumerate(sizes):
            g = (G @ self._outer_gradient(side, t)).masked_fill_(taken, -math.inf)
            if size == 1:  # ties: the smallest index (torch.argmax)
                top = torch.argmax(g).view(1)
            else:  # largest first; ties: the smaller index
                top = torch.sort(g, descending=True, stable=True).indices[:size]
            taken[top] = True
            picked.append(top)
            picked_gains.append(g[top] * factor)
            side.step(G[top].sum(dim=0), scale)
        return torch.cat(picked).cpu(), torch.cat(picked_gains).cpu()

    def __repr__(self):
        return (
            f"Retrieve(k={self.k}, greedy={self.greedy!r}, epsilon={self.epsilon}, rounds={self.rounds}, "
            f"lr={self.lr}, lam={self.lam}, cords_compatible={self.cords_compatible}, seed={self.seed})"
        )


def round_step(retrieve, inputs: SelectionInputs) -> dict:
    """``lr``, ``lam`` and ``seed`` of one selection round of a Retrieve-type strategy: ``α_t`` =
    ``inputs.lr`` (``inputs.base_lr`` with ``cords_compatible``, as CORDS: D4), ``λ_t`` = ``inputs.lam`` or
    1 when it is 0 or None (a zero-weight unlabeled term gives no step to take), seed ``seed + draw``."""
    cords = retrieve.get_params().get("cords_compatible", False)
    lr = inputs.base_lr if cords else inputs.lr
    if lr is None:
        raise ValueError(f"{type(retrieve).__name__} needs the step size α_t: SelectionInputs(lr=...) is None")
    return {"lr": lr, "lam": inputs.lam if inputs.lam else 1.0, "seed": retrieve.seed + inputs.draw}


def _distinct_positions(r: int, s: int, gen: torch.Generator) -> np.ndarray:
    """``s`` distinct uniform positions in ``[0, r)``: rejection of ``s`` i.i.d. draws when ``s^2 <= r``
    (accepted with probability >= e^{-1/2}; conditioned on distinctness the draw is a uniform s-subset),
    else a prefix of a random permutation."""
    if s == r:
        return np.arange(r)
    if s * s <= r:
        while True:
            pos = torch.randint(r, (s,), generator=gen).numpy()
            if len(set(pos.tolist())) == s:
                return pos
    return torch.randperm(r, generator=gen)[:s].numpy()


def _rank_one_factor(bias: torch.Tensor, weight: torch.Tensor) -> torch.Tensor | None:
    """``h`` with ``weight = outer(bias, h)`` up to rounding (``64 eps |weight|``), else ``None``."""
    nb = float(bias @ bias)
    if nb == 0.0:
        return (
            torch.zeros(weight.shape[1], dtype=weight.dtype, device=weight.device) if not bool(weight.any()) else None
        )
    h = (bias @ weight).div_(nb)
    tol = 64.0 * torch.finfo(weight.dtype).eps * float(torch.linalg.vector_norm(weight))
    return h if float(torch.linalg.vector_norm(torch.addr(weight, bias, h, alpha=-1.0))) <= tol else None


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)
