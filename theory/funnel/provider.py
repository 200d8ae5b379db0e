"""The provider of the privacy funnel: every finite scenario under the log-loss distortion.

``optimum(sc, D, privacy, observation, distortion="logloss")`` is the
:func:`~.certified.funnel_sandwich` at budget D on H(U | Z), as a ``certified``
:class:`~privbench.theory.base.Optimum` (the bound kind of the binary-mixture
sandwich): ``value`` the achievable end (the exact leakage of
``mechanism["channel"]``), ``lower`` the certified end, ``certificate`` the width,
rounds, time and the budget's multiplier.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

from privbench.datasets.errors import InputError

from ..base import Optimum
from ..registry import Provider, register
from .certified import TOL, funnel_sandwich
from .split import PRIVACIES, split_model

__all__ = ["DISTORTION", "METHOD", "FunnelProvider", "funnel_optimum"]

#: The distortion name this provider serves.
DISTORTION = "logloss"
METHOD = ("certified privacy funnel: envelope LP on a triangulation of the posteriors (HiGHS); "
          "achievable split / affine-minorant dual bound")


@lru_cache(maxsize=512)
def _cached(joint_key: bytes, shape: tuple[int, int], budget: float, privacy: str, observation: str,
            tol: float, time_limit: float) -> Optimum:
    joint = np.frombuffer(joint_key).reshape(shape)
    got = funnel_sandwich(split_model(joint, observation), joint, observation, budget, privacy,
                          tol=tol, time_limit=time_limit)
    cert = {k: v for k, v in got.items() if k != "channel"}
    mech = {"type": "finite-channel", "observation": observation, "channel": got["channel"].tolist(),
            "distortion": got["distortion"]}
    return Optimum(float(got["upper"]), METHOD, "certified", mech, None, cert, lower=float(got["lower"]))


def funnel_optimum(joint: np.ndarray, budget: float, privacy: str = "mi", observation: str = "useful", *,
                   tol: float = TOL, time_limit: float = 60.0) -> Optimum:
    """The funnel sandwich of a joint pmf P(S, U) at H(U | Z) <= budget (cached per argument tuple)."""
    if privacy not in PRIVACIES:
        raise InputError(f"privacy={privacy!r} has no funnel optimum (allowed: {', '.join(PRIVACIES)})")
    joint = np.ascontiguousarray(joint, dtype=float)
    return _cached(joint.tobytes(), joint.shape, float(budget), privacy, observation, float(tol),
                   float(time_limit))


@register(kind="finite", distortion=DISTORTION)
class FunnelProvider(Provider):
    """Finite scenarios, log-loss distortion: mi, map and chi2 (each leakage is an average over
    the posteriors of a convex cost, so the envelope argument carries over), both observations."""

    pairs = tuple((p, o) for p in PRIVACIES for o in ("useful", "full"))

    def optimum(self, scenario: Any, budget: float, privacy: str, observation: str | None,
                family: str | None) -> Optimum:
        return funnel_optimum(scenario.joint(), budget, privacy, str(observation))

    def curve(self, scenario: Any, budgets: np.ndarray, privacy: str, observation: str | None,
              family: str | None) -> np.ndarray:
        return np.array([self.optimum(scenario, float(b), privacy, observation, family).value for b in budgets])
