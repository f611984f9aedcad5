"""sslkit.risk.quadratic: the quadratic form of paper A's Theorem 2 (eq. 8) in both of its forms, the vectors d_m of
Theorems 2 and 7, and the input checks (covariances symmetric PSD up to round-off, counts, n_U, the ridge and a
singular system) in numpy and in torch. The theorems stated with it: test_risk_variance.py."""

import numpy as np
import pytest
import torch

from sslkit.risk.quadratic import (
    Ctx,
    check_counts,
    check_covariances,
    check_psd,
    d_full,
    d_sym,
    quadratic_system,
    quadratic_variance,
    setup_problem,
    solve_checked,
    unlabeled_term,
)


def problem(k=3, seed=0):
    rng = np.random.default_rng(seed)
    B = rng.normal(size=(k, k, k))
    C = B @ B.transpose(0, 2, 1) / k  # k PSD matrices C_m
    G = rng.normal(size=(k, k))
    p = rng.dirichlet(np.ones(k))
    return C, p, rng.integers(2, 9, size=k).astype(float), G @ G.T / k, rng.normal(size=k)


@pytest.mark.parametrize("as_torch", [False, True])
@pytest.mark.parametrize("n_u", [None, 7.0])
def test_the_expanded_form_equals_the_sum_of_quadratic_forms(as_torch, n_u):
    """aᵀAa − 2bᵀa + c (the system of Thm 3) is the variance Σ_m w_m (Qa − d_m)ᵀ C_m (Qa − d_m) + U term."""
    C, p, n, CU, a = problem()
    if as_torch:
        C, p, n, CU, a = (torch.as_tensor(v, dtype=torch.float64) for v in (C, p, n, CU, a))
    ctx = Ctx(C, p)
    U = None if n_u is None else (n_u, CU)
    D = d_full(ctx, 3)
    A, b, c = quadratic_system(C, p, n, D, U)
    var = quadratic_variance(C, p, n, D, U, a)
    assert float(a @ A @ a - 2 * b @ a + c) == pytest.approx(float(var), rel=1e-12)
    assert float(var) > 0 and isinstance(var, torch.Tensor) == as_torch
    # the minimiser of the expanded form: a* = A⁻¹ b, lower than any other a
    a_star = solve_checked(ctx, A, b, 0.0, "A")
    assert float(quadratic_variance(C, p, n, D, U, a_star)) < float(var)


def test_the_variance_by_hand_for_two_classes():
    """k = 2, C_m = I, a = θ (the PN estimator, Qa = 1): Var = Σ_m θ_m²/n_m |1 − d_m|² = Σ_m θ_m²/n_m."""
    ctx, p, k, n = setup_problem(np.stack([np.eye(2)] * 2), [0.25, 0.75], [4, 9])
    C = np.stack([np.eye(2)] * 2)
    var = quadratic_variance(C, p, n, d_full(ctx, 2), None, p)
    assert var == pytest.approx(0.25**2 / 4 + 0.75**2 / 9, rel=1e-14)
    # with n_U finite and a = θ the unlabeled weight v = 1 − Qa is 0: no U term
    assert quadratic_variance(C, p, n, d_full(ctx, 2), (5.0, np.eye(2)), p) == pytest.approx(var, rel=1e-14)


def test_the_vectors_d_of_theorems_2_and_7():
    ctx = Ctx(np.zeros(3))
    np.testing.assert_array_equal(d_full(ctx, 3), [[0, 1, 1], [1, 0, 1], [1, 1, 0]])  # d_m = 1 − e_m
    np.testing.assert_array_equal(d_sym(ctx, 3), [[0, 1], [1, 0], [2, 2]])  # truncated, ď_k = 2·1


def test_covariances_must_be_symmetric_psd_up_to_round_off():
    ctx = Ctx(np.zeros(2))
    singular = np.array([[1.0, -1.0], [-1.0, 1.0]])  # C 1 = 0, as for a symmetric loss
    check_psd(ctx, singular - 1e-12 * np.eye(2), "C")  # round-off passes
    with pytest.raises(ValueError, match=r"C\[1\] is not positive semidefinite: smallest eigenvalue -1"):
        check_psd(ctx, np.stack([np.eye(2), np.diag([1.0, -1.0])]), "C")
    with pytest.raises(ValueError, match="C is not symmetric"):
        check_psd(ctx, np.array([[1.0, 0.5], [0.0, 1.0]]), "C")
    with pytest.raises(ValueError, match=r"covariances must have shape \(3, 3, 3\) for 3 classes"):
        check_covariances(ctx, np.zeros((3, 2, 2)), 3)
    assert check_covariances(ctx, np.zeros((3, 2, 2)), 3, allow_truncated=True).shape == (3, 2, 2)


def test_counts_unlabeled_size_and_ridge_are_checked():
    ctx = Ctx(np.zeros(2))
    with pytest.raises(ValueError, match=r"n_per_class must be strictly positive .* got \[3.0, 0.0\]"):
        check_counts(ctx, [3, 0], 2)
    with pytest.raises(ValueError, match=r"n_per_class must have shape \(2,\)"):
        check_counts(ctx, [3, 1, 1], 2)
    assert unlabeled_term(ctx, None, None, 2) is None and unlabeled_term(ctx, float("inf"), None, 2) is None
    with pytest.raises(ValueError, match="unlabeled_covariance is required"):
        unlabeled_term(ctx, 10, None, 2)
    with pytest.raises(ValueError, match="n_unlabeled must be a positive number"):
        unlabeled_term(ctx, True, np.eye(2), 2)
    n_u, CU = unlabeled_term(ctx, 10, np.eye(3), 2, truncate=True)  # (k, k) cut to the k − 1 kept
    assert n_u == 10.0 and CU.shape == (2, 2)
    with pytest.raises(ValueError, match="ridge must be a finite number >= 0"):
        solve_checked(ctx, np.eye(2), np.ones(2), -1.0, "A")
    with pytest.raises(ValueError, match="A is singular .* pass ridge > 0"):
        solve_checked(ctx, np.ones((2, 2)), np.ones(2), 0.0, "A")
    np.testing.assert_allclose(solve_checked(ctx, np.ones((2, 2)), np.ones(2), 1.0, "A"), [1 / 3, 1 / 3])
