"""Per-class Retrieve (CORDS' ``PerClass`` selection): Algorithm 2 run inside each (pseudo-)class.

The unlabeled pool is split by hypothesised class ``c`` (the current model's argmax, as for CRUST); class
``c`` gets the budget ``k_c`` proportional to its size (:func:`sslkit.coreset.proportional_budgets`: the
largest-remainder rounding, so the budgets sum to ``k`` exactly -- CORDS takes ``ceil(k |U_c| / N)``, which can
exceed ``k``), and :class:`~sslkit.coreset.Retrieve` picks ``k_c`` points of ``U_c`` against the labeled samples
of class ``c`` only (eq. 5-7 with ``L_S`` the mean cross-entropy of that class's labeled samples). The coreset
is the union, class by class. The point of the variant: the coreset's class mix follows the model's
predictions on the pool, where plain Retrieve may concentrate on a few classes.
"""

from __future__ import annotations

import time

import torch

from sslkit._checks import check_budget, check_count, check_gradients, check_labels, check_seed
from sslkit.coreset.crust import proportional_budgets
from sslkit.coreset.retrieve import Retrieve, round_step
from sslkit.coreset.strategy import CoresetStrategy, SelectionInputs, require

__all__ = ["PerClassRetrieve"]


class PerClassRetrieve(CoresetStrategy):
    """``PerClassRetrieve(k, seed=0, **retrieve_options).fit(unlabeled_grads, labeled_logits, labels, classes,
    labeled_features=None)`` (module docstring).

    ``classes``: the ``N`` hypothesised classes of the unlabeled rows; ``retrieve_options`` go to every
    :class:`~sslkit.coreset.Retrieve` (``lr``, ``lam``, ``greedy``, ``epsilon``, ``cords_compatible``...); class
    ``c`` uses ``seed + c``. Attributes after ``fit``: ``indices_`` (int64 numpy, class by class in increasing
    class order, each in Retrieve's pick order), ``weights_`` (float32 ones), ``budgets_`` (per class),
    ``classes_`` (the class of each chosen index), ``seconds_``, ``timings_``. Raises ``ValueError`` when a class with a
    non-zero budget has no labeled sample (there is no labeled loss to lower). ``select(inputs)``: as
    :class:`~sslkit.coreset.Retrieve`'s, with ``inputs.pseudo_labels`` as the classes.
    """

    needs = ("gradients", "labeled", "pseudo_labels")

    def __init__(self, k, *, seed=0, **retrieve_options):
        self.k = check_count(k, "k", allow_zero=False)
        self.seed = check_seed(seed)
        self.options = retrieve_options
        Retrieve(1, seed=seed, **retrieve_options)  # validate the options now, not at the first class

    def fit(self, unlabeled_grads, labeled_logits, labels, classes, labeled_features=None):
        t0 = time.perf_counter()
        G = check_gradients(unlabeled_grads)
        N = G.shape[0]
        k = check_budget(self.k, N)
        Z = torch.as_tensor(labeled_logits)
        if Z.dim() != 2:
            raise ValueError(f"labeled_logits must be 2-D (n_labeled x C), got shape {tuple(Z.shape)}")
        C = Z.shape[1]
        y = check_labels(labels, Z.shape[0], C, device=Z.device)
        pseudo = check_labels(classes, N, C, device=G.device)
        if labeled_features is not None and len(labeled_features) != Z.shape[0]:
            raise ValueError(f"labeled features has {len(labeled_features)} rows but labeled logits has {Z.shape[0]}")
        budgets = proportional_budgets(torch.bincount(pseudo.cpu(), minlength=C), k)
        chosen, owner = [], []
        for c in range(C):
            if budgets[c] == 0:
                continue
            rows = torch.nonzero(pseudo == c).flatten()
            lab = torch.nonzero(y == c).flatten()
            if lab.numel() == 0:
                raise ValueError(
                    f"class {c} gets {int(budgets[c])} coreset points ({rows.numel()} unlabeled samples are predicted "
                    "as it) but has no labeled sample: per-class Retrieve needs labeled data in every class"
                )
            H = None if labeled_features is None else torch.as_tensor(labeled_features)[lab]
            r = Retrieve(int(budgets[c]), seed=self.seed + c, **self.options).fit(G[rows], Z[lab], y[lab], H)
            chosen.append(rows.cpu()[torch.from_numpy(r.indices_)])
            owner.append(torch.full((int(budgets[c]),), c, dtype=torch.long))
        self.budgets_ = budgets
        self.classes_ = torch.cat(owner)
        self.timings_ = {"total": time.perf_counter() - t0}
        return self._set_result(torch.cat(chosen), torch.ones(k), t0)

    def fit_inputs(self, inputs: SelectionInputs):
        require(inputs, "PerClassRetrieve", "gradients", "labeled_logits", "labels", "pseudo_labels")
        return self.with_params(**round_step(self, inputs)).fit(
            inputs.gradients, inputs.labeled_logits, inputs.labels, inputs.pseudo_labels, inputs.labeled_features
        )

    def __repr__(self):
        return f"PerClassRetrieve(k={self.k}, seed={self.seed})"
