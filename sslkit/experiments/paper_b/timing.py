"""Paper B (RDSS) Table 5 (App. D.4): :func:`table5_timing_run` -- wall-clock of one selector picking ``m`` of
``n`` feature vectors; :func:`defects_run` -- what the official code's defects B1 (random-init network features)
and B2 (fixed gamma = 0.5, i.e. sigma = sqrt 2) do to the quality of the selection (one record of either part:
:func:`.runs.table5_run`)."""

from __future__ import annotations

import time

import numpy as np

from sslkit._checks import check_count, check_seed

from .ssl import OFFICIAL_BANDWIDTH, select_indices


def synthetic_features(n: int, d: int = 512, *, seed=0, clusters: int = 100) -> np.ndarray:
    """``n`` float32 vectors in ``R^d``: a mixture of ``clusters`` Gaussians (centres ~ N(0, I), spread 0.5),
    a stand-in with cluster structure for image features in the timing runs."""
    n, d = check_count(n, "n", allow_zero=False), check_count(d, "d", allow_zero=False)
    clusters = check_count(clusters, "clusters", allow_zero=False)
    rng = np.random.default_rng(check_seed(seed))
    centres = rng.standard_normal((clusters, d)).astype(np.float32)
    comp = rng.integers(clusters, size=n)
    return centres[comp] + 0.5 * rng.standard_normal((n, d)).astype(np.float32)


def table5_timing_run(selector: str, n: int, m: int, seed: int, *, d: int = 512, device="cpu") -> dict:
    """Seconds for ``selector`` (:data:`TABLE1_SELECTORS`) to pick ``m`` of ``n`` synthetic ``d``-dim features
    (:func:`synthetic_features` with ``seed``; Stratified gets the mixture component as its label).

    Only the ``fit`` is timed (the features are made before the clock starts); RDSS's time includes the
    median bandwidth and the blockwise mu. Set ``OMP_WAIT_POLICY=PASSIVE`` before Python starts on a busy CPU.
    """
    rng_labels = np.random.default_rng(check_seed(seed) + 1).integers(10, size=check_count(n, "n", allow_zero=False))
    X = synthetic_features(n, d, seed=seed)
    _, sec = select_indices(selector, X, rng_labels, m, seed=seed, device=device)
    return {"seconds": round(sec, 4), "n": int(n), "d": int(d), "m": int(m)}


def random_init_features(images, *, seed=0, device="cpu", batch_size: int = 64) -> np.ndarray:
    """Features of ``images`` from EfficientNet-Lite0 with *random* weights (the analogue of defect B1: the
    official code builds CLIP from its config and never loads the weights).

    Same architecture and preprocessing as the pretrained ``"efficientnet_lite0"`` extractor (bicubic resize
    to 224, ``(255 x - 127) / 128``, global average of the last convolution), PyTorch's default init seeded
    with ``seed``. Not cached.
    """
    import torch
    import torch.nn.functional as F

    from sslkit.device import resolve_device
    from sslkit.features import efficientnet_lite0

    images = np.asarray(images)
    if images.dtype != np.uint8 or images.ndim != 4 or images.shape[-1] != 3:
        raise ValueError(f"images must be uint8 (N, H, W, 3), got dtype {images.dtype} and shape {images.shape}")
    dev = resolve_device(device)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(check_seed(seed))
        model = efficientnet_lite0(pretrained=False).to(dev)
    out = []
    with torch.inference_mode():
        for i in range(0, len(images), batch_size):
            x = torch.as_tensor(images[i : i + batch_size], device=dev).permute(0, 3, 1, 2).float() / 255.0
            x = F.interpolate(x, size=(224, 224), mode="bicubic", align_corners=False).clamp_(0.0, 1.0)
            x = x.mul_(255.0).sub_(127.0).div_(128.0)
            out.append(model.extract_features(x).mean(dim=(2, 3)).float().cpu())
    return torch.cat(out).numpy()


