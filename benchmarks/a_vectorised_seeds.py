"""Issue 3 §5: the 30 seeds of one Table 1 cell trained vectorised vs. 30 sequential runs.

Cell: Breast Cancer, (n_1, n_2) = (30, 30), method "Sup." (the PN risk, a = θ), paper A's protocol (Adam 1e-3,
weight decay 1e-4, batches of 64, at most 200 epochs, early stopping on validation accuracy with patience 20).

* sequential: ``paper_a.run_one(..., "Sup.", seed)`` for seeds 0..29 (the runner's path: Trainer +
  SupervisedRisk), each with its own data split;
* vectorised: the same 30 splits, ``paper_a.fit_vectorised_mlp`` -- 30 stacked MLPs, one batched
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

from sslkit.experiments import paper_a

DATASET, SETTING = "breast_cancer", "(30,30)"


def _compute_floor(tasks, vec, device) -> float:
    """Seconds the vectorised run's multiply-adds need at this device's float32 batched-matmul rate."""
    model = tasks[0].make_model()
    widths = [(m.in_features, m.out_features) for m in model.modules() if isinstance(m, torch.nn.Linear)]
    macs_per_row = sum(i * o for i, o in widths)
    n_l, n_val = tasks[0].X_l.shape[0], tasks[0].X_val.shape[0]
    seed_epochs = sum(r["epochs"] for r in vec)
    flops = seed_epochs * 2 * macs_per_row * (3 * n_l + n_val)   # forward + backward (2x) + validation
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
    paper_a.fit_vectorised_mlp(warm, [0, 1], epochs=2, device=args.device)

    t0 = time.perf_counter()
    seq = [paper_a.run_one(DATASET, SETTING, "Sup.", s, scale="paper", device=args.device) for s in seeds]
    t_seq = time.perf_counter() - t0

    t0 = time.perf_counter()
    tasks = [paper_a.build_task(DATASET, SETTING, s, n_unlabeled=300, n_val=60) for s in seeds]
    vec = paper_a.fit_vectorised_mlp(tasks, seeds, device=args.device)
    t_vec = time.perf_counter() - t0

    floor = _compute_floor(tasks, vec, args.device)
    a_seq = np.array([r["test_acc"] for r in seq])
    a_vec = np.array([r["test_acc"] for r in vec])
    se = a_seq.std(ddof=1) / math.sqrt(len(seeds))
    diff = a_vec.mean() - a_seq.mean()
    ratio = t_seq / t_vec
    print(f"cell: {DATASET} {SETTING}, method Sup. (PN risk), {len(seeds)} seeds, device {args.device}, "
          f"{args.threads} thread(s)")
    print(f"sequential: {t_seq:7.2f} s  test acc {a_seq.mean():.2f} ± {a_seq.std(ddof=1):.2f} "
          f"(epochs {np.mean([r['epochs'] for r in seq]):.1f} on average)")
    print(f"vectorised: {t_vec:7.2f} s  test acc {a_vec.mean():.2f} ± {a_vec.std(ddof=1):.2f} "
          f"(epochs {np.mean([r['epochs'] for r in vec]):.1f} on average)")
    print(f"compute floor of the vectorised run on this device: {floor:.2f} s -> no vectorisation can beat "
          f"{t_seq / floor:.1f}x here")
    speed_ok = ratio >= 10
    acc_ok = abs(diff) <= se
    print(f"speed-up: {ratio:.2f}x (target >= 10x) -> {'PASS' if speed_ok else 'FAIL'}")
    print(f"mean difference: {diff:+.2f} points, one standard error {se:.2f} -> {'PASS' if acc_ok else 'FAIL'}")
    ok = speed_ok and acc_ok
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
