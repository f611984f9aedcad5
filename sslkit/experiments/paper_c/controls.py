"""Paper C's positive controls: the orderings of its own tables that each CPU stand-in of its experiments must show
before it may decide a claim (:mod:`sslkit.experiments.report.controls` says the rule and the gate). Chosen from
Tables 5-7 and 12 (numbers read from :mod:`sslkit.experiments.paper_numbers`): Full above a 10 % random coreset,
OOD data hurting VAT and DS3L repairing it -- never Retrieve's own claims."""

from __future__ import annotations

from functools import partial

from ..report.controls import Control, key, printed, shared
from .experiments import BAYESIAN, EXTENDED, LASTLAYER, MEMORY, ROBUST, ROBUST_CIFAR10, TRADEOFF, VARIANTS
from .robust import FINAL_MODEL


def _c5(algorithm, method, fraction) -> float:
    return printed("c_tables5_10", algorithm=algorithm, dataset="cifar10", method=method, fraction=fraction)


_NAMES = {"vat": "VAT", "mean_teacher": "Mean Teacher", "fixmatch": "FixMatch"}
#: paper C's traditional SSL (Tables 5-7, CIFAR-10): Full above a 10 % random coreset for each algorithm, and a 30 %
#: random coreset above a 10 % one (VAT)
_C_TRADEOFF = tuple(
    Control(
        f"C-ctl-full-{a}",
        f"{_NAMES[a]}: Full above a 10 % random coreset",
        f"Table {5 + i} (CIFAR-10)",
        {"algorithm": a, "method": "full", "fraction": 1.0},
        {"algorithm": a, "method": "random", "fraction": 0.1},
        (_c5(a, "full", 0.1), _c5(a, "random", 0.1)),
        scope={"protocol": "cpu", "normalize_weights": None},
    )
    for i, a in enumerate(("vat", "mean_teacher", "fixmatch"))
) + (
    Control(
        "C-ctl-random-30",
        "VAT: a 30 % random coreset above a 10 % one",
        "Table 5 (CIFAR-10)",
        {"algorithm": "vat", "method": "random", "fraction": 0.3},
        {"algorithm": "vat", "method": "random", "fraction": 0.1},
        (_c5("vat", "random", 0.3), _c5("vat", "random", 0.1)),
        scope={"protocol": "cpu", "normalize_weights": None},
    ),
)


def _c12(scenario, dataset, method, ratio) -> float:
    return printed("c_table12", scenario=scenario, dataset=dataset, method=method, ratio=ratio)


#: a full-set method's run of the robust grid's main schedule (no coreset budget, no schedule-study epochs)
_FULL_SET = {"fraction": None, "epochs": None}


def robust_control(
    label: str,
    tag: str,
    text: str,
    hi: tuple,
    lo: tuple,
    scenario: str = "ood",
    dataset: str = "mnist",
    *,
    protocol: str | None = None,
    metric: str = "test_acc",
) -> Control:
    """A control of the robust grid's stand-in ``label`` (its ``protocol``, ``label`` when None): the full-set method
    ``hi = (method, ratio)`` above ``lo`` in ``metric``, as Table 12 prints them for ``dataset`` (OOD: MNIST or
    CIFAR-10; imbalance: CIFAR-10, the only dataset it has imbalance on). A new robust stand-in (another protocol, or
    another reading of one protocol's records: ``final_test_acc``, the final model where the protocol selects the
    best-validation epoch) declares its controls with it."""
    dataset = dataset if scenario == "ood" else "cifar10"
    paper = tuple(_c12(scenario, dataset, *arm) for arm in (hi, lo))
    ratio = f"{hi[1]:g}" if hi[1] == lo[1] else f"{hi[1]:g} / {lo[1]:g}"
    name = {"mnist": "MNIST", "cifar10": "CIFAR-10"}[dataset]
    where = f"Table 12 ({name} {'OOD' if scenario == 'ood' else 'imbalance'}, ratio {ratio})"
    arms = tuple({"method": m, "ratio": r, **_FULL_SET} for m, r in (hi, lo))
    scope = {"protocol": protocol or label}
    return Control(f"C-ctl-{label}-{tag}", text, where, *arms, paper, scope=scope, stand_in=label, metric=metric)


