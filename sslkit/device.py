"""Device resolution shared by every layer (``"auto"`` means CUDA, then Apple MPS, then CPU),
:func:`single_threaded` for latency-bound CPU loops and :func:`task_pool` for independent pieces of CPU work."""

from __future__ import annotations

import contextlib
import numbers
from concurrent.futures import ThreadPoolExecutor

import torch

__all__ = [
    "DEVICE_TYPES",
    "SMALL_STEP_FLOPS",
    "check_device",
    "resolve_device",
    "single_threaded",
    "task_pool",
    "training_threads",
]

#: the device types sslkit runs on (a CPU, an NVIDIA GPU, Apple's MPS)
DEVICE_TYPES = ("cpu", "cuda", "mps")


def check_device(device):
    """``device`` itself if it names a device sslkit can run on ("auto", None, "cpu", "cuda", "cuda:N", "mps" or such a
    :class:`torch.device`), whether or not it is available here (:func:`resolve_device` checks that when it is
    used); a clear ``ValueError`` now otherwise (e.g. ``"gpu"``)."""
    if device is None or (isinstance(device, str) and device == "auto"):
        return device
    if not isinstance(device, (str, torch.device)):
        raise TypeError(f"device must be 'auto', a device name or a torch.device, got {type(device).__name__}")
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError):
        dev = None
    if dev is None or dev.type not in DEVICE_TYPES:
        raise ValueError(f"unknown device {device!r}: use 'auto', 'cpu', 'cuda', 'cuda:N' or 'mps'")
    return device


def resolve_device(device: str | torch.device | None = "auto") -> torch.device:
    """Return a :class:`torch.device` for ``device``.

    ``"auto"`` (or ``None``) picks ``cuda`` when available, then ``mps``, then ``cpu``.
    Any other string must name a device torch knows and that is available here.
    """
    if device is None or (isinstance(device, str) and device == "auto"):
        if torch.cuda.is_available():
            return torch.device("cuda")
        mps = getattr(torch.backends, "mps", None)
        if mps is not None and mps.is_available():
            return torch.device("mps")
        return torch.device("cpu")
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError) as exc:
        raise ValueError(f"unknown device {device!r}: use 'auto', 'cpu', 'cuda', 'cuda:N' or 'mps'") from exc
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise RuntimeError(f"device {device!r} was requested but CUDA is not available on this machine")
    if dev.type == "mps":
        mps = getattr(torch.backends, "mps", None)
        if mps is None or not mps.is_available():
            raise RuntimeError(f"device {device!r} was requested but Apple's MPS is not available on this machine")
    return dev


#: ``Trainer(threads="auto")``: a step whose forward pass costs fewer multiply-add FLOPs than this (the model's
#: per-sample count from :class:`torch.utils.flop_counter.FlopCounterMode` times the labeled plus unlabeled batch)
#: trains on one CPU thread. Measured on a 2-core Xeon (2026-12-05): a second thread makes such steps at most 1.13x
#: faster on a quiet machine (an MLP [256, 256] at batch 64 or 320: 10.8 and 54 MFLOP), while beside one busy
#: process it makes them about 7x slower (``benchmarks/contention.py``); at 192 MFLOP and above it gains 1.4-1.6x.
SMALL_STEP_FLOPS = 1e8


def check_threads(threads):
    """A training loop's ``threads``: "auto", None or a positive int (returned as an int); else ``ValueError``."""
    if threads is None or threads == "auto":
        return threads
    if isinstance(threads, numbers.Integral) and not isinstance(threads, bool) and threads >= 1:
        return int(threads)
    raise ValueError(f"threads must be 'auto', None or a positive int, got {threads!r}")


def training_threads(threads, device, step_flops: float):
    """``(context, count)``: the context a training loop runs under and torch's CPU thread count inside it.

    ``threads`` (:func:`check_threads`): None, or a device that is not the CPU, leaves torch's setting; an int sets
    it; "auto" is one thread when a step costs under :data:`SMALL_STEP_FLOPS` (``step_flops``), else torch's
    setting. The thread count can change the last bits of a trained model.
    """
    count = torch.get_num_threads()
    if threads is None or torch.device(device).type != "cpu":
        return contextlib.nullcontext(), count
    if threads == "auto":
        threads = 1 if step_flops < SMALL_STEP_FLOPS else count
    return _num_threads(threads), threads


@contextlib.contextmanager
def _num_threads(n: int):
    """torch's CPU threads set to ``n`` for the block, restored after (even on an error)."""
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


@contextlib.contextmanager
def single_threaded(device: str | torch.device | None = "cpu"):
    """Run the block with one torch CPU thread (``torch.set_num_threads(1)``), the count restored after.

    For latency-bound loops of many small operations (GKHR's herding loop, Retrieve's greedy): their parallel
    regions are too short to gain from a second thread, and when another process holds a core each of them waits
    for a worker thread that is not running (beside one busy process on a loaded 2-core machine: GKHR's loop 40 s with
    2 threads, 3.2 s with one; Retrieve's greedy 77 s and 4.4 s; ``benchmarks/contention.py``). The
    thread count is process-wide, so other Python threads of the process run single-threaded meanwhile. On a
    ``device`` that is not the CPU (its work is not done by CPU threads) and with one thread already, it does
    nothing.
    """
    if torch.get_num_threads() == 1 or (device is not None and torch.device(device).type != "cpu"):
        yield
        return
    with _num_threads(1):
        yield


@contextlib.contextmanager
def task_pool(device: str | torch.device | None, tasks: int):
    """The ``map`` to run independent pieces of CPU work with, each piece on one torch thread (:func:`single_threaded`
    for the block): a ``concurrent.futures.ThreadPoolExecutor``'s, with torch's thread count of Python threads, or
    the builtin ``map`` where a pool would not help (one thread, fewer than two ``tasks``, not the CPU).

    For the tiles of mu and the chunks of a pass over the features: each piece is the computation one thread does,
    so the result does not depend on the thread count; the workers take pieces as they finish, so one that another
    process holds up takes fewer instead of making the others wait at a barrier after every operation
    (``benchmarks/contention.py``). Results come in the order of the items; a piece's error is raised.
    """
    workers = torch.get_num_threads()
    with single_threaded(device):
        if workers < 2 or tasks < 2 or (device is not None and torch.device(device).type != "cpu"):
            yield map
            return
        with ThreadPoolExecutor(workers) as pool:
            yield pool.map
