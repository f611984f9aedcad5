"""Paper A estimators: loss matrices, component risks, the linear risk (eq. 7, §5.2, eq. 14), PNU mixing."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import sslkit.risk as risk

SEEDS = st.integers(0, 2**31 - 1)
KS = st.integers(2, 5)
FAST = settings(max_examples=40, deadline=None)


def random_problem(seed, k, symmetric=False):
    """Random (arbitrary, not necessarily consistent) R, R_u, prior and a."""
    rng = np.random.default_rng(seed)
    prior = rng.dirichlet(np.full(k, 2.0)) * 0.9 + 0.1 / k
    prior = prior / prior.sum()
    R = rng.uniform(0, 3, size=(k, k))
    R_u = rng.uniform(0, 3, size=k)
    a = rng.normal(size=k)
    if symmetric:
        alpha = k - 1.0
        R[:, -1] = alpha - R[:, :-1].sum(1)
        R_u[-1] = alpha - R_u[:-1].sum()
    return rng, prior, R, R_u, a


def eq7(R, R_u, prior, a):
    """Paper A eq. (7) written term by term."""
    k = len(prior)
    value = sum(prior[i] * R[i, i] for i in range(k))
    value += sum(prior[i] * (a[j] / prior[j] - 1) * R[i, j] for i in range(k) for j in range(k))
    value -= sum((a[j] / prior[j] - 1) * R_u[j] for j in range(k))
    return value


# ----------------------------------------------------------------------------- losses
def test_loss_matrix_values():
    g = np.array([[2.0, 0.0, -1.0], [0.5, 0.5, 3.0]])
    ce = risk.loss_matrix(g, "ce")
    expect = -(g - np.log(np.exp(g).sum(1, keepdims=True)))
    np.testing.assert_allclose(ce, expect)
    zo = risk.loss_matrix(g, "zero_one")
    np.testing.assert_array_equal(zo, [[0, 1, 1], [1, 1, 0]])
    s = np.array([-3.0, -1.0, 0.0, 0.5, 3.0])
    bce = risk.loss_matrix(s, "bce")
    np.testing.assert_allclose(bce[:, 0], np.log1p(np.exp(-s)))  # -log σ(g): class 1 (column 0)
    np.testing.assert_allclose(bce[:, 1], np.log1p(np.exp(s)))
    ramp = risk.loss_matrix(s[:, None], "ramp")
    np.testing.assert_allclose(ramp[:, 0], np.clip((1 - s) / 2, 0, 1))  # binary ramp loss
    np.testing.assert_allclose(ramp[:, 1], np.clip((1 + s) / 2, 0, 1))
    # a 1-D score predicts column 0 when g >= 0 (ties -> lowest index)
    np.testing.assert_array_equal(risk.loss_matrix(s, "zero_one")[:, 0], [1, 1, 0, 0, 0])


@FAST
@given(SEEDS, KS)
def test_symmetric_losses_sum_to_alpha(seed, k):
    g = np.random.default_rng(seed).normal(scale=3, size=(50, k))
    for name in ("zero_one", "ramp"):
        L = risk.loss_matrix(g, name)
        assert risk.is_symmetric(name)
        np.testing.assert_allclose(L.sum(1), risk.symmetric_constant(name, k), atol=1e-12)
        assert (L >= -1e-12).all() and (L <= 1 + 1e-12).all()
    for name in ("ce", "bce"):
        assert not risk.is_symmetric(name)
    assert not np.allclose(risk.loss_matrix(g, "ce").sum(1), risk.loss_matrix(g, "ce").sum(1)[0])


def test_loss_matrix_torch_matches_numpy_and_has_gradient():
    g = np.random.default_rng(1).normal(size=(20, 3))
    for name in ("ce", "ramp", "zero_one"):
        t = risk.loss_matrix(torch.tensor(g), name)
        assert isinstance(t, torch.Tensor)
        np.testing.assert_allclose(t.numpy(), risk.loss_matrix(g, name), atol=1e-12)
    gt = torch.tensor(g, requires_grad=True)
    risk.loss_matrix(gt, "ramp").sum(0)[0].backward()
    assert gt.grad.abs().sum() > 0


def test_loss_matrix_errors():
    with pytest.raises(ValueError, match="loss must be one of"):
        risk.loss_matrix(np.zeros((3, 2)), "hinge")
    with pytest.raises(ValueError, match="'bce' needs a binary score"):
        risk.loss_matrix(np.zeros((3, 3)), "bce")
    with pytest.raises(ValueError, match="'ce' needs"):
        risk.loss_matrix(np.zeros(3), "ce")
    with pytest.raises(ValueError, match="NaN or infinite"):
        risk.loss_matrix(np.array([[0.0, np.nan]]), "ce")
    with pytest.raises(ValueError, match="not symmetric"):
        risk.symmetric_constant("ce", 3)


# ----------------------------------------------------------------------------- component risks
@FAST
@given(SEEDS, KS)
def test_component_and_unlabeled_risks_brute_force(seed, k):
    rng = np.random.default_rng(seed)
    n = 30
    y = np.concatenate([np.arange(k), rng.integers(0, k, n - k)])
    L = rng.uniform(0, 2, size=(n, k))
    R = risk.component_risks(L, y, k)
    for i in range(k):
        for j in range(k):
            assert R[i, j] == pytest.approx(np.mean([L[s, j] for s in range(n) if y[s] == i]))
    np.testing.assert_allclose(risk.unlabeled_risks(L), L.mean(0))
    Rt = risk.component_risks(torch.tensor(L), torch.tensor(y), k)
    np.testing.assert_allclose(Rt.numpy(), R, atol=1e-12)


def test_component_risks_horvitz_thompson_normalizer():
    rng = np.random.default_rng(3)
    L = rng.uniform(size=(6, 3))
    y = np.array([0, 0, 1, 1, 1, 0])  # class 2 absent from the batch
    norm = np.array([1.5, 2.0, 0.5])
    R = risk.component_risks(L, y, 3, normalizer=norm)
    np.testing.assert_allclose(R[0], L[y == 0].sum(0) / 1.5)
    np.testing.assert_allclose(R[2], 0.0)
    with pytest.raises(ValueError, match=r"class\(es\) \[2\] have no labeled sample"):
        risk.component_risks(L, y, 3)
    with pytest.raises(ValueError, match="normalizer must be strictly positive"):
        risk.component_risks(L, y, 3, normalizer=[1.0, 0.0, 1.0])


def test_component_risks_errors():
    L = np.ones((4, 2))
    y = np.array([0, 1, 0, 1])
    with pytest.raises(ValueError, match="y has 3 labels but losses has 4 rows"):
        risk.component_risks(L, y[:3], 2)
    with pytest.raises(ValueError, match="losses has 2 columns but num_classes is 3"):
        risk.component_risks(L, y, 3)
    with pytest.raises(ValueError, match=r"labels in \[0, 2\)"):
        risk.component_risks(L, np.array([0, 1, 2, 1]), 2)
    with pytest.raises(TypeError, match="integer class labels"):
        risk.component_risks(L, y.astype(float), 2)
    bad = L.copy()
    bad[1, 1] = np.inf
    with pytest.raises(ValueError, match="losses contains NaN or infinite"):
        risk.component_risks(bad, y, 2)
    with pytest.raises(ValueError, match="2-D"):
        risk.component_risks(np.ones(4), y, 2)
    with pytest.raises(ValueError, match="losses_u has no rows"):
        risk.unlabeled_risks(np.ones((0, 2)))
    with pytest.raises(ValueError, match="num_classes must be at least 2"):
        risk.component_risks(L, y, 1)


# ----------------------------------------------------------------------------- linear risk
@FAST
@given(SEEDS, KS)
def test_linear_risk_equals_eq7_and_partial_risks(seed, k):
    _, prior, R, R_u, a = random_problem(seed, k)
    assert risk.linear_risk(R, R_u, prior, a) == pytest.approx(eq7(R, R_u, prior, a), rel=1e-12, abs=1e-12)
    delta = risk.partial_risks(R, R_u, prior)
    for j in range(k):
        assert delta[j] == pytest.approx(R_u[j] - sum(prior[i] * R[i, j] for i in range(k) if i != j))


@FAST
@given(SEEDS, KS)
def test_unbiased_for_every_a(seed, k):
    """Thm 1: with consistent expectations (R_Uj = Σ_i θ_i R_ij, eq. 2) R_lin^a = R = Σ θ_i R_ii for all a."""
    _, prior, R, _, a = random_problem(seed, k)
    R_u = prior @ R
    assert risk.linear_risk(R, R_u, prior, a) == pytest.approx(prior @ np.diag(R), rel=1e-12)
    # a = θ is the supervised (PN) risk even with inconsistent R_u
    _, _, _, R_u2, _ = random_problem(seed + 1, k)
    assert risk.linear_risk(R, R_u2, prior, prior) == pytest.approx(prior @ np.diag(R), rel=1e-12)


def test_unbiased_monte_carlo_on_samples():
    """E[R̂_lin^a] = R(g): sampled data sets from a discrete model, exact component_risks pipeline."""
    rng = np.random.default_rng(7)
    k, P = 3, 5
    points = rng.uniform(0, 2, size=(P, k))  # loss vector at each of P support points
    probs = rng.dirichlet(np.ones(P), size=k)  # p_m over the points
    prior = np.array([0.5, 0.3, 0.2])
    n, n_u = np.array([4, 6, 5]), 20
    a = np.array([0.1, -0.4, 0.6])
    true_risk = prior @ np.diag(probs @ points)
    mix = prior @ probs
    reps, values = 4000, []
    for _ in range(reps):
        idx = [rng.choice(P, size=n[m], p=probs[m]) for m in range(k)]
        y = np.concatenate([np.full(n[m], m) for m in range(k)])
        L = points[np.concatenate(idx)]
        L_u = points[rng.choice(P, size=n_u, p=mix)]
        values.append(risk.linear_risk(risk.component_risks(L, y, k), risk.unlabeled_risks(L_u), prior, a))
    values = np.array(values)
    C = np.stack(
        [(probs[m][:, None] * (points - probs[m] @ points)).T @ (points - probs[m] @ points) for m in range(k)]
    )
    C_u = risk.mixture_covariance(C, probs @ points, prior)
    var = risk.estimator_variance(a, C, prior, n, n_unlabeled=n_u, unlabeled_covariance=C_u)
    se = np.sqrt(var / reps)
    assert abs(values.mean() - true_risk) < 4 * se
    assert values.var(ddof=1) == pytest.approx(var, rel=4 * np.sqrt(2 / reps))


@FAST
@given(SEEDS, KS)
def test_nonnegative_correction_never_uses_a_negative_delta(seed, k):
    _, prior, R, R_u, a = random_problem(seed, k)
    R_u = R_u - 1.5  # make some Δ_j negative
    delta = risk.partial_risks(R, R_u, prior)
    got = risk.linear_risk(R, R_u, prior, a, nonnegative=True)
    expect = a @ np.diag(R) + ((1 - a / prior) * np.maximum(delta, 0)).sum()
    assert got == pytest.approx(expect, rel=1e-12, abs=1e-12)
    neg = delta < 0
    R_u2 = R_u - 10.0 * neg  # push the negative Δ_j further down: value unchanged
    assert risk.linear_risk(R, R_u2, prior, a, nonnegative=True) == pytest.approx(got, rel=1e-12, abs=1e-12)
    if neg.any():
        Rt = torch.tensor(R_u, requires_grad=True)
        risk.linear_risk(R, Rt, prior, a, nonnegative=True).backward()
        assert (Rt.grad.numpy()[neg] == 0).all()
    if not neg.any():
        assert got == pytest.approx(risk.linear_risk(R, R_u, prior, a))


def test_torch_matches_numpy_and_gradients_flow():
    rng = np.random.default_rng(0)
    k, n = 3, 40
    logits = torch.tensor(rng.normal(size=(n, k)), requires_grad=True)
    y = torch.tensor(np.concatenate([np.arange(k), rng.integers(0, k, n - k)]))
    logits_u = torch.tensor(rng.normal(size=(25, k)), requires_grad=True)
    prior = np.array([0.2, 0.3, 0.5])
    a = torch.tensor([0.1, 0.2, 0.3], dtype=torch.float64, requires_grad=True)
    R = risk.component_risks(risk.loss_matrix(logits, "ce"), y, k)
    R_u = risk.unlabeled_risks(risk.loss_matrix(logits_u, "ce"))
    value = risk.linear_risk(R, R_u, prior, a)
    assert isinstance(value, torch.Tensor) and value.ndim == 0
    value.backward()
    assert logits.grad.abs().sum() > 0 and logits_u.grad.abs().sum() > 0 and a.grad.abs().sum() > 0
    np_value = risk.linear_risk(
        risk.component_risks(risk.loss_matrix(logits.detach().numpy(), "ce"), y.numpy(), k),
        risk.unlabeled_risks(risk.loss_matrix(logits_u.detach().numpy(), "ce")),
        prior,
        a.detach().numpy(),
    )
    assert isinstance(np_value, np.floating)
    assert float(value.detach()) == pytest.approx(float(np_value), rel=1e-12)
    # float32 training tensors stay float32
    f32 = risk.linear_risk(R.float(), R_u.float(), prior, [0.1, 0.2, 0.3])
    assert f32.dtype == torch.float32


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_cuda_matches_cpu():
    rng = np.random.default_rng(0)
    L = rng.uniform(size=(30, 3))
    y = np.concatenate([np.arange(3), rng.integers(0, 3, 27)])
    R = risk.component_risks(torch.tensor(L, device="cuda"), torch.tensor(y, device="cuda"), 3)
    v = risk.linear_risk(R, R[0], [0.2, 0.3, 0.5], [0.1, 0.2, 0.3], nonnegative=True)
    assert v.device.type == "cuda"
    R_np = risk.component_risks(L, y, 3)
    expect = risk.linear_risk(R_np, R_np[0], [0.2, 0.3, 0.5], [0.1, 0.2, 0.3], nonnegative=True)
    assert float(v) == pytest.approx(float(expect))
    C = risk.loss_covariances(torch.tensor(L, device="cuda"), torch.tensor(y, device="cuda"), 3, shrinkage=0.5)
    a = risk.optimal_a(C, [0.2, 0.3, 0.5], [10, 10, 10], ridge=1e-4)
    assert a.device.type == "cuda"
    np.testing.assert_allclose(
        a.cpu().numpy(), risk.optimal_a(C.cpu().numpy(), [0.2, 0.3, 0.5], [10, 10, 10], ridge=1e-4)
    )


def test_linear_risk_errors():
    R, R_u = np.ones((3, 3)), np.ones(3)
    with pytest.raises(ValueError, match="prior must sum to 1"):
        risk.linear_risk(R, R_u, [0.2, 0.3, 0.4], [1, 1, 1])
    with pytest.raises(ValueError, match="strictly positive"):
        risk.linear_risk(R, R_u, [0.0, 0.5, 0.5], [1, 1, 1])
    with pytest.raises(ValueError, match="prior has 2 entries but there are 3 classes"):
        risk.linear_risk(R, R_u, [0.5, 0.5], [1, 1, 1])
    with pytest.raises(ValueError, match=r"a must have shape \(3,\)"):
        risk.linear_risk(R, R_u, [0.2, 0.3, 0.5], [1, 1])
    with pytest.raises(ValueError, match=r"R_u must have shape \(3,\)"):
        risk.linear_risk(R, np.ones(2), [0.2, 0.3, 0.5], [1, 1, 1])
    with pytest.raises(ValueError, match="R must be a square"):
        risk.linear_risk(np.ones((3, 2)), R_u, [0.2, 0.3, 0.5], [1, 1, 1])
    with pytest.raises(ValueError, match="R_u contains NaN"):
        risk.linear_risk(R, [1, np.nan, 1], [0.2, 0.3, 0.5], [1, 1, 1])
    with pytest.raises(ValueError, match="prior contains NaN"):
        risk.linear_risk(R, R_u, [0.2, np.nan, 0.5], [1, 1, 1])
    with pytest.raises(ValueError, match=r"a must have shape \(2,\) \(k - 1 parameters"):
        risk.symmetric_linear_risk(R, R_u, [0.2, 0.3, 0.5], [1, 1, 1])


# ----------------------------------------------------------------------------- PNU and symmetric losses
@FAST
@given(SEEDS, st.floats(-1, 1))
def test_pnu_to_a_reproduces_pnu_mixing(seed, eta):
    """Sakai et al.'s PNU risk: (1-η) R_PN + η R_PU (η >= 0), (1-|η|) R_PN + |η| R_NU (η < 0), eqs. (3)-(4)."""
    _, prior, R, R_u, _ = random_problem(seed, 2)
    t1, t2 = prior
    r_pn = t1 * R[0, 0] + t2 * R[1, 1]
    r_pu = t1 * R[0, 0] - t1 * R[0, 1] + R_u[1]
    r_nu = t2 * R[1, 1] - t2 * R[1, 0] + R_u[0]
    expect = (1 - eta) * r_pn + eta * r_pu if eta >= 0 else (1 - abs(eta)) * r_pn + abs(eta) * r_nu
    a = risk.pnu_to_a(prior, eta)
    assert risk.linear_risk(R, R_u, prior, a) == pytest.approx(expect, rel=1e-10, abs=1e-10)


