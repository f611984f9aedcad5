"""RDSS on a pool of a million: GKHR with an approximate mu, from a memory-mapped features file (issue 48, item 3).

Paper B selects from ImageNet's 1.28 M images. GKHR's exact ``mu`` costs ``n^2 d / 2`` multiply-adds, 2.6e14 at
n = 1 000 000, d = 512 (tens of minutes on two cores); :func:`sslkit.select.approximate_mu` estimates it from ``s``
landmarks (or random Fourier features) in ``n s d``. This benchmark

1. writes ``n x d`` float32 features (a mixture of 100 Gaussian clusters, fixed seed) to an ``.npy`` file by chunks
   and opens it memory-mapped (``np.load(mmap_mode="r")``): the features are never read into memory at once;
2. selects ``m`` of them with ``GKHR(m, mu_method="landmarks", mu_size=s)`` (median bandwidth on 5 000 rows) and
   prints its wall-clock time (by part: bandwidth, mu, loop) and the process's peak resident memory (the touched
   pages of the mapped file count in it); targets: <= 300 s and <= 8 GB on the 2-core machine;
3. at smaller pools (the first ``n`` rows of the same file: 50 000 and 200 000 by default), runs the exact path and
   both approximations with the same bandwidth and prints the pick agreement (``|I_exact & I_approx| / m``) and
   the exact alpha-MMD^2 of each selection (eq. (6), with the exact ``mu``), beside a random selection's (the scale
   of the criterion) and the bound ``2 alpha (2 + alpha) eps`` on the gap (:mod:`sslkit.select.kernel_mean`).

Pick agreement is a harsh measure: in a dense pool many points are nearly interchangeable, and one different early
pick changes the later ones; the alpha-MMD^2 gap says whether the selection is as good. ``--cached-loop`` runs the
greedy loop as it was before its speculation (``sslkit.select.herding.CPU_CANDIDATES`` set above n: the cache of full
kernel rows alone; the same picks), for the loop's time side by side. Usage:
``python benchmarks/b_gkhr_million.py [--quick] [--n 1000000] [--d 512] [--m 1000] [--mu-size 8192]
[--compare 50000,200000] [--dir DIR] [--device cuda] [--cached-loop]`` (``--quick``: n = 100 000, m = 200, compare
at 20 000; a minute).
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # as b_gkhr_speed.py: before torch loads OpenMP

import numpy as np  # noqa: E402
import torch  # noqa: E402

import sslkit.select.herding as herding  # noqa: E402
from sslkit.experiments import hardware_summary  # noqa: E402
from sslkit.select import GKHR, RandomSelector, alpha_mmd2, median_bandwidth, mu_error_bound  # noqa: E402

TARGET_S, TARGET_GB = 300.0, 8.0
CHUNK = 1 << 16


def write_features(path: Path, n: int, d: int, clusters: int = 100, seed: int = 0) -> None:
    """``n x d`` float32 rows of a mixture of ``clusters`` Gaussians, written to ``path`` by chunks."""
    rng = np.random.default_rng(seed)
    centres = (3.0 * rng.standard_normal((clusters, d))).astype(np.float32)
    out = np.lib.format.open_memmap(path, mode="w+", dtype=np.float32, shape=(n, d))
    for s in range(0, n, CHUNK):
        k = min(CHUNK, n - s)
        out[s : s + k] = centres[rng.integers(clusters, size=k)] + rng.standard_normal((k, d), dtype=np.float32)
    out.flush()
    del out


def peak_gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # Linux: kilobytes


def compare(X, n: int, m: int, mu_size: int, seed: int = 0, device="auto") -> list[dict]:
    """Exact GKHR against both approximations on the first ``n`` rows, one bandwidth for all, on ``device``."""
    Xn = torch.from_numpy(np.ascontiguousarray(X[:n]))
    h = median_bandwidth(Xn, seed=seed)
    t0 = time.perf_counter()
    exact = GKHR(m, bandwidth=h, seed=seed, device=device).fit(Xn)
    rows = [dict(n=n, method="exact", seconds=time.perf_counter() - t0, agreement=1.0)]
    alpha, mu = exact.alpha_, exact.mu_
    crit = {"exact": alpha_mmd2(Xn, exact.indices_, alpha, h, mu=mu)}
    for method in ("landmarks", "rff"):
        t0 = time.perf_counter()
        fit = GKHR(m, bandwidth=h, seed=seed, mu_method=method, mu_size=mu_size, device=device).fit(Xn)
        seconds = time.perf_counter() - t0
        agree = len(set(fit.indices_.tolist()) & set(exact.indices_.tolist())) / m
        crit[method] = alpha_mmd2(Xn, fit.indices_, alpha, h, mu=mu)
        eps = mu_error_bound(n, mu_size, method)
        rows.append(
            dict(
                n=n,
                method=method,
                seconds=seconds,
                agreement=agree,
                mu_max_error=float(np.abs(fit.mu_ - mu).max()),
                eps=eps,
                gap_bound=2 * alpha * (2 + alpha) * eps,
            )
        )
    crit["random"] = alpha_mmd2(Xn, RandomSelector(m, seed=seed).fit(Xn).indices_, alpha, h, mu=mu)
    for r in rows:
        r["alpha_mmd2"] = crit[r["method"]]
        r["gap"] = crit[r["method"]] - crit["exact"]
        r["random_alpha_mmd2"] = crit["random"]
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--d", type=int, default=512)
    ap.add_argument("--m", type=int, default=1000)
    ap.add_argument("--mu-size", type=int, default=8192)
    ap.add_argument("--compare", default="50000,200000", help="pool sizes for the exact comparison ('' for none)")
    ap.add_argument("--dir", default=None, help="where to write the features file (default: a temporary folder)")
    ap.add_argument("--device", default="auto", help="where GKHR computes: auto, cpu, cuda (the file stays on disk)")
    ap.add_argument("--cached-loop", action="store_true", help="the loop without speculation (the same picks)")
    args = ap.parse_args(argv)
    if args.quick:
        args.n, args.m, args.compare = 100_000, 200, "20000"
    sizes = [int(s) for s in args.compare.split(",") if s.strip()]
    if any(s > args.n for s in sizes):
        ap.error(f"--compare sizes must not exceed --n {args.n}")
    if args.dir is not None:
        Path(args.dir).mkdir(parents=True, exist_ok=True)
    print(f"[b_gkhr_million] {hardware_summary()}; torch threads {torch.get_num_threads()}")
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        path = Path(tmp) / "features.npy"
        t0 = time.perf_counter()
        write_features(path, args.n, args.d)
        print(
            f"wrote {args.n} x {args.d} float32 features ({path.stat().st_size / 2**30:.2f} GiB) in "
            f"{time.perf_counter() - t0:.1f} s"
        )
        X = np.load(path, mmap_mode="r")
        base = peak_gb()
        t0 = time.perf_counter()
        if args.cached_loop:
            herding.CPU_CANDIDATES = args.n
        fit = GKHR(args.m, mu_method="landmarks", mu_size=args.mu_size, device=args.device).fit(X)
        seconds = time.perf_counter() - t0
        peak = peak_gb()
        parts = ", ".join(f"{k} {v:.1f} s" for k, v in fit.timings_.items() if k in ("bandwidth", "mu", "loop"))
        eps = mu_error_bound(args.n, args.mu_size, "landmarks")
        print(
            f"GKHR m = {args.m} of n = {args.n}, d = {args.d}, mu from {args.mu_size} landmarks: {seconds:.1f} s "
            f"({parts}; {fit.passes_} passes{', cached loop' if args.cached_loop else ''}); peak memory "
            f"{peak:.2f} GB (before: {base:.2f} GB); mu error bound eps = {eps:.4f} "
            f"(95 %); {len(set(fit.indices_.tolist()))} distinct picks"
        )
        ok = seconds <= TARGET_S and peak <= TARGET_GB
        print(f"targets: <= {TARGET_S:.0f} s and <= {TARGET_GB:.0f} GB: {'met' if ok else 'NOT met'}")
        del fit
        for n in sizes:
            for r in compare(X, n, args.m, args.mu_size, device=args.device):
                extra = (
                    f"; max |mu~ - mu| {r['mu_max_error']:.4f} (bound {r['eps']:.4f}), gap bound {r['gap_bound']:.4f}"
                    if r["method"] != "exact"
                    else ""
                )
                print(
                    f"n = {n:>7}  {r['method']:<9} {r['seconds']:7.1f} s  agreement {r['agreement']:.2f}  "
                    f"alpha-MMD^2 {r['alpha_mmd2']:.6f} (gap {r['gap']:+.6f}; random {r['random_alpha_mmd2']:.6f})"
                    + extra
                )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
