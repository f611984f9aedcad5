"""Resampling experiments on the variance of paper A's risk estimators (§6.1, Figure 1, App. B, Thm 2/7).

A classifier g is trained once and then *fixed*. What varies from trial to trial is the data the risk is
estimated on: ``n_m`` labeled samples of every class m and ``n_U`` unlabeled samples from the mixture
p(x) = Σ_m θ_m p_m(x). Each trial gives the component risks R̂ (k, k) and unlabeled risks R̂_U (k,), and from
them every linear estimator R̂_lin^a (:func:`sslkit.risk.linear_risk`). Over many trials, the empirical
mean of R̂_lin^a estimates R(g) and its empirical variance estimates Var[R̂_lin^a] (Thm 2, Thm 7 for a
symmetric loss, plus the finite-n_U term).

Vectorised: a trial is one row of a (trials, D) tensor of float64 uniforms, laid out as

    [ n_1 draws of class 1 | ... | n_k draws of class k | n_U draws from the mixture ]

so every random number of every trial is drawn in one call per chunk of trials and turned into losses by
an inverse CDF: an index into a held-out pool (:class:`PoolSampler`) or a Gaussian quantile
(:class:`LinearGaussianSampler`); there is no Python loop over trials. One uniform per unlabeled draw
picks both its (hidden) class and the point within the class. Because torch's CPU generator fills
a (T, D) tensor in row-major order, the per-trial loop :func:`naive_resample_estimates` (one
``torch.rand(D)`` per trial) sees exactly the same numbers; the tests check that both give the same
estimates.

The risk mathematics (loss matrices, R̂, R̂_lin^a, covariances, Thm 2/3/7/8, EC, PNU) all comes from
:mod:`sslkit.risk`, and the samplers and vectorised trials from :mod:`sslkit.risk.monte_carlo` (re-exported
here); this module builds the experiments' populations and cells and summarises them.
"""

from __future__ import annotations

import functools

import numpy as np
import torch

from sslkit._checks import check_count, check_seed
from sslkit.risk.monte_carlo import (  # the samplers and trials live beside the variance formulas they test
    LinearGaussianSampler,
    PoolSampler,
    Population,
    check_n_per_class,
    check_n_unlabeled,
    check_prior,
    linear_coefficients,
    mean_with_se,
    naive_resample_estimates,
    resample_estimates,
    resample_risks,
    theoretical_variance,
    variance_ratio,
    variance_with_se,
)

__all__ = [
    "PROTOCOL_VERSION",
    "PoolSampler",
    "LinearGaussianSampler",
    "Population",
    "fit_logistic",
    "linear_coefficients",
    "resample_risks",
    "resample_estimates",
    "naive_resample_estimates",
    "mean_with_se",
    "variance_with_se",
    "variance_ratio",
    "theoretical_variance",
    "variance_cell",
    "cell_seed",
    "comparison_estimators",
    "comparison_cell",
    "gaussian_pair_model",
    "gaussian_pair_sampler",
    "heldout_scores_binary",
    "heldout_losses_multiclass",
    "figure1_samplers",
    "figure1_cell",
    "figure1_run",
    "figure1_sampler",
    "appendix_b_dataset",
    "appendix_b_pool",
    "appendix_b_run",
    "FIGURE1_THETAS",
    "FIGURE1_N_UNLABELED",
    "FIGURE1_N_PER_CLASS",
    "FIGURE1_TRIALS",
    "APPENDIX_B_N_PER_CLASS",
    "APPENDIX_B_N_UNLABELED",
    "APPENDIX_B_PRIORS",
]

#: Protocol version of the records that this module's run functions make: notebooks and drivers pass it as
#: ``run_grid(..., version=PROTOCOL_VERSION)`` and each record stores it (``protocol_version``; records without
#: it are version 1). Bump it with a change that alters those runs' results: the runner then refuses to reuse
#: the older records silently (:class:`sslkit.experiments.runs.store.StaleResultsError`).
PROTOCOL_VERSION = 1


_DTYPE = torch.float64


