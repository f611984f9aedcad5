"""The robust stand-in ``cpu_val``'s reweighting methods with a held-out meta-set (paper C App. F.3, F.1.2):
:class:`MetaDS3L` and :class:`MetaL2RW` draw the clean set of their outer level from the validation set."""

from __future__ import annotations

import dataclasses

import numpy as np
import torch

from sslkit.algorithms import DS3L, L2RW

__all__ = ["MetaDS3L", "MetaL2RW"]


class _MetaSet:
    """The clean set of a reweighting method's outer level drawn from a held-out meta-set ``(X_meta, y_meta)``
    (paper C App. F.3: DS3L fits its meta-network "based on a clean labeled set"; App. F.1.2's validation set):
    each step's ``L_S(θ')`` is the mean cross-entropy of ``meta_batch_size`` meta-set rows drawn uniformly with
    replacement (a generator seeded by ``seed``) in place of the labeled batch. The inner step and the model's
    own loss keep the labeled batch."""

    def bind_meta_set(self, X_meta, y_meta, *, meta_batch_size: int, seed: int):
        if len(X_meta) == 0 or len(X_meta) != len(y_meta):
            raise ValueError(f"the meta-set needs as many labels as rows (> 0), got {len(X_meta)} and {len(y_meta)}")
        if isinstance(meta_batch_size, bool) or not isinstance(meta_batch_size, int) or meta_batch_size < 1:
            raise ValueError(f"meta_batch_size must be a positive int, got {meta_batch_size!r}")
        self.X_meta, self.y_meta = torch.as_tensor(X_meta), torch.as_tensor(np.asarray(y_meta), dtype=torch.int64)
        self.meta_batch_size, self.meta_seed = meta_batch_size, seed
        return self

    def setup(self, model, ctx):
        super().setup(model, ctx)
        self._Xm, self._ym = self.X_meta.to(ctx.device), self.y_meta.to(ctx.device)
        self._meta_gen = torch.Generator().manual_seed(self.meta_seed)

    def meta_batch(self, batch):
        """``batch`` with its labeled rows replaced by a fresh draw from the meta-set."""
        idx = torch.randint(len(self._Xm), (self.meta_batch_size,), generator=self._meta_gen).to(self._Xm.device)
        return dataclasses.replace(batch, x_l=self._Xm[idx], y_l=self._ym[idx])


class MetaDS3L(_MetaSet, DS3L):
    """:class:`~sslkit.algorithms.DS3L` whose meta-network learns from the meta-set (:class:`_MetaSet`):
    ``L_S(θ'(φ))`` of step 3 on a meta-batch."""

    def meta_objective(self, model, batch, sup, losses, probs):
        return super().meta_objective(model, self.meta_batch(batch), sup, losses, probs)


class MetaL2RW(_MetaSet, L2RW):
    """:class:`~sslkit.algorithms.L2RW` whose weights are meta-gradients of a meta-batch's loss (:class:`_MetaSet`)."""

    def meta_weights(self, model, batch, sup, losses):
        return super().meta_weights(model, self.meta_batch(batch), sup, losses)
