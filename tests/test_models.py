"""Tests for sslkit.models: architectures as the papers define them, shapes, init, gradients, input checks."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from sslkit.models import (
    MLP,
    PAPER_A_MLP_HIDDEN,
    LeNetCIFAR,
    LeNetMNIST,
    PaperCMNISTCNN,
    ResNet18,
    WideResNet,
    count_parameters,
    no_weight_decay_names,
    param_groups,
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


@pytest.fixture(scope="module")
def wrn():
    torch.manual_seed(0)
    return wrn28_2(10)


def wrn_expected_params(depth: int, k: int, num_classes: int, in_channels: int = 3) -> int:
    """Parameter count of the WRN by formula (weights + biases; BN has weight and bias per channel)."""
    n = (depth - 4) // 6
    ch = [16, 16 * k, 32 * k, 64 * k]
    total = in_channels * 16 * 9 + 16  # stem conv with bias
    for s in range(3):
        c_in, c = ch[s], ch[s + 1]
        total += 2 * c_in + 9 * c_in * c + 2 * c + 9 * c * c + (c_in * c if c_in != c else 0)  # first block
        total += (n - 1) * (2 * c + 9 * c * c + 2 * c + 9 * c * c)  # the other blocks
    total += 2 * ch[3]  # final BN
    total += ch[3] * num_classes + num_classes  # classifier
    return total


# ---------------------------------------------------------------- WRN-28-2


def test_wrn28_2_parameter_count_is_the_real_wrn(wrn):
    count = count_parameters(wrn)
    print(f"wrn28_2(10) parameters: {count}")
    assert count == wrn_expected_params(28, 2, 10)
    assert count == 1_467_626
    assert abs(count - 1.47e6) / 1.47e6 < 0.01
    # CORDS' "wrn" is ~23.8M parameters (reference-implementations.md §1.8 D1): we must be far from it.
    assert count < 2e6


@pytest.mark.parametrize("depth,k,classes", [(10, 1, 3), (16, 4, 100), (28, 2, 100)])
def test_wrn_parameter_formula_other_configs(depth, k, classes):
    assert count_parameters(WideResNet(classes, depth=depth, widen_factor=k)) == wrn_expected_params(depth, k, classes)


def test_wrn_structure(wrn):
    convs = [m for m in wrn.modules() if isinstance(m, nn.Conv2d)]
    three = [c for c in convs if c.kernel_size == (3, 3)]
    one = [c for c in convs if c.kernel_size == (1, 1)]
    assert len(three) == 1 + 3 * 4 * 2  # stem + 2 per block, 4 blocks per stage, 3 stages -> depth 28 - 3
    assert len(one) == 3  # 1x1 shortcut in the first block of each stage (16->32, 32->64, 64->128)
    assert [(c.in_channels, c.out_channels, c.stride) for c in one] == [
        (16, 32, (1, 1)),
        (32, 64, (2, 2)),
        (64, 128, (2, 2)),
    ]
    assert convs[0].bias is not None and all(c.bias is None for c in convs[1:])
    assert [len(s) for s in wrn.stages] == [4, 4, 4]
    assert isinstance(wrn.classifier, nn.Linear) and wrn.classifier.in_features == 128 == wrn.feature_dim


def test_wrn_bn_momentum_eps_and_leaky_slope(wrn):
    bns = [m for m in wrn.modules() if isinstance(m, nn.BatchNorm2d)]
    assert len(bns) == 3 * 4 * 2 + 1
    assert all(bn.momentum == 0.001 and bn.eps == 1e-3 for bn in bns)
    acts = [m for m in wrn.modules() if isinstance(m, nn.LeakyReLU)]
    assert len(acts) == len(bns) and all(a.negative_slope == 0.1 for a in acts)
    assert not any(isinstance(m, (nn.ReLU, nn.Dropout)) for m in wrn.modules())


def test_wrn_bn_momentum_is_pytorch_convention():
    # One training-mode forward: running_mean = (1 - 0.001) * 0 + 0.001 * batch_mean (TF decay 0.999).
    torch.manual_seed(0)
    m = wrn28_2(10)
    x = torch.randn(4, 3, 8, 8) + 5.0
    m(x)
    stem_out = m.conv1(x)
    batch_mean = stem_out.mean(dim=(0, 2, 3))
    bn = m.stages[0][0].bn1
    torch.testing.assert_close(bn.running_mean, 0.001 * batch_mean.detach(), rtol=1e-4, atol=1e-7)


def test_wrn_init(wrn):
    bns = [m for m in wrn.modules() if isinstance(m, nn.BatchNorm2d)]
    assert all(torch.all(b.weight == 1) and torch.all(b.bias == 0) for b in bns)
    assert torch.all(wrn.classifier.bias == 0) and torch.all(wrn.conv1.bias == 0)
    # Kaiming normal, fan_out, leaky_relu with a=0: std = sqrt(2 / fan_out); fan_out = out * k * k.
    w = wrn.stages[2][1].conv1.weight  # 128 x 128 x 3 x 3: 147456 samples
    torch.testing.assert_close(w.std().item(), (2.0 / (128 * 9)) ** 0.5, rtol=0.02, atol=0)
    # Xavier normal: std = sqrt(2 / (fan_in + fan_out)).
    big = WideResNet(1000, depth=10, widen_factor=4).classifier.weight  # 1000 x 256
    torch.testing.assert_close(big.std().item(), (2.0 / (256 + 1000)) ** 0.5, rtol=0.02, atol=0)


def test_wrn_every_block_bn_gets_gradient():
    # The first BN of the first block of stages 2 and 3 is dead in the PyTorch FixMatch port; not here.
    torch.manual_seed(0)
    m = wrn28_2(10)
    logits, _ = m(torch.randn(2, 3, 32, 32))
    logits.logsumexp(1).sum().backward()
    for s in range(3):
        assert m.stages[s][0].bn1.weight.grad.abs().sum() > 0


def test_wrn_any_spatial_size_and_in_channels():
    torch.manual_seed(0)
    m = wrn28_2(5, in_channels=1).eval()
    logits, feats = m(torch.randn(3, 1, 28, 28))
    assert logits.shape == (3, 5) and feats.shape == (3, 128)
    with pytest.raises(ValueError, match=r"expects input of shape \(N, 1, \*, \*\), got \(3, 3, 28, 28\)"):
        m(torch.randn(3, 3, 28, 28))


def test_wrn_dropout_option():
    m = wrn28_2(10, drop_rate=0.3)
    drops = [d for d in m.modules() if isinstance(d, nn.Dropout)]
    assert len(drops) == 12 and all(d.p == 0.3 for d in drops)
    assert count_parameters(m) == 1_467_626


@pytest.mark.parametrize(
    "kwargs,exc,msg",
    [
        (dict(depth=27), ValueError, "depth must be 6n"),
        (dict(depth=4), ValueError, "depth must be 6n"),
        (dict(widen_factor=0), ValueError, "widen_factor"),
        (dict(bn_momentum=0.0), ValueError, "bn_momentum"),
        (dict(bn_momentum=0.999), None, None),  # legal in PyTorch convention (but not what you want)
        (dict(leaky_slope=-0.1), ValueError, "leaky_slope"),
        (dict(drop_rate=1.0), ValueError, "drop_rate"),
        (dict(num_classes=0), ValueError, "num_classes"),
        (dict(num_classes=2.5), TypeError, "num_classes"),
    ],
)
def test_wrn_bad_config(kwargs, exc, msg):
    kwargs = {"num_classes": 10, "depth": 10, "widen_factor": 1, **kwargs}
    if exc is None:
        WideResNet(**kwargs)
        return
    with pytest.raises(exc, match=msg):
        WideResNet(**kwargs)


# ---------------------------------------------------------------- LeNets and paper C CNN


def test_lenet_mnist_layers_exactly_paper_a():
    m = LeNetMNIST(10)
    convs = [c for c in m.modules() if isinstance(c, nn.Conv2d)]
    assert [(c.in_channels, c.out_channels, c.kernel_size, c.padding) for c in convs] == [
        (1, 32, (3, 3), (1, 1)),
        (32, 64, (3, 3), (1, 1)),
    ]
    pools = [p for p in m.modules() if isinstance(p, nn.MaxPool2d)]
    assert [(p.kernel_size, p.stride) for p in pools] == [(2, 2), (2, 2)]
    assert (m.fc.in_features, m.fc.out_features) == (64 * 7 * 7, 128)
    assert (m.classifier.in_features, m.classifier.out_features) == (128, 10)
    assert count_parameters(m) == (9 * 32 + 32) + (9 * 32 * 64 + 64) + (3136 * 128 + 128) + (128 * 10 + 10)


def test_lenet_cifar_layers_exactly_paper_a():
    m = LeNetCIFAR(10)
    convs = [c for c in m.modules() if isinstance(c, nn.Conv2d)]
    assert [(c.in_channels, c.out_channels, c.kernel_size, c.padding) for c in convs] == [
        (3, 64, (3, 3), (1, 1)),
        (64, 128, (3, 3), (1, 1)),
    ]
    assert (m.fc.in_features, m.fc.out_features) == (128 * 8 * 8, 256)
    assert (m.classifier.in_features, m.classifier.out_features) == (256, 10)
    assert count_parameters(m) == (27 * 64 + 64) + (9 * 64 * 128 + 128) + (8192 * 256 + 256) + (256 * 10 + 10)


def test_resnet18_is_torchvisions_with_the_cifar_stem():
    import torchvision

    ref = {k: v.shape for k, v in torchvision.models.resnet18(num_classes=10).state_dict().items()}
    ours = {k.removeprefix("net.").replace("classifier.", "fc."): v.shape for k, v in ResNet18(10).state_dict().items()}
    assert ours.keys() == ref.keys()
    assert {k for k in ref if ref[k] != ours[k]} == {"conv1.weight"}  # 7x7 stride 2 -> 3x3 stride 1
    assert ours["conv1.weight"] == (64, 3, 3, 3) and isinstance(ResNet18(10).net.maxpool, torch.nn.Identity)
    plain = ResNet18(10, cifar_stem=False)
    assert plain.net.conv1.kernel_size == (7, 7) and plain(torch.randn(2, 3, 64, 64))[1].shape == (2, 512)
    assert ResNet18(5, in_channels=1)(torch.randn(2, 1, 28, 28))[0].shape == (2, 5)


def test_paper_c_mnist_cnn_layers():
    m = PaperCMNISTCNN(6)
    convs = [c for c in m.modules() if isinstance(c, nn.Conv2d)]
    assert [(c.in_channels, c.out_channels, c.kernel_size) for c in convs] == [(1, 16, (3, 3)), (16, 32, (3, 3))]
    pools = [p for p in m.modules() if isinstance(p, nn.MaxPool2d)]
    assert [(p.kernel_size, p.stride, p.padding) for p in pools] == [(3, 2, 1), (3, 2, 1)]
    assert sum(isinstance(r, nn.ReLU) for r in m.modules()) == 2
    assert count_parameters(m) == (9 * 16 + 16) + (9 * 16 * 32 + 32) + (1568 * 6 + 6)


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


# ---------------------------------------------------------------- MLP


def test_mlp_layers_widths_and_dropout():
    m = MLP(20, 7, hidden=(512, 256))
    linears = [lin for lin in m.modules() if isinstance(lin, nn.Linear)]
    assert [(lin.in_features, lin.out_features) for lin in linears] == [(20, 512), (512, 256), (256, 7)]
    drops = [d for d in m.modules() if isinstance(d, nn.Dropout)]
    assert len(drops) == 2 and all(d.p == 0.2 for d in drops)
    assert sum(isinstance(r, nn.ReLU) for r in m.modules()) == 2
    assert m.feature_dim == 256
    assert [type(layer).__name__ for layer in m.body] == ["Linear", "ReLU", "Dropout"] * 2


def test_mlp_default_and_logistic_regression():
    m = MLP(5, 2)
    assert m.hidden == (256, 256) and m.dropout == 0.2
    lr = MLP(5, 3, hidden=())
    assert lr.feature_dim == 5 and count_parameters(lr) == 5 * 3 + 3
    x = torch.randn(4, 5)
    logits, feats = lr(x)
    torch.testing.assert_close(feats, x)


def test_paper_a_mlp_widths():
    assert PAPER_A_MLP_HIDDEN == {
        "adult": (256, 256),
        "banknote": (256, 256),
        "breast_cancer": (256, 256),
        "credit_default": (256, 256),
        "covertype": (512, 512),
        "shuttle": (512, 256),
        "dry_bean": (512, 256),
    }
    for name, hidden in PAPER_A_MLP_HIDDEN.items():
        assert MLP(10, 2, hidden=hidden).feature_dim == hidden[-1], name


def test_mlp_dropout_active_only_in_train_mode():
    torch.manual_seed(0)
    m = MLP(6, 3, hidden=(512, 512), dropout=0.5)
    seen = {}
    m.body[5].register_forward_hook(lambda mod, inp, out: seen.update(inp=inp[0], out=out))
    x = torch.randn(64, 6)
    _, f_train = m.train()(x)
    assert torch.equal(f_train, seen["out"])  # features = output of the last dropout
    active = seen["inp"] != 0
    dropped = active & (f_train == 0)
    assert 0.45 < dropped.sum().item() / active.sum().item() < 0.55  # about p of the active units dropped
    kept = active & ~dropped
    torch.testing.assert_close(f_train[kept], seen["inp"][kept] / 0.5)  # inverted dropout scaling
    _, f_eval = m.eval()(x)
    assert torch.equal(seen["out"], seen["inp"])  # eval: dropout is the identity
    h = torch.relu(m.body[3](torch.relu(m.body[0](x))))  # the net without dropout
    torch.testing.assert_close(f_eval, h)


@pytest.mark.parametrize(
    "kwargs,exc,msg",
    [
        (dict(in_features=0), ValueError, "in_features"),
        (dict(num_classes=-1), ValueError, "num_classes"),
        (dict(hidden=(256, 0)), ValueError, "hidden width"),
        (dict(hidden=256), TypeError, "hidden must be a sequence"),
        (dict(dropout=1.0), ValueError, "dropout"),
        (dict(dropout=-0.1), ValueError, "dropout"),
    ],
)
def test_mlp_bad_config(kwargs, exc, msg):
    with pytest.raises(exc, match=msg):
        MLP(**{"in_features": 4, "num_classes": 2, **kwargs})


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


# ---------------------------------------------------------------- weight-decay groups


def test_param_groups_skip_bn_and_bias(wrn):
    groups = param_groups(wrn, 5e-4)
    assert [g["weight_decay"] for g in groups] == [5e-4, 0.0]
    decay_ids = {id(p) for p in groups[0]["params"]}
    names = dict(wrn.named_parameters())
    skip = no_weight_decay_names(wrn)
    for n, p in names.items():
        is_bn_or_bias = n.endswith(".bias") or ".bn" in n or n.startswith("bn.")
        assert (n in skip) == is_bn_or_bias, n
        assert (id(p) in decay_ids) == (not is_bn_or_bias), n
    # decayed = every conv weight + the classifier weight.
    n_weights = sum(1 for m in wrn.modules() if isinstance(m, (nn.Conv2d, nn.Linear)))
    assert len(groups[0]["params"]) == n_weights
    assert sum(p.numel() for g in groups for p in g["params"]) == count_parameters(wrn)
    torch.optim.SGD(groups, lr=0.03, momentum=0.9, nesterov=True)  # usable as is


def test_param_groups_mlp_and_frozen_params():
    m = MLP(4, 2, hidden=(8,))
    m.classifier.weight.requires_grad_(False)
    groups = param_groups(m, 1e-4)
    assert [len(g["params"]) for g in groups] == [1, 2]  # body.0.weight ; body.0.bias, classifier.bias
    assert param_groups(m, 0)[0]["weight_decay"] == 0.0


@pytest.mark.parametrize("wd", [-1e-4, float("nan"), "0.1", True])
def test_param_groups_bad_weight_decay(wd):
    with pytest.raises(ValueError, match="weight_decay"):
        param_groups(MLP(4, 2), wd)


def test_param_groups_bad_model():
    with pytest.raises(TypeError, match="model must be a torch.nn.Module"):
        param_groups("model", 1e-4)


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
