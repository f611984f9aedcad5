"""Tests of sslkit.models.utils: the weight-decay parameter groups (BatchNorm and biases undecayed), their input
checks."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from sslkit.models import (
    MLP,
    count_parameters,
    no_weight_decay_names,
    param_groups,
    wrn28_2,
)

torch.set_num_threads(1)


def test_param_groups_skip_bn_and_bias():
    torch.manual_seed(0)
    wrn = wrn28_2(10)
    groups = param_groups(wrn, 5e-4)
    assert [g["weight_decay"] for g in groups] == [5e-4, 0.0]
    decay_ids = {id(p) for p in groups[0]["params"]}
    names = dict(wrn.named_parameters())
    skip = no_weight_decay_names(wrn)
    for n, p in names.items():
        is_bn_or_bias = n.endswith(".bias") or ".bn" in n or n.startswith("bn.")
        assert (n in skip) == is_bn_or_bias, n
        assert (id(p) in decay_ids) == (not is_bn_or_bias), n
    # decayed = every conv weight + the classifier weight.
    n_weights = sum(1 for m in wrn.modules() if isinstance(m, (nn.Conv2d, nn.Linear)))
    assert len(groups[0]["params"]) == n_weights
    assert sum(p.numel() for g in groups for p in g["params"]) == count_parameters(wrn)
    torch.optim.SGD(groups, lr=0.03, momentum=0.9, nesterov=True)  # usable as is


def test_param_groups_mlp_and_frozen_params():
    m = MLP(4, 2, hidden=(8,))
    m.classifier.weight.requires_grad_(False)
    groups = param_groups(m, 1e-4)
    assert [len(g["params"]) for g in groups] == [1, 2]  # body.0.weight ; body.0.bias, classifier.bias
    assert param_groups(m, 0)[0]["weight_decay"] == 0.0


@pytest.mark.parametrize("wd", [-1e-4, float("nan"), "0.1", True])
def test_param_groups_bad_weight_decay(wd):
    with pytest.raises(ValueError, match="weight_decay"):
        param_groups(MLP(4, 2), wd)


def test_param_groups_bad_model():
    with pytest.raises(TypeError, match="model must be a torch.nn.Module"):
        param_groups("model", 1e-4)
