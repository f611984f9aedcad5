"""Peak memory of a run (sslkit.experiments.runs.memory) and paper C's App. I claim that reads it."""

from __future__ import annotations

import numpy as np
import pytest

from sslkit.experiments.paper_c.claims_cost import PEAK_MEMORY, c_memory_not_reduced
from sslkit.experiments.report.ledger import FAILS, HOLDS, NOT_RUN
from sslkit.experiments.runs import memory
from sslkit.experiments.runs.replay import comparable

pytestmark = pytest.mark.skipif(not memory.STATUS.exists(), reason="resident-set counters need Linux's /proc")


def _allocate(mb: int) -> float:
    """Touch ``mb`` megabytes (a module-level function: the spawned process imports it)."""
    return float(np.ones(mb * 2**20 // 8).sum())


def test_a_fresh_process_measures_the_memory_its_call_touched():
    out, peak, baseline = memory.in_fresh_process(_allocate, mb=200)
    assert out == 200 * 2**20 // 8
    assert 190 <= peak <= 260, peak  # the 200 MB array, not the process (torch alone is hundreds of MB)
    assert baseline > 50
    _, small, _ = memory.in_fresh_process(_allocate, mb=1)
    assert small < 40, small


def test_an_error_in_the_measured_process_is_raised_here():
    with pytest.raises(ValueError, match="negative"):
        memory.in_fresh_process(_allocate, mb=-1)


def test_no_counters_is_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.setattr(memory, "STATUS", tmp_path / "status")
    with pytest.raises(memory.MemoryUnavailableError, match="needs Linux"):
        memory.peak_rss_mb()
    with pytest.raises(memory.MemoryUnavailableError):
        memory.in_fresh_process(_allocate, mb=1)


def test_reset_brings_the_peak_down_to_the_current_resident_set():
    x = np.ones(100 * 2**20 // 8)
    del x
    assert memory.peak_rss_mb() >= memory.rss_mb() + 50
    memory.reset_peak_rss()
    assert memory.peak_rss_mb() <= memory.rss_mb() + 5


def test_memory_is_measured_not_replayed():
    """A replay compares a run's results, not its measurements: megabytes differ from run to run."""
    assert comparable({"test_acc": 90.0, PEAK_MEMORY: 120.5, "baseline_memory_mb": 500.0}) == {"test_acc": 90.0}


def _records(full, retrieve):
    out = []
    for seed, (f, r) in enumerate(zip(full, retrieve)):
        out.append(
            {
                "config": {"protocol": "cpu", "algorithm": "vat", "method": "full", "fraction": 1.0},
                "seed": seed,
                "metrics": {PEAK_MEMORY: f},
            }
        )
        out.append(
            {
                "config": {"protocol": "cpu", "algorithm": "vat", "method": "retrieve", "fraction": 0.1},
                "seed": seed,
                "metrics": {PEAK_MEMORY: r},
            }
        )
    return out


def test_the_memory_claim_holds_fails_and_is_not_run():
    assert c_memory_not_reduced(_records([100, 110, 95], [104, 113, 99]))[0] == HOLDS  # a little higher, every seed
    assert c_memory_not_reduced(_records([100, 110, 95], [80, 91, 74]))[0] == FAILS  # Retrieve saves memory
    assert c_memory_not_reduced([{**r, "metrics": {}} for r in _records([1, 2], [3, 4])])[0] == NOT_RUN
