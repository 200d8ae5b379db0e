"""The MAP program as a sparse linear program solved by HiGHS, certified by its dual.

    minimise sum_z t_z   over C (n_w x n_z) >= 0 and t (n_z)
    subject to  sum_z C[w, z] = 1,   (G_s C)[s, z] <= t_z,   <A, C> <= D

(GAP eq (21) for any finite alphabet). The matrices are assembled once per
model (:class:`MapLP`) and only the budget changes between solves, so a curve
reuses them. HiGHS is called through ``scipy.optimize.linprog``; its duals of
the epigraph rows (mu[s, z] >= 0) and of the budget row (lambda >= 0) give a
lower bound that is checked here, not trusted: for any such mu with columns
summing to one, sum_z max_s P(s,z) >= sum_{s,z} mu P(s,z), so the optimum is
at least sum_w min_z (G_s^T mu + lambda A)[w, z] - lambda D
(:func:`~.certificate.map_dual_bound`). The value returned is the MAP accuracy
of the returned channel itself (rows clipped and renormalised).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog

from .certificate import map_dual_bound
from .data import FiniteData

__all__ = ["LpResult", "MapLP", "budget_row_scale"]

_OPTIONS = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10, "presolve": True}


def budget_row_scale(cost: np.ndarray) -> float:
    """1 / the largest entry of the budget row P(w) d(w, z) (1 where all are 0): the row, its bound and its
    multiplier are scaled by it so that HiGHS's absolute tolerance holds for the budget
    (``highs_cg.BUDGET_ROW_SCALED``)."""
    top = float(cost.max())
    return 1.0 / top if top > 0 else 1.0


@dataclass(frozen=True)
class LpResult:
    """``channel`` (live rows, (n_w', n_z)), its MAP accuracy ``value``, a proven ``bound``,
    the budget's multiplier and HiGHS's own primal and dual objectives."""

    channel: np.ndarray
    value: float
    bound: float
    multiplier: float
    solver_primal: float
    solver_dual: float
    iterations: int


class MapLP:
    """The MAP linear program of one model, assembled once, solved at any budget."""

    def __init__(self, data: FiniteData, method: str = "highs") -> None:
        self.method = method
        n_w, n_z = data.shape
        n_s = data.g_s.shape[0]
        eye_z = sp.identity(n_z, format="csr")
        epi = sp.hstack([sp.kron(data.g_s, eye_z), -sp.kron(np.ones((n_s, 1)), eye_z)])
        self.row_scale = budget_row_scale(data.cost)
        budget_row = sp.csr_matrix(np.r_[data.cost.ravel() * self.row_scale, np.zeros(n_z)][None, :])
        self.a_ub = sp.vstack([epi, budget_row]).tocsc()
        self.a_eq = sp.hstack([sp.kron(sp.identity(n_w), np.ones((1, n_z))), sp.csr_matrix((n_w, n_z))]).tocsc()
        self.cost = np.r_[np.zeros(n_w * n_z), np.ones(n_z)]
        self.bounds = np.column_stack([np.r_[np.zeros(n_w * n_z), np.full(n_z, -np.inf)],
                                       np.full(n_w * n_z + n_z, np.inf)])
        self.data = data

    def solve(self, budget: float) -> LpResult:
        """Solve at ``budget``; raise RuntimeError if HiGHS does not report optimality."""
        data = self.data
        n_w, n_z = data.shape
        n_s = data.g_s.shape[0]
        b_ub = np.zeros(n_s * n_z + 1)
        b_ub[-1] = budget * self.row_scale
        res = linprog(self.cost, A_ub=self.a_ub, b_ub=b_ub, A_eq=self.a_eq, b_eq=np.ones(n_w),
                      bounds=self.bounds, method=self.method, options=_OPTIONS)
        if res.status != 0:
            raise RuntimeError(f"HiGHS: {res.message}")
        channel = np.clip(res.x[: n_w * n_z].reshape(n_w, n_z), 0.0, None)
        channel /= channel.sum(axis=1, keepdims=True)
        value = float(np.asarray(data.g_s @ channel).max(axis=0).sum())
        duals = -np.asarray(res.ineqlin.marginals)
        lam = max(float(duals[-1]), 0.0) * self.row_scale
        bound = map_dual_bound(duals[:-1].reshape(n_s, n_z), data.g_s, data.cost, budget, lam)
        dual_obj = float(res.ineqlin.marginals @ b_ub + res.eqlin.marginals @ np.ones(n_w))
        return LpResult(channel, value, bound, lam, float(res.fun), dual_obj, int(res.nit))
