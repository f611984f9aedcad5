"""What the robust grid's records hold (:mod:`.robust`): a coreset's composition (recorded by every run) and one
row per record for the tables (:func:`robust_rows`); :mod:`.robust` re-exports both."""

from __future__ import annotations

import numpy as np

from .divergence import is_diverged

__all__ = ["coreset_composition", "robust_rows"]


def coreset_composition(indices, task) -> dict:
    """What a coreset holds: ``ood_fraction`` (share of OOD samples) and ``class_fractions`` (share of each
    ID class among its ID samples), from the hidden diagnostics of :func:`.robust.build_task`."""
    idx = np.asarray(indices, dtype=np.int64)
    y = task.meta["y_u"][idx]
    ids = y[y >= 0]
    counts = np.bincount(ids, minlength=task.num_classes)
    return {
        "ood_fraction": round(float(task.meta["is_ood"][idx].mean()), 6),
        "class_fractions": [round(float(c), 6) for c in counts / max(len(ids), 1)],
    }


def robust_rows(records, clock: str = "cpu_seconds") -> list[dict]:
    """One row per record: protocol, method, ratio, fraction, seed, ``test_acc``, ``seconds`` (``clock``),
    ``selection_seconds``, the mean OOD fraction of its coresets after the first (random) one
    (``coreset_ood``; None for full-set methods) and the pool's (``pool_ood``). A run with
    ``normalize_weights`` gets the method ``"<method>_mean1"``, so it is never pooled with the raw-weight runs.
    Records of another schedule (config ``epochs``: the schedule-length study) are left out: they compare with
    nothing of the protocol's own schedule (:func:`.robust.schedule_rows` reads them), and so are the runs that
    diverged (:func:`.divergence.is_diverged`: ``test_acc`` None, a non-finite loss, :func:`.robust.diverged_run`; or
    below 1.5 x chance over the pool's classes), which :func:`.report.split_diverged` counts."""
    if clock not in ("seconds", "cpu_seconds"):
        raise ValueError(f"clock must be 'seconds' or 'cpu_seconds', got {clock!r}")
    rows = []
    for r in records:
        c, m = r["config"], r["metrics"]
        if c.get("epochs") is not None or is_diverged(m, len(m["pool"]["class_fractions"])):
            continue
        chosen = (
            [s["ood_fraction"] for s in m["selections"][1:]]
            if c["method"] != "retrieve_warm"
            else [s["ood_fraction"] for s in m["selections"]]
        )
        rows.append(
            {
                "protocol": c["protocol"],
                "method": c["method"] + ("_mean1" if c.get("normalize_weights") else ""),
                "ratio": c["ratio"],
                "fraction": c["fraction"],
                "seed": r["seed"],
                "test_acc": m["test_acc"],
                "seconds": m[clock],
                "selection_seconds": m["selection_seconds" if clock == "seconds" else "selection_cpu_seconds"],
                "coreset_ood": float(np.mean(chosen)) if chosen else None,
                "pool_ood": m["pool"]["ood_fraction"],
            }
        )
    return rows
