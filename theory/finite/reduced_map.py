"""What the full observation's MAP LPs on P(S, Z) share (``hamming_map.py``, ``line_map.py``): the joint's
sensitive values that occur, a quiet HiGHS instance, the certified solve, and the result of an x = P(S, Z).

Each subclass writes its linear program (``_highs``) and turns its solution into x (``solve``); the
channel of the full program that carries P(S, U) to x is its own (``channel_of``), and the value and
the bound are recomputed from that channel and from the epigraph rows' and the budget row's duals over
every entry of the full program (:meth:`ReducedFullMap._result`), so nothing of a reduction is trusted.
"""

from __future__ import annotations

from typing import Callable

import highspy
import numpy as np
import scipy.sparse as sp

from .certificate import map_dual_bound
from .data import FiniteData
from .highs_cg import quiet_stdout
from .highs_lp import LpResult

__all__ = ["ReducedFullMap", "rescaled_rows"]

_TOL = 1e-10  # HiGHS's primal and dual feasibility tolerances (as ``highs_cg.py``)


def rescaled_rows(p: np.ndarray, x: np.ndarray) -> np.ndarray:
    """x (n_s, n) clipped at 0, each row rescaled to p's row total (p's row where x's is all 0): the
    target P(S, Z) of a block-s transport, as the LP's tolerance left it."""
    x = np.clip(x, 0.0, None)
    tot = x.sum(axis=1, keepdims=True)
    return np.where(tot > 0, x * (p.sum(axis=1, keepdims=True) / np.where(tot > 0, tot, 1.0)), p)


class ReducedFullMap:
    """Base of the reduced MAP LPs of one joint on a persistent HiGHS instance (module notes)."""

    label = ""

    def __init__(self, joint: np.ndarray, data: FiniteData) -> None:
        self.joint = np.asarray(joint, dtype=float)
        self.occurs = self.joint.sum(axis=1) > 0  # the program's sensitive values (as ``FiniteData``'s)
        self.p = self.joint[self.occurs]
        self.data = data
        self.preferred = False  # set by ``map_solve`` once the column generation's first round did not finish

    @staticmethod
    def _highs(a: sp.csc_matrix, lower: np.ndarray, upper: np.ndarray, cost: np.ndarray, col_lower: np.ndarray
               ) -> highspy.Highs:
        """A quiet HiGHS instance of min cost x over col_lower <= x, lower <= A x <= upper."""
        with quiet_stdout():
            h = highspy.Highs()
            h.setOptionValue("output_flag", False)
        for name in ("primal_feasibility_tolerance", "dual_feasibility_tolerance"):
            h.setOptionValue(name, _TOL)
        h.addRows(lower.size, lower, upper, 0, np.zeros(lower.size, dtype=np.int32), np.zeros(0, dtype=np.int32),
                  np.zeros(0))
        h.addCols(cost.size, cost, col_lower, np.full(cost.size, highspy.kHighsInf), a.nnz,
                  a.indptr[:-1].astype(np.int32), a.indices.astype(np.int32), a.data)
        return h

    def solve(self, budget: float) -> LpResult:  # pragma: no cover - each subclass has its own
        raise NotImplementedError

    def certified(self, budget: float, tol: float) -> LpResult | None:
        """:meth:`solve`, where HiGHS finishes and its channel's gap is within ``tol`` (relative, as
        ``solve.GAP_TOL``); else None (the caller's column generation follows)."""
        try:
            r = self.solve(budget)
        except RuntimeError:
            return None
        return r if r.value - r.bound <= tol * max(1.0, abs(r.value)) else None

    def _result(self, h: highspy.Highs, x: np.ndarray, mu: np.ndarray, lam: float, budget: float,
                channel_of: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> LpResult:
        """The LpResult of x = P(S, Z) on the occurring values (shape of ``p``): the channel
        ``channel_of(joint, x on every value)`` on the live rows, its own MAP accuracy, the dual bound."""
        data = self.data
        x_all = np.zeros(self.joint.shape)
        x_all[self.occurs] = x
        channel = channel_of(self.joint, x_all)[data.live]
        value = float(np.asarray(data.g_s @ channel).max(axis=0).sum())
        bound = map_dual_bound(mu, data.g_s, data.cost, budget, lam)
        obj = float(h.getInfo().objective_function_value)
        return LpResult(channel, value, bound, lam, obj, obj, 1)
