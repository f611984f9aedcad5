"""sslkit.algorithms.risk_terms: the Horvitz-Thompson batch component risks and the prior-weighted cross-entropy are
unbiased for paper A's full-set risks (exact enumeration of every batch), and the prior / class-count / label checks."""

import itertools

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from sslkit.algorithms import FitContext, batch_component_risks, prior_class_weights, supervised_ce
from sslkit.algorithms.risk_terms import (
    check_class_counts,
    check_prior_vector,
    labeled_class_weights,
    optional_prior,
    positive_number,
)
from sslkit.risk import component_risks, loss_matrix


def test_batch_component_risks_is_unbiased_by_exact_enumeration():
    torch.manual_seed(0)
    y = torch.tensor([0, 1, 1, 2, 2, 2])
    L = torch.rand(6, 3, dtype=torch.float64)
    counts = np.bincount(y.numpy())
    full = component_risks(L, y, 3)
    for b in (1, 2, 3, 5):
        subsets = list(itertools.combinations(range(6), b))
        mean = sum(batch_component_risks(L[list(s)], y[list(s)], counts) for s in subsets) / len(subsets)
        assert torch.allclose(mean, full, atol=1e-12), b
    # equals sslkit.risk.component_risks with the Horvitz-Thompson normalizer; missing class -> zero row
    idx = [0, 1, 2]
    hat = batch_component_risks(L[idx], y[idx], counts)
    ref = component_risks(L[idx], y[idx], 3, normalizer=counts * 3 / 6)
    assert torch.allclose(hat, ref) and (hat[2] == 0).all()
    with pytest.raises(ValueError, match="n_per_class"):
        batch_component_risks(L, y, [1, 2])


def test_prior_weighted_ce_is_an_unbiased_batch_estimate_of_the_pn_risk():
    gen = torch.Generator().manual_seed(3)
    y = torch.tensor([0, 0, 0, 0, 1, 2, 2])  # n = (4, 1, 2), not proportional to the prior
    prior = np.array([0.2, 0.5, 0.3])
    logits = torch.randn(7, 3, generator=gen)
    w = prior_class_weights(prior, y, 3)
    assert torch.allclose(w, torch.tensor([0.2 * 7 / 4, 0.5 * 7 / 1, 0.3 * 7 / 2]))
    R = component_risks(loss_matrix(logits, "ce"), y, 3)
    pn = float((torch.as_tensor(prior, dtype=torch.float32) * torch.diagonal(R)).sum())
    assert float(supervised_ce(logits, y, w)) == pytest.approx(pn, rel=1e-5)  # the whole set as one batch
    batch_means = [float(supervised_ce(logits[list(b)], y[list(b)], w)) for b in itertools.combinations(range(7), 3)]
    assert np.mean(batch_means) == pytest.approx(pn, rel=1e-5)  # E over uniform batches of 3 (all 35 of them)
    assert float(supervised_ce(logits, y)) == pytest.approx(float(F.cross_entropy(logits, y)), rel=1e-6)
    with pytest.raises(ValueError, match=r"no sample of class\(es\) \[1\]"):
        prior_class_weights(prior, torch.tensor([0, 2, 2]), 3)
    with pytest.raises(ValueError, match="sum to 1"):
        prior_class_weights([0.5, 0.6, 0.1], y, 3)
    with pytest.raises(ValueError, match="3 classes"):
        prior_class_weights([0.5, 0.5], y, 3)
    with pytest.raises(ValueError, match=r"labels must lie in \[0, 3\)"):
        prior_class_weights(prior, torch.tensor([0, 1, 3]), 3)


def test_the_small_checks_name_what_is_wrong():
    np.testing.assert_array_equal(check_prior_vector([0.25, 0.75]), [0.25, 0.75])
    with pytest.raises(TypeError, match="prior must be a sequence of class probabilities"):
        check_prior_vector("abc")
    with pytest.raises(ValueError, match="at least 2 entries"):
        check_prior_vector([1.0])
    with pytest.raises(ValueError, match="strictly positive"):
        check_prior_vector([0.0, 1.0])
    assert check_class_counts(np.array([3, 1]), 2).dtype == np.int64
    with pytest.raises(ValueError, match="2 integer class counts"):
        check_class_counts(np.array([3.0, 1.0]), 2)
    with pytest.raises(ValueError, match=r"no sample of class\(es\) \[0, 2\]"):
        check_class_counts(np.array([0, 4, 0]), 3)
    assert optional_prior(None) is None and optional_prior([0.5, 0.5]).tolist() == [0.5, 0.5]
    assert positive_number(2, "lr") == 2.0
    for bad in (0, -1.0, float("inf"), True):
        with pytest.raises(ValueError, match="lr must be a positive finite number"):
            positive_number(bad, "lr")


def test_labeled_class_weights_read_the_full_labeled_set_of_the_context():
    y = torch.tensor([0, 1, 1, 1])
    w = labeled_class_weights([0.5, 0.5], FitContext(num_classes=2, data={"y_l": y}))
    assert w.tolist() == pytest.approx([0.5 * 4 / 1, 0.5 * 4 / 3])
    assert labeled_class_weights(None, FitContext(num_classes=2)) is None
    with pytest.raises(ValueError, match="prior=... needs the labels of the full labeled set"):
        labeled_class_weights([0.5, 0.5], FitContext(num_classes=2))
