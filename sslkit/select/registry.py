"""Paper B's selectors by the names its tables and figures use (Table 1's rows, Figure 3's panels)."""

from __future__ import annotations

from sslkit._checks import check_count, check_seed
from sslkit.select.activeft import ActiveFTSelector
from sslkit.select.baselines import KMeansSelector, RandomSelector, StratifiedSelector, USLSelector
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


def selector_name(name) -> str:
    """The :data:`SELECTORS` name of ``name``, which may be written in any case, with or without ``-`` / ``_``
    ("rdss", "kmeans", "k_means", "activeft"...); a clear error naming the selectors otherwise."""
    if isinstance(name, str):
        key = _key(name)
        for known in SELECTORS:
            if _key(known) == key:
                return known
    raise ValueError(f"selector must be one of {tuple(SELECTORS)} (any case, '-' optional), got {name!r}")


def _key(name: str) -> str:
    return name.lower().replace("-", "").replace("_", "").replace(" ", "")


def make_selector(name: str, m: int, *, seed=0, device="cpu", bandwidth="median", progress=False, mu_method="exact"):
    """The selector called ``name`` (:data:`SELECTORS`, in any case: ``"rdss"`` is ``"RDSS"``) with budget ``m``.

    RDSS = :class:`GKHR` with ``alpha = 1 - 1/sqrt(m)`` (paper B §7.1) and ``bandwidth`` ("median" = §6's
    median heuristic, or a number: the kernel width sigma). USL and ActiveFT use their official settings
    (they L2-normalise the features themselves); k-Means: k-means++ seeding, <= 100 Lloyd iterations.
    Random and Stratified need no device. ``progress``: RDSS's bar over its picks. ``mu_method``: RDSS's ``mu``,
    exact or estimated (:class:`GKHR`; another selector refuses anything but ``"exact"``).
    """
    m = check_count(m, "m", allow_zero=False)
    seed = check_seed(seed)
    name = selector_name(name)
    if mu_method != "exact" and name != "RDSS":
        raise ValueError(f"mu_method={mu_method!r} applies to RDSS only, not to {name}")
    if name in ("Stratified", "Random"):
        return SELECTORS[name](m, seed=seed)
    if name == "RDSS":
        return GKHR(m, bandwidth=bandwidth, seed=seed, device=device, progress=progress, mu_method=mu_method)
    return SELECTORS[name](m, seed=seed, device=device)
