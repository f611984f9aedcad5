"""CUDA path of the shared training loop and of every engine algorithm (skipped without a GPU).

The CPU suite covers the mathematics; these check that nothing in the library pins tensors to the CPU:
each algorithm trains through ``Trainer(device="cuda")`` with mixed precision (``amp="auto"``), its
parameters stay on the device, its losses stay finite and the model learns the easy blobs task; and the
vectorised seeds of paper A run on the device. ``benchmarks/gpu_session.sh`` runs this file first.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from sslkit.algorithms import (
    PNU,
    VAT,
    FixMatch,
    FlexMatch,
    FreeMatch,
    OursEC,
    OursIter,
    PseudoLabel,
    SupervisedRisk,
)
from sslkit.engine import Trainer
from sslkit.models import MLP

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")


def ident(x):
    return x


def blobs(n_per_class, seed, k=3):
    """Well separated 2-D Gaussian blobs, ``n_per_class[c]`` rows of class c (scikit-learn's make_blobs)."""
    from sklearn.datasets import make_blobs

    centres = [(3 * np.cos(2 * np.pi * c / k), 3 * np.sin(2 * np.pi * c / k)) for c in range(k)]
    X, y = make_blobs(n_samples=list(n_per_class), centers=centres, random_state=seed)
    return X.astype(np.float32), y.astype(np.int64)


PRIOR3 = [1 / 3, 1 / 3, 1 / 3]
ALGORITHMS = {
    "sup": lambda n: SupervisedRisk(PRIOR3, n_per_class=n),
    "ours_ec": lambda n: OursEC(PRIOR3, n_per_class=n),
    "ours_iter": lambda n: OursIter(PRIOR3, n_per_class=n, warmup_epochs=1),
    "pseudo_label": lambda n: PseudoLabel(0.9, warmup_epochs=1),
    "vat": lambda n: VAT(1.0),
    "fixmatch": lambda n: FixMatch(0.95),
    "flexmatch": lambda n: FlexMatch(weak=ident, strong=ident, num_unlabeled=600),
    "freematch": lambda n: FreeMatch(weak=ident, strong=ident),
}


@pytest.mark.parametrize("name", list(ALGORITHMS))
def test_every_algorithm_trains_on_cuda_with_amp(name):
    X, y = blobs([20, 20, 20], seed=0)
    Xu, _ = blobs([200, 200, 200], seed=1)
    Xv, yv = blobs([20, 20, 20], seed=2)
    Xt, yt = blobs([100, 100, 100], seed=3)
    torch.manual_seed(0)
    model = MLP(2, 3, hidden=(32, 32), dropout=0.0)
    algo = ALGORITHMS[name](np.bincount(y))
    tr = Trainer(
        model,
        algo,
        device="cuda",
        epochs=30,
        batch_size=32,
        unlabeled_batch_size=64,
        progress=False,
        seed=0,
        num_classes=3,
    )
    tr.fit(X, y, Xu, Xv, yv)
    assert all(p.device.type == "cuda" for p in model.parameters())
    assert tr.amp_dtype_ is not None  # autocast was on
    assert all(math.isfinite(r["loss"]) for r in tr.history_ if "loss" in r)
    # FlexMatch / FreeMatch start with near-zero thresholds (by design), so 30 epochs of this toy task
    # pseudo-label part of the data wrongly: above chance (1/3) is what is asked of them here
    assert tr.score(Xt, yt) > (0.5 if name in ("flexmatch", "freematch") else 0.8)


def test_pnu_trains_on_cuda():
    X, y = blobs([10, 30], seed=0, k=2)
    Xu, _ = blobs([150, 150], seed=1, k=2)
    Xv, yv = blobs([20, 20], seed=2, k=2)
    model = MLP(2, 2, hidden=(16,), dropout=0.0)
    tr = Trainer(
        model,
        PNU([0.5, 0.5], n_per_class=np.bincount(y)),
        device="cuda",
        epochs=40,
        batch_size=16,
        progress=False,
        seed=0,
        num_classes=2,
    )
    tr.fit(X, y, Xu, Xv, yv)
    assert tr.score(*blobs([100, 100], seed=3, k=2)) > 0.8


def test_vectorised_seeds_run_on_cuda():
    from test_paper_a_experiments import vectorised_benchmark

    from sslkit.experiments import paper_a

    tasks = [paper_a.build_task("breast_cancer", "(30,30)", s, n_unlabeled=100, n_val=60) for s in (0, 1, 2)]
    out = vectorised_benchmark().fit_vectorised_mlp(tasks, [0, 1, 2], epochs=5, patience=3, device="cuda")
    assert len(out) == 3 and all(50 <= r["test_acc"] <= 100 for r in out)


def test_threads_auto_leaves_the_cpu_threads_alone_on_cuda():
    """``Trainer(threads="auto")`` sets torch's CPU threads only for a CPU run: on the GPU the count is untouched
    during and after ``fit`` and ``threads_`` records it (``sslkit.device.training_threads``)."""
    X, y = blobs([20, 20, 20], seed=0)
    before = torch.get_num_threads()
    seen = []

    class Spy(SupervisedRisk):
        def loss(self, *args, **kwargs):
            seen.append(torch.get_num_threads())
            return super().loss(*args, **kwargs)

    tr = Trainer(
        MLP(2, 3, hidden=(8,), dropout=0.0),
        Spy(PRIOR3, n_per_class=np.bincount(y)),
        device="cuda",
        epochs=1,
        batch_size=16,
        progress=False,
        seed=0,
        num_classes=3,
        threads="auto",
    )
    tr.fit(X, y)
    assert tr.step_flops_ < 1e8  # a step small enough that a CPU run would take one thread
    assert seen and set(seen) == {before} and tr.threads_ == before == torch.get_num_threads()
