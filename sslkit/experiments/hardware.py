"""One-line description of the machine a result was computed on (stored with every run record).

The book labels every rendered result with its scale and hardware, so each record
written by :func:`sslkit.experiments.runner.run_grid` carries this string.
"""

from __future__ import annotations

import os
import platform


def _cpu_model() -> str:
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
        what = f"Apple MPS ({_cpu_model()})"
    else:
        what = f"{_cpu_model()} ({_usable_cores()} cores)"
    return f"{what}, torch {torch.__version__}"
