"""A claim of the ledger and its verdicts (:mod:`.ledger` tests claims, :mod:`.verdicts` says what a verdict rests
on; both read these names from here, so neither imports the other's module to know them)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..runs.experiment import DIAGNOSTIC, PAPER_PROTOCOL, QUICK, STAND_IN

HOLDS, FAILS, OPEN, NOT_RUN = "holds", "does not hold", "not resolved", "not run"
#: the gate's state (:mod:`.controls`): the claim's deciding stand-in fails its positive controls, so its test's
#: verdict (kept in ``stand_in_verdict``) is shown but never counted for or against the paper
CANNOT_DECIDE = "cannot decide"
VERDICTS = (HOLDS, FAILS, OPEN, CANNOT_DECIDE, NOT_RUN)
#: evidence levels, best first: the kind of the records a claim is tested on
LEVELS = (PAPER_PROTOCOL, STAND_IN, DIAGNOSTIC, QUICK)


@dataclass(frozen=True)
class Claim:
    """One claim of a paper: ``quote`` made at ``where``; ``item`` / ``group`` is its row of the scorecard;
    ``reads`` the experiments whose records ``fn`` reads (the first decides the evidence level); ``test`` says in
    words what ``fn(records) -> (verdict, evidence)`` checks."""

    id: str
    paper: str
    item: str
    group: str
    where: str
    quote: str
    test: str
    reads: tuple
    fn: Callable
    #: the paper's own effect in the units of the deciding comparison (None: the paper gives no number; a margin
    #: claim's default is its margin), and where the number comes from
    effect: float | None = None
    effect_source: str = ""
    #: why the records that decide are the most faithful evidence (shown in the ledger's deciding evidence)
    decides: str = ""
