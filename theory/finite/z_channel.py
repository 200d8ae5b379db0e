"""The Z-channel model: closed-form optimal MAP accuracy, for both observation models.

S ~ Bern(p); U = 0 when S = 0, and when S = 1, U = 1 with probability 1 - e
(else 0); Hamming distortion.  With pi = max(p, 1 - p) (guessing S from its
prior) and A_id = max(1 - p, p e) + p (1 - e) (the MAP accuracy of releasing
Z = U), the optimal MAP accuracy at distortion budget D is

    A*(D) = max(pi, A_id - D),

whether the mechanism sees U only or (S, U): every unit of Hamming distortion
can lower the accuracy by at most one unit, and flipping a released 1 to 0 (a
U = 1 row always has S = 1) lowers it by exactly one unit until the prior is
reached.  One optimal mechanism for both observation models: release U, except
that U = 1 becomes 0 with probability min(D, A_id - pi) / P(U = 1).  Derived
for this project (no source paper has the model) and checked against the
linear program of the ``finite`` kind at random (p, e, D) in
tests/theory/test_z_channel.py.  Other privacy metrics fall back to the
``finite`` kind's convex programs.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..base import Optimum, check_budgets
from ..registry import Provider, register

__all__ = ["METHOD", "ZChannelClosedForm", "z_channel_map", "z_channel_mechanism"]

METHOD = "closed form (z-channel MAP: max(prior, A_id - D))"


def z_channel_map(budgets: Any, p: float, e: float) -> np.ndarray:
    """Optimal MAP accuracy of guessing S from Z at each Hamming budget, shape (k,)."""
    d = check_budgets(budgets)
    prior = max(p, 1.0 - p)
    a_id = max(1.0 - p, p * e) + p * (1.0 - e)
    return np.maximum(prior, a_id - d)


def z_channel_mechanism(p: float, e: float, budget: float, observation: str) -> np.ndarray:
    """An optimal channel P(Z = z | W = w): shape (2, 2) for ``useful`` (W = U), (4, 2) for ``full``
    (W = (S, U), row s * 2 + u; it ignores S)."""
    prior = max(p, 1.0 - p)
    a_id = max(1.0 - p, p * e) + p * (1.0 - e)
    p_u1 = p * (1.0 - e)
    flip = min(budget, a_id - prior) / p_u1 if p_u1 > 0 else 0.0
    useful = np.array([[1.0, 0.0], [flip, 1.0 - flip]])
    return useful if observation == "useful" else np.vstack([useful, useful])


@register(name="z-channel")
class ZChannelClosedForm(Provider):
    """The closed form above for ``ZChannel`` scenarios (``p``, ``e``), privacy ``map``."""

    pairs = (("map", "useful"), ("map", "full"))

    def curve(
        self, scenario: Any, budgets: np.ndarray, privacy: str, observation: str | None, family: str | None
    ) -> np.ndarray:
        return z_channel_map(budgets, scenario.p, scenario.e)

    def optimum(
        self, scenario: Any, budget: float, privacy: str, observation: str | None, family: str | None
    ) -> Optimum:
        value = self.curve(scenario, np.array([budget]), privacy, observation, family)
        channel = z_channel_mechanism(scenario.p, scenario.e, budget, observation)  # type: ignore[arg-type]
        mechanism = {"type": "finite-channel", "observation": observation, "channel": channel.tolist()}
        return Optimum(value=float(value[0]), method=METHOD, mechanism=mechanism)
