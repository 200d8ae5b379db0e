"""``randomized-response``: finite tasks, keep U w.p. 1 - t, uniform over Z w.p. t."""

from __future__ import annotations

import numpy as np

from ..mechanisms import FiniteChannel
from ..registry import register
from .fixed import FixedLearner, best_map, empirical_u, lift
from ..serves import Serves


@register
class RandomizedResponse(FixedLearner):
    name = "randomized-response"
    summary = "finite: keep U w.p. 1-t, uniform over Z w.p. t, t spends the budget (empirical U)"
    serves = Serves(kinds=("finite",))

    def _one(self, samples, task, budget):
        pu = empirical_u(samples, task)
        best = best_map(task)
        uniform = np.full((task.n_u, task.n_z), 1.0 / task.n_z)  # type: ignore[operator]
        d = task.distortion_array()
        d_best = float(pu @ (best * d).sum(axis=1))
        d_unif = float(pu @ (uniform * d).sum(axis=1))
        t = 1.0 if d_unif <= d_best else float(np.clip((budget - d_best) / (d_unif - d_best), 0.0, 1.0))
        return FiniteChannel(task, budget, lift(task, (1 - t) * best + t * uniform), {"t": t})
