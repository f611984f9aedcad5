"""Paper C end to end: Retrieve's measured speed-up over Full, selection included, against the ideal 1/budget.

Runs Full and Retrieve (warm start, VAT) side by side in one process on the same data and seed, at every
budget, and compares the process CPU time of each run (one thread; evaluation excluded, selection included):
target ``speed-up >= 0.85 / budget``, i.e. selection and warm start cost at most ~15 % of the coreset run.

    .venv/bin/python benchmarks/c_speedup.py                  # quick protocol (digits, seconds)
    .venv/bin/python benchmarks/c_speedup.py --protocol cpu   # the book's CPU stand-in (MNIST; ~15 min)
"""

from __future__ import annotations

import argparse
import sys

import torch

from sslkit.experiments.paper_c import FRACTIONS, build_task, tradeoff_run


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--protocol", default="quick", choices=("quick", "cpu"))
    ap.add_argument("--algorithm", default="vat")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--target", type=float, default=0.85)
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    task = build_task(args.protocol, args.seed)
    kw = {"protocol": args.protocol, "algorithm": args.algorithm, "seed": args.seed, "task": task}
    tradeoff_run(method="retrieve", fraction=0.1, **kw)  # warm-up (allocations, first-call overheads)
    full = tradeoff_run(method="full", fraction=1.0, **kw)
    print(f"{args.protocol} / {args.algorithm}: Full {full['cpu_seconds']:.2f} s CPU, {full['iterations']} iterations")
    ok = True
    for f in FRACTIONS:
        r = tradeoff_run(method="retrieve", fraction=f, **kw)
        speedup = full["cpu_seconds"] / r["cpu_seconds"]
        bound = args.target / f
        share = r["selection_cpu_seconds"] / r["cpu_seconds"]
        passed = speedup >= bound
        ok &= passed
        print(
            f"  budget {f:.0%}: Retrieve {r['cpu_seconds']:.2f} s CPU ({r['iterations']} iterations, "
            f"selection {share:.1%} of it), speed-up {speedup:.2f}x vs target {bound:.2f}x "
            f"(ideal {1 / f:.1f}x): {'PASS' if passed else 'FAIL'}"
        )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
