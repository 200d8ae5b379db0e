"""Honest baselines: the two ends of every curve and the simplest calibrated mechanisms.

``identity``             Z = U (no privacy, no distortion): the curve's low-distortion end.
``constant``             Z = the best constant (no leakage): the curve's zero-leakage end.
``randomized-response``  finite: Z = U (or the cheapest z for u) with probability 1 - t,
                         uniform over Z's alphabet with probability t, t calibrated on the
                         empirical distribution of U to spend the budget.
``gaussian-noise``       gaussian / mixture: Z = U + N(0, (budget / d_u) I) (the filter
                         paper's Gaussian mechanism; distortion exactly the budget).

None of them looks at S, so all serve both observation models.  The plug-in
baseline (estimate the joint, solve the optimal program on the estimate) needs
theory's solver and therefore lives in ``privbench.bench.plugin``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from privbench.datasets.samples import Samples
from privbench.datasets.tasks import Task

from .base import Learner, Mechanism
from .mechanisms import ConstantGaussian, ConstantOrIdentityImage, FiniteChannel, LinearGaussian, MixtureShift
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
    summary = "Z = U + N(0, budget/d_u I): distortion exactly the budget (filter paper's baseline)"
    serves = ("gaussian", "mixture")

    def _one(self, samples, task, budget):
        var = budget / task.d_u  # type: ignore[operator]
        if task.kind == "mixture":
            g = float(np.sqrt(var))
            return MixtureShift(task, budget, 0.0, 0.0, g, g)
        return LinearGaussian(task, budget, np.eye(task.d_u), np.zeros((task.d_u, task.d_s)),
                              var * np.eye(task.d_u))