def test_pnu_eta_matches_sakai_heuristic():
    prior, n = np.array([0.3, 0.7]), np.array([15, 45])
    psi = prior**2 / n
    assert risk.pnu_eta(prior, n) == pytest.approx((psi[1] - psi[0]) / psi.sum())
    np.testing.assert_allclose(risk.pnu_to_a(prior, 0.25), [0.3, 0.7 * 0.75])
    np.testing.assert_allclose(risk.pnu_to_a(prior, -0.25), [0.3 * 0.75, 0.7])
    with pytest.raises(ValueError, match="PNU is binary"):
        risk.pnu_eta([0.2, 0.3, 0.5], [1, 1, 1])
    with pytest.raises(ValueError, match="eta contains NaN"):
        risk.pnu_to_a(prior, float("nan"))


@FAST
@given(SEEDS, KS)
def test_symmetric_family_has_k_minus_1_parameters(seed, k):
    """Thm 6: with a symmetric loss every a in R^k gives the same estimator as a k-1 parameter one (eq. 14)."""
    rng, prior, _, _, a = random_problem(seed, k)
    g = rng.normal(scale=2, size=(40, k))
    y = np.concatenate([np.arange(k), rng.integers(0, k, 40 - k)])
    for name in ("zero_one", "ramp"):
        L, L_u = risk.loss_matrix(g, name), risk.loss_matrix(g[:25] * 0.7, name)
        R, R_u = risk.component_risks(L, y, k), risk.unlabeled_risks(L_u)
        a_sym = risk.symmetric_reduce_a(a, prior)
        assert a_sym.shape == (k - 1,)
        full = risk.linear_risk(R, R_u, prior, a)
        assert risk.symmetric_linear_risk(R, R_u, prior, a_sym) == pytest.approx(full, rel=1e-10, abs=1e-10)
        # adding any multiple of (θ_k-direction) to a does not change the estimator: one redundant parameter
        shift = a + 0.37 * prior
        assert risk.linear_risk(R, R_u, prior, shift) == pytest.approx(full, rel=1e-10, abs=1e-10)
    # for an asymmetric loss the extra direction matters
    L = risk.loss_matrix(g, "ce")
    R, R_u = risk.component_risks(L, y, k), risk.unlabeled_risks(risk.loss_matrix(g[:25] * 0.7, "ce"))
    assert risk.linear_risk(R, R_u, prior, a) != pytest.approx(risk.linear_risk(R, R_u, prior, a + 0.37 * prior))
    # eq. (14) is eq. (7) with a_k = θ_k
    a_k1 = a[:-1]
    assert risk.symmetric_linear_risk(R, R_u, prior, a_k1) == pytest.approx(
        risk.linear_risk(R, R_u, prior, np.append(a_k1, prior[-1])), rel=1e-12
    )


def test_theorem9_mapping_and_ec_equals_sakai_under_symmetric_loss():
    """Thm 9 proof: PNPU^η <-> a_1 = θ1(1+η), PNNU^η <-> a_1 = θ1(1-η); and the EC a reduces to Sakai's η."""
    prior, n = np.array([0.35, 0.65]), np.array([15, 45])
    for eta in (0.0, 0.3, 0.8):
        assert risk.symmetric_reduce_a(risk.pnu_to_a(prior, eta), prior)[0] == pytest.approx(prior[0] * (1 + eta))
        assert risk.symmetric_reduce_a(risk.pnu_to_a(prior, -eta), prior)[0] == pytest.approx(prior[0] * (1 - eta))
    ec = risk.symmetric_reduce_a(risk.equal_covariance_a(prior, n), prior)[0]
    assert ec == pytest.approx(prior[0] * (1 + risk.pnu_eta(prior, n)))
