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


def blas_libraries() -> list:
    """Every BLAS library loaded in this process (threadpoolctl), as ``(description, file path)`` sorted by
    description: ``[("openblas 0.3.30 SkylakeX", ".../scipy.libs/..."), ("openblas 0.3.31.188.0 SkylakeX",
    ".../numpy.libs/...")]``. Which libraries are loaded, and threadpoolctl's order, depend on what was imported."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:  # pragma: no cover
        return []
    found = [
        (f"{lib.get('internal_api')} {lib.get('version')} {lib.get('architecture') or ''}".strip(), lib["filepath"])
        for lib in threadpool_info()
        if lib.get("user_api") == "blas"
    ]
    return sorted(found)


def _blas() -> str:
    """The BLAS library numpy calls, with its version and the kernel it chose, when known: the one loaded from
    numpy's own folders (its wheel's ``numpy.libs``), else the first of :func:`blas_libraries` -- never the one
    threadpoolctl happens to list first (that depends on the import order: scipy's OpenBLAS before numpy's
    after ``import torch, scipy``)."""
    import numpy as np

    libs = blas_libraries()
    if not libs:
        return "none"
    numpy_dir = os.path.dirname(os.path.dirname(os.path.abspath(np.__file__)))
    own = [d for d, path in libs if os.path.abspath(path).startswith(os.path.join(numpy_dir, "numpy"))]
    return (own or [d for d, _ in libs])[0]


def platform_fingerprint() -> dict:
    """What decides bitwise equality of a CPU result (module docstring): e.g. ``{"torch_cpu_capability":
    "AVX512", "numpy_simd": "SSE41,...,AVX512_ICL", "blas": "openblas 0.3.29 SkylakeX", "blas_coretype": "",
    "torch": "2.14.1+cu130", "numpy": "2.4.6", "threads": 1, "python": "3.11.7", "machine": "x86_64",
    "blas_loaded": ["openblas 0.3.30 SkylakeX", "openblas 0.3.31.188.0 SkylakeX"]}``. ``threads`` is torch's
    intra-op thread count in this process; ``blas_loaded`` (informative) every BLAS of numpy and scipy, sorted: a
    record whose ``blas`` is one of them was made with this process's libraries (records written before ``blas``
    named numpy's own library hold whichever threadpoolctl listed first)."""
    import numpy as np
    import scipy.linalg  # noqa: F401 - loads scipy's BLAS, so blas_loaded does not depend on what ran before
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
        "blas_loaded": [d for d, _ in blas_libraries()],
    }


def records_hardware(records, empty: str = "none") -> str:
    """The machines ``records`` ran on, for a page's label: their distinct ``hardware`` lines, sorted, joined by
    "; " (each line holds commas of its own: "AMD EPYC (2 cores), torch 2.14.1, 1 thread"); ``empty`` if none."""
    return "; ".join(sorted({r["hardware"] for r in records})) or empty
