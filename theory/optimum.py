"""One entry point for every optimal tradeoff: :func:`optimum` and :func:`curve`.

This module only dispatches. What is known lives in provider modules that
register themselves in :mod:`privbench.theory.registry`, keyed by scenario name
(closed forms) or scenario kind (generic programs); a name's provider takes
precedence over its kind's for the pairs it serves:

==================  ========  ============  =============================================
scenario            privacy   observation   method (provider module)
==================  ========  ============  =============================================
symmetric-pair      mi        useful, full  closed form, PPAN app. G eqs (31), (30)
                                            (``finite/symmetric_pair.py``)
binary              map       useful        closed form, GAP Theorem 1 (PDI) (``finite/binary.py``)
any finite          mi        useful, full  convex program (exponential cone) (``finite/program.py``)
any finite          map       useful, full  linear program (GAP eq (21) for binary PDD)
any finite          chi2      useful, full  convex program (second-order cone)
gaussian-scalar     mi        useful        PPAN Prop 1 (``gaussian/scalar.py``)
gaussian-scalar     mi        full          PPAN Prop 3, generalised to any variances
gaussian-vector     mi        useful        PPAN Prop 2 (modified water-filling) (``gaussian/vector.py``)
gaussian-source     mi        (none)        reverse water-filling R(D) (``gaussian/source.py``)
binary-gmm          map       useful, full  family bounds (GAP Theorems 2-4, eq (44)) (``mixture/``)
binary-gmm          map, mi   useful, full  family ``certified``: a sandwich over all mechanisms
                                            (``mixture/certified.py``; the only bound for mi)
any finite,         mi, map,  useful, full  ``certified`` sandwich of the privacy funnel
distortion=logloss  chi2                    (``funnel/``: H(U | Z) <= D, registered by
                                            (kind, distortion))
==================  ========  ============  =============================================

``distortion`` (optional everywhere) asks for another distortion than the
scenario's own (``logloss``: H(U | Z), the information utility); it is served only
by the provider registered for (the scenario's kind, that distortion).

Any other combination raises :class:`~privbench.datasets.errors.InputError`; so do
the labelled scenarios (``mnist-subset``, ``digits``, ``hypothesis-testing``,
``privbench.datasets.labelled``), which have no known optimum (``has_optimum``
False).

To add a scenario with a closed form (say a new finite model), write ONE new
module under ``theory/`` (e.g. ``theory/finite/<name>.py``) with a
:class:`~privbench.theory.registry.Provider` subclass decorated with
``@register(name="<scenario name>")``: the registry imports every theory module,
so nothing here or elsewhere needs editing. Pairs it does not serve fall back
to the provider of the scenario's kind.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from privbench.datasets.errors import InputError
from privbench.datasets.samples import check_observation
from privbench.datasets.scenarios import Scenario
from privbench.datasets.vocabulary import DISTORTIONS

from . import registry
from .base import PRIVACIES, UNITS, Optimum, check_budget, check_budgets

__all__ = ["curve", "default_privacy", "optimum", "other_distortion", "resolve", "supported", "units"]


def other_distortion(scenario: Scenario, distortion: str | None) -> str | None:
    """None for the scenario's own distortion (or None), else the validated other distortion name."""
    if distortion is None or distortion == getattr(scenario, "distortion_name", None):
        return None
    if distortion not in DISTORTIONS:
        raise InputError(f"distortion={distortion!r} is unknown (allowed: {', '.join(DISTORTIONS)})")
    return distortion


def default_privacy(scenario: Scenario, distortion: str | None = None) -> str:
    """The privacy metric used when none is given (``map`` for binary-gmm, else ``mi``)."""
    return registry.declared(scenario, "default_privacy", "mi", other_distortion(scenario, distortion))


def supported(scenario: Scenario, distortion: str | None = None) -> list[tuple[str, str | None]]:
    """(privacy, observation) pairs with a known optimum for this scenario (under ``distortion``)."""
    pairs: list[tuple[str, str | None]] = []
    for provider in reversed(registry.chain(scenario, other_distortion(scenario, distortion))):
        pairs += [pair for pair in provider.supported(scenario) if pair not in pairs]
    return pairs


