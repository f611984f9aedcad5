"""Paper B (RDSS) experiments: Figure 2 (GKHR vs GKH), Figure 3 (every selector on a 2-D GMM),
Table 4 (the alpha ablation) and the numbers typed from the paper.

Everything here calls the public API of :mod:`sslkit.select` and :mod:`sslkit.data`; each ``*_run``
function returns a flat dict of metrics, so it can be handed to :func:`sslkit.experiments.run_grid`.

* Figure 2 (App. D.1): :func:`figure2_run` -- one dataset draw, GKHR and GKH at the same ``m`` and
  ``alpha``, and the criterion ``D = (D1 - D2) / (D1 + D2)`` with ``D1``, ``D2`` the alpha-MMD^2 of
  GKHR's and GKH's selections (GKH's counted as a multiset: repeats count, as its weights do).
* Figure 3 (App. D.3): :func:`figure3_data`, :func:`figure3_run`, :func:`selection_metrics`.
* Table 4 (§7.4): :data:`PAPER_TABLE4`, :func:`table4_alpha`, :func:`table4_proxy_run` (CPU: alpha-MMD^2,
  MMD^2, average similarity of the GKHR selection on real features and a *supervised proxy* accuracy,
  not the paper's metric) and :func:`table4_ssl_run` (GKHR on image features, then FreeMatch: the paper's
  WRN-28-2 protocol, GPU, or the CPU stand-in on frozen features).
"""

from __future__ import annotations

import math
import time

import numpy as np

from sslkit._checks import check_count, check_seed
from sslkit.experiments.paper_numbers import load as load_paper_numbers
from sslkit.experiments.paper_numbers import mean_std

__all__ = [
    "PROTOCOL_VERSION",
    "FIGURE2_N",
    "FIGURE2_M_FRACTIONS",
    "FIGURE2_RUNS",
    "FIGURE2_CLAIM",
    "FIGURE2_ALPHA_RULES",
    "figure2_m",
    "figure2_alpha",
    "figure2_grid",
    "figure2_alpha_grid",
    "figure2_run",
    "FIGURE3_SELECTORS",
    "figure3_data",
    "figure3_run",
    "selection_metrics",
    "average_similarity",
    "TABLE4_ALPHAS",
    "TABLE4_BUDGETS",
    "TINY_ALPHA",
    "PAPER_TABLE4",
    "table4_alpha",
    "table4_in_interval",
    "table4_proxy_run",
    "table4_ssl_run",
]

#: Protocol version of the records that this module's run functions make: notebooks and drivers pass it as
#: ``run_grid(..., version=PROTOCOL_VERSION)`` and each record stores it (``protocol_version``; records without
#: it are version 1). Bump it with a change that alters those runs' results: the runner then refuses to reuse
#: the older records silently (:class:`sslkit.experiments.runs.store.StaleResultsError`).
PROTOCOL_VERSION = 1

# --------------------------------------------------------------------------------------------------
# Figure 2 (App. D.1): GKHR vs GKH
# --------------------------------------------------------------------------------------------------

#: Sample sizes of App. D.1.
FIGURE2_N = (1000, 3000, 10000, 30000)
#: Budgets as fractions of n. The paper says only "m/n <= 0.2" (its low-budget setting, §3); we take
#: three points of that range, the largest being the bound itself.
FIGURE2_M_FRACTIONS = (0.01, 0.05, 0.2)
#: "ten independent runs" (Figure 2 caption).
FIGURE2_RUNS = 10
#: What App. D.1 claims about Figure 2 (its only statements; the figure gives no numbers).
FIGURE2_CLAIM = (
    "although the performance gap tends to grow as m grows, when m is relatively small, the "
    "performance of GKHR is similar to that of GKH"
)


