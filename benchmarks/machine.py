"""What the benchmarks measure about the machine itself: its achieved GEMM rate, its torch CPU dispatch,
and log-log slopes of cost curves. Imported by the scripts next to it (``python benchmarks/<script>.py``
puts this folder on ``sys.path``).

The compute floor of a computation is its multiply-add count at the rate this machine's BLAS reaches on a
large float32 matrix product in the same run and the same thread count (``gemm_rate``): no exact method
can do the same multiply-adds faster on this machine, so ``floor / measured`` is the fraction of the floor
reached (1 = at the floor). It is given per wall-clock second and per CPU second (the work of the
process's threads, which load from other processes barely changes).
"""

from __future__ import annotations

import math
import os
import time

import torch


def cpu_capability() -> str:
    """torch's CPU kernel dispatch (``ATEN_CPU_CAPABILITY`` caps it) and the thread count, e.g. ``"AVX2, 2
    threads"``; BLAS (MKL / OpenBLAS) matrix products follow their own dispatch, not this one."""
    cap = os.environ.get("ATEN_CPU_CAPABILITY")
    forced = f" (ATEN_CPU_CAPABILITY={cap})" if cap else ""
    return f"torch CPU capability {torch.backends.cpu.get_cpu_capability()}{forced}, {torch.get_num_threads()} threads"


def gemm_rate(m: int = 2048, k: int = 514, n: int = 2048, device="cpu", seconds: float = 1.0) -> tuple[float, float]:
    """``(per wall second, per CPU second)``: FLOP (``2 m k n`` per product) of a float32 ``(m x k) @ (k x n)``
    product per second of wall-clock time and per second of this process's CPU time (all threads), each the
    best of repeated timings over about ``seconds``. On a shared machine the wall-clock rate drops with the
    load; the CPU-time rate (the work one core-second does) hardly does, so floors are given in both."""
    a = torch.randn(m, k, device=device)
    b = torch.randn(k, n, device=device)
    sync = torch.cuda.synchronize if torch.device(device).type == "cuda" else (lambda: None)
    a @ b
    sync()
    wall = cpu = math.inf
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        t0, c0 = time.perf_counter(), time.process_time()
        a @ b
        sync()
        wall, cpu = min(wall, time.perf_counter() - t0), min(cpu, max(time.process_time() - c0, 1e-6))
    flops = 2.0 * m * k * n
    return flops / wall, flops / cpu


def pooled_gemm_rate(m: int = 2048, k: int = 514, n: int = 2048, seconds: float = 1.0) -> float:
    """FLOP per wall-clock second that float32 ``(m x k) @ (k x n)`` products sustain when they run back to back
    for about ``seconds``, each on one torch thread, torch's thread count of them at once through
    :func:`sslkit.device.task_pool` -- the way GKHR's mu runs its tiles. Beside :func:`gemm_rate` (the best single
    product, which a busy or throttled machine reaches only in its good moments) it tells how much of a gap to
    the floor is the machine's sustained rate and how much the computation's own overhead."""
    a, b = torch.randn(m, k), torch.randn(k, n)
    return 2.0 * m * k * n * _pooled_calls(lambda out: torch.mm(a, b, out=out), (m, n), seconds)


def pooled_exp2_rate(m: int = 2048, n: int = 2048, seconds: float = 0.5) -> float:
    """Values per wall-clock second that ``clamp_(max=0).exp2_()`` of float32 ``m x n`` tiles in place (mu's
    exponentials, :func:`sslkit.select.kernel.symmetric_row_sums`) sustain on one torch thread each, torch's thread
    count at once, as :func:`pooled_gemm_rate` (vectorised ``exp2`` takes the same time whatever the values)."""
    return m * n * _pooled_calls(lambda out: out.clamp_(max=0.0).exp2_(), (m, n), seconds)


def _pooled_calls(op, shape, seconds: float) -> float:
    """Calls of ``op(out)`` per wall-clock second (``out`` a float32 buffer of ``shape`` per thread), run back to
    back for about ``seconds`` on torch's thread count of pool threads, each on one torch thread."""
    import threading

    from sslkit.device import task_pool

    local = threading.local()

    def call(reps):
        if not hasattr(local, "out"):
            local.out = torch.full(shape, -1.0)
        for _ in range(reps):
            op(local.out)

    workers = torch.get_num_threads()
    call(1)  # warm-up (this thread's buffer), then the time of one call on all threads
    t0 = time.perf_counter()
    call(2)
    one = max((time.perf_counter() - t0) / 2, 1e-6)
    reps = max(1, int(seconds / one / workers))  # calls per worker: one task each, no per-call dispatch
    with task_pool("cpu", workers) as pmap:
        t0 = time.perf_counter()
        for _ in pmap(call, [reps] * workers):
            pass
        wall = time.perf_counter() - t0
    return workers * reps / wall


def loglog_slope(xs, ys) -> float:
    """Least-squares slope of ``log y`` against ``log x`` (the exponent ``a`` of ``y ~ x^a``)."""
    lx = [math.log(x) for x in xs]
    ly = [math.log(y) for y in ys]
    mx, my = sum(lx) / len(lx), sum(ly) / len(ly)
    return sum((a - mx) * (b - my) for a, b in zip(lx, ly)) / sum((a - mx) ** 2 for a in lx)
