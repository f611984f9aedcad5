"""sslkit.engine.sampling.UnlabeledSampler: successive seeded permutations of the pool, a restriction to a weighted
subset (one epoch over it visits each sample once) and the checks on a subset."""

import pytest
import torch

from sslkit.engine import UnlabeledSampler
from sslkit.seeding import make_generator


def test_unrestricted_sampler_cuts_successive_permutations():
    s = UnlabeledSampler(10, 4, make_generator(0), torch.device("cpu"))
    got = torch.cat([s.next()[0] for _ in range(5)])  # 20 = two full permutations
    g = make_generator(0)
    want = torch.cat([torch.randperm(10, generator=g), torch.randperm(10, generator=g)])
    assert torch.equal(got, want) and s.next()[1] is None and s.size == 10


def test_restricted_sampler_draws_only_the_subset_with_its_weights():
    s = UnlabeledSampler(50, 4, make_generator(1), torch.device("cpu"))
    subset, w = torch.tensor([3, 7, 11, 19, 23, 42]), torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    s.restrict(subset, w)
    seen = []
    for _ in range(6):
        idx, wt = s.next()
        assert idx.numel() == 4 and set(idx.tolist()) <= set(subset.tolist())
        assert torch.equal(wt, w[torch.searchsorted(subset, idx)])
        seen += idx.tolist()
    assert sorted(seen[:6]) == subset.tolist()  # one epoch over the subset visits each sample once
    assert s.size == 6 and s.restricted
    s.reset()
    assert s.size == 50 and not s.restricted and s.next()[1] is None


@pytest.mark.parametrize(
    "indices, weights, match",
    [
        ([], None, "non-empty"),
        ([0.5, 1.0], None, "integer"),
        ([0, 50], None, r"\[0, 50\)"),
        ([-1, 2], None, "lie in"),
        ([1, 1], None, "distinct"),
        ([1, 2], [1.0], "one entry per index"),
        ([1, 2], [1.0, -1.0], "non-negative"),
        ([1, 2], [0.0, 0.0], "not all zero"),
        ([1, 2], [1.0, float("nan")], "finite"),
    ],
)
def test_sampler_refuses_bad_subsets(indices, weights, match):
    s = UnlabeledSampler(50, 4, make_generator(1), torch.device("cpu"))
    with pytest.raises(ValueError, match=match):
        s.restrict(indices, weights)
