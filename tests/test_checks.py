"""sslkit._checks, the input checks every layer shares: each accepts what it documents (numpy integers and bools
included), returns the plain Python / numpy type, and refuses the rest with an error that names the argument and the
bad value (bools are not numbers, floats are not positions, negative positions are not wrapped)."""

import math

import numpy as np
import pytest
import torch

from sslkit._checks import (
    check_bool,
    check_budget,
    check_count,
    check_features,
    check_indices,
    check_open_unit,
    check_positive,
    check_real,
    check_seed,
    check_symmetric,
)


def test_scalars_accepted_and_converted():
    assert check_seed(np.int32(4)) == 4 and type(check_seed(np.int32(4))) is int
    assert check_count(0, "n") == 0 and check_count(np.uint8(3), "n") == 3
    assert check_bool(np.bool_(True), "flag") is True
    assert check_real(np.float32(0.5), "x", low=0, high=1) == 0.5 and type(check_real(2, "x")) is float
    assert check_real(0.0, "x", low=0.0) == 0.0 and check_positive(0.0, "x", allow_zero=True) == 0.0
    assert check_open_unit(0.25, "p") == 0.25


@pytest.mark.parametrize(
    "call,exc,match",
    [
        (lambda: check_seed(True), TypeError, "seed must be an integer, got True"),
        (lambda: check_seed(-2, "my_seed"), ValueError, "my_seed must be a non-negative integer, got -2"),
        (lambda: check_count(2.0, "epochs"), TypeError, "epochs must be an integer"),
        (lambda: check_count(0, "every", allow_zero=False), ValueError, "every must be positive, got 0"),
        (lambda: check_bool(1, "progress"), TypeError, "progress must be True or False, got 1"),
        (lambda: check_real(True, "lr"), TypeError, "lr must be a real number"),
        (lambda: check_real(math.nan, "lr"), ValueError, "lr must be finite"),
        (lambda: check_real(1.0, "q", low=0, high=1, high_open=True), ValueError, r"q must lie in \[0, 1\), got 1.0"),
        (lambda: check_real(-1.0, "q", low=0), ValueError, r"q must lie in \[0, inf\)"),
        (lambda: check_real(0.0, "q", low=0, low_open=True), ValueError, r"q must lie in \(0, inf\)"),
        (lambda: check_positive(0.0, "sigma"), ValueError, "sigma must be positive, got 0.0"),
        (lambda: check_open_unit(1.0, "alpha"), ValueError, r"alpha must lie in the open interval \(0, 1\)"),
        (lambda: check_budget(11, 10), ValueError, r"k = 11 exceeds the number of unlabeled samples \(10\)"),
        (lambda: check_budget(0, 10), ValueError, "k must be positive"),
    ],
)
def test_scalars_refused_with_the_name_and_value(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_indices_accepted_as_int64_numpy_from_lists_arrays_and_tensors():
    for given in ([3, 0, 2], np.array([3, 0, 2], dtype=np.uint16), torch.tensor([3, 0, 2])):
        out = check_indices(given, 4)
        assert out.dtype == np.int64 and out.tolist() == [3, 0, 2]
    assert check_indices([], 4, allow_empty=True).dtype == np.int64
    assert check_indices([1, 1], 4).tolist() == [1, 1]  # repeats allowed unless distinct


@pytest.mark.parametrize(
    "indices,kw,exc,match",
    [
        ([0.0, 1.0], {}, TypeError, "floats would be truncated"),
        ([True, False], {}, TypeError, "integer positions"),
        ([[0, 1]], {}, ValueError, "must be 1-D"),
        ([-1, 2], {}, ValueError, r"must lie in \[0, 4\), got values in \[-1, 2\] \(negative values are not wrapped\)"),
        ([0, 4], {}, ValueError, r"must lie in \[0, 4\)"),
        ([], {}, ValueError, "is empty"),
        ([2, 1, 2], {"distinct": True}, ValueError, r"must be distinct, but \[2\] occur"),
    ],
)
def test_indices_refused(indices, kw, exc, match):
    with pytest.raises(exc, match=match):
        check_indices(indices, 4, **kw)


def test_symmetric_within_a_relative_tolerance():
    S = torch.tensor([[1.0, 2.0], [2.0 + 1e-7, 1.0]])
    check_symmetric(S)  # 1e-7 <= 1e-9 + 1e-6 * 2
    with pytest.raises(ValueError, match=r"largest \|s_ij - s_ji\| is 0.1"):
        check_symmetric(torch.tensor([[1.0, 2.0], [2.1, 1.0]]))
    with pytest.raises(ValueError, match="square"):
        check_symmetric(torch.ones(2, 3))


def test_a_read_only_memory_mapped_array_is_read_without_a_warning(tmp_path):
    """``np.load(mmap_mode="r")`` (a features file larger than memory) is accepted as it is: no copy of a float32
    file, and no warning about writing to it (the checks and the selectors never write to their input)."""
    import warnings

    X = np.arange(12, dtype=np.float32).reshape(4, 3)
    np.save(tmp_path / "f.npy", X)
    mapped = np.load(tmp_path / "f.npy", mmap_mode="r")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        t = check_features(mapped)
    assert t.dtype == torch.float32 and t.numpy().tolist() == X.tolist()
    assert np.shares_memory(t.numpy(), mapped)  # not read into a copy


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_features_finiteness_is_exact_whatever_the_sum_does(dtype):
    """The one-pass test (the sum's finiteness) must refuse every NaN / infinity, including those whose sum hides
    nothing (+inf and -inf: the sum is NaN either way), and accept finite features whose sum overflows."""
    big = np.finfo(dtype).max / 2
    assert check_features(np.full((4, 3), big, dtype=dtype)).shape == (4, 3)  # sum overflows, every entry finite
    for bad in (np.nan, np.inf, -np.inf):
        X = np.zeros((5, 2), dtype=dtype)
        X[3, 1] = bad
        with pytest.raises(ValueError, match="NaN or infinite"):
            check_features(X)
    X = np.full((4, 3), big, dtype=dtype)
    X[0, 0] = np.inf
    with pytest.raises(ValueError, match="NaN or infinite"):
        check_features(X)