#: The two readings of App. D.1's "the alpha is set by m/n": §7.1's budget rule ``alpha = 1 - 1/sqrt(m)`` (the
#: main grid) and the literal ``alpha = m/n`` (a named reading of the grid, config ``alpha_rule = "m/n"``).
FIGURE2_ALPHA_RULES = ("1-1/sqrt(m)", "m/n")


def figure2_m(n: int, fraction: float) -> int:
    """The budget ``m = round(fraction * n)`` (at least 1) of one Figure 2 point."""
    n = check_count(n, "n", allow_zero=False)
    if not (isinstance(fraction, (int, float)) and 0 < fraction <= 0.2):
        raise ValueError(f"fraction must be in (0, 0.2] (paper B's m/n <= 0.2), got {fraction!r}")
    return max(1, int(round(fraction * n)))


def figure2_grid(scale: str) -> tuple:
    """``(grid, seeds)`` of Figure 2 at ``scale``: "paper" = every distribution x n of :data:`FIGURE2_N` x
    :data:`FIGURE2_M_FRACTIONS`, 10 runs; "quick" = n <= 3000, 3 runs. Ordered by n (cheapest first)."""
    from sslkit.data import RDSS_TOY_DISTRIBUTIONS

    if scale not in ("quick", "paper"):
        raise ValueError(f"scale must be 'quick' or 'paper', got {scale!r}")
    ns = FIGURE2_N if scale == "paper" else tuple(n for n in FIGURE2_N if n <= 3000)
    grid = [
        {"distribution": d, "n": n, "fraction": f}
        for n in ns
        for d in RDSS_TOY_DISTRIBUTIONS
        for f in FIGURE2_M_FRACTIONS
    ]
    return grid, list(range(FIGURE2_RUNS if scale == "paper" else 3))


def figure2_alpha(rule: str, m: int, n: int) -> float:
    """The trade-off of one Figure 2 point under ``rule`` (one of :data:`FIGURE2_ALPHA_RULES`):
    ``"1-1/sqrt(m)"`` gives :func:`sslkit.select.auto_alpha` (§7.1), ``"m/n"`` gives ``m / n`` (App. D.1 read
    literally)."""
    from sslkit.select import auto_alpha

    if rule not in FIGURE2_ALPHA_RULES:
        raise ValueError(f"alpha_rule must be one of {FIGURE2_ALPHA_RULES}, got {rule!r}")
    m, n = check_count(m, "m", allow_zero=False), check_count(n, "n", allow_zero=False)
    if m > n:
        raise ValueError(f"m = {m} exceeds n = {n}")
    return auto_alpha(m) if rule == "1-1/sqrt(m)" else m / n


def figure2_alpha_grid(scale: str) -> list:
    """The configurations of the reading ``alpha = m/n`` at ``scale``: the main grid's
    (:func:`figure2_grid`), each with ``alpha_rule = "m/n"`` (so none is a main-grid configuration); at quick
    scale only its smallest n (the reading doubles the grid; quick scale must stay minutes on 2 cores)."""
    grid = figure2_grid(scale)[0]
    smallest = min(c["n"] for c in grid)
    return [{**c, "alpha_rule": "m/n"} for c in grid if scale == "paper" or c["n"] == smallest]


