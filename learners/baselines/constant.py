"""``constant``: Z = the best constant (no leakage), the curve's zero-leakage end."""

from __future__ import annotations

import numpy as np

from ..mechanisms import ConstantGaussian, ConstantOrIdentityImage, FiniteChannel
from ..registry import register
from .fixed import IMAGE_CLIP, FixedLearner, empirical_u
from ..serves import Serves


@register
class Constant(FixedLearner):
    name = "constant"
    summary = "Z = the constant with least expected distortion on the training U: no leakage"
    serves = Serves()  # every task

    def _one(self, samples, task, budget):
        if task.kind == "finite":
            z = int(np.argmin(empirical_u(samples, task) @ task.distortion_array()))
            ch = np.zeros((task.n_w, task.n_z))  # type: ignore[arg-type]
            ch[:, z] = 1.0
            return FiniteChannel(task, budget, ch, {"z": z})
        mean = np.asarray(samples.u, dtype=float).mean(axis=0)
        if task.kind in ("gaussian", "mixture"):
            return ConstantGaussian(task, budget, mean)
        if task.distortion == "xent":  # a pixel never lit in training must not cost log(0) when it is
            mean = np.clip(mean, IMAGE_CLIP, 1.0 - IMAGE_CLIP)
        return ConstantOrIdentityImage(task, budget, mean)
