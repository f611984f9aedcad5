"""The active-learning and SSAL selections of sslkit.active (paper B §7.3): each one's defining mathematics.

* k-center greedy (CoreSet, CoreSetSSL) = DISTIL's ``CoreSet`` strategy (decile-distil 0.2.0, the CORDS
  group's active-learning package), index for index, and Sener & Savarese's argmax-min rule by brute force;
* VAAL: the VAE's KL term (closed form against torch.distributions), the discriminator / adversarial losses
  (against -log sigma by hand), the pick = the lowest D(mu(x)), and on a shifted pool it picks the new region;
* LearnLoss: eq. 2's margin ranking loss against a brute-force loop over the pairs, the stop-gradient switch;
* MCDAL: the L1 discrepancy, its three-term acquisition score, and that the discrepancy moves only C1, C2;
* MMA: the margin of the *averaged* predictions (not the average margin); CBSSAL: the summed per-class
  variance over the original and its views; TOD: the L2 distance of two models' softmax outputs;
* the AL loop's bookkeeping, and both experiments end to end on a tiny protocol.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from sslkit.active import (
    CBSSAL,
    MCDAL,
    MMA,
    VAAL,
    CoreSet,
    CoreSetSSL,
    LearnLoss,
    LearnLossTraining,
    LossPredictionNet,
    MCDALNet,
    MCDALTraining,
    TODSemi,
    adversarial_loss,
    augmented_margin,
    classifier_discrepancy,
    discriminator_loss,
    inconsistency,
    k_center_greedy,
    kl_divergence,
    loss_prediction_loss,
    mcdal_discrepancy,
    temporal_output_discrepancy,
)
from sslkit.algorithms.base import Batch, FitContext
from sslkit.models import MLP

pytestmark = pytest.mark.usefixtures("one_thread")


# ------------------------------------------------------------------------------------------------- CoreSet


def distil_coreset(F_u: np.ndarray, F_l: np.ndarray, budget: int) -> list[int]:
    """DISTIL's CoreSet strategy, built minimally: the "network" returns the rows themselves as embeddings."""
    core_set = pytest.importorskip("distil.active_learning_strategies.core_set")
    handler = pytest.importorskip("distil.utils.data_handler").DataHandler_Points

    class Identity(nn.Module):
        def __init__(self, d):
            super().__init__()
            self.d = d

        def forward(self, x, last=False):
            return (x, x) if last else x

        def get_embedding_dim(self):
            return self.d

    strategy = core_set.CoreSet(
        F_l,
        np.zeros(len(F_l), dtype=np.int64),
        F_u,
        Identity(F_u.shape[1]),
        handler,
        3,
        {"device": "cpu", "batch_size": 64},
    )
    return [int(i) for i in strategy.select(budget)]


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_k_center_greedy_equals_distil_index_for_index(seed):
    rng = np.random.default_rng(seed)
    n_u, n_l, d = (200, 15, 8) if seed % 2 else (150, 1, 32)
    F_u = rng.standard_normal((n_u, d)).astype(np.float32)
    F_l = (rng.standard_normal((n_l, d)) * 1.5 + 0.5).astype(np.float32)
    ours = k_center_greedy(torch.as_tensor(F_u), 25, torch.as_tensor(F_l)).tolist()
    assert ours == distil_coreset(F_u, F_l, 25)
    # and through the estimator, on a model's penultimate features
    assert CoreSet(25, device="cpu").fit(F_u, F_l).indices_.tolist() == ours


def test_k_center_greedy_without_labeled_starts_at_row_0_like_distil():
    F_u = np.random.default_rng(5).standard_normal((80, 4)).astype(np.float32)
    ours = k_center_greedy(F_u, 10).tolist()
    assert ours[0] == 0
    assert ours == distil_coreset(F_u, np.zeros((0, 4), dtype=np.float32), 10)