def figure2_run(
    distribution: str, n: int, fraction: float, seed: int, *, alpha_rule: str = "1-1/sqrt(m)", device="cpu"
) -> dict:
    """One run of Figure 2: draw ``n`` points of ``distribution`` (App. D.1) with ``seed``, select
    ``m = figure2_m(n, fraction)`` points with GKHR and with GKH, and compare their alpha-MMD^2.

    ``alpha = figure2_alpha(alpha_rule, m, n)``: by default §7.1's ``1 - 1/sqrt(m)`` ("the alpha is set by
    m/n" in App. D.1 read as "alpha follows the budget"), or, with ``alpha_rule="m/n"``, the literal
    ``alpha = m/n``; the bandwidth is the median heuristic of the drawn data (§6), the same for both
    selectors. Returns ``D = (D1 - D2)/(D1 + D2)`` (negative: GKHR better), ``D1``, ``D2``, GKH's number of
    distinct picks, ``m``, ``alpha``, the bandwidth and both selectors' seconds.
    """
    from sslkit.data import rdss_toy_distribution
    from sslkit.select import GKH, GKHR, alpha_mmd2, median_bandwidth

    seed = check_seed(seed)
    m = figure2_m(n, fraction)
    alpha = figure2_alpha(alpha_rule, m, n)
    X, _ = rdss_toy_distribution(distribution, n, seed=seed)
    bandwidth = median_bandwidth(X, seed=seed, device=device)
    gkhr = GKHR(m, alpha=alpha, bandwidth=bandwidth, device=device).fit(X)
    gkh = GKH(m, alpha=alpha, bandwidth=bandwidth, device=device).fit(X)
    d1 = alpha_mmd2(X, gkhr.indices_, alpha, bandwidth, mu=gkhr.mu_, device=device)
    d2 = alpha_mmd2(X, gkh.indices_, alpha, bandwidth, mu=gkhr.mu_, device=device)
    return {
        "D": (d1 - d2) / (d1 + d2),
        "D1": d1,
        "D2": d2,
        "m": m,
        "alpha": alpha,
        "bandwidth": bandwidth,
        "gkh_distinct": int(np.unique(gkh.indices_).size),
        "gkhr_seconds": round(gkhr.timings_["total"], 4),
        "gkh_seconds": round(gkh.timings_["total"], 4),
    }


# --------------------------------------------------------------------------------------------------
# Figure 3 (App. D.3): every selector on a 10-component GMM
# --------------------------------------------------------------------------------------------------

#: Figure 3's panels, in the paper's order ("stratified, random, k-Means, USL, ActiveFT and RDSS").
FIGURE3_SELECTORS = ("Stratified", "Random", "k-Means", "USL", "ActiveFT", "RDSS")  # = sslkit.select.SELECTORS


def figure3_data(n: int = 5000, *, seed=0):
    """App. D.3's data: ``n`` = 5000 points of :func:`sslkit.data.gmm10` (10 components, uniform weights).
    Returns ``(X, component)``."""
    from sslkit.data import gmm10

    return gmm10(n, seed=check_seed(seed))


def figure3_run(selector: str, seed: int, *, m: int = 100, n: int = 5000, device="cpu") -> dict:
    """One Figure 3 panel: draw :func:`figure3_data` with ``seed``, select ``m`` points with ``selector``
    (one of :data:`FIGURE3_SELECTORS`, seeded with ``seed``) and measure the selection
    (:func:`selection_metrics` at RDSS's ``alpha = 1 - 1/sqrt(m)`` and the median bandwidth of the data;
    ``labels`` = the GMM component). The selected ``indices`` are part of the returned dict (for the plot).
    """
    from sslkit.select import auto_alpha, make_selector, median_bandwidth

    if selector not in FIGURE3_SELECTORS:
        raise ValueError(f"selector must be one of {FIGURE3_SELECTORS}, got {selector!r}")
    seed = check_seed(seed)
    m = check_count(m, "m", allow_zero=False)
    X, comp = figure3_data(n, seed=seed)
    sel = make_selector(selector, m, seed=seed, device=device)
    t0 = time.perf_counter()
    sel.fit(X, comp) if selector == "Stratified" else sel.fit(X)  # the oracle reads the labels
    idx = np.asarray(sel.indices_, dtype=np.int64)
    seconds = time.perf_counter() - t0
    bandwidth = median_bandwidth(X, seed=seed, device=device)
    out = selection_metrics(X, idx, alpha=auto_alpha(m), bandwidth=bandwidth, labels=comp, device=device)
    out.update(alpha=auto_alpha(m), bandwidth=bandwidth, select_seconds=round(seconds, 4), indices=idx.tolist())
    return out


