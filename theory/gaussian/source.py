"""A Gaussian source S = U = W ~ N(0, diag(variances)): reverse water-filling R(D).

Registered under the scenario name ``gaussian-source`` for privacy ``mi``; the
observation model does not matter (``observation_free``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..base import Optimum
from ..registry import Provider, register
from .leakage import linear_description
from .waterfill import reverse_waterfill, source_mi

__all__ = ["METHOD", "SourceRateDistortion"]

METHOD = "closed form (reverse water-filling R(D))"


@register(name="gaussian-source")
class SourceRateDistortion(Provider):
    """R(D) of ``GaussianSource`` scenarios (``variances``), with its optimal release."""

    pairs = (("mi", None),)
    observation_free = True

    def curve(
        self, scenario: Any, budgets: np.ndarray, privacy: str, observation: str | None, family: str | None
    ) -> np.ndarray:
        return source_mi(budgets, np.asarray(scenario.variances, dtype=float))

    def optimum(
        self, scenario: Any, budget: float, privacy: str, observation: str | None, family: str | None
    ) -> Optimum:
        variances = np.asarray(scenario.variances, dtype=float)
        value = float(self.curve(scenario, np.array([budget]), privacy, observation, family)[0])
        dist = reverse_waterfill([budget], variances)[0]
        keep = 1.0 - dist / variances
        d = variances.size
        mech = linear_description(observation)
        mech.update(A=np.diag(keep).tolist(), B=np.zeros((d, d)).tolist(),
                    noise_cov=np.diag(dist * keep).tolist(), allocation=dist.tolist(),
                    distortion=float(dist.sum()))
        return Optimum(value=value, method=METHOD, bound_kind="exact", mechanism=mech)
