"""Paper A's own effects, for the power of the claims ledger's tests (:func:`~..report.verdicts.power_columns`):
for each claim whose tables give one, the median over the claim's comparisons in the paper's numbers
(:mod:`sslkit.experiments.paper_numbers`). :mod:`.claims` attaches them to its claims."""

from __future__ import annotations

from .. import paper_numbers
from ..report.verdicts import median_effect, paper_gaps
from .claims_appendix import A_TABULAR
from .claims_variance import A_F1_NUMBERS


def effects() -> dict:
    """The paper's own effect of the claims whose tables give one (:func:`~..report.ledger.median_effect`): the
    median over the claim's comparisons in the paper's Tables 1-2, in accuracy points; Figure 1's gap as printed."""
    t1, t2 = paper_numbers.load("a_table1"), paper_numbers.load("a_table2")
    by = ("dataset", "setting")

    def gaps(rows, a, others, datasets):
        return paper_gaps(rows, by, "method", a, others, lambda r: r["dataset"] in datasets)

    t1_pl = [b - p for b, p in ((max(v for m, v in c.items() if m != "PL"), c["PL"]) for c in _cells(t1, "cifar_cvd"))]
    return {
        "A-T1-rr": median_effect(
            gaps(t1, "Ours (Iter)", ("PL", "VAT"), A_TABULAR) + gaps(t1, "PNU", ("PL", "VAT"), A_TABULAR),
            "Table 1 tabular gaps of Ours (Iter) / PNU over PL / VAT",
        ),
        "A-T1-pl": median_effect(
            [c["PL"] - max(v for m, v in c.items() if m != "PL") for c in _cells(t1, "mnist_4v9", "(15,45)")],
            "Table 1 MNIST 4v9 (15,45) gap of PL over the best other method",
        ),
        "A-T1-cifar": median_effect(t1_pl, "Table 1 CIFAR CvD gaps of the best other method over PL"),
        "A-T2-strong": median_effect(
            gaps(t2, "PL", ("Sup.",), ("dry_bean", "mnist")) + gaps(t2, "VAT", ("Sup.",), ("dry_bean", "mnist")),
            "Table 2 Dry Bean / MNIST gaps of PL / VAT over Sup.",
        ),
        "A-NN-img": median_effect(
            [
                r["on_mean"] - r["off_mean"]
                for t in ("a_table7", "a_table8", "a_table9", "a_table10")
                for r in paper_numbers.load(t)
                if r["dataset"] in ("mnist_4v9", "cifar_cvd", "mnist", "cifar10")
            ],
            "Tables 7-10 image-row gaps of NN on over NN off",
        ),
        "A-F1-bal": (
            A_F1_NUMBERS["PNU"] - A_F1_NUMBERS["lin"],
            "§6.1's printed ratios, 0.953 − 0.883",
        ),
    }


def _cells(rows, dataset, setting=None) -> list:
    """``[{method: mean}]`` per setting of ``dataset`` in a paper table (one ``setting`` where given)."""
    out: dict = {}
    for r in rows:
        if r["dataset"] == dataset and setting in (None, r["setting"]):
            out.setdefault(r["setting"], {})[r["method"]] = r["mean"]
    return list(out.values())
