"""sslkit.seeding: one seed reproduces every generator a run draws from (random, numpy's global generator, torch),
explicit generators are independent of the global state, derived seeds are deterministic, distinct and 63-bit."""

import random

import numpy as np
import pytest
import torch

from sslkit.seeding import derive_seeds, make_generator, seed_everything


def draws():
    return random.random(), float(np.random.rand()), float(torch.rand(()))


def test_seed_everything_reproduces_random_numpy_and_torch():
    assert seed_everything(np.int64(7)) == 7 and isinstance(seed_everything(7), int)
    a = draws()
    seed_everything(7)
    assert draws() == a
    seed_everything(8)
    assert all(x != y for x, y in zip(draws(), a))


def test_a_huge_seed_is_reduced_for_numpy_only():
    seed_everything(2**40 + 3)
    a = float(np.random.rand())
    np.random.seed(3)  # numpy takes 32-bit seeds: 2**40 + 3 mod 2**32
    assert float(np.random.rand()) == a


def test_make_generator_is_seeded_and_ignores_the_global_state():
    g1 = make_generator(5)
    torch.manual_seed(123)
    torch.rand(10)  # the global generator moves; the explicit one does not care
    g2 = make_generator(5)
    assert torch.equal(torch.rand(4, generator=g1), torch.rand(4, generator=g2))
    assert not torch.equal(torch.rand(4, generator=make_generator(5)), torch.rand(4, generator=make_generator(6)))


def test_derive_seeds_deterministic_distinct_63_bit_and_prefix_stable():
    s = derive_seeds(42, 50)
    assert s == derive_seeds(42, 50) and len(set(s)) == 50 and s != derive_seeds(43, 50)
    assert all(isinstance(x, int) and 0 <= x < 2**63 for x in s)
    assert derive_seeds(42, 0) == []
    # the same words of SeedSequence(42)'s state, read in pairs: a longer list starts with the shorter one's
    state = np.random.SeedSequence(42).generate_state(4, dtype=np.uint32).astype(np.uint64)
    assert derive_seeds(42, 2) == [
        int(((state[0] << np.uint64(32)) | state[1]) >> np.uint64(1)),
        int(((state[2] << np.uint64(32)) | state[3]) >> np.uint64(1)),
    ]


@pytest.mark.parametrize("fn", [seed_everything, make_generator, lambda s: derive_seeds(s, 2)])
@pytest.mark.parametrize("bad,exc", [(-1, ValueError), (1.0, TypeError), (True, TypeError), ("3", TypeError)])
def test_bad_seeds_are_refused(fn, bad, exc):
    with pytest.raises(exc, match="seed"):
        fn(bad)


def test_bad_count():
    with pytest.raises(ValueError, match="n must be non-negative"):
        derive_seeds(0, -1)
