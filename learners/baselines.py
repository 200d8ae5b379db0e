"""Honest baselines: the two ends of every curve and the simplest calibrated mechanisms.

``identity``             Z = U (no privacy, no distortion): the curve's low-distortion end.
``constant``             Z = the best constant (no leakage): the curve's zero-leakage end.
``randomized-response``  finite: Z = U (or the cheapest z for u) with probability 1 - t,
                         uniform over Z's alphabet with probability t, t calibrated on the
                         empirical distribution of U to spend the budget.
``gaussian-noise``       gaussian / mixture: Z = U + N(0, (budget / d_u) I) (the filter
                         paper's Gaussian mechanism; distortion exactly the budget).  image:
                         Z = clip(U + sigma N(0, I), 1e-3, 1 - 1e-3), sigma set by bisection so
                         that the per-pixel cross-entropy on the training images (fixed noise
                         drawn from the fit's seed) equals the budget; 0 when the budget is below
                         what the clipped identity already costs (it then overshoots).

None of them looks at S, so all serve both observation models.  The plug-in
baseline (estimate the joint, solve the optimal program on the estimate) needs
theory's solver and therefore lives in ``privbench.bench.plugin``.
"""

from __future__ import annotations


import numpy as np

from privbench.datasets.samples import Samples
from privbench.datasets.tasks import Task

from .base import Learner, Mechanism
from .mechanisms import (AdditiveNoise, ConstantGaussian, ConstantOrIdentityImage, FiniteChannel, LinearGaussian,
                         MixtureShift)
from .registry import register


def _lift(task: Task, useful_channel: np.ndarray) -> np.ndarray:
    """A channel on U, shape (n_u, n_z), as a channel on W (repeated over S for ``full``)."""
    if task.observation == "useful":
        return useful_channel
    return np.tile(useful_channel, (task.n_s, 1))  # type: ignore[arg-type]


def _empirical_u(samples: Samples, task: Task) -> np.ndarray:
    return np.bincount(samples.u, minlength=task.n_u) / len(samples)


def _best_map(task: Task) -> np.ndarray:
    """Deterministic channel u -> argmin_z d(u, z), shape (n_u, n_z)."""
    d = task.distortion_array()
    ch = np.zeros_like(d)
    ch[np.arange(d.shape[0]), d.argmin(axis=1)] = 1.0
    return ch


class _Fixed(Learner):
    """Baselines with no hyper-parameters and no training loop."""

    privacies = ("mi", "map", "chi2")

    def __init__(self) -> None:
        pass

    def _fit(self, samples, task, budgets, seed, device) -> list[Mechanism]:
        return [self._one(samples, task, float(b)) for b in budgets]

    def _one(self, samples: Samples, task: Task, budget: float) -> Mechanism:  # pragma: no cover
        raise NotImplementedError


@register
class Identity(_Fixed):
    name = "identity"
    summary = "Z = U (or the cheapest z for u): no privacy, least distortion"
    serves = ("finite", "gaussian", "mixture", "image")

    def _one(self, samples, task, budget):
        if task.kind == "finite":
            return FiniteChannel(task, budget, _lift(task, _best_map(task)))
        if task.kind == "gaussian":
            return LinearGaussian(task, budget, np.eye(task.d_u), np.zeros((task.d_u, task.d_s)),
                                  np.zeros((task.d_u, task.d_u)))
        if task.kind == "mixture":
            if task.d_u != 1 or task.n_s != 2:  # MixtureShift is GAP's scalar binary mixture only
                return AdditiveNoise(task, budget, 0.0)
            return MixtureShift(task, budget, 0.0, 0.0, 0.0, 0.0)
        return ConstantOrIdentityImage(task, budget, None)


@register
class Constant(_Fixed):
    name = "constant"
    summary = "Z = the constant with least expected distortion on the training U: no leakage"
    serves = ("finite", "gaussian", "mixture", "image")

    def _one(self, samples, task, budget):
        if task.kind == "finite":
            z = int(np.argmin(_empirical_u(samples, task) @ task.distortion_array()))
            ch = np.zeros((task.n_w, task.n_z))  # type: ignore[arg-type]
            ch[:, z] = 1.0
            return FiniteChannel(task, budget, ch, {"z": z})
        mean = np.asarray(samples.u, dtype=float).mean(axis=0)
        if task.kind in ("gaussian", "mixture"):
            return ConstantGaussian(task, budget, mean)
        if task.distortion == "xent":  # a pixel never lit in training must not cost log(0) when it is
            mean = np.clip(mean, IMAGE_CLIP, 1.0 - IMAGE_CLIP)
        return ConstantOrIdentityImage(task, budget, mean)


@register
class RandomizedResponse(_Fixed):
    name = "randomized-response"
    summary = "finite: keep U w.p. 1-t, uniform over Z w.p. t, t spends the budget (empirical U)"
    serves = ("finite",)

    def _one(self, samples, task, budget):
        pu = _empirical_u(samples, task)
        best = _best_map(task)
        uniform = np.full((task.n_u, task.n_z), 1.0 / task.n_z)  # type: ignore[operator]
        d = task.distortion_array()
        d_best = float(pu @ (best * d).sum(axis=1))
        d_unif = float(pu @ (uniform * d).sum(axis=1))
        t = 1.0 if d_unif <= d_best else float(np.clip((budget - d_best) / (d_unif - d_best), 0.0, 1.0))
        return FiniteChannel(task, budget, _lift(task, (1 - t) * best + t * uniform), {"t": t})


@register
class GaussianNoise(_Fixed):
    name = "gaussian-noise"
    summary = ("Z = U + N(0, budget/d_u I): distortion exactly the budget (filter paper's baseline); "
               "images: clipped noise calibrated to the xent budget")
    serves = ("gaussian", "mixture", "image")

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


IMAGE_CLIP = 1e-3


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
