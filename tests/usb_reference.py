"""USB (``semilearn`` 0.3.2, microsoft/Semi-supervised-learning) as a test oracle -- for tests only.

``import semilearn`` runs the package ``__init__``, which imports every dataset, network and logger USB
ships (scikit-image, transformers, torchaudio, timm, tensorboard, wandb, aim, ruamel.yaml ...), none of
which the six algorithms need and most of which are not installed here. :func:`usb_modules` therefore
imports only the algorithm modules and what they import, with the following stand-ins put into
``sys.modules`` while USB code is imported or an algorithm object is built (and removed afterwards):

* the packages ``semilearn``, ``semilearn.core`` and ``semilearn.nets`` as bare packages (their real
  modules load from the installed files, their ``__init__`` does not run);
* ``semilearn.datasets``: the dataset getters and samplers ``AlgorithmBase`` names (never called: the
  stand-in ``args.dataset`` is not a USB dataset, so ``get_dataset`` returns None and no loader is built);
* ``aim``, ``wandb``, ``ruamel.yaml`` and ``torch.utils.tensorboard``: imported by USB's logging and
  config modules, unused here;
* ``sklearn.metrics`` when it is not imported yet: ``AlgorithmBase.evaluate`` uses it, the tests do not, and
  importing scikit-learn takes seconds.

Every name in a stand-in raises when called, so nothing USB really uses is replaced. :func:`build` makes a
real USB algorithm object through its own ``__init__`` (``AlgorithmBase.__init__`` with a small
``args`` namespace, the network from ``net_builder``, USB's optimiser, loss modules and hooks).

``semilearn`` stays out of the library: only the tests import this file. ``.ci/setup`` installs it with
``--no-deps`` (its own pins do not install here) and runs :func:`usb_modules` once as its import check.
"""

from __future__ import annotations

import contextlib
import copy
import importlib
import importlib.util
import sys
import types
import warnings
from pathlib import Path

from torch import nn

USB_VERSION = "0.3.2"
ALGORITHMS = ("fixmatch", "flexmatch", "freematch", "vat", "meanteacher", "pseudolabel")

_LOADED: dict = {}


def _unavailable(*args, **kwargs):
    raise RuntimeError("stand-in of a module USB imports but the oracle tests do not use (tests/usb_reference.py)")


def _stub(name: str, names=(), path=None) -> types.ModuleType:
    module = types.ModuleType(name)
    for n in names:
        setattr(module, n, _unavailable)
    if path is not None:
        module.__path__ = [str(path)]
    return module


def _stand_ins(root: Path) -> dict:
    datasets = (
        "get_collactor name2sampler DistributedSampler get_eurosat get_medmnist get_semi_aves get_cifar "
        "get_svhn get_stl10 get_imagenet get_json_dset get_pkl_dset"
    ).split()
    metrics = "accuracy_score balanced_accuracy_score confusion_matrix f1_score precision_score recall_score".split()
    ruamel = _stub("ruamel", path=root)  # any path: only ruamel.yaml is looked up, from sys.modules
    ruamel.yaml = _stub("ruamel.yaml")
    return {
        "semilearn": _stub("semilearn", path=root),
        "semilearn.core": _stub("semilearn.core", path=root / "core"),
        "semilearn.nets": _stub("semilearn.nets", path=root / "nets"),
        "semilearn.datasets": _stub("semilearn.datasets", datasets),
        "aim": _stub("aim"),
        "wandb": _stub("wandb"),
        "ruamel": ruamel,
        "ruamel.yaml": ruamel.yaml,
        "torch.utils.tensorboard": _stub("torch.utils.tensorboard", ["SummaryWriter"]),
        "sklearn.metrics": sys.modules.get("sklearn.metrics") or _stub("sklearn.metrics", metrics),
    }


@contextlib.contextmanager
def _usb_import_context():
    """The stand-ins and the USB modules loaded so far in ``sys.modules``; on exit both are taken out again
    (cached for the next use). Everything else imported meanwhile (torch submodules, sklearn) stays: torch
    registers operator libraries at import and must not be imported twice."""
    spec = importlib.util.find_spec("semilearn")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("semilearn is not installed (pip install --no-deps semilearn==0.3.2)")
    stand_ins = _stand_ins(Path(spec.submodule_search_locations[0]))
    saved = {name: sys.modules[name] for name in stand_ins if name in sys.modules}
    sys.modules.update(stand_ins)
    sys.modules.update(_LOADED.get("modules", {}))
    try:
        yield
    finally:
        usb = {k: v for k, v in sys.modules.items() if k == "semilearn" or k.startswith("semilearn.")}
        _LOADED["modules"] = usb
        for name in set(stand_ins) | set(usb):
            sys.modules.pop(name, None)
        sys.modules.update(saved)


