"""Paper B's selectors by the names its tables and figures use (Table 1's rows, Figure 3's panels)."""

from __future__ import annotations

from sslkit._checks import check_count, check_seed
from sslkit.select.baselines import ActiveFTSelector, KMeansSelector, RandomSelector, StratifiedSelector, USLSelector
from sslkit.select.herding import GKHR

#: Name -> selector class, in Table 1's order. "Stratified" reads the labels in ``fit`` (an oracle).
SELECTORS = {
    "Stratified": StratifiedSelector,
    "Random": RandomSelector,
    "k-Means": KMeansSelector,
    "USL": USLSelector,
    "ActiveFT": ActiveFTSelector,
    "RDSS": GKHR,
}


def make_selector(name: str, m: int, *, seed=0, device="cpu", bandwidth="median"):
    """The selector called ``name`` (:data:`SELECTORS`) with budget ``m``.

    RDSS = :class:`GKHR` with ``alpha = 1 - 1/sqrt(m)`` (paper B §7.1) and ``bandwidth`` ("median" = §6's
    median heuristic, or a number: the kernel width sigma). USL and ActiveFT use their official settings
    (they L2-normalise the features themselves); k-Means: k-means++ seeding, <= 100 Lloyd iterations.
    Random and Stratified need no device.
    """
    m = check_count(m, "m", allow_zero=False)
    seed = check_seed(seed)
    if name not in SELECTORS:
        raise ValueError(f"selector must be one of {tuple(SELECTORS)}, got {name!r}")
    if name in ("Stratified", "Random"):
        return SELECTORS[name](m, seed=seed)
    if name == "RDSS":
        return GKHR(m, bandwidth=bandwidth, seed=seed, device=device)
    return SELECTORS[name](m, seed=seed, device=device)
