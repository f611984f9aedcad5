"""Shared set-up of the tests against USB itself (``semilearn`` 0.3.2, tests/usb_reference.py), not a test module:
the networks (float64, recording their inputs), the data, USB's algorithm objects, spies on USB's hooks and the
tolerances. ``USB`` is None where semilearn is not importable; ``needs_usb`` skips a test then (a whole file of such
tests skips itself with ``USB_MISSING``). The precision rule and what each comparison asserts: test_usb_oracle.py."""

from __future__ import annotations

import logging

import pytest
import torch
from torch import nn

from sslkit.seeding import make_generator

try:
    import usb_reference

    USB = usb_reference.usb_modules()
    USB_MISSING = ""
except ImportError as exc:  # semilearn is installed by .ci/setup
    USB, USB_MISSING = None, f"USB (semilearn 0.3.2) is not importable: {exc}"

needs_usb = pytest.mark.skipif(USB is None, reason=USB_MISSING or "USB")


F32 = dict(rtol=1e-5, atol=1e-6)  # sslkit computes its losses in float32, USB in the network's float64


K = 3  # classes


D = 5  # tabular input width


QUIET = logging.getLogger("usb-oracle")
QUIET.disabled = True


class Tabular(nn.Module):
    """Linear -> (BatchNorm1d) -> tanh -> Linear; ``(logits, features)``; ``scale`` widens the logits so that
    some softmax confidences pass 0.95. ``seen`` records every input (VAT's perturbed passes)."""

    def __init__(self, seed=0, bn=False, scale=3.0, hidden=6):
        super().__init__()
        torch.manual_seed(seed)
        self.body = nn.Sequential(nn.Linear(D, hidden), *([nn.BatchNorm1d(hidden)] if bn else []), nn.Tanh())
        self.classifier = nn.Linear(hidden, K)
        with torch.no_grad():
            self.classifier.weight.mul_(scale)
        self.seen = []
        self.double()

    def forward(self, x):
        self.seen.append(x.detach().clone())
        h = self.body(x)
        return self.classifier(h), h


class Image(nn.Module):
    """Conv 3x3 -> BatchNorm2d -> tanh -> Linear on (N, 1, 4, 4) images; records its inputs."""

    def __init__(self, seed=0):
        super().__init__()
        torch.manual_seed(seed)
        self.conv, self.bn = nn.Conv2d(1, 2, 3, padding=1), nn.BatchNorm2d(2)
        self.classifier = nn.Linear(32, K)
        self.seen = []
        self.double()

    def forward(self, x):
        self.seen.append(x.detach().clone())
        h = torch.tanh(self.bn(self.conv(x))).flatten(1)
        return self.classifier(h), h


def ident(x):
    return x


def strong_view(x):
    """A fixed 'strong augmentation': deterministic, so both implementations see the same strong view."""
    return 0.6 * x + 0.8 * torch.roll(x, 1, dims=1) - 0.3


def data(seed, n_l=6, n_u=10, shape=(D,), spread=2.0):
    g = make_generator(seed)
    x_l = torch.randn(n_l, *shape, generator=g, dtype=torch.float64) * spread
    y_l = torch.randint(0, K, (n_l,), generator=g)
    x_u = torch.randn(n_u, *shape, generator=g, dtype=torch.float64) * spread
    return x_l, y_l, x_u


def build(algorithm, model, **kwargs):
    return usb_reference.build(algorithm, model, K, logger=QUIET, **kwargs)


def spy(obj, name, hook=None, arg=None):
    """Record what ``obj.name`` (or USB hook ``hook``'s ``name``) returns each time it is called (or, with
    ``arg=i``, its i-th positional argument)."""
    target = obj.hooks_dict[hook] if hook is not None else obj
    method, seen = getattr(target, name), []

    def wrapper(*args, **kwargs):
        out = method(*args, **kwargs)
        seen.append(out if arg is None else args[arg])
        return out

    setattr(target, name, wrapper)
    return seen


def grads(loss, model):
    return torch.autograd.grad(loss, list(model.parameters()))


def assert_close_all(ours, ref, **tol):
    assert len(ours) == len(ref)
    for a, b in zip(ours, ref):
        torch.testing.assert_close(a.double(), b.double(), **(tol or F32))


def bn_buffers(model):
    return [b.clone() for name, b in model.named_buffers() if "running" in name]


def perturb(model, seed, size):
    """Add ``size · N(0, 1)`` noise to every weight (the same noise for the same seed and architecture)."""
    g = make_generator(seed)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(torch.randn(p.shape, generator=g, dtype=p.dtype) * size)


def perturb_both(model, usb_alg, seed, size=0.3):
    """The same random change of the weights in both networks (so predictions move between steps)."""
    perturb(model, seed, size)
    perturb(usb_alg.model, seed, size)
