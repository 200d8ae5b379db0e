"""The plug-in baseline: estimate the joint, then solve the optimal program on the estimate.

This is the "conventional approach" PPAN §III-A compares with (its reference
[20]): estimate P(S, U) from the training samples by empirical counts (with an
optional add-``smoothing`` pseudo-count per cell), then solve the optimal
finite program (:func:`privbench.theory.finite.solve_finite`) on the estimate
at each budget.  It lives in ``bench/`` because learners may not import theory;
it is registered as the learner ``plugin`` through the ``privbench.learners``
entry-point group (setup.cfg).

Budgets below the least distortion achievable on the estimate (possible only
for distortion matrices whose rows have no zero, since the empirical joint is
used for both the program and the check) have no feasible mechanism there:
the mechanism returned is then the program's solution at that least
distortion (every w sent to its cheapest z on the estimate, leakage minimised
among such channels), with ``info["budget_infeasible"] = True`` and
``info["budget_used"]`` the distortion it was solved for.  W values absent
from the samples (with ``smoothing=0``) get the uniform row (theory's rule for
observations of probability zero).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from privbench.datasets.errors import InputError
from privbench.datasets.samples import Samples
from privbench.datasets.tasks import Task
from privbench.learners.base import Learner, Mechanism
from privbench.learners.mechanisms import FiniteChannel
from privbench.theory.finite import solve_finite
from privbench.theory.measures import observation_kernel


def estimate_joint(samples: Samples, n_s: int, n_u: int, smoothing: float = 0.0) -> np.ndarray:
    """Empirical P^(S=s, U=u) with ``smoothing`` pseudo-counts per cell, shape (n_s, n_u)."""
    counts = np.bincount(np.asarray(samples.s) * n_u + np.asarray(samples.u), minlength=n_s * n_u)
    counts = counts.reshape(n_s, n_u).astype(float) + smoothing
    return counts / counts.sum()


class PlugIn(Learner):
    """Estimate the joint from the samples, solve the optimal finite program on the estimate.

    Parameters
    ----------
    smoothing : float
        Add-``smoothing`` pseudo-count per (s, u) cell (0: plain empirical frequencies).
    """

    name = "plugin"
    summary = "plug-in: empirical joint (add-alpha optional), then the optimal convex program on it"
    serves = ("finite",)
    observations = ("useful", "full")
    privacies = ("mi", "map", "chi2")
    test_params: dict[str, Any] = {}

    def __init__(self, smoothing: float = 0.0) -> None:
        self.smoothing = smoothing

    def _fit(self, samples: Samples, task: Task, budgets: np.ndarray, seed: int, device: Any) -> list[Mechanism]:
        a = self.smoothing
        if isinstance(a, bool) or not isinstance(a, (int, float)) or not math.isfinite(a) or a < 0:
            raise InputError(f"smoothing={a!r} must be a finite number >= 0")
        joint = estimate_joint(samples, task.n_s, task.n_u, float(a))  # type: ignore[arg-type]
        dist = task.distortion_array()
        kernel = observation_kernel(task.n_s, task.n_u, task.observation)  # type: ignore[arg-type]
        p_uw = (joint.reshape(-1, 1) * kernel).reshape(task.n_s, task.n_u, -1).sum(axis=0)  # type: ignore[arg-type]
        least = float((p_uw.T @ dist).min(axis=1).sum())  # each w sent to its cheapest z
        out: list[Mechanism] = []
        for budget in budgets:
            used = max(float(budget), least)
            opt = solve_finite(joint, dist, used, task.privacy, task.observation)
            info = {"smoothing": float(a), "estimate_value": opt.value, "method": opt.method,
                    "budget_infeasible": bool(budget < least - 1e-12), "budget_used": used,
                    "estimate_distortion": float((opt.certificate or {}).get("distortion", float("nan")))}
            out.append(FiniteChannel(task, float(budget), np.asarray(opt.mechanism["channel"]), info))  # type: ignore[index]
        return out
