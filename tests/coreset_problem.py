"""A last-layer problem shared by the tests of sslkit.coreset's gradients, batches and Retrieve: a softmax-regression
last layer (a real nn.Linear, float64, C classes, D features), soft-target unlabeled losses with a mask, a labeled
set; autograd's per-sample gradient row (the reference for every closed form); and the problem's closed forms."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from sslkit.coreset import last_layer_gradients, logit_gradients

C, D = 4, 5


def make_problem(n_unlabeled=40, n_labeled=15, seed=0, scale=1.0):
    """A softmax-regression last layer, unlabeled soft-target CE gradients (masked), labeled set."""
    gen = torch.Generator().manual_seed(seed)
    lin = torch.nn.Linear(D, C).double()
    with torch.no_grad():
        lin.weight.copy_(torch.randn(C, D, generator=gen, dtype=torch.float64))
        lin.bias.copy_(torch.randn(C, generator=gen, dtype=torch.float64))
    h_u = torch.randn(n_unlabeled, D, generator=gen, dtype=torch.float64) * scale
    targets = torch.softmax(torch.randn(n_unlabeled, C, generator=gen, dtype=torch.float64), dim=1)
    mask = (torch.rand(n_unlabeled, generator=gen, dtype=torch.float64) > 0.2).double()
    h_l = torch.randn(n_labeled, D, generator=gen, dtype=torch.float64)
    y = torch.randint(C, (n_labeled,), generator=gen)
    return lin, h_u, targets, mask, h_l, y


def unlabeled_losses(lin, h_u, targets, mask):
    logits = lin(h_u)
    return mask * -(targets * F.log_softmax(logits, dim=1)).sum(dim=1), logits


def autograd_row(loss, lin):
    gb, gw = torch.autograd.grad(loss, (lin.bias, lin.weight), retain_graph=True)
    return torch.cat([gb, gw.flatten()])


def last_layer_problem() -> dict:
    """``make_problem()``'s closed-form unlabeled gradients ``G`` (``[g0 | g0 (x) h]``) and labeled logits ``Z``."""
    lin, h_u, targets, mask, h_l, y = make_problem()
    losses, logits = unlabeled_losses(lin, h_u, targets, mask)
    g0 = logit_gradients(losses, logits)
    G = last_layer_gradients(g0, h_u.detach())
    with torch.no_grad():
        Z = lin(h_l)
    return dict(lin=lin, h_u=h_u, h_l=h_l, y=y, g0=g0, G=G, Z=Z, targets=targets, mask=mask)
