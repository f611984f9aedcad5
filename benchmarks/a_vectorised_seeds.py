"""Issue 3 §5: the 30 seeds of one Table 1 cell trained vectorised vs. 30 sequential runs.

Cell: Breast Cancer, (n_1, n_2) = (30, 30), method "Sup." (the PN risk, a = θ), paper A's protocol (Adam 1e-3,
weight decay 1e-4, batches of 64, at most 200 epochs, early stopping on validation accuracy with patience 20).

* sequential: ``paper_a.run_one(..., "Sup.", seed)`` for seeds 0..29 (the runner's path: Trainer +
  SupervisedRisk), each with its own data split;
* vectorised: the same 30 splits, :func:`fit_vectorised_mlp` (here) -- 30 stacked MLPs, one batched
  forward/backward per step, per-seed early stopping kept.

Both sides include building the 30 tasks. Targets: vectorised ≥ 10× faster, and its mean test accuracy within
one standard error (sequential std / √30) of the sequential mean. Prints both, the ratio and PASS/FAIL;
exits non-zero on FAIL. ``--device cuda`` runs both sides on a GPU.

The script also prints a floor for the vectorised side: its multiply-adds (forward + backward of every
live seed's batches, plus the validation forward each epoch) divided by this machine's measured float32
matrix-product rate on the same shapes. ``sequential time / floor`` bounds the speed-up any vectorisation
can reach on this device: on the 2-core CPU here a [256, 256] MLP step on 60 rows is already
compute-bound, so the sequential runs spend only ~2/3 of their time on overhead and the bound is ~3-5x;
the 10x target needs a device where the sequential runs are launch-bound (a GPU: one small kernel
sequence per step for 30 seeds instead of 30).

    .venv/bin/python benchmarks/a_vectorised_seeds.py [--device cpu] [--threads 1] [--seeds 30]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import warnings

import numpy as np
import torch

from sslkit._checks import check_seed
from sslkit.experiments import paper_a

DATASET, SETTING = "breast_cancer", "(30,30)"


def _mlp_forward(params: list, x: torch.Tensor, dropout: float, train: bool) -> torch.Tensor:
    """Forward of S stacked MLPs: ``params`` = [(W (S,out,in), b (S,out)), ...], ``x`` (S, B, in) -> (S, B, K).

    Same computation as :class:`sslkit.models.MLP` (Linear -> ReLU -> Dropout per hidden layer), each
    seed with its own weights and its own dropout masks.
    """
    h = x
    for i, (w, b) in enumerate(params):
        h = torch.baddbmm(b.unsqueeze(1), h, w.transpose(1, 2))
        if i < len(params) - 1:
            h = torch.relu(h)
            if train and dropout > 0:
                h = h * (torch.rand_like(h) >= dropout) / (1.0 - dropout)
    return h


COMPACT = 0.5  # compute only the live seeds once fewer than this fraction of them is still training


def fit_vectorised_mlp(
    tasks, seeds, *, epochs=200, patience=20, min_delta=1e-4, lr=1e-3, weight_decay=1e-4, batch_size=64, device="cpu"
) -> list:
    """Train the "Sup." method (PN risk, a = θ) of many seeds at once; one metrics dict per seed.

    ``tasks[s]`` is the :class:`sslkit.experiments.paper_a.Task` of ``seeds[s]`` (all of one dataset and setting,
    so every seed has the
    same labeled / validation / test sizes). The S MLPs (initialised exactly as :func:`paper_a.run_one` initialises
    them) are stacked parameter by parameter and trained with one batched forward / backward per step; Adam
    is element-wise, so one (fused) Adam over the stacked tensors is S independent Adams.
    Early stopping stays per seed: every seed keeps its own best-validation weights, patience counter and
    stopping epoch (after which it is no longer computed: only live seeds enter the batched forward); training ends when
    every seed has stopped. Differences from :func:`paper_a.run_one`: the batch order and dropout masks come from
    other random streams, so single runs differ while the distribution over seeds is the same
    (this benchmark checks the mean within one standard error).

    The loss of a batch is the PN risk of paper A (eq. 3 with a = θ): Σ_j θ_j R̂_jj, R̂_jj estimated from the
    batch with Horvitz–Thompson weights n_l / (b n_j) (unbiased for the full labeled set's R̂_jj).
    """
    from sslkit.device import resolve_device
    from sslkit.models import MLP
    from sslkit.seeding import seed_everything

    device = resolve_device(device)
    seeds = [check_seed(s) for s in seeds]
    if len(tasks) != len(seeds) or not tasks:
        raise ValueError(f"give one task per seed: {len(tasks)} tasks, {len(seeds)} seeds")
    sizes = {(t.X_l.shape, t.X_val.shape, t.X_test.shape) for t in tasks}
    if len(sizes) != 1:
        raise ValueError(f"every task must have the same labeled / validation / test sizes, got {sorted(sizes)}")
    models = []
    for task, seed in zip(tasks, seeds):
        seed_everything(seed)
        m = task.make_model()
        if not isinstance(m, MLP):
            raise TypeError(f"fit_vectorised_mlp trains MLPs (tabular datasets), got {type(m).__name__}")
        models.append(m)
    dropout = models[0].dropout
    per_model = [list(m.parameters()) for m in models]
    leaves = [
        torch.stack([ps[j].detach() for ps in per_model]).to(device).requires_grad_(True)
        for j in range(len(per_model[0]))
    ]
    params = [(leaves[i], leaves[i + 1]) for i in range(0, len(leaves), 2)]
    S = len(seeds)
    Xl = torch.stack([t.X_l for t in tasks]).to(device)
    yl = torch.stack([t.y_l for t in tasks]).to(device)
    Xv = torch.stack([t.X_val for t in tasks]).to(device)
    yv = torch.stack([t.y_val for t in tasks]).to(device)
    k = tasks[0].num_classes
    n_l = Xl.shape[1]
    counts = torch.stack([torch.bincount(t.y_l, minlength=k) for t in tasks]).to(device, torch.float32)
    prior = torch.as_tensor(np.stack([t.prior for t in tasks]), dtype=torch.float32, device=device)
    class_weight = prior * n_l / counts.clamp(min=1)  # θ_j n_l / n_j; times 1/b per batch
    try:  # one fused kernel per parameter; same update as torch.optim.Adam's default path
        opt = torch.optim.Adam(leaves, lr=lr, weight_decay=weight_decay, fused=True)
    except (RuntimeError, ValueError):
        opt = torch.optim.Adam(leaves, lr=lr, weight_decay=weight_decay, foreach=True)
    gen = torch.Generator().manual_seed(int(seeds[0]) * 7919 + 17)
    best_acc = torch.full((S,), -1.0, device=device)
    best_epoch = torch.zeros(S, dtype=torch.long, device=device)
    wait = torch.zeros(S, dtype=torch.long, device=device)
    active = torch.ones(S, dtype=torch.bool, device=device)
    epochs_run = torch.zeros(S, dtype=torch.long, device=device)
    best = [p.detach().clone() for p in leaves]
    start = time.perf_counter()
    for epoch in range(1, epochs + 1):
        # only the seeds still training are computed (stopped seeds keep their best weights aside)
        live = torch.nonzero(active).squeeze(1) if int(active.sum()) < S * COMPACT else torch.arange(S, device=device)
        n_live = live.numel()
        sub = live.unsqueeze(1)
        perm = torch.argsort(torch.rand(n_live, n_l, generator=gen), dim=1).to(device)
        for i in range(0, n_l, batch_size):
            idx = perm[:, i : i + batch_size]
            xb, yb = Xl[sub, idx], yl[sub, idx]
            live_params = params if n_live == S else [(w[live], b[live]) for w, b in params]
            logits = _mlp_forward(live_params, xb, dropout, train=True)
            ce = torch.nn.functional.cross_entropy(logits.reshape(-1, k), yb.reshape(-1), reduction="none")
            w = class_weight[live].gather(1, yb) / idx.shape[1]
            loss = (ce.view(n_live, -1) * w).sum()  # sum over seeds: each seed's gradient is its own risk's
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        with torch.no_grad():
            acc = torch.zeros(S, device=device)
            live_params = params if n_live == S else [(w[live], b[live]) for w, b in params]
            acc[live] = (
                (_mlp_forward(live_params, Xv[live], dropout, train=False).argmax(-1) == yv[live]).float().mean(1)
            )
            improved = active & ((best_acc < 0) | (acc > best_acc + min_delta))
            best_acc = torch.where(improved, acc, best_acc)
            best_epoch = torch.where(improved, torch.full_like(best_epoch, epoch), best_epoch)
            wait = torch.where(improved, torch.zeros_like(wait), wait + active.long())
            epochs_run = torch.where(active, torch.full_like(epochs_run, epoch), epochs_run)
            for b, p in zip(best, leaves):
                b[improved] = p[improved]
            active = active & (wait < patience)
        if not active.any():
            break
    seconds = time.perf_counter() - start
    out = []
    with torch.no_grad():
        bp = [(best[i], best[i + 1]) for i in range(0, len(best), 2)]
        for s, task in enumerate(tasks):
            one = [(w[s : s + 1], b[s : s + 1]) for w, b in bp]
            pred = _mlp_forward(one, task.X_test.to(device).unsqueeze(0), dropout, train=False).argmax(-1)[0]
            out.append(
                {
                    "test_acc": 100.0 * float((pred == task.y_test.to(device)).float().mean()),
                    "best_val_acc": 100.0 * float(best_acc[s]),
                    "epochs": int(epochs_run[s]),
                    "best_epoch": int(best_epoch[s]),
                    "seconds": seconds / S,
                }
            )
    return out


def _compute_floor(tasks, vec, device) -> float:
    """Seconds the vectorised run's multiply-adds need at this device's float32 batched-matmul rate."""
    model = tasks[0].make_model()
    widths = [(m.in_features, m.out_features) for m in model.modules() if isinstance(m, torch.nn.Linear)]
    macs_per_row = sum(i * o for i, o in widths)
    n_l, n_val = tasks[0].X_l.shape[0], tasks[0].X_val.shape[0]
    seed_epochs = sum(r["epochs"] for r in vec)
    flops = seed_epochs * 2 * macs_per_row * (3 * n_l + n_val)  # forward + backward (2x) + validation
    S, (i, o) = len(vec), max(widths, key=lambda w: w[0] * w[1])
    a = torch.randn(S, n_l, i, device=device)
    w = torch.randn(S, i, o, device=device)
    torch.bmm(a, w)
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    t0, reps = time.perf_counter(), 50
    for _ in range(reps):
        torch.bmm(a, w)
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    rate = reps * 2 * S * n_l * i * o / (time.perf_counter() - t0)
    return flops / rate


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seeds", type=int, default=30)
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    warnings.simplefilter("ignore", UserWarning)
    seeds = list(range(args.seeds))
    paper_a.build_task(DATASET, SETTING, 0, n_unlabeled=300, n_val=60)  # load the data once (cached)
    # warm-up of both sides (one-time kernel and thread-pool initialisation is not what is compared)
    paper_a.run_one(DATASET, SETTING, "Sup.", 0, scale="quick", device=args.device)
    warm = [paper_a.build_task(DATASET, SETTING, s, n_unlabeled=300, n_val=60) for s in (0, 1)]
    fit_vectorised_mlp(warm, [0, 1], epochs=2, device=args.device)

    t0 = time.perf_counter()
    seq = [paper_a.run_one(DATASET, SETTING, "Sup.", s, scale="paper", device=args.device) for s in seeds]
    t_seq = time.perf_counter() - t0

    t0 = time.perf_counter()
    tasks = [paper_a.build_task(DATASET, SETTING, s, n_unlabeled=300, n_val=60) for s in seeds]
    vec = fit_vectorised_mlp(tasks, seeds, device=args.device)
    t_vec = time.perf_counter() - t0

    floor = _compute_floor(tasks, vec, args.device)
    a_seq = np.array([r["test_acc"] for r in seq])
    a_vec = np.array([r["test_acc"] for r in vec])
    se = a_seq.std(ddof=1) / math.sqrt(len(seeds))
    diff = a_vec.mean() - a_seq.mean()
    ratio = t_seq / t_vec
    print(
        f"cell: {DATASET} {SETTING}, method Sup. (PN risk), {len(seeds)} seeds, device {args.device}, "
        f"{args.threads} thread(s)"
    )
    print(
        f"sequential: {t_seq:7.2f} s  test acc {a_seq.mean():.2f} ± {a_seq.std(ddof=1):.2f} "
        f"(epochs {np.mean([r['epochs'] for r in seq]):.1f} on average)"
    )
    print(
        f"vectorised: {t_vec:7.2f} s  test acc {a_vec.mean():.2f} ± {a_vec.std(ddof=1):.2f} "
        f"(epochs {np.mean([r['epochs'] for r in vec]):.1f} on average)"
    )
    print(
        f"compute floor of the vectorised run on this device: {floor:.2f} s -> no vectorisation can beat "
        f"{t_seq / floor:.1f}x here"
    )
    speed_ok = ratio >= 10
    acc_ok = abs(diff) <= se
    print(f"speed-up: {ratio:.2f}x (target >= 10x) -> {'PASS' if speed_ok else 'FAIL'}")
    print(f"mean difference: {diff:+.2f} points, one standard error {se:.2f} -> {'PASS' if acc_ok else 'FAIL'}")
    ok = speed_ok and acc_ok
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