# ------------------------------------------------------------------------------------------ training g
def fit_logistic(X, y, *, epochs=100, lr=0.1, batch_size=10, seed=0):
    """Logistic regression g(x) = w^T x + b trained by minibatch SGD on the BCE loss (paper A §6.1).

    ``y`` holds labels 0/1; label 0 is paper A's class 1 and ``g > 0`` predicts it (the "bce" convention
    of :func:`sslkit.risk.loss_matrix`). Weights start at zero; batches are drawn by a seeded permutation
    every epoch. Returns ``(w, b)`` as a float64 array and a float.
    """
    from sslkit.risk import loss_matrix

    seed = check_seed(seed)
    X = torch.as_tensor(np.asarray(X, dtype=np.float64))
    yy = torch.as_tensor(np.asarray(y), dtype=torch.int64)
    if X.ndim != 2 or yy.shape != (X.shape[0],):
        raise ValueError(f"X must be (n, d) and y (n,), got {tuple(X.shape)} and {tuple(yy.shape)}")
    if not set(yy.unique().tolist()) <= {0, 1}:
        raise ValueError("y must hold binary labels 0 and 1")
    epochs = check_count(epochs, "epochs", allow_zero=False)
    batch_size = check_count(batch_size, "batch_size", allow_zero=False)
    w = torch.zeros(X.shape[1], dtype=_DTYPE, requires_grad=True)
    b = torch.zeros((), dtype=_DTYPE, requires_grad=True)
    opt = torch.optim.SGD([w, b], lr=lr)
    gen = torch.Generator().manual_seed(seed)
    for _ in range(epochs):
        perm = torch.randperm(X.shape[0], generator=gen)
        for start in range(0, X.shape[0], batch_size):
            idx = perm[start : start + batch_size]
            loss = loss_matrix(X[idx] @ w + b, "bce").gather(1, yy[idx, None]).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    return w.detach().numpy().copy(), float(b.detach())


def variance_cell(
    sampler, prior, n_per_class, n_unlabeled, estimators, *, trials, seed, reference=None, chunk_size=None
) -> dict:
    """One experimental condition: resample, then per estimator the empirical mean and variance with
    standard errors, the theoretical variance, and the variance ratio to ``reference`` (empirical with
    SE, and theoretical). Returns a flat JSON-friendly dict (keys ``<name>_<stat>``) plus ``risk`` = R(g).
    """
    est = resample_estimates(
        sampler, prior, n_per_class, n_unlabeled, estimators, trials=trials, seed=seed, chunk_size=chunk_size
    )
    pop = sampler.population()
    out = {"risk": pop.risk(prior), "trials": int(trials)}
    theory = {}
    for name, a in estimators.items():
        m, m_se = mean_with_se(est[name])
        v, v_se = variance_with_se(est[name])
        theory[name] = theoretical_variance(pop, prior, n_per_class, n_unlabeled, a)
        out.update(
            {
                f"{name}_mean": m,
                f"{name}_mean_se": m_se,
                f"{name}_var": v,
                f"{name}_var_se": v_se,
                f"{name}_var_theory": theory[name],
                f"{name}_var_theory_inf": theoretical_variance(pop, prior, n_per_class, None, a),
            }
        )
    if reference is not None:
        for name in estimators:
            if name == reference:
                continue
            r, r_se = variance_ratio(est[name], est[reference])
            out.update(
                {f"{name}_ratio": r, f"{name}_ratio_se": r_se, f"{name}_ratio_theory": theory[name] / theory[reference]}
            )
    return out


# ------------------------------------------------------------------------------------------ paper A setups
#: Paper A §6.1 (Figure 1): class priors, unlabeled sizes, labeled sizes per class, trials.
FIGURE1_THETAS = (0.3, 0.5, 0.7)
FIGURE1_N_UNLABELED = (50, 100, 200, 500, 1000)
FIGURE1_N_PER_CLASS = (30, 30)
FIGURE1_TRIALS = 5000
#: Paper A App. B: labeled size per class for risk estimation, unlabeled sizes, priors (7 classes).
APPENDIX_B_N_PER_CLASS = 5
APPENDIX_B_N_UNLABELED = (100, 200, 500, 1000, 2000)
APPENDIX_B_PRIORS = {
    "uniform": tuple([1 / 7] * 7),
    "skewed": tuple(v / 140 for v in (57, 34, 21, 13, 7, 5, 3)),
}


