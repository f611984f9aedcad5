"""Which robust records decide a claim of paper C (:mod:`.claims_robust`): the records of the MNIST grid
(:data:`.experiments.ROBUST`) and of the CIFAR-10 one (:data:`.experiments.ROBUST_CIFAR10`) as cells per protocol,
reading and ratio (:func:`robust_cells`; a validation protocol's final-model reading as a protocol of its own,
:func:`final_model_records`), and the ranking that lets the most faithful protocol that ran decide
(:data:`FAITHFUL`, :func:`per_protocol`), the others shown as sensitivity."""

from __future__ import annotations

from ..report.ledger import NOT_RUN, agree, all_of, named_readings, reading_views
from ..report.stats import aside, decided_by
from .experiments import ROBUST, ROBUST_CIFAR10
from .robust import ABLATIONS, FINAL_MODEL, PROTOCOLS, robust_rows

__all__ = ["FAITHFUL", "WHY", "col", "faithfulness", "final_model_records", "per_protocol", "robust_cells"]

#: the config keys a renamed reading keeps (:func:`named_readings`): the main grid's, and ``epochs`` so that
#: :func:`robust_rows` (the one place that does it) leaves the schedule-length study's runs out
ROBUST_KEYS = {"protocol", "method", "ratio", "fraction", "epochs"}


def final_model_records(records) -> list:
    """``records`` and, for each record of a protocol with a final-model reading (:data:`.robust.FINAL_MODEL`), a
    copy under that reading's label whose ``test_acc`` is the final model's (``final_test_acc``): the same runs,
    scored the second way, as a protocol of their own (never pooled with the best-validation reading)."""
    out = list(records)
    for r in records:
        label = FINAL_MODEL.get(r["config"].get("protocol"))
        if label is not None:
            m = r["metrics"]
            final = {**m, "test_acc": m["final_test_acc"]} if m.get("test_acc") is not None else m
            out.append({**r, "config": {**r["config"], "protocol": label}, "metrics": final})
    return out


def _scenario(protocol: str) -> str:
    base = {label: p for p, label in FINAL_MODEL.items()}.get(protocol, protocol)
    return PROTOCOLS.get(base, {}).get("scenario", "ood")


def robust_cells(records, scenario: str = "ood") -> dict:
    """``{protocol: {reading: {ratio: {method: {seed: row}}}}}`` of the ``scenario``'s robust records (the MNIST
    grid's and the CIFAR-10 grid's, each protocol apart, the final-model readings as protocols of their own:
    :func:`final_model_records`): a reading is a coreset budget of Retrieve (the full-set methods join each) and,
    where a baseline ran with its weights scaled to mean 1, that weighting (its own runs in place of the raw-weight
    ones)."""
    named = named_readings(named_readings(records, ROBUST, ROBUST_KEYS), ROBUST_CIFAR10, ROBUST_KEYS)
    rows = robust_rows(final_model_records(named), clock="cpu_seconds")
    rows = [r for r in rows if _scenario(r["protocol"]) == scenario]
    for r in rows:  # an ablation (CRUST without MixUp) is a method of its own beside the main grid's: no extra view
        base = r["method"].partition(" (")[0]
        if base in ABLATIONS:
            r["method"] = base
    out: dict = {}
    for protocol in sorted({r["protocol"] for r in rows}):
        mine = [r for r in rows if r["protocol"] == protocol]
        budgets = sorted({r["fraction"] for r in mine if r["method"] == "retrieve"})
        for weights, view in reading_views(mine).items():
            for f in budgets:
                name = f"budget {f:g}" + (f", {weights}" if weights else "")
                cells = out.setdefault(protocol, {}).setdefault(name, {})
                for r in view:
                    if r["fraction"] in (None, f):
                        cells.setdefault(r["ratio"], {}).setdefault(r["method"], {})[r["seed"]] = r
    return out


#: how faithful each protocol is, best first: the paper's own; then the CIFAR-10 stand-in scored on the final model
#: (paper C's own dataset, splits and validation set, on frozen features: the one robust stand-in that passes its
#: positive controls); then the longer MNIST stand-in (T = 8, R = 2, the schedule the schedule-length study
#: accepts); then the other CPU stand-ins (the T = 4 one, the validation-set ones, the CIFAR-10 stand-in scored at
#: its best-validation epoch), then the quick one; the best that ran decides, the others are shown as sensitivity.
#: The CIFAR-10 lr-0.003 reading (a rate chosen after seeing the runs) is a named reading, so :func:`robust_cells`
#: never reads it and it decides nothing
FAITHFUL = (("paper_",), tuple(FINAL_MODEL.values()), ("cpu_long",), ("cpu",), ("quick",))
WHY = {
    1: "the CIFAR-10 stand-in scored on the final model decides: paper C's own split and validation set, an MLP head "
    "on frozen features, the one robust stand-in that passes its positive controls",
    2: "the longer CPU stand-in decides: T = 8, R = 2 is the schedule the schedule-length study accepts",
    3: "the T = 4 CPU stand-in decides: no longer stand-in ran for this scenario",
}


def faithfulness(protocol: str) -> int:
    """The rank of ``protocol`` in :data:`FAITHFUL` (0 = the paper's own)."""
    return next(i for i, prefixes in enumerate(FAITHFUL) if protocol.startswith(prefixes) or i == len(FAITHFUL) - 1)


def per_protocol(records, test, scenario: str = "ood") -> tuple[str, str]:
    """``test(cells) -> (verdict, text)`` per (protocol, reading); per protocol one verdict when its readings
    agree, else not resolved. The most faithful protocols that ran (:data:`FAITHFUL`) decide (:func:`all_of` over
    them, e.g. the paper's datasets); the less faithful ones are tested aside, shown as sensitivity, and never
    change the verdict."""
    cells = robust_cells(records, scenario)
    if not cells:
        return NOT_RUN, f"no robust Retrieve record of the {scenario} scenario"

    def run(p):
        return agree({name: test(c) for name, c in cells[p].items()})

    results, best = {}, None
    for rank in sorted({faithfulness(p) for p in cells}):  # the best rank whose test ran decides
        mine = [p for p in cells if faithfulness(p) == rank]
        if best is None:
            results |= {p: run(p) for p in mine}
            best = rank if any(results[p][0] != NOT_RUN for p in mine) else None
        else:
            with aside():
                results |= {p: run(p) for p in mine}
    best = min(faithfulness(p) for p in cells) if best is None else best
    # the protocols of the deciding rank whose test ran (one with nothing to compare decides nothing)
    deciding = [p for p in results if faithfulness(p) == best and results[p][0] != NOT_RUN] or [
        p for p in results if faithfulness(p) == best
    ]
    verdict = all_of(results[p][0] for p in deciding)
    text = " || ".join(f"{p}: {results[p][0]}: {results[p][1]}" for p in deciding)
    rest = [p for p in results if p not in deciding]
    if rest:
        text += " || sensitivity (does not decide): " + " || ".join(
            f"{p}: {results[p][0]}: {results[p][1]}" for p in rest
        )
    why = WHY.get(best, "")
    # the deciding protocols only: the ledger's gate reads the stand-ins this names (the sensitivity ones, which
    # never change the verdict, are in the evidence text)
    decided_by(f"{', '.join(deciding)} protocol" + (f": {why}" if why else ""))
    return verdict, (f"{why}. " if why else "") + text


def col(cell: dict, method: str, metric: str) -> dict:
    return {s: r[metric] for s, r in cell.get(method, {}).items()}
