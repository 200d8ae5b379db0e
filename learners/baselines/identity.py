"""``identity``: Z = U (or the cheapest z for u), the curve's low-distortion end."""

from __future__ import annotations

import numpy as np

from ..mechanisms import AdditiveNoise, ConstantOrIdentityImage, FiniteChannel, LinearGaussian, MixtureShift
from ..registry import register
from .fixed import FixedLearner, best_map, lift
from ..serves import Serves


@register
class Identity(FixedLearner):
    name = "identity"
    summary = "Z = U (or the cheapest z for u): no privacy, least distortion"
    serves = Serves()  # every task

    def _one(self, samples, task, budget):
        if task.kind == "finite":
            return FiniteChannel(task, budget, lift(task, best_map(task)))
        if task.kind == "gaussian":
            return LinearGaussian(task, budget, np.eye(task.d_u), np.zeros((task.d_u, task.d_s)),
                                  np.zeros((task.d_u, task.d_u)))
        if task.kind == "mixture":
            if task.d_u != 1 or task.n_s != 2:  # MixtureShift is GAP's scalar binary mixture only
                return AdditiveNoise(task, budget, 0.0)
            return MixtureShift(task, budget, 0.0, 0.0, 0.0, 0.0)
        return ConstantOrIdentityImage(task, budget, None)
