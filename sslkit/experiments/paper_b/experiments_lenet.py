"""Paper B's experiments on the LeNet stand-in where SSL acts (MNIST's LeNet trained end to end on images and their
views, beside a supervised arm): Table 1 (``b_table1_lenet``), and on its reading that passes the positive controls
(FreeMatch's threshold EMA at :data:`~.ssl_protocols.LENET_FREEMATCH_EMA`) Table 3's SSAL comparison
(``b_table3_lenet``) and Table 4's alphas (``b_table4_lenet``). Table 6 on this learner needs no runs of its own: the
pool and test set are Table 2's CPU protocol's, so ``b_table1_lenet``'s records at 40 labels sit beside Table 2's
AL runs (:func:`~.claims_active.lenet_as_table6`)."""

from __future__ import annotations

from ..runs.experiment import STAND_IN, Experiment, Reading, Scale
from . import runs as R
from . import selection as S
from . import ssal as SA
from . import ssl as L
from .drift import KERNEL_EXP2
from .grids import table1_lenet_configs, table1_lenet_ema_configs
from .ssl_protocols import LENET_CONFIRM_SEEDS, LENET_SEEDS

# --- Table 1 on a stand-in where SSL acts: MNIST's LeNet end to end, with a supervised arm ----------------------

LENET_NOTE = (
    "MNIST (pool: the first 10 000 training images, all unlabeled; test: all 10 000) and paper A's LeNet trained end "
    "to end on the images and their weak / strong views for 300 SGD steps (32 labeled + 96 unlabeled images each), "
    "beside a supervised arm (the same labels, network and steps, no unlabeled loss); the selectors pick on 50 "
    "principal components of the pixels; not WRN-28-2 on CIFAR-10 for 2^20 steps"
)


LENET_EMA_NOTE = (
    f"FreeMatch's EMA momentum of its thresholds {L.LENET_FREEMATCH_EMA} (USB: 0.999), scaled to the 300-step "
    "schedule as the model's EMA is"
)
#: the arms of the reading freematch_ema's FreeMatch control, which ran :data:`~.ssl_protocols.LENET_CONFIRM_SEEDS`
LENET_CONFIRM_ARMS = tuple(
    table1_lenet_configs(["Stratified"], [10], ["FlexMatch"]) + table1_lenet_ema_configs(["Stratified"], [10])
)
TABLE1_LENET = Experiment(
    name="b_table1_lenet",
    paper="B",
    notebook="b_table1",
    title="Table 1 on a stand-in where SSL acts: FlexMatch / FreeMatch and a supervised arm on MNIST's LeNet",
    run=L.table1_lenet_run,
    scales={
        "cpu": Scale(
            STAND_IN,
            table1_lenet_configs,
            LENET_SEEDS,
            "mnist",
            extra={"note": "CPU stand-in, MNIST LeNet end to end", "protocol": L.LENET_PROTOCOL},
            threads=1,
            note=LENET_NOTE,
            # FreeMatch's control of the reading freematch_ema: FlexMatch and that FreeMatch on confirmatory seeds
            extra_seeds=((LENET_CONFIRM_ARMS, LENET_CONFIRM_SEEDS),),
            readings=(Reading("freematch_ema", table1_lenet_ema_configs, note=LENET_EMA_NOTE),),
        )
    },
    version=L.PROTOCOL_VERSION,
    replay_note="a LeNet trained by SGD on randomly augmented views",
    pick_by=("algorithm",),
    by_seed=True,
    drift=({"alpha_mmd2"}, 1e-5, KERNEL_EXP2),
)

# --- Tables 3 and 4 on the LeNet stand-in, FreeMatch on the reading that passes the controls --------------------

#: what Tables 3 and 4 on the LeNet stand-in add to :data:`LENET_NOTE`
_ON_READING = (
    f"FreeMatch with its threshold EMA at {L.LENET_FREEMATCH_EMA} (the reading of b_table1_lenet that passes its "
    "controls)"
)


def _on_lenet(
    name: str, notebook: str, title: str, run, configs, pick_by: str, replay_note: str, drift: tuple = ()
) -> Experiment:
    """An experiment of one paper B table on the LeNet stand-in: one CPU scale of five seeds on MNIST."""
    scale = Scale(STAND_IN, configs, range(5), "mnist", threads=1, note=f"{LENET_NOTE}; {_ON_READING}")
    return Experiment(
        name=name,
        paper="B",
        notebook=notebook,
        title=title,
        run=run,
        scales={"cpu": scale},
        version=L.PROTOCOL_VERSION,
        replay_note=replay_note,
        pick_by=(pick_by,),
        by_seed=True,
        drift=drift,
    )


#: Table 3 on the LeNet stand-in: RDSS against the SSAL selections, 20 random + 20 selected labels
TABLE3_LENET = _on_lenet(
    "b_table3_lenet",
    "b_table3",
    "Table 3 on Table 1's LeNet stand-in: RDSS against the SSAL selections inside FlexMatch / FreeMatch",
    SA.table3_run,
    lambda: SA.table3_grid("lenet"),
    "method",
    "LeNets trained by SGD on randomly augmented views, and the SSAL picks made by the first one",
)
#: Table 4 on the LeNet stand-in: its budgets, the paper's two smallest CIFAR-10 budgets (its largest, 4 000, is 40 %
#: of the 10 000-image pool)
LENET_T4_BUDGETS = (40, 250)
TABLE4_LENET = _on_lenet(
    "b_table4_lenet",
    "b_table4",
    "Table 4's alphas under FreeMatch on Table 1's LeNet stand-in (MNIST, end to end)",
    R.table4_lenet_run,
    lambda: [{"alpha": a, "m": m} for m in LENET_T4_BUDGETS for a in S.TABLE4_ALPHAS],
    "alpha",
    "a LeNet trained by SGD on randomly augmented views",
    drift=({"alpha_mmd2", "mmd2"}, 1e-5, KERNEL_EXP2),
)
