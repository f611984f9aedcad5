"""Tests of sslkit.models over every architecture it exports: input checks, shapes, the classifier on the features,
seeded init, eval determinism, gradients, CUDA. Each architecture's own layers: test_models_<module>.py."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from sslkit.models import (
    MLP,
    LeNetCIFAR,
    LeNetMNIST,
    PaperCMNISTCNN,
    ResNet18,
    wrn28_2,
)

torch.set_num_threads(1)

# (factory, input shape without batch, feature_dim)
MODELS = {
    "mlp": (lambda: MLP(13, 3), (13,), 256),
    "lenet_mnist": (lambda: LeNetMNIST(10), (1, 28, 28), 128),
    "lenet_cifar": (lambda: LeNetCIFAR(10), (3, 32, 32), 256),
    "paperc_mnist": (lambda: PaperCMNISTCNN(6), (1, 28, 28), 32 * 7 * 7),
    "wrn28_2": (lambda: wrn28_2(10), (3, 32, 32), 128),
    "resnet18": (lambda: ResNet18(10), (3, 32, 32), 512),
}


# ---------------------------------------------------------------- input checks


@pytest.mark.parametrize(
    "model,bad_shape,expected",
    [
        (LeNetMNIST(10), (2, 28, 28), r"\(N, 1, 28, 28\), got \(2, 28, 28\)"),
        (LeNetMNIST(10), (2, 3, 28, 28), r"\(N, 1, 28, 28\), got \(2, 3, 28, 28\)"),
        (LeNetCIFAR(10), (2, 3, 28, 28), r"\(N, 3, 32, 32\), got \(2, 3, 28, 28\)"),
        (LeNetCIFAR(10), (2, 32, 32, 3), r"\(N, 3, 32, 32\), got \(2, 32, 32, 3\)"),  # HWC not converted
        (PaperCMNISTCNN(4), (2, 1, 32, 32), r"\(N, 1, 28, 28\), got \(2, 1, 32, 32\)"),
        (MLP(8, 2), (2, 9), r"\(N, 8\), got \(2, 9\)"),
        (MLP(8, 2), (8,), r"\(N, 8\), got \(8,\)"),
    ],
)
def test_wrong_input_shape_raises_clear_valueerror(model, bad_shape, expected):
    with pytest.raises(ValueError, match=r"expects input of shape " + expected):
        model(torch.randn(*bad_shape))


def test_wrong_input_type_raises_typeerror():
    with pytest.raises(TypeError, match="floating-point.*uint8.*images_to_tensor"):
        LeNetMNIST(10)(torch.zeros(2, 1, 28, 28, dtype=torch.uint8))
    with pytest.raises(TypeError, match="torch.Tensor, got ndarray"):
        MLP(3, 2)(torch.zeros(2, 3).numpy())


# ---------------------------------------------------------------- all models


@pytest.mark.parametrize("name", list(MODELS))
def test_output_shapes_and_classifier_consistency(name):
    factory, shape, feature_dim = MODELS[name]
    torch.manual_seed(0)
    model = factory().eval()
    x = torch.randn(2, *shape)
    logits, feats = model(x)
    assert model.feature_dim == feature_dim
    assert logits.shape == (2, model.num_classes) and feats.shape == (2, feature_dim)
    assert logits.dtype == feats.dtype == torch.float32
    torch.testing.assert_close(model.classifier(feats), logits)


@pytest.mark.parametrize("name", list(MODELS))
def test_same_seed_same_init(name):
    factory = MODELS[name][0]
    torch.manual_seed(123)
    a = factory().state_dict()
    torch.manual_seed(123)
    b = factory().state_dict()
    torch.manual_seed(124)
    c = factory().state_dict()
    assert a.keys() == b.keys()
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert any(not torch.equal(a[k], c[k]) for k in a if a[k].is_floating_point())


@pytest.mark.parametrize("name", list(MODELS))
def test_eval_mode_is_deterministic(name):
    factory, shape, _ = MODELS[name]
    torch.manual_seed(0)
    model = factory()
    x = torch.randn(3, *shape)
    model.train()
    model(x)  # move BN running stats away from their init
    model.eval()
    with torch.no_grad():
        l1, f1 = model(x)
        l2, f2 = model(x)
        l_single, _ = model(x[:1])
    assert torch.equal(l1, l2) and torch.equal(f1, f2)
    torch.testing.assert_close(l_single, l1[:1])  # eval output of a sample does not depend on the batch


@pytest.mark.parametrize("name", list(MODELS))
def test_gradient_reaches_every_parameter(name):
    factory, shape, _ = MODELS[name]
    torch.manual_seed(0)
    model = factory().train()
    x = torch.randn(4, *shape)
    y = torch.arange(4) % model.num_classes
    logits, _ = model(x)
    nn.functional.cross_entropy(logits, y).backward()
    for pname, p in model.named_parameters():
        assert p.grad is not None, pname
        assert torch.isfinite(p.grad).all(), pname
        assert p.grad.abs().sum() > 0, pname


# ---------------------------------------------------------------- devices


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.parametrize("name", list(MODELS))
def test_cuda_forward_and_autocast(name):
    factory, shape, feature_dim = MODELS[name]
    torch.manual_seed(0)
    model = factory().to("cuda")
    x = torch.randn(4, *shape, device="cuda")
    with torch.autocast("cuda", dtype=torch.bfloat16):
        logits, feats = model(x)
    assert logits.device.type == "cuda" and feats.shape == (4, feature_dim)
    model.eval()
    cpu_model = factory()
    cpu_model.load_state_dict({k: v.cpu() for k, v in model.state_dict().items()})
    cpu_model.eval()
    with torch.no_grad():
        torch.testing.assert_close(model(x)[0].cpu(), cpu_model(x.cpu())[0], rtol=2e-2, atol=2e-2)  # TF32 convs
