"""VAAL (Sinha, Ebrahimi & Darrell, ICCV 2019, "Variational adversarial active learning").

A β-VAE (encoder ``q_φ(z|x)``, decoder ``p_θ(x|z)``) learns one latent space for the labeled set ``X_L`` and
the unlabeled pool ``X_U``; a discriminator ``D`` learns to tell which set a latent code came from, while the
VAE learns to fool it. The task model plays no part (VAAL is task-agnostic). The paper's objectives (eqs. 1-4)::

    L_VAE^trd = E[log p_θ(x_L|z_L)] - β KL(q_φ(z_L|x_L) || p(z)) + E[log p_θ(x_U|z_U)] - β KL(q_φ(z_U|x_U) || p(z))
    L_VAE^adv = -E[log D(q_φ(z_L|x_L))] - E[log D(q_φ(z_U|x_U))]
    L_VAE     = λ1 L_VAE^trd + λ2 L_VAE^adv            (the VAE minimises -λ1 L^trd + λ2 L^adv)
    L_D       = -E[log D(q_φ(z_L|x_L))] - E[log(1 - D(q_φ(z_U|x_U)))]

with ``p(z) = N(0, I)`` and ``D(z)`` the probability that ``z`` comes from the labeled set. **Sampling** (§3.3):
the ``m`` unlabeled samples with the *lowest* ``D``, i.e. those the discriminator is most sure are unlabeled
(the least represented by the labeled set), scored at the latent mean ``μ(x)``.

Implementation choices (the official code's, ``sinhasam/vaal``): ``D`` and the VAE see the latent mean ``μ``;
per iteration ``vae_steps = 2`` VAE updates then ``disc_steps = 1`` discriminator update, each on a labeled and
an unlabeled batch of ``batch_size``; Adam, lr 5e-4; β = λ1 = λ2 = 1; ``D`` = MLP ``z -> 512 -> 512 -> 1``.
The log-likelihood is a unit-variance Gaussian's, i.e. a squared error; its scale here is the mean over the
input's elements and the KL is summed over latent dimensions and averaged over the batch. Image inputs
``(N, C, H, W)`` get a convolutional VAE (stride-2 4x4 convolutions of ``channels``, the official
``128, 256, 512, 1024`` by default), vectors ``(N, d)`` an MLP VAE (two hidden layers of ``channels[-1]``).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from sslkit._checks import check_count, check_seed
from sslkit.active.scoring import as_inputs, check_budget, top_m
from sslkit.device import resolve_device

__all__ = [
    "VAE",
    "Discriminator",
    "kl_divergence",
    "vae_loss",
    "adversarial_loss",
    "discriminator_loss",
    "VAAL",
]


class VAE(nn.Module):
    """β-VAE for ``input_shape`` = ``(C, H, W)`` (convolutional) or ``(d,)`` (MLP); ``forward(x) ->
    (reconstruction, μ, log σ²)``. The convolutional decoder's output is resized to ``(H, W)`` bilinearly."""

    def __init__(self, input_shape, latent_dim: int = 32, channels=(128, 256, 512, 1024)):
        super().__init__()
        self.input_shape = tuple(int(s) for s in input_shape)
        self.latent_dim = check_count(latent_dim, "latent_dim", allow_zero=False)
        channels = tuple(check_count(c, "channels", allow_zero=False) for c in channels)
        if not channels:
            raise ValueError("channels must name at least one width")
        if len(self.input_shape) == 3:
            c_in, h, w = self.input_shape
            enc, c = [], c_in
            for width in channels:
                enc += [nn.Conv2d(c, width, 4, 2, 1, bias=False), nn.BatchNorm2d(width), nn.ReLU()]
                c, h, w = width, h // 2, w // 2
            if h < 1 or w < 1:
                raise ValueError(f"input {self.input_shape} is too small for {len(channels)} stride-2 convolutions")
            self._grid = (channels[-1], h, w)
            flat = channels[-1] * h * w
            dec = []
            for a, b in zip(channels[::-1], channels[::-1][1:]):
                dec += [nn.ConvTranspose2d(a, b, 4, 2, 1, bias=False), nn.BatchNorm2d(b), nn.ReLU()]
            dec += [nn.ConvTranspose2d(channels[0], c_in, 4, 2, 1)]
        elif len(self.input_shape) == 1:
            d, hid = self.input_shape[0], channels[-1]
            enc = [nn.Linear(d, hid), nn.ReLU(), nn.Linear(hid, hid), nn.ReLU()]
            flat, self._grid = hid, None
            dec = [nn.ReLU(), nn.Linear(hid, hid), nn.ReLU(), nn.Linear(hid, d)]
        else:
            raise ValueError(f"input_shape must be (C, H, W) or (d,), got {self.input_shape}")
        self.encoder = nn.Sequential(*enc)
        self.fc_mu, self.fc_logvar = nn.Linear(flat, self.latent_dim), nn.Linear(flat, self.latent_dim)
        self.fc_decode = nn.Linear(self.latent_dim, flat)
        self.decoder = nn.Sequential(*dec)

    def encode(self, x):
        h = self.encoder(x).flatten(1)
        return self.fc_mu(h), self.fc_logvar(h)

    def decode(self, z):
        h = self.fc_decode(z)
        if self._grid is None:
            return self.decoder(h)
        out = self.decoder(h.view(-1, *self._grid))
        if tuple(out.shape[2:]) != self.input_shape[1:]:
            out = F.interpolate(out, size=self.input_shape[1:], mode="bilinear", align_corners=False)
        return out

    def forward(self, x):
        mu, logvar = self.encode(x)
        z = mu + torch.randn_like(mu) * torch.exp(0.5 * logvar) if self.training else mu
        return self.decode(z), mu, logvar


