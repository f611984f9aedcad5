"""Semi-supervised methods as loss objects (see :mod:`sslkit.algorithms.base` for the interface).

Each method is one :class:`SSLAlgorithm` subclass; the training loop is :class:`sslkit.engine.Trainer`.
"""

from sslkit.algorithms.base import (
    Batch,
    FitContext,
    Hook,
    LossOutput,
    SSLAlgorithm,
    UnlabeledLosses,
    eval_logits,
    forward,
    frozen_bn,
    logits_of,
    masked_ce,
    supervised_ce,
    weighted_mean,
)
from sslkit.algorithms.supervised import Supervised
from sslkit.algorithms.views import Views, weak_strong_forward

__all__ = [
    "Batch",
    "FitContext",
    "Hook",
    "LossOutput",
    "SSLAlgorithm",
    "UnlabeledLosses",
    "Supervised",
    "Views",
    "eval_logits",
    "forward",
    "frozen_bn",
    "logits_of",
    "masked_ce",
    "supervised_ce",
    "weak_strong_forward",
    "weighted_mean",
]

# paper A (risk rewrite) and its SSL baselines
from sslkit.algorithms.fixmatch import FixMatch, fixmatch_unsup_loss  # noqa: E402
from sslkit.algorithms.pseudo_label import PseudoLabel, pseudo_labels  # noqa: E402
from sslkit.algorithms.risk_rewrite import (  # noqa: E402
    NN_RULES,
    PNU,
    LinearRiskAlgorithm,
    OursEC,
    OursIter,
    PerSampleRisk,
    SupervisedRisk,
)
from sslkit.algorithms.risk_terms import batch_component_risks, prior_class_weights  # noqa: E402
from sslkit.algorithms.vat import VAT, VAT_EPS_GRID  # noqa: E402

__all__ += [
    "LinearRiskAlgorithm",
    "SupervisedRisk",
    "PNU",
    "OursEC",
    "OursIter",
    "PerSampleRisk",
    "batch_component_risks",
    "NN_RULES",
    "prior_class_weights",
    "PseudoLabel",
    "pseudo_labels",
    "VAT",
    "VAT_EPS_GRID",
    "FixMatch",
    "fixmatch_unsup_loss",
]

# paper B (RDSS): the SSL methods of its Table 1
from sslkit.algorithms.flexmatch import FlexMatch, flexmatch_thresholds  # noqa: E402
from sslkit.algorithms.freematch import FreeMatch, freematch_fairness_loss  # noqa: E402

__all__ += ["FlexMatch", "flexmatch_thresholds", "FreeMatch", "freematch_fairness_loss"]

# paper C (Retrieve): Mean Teacher beside VAT and FixMatch
from sslkit.algorithms.mean_teacher import MeanTeacher, sigmoid_rampup  # noqa: E402

__all__ += ["MeanTeacher", "sigmoid_rampup"]

# paper C (Retrieve) robust SSL baselines (§4, F.3): meta-reweighting of a base method's unlabeled term, CRUST's mixup
from sslkit.algorithms.crust import CrustMixup  # noqa: E402
from sslkit.algorithms.ds3l import DS3L, MetaWeightNet  # noqa: E402
from sslkit.algorithms.l2rw import L2RW, l2rw_weights  # noqa: E402

__all__ += ["L2RW", "l2rw_weights", "DS3L", "MetaWeightNet", "CrustMixup"]

#: every registered algorithm: name -> class (the contract tests run over all of them)
REGISTRY = {
    cls.name: cls
    for cls in (
        Supervised,
        SupervisedRisk,
        PNU,
        OursEC,
        OursIter,
        PseudoLabel,
        VAT,
        FixMatch,
        FlexMatch,
        FreeMatch,
        MeanTeacher,
        L2RW,
        DS3L,
        CrustMixup,
    )
}
__all__ += ["REGISTRY"]
