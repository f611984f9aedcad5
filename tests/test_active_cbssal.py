"""sslkit.active.cbssal: the inconsistency score is the summed per-class population variance over the original and its
views."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from sslkit.active import inconsistency

pytestmark = pytest.mark.usefixtures("one_thread")  # conftest.py


def test_inconsistency_is_the_summed_population_variance():
    g = torch.Generator().manual_seed(1)
    P = torch.softmax(torch.randn(6, 15, 4, generator=g), -1)
    expect = P.numpy().var(axis=0, ddof=0).sum(axis=1)
    np.testing.assert_allclose(inconsistency(P).numpy(), expect, rtol=1e-5)
    with pytest.raises(ValueError, match="N \\+ 1 >= 2"):
        inconsistency(P[:1])