def usb_modules() -> types.SimpleNamespace:
    """USB's algorithm classes, hooks and loss helpers (imported once, then cached)."""
    if "namespace" in _LOADED:
        return _LOADED["namespace"]
    from importlib.metadata import version

    if version("semilearn") != USB_VERSION:
        raise ImportError(f"the USB oracle tests are written for semilearn=={USB_VERSION}, got {version('semilearn')}")
    with _usb_import_context(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        base = importlib.import_module("semilearn.core.algorithmbase")
        sys.modules["semilearn.core"].AlgorithmBase = base.AlgorithmBase
        ns = types.SimpleNamespace(
            AlgorithmBase=base.AlgorithmBase,
            criterions=importlib.import_module("semilearn.core.criterions"),
            misc=importlib.import_module("semilearn.core.utils.misc"),
            hooks=importlib.import_module("semilearn.algorithms.hooks"),
            FlexMatchThresholdingHook=importlib.import_module(
                "semilearn.algorithms.flexmatch.utils"
            ).FlexMatchThresholdingHook,
            FreeMatchThresholdingHook=importlib.import_module(
                "semilearn.algorithms.freematch.utils"
            ).FreeMatchThresholdingHook,
            freematch=importlib.import_module("semilearn.algorithms.freematch.freematch"),
            classes={
                "fixmatch": importlib.import_module("semilearn.algorithms.fixmatch.fixmatch").FixMatch,
                "flexmatch": importlib.import_module("semilearn.algorithms.flexmatch.flexmatch").FlexMatch,
                "freematch": importlib.import_module("semilearn.algorithms.freematch.freematch").FreeMatch,
                "vat": importlib.import_module("semilearn.algorithms.vat.vat").VAT,
                "meanteacher": importlib.import_module("semilearn.algorithms.meanteacher.meanteacher").MeanTeacher,
                "pseudolabel": importlib.import_module("semilearn.algorithms.pseudolabel.pseudolabel").PseudoLabel,
            },
        )
    _LOADED["namespace"] = ns
    return ns


class UsbNet(nn.Module):
    """USB's network interface around an sslkit-style model: ``model(x)`` returns ``(logits, features)``,
    USB expects ``{'logits': ..., 'feat': ...}``."""

    def __init__(self, model: nn.Module):
        super().__init__()
        self.net = model

    def forward(self, x):
        out = self.net(x)
        logits, feat = out if isinstance(out, (tuple, list)) else (out, None)
        return {"logits": logits, "feat": logits if feat is None else feat}


#: ``AlgorithmBase.__init__``'s common arguments (USB's ``train.py`` names); the algorithm's own come from kwargs.
COMMON_ARGS = dict(
    epoch=1,
    num_train_iter=100,
    num_eval_iter=100,
    num_log_iter=100,
    ulb_loss_ratio=1.0,
    ema_m=0.999,
    use_cat=True,
    amp=False,
    clip_grad=0.0,
    save_name="usb-oracle",
    save_dir="unused",
    resume=False,
    gpu=None,
    rank=0,
    distributed=False,
    world_size=1,
    dataset="none",  # not a USB dataset: get_dataset returns None, no loader is built
    num_labels=0,
    data_dir="unused",
    include_lb_to_ulb=True,
    optim="SGD",
    lr=0.0,
    momentum=0.9,
    weight_decay=0.0,
    layer_decay=1.0,
    num_warmup_iter=0,
    use_pretrain=False,
    pretrain_path="",
    use_wandb=False,
    use_aim=False,
)


def build(algorithm: str, model: nn.Module, num_classes: int, *, logger=None, **kwargs):
    """A real USB algorithm object (``semilearn.algorithms.<algorithm>``) whose network is a deep copy of
    ``model`` (wrapped in :class:`UsbNet`); ``kwargs`` set or override ``args`` fields (e.g. ``p_cutoff``,
    ``ulb_dest_len``, ``ulb_loss_ratio``, ``num_train_iter``); ``logger`` receives USB's messages (None: print)."""
    usb = usb_modules()
    args = types.SimpleNamespace(**{**COMMON_ARGS, "algorithm": algorithm, "num_classes": num_classes, **kwargs})

    def net_builder(num_classes, pretrained=False, pretrained_path=None):
        return UsbNet(copy.deepcopy(model))

    with _usb_import_context(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # GradScaler without CUDA
        return usb.classes[algorithm](args=args, net_builder=net_builder, tb_log=None, logger=logger)
