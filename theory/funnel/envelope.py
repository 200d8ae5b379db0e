"""The envelope LP over a finite set of posteriors, solved by HiGHS with its dual.

Given candidate posteriors q_k (rows of ``points``), per-posterior costs c_k and
h_k = h_U(q_k), the linear program

    min  sum_k lam_k c_k   s.t.  sum_k lam_k q_k = P_W,  sum_k lam_k h_k <= D,  lam >= 0

is the lower concave envelope of the cost restricted to the points, evaluated at
P_W under the budget.  Its dual (y, mu >= 0), y . q_k - mu h_k <= c_k for all k,
bounds it from below by y . P_W - mu D; :func:`repaired_dual` repairs the small
infeasibility a floating-point dual has (shifting y by a constant, which the
simplex's sum-to-one makes exact) so that the bound holds for the stated points.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import linprog

__all__ = ["EnvelopeSolution", "repaired_dual", "solve_envelope"]


@dataclass(frozen=True)
class EnvelopeSolution:
    """The LP's weights, primal value and dual (y, mu)."""

    weights: np.ndarray
    value: float
    y: np.ndarray
    mu: float


def solve_envelope(points: np.ndarray, costs: np.ndarray, h: np.ndarray, p_w: np.ndarray,
                   budget: float) -> EnvelopeSolution:
    """Solve the envelope LP (HiGHS); raises RuntimeError if HiGHS does not report optimal."""
    res = linprog(costs, A_ub=h[None, :], b_ub=[budget], A_eq=points.T, b_eq=p_w,
                  bounds=(0, None), method="highs")
    if res.status != 0:
        raise RuntimeError(f"HiGHS: {res.message}")
    return EnvelopeSolution(np.clip(res.x, 0.0, None), float(res.fun), np.asarray(res.eqlin.marginals),
                            float(max(0.0, -res.ineqlin.marginals[0])))


def repaired_dual(sol: EnvelopeSolution, points: np.ndarray, costs: np.ndarray, h: np.ndarray,
                  p_w: np.ndarray, budget: float) -> tuple[np.ndarray, float]:
    """(y, y . P_W - mu D) for the dual shifted to feasibility on ``points`` (then a lower bound of the LP)."""
    violation = float(np.max(points @ sol.y - sol.mu * h - costs))
    y = sol.y - max(violation, 0.0)  # y . q drops by the shift for every q of the simplex
    return y, float(y @ p_w - sol.mu * budget)
