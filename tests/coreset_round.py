"""One selection round's inputs for the coreset strategies' tests (not a test module): a pool of N soft-target
last-layer gradients (bias + weight, width C (1 + D)), a labeled set with every class, pseudo-labels covering every
class (tests/test_conformance_coreset.py, tests/test_coreset_strategy.py)."""

from __future__ import annotations

import torch

from sslkit.coreset import SelectionInputs, last_layer_gradients

N, C, D, N_L, K, B = 120, 3, 4, 30, 20, 10


def inputs(n: int = N, device="cpu", **changes) -> SelectionInputs:
    """A selection round's inputs: bias + weight gradients of soft-target CE logit gradients (width C (1 + D)),
    a labeled set with every class, pseudo-labels covering every class; ``changes`` replace fields."""
    g = torch.Generator().manual_seed(0)
    h_u = torch.relu(torch.randn(n, D, generator=g))
    g0 = torch.softmax(torch.randn(n, C, generator=g), dim=1) - torch.softmax(torch.randn(n, C, generator=g), dim=1)
    fields = {
        "gradients": last_layer_gradients(g0, h_u),
        "labeled_logits": torch.randn(N_L, C, generator=g),
        "labels": torch.arange(N_L) % C,
        "labeled_features": torch.relu(torch.randn(N_L, D, generator=g)),
        "pseudo_labels": torch.arange(n) % C,
        "lr": 0.03,
        "base_lr": 0.03,
        "lam": 1.0,
        "draw": 0,
    }
    fields.update(changes)
    fields = {key: v.to(device) if isinstance(v, torch.Tensor) else v for key, v in fields.items()}
    return SelectionInputs(n, **fields)