def test_k_center_greedy_is_the_argmax_min_rule_by_brute_force():
    rng = np.random.default_rng(7)
    F = rng.standard_normal((60, 3))
    L = rng.standard_normal((4, 3))
    picks = k_center_greedy(F, 12, L).tolist()
    centres = [*L]
    for u in picks:
        mind = [min(np.linalg.norm(x - c) for c in centres) for x in F]
        assert mind[u] == pytest.approx(max(mind))
        centres.append(F[u])
    sel = CoreSet(12, device="cpu").fit(F, L)
    assert sel.radius_ == pytest.approx(max(min(np.linalg.norm(x - c) for c in centres) for x in F))


def test_k_center_greedy_never_repeats_a_row_on_duplicates_and_checks_inputs():
    F = torch.zeros(5, 2)
    assert sorted(k_center_greedy(F, 5).tolist()) == [0, 1, 2, 3, 4]
    with pytest.raises(ValueError, match="m = 6 exceeds"):
        k_center_greedy(F, 6)
    with pytest.raises(ValueError, match="columns"):
        k_center_greedy(F, 2, torch.zeros(3, 3))
    with pytest.raises(ValueError, match="NaN"):
        k_center_greedy(torch.full((3, 2), float("nan")), 1)
    with pytest.raises(TypeError, match="floats"):
        k_center_greedy(torch.zeros(3, 2, dtype=torch.int64), 1)


def test_coreset_embeds_with_the_models_penultimate_features():
    torch.manual_seed(0)
    model = MLP(6, 3, hidden=(5,), dropout=0.5)  # dropout must be off while embedding
    X, XL = torch.randn(40, 6), torch.randn(3, 6)
    model.train()
    sel = CoreSetSSL(7, device="cpu").fit(X, XL, model=model)
    model.eval()
    with torch.no_grad():
        H, HL = model(X)[1], model(XL)[1]
    assert sel.indices_.tolist() == k_center_greedy(H, 7, HL).tolist()
    model.train()
    CoreSet(2, device="cpu").fit(X, model=model)
    assert model.training  # the train/eval flags are restored


# ------------------------------------------------------------------------------------------------- VAAL


def test_vaal_kl_and_losses_are_the_papers_formulas():
    torch.manual_seed(0)
    mu, logvar = torch.randn(6, 4), torch.randn(6, 4)
    q = torch.distributions.Normal(mu, torch.exp(0.5 * logvar))
    p = torch.distributions.Normal(torch.zeros(4), torch.ones(4))
    torch.testing.assert_close(kl_divergence(mu, logvar), torch.distributions.kl_divergence(q, p).sum(1))
    dl, du = torch.randn(5), torch.randn(7)
    D = torch.sigmoid
    torch.testing.assert_close(discriminator_loss(dl, du), -torch.log(D(dl)).mean() - torch.log(1 - D(du)).mean())
    torch.testing.assert_close(adversarial_loss(dl, du), -torch.log(D(dl)).mean() - torch.log(D(du)).mean())


def shifted_pool(seed=0):
    """Labeled data around one centre; the pool holds 40 points there and 20 in a region nothing labeled covers."""
    g = torch.Generator().manual_seed(seed)
    XL = torch.randn(60, 6, generator=g)
    XU = torch.cat([torch.randn(40, 6, generator=g), torch.randn(20, 6, generator=g) + 6.0])
    return XL, XU


def test_vaal_picks_the_lowest_discriminator_scores_and_the_unrepresented_region():
    XL, XU = shifted_pool()
    sel = VAAL(20, latent_dim=4, channels=(32,), iterations=150, batch_size=32, seed=0, device="cpu").fit(XL, XU)
    scores = sel.score(XU)
    torch.testing.assert_close(sel.scores_, scores)
    assert torch.all((scores >= 0) & (scores <= 1))
    # the pick is the m smallest D(mu(x)) (a sign error would pick the labeled-like rows)
    assert set(sel.indices_.tolist()) == set(torch.argsort(scores)[:20].tolist())
    assert sum(i >= 40 for i in sel.indices_.tolist()) >= 16  # most picks from the region no label covers
    again = VAAL(20, latent_dim=4, channels=(32,), iterations=150, batch_size=32, seed=0, device="cpu").fit(XL, XU)
    assert again.indices_.tolist() == sel.indices_.tolist()  # deterministic given the seed