def resolve(
    scenario: Scenario, privacy: str | None, observation: str | None, family: str | None,
    distortion: str | None = None,
) -> tuple[str, str | None, str | None]:
    """Validate a request and fill in its defaults: ``(privacy, observation, family)``.

    Raises
    ------
    InputError
        For a non-scenario, a scenario without a known optimum, an unknown
        privacy or observation, a pair without a known optimum, or a family
        that is unknown or does not apply.
    """
    if not isinstance(scenario, Scenario):
        raise InputError(f"scenario={scenario!r} is not a privbench scenario")
    if not scenario.has_optimum:
        raise InputError(f"{scenario.name} has no known optimum (only learned points and evaluators: "
                         "run it with 'privbench run')")
    other = other_distortion(scenario, distortion)
    if other is not None and not registry.chain(scenario, other):
        raise InputError(f"no known optimum for {scenario.name} with distortion={other} "
                         f"(its own distortion is {getattr(scenario, 'distortion_name', '?')})")
    privacy = privacy or default_privacy(scenario, other)
    if privacy not in PRIVACIES:
        raise InputError(f"privacy={privacy!r} is unknown (allowed: {', '.join(PRIVACIES)})")
    if registry.declared(scenario, "observation_free", False, other):
        observation = None  # S = U = W: the observation model does not matter
    elif observation is None:
        raise InputError(f"{scenario.name} needs an observation model (allowed: useful, full)")
    else:
        check_observation(observation)
    pairs = supported(scenario, other)
    if (privacy, observation) not in pairs:
        known = ", ".join(f"{p}/{o}" if o else p for p, o in pairs)
        raise InputError(
            f"no known optimum for {scenario.name} with privacy={privacy}"
            + (f", observation={observation}" if observation else "")
            + (f", distortion={other}" if other else "")
            + f" (known: {known})"
        )
    with_families = [p for p in registry.chain(scenario, other) if p.has_families]
    if with_families:
        family = with_families[0].resolve_family(scenario, observation, family, privacy)
    elif family is not None:
        raise InputError(
            f"family={family!r} does not apply to {scenario.name} (families exist for binary-gmm only)"
        )
    return privacy, observation, family


def _provider(scenario: Scenario, privacy: str, observation: str | None,
              distortion: str | None = None) -> registry.Provider:
    provider = registry.serving(scenario, privacy, observation, other_distortion(scenario, distortion))
    assert provider is not None, "resolve() admits served pairs only"
    return provider


def optimum(
    scenario: Scenario,
    budget: float,
    privacy: str | None = None,
    observation: str | None = None,
    family: str | None = None,
    distortion: str | None = None,
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
        ``binary-gmm`` only: ``additive``, ``shift``, ``shift-noise``, ``general``, or
        ``certified`` (the sandwich over all mechanisms; ``Optimum.lower`` is its lower end).
    distortion : str, optional
        Another distortion than the scenario's own: ``logloss`` (H(U | Z) <= budget, nats) for
        finite scenarios, a ``certified`` sandwich (the privacy funnel, ``theory/funnel``).
    """
    privacy, observation, family = resolve(scenario, privacy, observation, family, distortion)
    budget = check_budget(budget)
    return _provider(scenario, privacy, observation, distortion).optimum(scenario, budget, privacy, observation, family)


def curve(
    scenario: Scenario,
    budgets: Any,
    privacy: str | None = None,
    observation: str | None = None,
    family: str | None = None,
    distortion: str | None = None,
) -> np.ndarray:
    """Optimal leakage at each budget, shape (k,). Vectorised for closed forms."""
    privacy, observation, family = resolve(scenario, privacy, observation, family, distortion)
    b = check_budgets(budgets)
    return _provider(scenario, privacy, observation, distortion).curve(scenario, b, privacy, observation, family)


def units(privacy: str) -> str:
    """Units of a privacy metric: ``nats``, ``probability`` or ``dimensionless``."""
    return UNITS[privacy]


# Register every provider now, as importing privbench.theory always has loaded the
# finite programs (cvxpy): a worker that imports this module before its first case
# does not pay for the imports inside a timed case.
registry.load()
