"""Paper C §3.4: "By simply using the last-layer gradients, we achieve significant speedups in Retrieve".

One model per seed: a trade-off protocol's network (:mod:`.tradeoff`) trained :data:`WARM_EPOCHS` epochs of VAT on
the full unlabeled pool (the point where Retrieve's warm start ends). Then one Retrieve selection of ``k = fraction
x N`` points, made twice from that model and timed in process CPU time, gradients included:

* ``last``: what every Retrieve run of the book does -- the per-sample last-layer gradients of
  :func:`~sslkit.callbacks.selection_inputs`, what :class:`~sslkit.callbacks.CoresetSelection` reads (bias only,
  CORDS' ``linear_layer=False``: ``C`` numbers per sample), and :class:`~sslkit.coreset.Retrieve`;
* ``full``: the gradients of every trainable parameter (:func:`~sslkit.coreset.retrieve_full.per_sample_gradients`
  of VAT's per-sample loss ``KL(p_j || p(x_j + r_j))``, one vectorised pass per batch of samples) and
  :class:`~sslkit.coreset.retrieve_full.RetrieveFullModel`, which re-linearises the labeled loss by a forward /
  backward pass through the whole network after every pick.

Both use the same greedy (stochastic, ε = 0.01), learning rate and seed. The paper gives no number; the claim is
tested as "the last-layer selection's CPU time is significantly below the full-model one's" (paired by seed).
"""

from __future__ import annotations

import time

import torch

from sslkit.algorithms.base import frozen_bn
from sslkit.algorithms.vat import kl_per_sample
from sslkit.callbacks import selection_inputs
from sslkit.coreset import Retrieve
from sslkit.coreset.retrieve_full import RetrieveFullModel, per_sample_gradients

from .tradeoff import cached_task, make_algorithm, make_model, protocol_of, train_with_curve, trainer_options

__all__ = ["lastlayer_run", "WARM_EPOCHS"]

#: rows of the pool per forward pass (selection_inputs' default chunk: the same perturbation draws in both passes)
CHUNK = 512
#: epochs of VAT before the selection (the stand-in's warm start, κ T = 0.5 x 4 at the cpu scale of Figure 4)
WARM_EPOCHS = 2


def lastlayer_run(*, protocol, fraction, seed, device="cpu") -> dict:
    """One model, one Retrieve selection at ``fraction`` of the pool with last-layer and with full-model gradients.

    Metrics: ``last_cpu_seconds`` / ``full_cpu_seconds`` (process CPU time: gradients + greedy), the gradient
    parts ``last_gradient_cpu_seconds`` / ``full_gradient_cpu_seconds``, the widths ``last_dim`` / ``full_dim``,
    ``k``, ``n_unlabeled``, ``overlap`` (the share of the ``k`` points both selections chose) and ``test_acc`` of the
    model the selections were made from."""
    if not 0 < fraction < 1:
        raise ValueError(f"fraction must lie in (0, 1), got {fraction!r}")
    p = protocol_of(protocol)
    task = cached_task(protocol, seed)
    tr, curve = train_with_curve(
        make_model(protocol, task, seed),
        make_algorithm("vat", protocol, task),
        task,
        epochs=WARM_EPOCHS,
        iterations_per_epoch="unlabeled",
        seed=seed,
        device=device,
        **trainer_options(p),
    )
    model, algo = tr.model, tr.algorithm
    X_u, X_l, y_l = tr.data_["X_u"], tr.data_["X_l"], tr.data_["y_l"]
    n = X_u.shape[0]
    k = max(1, round(fraction * n))
    lr = p["lr"]

    torch.manual_seed(seed)  # VAT's perturbations draw from the global generator: the same draws for both
    c0 = time.process_time()
    x = selection_inputs(tr, ("gradients", "labeled"), chunk=CHUNK)
    G, Z, y, H = x.gradients, x.labeled_logits, x.labels, x.labeled_features
    c1 = time.process_time()
    last = Retrieve(k, lr=lr, seed=seed).fit(G, Z, y, H)
    c2 = time.process_time()

    torch.manual_seed(seed)  # the same perturbation draws, chunk by chunk, as the last-layer pass above
    flags = [(m, m.training) for m in model.modules()]
    model.eval()
    try:
        with frozen_bn(model):
            c3 = time.process_time()
            # VAT's per-sample loss KL(p_j || p(x_j + r_j)) with p_j and r_j constants, as VAT differentiates it
            perturbed, clean = [], []
            for start in range(0, n, CHUNK):
                p_x, x_adv = algo.perturbed_inputs(model, X_u[start : start + CHUNK])
                perturbed.append(x_adv.detach())
                clean.append(p_x)
            G_full = per_sample_gradients(
                model, torch.cat(perturbed), lambda z, p_j: kl_per_sample(p_j, z)[0], torch.cat(clean)
            )
            c4 = time.process_time()
            full = RetrieveFullModel(k, lr=lr, seed=seed).fit(G_full, model, X_l, y_l)
            c5 = time.process_time()
    finally:
        for m, flag in flags:
            m.training = flag
    return {
        "last_cpu_seconds": round(c2 - c0, 4),
        "full_cpu_seconds": round(c5 - c3, 4),
        "last_gradient_cpu_seconds": round(c1 - c0, 4),
        "full_gradient_cpu_seconds": round(c4 - c3, 4),
        "last_dim": int(G.shape[1]),
        "full_dim": int(G_full.shape[1]),
        "k": k,
        "n_unlabeled": n,
        "overlap": round(len(set(last.indices_.tolist()) & set(full.indices_.tolist())) / k, 4),
        "test_acc": curve[-1][1],
    }
