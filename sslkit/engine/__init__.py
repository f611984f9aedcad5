"""The one training loop: :class:`Trainer` trains any :class:`~sslkit.algorithms.SSLAlgorithm`.

The algorithm computes the loss of one :class:`~sslkit.algorithms.Batch` (the contract is in
:mod:`sslkit.algorithms.base`); the loop owns everything else:

* **device** -- ``"auto"`` picks CUDA, then Apple MPS, then CPU (:func:`sslkit.device.resolve_device`).
  The data (numpy arrays or tensors) are moved to the device **once**, as whole tensors; batches are
  gathered on the device by index. Features are converted to float32; labels to int64.
* **batches** -- labeled: by default one epoch is one pass over the labeled set in a fresh random order,
  i.e. ``ceil(n_l / batch_size)`` iterations, and the last, smaller batch is **kept** (with BatchNorm
  models avoid ``n_l % batch_size == 1``). With ``iterations_per_epoch`` set (FixMatch-style
  training), every epoch has exactly that many iterations and labeled batches of ``min(batch_size, n_l)``
  are cut from an endless stream of random permutations. With ``iterations_per_epoch="unlabeled"`` an
  epoch is one pass over the *current* unlabeled pool, ``ceil(pool / unlabeled_batch_size)`` iterations,
  counted at the start of each epoch (paper C §3.5: one epoch over a coreset is ``|S| / batch`` iterations).
* **the unlabeled sampler** -- ``trainer.sampler_`` (:class:`UnlabeledSampler`) cuts unlabeled batches of
  ``min(unlabeled_batch_size, pool)`` from an endless stream of random permutations of the pool, independent
  of the labeled epochs. A callback may restrict it to a subset of ``X_u`` with per-sample weights
  (``trainer.sampler_.restrict(indices, weights)``) or return it to the full pool (``reset()``); the
  weights reach the algorithm as ``batch.u_weight``. Both index streams use their own seeded CPU
  :class:`torch.Generator`.
* **CPU threads** -- ``threads="auto"``: a step whose forward pass costs under
  :data:`~sslkit.device.SMALL_STEP_FLOPS` trains on one torch thread (a second gains little there alone and
  costs several-fold beside a busy process: ``benchmarks/contention.py``), larger steps keep torch's threads;
  ``threads=None`` leaves torch's setting, an int sets it; the count is restored after ``fit`` (``trainer.threads_``).
* **mixed precision** -- ``amp="auto"``: autocast (bfloat16 where supported, else float16 with a
  ``GradScaler``) on CUDA, off elsewhere. ``amp=True`` off CUDA warns (``RuntimeWarning``) and runs in
  float32; ``amp=False`` is always float32.
* **optimiser and schedule** -- ``"adam"`` (paper A App. C: lr 1e-3, weight decay 1e-4; PyTorch's
  coupled L2 weight decay) or ``"sgd"`` (momentum 0.9, Nesterov, weight decay 5e-4 as in USB/FixMatch
  for papers B/C). ``schedule="cosine"`` is FixMatch's ``lr_t = lr * cos(7 pi t / (16 T))`` with ``t``
  the number of optimiser steps taken and ``T = epochs * iterations_per_epoch`` the planned total (an early
  stop does not change ``T``), or ``total_steps`` when given (needed when epochs change length, as with a
  coreset). Weight decay applies to all parameters unless
  ``decay_norm_and_bias=False`` (USB's ``bn_wd_skip``: no decay on biases and normalisation layers).
* **EMA** -- with ``ema_decay=d``, after every optimiser step the EMA parameters become
  ``d * ema + (1 - d) * param`` (starting from the initial parameters) and the buffers (BatchNorm
  statistics) are **copied**, as in USB; ``ema_warmup=True`` uses ``d_t = min(d, 1 - 1/(t+1))`` after the
  t-th step (Mean Teacher's warm-up). The EMA model exists once and is the algorithms' teacher
  (``ctx.ema_model`` at setup, e.g. :class:`~sslkit.algorithms.MeanTeacher`). When EMA is on, validation, early
  stopping,
  :meth:`Trainer.predict`, :meth:`Trainer.predict_proba` and :meth:`Trainer.score` use the EMA weights
  (``trainer.ema_model_``); ``trainer.model`` keeps the raw weights (``trainer.eval_model`` is whichever is
  used for evaluation).
* **early stopping** on validation accuracy (paper A App. C: patience 20 epochs, minimum improvement
  1e-4): an epoch improves when ``val_acc > best + min_delta``; training stops after ``patience``
  consecutive epochs without improvement, and the weights (raw and EMA) of the best epoch are restored.
  Without early stopping the final weights are kept, but ``best_epoch_`` / ``best_val_acc_`` are still
  reported when validation data are given.
* **callbacks** -- :class:`Hook` ``(fn, every, unit, start=0, when="after")``: ``fn(trainer)`` on a
  declared schedule, before or after epochs or iterations (see :class:`~sslkit.algorithms.Hook`); the user's
  hooks run first, then the algorithm's. Hooks see ``trainer.epoch`` (completed epochs),
  ``trainer.iteration`` (completed optimiser steps), ``trainer.model``, ``trainer.algorithm``,
  ``trainer.history_``, ``trainer.data_`` (the device tensors ``X_l, y_l, X_u, X_val, y_val``; None
  where not given), ``trainer.sampler_``, ``trainer.context_`` (the algorithm's
  :class:`~sslkit.algorithms.FitContext`) and may set ``trainer.stop_training = True`` (an iteration hook
  ends the epoch early; the partial epoch is still validated and recorded).
* **seeding** -- ``fit`` calls :func:`sslkit.seeding.seed_everything(seed)` (global RNGs, used by
  dropout and by algorithms) and seeds the batch-index generators; on CPU the same seed and the same
  initial model give bit-identical weights and history (except the ``seconds`` entries).
* **timing** -- ``timings_``: wall-clock seconds per phase, ``setup`` (checks, transfer to the device),
  ``train`` (optimiser steps, excluding iteration hooks), ``eval`` (validation), ``hooks`` (all hooks) and
  one ``hook:<name>`` entry per hook, and ``total`` (the whole ``fit``); CUDA/MPS are synchronised before
  each clock reading.
* **progress** -- a ``tqdm.auto`` bar over epochs; silenced by ``progress=False`` or by the environment
  variable ``SSLKIT_PROGRESS=0``.

``history_`` holds one dict per epoch: ``epoch`` (1-based), ``iterations``, ``loss`` (mean of the logged
``"loss"``, else of the back-propagated loss), the mean of every other key of
``LossOutput.logs``, ``val_acc`` (when validation data are given), ``lr`` (learning rate after the
epoch's last step), ``seconds`` (wall-clock time of the epoch, excluding epoch hooks) and whatever the hooks
recorded with :meth:`Trainer.log` (the only way anything else writes a row).

Failures are loud: a non-finite epoch loss, or weights (or BatchNorm statistics) that a step left NaN or
infinite although the loss was finite, raise ``FloatingPointError`` naming the epoch and its iterations
(checked once per epoch: one host synchronisation).
"""

from sslkit.algorithms.base import Hook

from .fitting import TrainConfig, fit
from .inference import Predictor
from .inputs import check_hooks
from .optim import USB_SGD
from .sampling import UnlabeledSampler
from .schedules import EarlyStopping, cosine_lr_factor
from .trainer import Trainer

__all__ = [
    "USB_SGD",
    "EarlyStopping",
    "Hook",
    "Predictor",
    "TrainConfig",
    "Trainer",
    "UnlabeledSampler",
    "check_hooks",
    "cosine_lr_factor",
    "fit",
]
