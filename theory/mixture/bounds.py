"""Family-optimal MAP accuracy of the binary Gaussian mixture, and its optimum provider.

Registered under the scenario name ``binary-gmm`` for privacy ``map`` and ``mi``
with either observation model.  For ``map`` the bound is over a mechanism family
(``bound_kind="family"``), chosen per observation model when none is named; the
pseudo-family ``certified`` asks instead for the certified sandwich over all
mechanisms (:mod:`.certified`, ``bound_kind="certified"``), which is also the
only bound for ``mi``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from privbench.datasets.errors import InputError
from privbench.datasets.scenarios import BinaryGMM

from ..base import Optimum, check_budget, check_budgets
from ..registry import Provider, register
from .accuracy import FAMILIES, ArrayLike, check_family, check_scenario, mechanism_accuracy, mechanism_distortion
from .certified import CERTIFIED, certified_optimum
from .families import CLOSED, general_family

__all__ = ["DEFAULT_FAMILY", "FAMILY_OBSERVATION", "METHODS", "MixtureFamilies", "mixture_curve",
           "mixture_optimum"]

# the family used when none is named, per observation model; the observation each family needs
DEFAULT_FAMILY = {"useful": "additive", "full": "general"}
FAMILY_OBSERVATION = {"additive": "useful", "shift": "full", "shift-noise": "full", "general": "full"}

METHODS = {
    "additive": "closed form, GAP Theorem 2 (beta=0, gamma=sqrt(D)), exact MAP accuracy",
    "shift": "closed form, GAP Theorem 3 / eq (40) capped at total shift 2 mu, exact MAP accuracy",
    "shift-noise": "GAP Theorem 4: closed form of (41) for equal variances, else 1-d search; exact MAP",
    "general": "grid search over (eps, w0, w1), eq (44) corrected, refined to 1e-4; exact MAP accuracy",
}


def mixture_optimum(scenario: BinaryGMM, budget: float, family: str) -> Optimum:
    """Best mechanism of ``family`` at distortion budget ``budget`` (MAP privacy).

    Parameters
    ----------
    scenario : BinaryGMM
    budget : float
        D >= 0 (mean squared error).
    family : {"additive", "shift", "shift-noise", "general"}

    Returns
    -------
    Optimum
        ``bound_kind="family"``; ``value`` is the exact MAP accuracy of
        ``mechanism = {"beta0", "beta1", "gamma0", "gamma1"}``.
    """
    sc = check_scenario(scenario)
    family = check_family(family)
    d = check_budget(budget)
    cert: dict[str, Any] | None = None
    if family == "general":
        mech, cert = general_family(sc, d)
    else:
        mech = {k: float(v[0]) for k, v in CLOSED[family](sc, np.array([d])).items()}
    value = float(mechanism_accuracy(sc, **mech))
    cert = {**(cert or {}), "distortion": float(mechanism_distortion(sc, **mech))}
    return Optimum(value, METHODS[family], "family", mech, family, cert)


def mixture_curve(scenario: BinaryGMM, budgets: ArrayLike, family: str) -> np.ndarray:
    """Family-optimal MAP accuracy at each budget, shape (k,) for k budgets.

    Vectorised for ``additive``, ``shift`` and ``shift-noise``; ``general`` loops.
    """
    sc = check_scenario(scenario)
    family = check_family(family)
    d = check_budgets(budgets)
    if family == "general":
        return np.array([mixture_optimum(sc, x, family).value for x in d])
    mech = CLOSED[family](sc, d)
    return mechanism_accuracy(sc, **mech)


@register(name="binary-gmm")
class MixtureFamilies(Provider):
    """GAP §4 family bounds for ``BinaryGMM`` scenarios (MAP privacy)."""

    pairs = (("map", "useful"), ("map", "full"), ("mi", "useful"), ("mi", "full"))
    default_privacy = "map"
    has_families = True

    def resolve_family(self, scenario: Any, observation: str | None, family: str | None,
                       privacy: str | None = None) -> str | None:
        if privacy == "mi" and family not in (None, CERTIFIED):
            raise InputError(f"family={family!r} bounds MAP accuracy only; with privacy mi only "
                             f"'{CERTIFIED}' is available")
        if family == CERTIFIED or privacy == "mi":
            return CERTIFIED
        family = family or DEFAULT_FAMILY[observation]  # type: ignore[index]
        if family not in FAMILIES:
            raise InputError(f"family={family!r} is unknown (allowed: {', '.join(FAMILIES)}, {CERTIFIED})")
        if observation == "useful" and FAMILY_OBSERVATION[family] == "full":
            raise InputError(
                f"family={family!r} needs S (observation full); with observation useful only "
                "'additive' is available"
            )
        return family

    def curve(
        self, scenario: Any, budgets: np.ndarray, privacy: str, observation: str | None, family: str | None
    ) -> np.ndarray:
        if family == CERTIFIED:
            return np.array([certified_optimum(scenario, float(b), privacy, observation).value for b in budgets])
        return mixture_curve(scenario, budgets, family)  # type: ignore[arg-type]

    def optimum(
        self, scenario: Any, budget: float, privacy: str, observation: str | None, family: str | None
    ) -> Optimum:
        if family == CERTIFIED:
            return certified_optimum(scenario, budget, privacy, observation)  # type: ignore[arg-type]
        return mixture_optimum(scenario, budget, family)  # type: ignore[arg-type]
