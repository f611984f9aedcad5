"""VAT (sslkit.algorithms.vat): BatchNorm running statistics untouched by the adversarial passes, and the perturbation
built from the gradient with respect to d only; one step, the power iterations and the two differences by design
against USB's VAT (tests/usb_problem.py)."""

import functools

import pytest
import torch
from test_algorithms_risk_rewrite import BNNet
from usb_problem import Image, K, Tabular, assert_close_all, bn_buffers, build, grads, needs_usb
from usb_problem import data as usb_data

from sslkit.algorithms import VAT, Batch, FitContext, frozen_bn

torch.set_num_threads(1)


def test_vat_keeps_bn_running_stats_and_uses_only_d_gradients():
    torch.manual_seed(0)
    model = BNNet().train()
    x_l, y_l, x_u = torch.randn(8, 3), torch.tensor([0, 1, 2, 0, 1, 2, 0, 1]), torch.randn(16, 3) * 3
    ref = BNNet().train()
    ref.load_state_dict(model.state_dict())
    ref(x_l)  # a labeled-only forward: the only update to the running statistics
    algo = VAT(2.0)
    out = algo.loss(model, Batch(x_l, y_l, x_u, step=0))
    for name in ("running_mean", "running_var", "num_batches_tracked"):
        assert torch.equal(getattr(model.bn, name), getattr(ref.bn, name))
    assert all(p.grad is None for p in model.parameters())  # autograd.grad w.r.t. d only
    with torch.no_grad():
        p = torch.softmax(model(x_u)[0], 1)
    r = algo.adversarial_perturbation(model, x_u, p)
    assert torch.allclose(r.norm(dim=1), torch.full((16,), 2.0), atol=1e-4)
    out.loss.backward()
    assert model.fc.weight.grad.abs().sum() > 0
    with pytest.raises(ValueError, match="eps"):
        VAT(0.0)


# USB's VAT: float32 networks here: sslkit computes its KL in float32 whatever the network's dtype, USB in the network's
# dtype, so float32 is where both do the same arithmetic. ξ = 0.1 (passed to USB's vat_loss): the finite
# difference ``softmax(z + J ξd) − p`` is then far above float32 rounding, and the two directions agree to
# ~2e-5 ε on every CPU dispatch level. At USB's and paper A's ξ = 1e-6 that difference is of the order of
# float32 rounding, so both implementations' directions are mostly rounding (on these tiny networks they still
# agree with each other, but a test of that would test rounding, not the method).


@pytest.fixture
def usb_vat_on_cpu(monkeypatch):
    """USB's ``vat_loss`` moves its random direction with ``d.cuda(self.gpu)``; ``Tensor.cuda`` is the identity
    while USB's code runs on the CPU. (It draws the direction with ``torch.Tensor(size).normal_()``, which gives
    the same numbers as sslkit's ``torch.randn_like`` from the same seed for float32 inputs.)"""
    monkeypatch.setattr(torch.Tensor, "cuda", lambda self, *args, **kwargs: self)


def usb_vat(model, eps, lam=1.0, xi=None, **kwargs):
    args = dict(ent_loss_ratio=0.0, vat_eps=eps, vat_embed=False, unsup_warm_up=0.4, ulb_loss_ratio=lam)
    usb = build("vat", model, **{**args, **kwargs})
    if xi is not None:  # USB's train_step calls vat_loss with its default xi = 1e-6
        usb.vat_loss = functools.partial(type(usb).vat_loss, usb, xi=xi)
    return usb


def image_data(seed):
    return tuple(t.float() if t.is_floating_point() else t for t in usb_data(seed, shape=(1, 4, 4)))


