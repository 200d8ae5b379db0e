"""Optimum provider of the ``gmm-k`` scenario (a binary S, K Gaussian components per class).

There is no mechanism family here (GAP's families are for one Gaussian per class): the only
bound is the certified sandwich over all mechanisms (:mod:`.certified`), MAP privacy with both
observations and MI with the full one, solved for each budget (no table is stored for these
models, so each new budget costs a solve, capped as :data:`~.certified.LIVE` says).  ``Optimum.value`` is
the achievable end and ``Optimum.lower`` the certified lower end, as for ``binary-gmm --family
certified``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from privbench.datasets.errors import InputError

from ..base import Optimum
from ..registry import Provider, register
from .certified import CERTIFIED, certified_optimum


@register(name="gmm-k")
class ComponentMixtureSandwich(Provider):
    """The certified sandwich for :class:`~privbench.datasets.scenarios.gmm_k.ComponentMixture`."""

    #: MI with the ``useful`` observation is not served yet: on K-component models the achievable
    #: end's exponential-cone programs stall there (no grid certifies a mechanism within the budget)
    pairs = (("map", "useful"), ("map", "full"), ("mi", "full"))
    default_privacy = "map"
    has_families = True

    def resolve_family(self, scenario: Any, observation: str | None, family: str | None,
                       privacy: str | None = None) -> str | None:
        if family not in (None, CERTIFIED):
            raise InputError(f"family={family!r} is not available for gmm-k (allowed: {CERTIFIED}, the sandwich "
                             "over all mechanisms)")
        return CERTIFIED

    def curve(
        self, scenario: Any, budgets: np.ndarray, privacy: str, observation: str | None, family: str | None
    ) -> np.ndarray:
        return np.array([certified_optimum(scenario, float(b), privacy, observation).value for b in budgets])

    def optimum(
        self, scenario: Any, budget: float, privacy: str, observation: str | None, family: str | None
    ) -> Optimum:
        return certified_optimum(scenario, budget, privacy, observation)  # type: ignore[arg-type]