def average_similarity(X, indices, bandwidth, *, device="cpu") -> float:
    """Eq. (2): ``S_k = (1/m^2) sum_{i,j in I} k(x_i, x_j)`` of the selection (dense ``m x m``; small m)."""
    from sslkit.select import gaussian_kernel

    idx = np.asarray(indices, dtype=np.int64)
    return float(gaussian_kernel(np.asarray(X)[idx], bandwidth=bandwidth, device=device).double().mean())


def selection_metrics(X, indices, *, alpha, bandwidth, mu=None, labels=None, device="cpu") -> dict:
    """alpha-MMD^2 (eq. (6)) at ``alpha``, MMD^2 (eq. (4)), average similarity ``S_k`` (eq. (2)) of
    ``X[indices]`` against ``X``, the number of distinct picks and, with ``labels``, the number of classes
    covered and the smallest / largest class count among the picks."""
    from sslkit.select import alpha_mmd2, kernel_row_sums, mmd2

    X = np.asarray(X)
    if mu is None:
        mu = kernel_row_sums(X, bandwidth=bandwidth, device=device).cpu().numpy() / X.shape[0]
    out = {
        "alpha_mmd2": alpha_mmd2(X, indices, alpha, bandwidth, mu=mu, device=device),
        "mmd2": mmd2(X, indices, bandwidth, mu=mu, device=device),
        "avg_similarity": average_similarity(X, indices, bandwidth, device=device),
        "distinct": int(np.unique(indices).size),
    }
    if labels is not None:
        labels = np.asarray(labels)
        counts = np.bincount(labels[np.asarray(indices)], minlength=int(labels.max()) + 1)
        out.update(
            classes_covered=int((counts > 0).sum()),
            min_class_count=int(counts.min()),
            max_class_count=int(counts.max()),
        )
    return out


# --------------------------------------------------------------------------------------------------
# Table 4 (§7.4): the alpha ablation
# --------------------------------------------------------------------------------------------------

#: Table 4's rows, as labels ("1-1/sqrt(m)" is RDSS's own choice, §7.1).
TABLE4_ALPHAS = ("0", "0.4", "0.8", "0.9", "0.95", "0.98", "1", "1-1/sqrt(m)")
#: Table 4's budgets.
TABLE4_BUDGETS = {"CIFAR-10": (40, 250, 4000), "CIFAR-100": (400, 2500, 10000)}
#: What the row "alpha = 0" runs with. alpha = 0 is outside (0, 1] for GKHR (``check_alpha``): eq. (5)'s
#: ``lambda = (1 - alpha)/(alpha m)`` is infinite there, and Algorithm 1's first pick (argmin of
#: ``-alpha mu``) would be a tie between all n points. A tiny alpha is the limit: the densest point
#: first, then pure diversity (minimum average similarity), mu only breaking exact ties.
TINY_ALPHA = 1e-6

#: ``{(alpha label, "CIFAR-10 @ 40"): (mean, std)}``: paper B Table 4 (FreeMatch, % top-1, mean ± std over
#: five runs), from sslkit/experiments/paper_numbers/b_table4.csv.
PAPER_TABLE4 = {(r["alpha"], f"{r['dataset']} @ {r['m']}"): mean_std(r) for r in load_paper_numbers("b_table4")}


def table4_alpha(label: str, m: int) -> float:
    """The alpha a Table 4 row runs with at budget ``m``: the number itself, :data:`TINY_ALPHA` for "0",
    ``1 - 1/sqrt(m)`` for "1-1/sqrt(m)"."""
    from sslkit.select import auto_alpha

    if label not in TABLE4_ALPHAS:
        raise ValueError(f"label must be one of {TABLE4_ALPHAS}, got {label!r}")
    m = check_count(m, "m", allow_zero=False)
    if label == "0":
        return TINY_ALPHA
    if label == "1-1/sqrt(m)":
        return auto_alpha(m)
    return float(label)


