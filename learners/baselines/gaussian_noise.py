"""``gaussian-noise``: Z = U + N(0, (budget / d_u) I); images: clipped noise calibrated to the budget."""

from __future__ import annotations

import numpy as np

from privbench.datasets.tasks import Task

from ..base import Mechanism
from ..mechanisms import AdditiveNoise, LinearGaussian, MixtureShift
from ..registry import register
from .fixed import IMAGE_CLIP, FixedLearner
from ..serves import Serves


@register
class GaussianNoise(FixedLearner):
    name = "gaussian-noise"
    summary = ("Z = U + N(0, budget/d_u I): distortion exactly the budget (filter paper's baseline); "
               "images: clipped noise calibrated to the xent budget")
    serves = Serves(kinds=("gaussian", "mixture", "image"))

    def _fit(self, samples, task, budgets, seed, device) -> list[Mechanism]:
        if task.kind != "image":
            return super()._fit(samples, task, budgets, seed, device)
        u = np.asarray(samples.u, dtype=float)
        noise = np.random.default_rng(seed).standard_normal(u.shape)
        return [_calibrated_image_noise(task, float(b), u, noise) for b in budgets]

    def _one(self, samples, task, budget):
        var = budget / task.d_u  # type: ignore[operator]
        if task.kind == "mixture" and (task.d_u != 1 or task.n_s != 2):
            return AdditiveNoise(task, budget, float(np.sqrt(var)))
        if task.kind == "mixture":
            g = float(np.sqrt(var))
            return MixtureShift(task, budget, 0.0, 0.0, g, g)
        return LinearGaussian(task, budget, np.eye(task.d_u), np.zeros((task.d_u, task.d_s)),
                              var * np.eye(task.d_u))


def _calibrated_image_noise(task: Task, budget: float, u: np.ndarray, noise: np.ndarray) -> Mechanism:
    """AdditiveNoise on [IMAGE_CLIP, 1 - IMAGE_CLIP] with sigma such that the mean per-pixel
    cross-entropy of the training images under the fixed ``noise`` is ``budget`` (bisection: it
    grows monotonically with sigma, every clipped pixel moving away from its value)."""
    lo, hi = IMAGE_CLIP, 1.0 - IMAGE_CLIP

    def cost(sigma: float) -> float:
        z = np.clip(u + sigma * noise, lo, hi)
        return float(-(u * np.log(z) + (1.0 - u) * np.log(1.0 - z)).mean())

    a, b = 0.0, 1.0
    if cost(a) >= budget:
        sigma = 0.0
    else:
        while cost(b) < budget and b < 1e3:
            b *= 2.0
        for _ in range(40):
            mid = 0.5 * (a + b)
            a, b = (mid, b) if cost(mid) < budget else (a, mid)
        sigma = a  # the largest sigma found whose training cost is below the budget
    return AdditiveNoise(task, budget, sigma, lo, hi, {"sigma": sigma, "train_distortion": cost(sigma)})
