"""Active-learning (AL) and semi-supervised active-learning (SSAL) selections that paper B compares RDSS with
(§7.3, Tables 2, 3 and 6), each as its own paper defines it -- one module per method:

* :mod:`sslkit.active.core_set`: :func:`k_center_greedy` (Sener & Savarese 2018, Algorithm 1),
  :class:`CoreSet` and :class:`CoreSetSSL` (the same pick on a semi-supervised model's features);
* :mod:`sslkit.active.vaal`: :class:`VAAL` (Sinha et al. 2019: β-VAE + adversarial discriminator);
* :mod:`sslkit.active.learning_loss`: :class:`LearnLoss` (Yoo & Kweon 2019: loss prediction module,
  margin ranking loss :func:`loss_prediction_loss`), its net :class:`LossPredictionNet` and training
  :class:`LearnLossTraining`;
* :mod:`sslkit.active.mcdal`: :class:`MCDAL` (Cho et al. 2022: maximum classifier discrepancy of two
  auxiliary classifiers), :class:`MCDALNet`, :class:`MCDALTraining`;
* :mod:`sslkit.active.mma`: :class:`MMA` (Song et al. 2019: margin of augmentation-averaged predictions);
* :mod:`sslkit.active.cbssal`: :class:`CBSSAL` (Gao et al. 2020: inconsistency under augmentation);
* :mod:`sslkit.active.tod`: :class:`TODSemi` (Huang et al. 2021: temporal / cyclic output discrepancy);
* :mod:`sslkit.active.scoring`: what they share (input checks, probabilities and features of a model on a pool,
  the stable "m best scores" rule).

Interface: the constructor holds the hyper-parameters (``m``, the number of rows to select, first); ``fit``
takes the trained model(s) and the unlabeled pool (VAAL: the labeled and unlabeled inputs; CoreSet: also the
labeled inputs) and sets ``indices_`` -- int64 rows of the unlabeled pool, best first, on the model's /
input's device -- and, for score-based methods, ``scores_``. Tensors in, tensors out, any device. The
training of the models (the AL loop) is not here: it sits above the engine, in
:mod:`sslkit.experiments.paper_b.active` (Table 2) and :mod:`sslkit.experiments.paper_b.ssal` (Tables 3, 6).
"""

from sslkit.active.cbssal import CBSSAL, inconsistency
from sslkit.active.core_set import CoreSet, CoreSetSSL, k_center_greedy
from sslkit.active.learning_loss import (
    LearnLoss,
    LearnLossTraining,
    LossPredictionModule,
    LossPredictionNet,
    loss_prediction_loss,
)
from sslkit.active.mcdal import MCDAL, MCDALNet, MCDALTraining, classifier_discrepancy, mcdal_discrepancy
from sslkit.active.mma import MMA, augmented_margin
from sslkit.active.tod import TODSemi, temporal_output_discrepancy
from sslkit.active.vaal import VAAL, VAE, Discriminator, adversarial_loss, discriminator_loss, kl_divergence, vae_loss

__all__ = [
    "k_center_greedy",
    "CoreSet",
    "CoreSetSSL",
    "VAAL",
    "VAE",
    "Discriminator",
    "kl_divergence",
    "vae_loss",
    "adversarial_loss",
    "discriminator_loss",
    "LearnLoss",
    "LearnLossTraining",
    "LossPredictionModule",
    "LossPredictionNet",
    "loss_prediction_loss",
    "MCDAL",
    "MCDALNet",
    "MCDALTraining",
    "classifier_discrepancy",
    "mcdal_discrepancy",
    "MMA",
    "augmented_margin",
    "CBSSAL",
    "inconsistency",
    "TODSemi",
    "temporal_output_discrepancy",
]