def cell_seed(seed, *config) -> int:
    """A 63-bit seed for one experimental condition, derived from ``seed`` and the condition's values
    (so conditions are independent and each is reproducible on its own)."""
    import zlib

    entropy = [check_seed(seed)] + [zlib.crc32(repr(c).encode()) for c in config]
    state = np.random.SeedSequence(entropy).generate_state(2, dtype=np.uint32).astype(np.uint64)
    return int(((state[0] << np.uint64(32)) | state[1]) >> np.uint64(1))


def gaussian_pair_model(seed=0):
    """g of §6.1 for the Gaussian pair: logistic regression fitted by SGD (:func:`fit_logistic`) on
    n_1 = n_2 = 30 labeled samples drawn with ``seed``. Returns ``(w, b)``."""
    from sslkit.data import gaussian_pair

    X, y = gaussian_pair(FIGURE1_N_PER_CLASS, seed=seed)
    return fit_logistic(X, y, seed=seed)


def gaussian_pair_sampler(loss, w, b, *, support_size=1_000_000):
    """Losses of g(x) = w^T x + b under the exact class-conditionals of §6.1 (no finite pool)."""
    from sslkit.data import GAUSSIAN_PAIR_MEANS

    return LinearGaussianSampler(w, b, GAUSSIAN_PAIR_MEANS, loss, support_size=support_size)


def heldout_scores_binary(dataset, *, train_fraction=0.2, seed=0):
    """§6.1 on a real binary dataset: split off ``train_fraction`` of the rows (the rest is the held-out
    pool), fit :func:`fit_logistic` on n_1 = n_2 = 30 labeled rows of the training part (features
    standardised with the training part's statistics) and return ``(scores_pool, y_pool)`` with
    g(x) = w^T x + b on every pool row. Label 0 is class 1."""
    from sslkit.data import make_split, standardize

    n_pool = int(round((1 - train_fraction) * len(dataset.y)))
    split = make_split(dataset.y, list(FIGURE1_N_PER_CLASS), n_test=n_pool, seed=seed)
    train_rows = np.concatenate([split.labeled, split.unlabeled])
    _, X_l, X_pool = standardize(dataset.X[train_rows], dataset.X[split.labeled], dataset.X[split.test])
    w, b = fit_logistic(X_l, dataset.y[split.labeled], seed=seed)
    return X_pool @ w + b, dataset.y[split.test]


def heldout_losses_multiclass(dataset, *, train_fraction=0.2, labeled_per_class=10, n_val=60, seed=0, device="cpu"):
    """App. B: split off ``train_fraction`` of the rows (the rest is the held-out pool); train a network
    with one hidden layer of 256 units (ReLU, dropout 0.2) on ``labeled_per_class`` labeled rows per class
    with Adam (1e-3, weight decay 1e-4), batches of 64, ≤ 200 epochs and early stopping on the accuracy of
    ``n_val`` validation rows of the training part (patience 20, min-delta 1e-4; App. C). Returns the
    cross-entropy loss matrix of the pool (N_pool, k), the pool labels and the pool accuracy."""
    from sslkit.algorithms import Supervised
    from sslkit.data import make_split, standardize
    from sslkit.engine import fit
    from sslkit.models import MLP
    from sslkit.risk import loss_matrix
    from sslkit.task import Task

    from .protocol import supervised_config

    k = dataset.num_classes
    n_pool = int(round((1 - train_fraction) * len(dataset.y)))
    split = make_split(dataset.y, labeled_per_class, n_val=n_val, n_test=n_pool, seed=seed)
    train_rows = np.concatenate([split.labeled, split.unlabeled, split.val])
    _, X_l, X_val, X_pool = standardize(
        dataset.X[train_rows], dataset.X[split.labeled], dataset.X[split.val], dataset.X[split.test]
    )
    task = Task(
        X_l=X_l,
        y_l=dataset.y[split.labeled],
        X_val=X_val,
        y_val=dataset.y[split.val],
        model_factory=lambda: MLP(dataset.X.shape[1], k, hidden=(256,), dropout=0.2),
    )
    trainer = fit(task, Supervised(), supervised_config(), seed=seed, device=device)  # the weights drawn under seed
    net = trainer.eval_model.eval()
    with torch.no_grad():
        logits, _ = net(torch.as_tensor(X_pool, dtype=torch.float32, device=trainer.device_))
    logits = logits.double().cpu()
    y_pool = dataset.y[split.test]
    accuracy = float((logits.argmax(1).numpy() == y_pool).mean())
    return loss_matrix(logits, "ce").numpy(), y_pool, accuracy


