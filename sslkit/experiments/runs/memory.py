"""Peak memory of one run, for paper C's App. I ("it does not reduce the memory requirement").

On a GPU the paper's quantity is the device's peak allocation (``torch.cuda.max_memory_allocated``). On a CPU
it is the process's peak resident set (Linux: ``VmHWM`` of ``/proc/self/status``). The resident set also holds
what earlier work left behind (the allocator keeps freed memory), so :func:`in_fresh_process` runs a function
in a new process and reports the peak above that process's resident set just before the call (torch imported,
nothing else done): two runs measured so pay the same one-time costs, whatever ran before them.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import re
import sys
from pathlib import Path

__all__ = ["MemoryUnavailableError", "rss_mb", "peak_rss_mb", "reset_peak_rss", "in_fresh_process"]

STATUS = Path("/proc/self/status")


class MemoryUnavailableError(RuntimeError):
    """This platform exposes no resident-set counters (Linux's /proc is needed on a CPU)."""


def _status(field: str) -> float:
    try:
        text = STATUS.read_text()
    except OSError as err:
        raise MemoryUnavailableError(f"peak memory on a CPU needs Linux's {STATUS} ({err})") from err
    found = re.search(rf"^{field}:\s+(\d+) kB", text, flags=re.M)
    if found is None:
        raise MemoryUnavailableError(f"{STATUS} has no {field} line")
    return int(found.group(1)) / 1024


def rss_mb() -> float:
    """The process's resident set now, in MB (2**20 bytes)."""
    return _status("VmRSS")


def peak_rss_mb() -> float:
    """The process's peak resident set since it started or since :func:`reset_peak_rss`, in MB."""
    return _status("VmHWM")


def reset_peak_rss() -> None:
    """Return freed heap memory to the system (glibc's ``malloc_trim``) and reset the peak to the current
    resident set (writing 5 to ``/proc/self/clear_refs``)."""
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL("libc.so.6").malloc_trim(0)
        except (OSError, AttributeError):  # another C library: nothing to trim
            pass
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError as err:
        raise MemoryUnavailableError(f"cannot reset the peak resident set ({err})") from err


def _child(conn, fn, kwargs, threads):
    import torch

    try:
        torch.set_num_threads(threads)
        reset_peak_rss()
        before = rss_mb()
        out = fn(**kwargs)
        peak = peak_rss_mb() - before
        if torch.cuda.is_initialized():  # the run used a GPU ("auto" too): the paper's quantity, its peak allocation
            peak = torch.cuda.max_memory_allocated() / 2**20
        conn.send((out, round(peak, 3), round(before, 3)))
    except BaseException as err:  # the parent re-raises it with its message
        conn.send(err)
    finally:
        conn.close()


def in_fresh_process(fn, *, threads: int | None = None, **kwargs) -> tuple:
    """``(fn(**kwargs), peak_mb, baseline_mb)`` with ``fn`` run in a new (spawned) process with ``threads`` torch
    threads (default: this process's): ``peak_mb`` is its peak resident set above ``baseline_mb``, the resident
    set just before the call (where ``fn`` used CUDA: the device's peak allocation). ``fn`` must be importable (a
    module-level function); an exception in it is raised here."""
    import torch

    peak_rss_mb()  # fail early, here, where there are no counters
    threads = torch.get_num_threads() if threads is None else threads
    ctx = multiprocessing.get_context("spawn")
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(child, fn, kwargs, threads))
    proc.start()
    child.close()
    try:
        result = parent.recv()
    except EOFError:
        proc.join()
        raise RuntimeError(f"the measured process died (exit code {proc.exitcode}) before it reported") from None
    finally:  # interrupted here (Ctrl-C, a runner's timeout): the measured process does not outlive us
        if proc.is_alive() and proc.exitcode is None:
            proc.join(timeout=5)
            if proc.is_alive():
                proc.terminate()
    proc.join()
    if isinstance(result, BaseException):
        raise result
    return result