@needs_usb
@pytest.mark.usefixtures("usb_vat_on_cpu")
def test_vat_step_agrees_with_usb():
    """One VAT step on (N, 1, 4, 4) images with BatchNorm2d, the same random start (same seed): the probe
    ``x + ξ d/|d|``, the adversarial perturbation ``r_adv`` (per-sample norm ε), sup / unsup / total loss,
    gradients, and the running statistics (unlabeled passes frozen in both, so only the labeled pass counts).
    USB's entropy-minimisation weight is 0 and its ramp at 1 here (both differ on purpose: next tests)."""
    eps, xi, lam = 1.5, 0.1, 0.8
    model = Image().float()
    x_l, y_l, x_u = image_data(50)
    ours = VAT(eps, xi=xi, lambda_u=lam)
    ours.setup(model, FitContext(num_classes=K))
    usb = usb_vat(model, eps, lam, xi=xi)
    usb.it = usb.num_train_iter  # USB's unsupervised ramp at 1
    torch.manual_seed(11)
    out = ours.loss(model, Batch(x_l, y_l, x_u))
    torch.manual_seed(11)
    ref, log = usb.train_step(x_lb=x_l, y_lb=y_l, x_ulb_w=x_u)
    seen, usb_seen = model.seen, usb.model.net.seen  # passes: labeled, clean unlabeled, probe, adversarial
    assert len(seen) == len(usb_seen) == 4
    torch.testing.assert_close(seen[2], usb_seen[2], rtol=0, atol=1e-7)  # the same probe x + ξ d/|d|
    r_ours, r_usb = seen[3] - x_u, usb_seen[3] - x_u
    torch.testing.assert_close(r_ours.flatten(1).norm(dim=1), torch.full((len(x_u),), eps))
    torch.testing.assert_close(r_ours, r_usb, rtol=0, atol=2e-4 * eps)
    torch.testing.assert_close(out.loss, ref["loss"], rtol=1e-5, atol=1e-6)
    assert out.logs["unsup_loss"].item() == pytest.approx(log["train/unsup_loss"], rel=1e-4)
    assert out.logs["unsup_loss"].item() > 1e-3
    assert_close_all(grads(out.loss, model), grads(ref["loss"], usb.model), rtol=1e-4, atol=1e-6)
    assert_close_all(bn_buffers(model), bn_buffers(usb.model), rtol=1e-6, atol=1e-7)


@needs_usb
@pytest.mark.usefixtures("usb_vat_on_cpu")
@pytest.mark.parametrize("eps", [0.5, 2.0])
def test_vat_power_iterations_agree_with_usb(eps):
    """``VAT.adversarial_perturbation`` with 1, 2 and 3 power iterations = USB's ``vat_loss(num_iters=...)``
    (same seed, BatchNorm frozen in both); the direction changes with the number of iterations, so a wrong
    count would fail."""
    xi = 0.1
    model = Image(seed=1).float()
    _, _, x_u = image_data(51)
    usb = usb_vat(model, eps)
    found = {}
    for n_power in (1, 2, 3):
        with frozen_bn(model):
            p = torch.softmax(model(x_u)[0], dim=1)
            torch.manual_seed(12)
            r_ours = VAT(eps, xi=xi, n_power=n_power).adversarial_perturbation(model, x_u, p)
        usb.bn_controller.freeze_bn(usb.model)
        ul_y = usb.model(x_u)["logits"]
        torch.manual_seed(12)
        usb.vat_loss(usb.model, x_u, ul_y, xi=xi, eps=eps, num_iters=n_power)
        usb.bn_controller.unfreeze_bn(usb.model)
        r_usb = usb.model.net.seen[-1] - x_u
        torch.testing.assert_close(r_ours, r_usb, rtol=0, atol=2e-4 * eps)
        found[n_power] = r_ours
    assert (found[1] - found[3]).abs().max() > 1e-2 * eps


@needs_usb
@pytest.mark.usefixtures("usb_vat_on_cpu")
def test_vat_differs_from_usb_by_entropy_minimisation_and_ramp():
    """USB's VAT adds ``ent_loss_ratio · H(softmax(f(x_u)))`` (0.06) and ramps the VAT term linearly over 40% of
    training; sslkit follows paper A App. C (no entropy term, no ramp): ``CE + λ·KL``."""
    eps, lam, xi = 1.0, 1.0, 0.1
    model = Image(seed=2).float()
    x_l, y_l, x_u = image_data(52)
    ours = VAT(eps, xi=xi, lambda_u=lam)
    ours.setup(model, FitContext(num_classes=K))
    usb = usb_vat(model, eps, lam, xi=xi, ent_loss_ratio=0.06, num_train_iter=100)
    usb.it = 20  # ramp 20 / 40 = 0.5
    torch.manual_seed(13)
    out = ours.loss(model, Batch(x_l, y_l, x_u, step=20))
    torch.manual_seed(13)
    ref, log = usb.train_step(x_lb=x_l, y_lb=y_l, x_ulb_w=x_u)
    with frozen_bn(model):
        p = torch.softmax(model(x_u)[0], dim=1)
    entropy = -(p * p.log()).sum(1).mean().item()
    assert log["train/loss_entmin"] == pytest.approx(entropy, rel=1e-5)
    usb_total = log["train/sup_loss"] + lam * 0.5 * log["train/unsup_loss"] + 0.06 * entropy
    assert ref["loss"].item() == pytest.approx(usb_total, rel=1e-5)
    assert out.loss.item() == pytest.approx(out.logs["sup_loss"].item() + lam * out.logs["unsup_loss"].item(), rel=1e-6)
    assert out.logs["unsup_loss"].item() == pytest.approx(log["train/unsup_loss"], rel=1e-4)  # the same KL
    assert abs(out.loss.item() - ref["loss"].item()) > 1e-2


