"""Cost curves: how GKHR, Retrieve's greedy and one Retrieve selection inside training grow with their sizes.

Each curve times one computation at a few sizes (doubling) and prints the log-log slope (the exponent ``a``
of ``time ~ size^a``, least squares over the points; the last segment's slope too, the closest to the
asymptote) beside what the papers claim:

* GKHR (paper B Algorithm 1; synthetic Gaussian float32 features, d = 512, all torch threads) against ``n``
  (m fixed) and against ``m`` (n fixed), for mu (line 1), the greedy loop (lines 3-6) and the whole fit.
  Paper B §5 ("Computational complexity"): "the computational complexity of GKHR is O(mn), since in each
  iteration, the steps in lines 4 and 5 ... require O(n) computations" (Table 5 repeats O(mn)). That is the
  loop's cost (slope 1 in n, 1 in m; ``d`` multiply-adds per kernel value); line 1's ``mu`` needs all
  ``n^2 / 2`` kernel values, slope 2 in n and 0 in m, which the claim leaves out.
* Retrieve's stochastic greedy (paper C Algorithm 2; ``benchmarks/c_retrieve_greedy.py``'s synthetic
  WRN-28-2 last-layer gradients, d = 1290, n_L = 4 000, one thread) against ``N`` (k fixed) and ``k`` (N
  fixed). Paper C §3.2: stochastic greedy reaches its guarantee "in O(m log(1/eps)) iterations where m is
  the unlabeled set size" (gain evaluations, ``(N/k) log(1/eps)`` per pick), and §3.3: the labeled gradient
  "needs to be computed only once every greedy iteration". Together ``O(N log(1/eps) d + k n_L d)``: slope
  in N between 0 and 1 (1 once the evaluations dominate; at these sizes the ``k`` labeled gradients do, so
  near 0), slope 1 in k.
* One Retrieve selection inside training (``sslkit.callbacks.CoresetSelection``, VAT, an MLP on synthetic
  features, one thread, the coreset k = 10 % of N, after one warm epoch) against the unlabeled pool size N:
  the per-sample last-layer gradients over the pool (one VAT loss per sample) plus the greedy. Paper C
  states no per-selection complexity beyond the greedy's; its parts predict slope 1 (the gradients are
  linear in N, and so is the greedy at k = N / 10).

Times are wall-clock seconds and process CPU seconds (all threads; the greedy inside a selection is timed
by the callback, wall-clock only); on a shared machine the CPU time is the steadier measure of the work, so
both slopes are printed. ``--quick`` runs smaller sizes (about a minute on 2 cores); the default a few
minutes. Usage: ``python benchmarks/cost_curves.py [--quick] [--only gkhr|greedy|training]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # as benchmarks/b_gkhr_speed.py (GKHR's many small steps)

import numpy as np  # noqa: E402
import torch  # noqa: E402
from c_retrieve_greedy import make_inputs  # noqa: E402
from machine import cpu_capability, loglog_slope  # noqa: E402

from sslkit.algorithms import VAT  # noqa: E402
from sslkit.callbacks import CoresetSelection  # noqa: E402
from sslkit.coreset import Retrieve  # noqa: E402
from sslkit.engine import Trainer  # noqa: E402
from sslkit.experiments import hardware_summary  # noqa: E402
from sslkit.models import MLP  # noqa: E402
from sslkit.select import GKHR, median_bandwidth  # noqa: E402

SIZES = {
    "quick": {
        "gkhr_n": [2500, 5000, 10000],
        "gkhr_m": [50, 100, 200],
        "gkhr_fixed": (5000, 100),
        "gkhr_d": 256,
        "greedy_N": [5000, 10000, 20000],
        "greedy_k": [250, 500, 1000],
        "greedy_fixed": (10000, 500),
        "n_labeled": 1000,
        "train_N": [2500, 5000, 10000],
    },
    "default": {
        "gkhr_n": [5000, 10000, 20000, 40000],
        "gkhr_m": [100, 200, 400, 800],
        "gkhr_fixed": (20000, 200),
        "gkhr_d": 512,
        "greedy_N": [12500, 25000, 50000],
        "greedy_k": [625, 1250, 2500, 5000],
        "greedy_fixed": (25000, 2500),
        "n_labeled": 4000,
        "train_N": [5000, 10000, 20000, 40000],
    },
}


def timed(fn):
    t0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - t0, time.process_time() - c0


def collect(run, sizes):
    """``{part: [(wall, cpu) per size]}`` from ``run(size) -> {part: (wall, cpu)}``."""
    rows = {}
    for size in sizes:
        for part, times in run(size).items():
            rows.setdefault(part, []).append(times)
    return rows


def report(name, sizes, rows, claim):
    """rows: {part: [(wall, cpu or None) per size]}; prints one table and the slopes of each part."""
    print(f"\n{name}")
    print("  " + "size".rjust(8) + "".join(f"{p + ' wall / CPU s':>28}" for p in rows))
    for i, s in enumerate(sizes):
        cells = [(w, "-" if c is None else f"{c:.2f}") for w, c in (rows[p][i] for p in rows)]
        print("  " + f"{s:>8}" + "".join(f"{w:>16.2f} / {c:<9}" for w, c in cells))
    for p, v in rows.items():
        line = []
        for what, ys in (("wall", [w for w, _ in v]), ("CPU", [c for _, c in v])):
            if None not in ys:
                line.append(
                    f"{loglog_slope(sizes, ys):.2f} {what} (last segment {loglog_slope(sizes[-2:], ys[-2:]):.2f})"
                )
        print(f"  slope of {p}: " + ", ".join(line))
    print(f"  papers: {claim}")


def gkhr_curves(cfg):
    d = cfg["gkhr_d"]
    n_fixed, m_fixed = cfg["gkhr_fixed"]
    X = np.random.default_rng(0).standard_normal((max(max(cfg["gkhr_n"]), n_fixed), d)).astype(np.float32)
    GKHR(10, device="cpu").fit(X[:1000])  # warm-up

    def run(n, m):
        sigma = median_bandwidth(X[:n], seed=0, device="cpu")
        sel, wall, cpu = timed(lambda: GKHR(m, bandwidth=sigma, device="cpu").fit(X[:n]))
        t = sel.timings_
        return {"mu": (t["mu"], t["mu_cpu"]), "loop": (t["loop"], t["loop_cpu"]), "fit": (wall, cpu)}

    for vary, sizes in (("n", cfg["gkhr_n"]), ("m", cfg["gkhr_m"])):
        rows = collect(lambda s, vary=vary: run(s, m_fixed) if vary == "n" else run(n_fixed, s), sizes)
        fixed = f"m = {m_fixed}" if vary == "n" else f"n = {n_fixed}"
        report(
            f"GKHR against {vary} ({fixed}, d = {d}, {torch.get_num_threads()} threads)",
            sizes,
            rows,
            "paper B §5: O(mn) (the loop: slope 1 in n and in m); mu (line 1, left out of the claim): "
            "n^2 d / 2 multiply-adds, slope 2 in n, 0 in m",
        )


def greedy_curves(cfg):
    n_l = cfg["n_labeled"]
    N_fixed, k_fixed = cfg["greedy_fixed"]
    lin, G, h_l, y = make_inputs(max(max(cfg["greedy_N"]), N_fixed), n_l, 128)
    with torch.no_grad():
        Z = lin(h_l)
    Retrieve(50, seed=0).fit(G[:1000], Z, y, h_l)  # warm-up

    def run(N, k):
        sel, wall, cpu = timed(lambda: Retrieve(k, lr=0.03, seed=0).fit(G[:N], Z, y, h_l))
        return {"greedy": (sel.timings_["loop"], None), "fit": (wall, cpu)}

    for vary, sizes in (("N", cfg["greedy_N"]), ("k", cfg["greedy_k"])):
        rows = collect(lambda s, vary=vary: run(s, k_fixed) if vary == "N" else run(N_fixed, s), sizes)
        fixed = f"k = {k_fixed}" if vary == "N" else f"N = {N_fixed}"
        report(
            f"Retrieve's stochastic greedy against {vary} ({fixed}, d = {G.shape[1]}, n_L = {n_l}, eps = 0.01, "
            f"{torch.get_num_threads()} thread)",
            sizes,
            rows,
            "paper C §3.2-3.3: O(N log(1/eps)) gain evaluations of d + one labeled gradient (n_L d) per pick: "
            "slope in N between 0 and 1 (near 0 while the k gradients dominate), 1 in k",
        )


def training_selection_seconds(N, n_l=500, dim=32, classes=10, seed=0):
    """One Retrieve selection (gradients + greedy) after one warm epoch of VAT on an MLP; (wall, CPU) pairs."""
    rng = np.random.default_rng(seed)
    means = rng.normal(size=(classes, dim)).astype(np.float32) * 2.0
    labels = rng.integers(classes, size=N + n_l)
    X = (means[labels] + rng.normal(size=(N + n_l, dim))).astype(np.float32)
    cb = CoresetSelection("retrieve", N // 10, every=5, warm_epochs=1, gradients="bias_weight", seed=seed)
    torch.manual_seed(seed)
    Trainer(
        MLP(dim, classes, hidden=(128,)),
        VAT(1.0),
        epochs=2,
        iterations_per_epoch="unlabeled",
        batch_size=64,
        unlabeled_batch_size=256,
        hooks=cb.hooks(),
        progress=False,
        seed=seed,
    ).fit(X[:n_l], labels[:n_l], X[n_l:])
    s = cb.selections_[-1]
    return {"selection": (s["seconds"], s["cpu_seconds"]), "greedy": (s["strategy_seconds"], None)}


def training_curves(cfg):
    sizes = cfg["train_N"]
    training_selection_seconds(1000)  # warm-up
    rows = collect(training_selection_seconds, sizes)
    report(
        "one Retrieve selection inside training (CoresetSelection, VAT, MLP 32-128-10, n_L = 500, k = N / 10, "
        f"{torch.get_num_threads()} thread) against N",
        sizes,
        rows,
        "paper C: no per-selection claim beyond the greedy's; per-sample gradients O(N) and the greedy at "
        "k = N / 10 predict slope 1",
    )


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", choices=("gkhr", "greedy", "training"), default=None)
    args = ap.parse_args(argv)
    cfg = SIZES["quick" if args.quick else "default"]
    threads = torch.get_num_threads()
    print(f"hardware: {hardware_summary('cpu')}; {cpu_capability()}; load average {os.getloadavg()[0]:.1f}")
    if args.only in (None, "gkhr"):
        gkhr_curves(cfg)
    torch.set_num_threads(1)  # Retrieve's targets are for one thread
    if args.only in (None, "greedy"):
        greedy_curves(cfg)
    if args.only in (None, "training"):
        training_curves(cfg)
    torch.set_num_threads(threads)
    return 0


if __name__ == "__main__":
    sys.exit(main())