def comparison_estimators(population, prior, n_per_class, n_unlabeled, loss, *, pnu=True):
    """The a of each estimator compared in §6.1 / App. B, all from the *oracle* covariances of
    ``population`` (the paper estimates C_m "using the entire held-out data"):

    * ``PN``: a = θ (the supervised risk);
    * ``PNU`` (binary, ``pnu=True``): best member of S_PNPU ∪ S_PNNU for n_U → ∞
      (:func:`sslkit.risk.pnu_optimal_a`, §6.1);
    * ``lin``: a* for n_U → ∞ (Thm 3, :func:`sslkit.risk.optimal_a`; Thm 8 with k - 1 entries,
      :func:`sslkit.risk.symmetric_optimal_a`, for a symmetric loss) -- the paper's a*;
    * ``lin_nU``: a* that also accounts for the finite-n_U term (not in the paper; shown for reference).
    """
    from sslkit.risk import is_symmetric, optimal_a, pnu_optimal_a, symmetric_optimal_a

    p = check_prior(prior, population.num_classes)
    n = np.asarray(check_n_per_class(n_per_class, population.num_classes), dtype=np.float64)
    n_unlabeled = check_n_unlabeled(n_unlabeled)
    C = population.covariances
    solve = symmetric_optimal_a if is_symmetric(loss) else optimal_a
    est = {"PN": p}
    if pnu:
        est["PNU"] = np.asarray(pnu_optimal_a(C, p, n))
    est["lin"] = np.asarray(solve(C, p, n))
    if n_unlabeled is not None:
        est["lin_nU"] = np.asarray(
            solve(C, p, n, n_unlabeled=n_unlabeled, unlabeled_covariance=population.unlabeled_covariance(p))
        )
    return est


def comparison_cell(sampler, loss, prior, n_per_class, n_unlabeled, *, trials, seed, pnu=True) -> dict:
    """One condition of §6.1 / App. B: :func:`comparison_estimators` then :func:`variance_cell` with the
    PN estimator as reference; the a vectors are returned too (``<name>_a``)."""
    est = comparison_estimators(sampler.population(), prior, n_per_class, n_unlabeled, loss, pnu=pnu)
    out = variance_cell(sampler, prior, n_per_class, n_unlabeled, est, trials=trials, seed=seed, reference="PN")
    out.update({f"{name}_a": [float(v) for v in a] for name, a in est.items()})
    return out


def figure1_samplers(datasets, losses=("bce", "zero_one"), *, seed=0) -> dict:
    """Every sampler of Figure 1: ``{(dataset, loss): sampler}``.

    ``datasets`` maps a name to a loaded :class:`~sslkit.data.Dataset` (binary, label 0 = class 1) or,
    for ``"gaussian"``, to None. g is trained once per dataset with ``seed`` (the same g for both
    losses): Gaussian -- :func:`gaussian_pair_model` and exact class-conditionals; a real dataset --
    :func:`heldout_scores_binary` and its held-out pool.
    """
    from sslkit.risk import loss_matrix

    samplers = {}
    for name, data in datasets.items():
        if name == "gaussian":
            w, b = gaussian_pair_model(seed)
            for loss in losses:
                samplers[(name, loss)] = gaussian_pair_sampler(loss, w, b)
        else:
            scores, y = heldout_scores_binary(data, seed=seed)
            for loss in losses:
                samplers[(name, loss)] = PoolSampler(loss_matrix(scores, loss), y)
    return samplers