def table4_in_interval(label: str, m: int) -> bool:
    """Whether a row lies in §6's interval ``1 - 1/sqrt(m) <= alpha <= 1`` (Table 4's black cells)."""
    if label == "0":
        return False
    return table4_alpha(label, m) >= 1.0 - 1.0 / math.sqrt(check_count(m, "m", allow_zero=False)) - 1e-12


def _real_features(dataset: str, data_root=None, pca_dim: int = 50, max_rows=None):
    """``(X, y)`` of a real dataset as features: digits = its 64 pixel counts; mnist = train pixels/255,
    projected on their first ``pca_dim`` principal components (optionally the first ``max_rows`` rows)."""
    from sslkit.data import load_dataset

    if dataset == "digits":
        ds = load_dataset("digits", root=data_root)
        return ds.X.astype(np.float64), ds.y
    if dataset == "mnist":
        from sklearn.decomposition import PCA

        ds = load_dataset("mnist", root=data_root)
        X, y = ds.X, ds.y
        if max_rows is not None:
            X, y = X[:max_rows], y[:max_rows]
        X = X.reshape(X.shape[0], -1).astype(np.float32) / 255.0
        return PCA(n_components=pca_dim, random_state=0).fit_transform(X).astype(np.float64), y
    raise ValueError(f"dataset must be 'digits' or 'mnist', got {dataset!r}")


def table4_proxy_run(
    alpha: str,
    m: int,
    seed: int,
    *,
    dataset: str = "digits",
    test_fraction: float = 0.25,
    data_root=None,
    max_rows=None,
    device="cpu",
) -> dict:
    """Table 4 on a CPU: what can honestly be measured without SSL training.

    The rows of ``dataset`` (:func:`_real_features`) are split by ``seed`` into a pool (the "unlabeled
    data" GKHR selects from) and a held-out test part (``test_fraction``, stratified). GKHR selects ``m``
    pool points with the row's alpha (:func:`table4_alpha`) and the pool's median bandwidth. Metrics: the
    selection's alpha-MMD^2 at its own alpha and at RDSS's ``1 - 1/sqrt(m)`` (``alpha_mmd2_rdss``, the same
    yardstick for every row), MMD^2, average similarity, class coverage, and ``proxy_acc``: the test
    accuracy of a logistic regression trained on the m selected, labeled points only -- a cheap
    downstream *proxy*, not the paper's FreeMatch accuracy.
    """
    from sklearn.model_selection import train_test_split

    from sslkit.select import GKHR, alpha_mmd2, auto_alpha, median_bandwidth

    from .timing import proxy_accuracy

    seed = check_seed(seed)
    a = table4_alpha(alpha, m)
    X, y = _real_features(dataset, data_root, max_rows=max_rows)
    pool, test = train_test_split(np.arange(X.shape[0]), test_size=test_fraction, stratify=y, random_state=seed)
    Xp, yp = X[pool], y[pool]
    if m > Xp.shape[0]:
        raise ValueError(f"m = {m} exceeds the pool size {Xp.shape[0]}")
    bandwidth = median_bandwidth(Xp, seed=seed, device=device)
    sel = GKHR(m, alpha=a, bandwidth=bandwidth, device=device).fit(Xp)
    met = selection_metrics(Xp, sel.indices_, alpha=a, bandwidth=bandwidth, mu=sel.mu_, labels=yp, device=device)
    met["alpha_mmd2_rdss"] = alpha_mmd2(Xp, sel.indices_, auto_alpha(m), bandwidth, mu=sel.mu_, device=device)
    met.update(
        alpha_value=a,
        bandwidth=bandwidth,
        n_pool=int(Xp.shape[0]),
        n_test=int(test.size),
        proxy_acc=proxy_accuracy(Xp[sel.indices_], yp[sel.indices_], X[test], y[test]),
        select_seconds=round(sel.timings_["total"], 4),
    )
    return met


