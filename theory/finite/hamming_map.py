"""The MAP linear program of the full observation under Hamming distortion, on P(S, Z) alone.

With W = (S, U) the mechanism sees s, so block s of the channel (the rows (s, u)) has only to carry
p_s = P(S=s, U=.) to x_s = P(S=s, Z=.): the least distortion that does so is the optimal transport
cost between p_s and x_s, which under d(u, z) = c 1[u != z] (|U| = |Z|, :func:`hamming_scale`) is
c sum_z (p_s(z) - x_s(z))_+ (keep min(p_s, x_s) in place, move the rest).  So the linear program of
``highs_lp.py`` (n_s n_u n_z entries of the channel) has the optimum of

    minimise sum_z t_z   over x, e >= 0 (n_s x n_z) and t (n_z)
    subject to  x[s, z] <= t_z,   sum_z x[s, z] = P(s),   x + e >= p,   c sum e <= D,

with 2 n_s n_z + n_z unknowns (random joint, full, m = 100: 20,100 instead of 1,000,100).
:func:`transport_channel` turns its x into a channel of the full program: each row (s, u) keeps
min(p_s(u), x_s(u)) / p_s(u) at z = u and spreads the rest over the releases short of mass, in
proportion to their shortfall (distortion c times the mass moved, P(S, Z) = x).  The value the solver
reports is that channel's own MAP accuracy, and the bound is :func:`~.certificate.map_dual_bound` of the
epigraph rows' and the budget row's duals, recomputed over every entry of the full program, so nothing
of the reduction is trusted: a channel that did not certify would go to the column generation of
``highs_cg.py``.

HiGHS solves the first budget of a large program by its interior point (with crossover; ``IPM_MIN``),
of a small one and every later budget of a curve by the dual simplex (from the basis before).
"""

from __future__ import annotations

import highspy
import numpy as np
import scipy.sparse as sp

from .data import FiniteData
from .highs_lp import LpResult
from .reduced_map import ReducedFullMap, rescaled_rows

__all__ = ["IPM_MIN", "HammingFullMap", "hamming_scale", "transport_channel"]

IPM_MIN = 5_000  # programs with n_s n_z at least this start with HiGHS's interior point, smaller ones with the
# dual simplex (measured, reduced LP, budgets 0.1-0.6: random m = 100 1.5-3.9 s against 3.7-6.7 s; random
# m = 50 0.20-0.39 against 0.18-0.22 s; symmetric pair m = 100 0.38-0.93 against 0.18-0.57 s; the
# interior point stopped with status Unknown on random m = 30 at budgets 0.1 and 0.3)


def hamming_scale(distortion: np.ndarray) -> float | None:
    """c where d(u, z) = c 1[u != z] on a square alphabet with c > 0 (exactly), else None."""
    d = np.asarray(distortion, dtype=float)
    if d.ndim != 2 or d.shape[0] != d.shape[1] or d.shape[0] < 2:
        return None
    c = float(d[0, 1])
    off = ~np.eye(d.shape[0], dtype=bool)
    if not (c > 0 and np.all(np.diag(d) == 0) and np.all(d[off] == c)):
        return None
    return c


def transport_channel(p: np.ndarray, x: np.ndarray, limit: float = np.inf) -> np.ndarray:
    """The full observation's channel (rows (s, u), shape (n_s n_u, n_z)) carrying p (n_s, n) to x
    (n_s, n), each row of x rescaled to p's row total: min(p, x) stays, the rest moves in proportion to
    each release's shortfall (the module notes).  Rows with p = 0 keep z = u.  Where more mass than
    ``limit`` would move (the LP's tolerance), x is first pulled toward p until exactly ``limit`` does."""
    n_s, n = p.shape
    x = rescaled_rows(p, x)
    total = float(np.clip(p - x, 0.0, None).sum())
    if total > limit:
        x = p + (limit / total) * (x - p)
    keep = np.minimum(p, x)
    surplus, short = p - keep, x - keep
    moved = short.sum(axis=1, keepdims=True)
    safe_p = np.where(p > 0, p, 1.0)
    chan = (surplus / safe_p)[:, :, None] * (short / np.where(moved > 0, moved, 1.0))[:, None, :]
    idx = np.arange(n)
    chan[:, idx, idx] += np.where(p > 0, keep / safe_p, 1.0)
    return chan.reshape(n_s * n, n)


class HammingFullMap(ReducedFullMap):
    """The reduced MAP LP of one joint (sensitive values that occur) on a persistent HiGHS instance."""

    label = "HiGHS on P(S, Z) (full observation, Hamming)"

    def __init__(self, joint: np.ndarray, scale: float, data: FiniteData) -> None:
        super().__init__(joint, data)
        self.scale = float(scale)
        n_s, n = self.p.shape
        big = n_s * n
        ix = np.arange(big)
        # rows: epigraph (big), mass (n_s), transport (big), budget (1); columns: x (big), e (big), t (n)
        rows = np.r_[ix, big + ix // n, big + n_s + ix, big + n_s + ix, np.full(big, 2 * big + n_s), ix]
        cols = np.r_[ix, ix, ix, big + ix, big + ix, 2 * big + ix % n]
        vals = np.r_[np.ones(3 * big), np.ones(big), np.full(big, self.scale), -np.ones(big)]
        a = sp.csc_matrix((vals, (rows, cols)), shape=(2 * big + n_s + 1, 2 * big + n))
        inf = highspy.kHighsInf
        mass = self.p.sum(axis=1)
        lower = np.r_[np.full(big, -inf), mass, self.p.ravel(), -inf]
        upper = np.r_[np.zeros(big), mass, np.full(big, inf), inf]
        h = self._highs(a, lower, upper, np.r_[np.zeros(2 * big), np.ones(n)],
                        np.r_[np.zeros(2 * big), np.full(n, -inf)])
        if big >= IPM_MIN:  # the first solve (module notes); later ones from its basis
            h.setOptionValue("solver", "ipm")
        self.h, self.big, self.solves = h, big, 0

    def solve(self, budget: float) -> LpResult:
        """Solve at ``budget``; RuntimeError unless HiGHS reports optimality."""
        h, big, n_s = self.h, self.big, self.p.shape[0]
        h.changeRowBounds(2 * big + n_s, -highspy.kHighsInf, budget)
        h.run()
        if h.getModelStatus() != highspy.HighsModelStatus.kOptimal and self.solves == 0 and self.big >= IPM_MIN:
            h.setOptionValue("solver", "simplex")  # the interior point stopped short ("Unknown"): the simplex
            h.run()
        if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            raise RuntimeError(f"HiGHS: {h.modelStatusToString(h.getModelStatus())}")
        h.setOptionValue("solver", "simplex")
        self.solves += 1
        sol = h.getSolution()
        x = np.asarray(sol.col_value)[:big].reshape(self.p.shape)
        dual = np.asarray(sol.row_dual)
        mu = np.clip(-dual[:big], 0.0, None).reshape(self.p.shape)
        lam = max(-float(dual[-1]), 0.0)
        return self._result(h, x, mu, lam, budget, lambda p, x_all: transport_channel(p, x_all, budget / self.scale))