def figure1_cell(samplers, dataset, loss, theta1, n_unlabeled, *, trials=FIGURE1_TRIALS, seed=0) -> dict:
    """One point of Figure 1: θ = (θ_1, 1 - θ_1), n_1 = n_2 = 30, ``n_unlabeled`` unlabeled samples;
    the resampling seed is derived from ``seed`` and the condition (:func:`cell_seed`)."""
    prior = [float(theta1), 1.0 - float(theta1)]
    return comparison_cell(
        samplers[(dataset, loss)],
        loss,
        prior,
        FIGURE1_N_PER_CLASS,
        n_unlabeled,
        trials=trials,
        seed=cell_seed(seed, "figure1", dataset, loss, float(theta1), n_unlabeled),
    )


# ------------------------------------------------------------------------------------------------------
# one record of Figure 1 / Appendix B (what the catalog runs and replays)
# ------------------------------------------------------------------------------------------------------


def _threads() -> int:
    return torch.get_num_threads()


@functools.lru_cache(maxsize=8)
def _figure1_sampler(dataset: str, loss: str, seed: int, threads: int):
    from sslkit.data import load_dataset

    data = None if dataset == "gaussian" else load_dataset(dataset)
    return figure1_samplers({dataset: data}, (loss,), seed=seed)[(dataset, loss)]


def figure1_sampler(dataset: str, loss: str, seed: int):
    """The sampler of one panel of Figure 1 (:func:`figure1_samplers` of that dataset and loss), built once per
    process and torch thread count (the thread count can change the last bits of the trained g)."""
    return _figure1_sampler(dataset, loss, seed, _threads())


def figure1_run(dataset: str, loss: str, theta1: float, n_unlabeled: int, seed: int, *, trials=FIGURE1_TRIALS) -> dict:
    """One record of Figure 1: :func:`figure1_cell` on :func:`figure1_sampler`."""
    samplers = {(dataset, loss): figure1_sampler(dataset, loss, seed)}
    return figure1_cell(samplers, dataset, loss, theta1, n_unlabeled, trials=trials, seed=seed)


def appendix_b_dataset(name: str):
    """A dataset of Appendix B: Dry Bean, Covertype (never downloaded here) or ``"digits0-6"`` (scikit-learn's
    digits 0-6, the 7-class stand-in for Covertype that needs no data files)."""
    import dataclasses

    from sslkit.data import load_dataset

    if name == "digits0-6":
        ds = load_dataset("digits")
        keep = ds.y < 7
        return dataclasses.replace(ds, name="digits0-6", X=ds.X[keep], y=ds.y[keep], classes=ds.classes[:7])
    return load_dataset(name, **({"download": False} if name == "covertype" else {}))


@functools.lru_cache(maxsize=8)
def _appendix_b_pool(name: str, seed: int, threads: int, device: str):
    ds = appendix_b_dataset(name)
    losses, y_pool, accuracy = heldout_losses_multiclass(ds, seed=seed, device=device)
    return ds.classes, PoolSampler(losses, y_pool), accuracy


def appendix_b_pool(name: str, seed: int, device="cpu") -> tuple:
    """``(classes, sampler, g's pool accuracy)`` of one Appendix B dataset (:func:`heldout_losses_multiclass`),
    built once per process, torch thread count and device."""
    return _appendix_b_pool(name, seed, _threads(), str(device))


def appendix_b_run(
    dataset: str, prior: str, n_unlabeled: int, seed: int, *, trials=FIGURE1_TRIALS, device="cpu"
) -> dict:
    """One record of Appendix B: lin(a*)/PN of cross-entropy under prior ``prior`` (:data:`APPENDIX_B_PRIORS`),
    5 labels per class, ``n_unlabeled`` unlabeled samples (no PNU: multiclass), with g's pool accuracy."""
    from .protocol import to_class_order

    classes, sampler, accuracy = appendix_b_pool(dataset, seed, device)
    theta = to_class_order(dataset, classes, APPENDIX_B_PRIORS[prior])
    out = comparison_cell(
        sampler,
        "ce",
        theta,
        APPENDIX_B_N_PER_CLASS,
        n_unlabeled,
        trials=trials,
        seed=cell_seed(seed, "appendix-b", dataset, prior, n_unlabeled),
        pnu=False,
    )
    return {**out, "pool_accuracy": accuracy}