class Discriminator(nn.Module):
    """VAAL's discriminator ``z -> 512 -> 512 -> 1`` (ReLU); ``forward`` returns the logit of
    ``D(z) = P(z comes from the labeled set)``."""

    def __init__(self, latent_dim: int = 32, hidden: int = 512):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(latent_dim, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, 1)
        )

    def forward(self, z):
        return self.net(z).squeeze(1)


def kl_divergence(mu, logvar) -> torch.Tensor:
    """Per-sample ``KL(N(μ, diag σ²) || N(0, I)) = -1/2 Σ_k (1 + log σ_k² - μ_k² - σ_k²)`` (shape ``(n,)``)."""
    return -0.5 * torch.sum(1.0 + logvar - mu.pow(2) - logvar.exp(), dim=1)


def vae_loss(recon, x, mu, logvar, beta: float = 1.0) -> torch.Tensor:
    """``-L^trd`` of one set: the squared reconstruction error (mean over the elements) plus ``β`` times the
    batch mean of :func:`kl_divergence`."""
    return F.mse_loss(recon, x) + beta * kl_divergence(mu, logvar).mean()


def adversarial_loss(d_labeled, d_unlabeled) -> torch.Tensor:
    """``L_VAE^adv = -E[log D(z_L)] - E[log D(z_U)]`` from the discriminator's logits: the VAE wants every code
    to look labeled."""
    return F.binary_cross_entropy_with_logits(
        d_labeled, torch.ones_like(d_labeled)
    ) + F.binary_cross_entropy_with_logits(d_unlabeled, torch.ones_like(d_unlabeled))


def discriminator_loss(d_labeled, d_unlabeled) -> torch.Tensor:
    """``L_D = -E[log D(z_L)] - E[log(1 - D(z_U))]`` from the discriminator's logits."""
    return F.binary_cross_entropy_with_logits(
        d_labeled, torch.ones_like(d_labeled)
    ) + F.binary_cross_entropy_with_logits(d_unlabeled, torch.zeros_like(d_unlabeled))


