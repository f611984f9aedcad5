"""The machine a result was computed on, stored with every run record.

* :func:`hardware_summary` -- one line for people (the book labels every rendered result with its scale and
  hardware);
* :func:`platform_fingerprint` -- what decides whether a rerun can reproduce a record bit for bit: torch's CPU
  dispatch level, numpy's SIMD level, the BLAS library numpy uses and its core type, the library versions and
  the thread count. Two records whose fingerprints are equal must replay identically; across fingerprints
  only stated tolerances hold (:mod:`sslkit.experiments.runs.replay`).
"""

from __future__ import annotations

import os
import platform
import sys


def cpu_model() -> str:
    """The CPU model name from ``/proc/cpuinfo`` (Linux), else what :mod:`platform` knows."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"


def _usable_cores() -> int:
    """Cores this process may run on (respects container CPU affinity), else ``os.cpu_count()``."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def hardware_summary(device="auto") -> str:
    """Return e.g. ``"NVIDIA H200, torch 2.14.1"`` or ``"Intel(R) Xeon(R) ... (2 cores), torch 2.14.1"``.

    ``device`` is resolved with :func:`sslkit.device.resolve_device`; a CUDA device is described by its
    GPU name, anything else by the CPU model and the number of usable cores.
    """
    import torch

    from sslkit.device import resolve_device

    dev = resolve_device(device)
    if dev.type == "cuda":
        what = torch.cuda.get_device_name(dev)
    elif dev.type == "mps":
        what = f"Apple MPS ({cpu_model()})"
    else:
        what = f"{cpu_model()} ({_usable_cores()} cores)"
    return f"{what}, torch {torch.__version__}"


#: the fields of :func:`platform_fingerprint` that change floating-point results (the rest are informative)
FINGERPRINT_FIELDS = ("torch_cpu_capability", "numpy_simd", "blas", "blas_coretype", "torch", "numpy", "threads")


def _numpy_simd() -> str:
    """numpy's enabled SIMD extensions above its baseline (``NPY_DISABLE_CPU_FEATURES`` removes some)."""
    try:
        from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__
    except ImportError:  # pragma: no cover - numpy < 2
        return "unknown"
    on = [f for f in __cpu_dispatch__ if __cpu_features__.get(f)]
    return ",".join(on) or "baseline"


def _blas() -> str:
    """The BLAS library numpy calls, with its version and the kernel it chose (threadpoolctl), when known."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:  # pragma: no cover
        return "unknown"
    for lib in threadpool_info():
        if lib.get("user_api") == "blas":
            return f"{lib.get('internal_api')} {lib.get('version')} {lib.get('architecture') or ''}".strip()
    return "none"


def platform_fingerprint() -> dict:
    """What decides bitwise equality of a CPU result (module docstring): e.g. ``{"torch_cpu_capability":
    "AVX512", "numpy_simd": "SSE41,...,AVX512_ICL", "blas": "openblas 0.3.29 SkylakeX", "blas_coretype": "",
    "torch": "2.14.1+cu130", "numpy": "2.4.6", "threads": 1, "python": "3.11.7", "machine": "x86_64"}``.
    ``threads`` is torch's intra-op thread count in this process."""
    import numpy as np
    import torch

    return {
        "torch_cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "numpy_simd": _numpy_simd(),
        "blas": _blas(),
        "blas_coretype": os.environ.get("OPENBLAS_CORETYPE", ""),
        "torch": torch.__version__,
        "numpy": np.__version__,
        "threads": torch.get_num_threads(),
        "python": platform.python_version(),
        "machine": platform.machine() or sys.platform,
    }


def records_hardware(records, empty: str = "none") -> str:
    """The machines ``records`` ran on, for a page's label: their distinct ``hardware`` lines, sorted, joined by
    "; " (each line holds commas of its own: "AMD EPYC (2 cores), torch 2.14.1, 1 thread"); ``empty`` if none."""
    return "; ".join(sorted({r["hardware"] for r in records})) or empty
