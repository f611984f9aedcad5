"""The grids of paper B's Table 1 experiments (:mod:`.experiments` declares them): the configurations each scale
and reading runs, and the options that narrow them (``sslkit run b_table1 --scale cpu -o budgets=40``)."""

from __future__ import annotations

from . import ssl as L

__all__ = [
    "TABLE1_QUICK_BUDGETS",
    "table1_quick_configs",
    "table1_paper_configs",
    "table1_full_pool_configs",
    "table1_narrow",
    "table1_lenet_configs",
    "table1_lenet_ema_configs",
]

TABLE1_QUICK_BUDGETS = (40, 100)


def table1_quick_configs(datasets=("mnist", "cifar10"), cifar_extractor="pixels_pca") -> list[dict]:
    extractor = {"mnist": "pixels_pca", "cifar10": cifar_extractor}
    return [
        {"dataset": d, "extractor": extractor[d], "selector": s, "algorithm": a, "m": m}
        for d in datasets
        for m in TABLE1_QUICK_BUDGETS
        for s in L.TABLE1_SELECTORS
        for a in L.TABLE1_ALGORITHMS
    ]


def table1_paper_configs(datasets=tuple(L.TABLE1_BUDGETS), extractor="clip_vit_b32") -> list[dict]:
    return [
        {"dataset": label, "extractor": extractor, "selector": s, "algorithm": a, "m": m}
        for label in datasets
        for m in L.TABLE1_BUDGETS[label]
        for s in L.TABLE1_SELECTORS
        for a in L.TABLE1_ALGORITHMS
    ]


def table1_full_pool_configs(selectors=None, budgets=None) -> list[dict]:
    grid = [
        {"dataset": "cifar10", "pool": "full", "extractor": "efficientnet_lite0", "selector": s, "algorithm": a, "m": m}
        for m in L.TABLE1_BUDGETS["CIFAR-10"]
        for s in L.TABLE1_SELECTORS
        for a in L.TABLE1_ALGORITHMS
    ]
    return table1_narrow(grid, selectors, budgets)


def table1_narrow(grid, selectors=None, budgets=None) -> list[dict]:
    """Table 1's configs of ``selectors`` at ``budgets`` only (None: all), the options of
    ``sslkit run b_table1 --scale cpu -o selectors=k-Means -o budgets=4000``; an unknown selector is an error."""
    if selectors is not None:
        unknown = sorted(set(selectors) - set(L.TABLE1_SELECTORS))
        if unknown:
            raise ValueError(f"b_table1 has no selector {unknown}; its selectors: {', '.join(L.TABLE1_SELECTORS)}")
    return [
        c for c in grid if (selectors is None or c["selector"] in selectors) and (budgets is None or c["m"] in budgets)
    ]


def table1_lenet_configs(selectors=None, budgets=None, algorithms=None) -> list[dict]:
    """The LeNet stand-in's grid: every Table 1 selector x :data:`~.ssl.ARMS` x :data:`~.ssl.LENET_BUDGETS`
    (``selectors`` / ``budgets`` / ``algorithms``: narrow it, as ``-o selectors=Random,RDSS -o budgets=40``)."""
    if algorithms is not None and set(algorithms) - set(L.ARMS):
        raise ValueError(f"b_table1_lenet has no arm {sorted(set(algorithms) - set(L.ARMS))}; its arms: {L.ARMS}")
    grid = [
        {"selector": s, "algorithm": a, "m": m}
        for m in L.LENET_BUDGETS
        for s in L.TABLE1_SELECTORS
        for a in L.ARMS
        if algorithms is None or a in algorithms
    ]
    return table1_narrow(grid, selectors, budgets)


def table1_lenet_ema_configs(selectors=None, budgets=None) -> list[dict]:
    """The reading ``freematch_ema``: FreeMatch with its EMA at :data:`~.ssl.LENET_FREEMATCH_EMA` for every Table 1
    selector and budget of the LeNet grid (its controls read Stratified labels at m = 10 and RDSS at m = 40);
    FlexMatch and the supervised arm keep no such EMA, so the main grid's records are theirs."""
    ema = L.LENET_FREEMATCH_EMA
    grid = [
        {"selector": s, "algorithm": "FreeMatch", "m": m, "freematch_ema": ema}
        for m in L.LENET_BUDGETS
        for s in L.TABLE1_SELECTORS
    ]
    return table1_narrow(grid, selectors, budgets)
