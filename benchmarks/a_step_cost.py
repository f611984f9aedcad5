"""Cost of one training step of paper A's risk rewrite (OursEC, OursIter) against a cross-entropy step.

All steps train the same MLP (paper A App. C: [256, 256], dropout 0.2, Adam 1e-3, wd 1e-4) on the same
pre-drawn batches: 64 labeled + 256 unlabeled rows (App. C batch sizes). Like with like: the SSL step
forwards and back-propagates all 320 rows (one concatenated forward), so the reference **CE step sees the
same 320 rows** -- cross-entropy over the concatenated batch, with the unlabeled rows' hidden labels --
i.e. the same network work; the ratio is the price of the risk-rewrite bookkeeping (loss matrix, Horvitz-
Thompson R̂_ij, Δ_j, nn-correction, logs). OursIter is timed after its warm-up (a = a* active, unlabeled
batch used); its per-epoch a* hook is not part of a step. For information the script also prints a 64-row
CE step (what plain supervised training costs). Target: OursEC / CE(320) <= 1.2 and OursIter / CE(320) <= 1.2.
On the CPU with one thread (default) the clock is the process's CPU time, so other processes sharing the
cores do not distort the ratio; otherwise wall-clock.
Usage: python benchmarks/a_step_cost.py [--steps N] [--repeats R] [--device cpu|cuda] [--classes K] [--threads T]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

from sslkit.algorithms import Batch, FitContext, OursEC, OursIter
from sslkit.device import resolve_device
from sslkit.experiments import hardware_summary
from sslkit.models import MLP

TARGET = 1.2


def make_batches(steps, d, k, device, seed=0):
    g = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(steps):
        x_l = torch.randn(64, d, generator=g)
        y_l = torch.arange(64) % k
        x_u = torch.randn(256, d, generator=g)
        y_u = torch.randint(0, k, (256,), generator=g)
        out.append(tuple(t.to(device) for t in (x_l, y_l, x_u, y_u)))
    return out


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def run(kind, batches, d, k, device, clock=time.perf_counter):
    torch.manual_seed(0)
    model = MLP(d, k, hidden=(256, 256), dropout=0.2).to(device).train()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, weight_decay=1e-4)
    prior = np.full(k, 1.0 / k)
    counts = np.full(k, 64 * 10 // k)
    algo = None
    if kind == "ours_ec":
        algo = OursEC(prior, n_per_class=counts)
    elif kind == "ours_iter":
        algo = OursIter(prior, warmup_epochs=0, n_per_class=counts)
    if algo is not None:
        algo.setup(model, FitContext(num_classes=k, device=device))
        if kind == "ours_iter":  # post-warm-up state: some a != θ, as after an a* update
            algo.set_a(prior * np.linspace(0.3, 0.9, k))
    sync(device)
    t0 = clock()
    for step, (x_l, y_l, x_u, y_u) in enumerate(batches):
        if kind == "ce320":
            loss = F.cross_entropy(model(torch.cat([x_l, x_u]))[0], torch.cat([y_l, y_u]))
        elif kind == "ce64":
            loss = F.cross_entropy(model(x_l)[0], y_l)
        else:
            loss = algo.loss(model, Batch(x_l, y_l, x_u, step=step)).loss
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    sync(device)
    return clock() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--classes", type=int, default=2)
    ap.add_argument("--features", type=int, default=30)
    ap.add_argument("--threads", type=int, default=1, help="torch CPU threads (0: torch's default)")
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    device = resolve_device(args.device)
    d, k = args.features, args.classes
    batches = make_batches(args.steps, d, k, device)
    # CPU time of this process (robust to other processes sharing the cores) when it is single-threaded
    # on the CPU; wall-clock otherwise (GPU work is asynchronous and is not CPU time)
    cpu_clock = device.type == "cpu" and torch.get_num_threads() == 1
    clock = time.process_time if cpu_clock else time.perf_counter
    kinds = ("ce320", "ce64", "ours_ec", "ours_iter")
    for kind in kinds:  # warm-up
        run(kind, batches[:20], d, k, device, clock)
    times = {kind: [] for kind in kinds}
    for _ in range(args.repeats):  # interleaved, so drift hits all alike
        for kind in kinds:
            times[kind].append(run(kind, batches, d, k, device, clock))
    med = {kind: statistics.median(v) for kind, v in times.items()}
    print(hardware_summary(device))
    print(
        f"device={device}, k={k}, d={d}, steps={args.steps}, repeats={args.repeats} (median), "
        f"clock={'process CPU time' if cpu_clock else 'wall'}"
    )
    for kind in kinds:
        print(f"  {kind:10s} {1e3 * med[kind] / args.steps:8.3f} ms/step")
    ok = True
    for kind in ("ours_ec", "ours_iter"):
        ratio = med[kind] / med["ce320"]
        passed = ratio <= TARGET
        ok &= passed
        print(
            f"{kind} / CE step on the same 320 rows = {ratio:.3f}  (target <= {TARGET})  {'PASS' if passed else 'FAIL'}"
        )
    print(f"(info) OursEC / CE step on the 64 labeled rows only = {med['ours_ec'] / med['ce64']:.3f}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
