"""run_grid's executors: a grid of 40 short CPU-bound runs (about 1 s each) on Ray with 2 workers vs the local
executor, in the same process, on the same grid; target: Ray >= 1.7x faster (issue 13).

Each run is a fixed amount of numpy work on one thread (calibrated at the start to take ``--run-s`` seconds),
deterministic in its seed; both executors must give the same metrics. Printed: the wall-clock of each, the
ratio, the per-run overhead of each (``wall x workers / runs - mean run time``: whatever a run costs beyond
its own work -- scheduling, pickling, a worker's first import of torch, writing the record), Ray's start-up
time (not counted in the ratio: a cluster is started once per session), with ``--slurm`` the overhead of one
job through submitit's local executor, and the load average (the target assumes the 2 cores are free).

    .venv/bin/python benchmarks/executors.py            # 40 runs x ~1 s: about 1.5 minutes
    .venv/bin/python benchmarks/executors.py --runs 8   # a smoke test
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):  # one thread per run, both sides
    os.environ[_var] = "1"

import argparse  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from sslkit.experiments import hardware_summary, run_grid  # noqa: E402


def work(reps, seed):
    """``reps`` rounds of a 128 x 128 matrix product and tanh: CPU-bound, one thread, deterministic."""
    a = np.random.default_rng(seed).normal(size=(128, 128))
    for _ in range(reps):
        a = np.tanh(a @ a / 128.0)
    return {"mean": float(a.mean()), "norm": float(np.linalg.norm(a))}


def calibrate(run_s: float) -> int:
    """The number of rounds that takes about ``run_s`` seconds here, now."""
    reps = 50
    while True:
        start = time.perf_counter()
        work(reps, 0)
        took = time.perf_counter() - start
        if took > 0.2:
            return max(1, round(reps * run_s / took))
        reps *= 4


def timed(folder: Path, name: str, executor, grid, seeds, fn):
    start = time.perf_counter()
    records = run_grid(fn, grid, folder / f"{name}.jsonl", seeds=seeds, progress=False, executor=executor)
    return time.perf_counter() - start, records


def overhead(wall, workers, records):
    return wall * workers / len(records) - np.mean([r["seconds"] for r in records])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--run-s", type=float, default=1.0, help="seconds of work per run")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--target", type=float, default=1.7)
    ap.add_argument("--slurm", action="store_true", help="also time one job through submitit's local executor")
    args = ap.parse_args(argv)
    import ray

    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores")
    reps = calibrate(args.run_s)
    hardware_summary()  # imports torch here, as a notebook already has; Ray's workers import it on their first run

    def fn(i, seed):
        return work(reps, seed)

    grid, seeds = {"i": list(range(args.runs))}, [0]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        local_wall, local = timed(folder, "local", "local", grid, seeds, fn)
        start = time.perf_counter()
        ray.init(num_cpus=args.workers, include_dashboard=False, log_to_driver=False)
        ray_start = time.perf_counter() - start
        ray_wall, remote = timed(folder, "ray", {"name": "ray", "num_cpus": 1}, grid, seeds, fn)
        ray.shutdown()
        same = [r["metrics"] for r in local] == [r["metrics"] for r in remote]
        slurm_line = None
        if args.slurm:
            executor = {"name": "slurm", "cluster": "local", "poll_s": 0.1, "timeout_min": 10}
            slurm_wall, one = timed(folder, "slurm", executor, {"i": [0]}, seeds, fn)
            slurm_line = f"slurm (submitit local, 1 job): {slurm_wall:.2f} s, {overhead(slurm_wall, 1, one):.2f} s/job"
    ratio = local_wall / ray_wall
    passed = same and ratio >= args.target
    mean_run = np.mean([r["seconds"] for r in local])
    print(f"{args.runs} runs of {reps} rounds ({mean_run:.2f} s each on the local executor)")
    print(f"local: {local_wall:.2f} s, overhead {overhead(local_wall, 1, local) * 1000:.1f} ms/run")
    print(
        f"ray ({args.workers} workers): {ray_wall:.2f} s, "
        f"overhead {overhead(ray_wall, args.workers, remote):.3f} s/run (cluster start {ray_start:.1f} s, not counted)"
    )
    if slurm_line:
        print(slurm_line)
    print(f"same metrics: {same}")
    print(f"local / ray = {ratio:.2f}x (target >= {args.target}x): {'PASS' if passed else 'FAIL'}")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores")
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
