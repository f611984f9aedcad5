"""Helpers of the oracle tests (issue 19): compare a greedy selection with an oracle without failing on
near-ties (:func:`check_greedy`), and import an oracle package without side effects (:func:`import_quietly`).

A greedy selection takes, at each step, the candidate of the largest gain. Where two candidates' gains are
equal up to rounding (a near-tie), which one is taken depends on the last bits of the arithmetic -- the CPU
dispatch level, the BLAS kernel, the order of a sum -- and on the implementation's tie rule: two correct
implementations, or one implementation on two CPUs, may then take different ones, and the rest of the two
selections may differ from there on. That is not a bug, so an oracle test must not fail on it; but it must
still fail on a genuinely wrong selection. :func:`check_greedy` therefore checks

* at every step, with the oracle's own gains along the selection's own prefix (``gain_fn``): the reported
  gain is the oracle's gain of that pick (``rtol``), and the pick is a greedy pick -- its gain is within
  ``tie_tol`` (relative to the step's largest gain) of the best candidate's;
* against a reference order (another implementation, a brute force): the same pick, index for index, at every
  step up to the first near-tie -- a step whose best two candidates' gains are within ``tie_tol``; from there on
  only the greedy property above (the two may have taken different paths).

:func:`import_quietly` imports an oracle package (CORDS) without letting it change numpy's floating-point error
state for the whole test process.
"""

from __future__ import annotations

import numpy as np
import pytest

#: numpy's floating-point error state at start-up (``np.geterr()`` of a fresh process): what every test sees.
NUMPY_DEFAULT_ERRSTATE = {"divide": "warn", "over": "warn", "under": "ignore", "invalid": "warn"}


def import_quietly(module: str):
    """``pytest.importorskip(module)`` with numpy's error state restored afterwards.

    CORDS 0.0.4's helpers (``optimalWeights``, ``omp_solvers``) call ``np.seterr(all="raise")`` at import, which
    would turn every later underflow in any test of the process into a ``FloatingPointError``.
    """
    with np.errstate(**np.geterr()):  # restores the state on exit, also when the import fails or skips
        return pytest.importorskip(module)


def check_greedy(order, gains, gain_fn, *, ref_order=None, ref_gains=None, sizes=None, rtol=1e-9, tie_tol=1e-9):
    """Assert that ``order`` (with its reported ``gains``) is a greedy selection under ``gain_fn`` and equals
    ``ref_order`` (and ``ref_gains``) up to the first near-tie (module docstring). Returns that step (the number
    of picks compared index for index; ``len(order)`` when there is no near-tie).

    ``gain_fn(prefix)``: the float64 gains of every candidate after the picks ``prefix`` (a list); picked
    candidates are excluded here, whatever it returns for them. ``sizes``: picks per round (default one per
    round): a round takes its picks by the gains at the round's start, each among the candidates not yet taken.
    ``gains=None``: the gains are not reported (only the order is checked).
    """
    order = [int(i) for i in np.asarray(order).ravel()]
    sizes = [1] * len(order) if sizes is None else list(sizes)
    assert sum(sizes) == len(order), f"sizes {sizes} do not add up to the {len(order)} picks"
    tied_at, t = None, 0
    for size in sizes:
        g = np.array(gain_fn(order[:t]), dtype=np.float64)
        for _ in range(size):
            g[order[:t]] = -np.inf
            best = np.sort(g)[::-1][:2]
            tol = tie_tol * max(1.0, float(np.abs(g[np.isfinite(g)]).max()))
            pick = order[t]
            assert np.isfinite(g[pick]), f"pick {t}: candidate {pick} was already taken"
            assert g[pick] >= best[0] - tol, (
                f"pick {t}: candidate {pick} has gain {g[pick]!r}, but the best gain is {best[0]!r} "
                f"(candidate {int(np.argmax(g))}): not a greedy pick"
            )
            if gains is not None:
                reported = float(np.asarray(gains).ravel()[t])
                assert reported == pytest.approx(g[pick], rel=rtol, abs=tol), f"pick {t}: reported gain"
            if tied_at is None and len(best) > 1 and best[0] - best[1] <= tol:
                tied_at = t  # a near-tie: the reference may take the other candidate from here on
            if ref_order is not None and (tied_at is None or t < tied_at):
                assert pick == int(ref_order[t]), (
                    f"pick {t}: {pick}, the reference took {int(ref_order[t])}, and the gains are separated "
                    f"(best two: {best[0]!r}, {best[1]!r})"
                )
                if ref_gains is not None:
                    assert float(ref_gains[t]) == pytest.approx(g[pick], rel=rtol, abs=tol), f"pick {t}: ref gain"
            t += 1
    return len(order) if tied_at is None else tied_at
