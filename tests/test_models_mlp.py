"""Tests of sslkit.models.mlp: the MLP's layers, widths and dropout, paper A's widths, bad configurations."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from sslkit.models import (
    MLP,
    PAPER_A_MLP_HIDDEN,
    count_parameters,
)

torch.set_num_threads(1)


def test_mlp_layers_widths_and_dropout():
    m = MLP(20, 7, hidden=(512, 256))
    linears = [lin for lin in m.modules() if isinstance(lin, nn.Linear)]
    assert [(lin.in_features, lin.out_features) for lin in linears] == [(20, 512), (512, 256), (256, 7)]
    drops = [d for d in m.modules() if isinstance(d, nn.Dropout)]
    assert len(drops) == 2 and all(d.p == 0.2 for d in drops)
    assert sum(isinstance(r, nn.ReLU) for r in m.modules()) == 2
    assert m.feature_dim == 256
    assert [type(layer).__name__ for layer in m.body] == ["Linear", "ReLU", "Dropout"] * 2


def test_mlp_default_and_logistic_regression():
    m = MLP(5, 2)
    assert m.hidden == (256, 256) and m.dropout == 0.2
    lr = MLP(5, 3, hidden=())
    assert lr.feature_dim == 5 and count_parameters(lr) == 5 * 3 + 3
    x = torch.randn(4, 5)
    logits, feats = lr(x)
    torch.testing.assert_close(feats, x)


def test_paper_a_mlp_widths():
    assert PAPER_A_MLP_HIDDEN == {
        "adult": (256, 256),
        "banknote": (256, 256),
        "breast_cancer": (256, 256),
        "credit_default": (256, 256),
        "covertype": (512, 512),
        "shuttle": (512, 256),
        "dry_bean": (512, 256),
    }
    for name, hidden in PAPER_A_MLP_HIDDEN.items():
        assert MLP(10, 2, hidden=hidden).feature_dim == hidden[-1], name


def test_mlp_dropout_active_only_in_train_mode():
    torch.manual_seed(0)
    m = MLP(6, 3, hidden=(512, 512), dropout=0.5)
    seen = {}
    m.body[5].register_forward_hook(lambda mod, inp, out: seen.update(inp=inp[0], out=out))
    x = torch.randn(64, 6)
    _, f_train = m.train()(x)
    assert torch.equal(f_train, seen["out"])  # features = output of the last dropout
    active = seen["inp"] != 0
    dropped = active & (f_train == 0)
    assert 0.45 < dropped.sum().item() / active.sum().item() < 0.55  # about p of the active units dropped
    kept = active & ~dropped
    torch.testing.assert_close(f_train[kept], seen["inp"][kept] / 0.5)  # inverted dropout scaling
    _, f_eval = m.eval()(x)
    assert torch.equal(seen["out"], seen["inp"])  # eval: dropout is the identity
    h = torch.relu(m.body[3](torch.relu(m.body[0](x))))  # the net without dropout
    torch.testing.assert_close(f_eval, h)


@pytest.mark.parametrize(
    "kwargs,exc,msg",
    [
        (dict(in_features=0), ValueError, "in_features"),
        (dict(num_classes=-1), ValueError, "num_classes"),
        (dict(hidden=(256, 0)), ValueError, "hidden width"),
        (dict(hidden=256), TypeError, "hidden must be a sequence"),
        (dict(dropout=1.0), ValueError, "dropout"),
        (dict(dropout=-0.1), ValueError, "dropout"),
    ],
)
def test_mlp_bad_config(kwargs, exc, msg):
    with pytest.raises(exc, match=msg):
        MLP(**{"in_features": 4, "num_classes": 2, **kwargs})
