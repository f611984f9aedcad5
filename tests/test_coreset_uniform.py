"""Paper C's Random baseline (sslkit.coreset.uniform.RandomCoreset): seeded, redrawn per round, unit weights."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from sslkit.coreset import RandomCoreset

pytestmark = pytest.mark.usefixtures("one_thread")  # conftest.py


def test_random_coreset_seeded_and_redrawn():
    a = RandomCoreset(30, seed=5).fit(100).indices_
    assert len(set(a.tolist())) == 30 and int(a.max()) < 100 and a.dtype == np.int64
    assert a.tolist() == RandomCoreset(30, seed=5).fit(torch.zeros(100, 3)).indices_.tolist()
    assert a.tolist() != RandomCoreset(30, seed=5).fit(100, draw=1).indices_.tolist()
    assert a.tolist() != RandomCoreset(30, seed=6).fit(100).indices_.tolist()
    assert RandomCoreset(30).fit(100).weights_.tolist() == [1.0] * 30
