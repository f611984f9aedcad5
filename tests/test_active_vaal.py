"""sslkit.active.vaal: the VAE's KL term (closed form against torch.distributions), the discriminator / adversarial
losses (against -log sigma by hand), the pick = the lowest D(mu(x)), and on a shifted pool it picks the new region."""

from __future__ import annotations

import pytest
import torch

from sslkit.active import VAAL, adversarial_loss, discriminator_loss, kl_divergence

pytestmark = pytest.mark.usefixtures("one_thread")  # conftest.py


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
