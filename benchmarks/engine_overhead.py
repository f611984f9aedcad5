"""Overhead of sslkit's training loop against a bare PyTorch loop doing the same work.

Both train the same MLP (paper A App. C: [256, 256], dropout 0.2, Adam 1e-3, wd 1e-4, batch 64) for the
same number of steps on the same data; the Trainer runs without validation, EMA or hooks. The ratio
Trainer / bare loop is what the engine's bookkeeping (batching, logging, timing, history) costs.
Target: <= 1.25. Usage: python benchmarks/engine_overhead.py [--steps N] [--device cpu|cuda]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

from sslkit.algorithms import Supervised
from sslkit.device import resolve_device
from sslkit.engine import Trainer
from sslkit.experiments import hardware_summary
from sslkit.models import MLP

TARGET = 1.25


def bare_loop(X, y, steps, device, seed):
    torch.manual_seed(seed)
    model = MLP(X.shape[1], 2, hidden=(256, 256), dropout=0.2).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, weight_decay=1e-4)
    Xt, yt = torch.as_tensor(X, device=device), torch.as_tensor(y, device=device)
    g = torch.Generator().manual_seed(seed)
    model.train()
    done = 0
    while done < steps:
        perm = torch.randperm(len(Xt), generator=g).to(device)
        for i in range(0, len(Xt), 64):
            idx = perm[i : i + 64]
            logits, _ = model(Xt[idx])
            loss = F.cross_entropy(logits, yt[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            done += 1
            if done == steps:
                break
    if device.type == "cuda":
        torch.cuda.synchronize()


def engine_loop(X, y, steps, device, seed):
    model = MLP(X.shape[1], 2, hidden=(256, 256), dropout=0.2)
    epochs = -(-steps // -(-len(X) // 64))
    Trainer(model, Supervised(), device=device, epochs=epochs, batch_size=64, seed=seed, progress=False).fit(X, y)


def timed(fn, *args):
    t0 = time.perf_counter()
    fn(*args)
    return time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=3000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--device", default="cpu")
    args = ap.parse_args()
    device = resolve_device(args.device)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(640, 30)).astype(np.float32)  # 10 batches of 64 per epoch
    y = (X[:, 0] + 0.5 * rng.normal(size=640) > 0).astype(np.int64)
    steps = args.steps - args.steps % 10  # whole epochs for both loops
    engine_loop(X, y, 20, device, 0), bare_loop(X, y, 20, device, 0)  # warm-up
    bare, eng = [], []
    for r in range(args.repeats):  # interleaved, so drift hits both alike
        bare.append(timed(bare_loop, X, y, steps, device, r))
        eng.append(timed(engine_loop, X, y, steps, device, r))
    b, e = statistics.median(bare), statistics.median(eng)
    ratio = e / b
    print(f"hardware: {hardware_summary(args.device)}; torch threads: {torch.get_num_threads()}")
    print(
        f"{steps} steps, median of {args.repeats}: bare loop {b:.2f} s ({1e3 * b / steps:.2f} ms/step), "
        f"Trainer {e:.2f} s ({1e3 * e / steps:.2f} ms/step)"
    )
    print(f"ratio Trainer / bare = {ratio:.2f} (target <= {TARGET}): {'PASS' if ratio <= TARGET else 'FAIL'}")
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
