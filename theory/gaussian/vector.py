"""Jointly Gaussian vectors S, U: PPAN Prop 2 (modified water-filling), W = U.

Registered under the scenario name ``gaussian-vector`` for privacy ``mi`` with
observation ``useful`` (and ``full`` for 1 x 1 models, which are scalar ones).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from privbench.datasets.errors import InputError
from privbench.datasets.samples import check_observation
from privbench.datasets.scenarios import GaussianScalar, GaussianVector

from ..base import Optimum, check_budgets
from ..registry import Provider, register
from .leakage import linear_description
from .scalar import ScalarClosedForm
from .waterfill import RHO_ZERO, waterfill_allocation

__all__ = ["CONDITION_RTOL", "METHOD", "Canonical", "VectorClosedForm", "as_scalar", "canonical_form",
           "vector_mechanism", "vector_useful_mi"]

CONDITION_RTOL = 1e-9  # relative tolerance of the Prop 2 check V^T cov_u V = c I
METHOD = "closed form (PPAN Prop 2, modified water-filling)"


@dataclass(frozen=True)
class Canonical:
    """The reparameterisation of PPAN Prop 2 for a vector scenario.

    Attributes
    ----------
    c : float
        The constant in V_P^T cov_u V_P = c I_n.
    rho : ndarray, shape (min(d_s, d_u),)
        Singular values of P = cov_s^-1/2 cov_su cov_u^-1/2 (canonical
        correlations), clipped to [0, 1]; values <= 1e-12 set to 0.
    v_p : ndarray, shape (d_u, d_u)
        Right singular vectors (orthogonal): U' = V_P^T cov_u^-1/2 U.
    sqrt_u, isqrt_u : ndarray, shape (d_u, d_u)
        cov_u^{1/2} and cov_u^{-1/2} (symmetric).
    """

    c: float
    rho: np.ndarray
    v_p: np.ndarray
    sqrt_u: np.ndarray
    isqrt_u: np.ndarray


def _sym_pow(mat: np.ndarray, power: float) -> np.ndarray:
    w, v = np.linalg.eigh(mat)
    return (v * w**power) @ v.T


def canonical_form(sc: GaussianVector) -> Canonical:
    """Reparameterise a vector scenario and check PPAN Prop 2's condition.

    Raises
    ------
    InputError
        When V_P^T cov_u V_P is not c I (equivalently cov_u is not a multiple of
        the identity, because V_P is square orthogonal): no closed form is known.
    """
    cs, cu, csu = (np.asarray(x, dtype=float) for x in (sc.cov_s, sc.cov_u, sc.cov_su))
    sqrt_u, isqrt_u = _sym_pow(cu, 0.5), _sym_pow(cu, -0.5)
    P = _sym_pow(cs, -0.5) @ csu @ isqrt_u
    _, sv, vt = np.linalg.svd(P, full_matrices=True)
    v_p = vt.T
    M = v_p.T @ cu @ v_p
    c = float(np.trace(M) / M.shape[0])
    dev = float(np.max(np.abs(M - c * np.eye(M.shape[0]))))
    if dev > CONDITION_RTOL * c:
        raise InputError(
            f"gaussian-vector {sc.id}: PPAN Prop 2 condition V_P^T cov_u V_P = c I fails "
            f"(largest deviation {dev:.3g}; it holds iff cov_u is a multiple of the identity); "
            "no known closed form for this model"
        )
    rho = np.clip(sv, 0.0, 1.0)
    rho[rho <= RHO_ZERO] = 0.0
    return Canonical(c=c, rho=rho, v_p=v_p, sqrt_u=sqrt_u, isqrt_u=isqrt_u)


def _leak(rho: np.ndarray, alloc: np.ndarray) -> np.ndarray:
    """sum_i -1/2 log(1 - rho_i^2 (1 - delta_i)), shape (n,), for alloc (n, k)."""
    with np.errstate(divide="ignore"):
        return np.maximum(-0.5 * np.log1p(-(rho * rho) * (1.0 - alloc)).sum(axis=1), 0.0)


def vector_useful_mi(budgets: Any, canon: Canonical) -> np.ndarray:
    """PPAN Prop 2: sum_i -1/2 log(1 - rho_i^2 + rho_i^2 delta'_i) at B = D / c, shape (n,)."""
    b = check_budgets(budgets) / canon.c
    return _leak(canon.rho, waterfill_allocation(b, canon.rho))


def vector_mechanism(sc: GaussianVector, canon: Canonical, budget: float) -> dict[str, Any]:
    """An optimal Z = A U + N(0, noise_cov) for Prop 2 at one budget.

    In canonical coordinates Z'_i = (1 - delta'_i) U'_i + N(0, delta'_i (1 - delta'_i)).
    Components of U' beyond min(d_s, d_u), and those with rho'_i = 0, are
    uncorrelated with every S'_j (the cross-covariance is diagonal), hence,
    being jointly Gaussian, independent of S' and of the other pairs: they get
    delta'_i = 0 and are released exactly, at no cost in distortion or leakage
    (the water-filling limit rho' -> 0 never gives them budget either). The
    paper assumes rho'_i > 0 and leaves these components unspecified.
    Back in original coordinates, with T = cov_u^{1/2} V_P:
    A = T diag(1 - delta') T^{-1}, noise_cov = T diag(delta'(1 - delta')) T^T.
    """
    d_s, d_u = sc.dims
    k = canon.rho.size
    alloc = np.zeros(d_u)
    alloc[:k] = waterfill_allocation([budget / canon.c], canon.rho)[0]
    T = canon.sqrt_u @ canon.v_p
    A = T @ np.diag(1.0 - alloc) @ canon.v_p.T @ canon.isqrt_u
    noise = T @ np.diag(alloc * (1.0 - alloc)) @ T.T
    return {
        "A": A.tolist(), "B": np.zeros((d_u, d_s)).tolist(), "noise_cov": noise.tolist(),
        "allocation": alloc.tolist(), "canonical_rho": canon.rho.tolist(), "c": canon.c,
        "v_p": canon.v_p.tolist(), "distortion": float(canon.c * alloc.sum()),
    }


def as_scalar(sc: GaussianVector) -> GaussianScalar:
    """A 1 x 1 vector scenario as the equivalent scalar one."""
    cs, cu, csu = sc.cov_s[0][0], sc.cov_u[0][0], sc.cov_su[0][0]
    return GaussianScalar(float(np.clip(csu / np.sqrt(cs * cu), -1.0, 1.0)), cs, cu)


@register(name="gaussian-vector")
class VectorClosedForm(Provider):
    """PPAN Prop 2 for ``GaussianVector`` scenarios; 1 x 1 ones go to Props 1 and 3."""

    scalar = ScalarClosedForm()

    def supported(self, scenario: Any) -> list[tuple[str, str | None]]:
        return [("mi", "useful")] + ([("mi", "full")] if scenario.dims == (1, 1) else [])

    def canonical(self, scenario: Any, observation: str | None) -> Canonical:
        """Prop 2's reparameterisation; InputError for observation ``full``."""
        if observation == "full":
            raise InputError(
                f"no known optimum for gaussian-vector with full observation ({scenario.id}); "
                "allowed: observation=useful (PPAN Prop 2)"
            )
        return canonical_form(scenario)

    def curve(
        self, scenario: Any, budgets: np.ndarray, privacy: str, observation: str | None, family: str | None
    ) -> np.ndarray:
        check_observation(observation)  # type: ignore[arg-type]
        if scenario.dims == (1, 1):
            return self.scalar.curve(as_scalar(scenario), budgets, privacy, observation, family)
        return vector_useful_mi(budgets, self.canonical(scenario, observation))

    def optimum(
        self, scenario: Any, budget: float, privacy: str, observation: str | None, family: str | None
    ) -> Optimum:
        check_observation(observation)  # type: ignore[arg-type]
        if scenario.dims == (1, 1):
            return self.scalar.optimum(as_scalar(scenario), budget, privacy, observation, family)
        canon = self.canonical(scenario, observation)
        value = float(self.curve(scenario, np.array([budget]), privacy, observation, family)[0])
        mech = linear_description(observation)
        mech.update(vector_mechanism(scenario, canon, budget))
        return Optimum(value=value, method=METHOD, bound_kind="exact", mechanism=mech)
