"""The binary model (GAP §3): closed-form optimal MAP accuracy under PDI.

U ~ Bern(p), S = U xor N, N ~ Bern(q). Registered under the scenario name
``binary`` for privacy ``map`` with observation ``useful`` (GAP Theorem 1); its
other pairs fall back to the convex programs of the ``finite`` kind.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..base import Optimum, check_budgets
from ..registry import Provider, register
from .solve import solve_finite

__all__ = ["METHOD", "BinaryClosedForm", "binary_pdi_map"]

METHOD = "closed form (GAP Theorem 1, PDI)"


def binary_pdi_map(budgets: Any, p: float, q: float) -> np.ndarray:
    """GAP Theorem 1: optimal MAP accuracy of the binary model under PDI (W = U).

    U ~ Bern(p), S = U xor N, N ~ Bern(q), Hamming distortion D. For q = 1/2
    the accuracy is 1/2 at every D; otherwise (31) while 1 - D > max(p, 1-p),
    then (32), the accuracy of guessing S from its prior alone.

    Parameters
    ----------
    budgets : array_like, shape (k,)
    Returns
    -------
    ndarray, shape (k,)
    """
    d = check_budgets(budgets)
    if q == 0.5:
        return np.full(d.shape, 0.5)
    slope = abs(1.0 - 2.0 * q)
    active = (1.0 - d) > max(p, 1.0 - p)
    top = slope * (1.0 - d) + min(q, 1.0 - q)
    if (p >= 0.5) == (q < 0.5):
        floor = p * (1.0 - q) + (1.0 - p) * q
    else:
        floor = p * q + (1.0 - p) * (1.0 - q)
    return np.where(active, top, floor)


@register(name="binary")
class BinaryClosedForm(Provider):
    """GAP Theorem 1 for ``Binary`` scenarios (``p``, ``q``)."""

    pairs = (("map", "useful"),)

    def curve(
        self, scenario: Any, budgets: np.ndarray, privacy: str, observation: str | None, family: str | None
    ) -> np.ndarray:
        return binary_pdi_map(budgets, scenario.p, scenario.q)

    def optimum(
        self, scenario: Any, budget: float, privacy: str, observation: str | None, family: str | None
    ) -> Optimum:
        value = self.curve(scenario, np.array([budget]), privacy, observation, family)
        # GAP Theorem 1 gives a set of optimal mechanisms; report one from the LP.
        lp = solve_finite(scenario.joint(), scenario.distortion_matrix(), budget, privacy, observation)  # type: ignore[arg-type]
        return Optimum(value=float(value[0]), method=METHOD, mechanism=lp.mechanism,
                       certificate={"linear_program_value": lp.value, **(lp.certificate or {})})
