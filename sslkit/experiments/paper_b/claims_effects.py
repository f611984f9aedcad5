"""Paper B's own effects, for the power of the claims ledger's tests (:func:`~..report.verdicts.power_columns`):
for each claim whose tables give one, the median over the claim's comparisons in the paper's numbers
(:mod:`sslkit.experiments.paper_numbers`). :mod:`.claims` attaches them to its claims; the names Table 4's claims
share are here too."""

from __future__ import annotations

from .. import paper_numbers
from ..report.verdicts import median_effect, paper_gaps

RDSS_ALPHA = "1-1/sqrt(m)"
#: Table 4's claims are decided on the LeNet stand-in (``b_table4_lenet``), which passes its positive controls; the
#: MLP heads (``b_table4_head``) fail them and the page shows their tests beside the ledger. When the paper's protocol
#: runs (``b_table4_ssl``, a GPU), the claims should read it.
T4_GROUP = "MNIST · FreeMatch on a LeNet"
T4_DECIDES = "the LeNet stand-in passes its positive controls; the MLP heads (b_table4_head) fail them"


def effects() -> dict:
    """The paper's own effect of the claims whose tables give one (:func:`~..report.ledger.median_effect`): the
    median over the claim's CIFAR-10 comparisons in the paper's Tables 1 and 4 (the data of our stand-ins), in
    accuracy points; §7.2's printed gaps as printed."""
    t1, t4 = paper_numbers.load("b_table1"), paper_numbers.load("b_table4")
    cifar = lambda r: r["dataset"] == "CIFAR-10"  # noqa: E731
    by1, by4 = ("algorithm", "dataset", "m"), ("dataset", "m")
    others = ("Random", "k-Means", "USL", "ActiveFT")
    return {
        "B-T1-1": median_effect(
            paper_gaps(t1, by1, "selector", "RDSS", others, cifar), "Table 1 CIFAR-10 gaps of RDSS over each selector"
        ),
        "B-T1-2": median_effect(
            paper_gaps(t1, by1, "selector", "RDSS", ("USL",), cifar), "Table 1 CIFAR-10 gaps of RDSS over USL"
        ),
        "B-abs-ssl": median_effect(
            paper_gaps(t1, by1, "selector", "RDSS", ("Random",), cifar), "Table 1 CIFAR-10 gaps of RDSS over Random"
        ),
        "B-T4-1": median_effect(
            paper_gaps(t4, by4, "alpha", RDSS_ALPHA, ("0", "0.4", "0.8", "0.9", "0.95", "0.98", "1"), cifar),
            "Table 4 CIFAR-10 gaps of α = 1 − 1/√m over each fixed α",
        ),
        "B-T4-3": median_effect(
            paper_gaps(t4, by4, "alpha", RDSS_ALPHA, ("0", "1"), cifar),
            "Table 4 CIFAR-10 gaps of α = 1 − 1/√m over α = 0 and α = 1",
        ),
        "B-T1-stl": (4.95, "§7.2's printed rise"),
        "B-T1-imagenet": (58.24 - 56.86, "§7.2's printed accuracies, 58.24 − 56.86"),
    }