class VAAL:
    """Variational adversarial active learning (module docstring): ``VAAL(m).fit(X_labeled, X_unlabeled)``.

    Trains a fresh VAE and discriminator for ``iterations`` iterations (seeded with ``seed``), then scores
    every unlabeled row by ``D(μ(x))``. Sets ``indices_`` (int64 rows of ``X_unlabeled``, the ``m`` lowest
    scores first), ``scores_`` (``D(μ(x))`` in [0, 1] for every unlabeled row), ``vae_`` and
    ``discriminator_`` (trained, in eval mode) and ``history_`` (the last iteration's losses).
    """

    def __init__(
        self,
        m,
        *,
        latent_dim: int = 32,
        channels=(128, 256, 512, 1024),
        iterations: int = 1000,
        batch_size: int = 64,
        lr: float = 5e-4,
        beta: float = 1.0,
        adversary_weight: float = 1.0,
        vae_steps: int = 2,
        disc_steps: int = 1,
        seed=0,
        device="auto",
    ):
        self.m = m
        self.latent_dim = latent_dim
        self.channels = channels
        self.iterations = iterations
        self.batch_size = batch_size
        self.lr = lr
        self.beta = beta
        self.adversary_weight = adversary_weight
        self.vae_steps = vae_steps
        self.disc_steps = disc_steps
        self.seed = seed
        self.device = device

    def _check(self):
        for name in ("iterations", "batch_size", "vae_steps", "disc_steps"):
            check_count(getattr(self, name), name, allow_zero=name == "iterations")
        for name in ("lr", "beta", "adversary_weight"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
                raise ValueError(f"{name} must be a finite number >= 0, got {v!r}")
        return check_seed(self.seed)

    def fit(self, X_labeled, X_unlabeled):
        seed = self._check()
        dev = resolve_device(self.device)
        XL = as_inputs(X_labeled, "X_labeled", device=dev)
        XU = as_inputs(X_unlabeled, "X_unlabeled", device=dev)
        if XL.shape[1:] != XU.shape[1:]:
            raise ValueError(
                f"X_labeled rows have shape {tuple(XL.shape[1:])} but X_unlabeled rows {tuple(XU.shape[1:])}"
            )
        m = check_budget(self.m, XU.shape[0])
        with torch.random.fork_rng(devices=[dev] if dev.type == "cuda" else []):
            torch.manual_seed(seed)
            vae = VAE(XU.shape[1:], self.latent_dim, self.channels).to(dev)
            disc = Discriminator(self.latent_dim).to(dev)
            opt_v = torch.optim.Adam(vae.parameters(), lr=self.lr)
            opt_d = torch.optim.Adam(disc.parameters(), lr=self.lr)
            gen = torch.Generator().manual_seed(seed)
            history = {}
            vae.train(), disc.train()
            for _ in range(self.iterations):
                il = torch.randint(XL.shape[0], (min(self.batch_size, XL.shape[0]),), generator=gen).to(dev)
                iu = torch.randint(XU.shape[0], (self.batch_size,), generator=gen).to(dev)
                xl, xu = XL[il], XU[iu]
                for _ in range(self.vae_steps):
                    rl, mul, lvl = vae(xl)
                    ru, muu, lvu = vae(xu)
                    trd = vae_loss(rl, xl, mul, lvl, self.beta) + vae_loss(ru, xu, muu, lvu, self.beta)
                    adv = adversarial_loss(disc(mul), disc(muu))
                    loss = trd + self.adversary_weight * adv
                    opt_v.zero_grad(set_to_none=True)
                    loss.backward()
                    opt_v.step()
                for _ in range(self.disc_steps):
                    with torch.no_grad():
                        _, mul, _ = vae(xl)
                        _, muu, _ = vae(xu)
                    d_loss = discriminator_loss(disc(mul), disc(muu))
                    opt_d.zero_grad(set_to_none=True)
                    d_loss.backward()
                    opt_d.step()
                history = {"vae_loss": trd.item(), "adversarial_loss": adv.item(), "discriminator_loss": d_loss.item()}
        vae.eval(), disc.eval()
        self.vae_, self.discriminator_, self.history_ = vae, disc, history
        self.scores_ = self.score(XU)
        self.indices_ = top_m(self.scores_, m, largest=False)
        return self

    def score(self, X, batch_size: int = 1024) -> torch.Tensor:
        """``D(μ(x))``, the discriminator's probability that each row of ``X`` is labeled (fitted nets, eval
        mode, no gradients)."""
        if not hasattr(self, "vae_"):
            raise RuntimeError("VAAL is not fitted: call fit(X_labeled, X_unlabeled) first")
        X = as_inputs(X, "X", device=next(self.vae_.parameters()).device)
        with torch.no_grad():
            out = [
                torch.sigmoid(self.discriminator_(self.vae_.encode(X[i : i + batch_size])[0]))
                for i in range(0, X.shape[0], batch_size)
            ]
        return torch.cat(out)

    def __repr__(self) -> str:
        return f"VAAL(m={self.m!r}, latent_dim={self.latent_dim!r}, iterations={self.iterations!r})"