def test_vaal_conv_vae_on_images_and_errors():
    XL, XU = torch.rand(8, 1, 28, 28), torch.rand(12, 1, 28, 28)
    sel = VAAL(3, latent_dim=4, channels=(8, 16), iterations=2, batch_size=4, device="cpu").fit(XL, XU)
    assert sel.vae_(XU)[0].shape == XU.shape and sel.indices_.shape == (3,)
    with pytest.raises(ValueError, match="rows have shape"):
        VAAL(2, iterations=1, device="cpu").fit(torch.rand(3, 5), torch.rand(4, 6))
    with pytest.raises(ValueError, match="m = 9 exceeds"):
        VAAL(9, iterations=1, device="cpu").fit(torch.rand(3, 5), torch.rand(4, 5))
    with pytest.raises(ValueError, match="lr"):
        VAAL(1, lr=-1.0, device="cpu").fit(torch.rand(3, 5), torch.rand(4, 5))
    with pytest.raises(RuntimeError, match="not fitted"):
        VAAL(1).score(torch.rand(2, 5))


# ------------------------------------------------------------------------------------------------- LearnLoss


def brute_force_ranking_loss(pred, target, margin):
    B = len(pred)
    total = 0.0
    for i in range(B // 2):
        j = B - 1 - i
        sign = 1.0 if target[i] > target[j] else -1.0
        total += max(0.0, -sign * (pred[i] - pred[j]) + margin)
    return total / (B // 2)


@pytest.mark.parametrize("seed", range(4))
def test_loss_prediction_loss_equals_the_pairwise_brute_force(seed):
    g = torch.Generator().manual_seed(seed)
    pred, target = torch.randn(10, generator=g), torch.rand(10, generator=g) * 3
    got = loss_prediction_loss(pred, target, margin=0.5)
    assert float(got) == pytest.approx(brute_force_ranking_loss(pred.tolist(), target.tolist(), 0.5), rel=1e-6)


def test_loss_prediction_loss_rewards_the_right_order_and_ignores_the_scale():
    target = torch.tensor([3.0, 1.0, 0.5, 2.0])  # pairs (0, 3) and (1, 2): l_0 > l_3, l_1 > l_2
    right = torch.tensor([10.0, 5.0, 2.0, 7.0])  # same order, gaps >= 1: no loss
    wrong = torch.tensor([7.0, 2.0, 5.0, 10.0])
    assert float(loss_prediction_loss(right, target)) == 0.0
    assert float(loss_prediction_loss(wrong, target)) == pytest.approx(((3 + 1) + (3 + 1)) / 2)
    pred = torch.randn(4, requires_grad=True)
    loss_prediction_loss(pred, target.requires_grad_()).backward()
    assert target.grad is None  # the target loss is a constant
    with pytest.raises(ValueError, match="even"):
        loss_prediction_loss(torch.zeros(3), torch.zeros(3))


def make_lossnet(seed=0):
    torch.manual_seed(seed)
    return LossPredictionNet(MLP(5, 3, hidden=(8, 6), dropout=0.0), ("body.1",), (5,))


def test_loss_prediction_net_reads_the_layers_and_can_stop_the_gradient():
    net = make_lossnet()
    x = torch.randn(8, 5)
    logits, feats, pred = net(x)
    assert logits.shape == (8, 3) and feats.shape == (8, 6) and pred.shape == (8,)
    assert [b.in_features for b in net.loss_module.branches] == [8, 6]  # body.1 (8 units) + the features (6)
    pred.sum().backward()
    assert net.backbone.body[0].weight.grad.abs().sum() > 0
    net.zero_grad()
    net.detach_features = True
    net(x)[2].sum().backward()
    assert net.backbone.body[0].weight.grad is None or net.backbone.body[0].weight.grad.abs().sum() == 0
    assert net.loss_module.out.weight.grad.abs().sum() > 0
    import copy

    twin = copy.deepcopy(net)  # hooks live only during a forward: a copy computes its own outputs
    torch.testing.assert_close(twin(x)[2], net(x)[2])
    with pytest.raises(ValueError, match="no submodule"):
        LossPredictionNet(MLP(5, 3), ("body.9",), (5,))


def test_learnloss_training_is_eq3_and_stops_the_gradient_on_schedule():
    net = make_lossnet()
    algo = LearnLossTraining(weight=0.7, stop_gradient_at=0.6)
    algo.setup(net, FitContext(num_classes=3, total_steps=50))
    (hook,) = algo.hooks()
    assert hook.unit == "iteration" and hook.start == 30 and hook.every is None
    x, y = torch.randn(7, 5), torch.tensor([0, 1, 2, 0, 1, 2, 0])
    out = algo.loss(net, Batch(x, y))
    logits, _, pred = net(x)
    ce = nn.functional.cross_entropy(logits, y, reduction="none")
    expect = ce.mean() + 0.7 * loss_prediction_loss(pred[:6], ce[:6])  # an odd batch pairs its even prefix
    torch.testing.assert_close(out.loss, expect)

    class T:
        model = net

    hook.fn(T)
    assert net.detach_features


def test_learnloss_picks_the_highest_predicted_losses_of_its_candidates():
    net = make_lossnet(1)
    X = torch.randn(50, 5)
    net.eval()
    with torch.no_grad():
        pred = net(X)[2]
    sel = LearnLoss(6).fit(net, X)
    assert sel.indices_.tolist() == torch.argsort(pred, descending=True)[:6].tolist()
    sub = LearnLoss(4, subset=20, seed=3).fit(net, X)
    cand = sub.candidates_
    assert len(cand) == 20 and set(sub.indices_.tolist()) <= set(cand.tolist())
    assert sub.indices_.tolist() == cand[torch.argsort(pred[cand], descending=True)[:4]].tolist()
    with pytest.raises(TypeError, match="LossPredictionNet"):
        LearnLoss(2).fit(MLP(5, 3), X)


# ------------------------------------------------------------------------------------------------- MCDAL


def test_mcdal_discrepancy_is_the_sum_of_three_l1_distances():
    g = torch.Generator().manual_seed(0)
    z, a, b = (torch.randn(9, 4, generator=g) for _ in range(3))
    p, p1, p2 = (torch.softmax(t, 1).numpy() for t in (z, a, b))
    l1 = lambda u, v: np.abs(u - v).sum(1)  # noqa: E731
    torch.testing.assert_close(
        classifier_discrepancy(torch.as_tensor(p1), torch.as_tensor(p2)), torch.as_tensor(l1(p1, p2))
    )
    expect = l1(p1, p2) + l1(p1, p) + l1(p2, p)
    np.testing.assert_allclose(mcdal_discrepancy(z, a, b).numpy(), expect, rtol=1e-5)
    assert float(classifier_discrepancy(torch.as_tensor(p), torch.as_tensor(p)).abs().max()) == 0.0


def test_mcdal_training_the_discrepancy_moves_only_the_auxiliary_classifiers():
    torch.manual_seed(0)
    net = MCDALNet(MLP(5, 3, hidden=(6,), dropout=0.0))
    x_l, y, x_u = torch.randn(8, 5), torch.tensor([0, 1, 2, 0, 1, 2, 0, 1]), torch.randn(10, 5)
    out = MCDALTraining(weight=1.0).loss(net, Batch(x_l, y, x_u))
    out.loss.backward()
    g_backbone = [p.grad.clone() for p in net.backbone.parameters()]
    g_aux = net.aux1.weight.grad.clone()
    net.zero_grad()
    logits, h, (a1, a2) = net(x_l)
    nn.functional.cross_entropy(logits, y).backward()  # the backbone sees the main CE only
    for g, p in zip(g_backbone, net.backbone.parameters()):
        torch.testing.assert_close(g, p.grad)
    net.zero_grad()
    # the auxiliary layers: CE on the labeled batch minus the mean discrepancy /K on the unlabeled batch
    with torch.no_grad():
        lu, hu = net.backbone(x_u)
    p = torch.softmax(lu, 1)
    p1, p2 = torch.softmax(net.aux1(hu), 1), torch.softmax(net.aux2(hu), 1)
    dis = ((p1 - p2).abs().sum(1) + (p1 - p).abs().sum(1) + (p2 - p).abs().sum(1)).mean() / 3
    (nn.functional.cross_entropy(a1, y) + nn.functional.cross_entropy(a2, y) - dis).backward()
    torch.testing.assert_close(g_aux, net.aux1.weight.grad)
    assert float(out.logs["discrepancy"]) == pytest.approx(float(dis.detach()))


def test_mcdal_picks_the_largest_discrepancies():
    torch.manual_seed(2)
    net = MCDALNet(MLP(5, 3, hidden=(6,), dropout=0.0))
    X = torch.randn(30, 5)
    with torch.no_grad():
        logits, _, (a1, a2) = net(X)
    sel = MCDAL(5).fit(net, X)
    assert sel.indices_.tolist() == torch.argsort(mcdal_discrepancy(logits, a1, a2), descending=True)[:5].tolist()
    with pytest.raises(ValueError, match="feature_dim"):
        MCDALNet(nn.Linear(3, 2))


# ------------------------------------------------------------------------------------------------- MMA, CBSSAL, TOD


def test_augmented_margin_is_the_margin_of_the_averaged_prediction():
    # view 1 says class 0 (0.9), view 2 class 1 (0.9): the average is undecided (margin 0); the average of the
    # two per-view margins would be 0.8 -- the plausible wrong reading
    P = torch.tensor([[[0.9, 0.1, 0.0]], [[0.1, 0.9, 0.0]]])
    assert float(augmented_margin(P)[0]) == pytest.approx(0.0)
    g = torch.Generator().manual_seed(0)
    P = torch.softmax(torch.randn(2, 20, 5, generator=g), -1)
    mean = P.mean(0).numpy()
    expect = [np.sort(r)[-1] - np.sort(r)[-2] for r in mean]
    np.testing.assert_allclose(augmented_margin(P).numpy(), expect, rtol=1e-6)


class Noisy(nn.Module):
    """A fixed linear classifier; ``view`` adds noise to chosen rows only (rows >= 10 are "fragile")."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.lin = nn.Linear(4, 3)

    def forward(self, x):
        return self.lin(x), x


def fragile_view(x):
    noise = torch.randn_like(x) * 3.0
    noise[x[:, 3] < 0.5] = 0.0  # only rows marked fragile (last coordinate 1) move
    return x + noise


def test_mma_and_cbssal_pick_by_their_scores():
    X = torch.randn(20, 4)
    X[:, 3] = (torch.arange(20) >= 10).float()
    model = Noisy()
    cb = CBSSAL(5, n_views=6, augment=fragile_view, seed=0).fit(model, X)
    assert all(i >= 10 for i in cb.indices_.tolist())  # only fragile rows can be inconsistent
    assert torch.all(cb.scores_[:10] == 0)
    mma = MMA(4, n_views=2, augment=lambda x: x).fit(model, X)  # identity views: the plain margin
    with torch.no_grad():
        p = torch.softmax(model(X)[0], 1)
    top2 = p.topk(2, 1).values
    torch.testing.assert_close(mma.scores_, top2[:, 0] - top2[:, 1])
    assert mma.indices_.tolist() == torch.argsort(top2[:, 0] - top2[:, 1])[:4].tolist()
    again = CBSSAL(5, n_views=6, augment=fragile_view, seed=0).fit(model, X)
    torch.testing.assert_close(again.scores_, cb.scores_)  # seeded views


def test_inconsistency_is_the_summed_population_variance():
    g = torch.Generator().manual_seed(1)
    P = torch.softmax(torch.randn(6, 15, 4, generator=g), -1)
    expect = P.numpy().var(axis=0, ddof=0).sum(axis=1)
    np.testing.assert_allclose(inconsistency(P).numpy(), expect, rtol=1e-5)
    with pytest.raises(ValueError, match="N \\+ 1 >= 2"):
        inconsistency(P[:1])


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


# ------------------------------------------------------------------------------------------------- the AL loop


def test_active_learning_loop_bookkeeping():
    from sslkit.experiments.paper_b.active import active_learning_loop

    seen = []

    def train(labeled):
        seen.append(labeled.copy())
        return labeled, {"acc": float(len(labeled))}

    def select(state, labeled, unlabeled, k):
        assert not set(unlabeled) & set(labeled) and len(unlabeled) + len(labeled) == 30
        return np.arange(k)[::-1]  # the first k unlabeled rows

    history, labeled = active_learning_loop(30, 4, [3, 5], train, select, seed=1)
    assert [h["n_labeled"] for h in history] == [4, 7, 12] and [h["acc"] for h in history] == [4.0, 7.0, 12.0]
    assert "select_seconds" not in history[0] and "select_seconds" in history[2]
    assert len(set(labeled)) == 12 and list(seen[1][:4]) == list(seen[0])
    first = np.random.default_rng(1).choice(30, 4, replace=False)
    assert list(labeled[:4]) == list(first)
    with pytest.raises(RuntimeError, match="distinct"):
        active_learning_loop(30, 4, [3], train, lambda *a: [0, 0, 1])
    with pytest.raises(ValueError, match="exceed the pool"):
        active_learning_loop(10, 4, [3, 5], train, select)


def test_table2_and_table3_run_end_to_end_on_a_tiny_protocol():
    from sslkit.experiments.paper_b.active import TABLE2_PROTOCOLS, table2_run
    from sslkit.experiments.paper_b.ssal import TABLE3_PROTOCOLS, table3_run

    p2 = {
        **TABLE2_PROTOCOLS["quick"],
        "epochs": 3,
        "vaal": {"epochs": 1, "batch_size": 8, "channels": (16,), "latent_dim": 4},
    }
    for method in ("CoreSet", "VAAL", "LearnLoss", "MCDAL", "SL+RDSS"):
        r = table2_run(method, 0, protocol=p2, device="cpu")
        assert r["budgets"] == [30, 45, 60] and len(r["test_acc_curve"]) == 3
        assert all(0 <= a <= 100 for a in r["test_acc_curve"])
    p3 = {
        **TABLE3_PROTOCOLS["quick"],
        "ssl": {**TABLE3_PROTOCOLS["quick"]["ssl"], "epochs": 1, "iterations_per_epoch": 5},
    }
    for method in ("TOD-Semi", "RDSS"):
        r = table3_run(method, "FreeMatch", 0, protocol=p3, device="cpu")
        assert 0 <= r["test_acc"] <= 100 and (r["first_stage_acc"] is None) == (method == "RDSS")


def test_experiment_inputs_are_checked_and_budgets_follow_the_protocol():
    from sslkit.experiments.paper_b.active import PAPER_TABLE2_B, table2_budgets, table2_run
    from sslkit.experiments.paper_b.ssal import PAPER_TABLE3_B, PAPER_TABLE6_B, table3_run, table6_run

    assert table2_budgets("paper") == [5000, 7500, 10000] and table2_budgets("cpu") == [60, 90, 120]
    with pytest.raises(ValueError, match="method must be one of"):
        table2_run("BALD", 0, protocol="quick")
    with pytest.raises(ValueError, match="protocol must be one of"):
        table3_run("RDSS", "FlexMatch", 0, protocol="huge")
    with pytest.raises(ValueError, match="Table 2's CPU pool"):
        table6_run("cifar10", 0, algorithm="FlexMatch", selector="RDSS", m=40)
    with pytest.raises(ValueError, match="40 rows"):
        table6_run("digits", 0, algorithm="FlexMatch", selector="RDSS", m=100)
    with pytest.raises(ValueError, match="selector must be"):
        table6_run("digits", 0, algorithm="FlexMatch", selector="USL", m=40)
    with pytest.raises(ValueError, match="quick protocol on digits"):
        table6_run("mnist", 0, method="CoreSet")
    # the paper's numbers as printed: Table 2's AL cells are Table 6's cells at the same budget
    t6 = {(r["method"], r["dataset"], r["budget"]): r["acc"] for r in PAPER_TABLE6_B}
    assert all(t6[k] == v for k, v in PAPER_TABLE2_B.items() if k[0] in ("CoreSet", "VAAL", "LearnLoss", "MCDAL"))
    assert PAPER_TABLE3_B[("MMA", "FlexMatch")] == 74.61 and len(PAPER_TABLE6_B) == 56
