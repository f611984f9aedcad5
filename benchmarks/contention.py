"""Speed beside a busy process: GKHR, Retrieve's greedy and one ``Trainer`` epoch, alone and beside one CPU-bound
process, with torch's default thread count and with one thread, in one run.

On a machine someone else also uses (one other CPU-bound process on the cores), an operation split over torch's
threads waits at its end for the thread another process holds; a loop of many small operations (GKHR's herding
loop, Retrieve's greedy) pays that wait at every step. sslkit runs those loops with one thread
(:func:`sslkit.device.single_threaded`, :func:`sslkit.device.task_pool`) and shares GKHR's mu among Python threads,
each on one torch thread. This script times, for each workload and in the same run:

* ``alone``: nothing else started by the script (the load average is printed: other users of the machine count);
* ``busy``: beside one spawned Python busy loop (``while True: pass``, the script's own niceness);

each with torch's default threads (``default``: what a user gets) and with ``torch.set_num_threads(1)`` (``one``),
and with the one-thread loops switched off (``default, loops threaded``: the library before
:func:`~sslkit.device.single_threaded` and ``Trainer(threads="auto")``, the comparison that shows what they
buy). Medians of ``--repeats`` interleaved runs (configurations in turn, so a change of load hits all of them).
Same selection in every configuration (checked: the indices are compared).

Targets (beside one busy process, torch's default threads): at most 1.3x the one-thread time beside the same
busy process, and at most 2x the time alone with default threads; for each of the three workloads.

Workloads: GKHR selecting m = 200 of n = 20 000 x 256 Gaussian float32 features (paper B's sampler, mu + loop);
Retrieve's stochastic greedy selecting k of N last-layer gradients (the shapes of ``c_retrieve_greedy.py``,
smaller: N = 20 000, n_L = 2 000, D = 128, k = 2 000 by default); one epoch of ``Trainer`` (supervised MLP
[256, 256], 20 000 x 64 rows, batch 64: the task of ``engine_overhead.py``).

Usage: ``python benchmarks/contention.py [--repeats 3] [--quick] [--only gkhr,retrieve,trainer]`` (``--quick``:
smaller sizes, one repeat: a smoke run, not the targets' sizes). Exit status 1 when a target fails.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import subprocess
import sys
import time

import numpy as np
import torch
from c_retrieve_greedy import make_inputs
from machine import cpu_capability

import sslkit.coreset.retrieve as retrieve_module
import sslkit.device as device_module
import sslkit.select.herding as herding_module
from sslkit.algorithms import Supervised
from sslkit.coreset import Retrieve
from sslkit.engine import Trainer
from sslkit.experiments import hardware_summary
from sslkit.models import MLP
from sslkit.select import GKHR

TARGET_VS_ONE, TARGET_VS_ALONE = 1.3, 2.0
DEFAULT, ONE, THREADED = "default", "one", "default, loops threaded"


@contextlib.contextmanager
def busy_process(on: bool):
    """One CPU-bound Python process beside this one while the block runs (nothing when ``on`` is False)."""
    if not on:
        yield
        return
    proc = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    time.sleep(0.5)  # let it start spinning
    try:
        yield
    finally:
        proc.kill()
        proc.wait()


@contextlib.contextmanager
def configuration(name: str, default_threads: int):
    """Torch's threads for ``name``; ``THREADED`` also switches sslkit's one-thread loops off (the old library)."""
    torch.set_num_threads(1 if name == ONE else default_threads)
    saved = herding_module.task_pool, retrieve_module.single_threaded, device_module.SMALL_STEP_FLOPS
    if name == THREADED:
        herding_module.task_pool = lambda device, tasks: contextlib.nullcontext(map)  # the loop on torch's threads
        retrieve_module.single_threaded = lambda device: contextlib.nullcontext()
        device_module.SMALL_STEP_FLOPS = 0  # Trainer(threads="auto") keeps torch's threads for every step
    try:
        yield
    finally:
        herding_module.task_pool, retrieve_module.single_threaded, device_module.SMALL_STEP_FLOPS = saved
        torch.set_num_threads(default_threads)


def workloads(quick: bool, only: set) -> dict:
    """name -> (function returning ``(seconds, loop seconds or None, indices or None)``, configurations)."""
    gen = torch.Generator().manual_seed(0)
    out = {}
    if "gkhr" in only:
        n, d, m = (4000, 64, 100) if quick else (20000, 256, 200)
        X = torch.randn(n, d, generator=gen)

        def gkhr():
            sel = GKHR(m, device="cpu").fit(X)
            return sel.timings_["total"], sel.timings_["loop"], sel.indices_

        out[f"GKHR n={n} d={d} m={m}"] = (gkhr, (DEFAULT, ONE, THREADED))
    if "retrieve" in only:
        N, n_l, D, k = (5000, 500, 32, 500) if quick else (20000, 2000, 128, 2000)
        lin, G, h_l, y = make_inputs(N, n_l, D)
        with torch.no_grad():
            z_l = lin(h_l)

        def retrieve():
            r = Retrieve(k, seed=0).fit(G, z_l, y, h_l)
            return r.timings_["total"], r.timings_["loop"], np.asarray(r.indices_)

        out[f"Retrieve greedy N={N} n_L={n_l} D={D} k={k}"] = (retrieve, (DEFAULT, ONE, THREADED))
    if "trainer" in only:
        n = 4000 if quick else 20000
        Xt = torch.randn(n, 64, generator=gen)
        yt = (Xt[:, 0] + 0.5 * torch.randn(n, generator=gen) > 0).long()

        def trainer():
            model = MLP(64, 2, hidden=(256, 256), dropout=0.2)
            tr = Trainer(model, Supervised(), device="cpu", epochs=1, batch_size=64, seed=0, progress=False)
            t0 = time.perf_counter()
            tr.fit(Xt, yt)
            return time.perf_counter() - t0, None, None

        out[f"Trainer epoch MLP n={n} batch 64"] = (trainer, (DEFAULT, ONE, THREADED))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", default="gkhr,retrieve,trainer")
    args = ap.parse_args()
    repeats = 1 if args.quick else args.repeats
    default_threads = torch.get_num_threads()
    print(hardware_summary(torch.device("cpu")))
    print(f"{cpu_capability()}; os.cpu_count() = {os.cpu_count()}; OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY')}")
    jobs = workloads(args.quick, set(args.only.split(",")))
    times = {}  # (workload, busy, config) -> [(seconds, loop)]
    chosen = {}  # workload -> indices of the first run (every run must match)
    loads = []
    for busy in (False, True):
        loads.append(open("/proc/loadavg").read().split()[0])
        with busy_process(busy):
            for _ in range(repeats):
                for name, (fn, configs) in jobs.items():
                    for config in configs:
                        with configuration(config, default_threads):
                            seconds, loop, idx = fn()
                        times.setdefault((name, busy, config), []).append((seconds, loop))
                        print(f"  {name}, {'busy' if busy else 'alone'}, {config}: {seconds:.2f} s", flush=True)
                        if idx is not None and not np.array_equal(chosen.setdefault(name, idx), idx):
                            raise AssertionError(f"{name}: the selection changed with {config!r}, busy={busy}")
        loads.append(open("/proc/loadavg").read().split()[0])
    print(f"load average (1 min) before/after alone, before/after busy: {' / '.join(loads)}; {repeats} repeats")
    failed = False
    for name, (_, configs) in jobs.items():
        med = {
            (busy, c): statistics.median(s for s, _ in times[(name, busy, c)])
            for busy in (False, True)
            for c in configs
        }
        print(f"\n{name}: median seconds (loop seconds)")
        for busy in (False, True):
            cells = []
            for c in configs:
                loops = [lp for _, lp in times[(name, busy, c)] if lp is not None]
                loop = f" ({statistics.median(loops):.2f})" if loops else ""
                cells.append(f"{c}: {med[(busy, c)]:.2f}{loop}")
            print(f"  {'busy ' if busy else 'alone'}  " + "; ".join(cells))
        vs_one = med[(True, DEFAULT)] / med[(True, ONE)]
        vs_alone = med[(True, DEFAULT)] / med[(False, DEFAULT)]
        ok = vs_one <= TARGET_VS_ONE and vs_alone <= TARGET_VS_ALONE
        failed |= not ok
        print(
            f"  busy default / busy one thread = {vs_one:.2f} (target <= {TARGET_VS_ONE}); "
            f"busy default / alone default = {vs_alone:.2f} (target <= {TARGET_VS_ALONE}): {'PASS' if ok else 'FAIL'}"
        )
        if THREADED in configs:
            print(
                f"  loops threaded (before): busy / one thread = {med[(True, THREADED)] / med[(True, ONE)]:.2f}, "
                f"busy / alone = {med[(True, THREADED)] / med[(False, THREADED)]:.2f}"
            )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
