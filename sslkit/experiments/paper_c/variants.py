"""Paper C, Retrieve's variants beside the trade-off grid (:mod:`.tradeoff`): Retrieve without warm start
(Figure 7, App. G.1), CORDS' choices D3/D4 (``cords_compatible``) and the extended runs of Figure 4 (g-h) and
App. G.3 (Figs. 8-9), each read against the Full run of its seed."""

from __future__ import annotations

from .tradeoff import FRACTIONS, MAIN_KEYS, full_by_seed, protocol_of

#: variants of Retrieve beside the main grid: Retrieve without warm start (Fig. 7, App. G.1) and CORDS'
#: choices D3/D4 (``cords_compatible``); each key is the extra config entry of the variant
VARIANTS = {"no_warm": {"warm": False}, "cords_compatible": {"cords_compatible": True}}


def variant_grid(protocol: str, algorithms=("vat",), fractions=FRACTIONS) -> list[dict]:
    """Retrieve's variants (:data:`VARIANTS`) at every budget; the default Retrieve runs are the main grid's."""
    protocol_of(protocol)
    return [
        {"protocol": protocol, "algorithm": a, "method": "retrieve", "fraction": f, **extra}
        for a in algorithms
        for f in fractions
        for extra in VARIANTS.values()
    ]


def variant_rows(records, clock: str = "cpu_seconds") -> list[dict]:
    """One row per (algorithm, fraction, seed, variant) -- "default" included -- with accuracy, time and the
    Full run's accuracy and time for the same seed (None when it is missing)."""
    full = full_by_seed(records)
    rows = []
    for r in records:
        c, m = r["config"], r["metrics"]
        if c["method"] != "retrieve":
            continue
        extra = {key: v for key, v in c.items() if key not in MAIN_KEYS}
        names = [n for n, e in VARIANTS.items() if e == extra]
        if extra and not names:
            continue
        f = full.get((c["protocol"], c["algorithm"], r["seed"]))
        rows.append(
            {
                "protocol": c["protocol"],
                "algorithm": c["algorithm"],
                "fraction": c["fraction"],
                "seed": r["seed"],
                "variant": names[0] if names else "default",
                "test_acc": m["test_acc"],
                "seconds": m[clock],
                "selection_seconds": m["selection_seconds" if clock == "seconds" else "selection_cpu_seconds"],
                "full_acc": None if f is None else f["test_acc"],
                "full_seconds": None if f is None else f[clock],
            }
        )
    return rows


def extended_grid(protocol: str, algorithms=("vat",), fractions=(0.2, 0.3), extends=(2.0,)) -> list[dict]:
    """Retrieve's extended runs (Figure 4 g-h, App. G.3 Figs. 8-9): the coreset phase ``extend`` times longer,
    at the budgets the paper extends (20 and 30 %)."""
    protocol_of(protocol)
    return [
        {"protocol": protocol, "algorithm": a, "method": "retrieve", "fraction": f, "extend": float(e)}
        for a in algorithms
        for f in fractions
        for e in extends
    ]


def extended_rows(records, clock: str = "cpu_seconds") -> list[dict]:
    """One row per extended Retrieve run whose Full run (same protocol, algorithm, seed) is in ``records``:
    its final accuracy and speed-up, and ``match_speedup``: Full's time over the time at which the run first
    reached Full's final accuracy (None if it never did) -- the paper's "matches the performance of VAT while
    being close to 2x faster"."""
    if clock not in ("seconds", "cpu_seconds"):
        raise ValueError(f"clock must be 'seconds' or 'cpu_seconds', got {clock!r}")
    col = {"seconds": 0, "cpu_seconds": 2}[clock]
    full = full_by_seed(records)
    rows = []
    for r in records:
        c, m = r["config"], r["metrics"]
        f = full.get((c["protocol"], c["algorithm"], r["seed"]))
        if "extend" not in c or f is None:
            continue
        reached = [p[col] for p in m["curve"] if p[1] >= f["test_acc"]]
        rows.append(
            {
                "protocol": c["protocol"],
                "algorithm": c["algorithm"],
                "fraction": c["fraction"],
                "extend": c["extend"],
                "seed": r["seed"],
                "test_acc": m["test_acc"],
                "full_acc": f["test_acc"],
                "speedup": f[clock] / m[clock],
                "match_speedup": f[clock] / reached[0] if reached else None,
            }
        )
    return rows