def robust_ood(label: str, dataset: str = "mnist", **reading) -> tuple:
    """Paper C's robust SSL on ``dataset``'s OOD scenario (Table 12, its gaps far beyond Table 13's standard
    deviations; the same five orderings hold in its MNIST and its CIFAR-10 rows): OOD data hurts VAT (below
    Supervised at 75 %, below itself at 25 %), and DS3L repairs it at every ratio. ``reading``: ``protocol`` and
    ``metric`` of :func:`robust_control`."""
    arms = (
        ("sup-vat-75", "Supervised above VAT at 75 % OOD", ("supervised", 0.75), ("vat", 0.75)),
        ("ds3l-vat-75", "DS3L above VAT at 75 % OOD", ("ds3l", 0.75), ("vat", 0.75)),
        ("ds3l-vat-50", "DS3L above VAT at 50 % OOD", ("ds3l", 0.5), ("vat", 0.5)),
        ("ds3l-vat-25", "DS3L above VAT at 25 % OOD", ("ds3l", 0.25), ("vat", 0.25)),
        ("vat-25-75", "VAT at 25 % OOD above VAT at 75 %", ("vat", 0.25), ("vat", 0.75)),
    )
    return tuple(robust_control(label, *arm, dataset=dataset, **reading) for arm in arms)


def robust_ood_at(label: str, dataset: str = "mnist", ratio: float = 0.75, **reading) -> tuple:
    """The controls of :func:`robust_ood` whose arms are both at OOD ``ratio``: a reading that runs one ratio only
    (at 75 %: Supervised above VAT, DS3L above VAT)."""
    return tuple(c for c in robust_ood(label, dataset, **reading) if c.higher["ratio"] == c.lower["ratio"] == ratio)


def robust_imbalance(label: str, **reading) -> tuple:
    """Paper C's robust SSL under class imbalance (Table 12, CIFAR-10): the strongest imbalance puts VAT below
    Supervised, DS3L repairs it, and VAT gains as the imbalance eases. ``reading``: ``protocol`` and ``metric`` of
    :func:`robust_control`."""
    arms = (
        ("sup-vat-10", "Supervised above VAT at imbalance ratio 0.1", ("supervised", 0.1), ("vat", 0.1)),
        ("ds3l-vat-10", "DS3L above VAT at imbalance ratio 0.1", ("ds3l", 0.1), ("vat", 0.1)),
        ("vat-50-10", "VAT at imbalance ratio 0.5 above ratio 0.1", ("vat", 0.5), ("vat", 0.1)),
    )
    return tuple(robust_control(label, *arm, "imbalance", **reading) for arm in arms)


def final_model(controls, protocol: str) -> tuple:
    """``controls(label, **reading)`` (:func:`robust_ood` / :func:`robust_imbalance`) of ``protocol``'s records, read
    both ways: at the best-validation epoch (``test_acc``; label ``protocol``) and on the final model
    (``final_test_acc``; label :data:`.robust.FINAL_MODEL`'s)."""
    return controls(protocol) + controls(FINAL_MODEL[protocol], protocol=protocol, metric="final_test_acc")


#: the controls of paper C's stand-ins, by ``"<experiment>/<scale>"`` (:func:`~..report.controls.key`)
CONTROLS: dict = {
    key(TRADEOFF, "cpu"): _C_TRADEOFF,
    # the stand-ins that run the trade-off grid's MNIST model and schedule share its controls
    **{key(e, "cpu"): shared(_C_TRADEOFF, TRADEOFF, "cpu") for e in (VARIANTS, EXTENDED, BAYESIAN, MEMORY, LASTLAYER)},
    # the robust grid's scale holds five stand-ins, one per protocol (cpu_val: with the paper's validation set;
    # cpu_val_em: and VAT's entropy minimisation)
    key(ROBUST, "cpu"): (
        robust_ood("cpu")
        + robust_ood("cpu_long")
        + robust_ood("cpu_val")
        + robust_ood("cpu_val_em")
        + robust_imbalance("cpu_imbalance")
    ),
    # paper C's CIFAR-10 OOD split on frozen features: Table 12's CIFAR-10 rows, for each reading of VAT, and each
    # reading of the validation set the paper draws but never says how it uses (App. F.1.2): the test accuracy of the
    # best-validation epoch (model selection), or of the final model (the same records' final_test_acc)
    key(ROBUST_CIFAR10, "cpu"): (
        final_model(partial(robust_ood, dataset="cifar10"), "cpu_cifar10")
        + final_model(partial(robust_ood, dataset="cifar10"), "cpu_cifar10_em")
        + final_model(robust_imbalance, "cpu_cifar10_imbalance")
        + final_model(partial(robust_ood_at, dataset="cifar10", ratio=0.75), "cpu_cifar10_lowlr")
    ),
}
