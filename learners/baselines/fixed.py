"""What the baselines share: a learner with no hyper-parameters and no training loop, channel helpers."""

from __future__ import annotations

import numpy as np

from privbench.datasets.samples import Samples
from privbench.datasets.tasks import Task

from ..base import Learner, Mechanism

#: images: releases stay in [IMAGE_CLIP, 1 - IMAGE_CLIP] so that their cross-entropy is finite
IMAGE_CLIP = 1e-3


def lift(task: Task, useful_channel: np.ndarray) -> np.ndarray:
    """A channel on U, shape (n_u, n_z), as a channel on W (repeated over S for ``full``)."""
    if task.observation == "useful":
        return useful_channel
    return np.tile(useful_channel, (task.n_s, 1))  # type: ignore[arg-type]


def empirical_u(samples: Samples, task: Task) -> np.ndarray:
    return np.bincount(samples.u, minlength=task.n_u) / len(samples)


def best_map(task: Task) -> np.ndarray:
    """Deterministic channel u -> argmin_z d(u, z), shape (n_u, n_z)."""
    d = task.distortion_array()
    ch = np.zeros_like(d)
    ch[np.arange(d.shape[0]), d.argmin(axis=1)] = 1.0
    return ch


class FixedLearner(Learner):
    """Baselines with no hyper-parameters and no training loop."""

    privacies = ("mi", "map", "chi2")

    def __init__(self) -> None:
        pass

    def _fit(self, samples, task, budgets, seed, device) -> list[Mechanism]:
        return [self._one(samples, task, float(b)) for b in budgets]

    def _one(self, samples: Samples, task: Task, budget: float) -> Mechanism:  # pragma: no cover
        raise NotImplementedError
