"""One entry point for every optimal tradeoff: :func:`optimum` and :func:`curve`.

Dispatch by scenario kind, privacy metric and observation model:

==================  ========  ============  =============================================
scenario            privacy   observation   method
==================  ========  ============  =============================================
symmetric-pair      mi        useful, full  closed form, PPAN app. G eqs (31), (30)
binary              map       useful        closed form, GAP Theorem 1 (PDI)
any finite          mi        useful, full  convex program (exponential cone)
any finite          map       useful, full  linear program (GAP eq (21) for binary PDD)
any finite          chi2      useful, full  convex program (second-order cone)
gaussian-scalar     mi        useful        PPAN Prop 1
gaussian-scalar     mi        full          PPAN Prop 3, generalised to any variances
gaussian-vector     mi        useful        PPAN Prop 2 (modified water-filling)
gaussian-source     mi        (none)        reverse water-filling R(D)
binary-gmm          map       useful, full  family bounds (GAP Theorems 2-4, eq (44))
==================  ========  ============  =============================================

Any other combination raises :class:`~privbench.datasets.errors.InputError`; so do
the labelled scenarios (``mnist-subset``, ``digits``, ``hypothesis-testing``,
``privbench.datasets.labelled``), which have no known optimum.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from privbench.datasets.errors import InputError
from privbench.datasets.samples import check_observation
from privbench.datasets.scenarios import (
    Binary,
    BinaryGMM,
    FiniteScenario,
    GaussianScenario,
    GaussianSource,
    Scenario,
    SymmetricPair,
)

from . import finite
from .base import PRIVACIES, UNITS, Optimum, check_budget, check_budgets

# binary-gmm: the family used when none is named, per observation model.
DEFAULT_FAMILY = {"useful": "additive", "full": "general"}
FAMILY_OBSERVATION = {"additive": "useful", "shift": "full", "shift-noise": "full", "general": "full"}


def default_privacy(scenario: Scenario) -> str:
    """The privacy metric used when none is given (``map`` for binary-gmm, else ``mi``)."""
    return "map" if isinstance(scenario, BinaryGMM) else "mi"


def supported(scenario: Scenario) -> list[tuple[str, str | None]]:
    """(privacy, observation) pairs with a known optimum for this scenario."""
    if isinstance(scenario, FiniteScenario):
        return [(p, o) for p in PRIVACIES for o in ("useful", "full")]
    if isinstance(scenario, GaussianSource):
        return [("mi", None)]
    if isinstance(scenario, GaussianScenario):
        return [("mi", "useful")] + ([("mi", "full")] if scenario.dims == (1, 1) else [])
    if isinstance(scenario, BinaryGMM):
        return [("map", "useful"), ("map", "full")]
    return []  # pragma: no cover


def resolve(
    scenario: Scenario, privacy: str | None, observation: str | None, family: str | None
) -> tuple[str, str | None, str | None]:
    if not isinstance(scenario, Scenario):
        raise InputError(f"scenario={scenario!r} is not a privbench scenario")
    if not getattr(scenario, "has_optimum", True):
        raise InputError(f"{scenario.name} has no known optimum (only learned points and evaluators: "
                         "run it with 'privbench run')")
    privacy = privacy or default_privacy(scenario)
    if privacy not in PRIVACIES:
        raise InputError(f"privacy={privacy!r} is unknown (allowed: {', '.join(PRIVACIES)})")
    if isinstance(scenario, GaussianSource):
        observation = None  # S = U = W: the observation model does not matter
    elif observation is None:
        raise InputError(f"{scenario.name} needs an observation model (allowed: useful, full)")
    else:
        check_observation(observation)
    pairs = supported(scenario)
    if (privacy, observation) not in pairs:
        known = ", ".join(f"{p}/{o}" if o else p for p, o in pairs)
        raise InputError(
            f"no known optimum for {scenario.name} with privacy={privacy}"
            + (f", observation={observation}" if observation else "")
            + f" (known: {known})"
        )
    if isinstance(scenario, BinaryGMM):
        from .mixture import FAMILIES

        family = family or DEFAULT_FAMILY[observation]  # type: ignore[index]
        if family not in FAMILIES:
            raise InputError(f"family={family!r} is unknown (allowed: {', '.join(FAMILIES)})")
        if observation == "useful" and FAMILY_OBSERVATION[family] == "full":
            raise InputError(
                f"family={family!r} needs S (observation full); with observation useful only "
                "'additive' is available"
            )
    elif family is not None:
        raise InputError(
            f"family={family!r} does not apply to {scenario.name} (families exist for binary-gmm only)"
        )
    return privacy, observation, family


def optimum(
    scenario: Scenario,
    budget: float,
    privacy: str | None = None,
    observation: str | None = None,
    family: str | None = None,
) -> Optimum:
    """The optimal leakage at one distortion budget, with method and mechanism.

    Parameters
    ----------
    scenario : Scenario
    budget : float
        Distortion budget (Hamming probability or MSE), >= 0.
    privacy : {"mi", "map", "chi2"}, optional
        Defaults to :func:`default_privacy`.
    observation : {"useful", "full"}
        Required except for ``gaussian-source``.
    family : str, optional
        ``binary-gmm`` only: ``additive``, ``shift``, ``shift-noise``, ``general``.
    """
    privacy, observation, family = resolve(scenario, privacy, observation, family)
    budget = check_budget(budget)
    if isinstance(scenario, FiniteScenario):
        return _finite_optimum(scenario, budget, privacy, observation)  # type: ignore[arg-type]
    if isinstance(scenario, GaussianScenario):
        from .gaussian import gaussian_optimum

        return gaussian_optimum(scenario, budget, observation)
    from .mixture import mixture_optimum

    return mixture_optimum(scenario, budget, family)


def curve(
    scenario: Scenario,
    budgets: Any,
    privacy: str | None = None,
    observation: str | None = None,
    family: str | None = None,
) -> np.ndarray:
    """Optimal leakage at each budget, shape (k,). Vectorised for closed forms."""
    privacy, observation, family = resolve(scenario, privacy, observation, family)
    b = check_budgets(budgets)
    if isinstance(scenario, FiniteScenario):
        closed = _finite_closed_form(scenario, b, privacy, observation)  # type: ignore[arg-type]
        if closed is not None:
            return closed
        return np.array([_finite_optimum(scenario, x, privacy, observation).value for x in b])  # type: ignore[arg-type]
    if isinstance(scenario, GaussianScenario):
        from .gaussian import gaussian_curve

        return gaussian_curve(scenario, b, observation)
    from .mixture import mixture_curve

    return mixture_curve(scenario, b, family)


def units(privacy: str) -> str:
    """Units of a privacy metric: ``nats``, ``probability`` or ``dimensionless``."""
    return UNITS[privacy]


# --------------------------------------------------------------------------
# finite scenarios
# --------------------------------------------------------------------------


def _finite_closed_form(
    scenario: FiniteScenario, budgets: np.ndarray, privacy: str, observation: str
) -> np.ndarray | None:
    if isinstance(scenario, SymmetricPair) and privacy == "mi":
        return finite.symmetric_pair_mi(budgets, scenario.m, scenario.p, observation)
    if isinstance(scenario, Binary) and privacy == "map" and observation == "useful":
        return finite.binary_pdi_map(budgets, scenario.p, scenario.q)
    return None


_CLOSED_FORM_NAMES = {
    ("symmetric-pair", "mi", "full"): "closed form (PPAN appendix G, eq (30))",
    ("symmetric-pair", "mi", "useful"): "closed form (PPAN appendix G, eq (31))",
    ("binary", "map", "useful"): "closed form (GAP Theorem 1, PDI)",
}


def _finite_optimum(scenario: FiniteScenario, budget: float, privacy: str, observation: str) -> Optimum:
    closed = _finite_closed_form(scenario, np.array([budget]), privacy, observation)
    if closed is None:
        return finite.solve_finite(
            scenario.joint(), scenario.distortion_matrix(), budget, privacy, observation
        )
    method = _CLOSED_FORM_NAMES[(scenario.name, privacy, observation)]
    if isinstance(scenario, SymmetricPair):
        channel = finite.symmetric_pair_mechanism(scenario.m, scenario.p, budget, observation)
        mechanism = {"type": "finite-channel", "observation": observation, "channel": channel.tolist()}
        return Optimum(value=float(closed[0]), method=method, mechanism=mechanism)
    # GAP Theorem 1 gives a set of optimal mechanisms; report one from the LP.
    lp = finite.solve_finite(scenario.joint(), scenario.distortion_matrix(), budget, privacy, observation)
    return Optimum(value=float(closed[0]), method=method, mechanism=lp.mechanism,
                   certificate={"linear_program_value": lp.value, **(lp.certificate or {})})
