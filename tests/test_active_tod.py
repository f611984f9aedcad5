"""sslkit.active.tod: the L2 distance of two models' softmax outputs."""

from __future__ import annotations

import pytest
import torch

from sslkit.active import TODSemi, temporal_output_discrepancy
from sslkit.models import MLP

pytestmark = pytest.mark.usefixtures("one_thread")  # conftest.py


def test_tod_is_the_l2_distance_of_the_two_models_softmax_outputs():
    torch.manual_seed(0)
    now, before = MLP(4, 3, hidden=(5,), dropout=0.0), MLP(4, 3, hidden=(5,), dropout=0.0)
    X = torch.randn(25, 4)
    with torch.no_grad():
        pn, pb = torch.softmax(now(X)[0], 1), torch.softmax(before(X)[0], 1)
    expect = ((pn - pb) ** 2).sum(1).sqrt()
    torch.testing.assert_close(temporal_output_discrepancy(pn, pb), expect)
    sel = TODSemi(5).fit(now, before, X)
    assert sel.indices_.tolist() == torch.argsort(expect, descending=True)[:5].tolist()
    assert float(TODSemi(3).fit(now, now, X).scores_.abs().max()) == 0.0