def proxy_accuracy(X_l, y_l, X_test, y_test) -> float:
    """Test accuracy (%) of a logistic regression trained on the labeled set only (z-scored with the
    labeled set's statistics); a labeled set of one class predicts that class."""
    from sklearn.linear_model import LogisticRegression

    if np.unique(y_l).size < 2:
        return 100.0 * float(np.mean(y_test == y_l[0]))
    mean, std = X_l.mean(axis=0), X_l.std(axis=0)
    std[std == 0] = 1.0
    clf = LogisticRegression(max_iter=2000).fit((X_l - mean) / std, y_l)
    return 100.0 * float(clf.score((X_test - mean) / std, y_test))


def defects_run(
    features: str,
    bandwidth: str,
    m: int,
    seed: int,
    *,
    pretrained,
    random_init,
    y_pool,
    pretrained_test,
    y_test,
    device="cpu",
) -> dict:
    """Quality of one RDSS (GKHR) selection under the official code's defects.

    ``features``: "pretrained" (select on ``pretrained``) or "random_init" (select on ``random_init``: B1);
    ``bandwidth``: "median" (§6) or "fixed" (sigma = sqrt 2, the code's gamma = 0.5: B2). Whatever the selection
    was made on, it is measured on the *pretrained* features with their median bandwidth: alpha-MMD^2 at
    ``1 - 1/sqrt(m)`` and MMD^2 (label-free), the classes covered, the smallest class count, and ``proxy_acc``:
    a logistic regression trained on the ``m`` selected, labeled pretrained feature vectors and tested on
    ``pretrained_test`` (a cheap downstream *proxy*, not SSL). ``seed`` seeds the median's subsample only
    (GKHR itself is deterministic).
    """
    from sslkit.select import GKHR, alpha_mmd2, auto_alpha, kernel_row_sums, median_bandwidth, mmd2

    if features not in ("pretrained", "random_init"):
        raise ValueError(f"features must be 'pretrained' or 'random_init', got {features!r}")
    if bandwidth not in ("median", "fixed"):
        raise ValueError(f"bandwidth must be 'median' or 'fixed', got {bandwidth!r}")
    seed = check_seed(seed)
    m = check_count(m, "m", allow_zero=False)
    P = np.asarray(pretrained, dtype=np.float32)
    S = P if features == "pretrained" else np.asarray(random_init, dtype=np.float32)
    if S.shape[0] != P.shape[0] or np.asarray(y_pool).shape != (P.shape[0],):
        raise ValueError(
            f"pretrained ({P.shape[0]} rows), random_init ({S.shape[0]}) and y_pool "
            f"({np.asarray(y_pool).shape}) must describe the same pool"
        )
    bw_sel = median_bandwidth(S, seed=seed, device=device) if bandwidth == "median" else OFFICIAL_BANDWIDTH
    start = time.perf_counter()
    idx = GKHR(m, bandwidth=bw_sel, device=device).fit(S).indices_
    seconds = time.perf_counter() - start
    bw = median_bandwidth(P, seed=seed, device=device)
    mu = kernel_row_sums(P, bandwidth=bw, device=device).cpu().numpy() / P.shape[0]
    y_pool = np.asarray(y_pool)
    counts = np.bincount(y_pool[idx], minlength=int(y_pool.max()) + 1)
    # how degenerate the selection kernel is: mean off-diagonal k(x_i, x_j) on 500 pool rows
    sub = S[:500].astype(np.float64)
    sq = (sub * sub).sum(axis=1)
    d2 = np.maximum(sq[:, None] + sq[None, :] - 2.0 * sub @ sub.T, 0.0)
    off = np.exp(-d2 / bw_sel**2)[~np.eye(len(sub), dtype=bool)]
    return {
        "alpha_mmd2": alpha_mmd2(P, idx, auto_alpha(m), bw, mu=mu, device=device),
        "mmd2": mmd2(P, idx, bw, mu=mu, device=device),
        "classes_covered": int((counts > 0).sum()),
        "min_class_count": int(counts.min()),
        "proxy_acc": proxy_accuracy(
            P[idx], y_pool[idx], np.asarray(pretrained_test, dtype=np.float32), np.asarray(y_test)
        ),
        "selection_bandwidth": float(bw_sel),
        "mean_offdiag_kernel": float(off.mean()),
        "select_seconds": round(seconds, 4),
    }
