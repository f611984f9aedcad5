"""GKHR (paper B Algorithm 1) scaling in n and in m, sslkit and the numpy reference timed side by side in one run.

Paper B §4.2 claims GKHR is ``O(mn)`` "despite the time cost for calculating kernel functions": the loop (lines
3-7) is one kernel row and one argmin per pick, slope 1 in n and 1 in m; line 1's ``mu`` needs all ``n^2 / 2``
kernel values, slope 2 in n and 0 in m, which the claim leaves out. This script times, at each size, sslkit's
:class:`sslkit.select.GKHR` (its own ``timings_``: mu and loop) and the straightforward vectorised numpy
Algorithm 1 of ``b_gkhr_speed.py`` (float64, kernel rows as written; mu and loop timed apart), interleaved at
each size so that load hits both alike (process CPU seconds, the steadier measure on a shared machine; the least
of ``--repeats``), and prints per curve the log-log slopes (least squares over the sizes
and the last segment; ``machine.loglog_slope``) of each part for both implementations, the speed-up at each
size, and whether the two select the same indices. Synthetic Gaussian features (d = 64 by default, float32
for sslkit, float64 for numpy), median bandwidth computed once and given to both; alpha = 1 - 1/sqrt(m).

Curves: n doubling at fixed m (default m = 200, n = 2 000 ... 16 000) and m doubling at fixed n (default
n = 4 000, m = 100 ... 1 600). No gate: the slopes are reported beside the claim (``--quick``: smaller sizes,
about a minute on 2 cores). Usage: ``python benchmarks/b_gkhr_scaling.py [--quick] [--d 64] [--threads 2]``.
"""

from __future__ import annotations

import argparse
import os
import sys

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # see b_gkhr_speed.py

import numpy as np  # noqa: E402
import torch  # noqa: E402
from b_gkhr_speed import numpy_gkhr  # noqa: E402
from machine import cpu_capability, loglog_slope  # noqa: E402

from sslkit.experiments import hardware_summary  # noqa: E402
from sslkit.select import GKHR, auto_alpha, median_bandwidth  # noqa: E402

PARTS = ("mu", "loop")


def one_size(n: int, m: int, d: int, repeats: int, seed: int = 0) -> tuple[dict, dict, bool]:
    """The process CPU seconds of mu and of the loop, sslkit and numpy, the least of ``repeats`` interleaved runs."""
    X = np.random.default_rng(seed).normal(size=(n, d)).astype(np.float32)
    X64 = X.astype(np.float64)
    sigma = median_bandwidth(X, device="cpu")
    alpha = auto_alpha(m)
    ours, ref = {p: np.inf for p in PARTS}, {p: np.inf for p in PARTS}
    for _ in range(repeats):
        g = GKHR(m, alpha=alpha, bandwidth=sigma, device="cpu").fit(X)
        t: dict = {}
        idx = numpy_gkhr(X64, m, alpha, sigma, timings=t)
        for p in PARTS:
            ours[p] = min(ours[p], g.timings_[f"{p}_cpu"])
            ref[p] = min(ref[p], t[f"{p}_cpu"])
    differ = np.flatnonzero(idx != g.indices_)
    return ours, ref, int(differ[0]) if differ.size else m  # picks equal to the float64 reference's, in order


def curve(name: str, sizes, make) -> dict:
    ours, ref, same = {p: [] for p in PARTS}, {p: [] for p in PARTS}, []
    print(f"\n{name} (process CPU seconds, least of the repeats)")
    print(
        f"  {'size':>7} | "
        + " ".join(f"{'sslkit ' + p:>12}" for p in PARTS)
        + " | "
        + " ".join(f"{'numpy ' + p:>12}" for p in PARTS)
        + " | numpy / sslkit (mu + loop)  same first picks"
    )
    for s in sizes:
        o, r, eq = make(s)
        for p in PARTS:
            ours[p].append(o[p])
            ref[p].append(r[p])
        same.append(eq)
        print(
            f"  {s:>7} | "
            + " ".join(f"{o[p]:>12.4f}" for p in PARTS)
            + " | "
            + " ".join(f"{r[p]:>12.4f}" for p in PARTS)
            + f" | {sum(r.values()) / sum(o.values()):>7.1f}x  {eq}"
        )
    for p in PARTS:
        print(
            f"  slope of {p:4s}: sslkit {loglog_slope(sizes, ours[p]):.2f} (last segment "
            f"{loglog_slope(sizes[-2:], ours[p][-2:]):.2f}), numpy {loglog_slope(sizes, ref[p]):.2f} (last segment "
            f"{loglog_slope(sizes[-2:], ref[p][-2:]):.2f})"
        )
    return {"ours": ours, "ref": ref, "same": same}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--d", type=int, default=64)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--repeats", type=int, default=2)
    args = ap.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    if args.quick:
        ns, m_fixed, ms, n_fixed = [1000, 2000, 4000, 8000], 100, [50, 100, 200, 400], 2000
    else:
        ns, m_fixed, ms, n_fixed = [2000, 4000, 8000, 16000], 200, [100, 200, 400, 800, 1600], 4000
    print(f"GKHR scaling, d = {args.d}; {hardware_summary('cpu')}; {cpu_capability()}; load {os.getloadavg()[0]:.1f}")
    print("paper B §4.2: O(mn) for the loop (slope 1 in n, 1 in m); mu (line 1) n^2 d / 2: slope 2 in n, 0 in m")
    curve(f"against n (m = {m_fixed})", ns, lambda n: one_size(n, m_fixed, args.d, args.repeats))
    curve(f"against m (n = {n_fixed})", ms, lambda m: one_size(n_fixed, m, args.d, args.repeats))
    print(
        "\nsame first picks: how many of sslkit's picks (float32 kernel rows) equal the float64 reference's, in "
        "order (late near-ties can flip); load at the end " + f"{os.getloadavg()[0]:.1f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
