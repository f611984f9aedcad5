"""CrustMixup (sslkit.algorithms.crust): CRUST's training side, the mixed coreset batch handed to the base algorithm."""

import torch

from sslkit.algorithms import Batch, CrustMixup, LossOutput, SSLAlgorithm, UnlabeledLosses
from sslkit.coreset import mixup
from sslkit.models import MLP


def test_crust_mixup_hands_the_mixed_coreset_batch_to_the_base():
    rec = Recorder()
    algo = CrustMixup(rec, alpha=0.5)
    x_u, w = torch.randn(8, 4), torch.rand(8)
    batch = Batch(torch.randn(2, 4), torch.zeros(2, dtype=torch.long), x_u, torch.arange(8), w)
    model = MLP(4, 2, hidden=(4,))
    torch.manual_seed(3)
    out = algo.loss(model, batch)
    torch.manual_seed(3)
    xm, _, lam = mixup(x_u, 0.5)
    assert torch.allclose(rec.seen.x_u, xm) and rec.seen.u_weight is w and out.logs["mixup_lambda"] == lam
    algo.unlabeled_losses(model, x_u)  # a selection pass: the samples themselves, unmixed
    assert rec.seen_u is x_u


class Recorder(SSLAlgorithm):
    name, uses_unlabeled, lambda_u = "recorder", True, 1.0

    def unlabeled_losses(self, model, x_u, u_idx=None):
        self.seen_u = x_u
        z = model(x_u)[0]
        return UnlabeledLosses(z.pow(2).sum(1), None, z, None)

    def loss(self, model, batch):
        self.seen = batch
        z = model(batch.x_u)[0]
        per = z.pow(2).sum(1)
        return LossOutput(per.mean(), {"unsup_loss": per.mean().detach()}, UnlabeledLosses(per, None, z, None))
