"""Scalar jointly Gaussian S, U: PPAN Props 1 (W = U) and 3 (W = (S, U)), generalised.

Registered under the scenario name ``gaussian-scalar`` for privacy ``mi`` with
either observation model (MSE distortion).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from privbench.datasets.samples import check_observation
from privbench.datasets.scenarios import GaussianScalar

from ..base import Optimum, check_budgets
from ..registry import Provider, register
from .leakage import linear_description

__all__ = ["METHODS", "ScalarClosedForm", "scalar_full_mi", "scalar_mechanism", "scalar_useful_mi"]

METHODS = {
    "useful": "closed form (PPAN Prop 1)",
    "full": "closed form (PPAN Prop 3, generalised to any variances and sign of rho)",
}


def scalar_useful_mi(budgets: Any, rho: float, var_u: float = 1.0) -> np.ndarray:
    """PPAN Prop 1: I*(D) = max(0, -1/2 log(1 - rho^2 + rho^2 D / var_u)), W = U.

    Holds for any variances and rho in [-1, 1]; 0 for D >= var_u; ``inf`` at
    D = 0 when |rho| = 1.

    Parameters
    ----------
    budgets : array_like, shape (k,)
    Returns
    -------
    ndarray, shape (k,)
    """
    d = np.minimum(check_budgets(budgets) / var_u, 1.0)
    with np.errstate(divide="ignore"):
        return np.maximum(-0.5 * np.log1p(-(rho * rho) * (1.0 - d)), 0.0)


def scalar_full_mi(budgets: Any, rho: float, var_u: float = 1.0) -> np.ndarray:
    """PPAN Prop 3 generalised: optimal I(S;Z) with W = (S, U), scalar.

    With r = |rho| and d = D / var_u, the optimum is 0 for d >= r^2 and
    otherwise -log(sqrt((1 - r^2)(1 - d)) + r sqrt(d)), which equals the
    paper's eq (28), 1/2 log 1/(1 - (sqrt(r^2(1-d)) - sqrt((1-r^2)d))^2), since
    the two square roots are the cosine and sine of the same angle.

    Generalisation: I(S;Z) is invariant to scaling S and flipping its sign, so
    var_s and sign(rho) do not matter; scaling U (and Z) by sigma_u scales the
    MSE by var_u, hence d = D / var_u. At |rho| = 1 this is -1/2 log d, the
    rate-distortion function (equal to Prop 1).

    Parameters
    ----------
    budgets : array_like, shape (k,)
    Returns
    -------
    ndarray, shape (k,)
    """
    r = abs(float(rho))
    d = np.minimum(check_budgets(budgets) / var_u, r * r)
    s = np.sqrt((1.0 - r * r) * (1.0 - d)) + r * np.sqrt(d)  # sin of the angle between S and Z
    with np.errstate(divide="ignore"):
        return np.maximum(-np.log(s), 0.0)


def scalar_mechanism(sc: GaussianScalar, budget: float, observation: str) -> dict[str, Any]:
    """An optimal release Z = a U + b S + N(0, v) for a scalar scenario.

    ``useful`` (Prop 1), d = D / var_u: a = 1 - d, b = 0, v = var_u d (1 - d)
    for d < 1; Z = 0 for d >= 1. ``full`` (Prop 3 generalised), r = |rho|:
    for d < r^2 and r < 1, a = 1 - d + r k, b = -sign(rho) k sigma_u / sigma_s,
    v = 0, with k = sqrt(d (1 - d) / (1 - r^2)) (the paper's eq (27) rescaled);
    at r = 1 Prop 1's mechanism; for d >= r^2 the zero-leakage release with the
    least distortion, Z = U - E[U|S] (a = 1, b = -rho sigma_u / sigma_s, v = 0,
    distortion r^2 var_u).

    Returns
    -------
    dict
        ``a``, ``b``, ``noise_var`` and ``distortion`` (E(U - Z)^2 of this Z).
    """
    r, vu = abs(sc.rho), sc.var_u
    d = budget / vu
    sgn = 1.0 if sc.rho >= 0 else -1.0
    ratio = np.sqrt(vu / sc.var_s)
    if observation == "useful" or r == 1.0:
        if d >= 1.0:  # (at |rho| = 1, U - E[U|S] is this same Z = 0)
            return {"a": 0.0, "b": 0.0, "noise_var": 0.0, "distortion": vu}
        return {"a": 1.0 - d, "b": 0.0, "noise_var": vu * d * (1.0 - d), "distortion": budget}
    if d >= r * r:
        return {"a": 1.0, "b": -sc.rho * ratio, "noise_var": 0.0, "distortion": r * r * vu}
    k = np.sqrt(d * (1.0 - d) / (1.0 - r * r))
    return {"a": float(1.0 - d + r * k), "b": float(-sgn * k * ratio), "noise_var": 0.0,
            "distortion": budget}


@register(name="gaussian-scalar")
class ScalarClosedForm(Provider):
    """PPAN Props 1 and 3 for ``GaussianScalar`` scenarios (``rho``, ``var_s``, ``var_u``)."""

    pairs = (("mi", "useful"), ("mi", "full"))

    def curve(
        self, scenario: Any, budgets: np.ndarray, privacy: str, observation: str | None, family: str | None
    ) -> np.ndarray:
        check_observation(observation)  # type: ignore[arg-type]
        mi = scalar_useful_mi if observation == "useful" else scalar_full_mi
        return mi(budgets, scenario.rho, scenario.var_u)

    def optimum(
        self, scenario: Any, budget: float, privacy: str, observation: str | None, family: str | None
    ) -> Optimum:
        value = float(self.curve(scenario, np.array([budget]), privacy, observation, family)[0])
        m = scalar_mechanism(scenario, budget, observation)  # type: ignore[arg-type]
        mech = linear_description(observation)
        mech.update(A=[[m["a"]]], B=[[m["b"]]], noise_cov=[[m["noise_var"]]], distortion=m["distortion"])
        return Optimum(value=value, method=METHODS[observation], bound_kind="exact", mechanism=mech)  # type: ignore[index]