def table4_ssl_run(
    alpha: str,
    m: int,
    seed: int,
    *,
    protocol: str = "usb",
    dataset: str = "cifar10",
    extractor: str = "pixels_pca",
    pca_dim: int = 100,
    variant: str = "auto",
    algorithm="FreeMatch",
    n_pool=None,
    n_test=None,
    epochs=None,
    iterations_per_epoch=None,
    device="auto",
    data_root=None,
) -> dict:
    """Table 4 with an SSL learner: GKHR selects ``m`` training images of ``dataset`` with the row's alpha on
    ``extractor`` features, then FreeMatch (the paper's Table 4 learner) trains and is tested.

    ``protocol``: ``"usb"`` = the paper's (WRN-28-2 on the images, 2^20 iterations; a GPU job), ``"head"`` =
    the CPU stand-in of Table 1 (an MLP on the frozen features; :data:`sslkit.experiments.paper_b_ssl.
    HEAD_PROTOCOL`), ``"lenet"`` or a protocol dict (the LeNet stand-in's, :func:`.runs.table4_lenet_run`);
    ``epochs`` / ``iterations_per_epoch`` override the protocol's. Data and features come from
    :func:`sslkit.experiments.paper_b_ssl.table1_data` (``variant``: the CIFAR-10 copy, e.g. "lossless" = the
    exact 4000/1000 subset; ``n_pool`` / ``n_test``: the first rows only). The paper selects on CLIP ViT-B/32
    features, which cannot be loaded offline here: the default is the first ``pca_dim`` principal components of
    the pixels (a documented stand-in;
    ``extractor="efficientnet_lite0"`` is pretrained). Returns the selection's metrics (as
    :func:`selection_metrics`) together with the SSL test accuracy.
    """
    from sslkit.device import resolve_device
    from sslkit.select import GKHR, median_bandwidth

    from .ssl import pool_mu, table1_data, train_ssl
    from .ssl_protocols import check_protocol

    seed = check_seed(seed)
    p = check_protocol(protocol)
    for key, value in (("epochs", epochs), ("iterations_per_epoch", iterations_per_epoch)):
        if value is not None:
            p[key] = check_count(value, key, allow_zero=False)
    a = table4_alpha(alpha, m)
    Xp, yp, Xs, ys, Fp, info = table1_data(
        dataset,
        extractor=extractor,
        variant=variant,
        pca_dim=pca_dim,
        n_pool=n_pool,
        n_test=n_test,
        data_root=data_root,
        device="cpu",
    )
    if m > len(Fp):
        raise ValueError(f"m = {m} exceeds the pool size {len(Fp)}")
    bandwidth = median_bandwidth(Fp, seed=seed)
    sdev = resolve_device("auto")  # GKHR's default device
    mu = pool_mu(Fp, bandwidth, (dataset, extractor, n_pool, n_test, variant, pca_dim, str(data_root)), sdev)
    sel = GKHR(m, alpha=a, bandwidth=bandwidth).fit(Fp, mu=mu)  # every alpha and m of the pool: one mu
    met = selection_metrics(Fp, sel.indices_, alpha=a, bandwidth=bandwidth, mu=sel.mu_, labels=yp)
    train, test = (Fp, info["F_test"]) if p["model"] == "mlp" else (Xp, Xs)
    met.update(
        train_ssl(
            train,
            yp,
            sel.indices_,
            test,
            ys,
            algorithm=algorithm,
            protocol=p,
            num_classes=info["num_classes"],
            device=device,
            seed=seed,
        )
    )
    met.update(
        alpha_value=a,
        features=extractor if extractor != "pixels_pca" else f"pixels PCA-{pca_dim}",
        data=info["data"],
        protocol=protocol if isinstance(protocol, str) else p["model"],
        n_pool=info["n_pool"],
        n_test=info["n_test"],
    )
    return met
