"""Pseudo-Label (sslkit.algorithms.pseudo_label), paper A's SSL baseline: pseudo-labels only above the threshold with
the loss a mean over the whole batch, the warm-up, then a frozen teacher."""

import pytest
import torch
import torch.nn.functional as F
from test_algorithms_risk_rewrite import CPU, Table, blobs, ids

from sslkit.algorithms import Batch, FitContext, PseudoLabel, pseudo_labels
from sslkit.engine import Trainer
from sslkit.models import MLP

torch.set_num_threads(1)


def test_pseudo_labels_only_above_threshold_and_loss_is_mean_over_whole_batch():
    logits = torch.log(torch.tensor([[0.96, 0.04], [0.6, 0.4], [0.05, 0.95], [0.2, 0.8]]))
    labels, mask = pseudo_labels(logits, 0.95)
    assert labels.tolist() == [0, 0, 1, 1] and mask.tolist() == [1.0, 0.0, 1.0, 0.0]
    assert pseudo_labels(logits, 0.5)[1].tolist() == [1.0] * 4
    model = Table(8, 2)
    with torch.no_grad():
        model.W[4:].copy_(logits)
    algo = PseudoLabel(0.95, warmup_epochs=0, lambda_u=2.0)
    algo.setup(model, FitContext(num_classes=2, device=CPU))
    x_l, y_l, x_u = ids(0, 4), torch.tensor([0, 1, 0, 1]), ids(4, 8)
    out = algo.loss(model, Batch(x_l, y_l, x_u, step=0))
    ce_u = F.cross_entropy(model.W[4:], labels, reduction="none")
    unsup = (ce_u * mask).sum() / 4  # normalised by the whole unlabeled batch (4), not by the 2 confident
    assert float(out.logs["unsup_loss"]) == pytest.approx(float(unsup.detach()), rel=1e-6)
    assert float(out.loss.detach()) == pytest.approx(
        float((F.cross_entropy(model.W[:4], y_l) + 2 * unsup).detach()), rel=1e-6
    )
    assert float(out.logs["mask_rate"]) == 0.5


def test_pseudo_label_warmup_then_teacher_is_frozen():
    X, y = blobs([6, 6, 6], seed=0)
    Xu, _ = blobs([20, 20, 20], seed=1)
    algo = PseudoLabel(0.9, warmup_epochs=2)
    tr = Trainer(MLP(2, 3, hidden=(8,)), algo, epochs=4, batch_size=6, device="cpu", progress=False).fit(X, y, Xu)
    assert algo.teacher_epochs_ == [2]
    assert [r["unsup_loss"] for r in tr.history_[:2]] == [0.0, 0.0]
    assert all(not p.requires_grad for p in algo.teacher_.parameters()) and not algo.teacher_.training
    with pytest.raises(ValueError, match="threshold"):
        PseudoLabel(1.5)