@needs_usb
@pytest.mark.usefixtures("usb_vat_on_cpu")
def test_vat_with_entropy_minimisation_agrees_with_usb():
    """``VAT(lambda_ent=0.06)`` is USB's VAT with its entropy term (ramp at 1): the same total loss, entropy,
    gradients (the entropy's through the clean pass) and BatchNorm statistics; without the term the losses differ."""
    eps, lam, xi = 1.0, 0.7, 0.1
    model = Image(seed=3).float()
    x_l, y_l, x_u = image_data(53)
    ours = VAT(eps, xi=xi, lambda_u=lam, lambda_ent=0.06)
    ours.setup(model, FitContext(num_classes=K))
    usb = usb_vat(model, eps, lam, xi=xi, ent_loss_ratio=0.06)
    usb.it = usb.num_train_iter  # USB's unsupervised ramp at 1
    torch.manual_seed(14)
    out = ours.loss(model, Batch(x_l, y_l, x_u))
    torch.manual_seed(14)
    ref, log = usb.train_step(x_lb=x_l, y_lb=y_l, x_ulb_w=x_u)
    assert out.logs["entropy"].item() == pytest.approx(log["train/loss_entmin"], rel=1e-5)
    assert log["train/loss_entmin"] > 0.1  # the term is not negligible here
    torch.testing.assert_close(out.loss, ref["loss"], rtol=1e-5, atol=1e-6)
    assert_close_all(grads(out.loss, model), grads(ref["loss"], usb.model), rtol=1e-4, atol=1e-6)
    assert_close_all(bn_buffers(model), bn_buffers(usb.model), rtol=1e-6, atol=1e-7)
    # the per-sample losses carry the term (what DS3L / L2RW / a coreset weight): their weighted mean is the loss
    torch.manual_seed(14)
    weighted = ours.loss(model, Batch(x_l, y_l, x_u, u_weight=torch.ones(len(x_u))))
    torch.testing.assert_close(weighted.loss, out.loss, rtol=1e-6, atol=1e-7)
    torch.manual_seed(14)
    plain = VAT(eps, xi=xi, lambda_u=lam).loss(model, Batch(x_l, y_l, x_u))
    assert abs(plain.loss.item() - out.loss.item()) > 1e-3


def test_vat_entropy_weight_is_checked():
    for bad in (-0.1, float("nan")):
        with pytest.raises(ValueError, match="lambda_ent"):
            VAT(1.0, lambda_ent=bad)
    for bad in (True, "0.06"):
        with pytest.raises(TypeError, match="lambda_ent must be a real number"):
            VAT(1.0, lambda_ent=bad)
    with pytest.raises(ValueError, match="lambda_u must be non-negative"):
        VAT(1.0, lambda_u=-1.0)
    with pytest.raises(ValueError, match="lambda_ent > 0 needs lambda_u > 0"):
        VAT(1.0, lambda_u=0.0, lambda_ent=0.06)
    assert "lambda_ent=0.06" in repr(VAT(1.0, lambda_ent=0.06)) and "lambda_ent" not in repr(VAT(1.0))


@needs_usb
@pytest.mark.usefixtures("usb_vat_on_cpu")
def test_usb_vat_does_not_normalise_tabular_directions():
    """USB's ``_l2_normalize`` divides by the norm only for 3-D and 4-D arrays; a 2-D (N, d) tabular batch passes
    through unchanged. USB's tabular VAT therefore probes with ``ξ · N(0, I)`` and perturbs by ``ε ·`` the raw KL
    gradient, whose norm is tiny: the perturbation and the VAT term all but vanish. sslkit normalises every sample
    over all its non-batch dimensions (``r_adv`` of norm ε), as in Miyato et al. (paper A uses VAT on tabular data)."""
    eps = 1.0
    model = Tabular(seed=4).float()
    x_l, y_l, x_u = (t.float() if t.is_floating_point() else t for t in usb_data(53))
    ours = VAT(eps)
    ours.setup(model, FitContext(num_classes=K))
    usb = usb_vat(model, eps)
    usb.it = usb.num_train_iter
    torch.manual_seed(14)
    out = ours.loss(model, Batch(x_l, y_l, x_u))
    torch.manual_seed(14)
    _, log = usb.train_step(x_lb=x_l, y_lb=y_l, x_ulb_w=x_u)
    torch.manual_seed(14)
    raw = torch.randn_like(x_u)
    torch.testing.assert_close(usb.model.net.seen[2] - x_u, 1e-6 * raw)  # the probe: ξ times the raw draw
    r_ours, r_usb = model.seen[3] - x_u, usb.model.net.seen[3] - x_u
    torch.testing.assert_close(r_ours.norm(dim=1), torch.full((len(x_u),), eps))
    assert r_usb.norm(dim=1).max() < 1e-3 * eps
    assert log["train/unsup_loss"] < 1e-6 < 1e-3 < out.logs["unsup_loss"].item()
