"""Paper C on CIFAR-10 at its own splits (issue 44, item 5): the robust OOD scenario of Table 12 and Figure 6 (six
animal classes in distribution, the four vehicle classes OOD, 2 400 labels, 20 000 unlabeled, 5 000 validation
images) on a CPU stand-in -- an MLP head on frozen EfficientNet-Lite0 features of the images
(:data:`.robust.PROTOCOLS`' ``cpu_cifar10``), beside the MNIST stand-ins of ``c_robust``."""

from __future__ import annotations

from ..runs.experiment import STAND_IN, Experiment, Reading, Scale
from . import robust as R

#: what the CIFAR-10 stand-in changes from the paper's protocol
CIFAR10_NOTE = (
    "CIFAR-10 (the JPEG q75 copy of all 60 000 images) at paper C's OOD split and validation set, each image replaced "
    "by its frozen EfficientNet-Lite0 features (1 280, ImageNet-pretrained) and an MLP head (one hidden layer of 128) "
    "trained for 50 epochs (20 000 iterations), not WRN-28-2 on pixels for 500"
)
#: what a fresh machine pays once before the first run: the wall-clock of extracting the features of the 60 000 images
#: (decoding the JPEG copy included), measured on the project's 2-core AMD EPYC (2026-12-06)
FEATURE_SECONDS = 1913
#: the second reading: VAT with Oliver et al.'s / USB's entropy minimisation (as c_robust's cpu_val_em)
EM = "VAT with entropy minimisation"
EM_NOTE = "VAT's entropy minimisation at weight 0.06 (Oliver et al.'s and USB's VAT; CORDS' configs set it to 0)"


def _narrowed(grid: list, ratios) -> list:
    ratios = None if ratios is None else [ratios] if isinstance(ratios, (int, float)) else list(ratios)
    if ratios is not None and not set(ratios) <= {c["ratio"] for c in grid}:
        raise ValueError(f"ratios must be among {sorted({c['ratio'] for c in grid})}, got {ratios}")
    return [c for c in grid if ratios is None or c["ratio"] in ratios]


def cifar10_configs(methods=None, ratios=None) -> list[dict]:
    """The robust grid of ``cpu_cifar10`` (``methods`` / ``ratios``: a subset, e.g. the positive controls' arms
    first)."""
    grid = R.robust_grid("cpu_cifar10", methods=methods) if methods else R.robust_grid("cpu_cifar10")
    return _narrowed(grid, ratios)


def cifar10_em_configs(methods=("vat", "supervised", "ds3l"), ratios=None) -> list[dict]:
    """The entropy-minimisation reading: the arms of its positive controls (VAT and DS3L train with the entropy term;
    Supervised trains no VAT, so its runs here must repeat the main grid's to the last digit, a determinism check);
    ``ratios``: a subset (the two controls at 75 % OOD first, as c_robust's cpu_val_em)."""
    return _narrowed(R.robust_grid("cpu_cifar10_em", methods=methods), ratios)


ROBUST_CIFAR10 = Experiment(
    name="c_robust_cifar10",
    paper="C",
    notebook="c_robust",
    title="Table 12 and Figure 6 on CIFAR-10's own OOD split: an MLP head on frozen features",
    run=R.robust_run,
    scales={
        "cpu": Scale(
            STAND_IN,
            cifar10_configs,
            range(5),
            "cifar10/jpeg",
            threads=1,
            note=CIFAR10_NOTE,
            extra={"data": "CIFAR-10 (JPEG q75 copy), EfficientNet-Lite0 features"},
            readings=(Reading(EM, cifar10_em_configs, note=EM_NOTE),),
            not_replayable=(
                "every record reads the EfficientNet-Lite0 features of CIFAR-10's 60 000 images, which a fresh machine "
                f"extracts once (about {round(FEATURE_SECONDS / 60)} minutes on two cores; the stored seconds leave "
                "them out): `sslkit replay` reruns a record on a machine that has them"
            ),
        )
    },
    version=R.PROTOCOL_VERSION,
    replay_note="an MLP trained by SGD on features with random VAT perturbations",
    by_seed=True,
)
