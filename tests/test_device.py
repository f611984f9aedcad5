"""sslkit.device: device names checked early ("gpu" refused at once, "cuda" accepted on a machine without one until it
is used), "auto" resolved CUDA > MPS > CPU, unavailable devices refused with a clear error, and the single-threaded
block that restores the thread count; the task pool whose pieces run on one torch thread each."""

import pytest
import torch

from sslkit.device import DEVICE_TYPES, check_device, resolve_device, single_threaded, task_pool


@pytest.mark.parametrize("device", ["auto", None, "cpu", "cuda", "cuda:1", "mps", torch.device("cpu")])
def test_check_device_accepts_every_device_sslkit_runs_on(device):
    assert check_device(device) is device


@pytest.mark.parametrize(
    "device,exc", [("gpu", ValueError), ("xla", ValueError), ("cuda:x", ValueError), (0.5, TypeError)]
)
def test_check_device_refuses_the_others(device, exc):
    with pytest.raises(exc, match="device"):
        check_device(device)


def test_auto_is_cuda_then_mps_then_cpu(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert resolve_device("auto") == torch.device("cuda") and resolve_device(None) == torch.device("cuda")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: True)
    assert resolve_device() == torch.device("mps")
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: False)
    assert resolve_device() == torch.device("cpu")
    assert {d.type for d in (resolve_device("cpu"), torch.device("cpu"))} <= set(DEVICE_TYPES)


def test_unavailable_and_unknown_devices_are_refused(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: False)
    with pytest.raises(RuntimeError, match="CUDA is not available"):
        resolve_device("cuda:0")
    with pytest.raises(RuntimeError, match="MPS is not available"):
        resolve_device("mps")
    with pytest.raises(ValueError, match="unknown device 'gpu'"):
        resolve_device("gpu")


def test_single_threaded_sets_one_thread_and_restores_the_count_even_on_error():
    old = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        with single_threaded():
            assert torch.get_num_threads() == 1
        assert torch.get_num_threads() == 2
        with pytest.raises(KeyError), single_threaded("cpu"):
            raise KeyError("boom")
        assert torch.get_num_threads() == 2
        with single_threaded("cuda"):  # a GPU's work is not done by CPU threads: nothing changes
            assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(old)


def test_task_pool_runs_pieces_on_one_torch_thread_and_only_where_it_helps():
    old = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        with task_pool("cpu", 5) as pmap:
            assert pmap is not map and pmap.__self__._max_workers == 2
            assert list(pmap(lambda _: torch.get_num_threads(), range(4))) == [1, 1, 1, 1]
        assert torch.get_num_threads() == 2
        with pytest.raises(KeyError), task_pool("cpu", 5) as pmap:
            list(pmap(lambda _: {}["boom"], range(3)))  # a piece's error reaches the caller
        assert torch.get_num_threads() == 2
        with task_pool("cpu", 1) as pmap:  # one piece: no pool, but still one torch thread (the same bits)
            assert pmap is map and torch.get_num_threads() == 1
        for device in ("cuda", "meta"):  # not the CPU: nothing changes
            with task_pool(device, 5) as pmap:
                assert pmap is map and torch.get_num_threads() == 2
        torch.set_num_threads(1)
        with task_pool("cpu", 5) as pmap:
            assert pmap is map
    finally:
        torch.set_num_threads(old)


def test_kernel_sums_by_task_pool_equal_one_threads_bit_for_bit():
    """mu's bands and the cross sums' row blocks computed by the pool (each on one torch thread) are the one-thread
    result exactly: the pieces are the same computations, added in one fixed order."""
    from sslkit.select.kernel import cross_row_sums, lifted, symmetric_row_sums

    Z = lifted(torch.randn(700, 12, generator=torch.Generator().manual_seed(0)), 4.0)
    old = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        one = symmetric_row_sums(Z, 64), cross_row_sums(Z, Z[:300], 64)
        torch.set_num_threads(3)
        pooled = symmetric_row_sums(Z, 64), cross_row_sums(Z, Z[:300], 64)
    finally:
        torch.set_num_threads(old)
    for a, b in zip(one, pooled):
        assert torch.equal(a, b)
