"""Closed-form optimal tradeoffs for Gaussian scenarios: MI privacy, MSE distortion.

One module per algorithm: ``leakage.py`` (exact leakage of a linear-Gaussian
mechanism), ``scalar.py`` (Props 1, 3), ``waterfill.py`` (allocations),
``vector.py`` (Prop 2), ``source.py`` (R(D)); each of ``scalar``, ``vector`` and
``source`` registers the provider of its scenario name.

Problem: minimise I(S;Z) (nats) over mechanisms P(Z|W) subject to
E||U - Z||^2 <= D, with (S, U) zero-mean jointly Gaussian. PPAN's X is our S,
PPAN's Y is our U; observation ``useful`` is W = U, ``full`` is W = (S, U).

==================  ===========  ==================================================
scenario            observation  optimum I*(D)
==================  ===========  ==================================================
gaussian-scalar     useful       PPAN Prop 1: max(0, -1/2 log(1 - r^2 + r^2 D/v_u))
gaussian-scalar     full         PPAN Prop 3, generalised (see :func:`scalar_full_mi`)
gaussian-vector     useful       PPAN Prop 2, modified water-filling, needs cov_u = cI
gaussian-source     (ignored)    reverse water-filling R(D)
==================  ===========  ==================================================

Every optimal mechanism here is linear-Gaussian, Z = A U + B S + N(0, noise_cov);
:func:`linear_gaussian_leakage` computes its exact I(S;Z) and MSE. Curves are
vectorised over budgets (no Python loop over budgets).

Corrections to the paper (each checked in ``tests/theory/test_gaussian.py``):

* Prop 3's mechanism (27) holds only for D < rho^2 (unit variances): for
  rho^2 < D <= 1 it over-rotates Z past orthogonality and leaks again, for D > 1
  it is undefined, and at rho = 1 it divides by zero. For D >= rho^2 v_u an
  optimal release is Z = U - E[U|S] (zero leakage, distortion rho^2 v_u).
* Prop 2: delta'_i = min{1, t - (rho'_i^-2 - 1)} must also be clipped at 0
  (as in the proof's KKT equation).
* Prop 2's condition V_P^T Sigma_U V_P = c I_n, with V_P the n x n orthogonal
  factor of the SVD, is equivalent to Sigma_U = c I_n (cov_s arbitrary).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from privbench.datasets.errors import InputError
from privbench.datasets.scenarios import Scenario

from .. import registry
from ..base import Optimum, check_budget, check_budgets
from .leakage import SINGULAR_RTOL, linear_gaussian_leakage
from .scalar import ScalarClosedForm, scalar_full_mi, scalar_mechanism, scalar_useful_mi
from .source import SourceRateDistortion
from .vector import CONDITION_RTOL, Canonical, VectorClosedForm, canonical_form, vector_mechanism, vector_useful_mi
from .waterfill import RHO_ZERO, reverse_waterfill, source_mi, waterfill_allocation

__all__ = [
    "CONDITION_RTOL", "RHO_ZERO", "SINGULAR_RTOL", "Canonical", "ScalarClosedForm", "SourceRateDistortion",
    "VectorClosedForm",
    "canonical_form", "gaussian_curve", "gaussian_optimum", "linear_gaussian_leakage", "reverse_waterfill",
    "scalar_full_mi", "scalar_mechanism", "scalar_useful_mi", "source_mi", "vector_mechanism",
    "vector_useful_mi", "waterfill_allocation",
]


def _provider(scenario: Any) -> registry.Provider:
    """The registered closed form of a Gaussian scenario (InputError for anything else)."""
    chain = registry.chain(scenario) if isinstance(scenario, Scenario) and scenario.kind == "gaussian" else []
    if not chain:
        raise InputError(
            f"scenario {getattr(scenario, 'id', scenario)!r} has no Gaussian closed form "
            "(allowed: gaussian-scalar, gaussian-vector, gaussian-source)"
        )
    return chain[0]


def gaussian_curve(scenario: Any, budgets: Any, observation: str | None) -> np.ndarray:
    """Optimal I(S;Z) in nats at each MSE budget, vectorised.

    Parameters
    ----------
    scenario : GaussianScalar, GaussianVector or GaussianSource
    budgets : array_like, shape (n,)
        MSE budgets D >= 0 (InputError for NaN, inf or negatives).
    observation : {"useful", "full"} or None
        Ignored for gaussian-source (S = U = W).

    Returns
    -------
    ndarray, shape (n,)
        ``inf`` where the optimum is infinite (D = 0 with a perfectly
        correlated component).
    """
    b = check_budgets(budgets)
    return _provider(scenario).curve(scenario, b, "mi", observation, None)


def gaussian_optimum(scenario: Any, budget: float, observation: str | None) -> Optimum:
    """Optimal I(S;Z) at one MSE budget with an optimal linear-Gaussian mechanism.

    Returns
    -------
    Optimum
        ``bound_kind="exact"``; ``method`` names the proposition; ``mechanism``
        holds ``A`` (d_u, d_u), ``B`` (d_u, d_s), ``noise_cov`` (d_u, d_u) as
        nested lists for Z = A U + B S + N(0, noise_cov), plus ``distortion``
        (its MSE, <= budget; below the budget only where extra distortion cannot
        lower the leakage) and method-specific entries. ``value`` may be ``inf``.
    """
    budget = check_budget(budget)
    return _provider(scenario).optimum(scenario, budget, "mi", observation, None)
