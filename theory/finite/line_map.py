"""The MAP linear program of the full observation under a distortion on a line, as a flow on P(S, Z).

Where d(u, z) = |x_u - x_z| for positions x_0 <= x_1 <= ... of one alphabet (|u - z| on ordinal
values, scaled or not: :func:`line_positions`), block s of the channel (the rows (s, u); the mechanism
sees s) has only to carry p_s = P(S=s, U=.) to P(S=s, Z=.), and the least distortion that does so is
the optimal transport cost on the line, sum_k (x_{k+1} - x_k) |F_s(k) - G_s(k)| with F, G the two
cumulative sums.  Written with the flow f[s, k] = F_s(k) - G_s(k) across the segment (k, k+1), split
f = f+ - f- (both >= 0), P(S=s, Z=j) = p_s(j) + f[s, j-1] - f[s, j], and the linear program of
``highs_lp.py`` (n_s n_u n_z entries of the channel) has the optimum of

    minimise sum_j t_j   over f+, f- >= 0 (n_s x (n - 1)) and t (n)
    subject to  0 <= p_s(j) + f[s, j-1] - f[s, j] <= t_j,   sum (x_{k+1} - x_k) (f+ + f-) <= D,

with 2 n_s (n - 1) + n unknowns and about 5 nonzeros a row (random joint, full, m = 100: 19,900
instead of 1,000,100).  A first formulation with P(S, Z) and its cumulative sums as unknowns (the
same optimum) took 9-15 s a budget at m = 100; this one 0.7-3.4 s.  :func:`monotone_channel` turns its
P(S, Z) into a channel of the full program by the monotone (quantile) coupling of p_s and P(S=s, Z=.),
whose cost on the line is that transport cost.  As in ``hamming_map.py`` nothing of the reduction is
trusted: the value is that channel's own MAP accuracy, the bound :func:`~.certificate.map_dual_bound`
of the epigraph rows' and the budget row's duals recomputed over every entry of the full program, and a
channel that did not certify goes to the column generation of ``highs_cg.py``.
"""

from __future__ import annotations

import highspy
import numpy as np
import scipy.sparse as sp

from .data import FiniteData
from .highs_lp import LpResult
from .reduced_map import ReducedFullMap, rescaled_rows

__all__ = ["LINE_RTOL", "LineFullMap", "line_positions", "monotone_channel"]

LINE_RTOL = 1e-12  # d may differ from |x_u - x_z| by this relative to its largest entry (rounding of |u - z| / c)


def line_positions(distortion: np.ndarray) -> np.ndarray | None:
    """Positions x (nondecreasing, x_0 = 0) with d(u, z) = |x_u - x_z| on a square alphabet of at least
    3 values (to LINE_RTOL), else None (two values are the Hamming case of ``hamming_map.py``)."""
    d = np.asarray(distortion, dtype=float)
    if d.ndim != 2 or d.shape[0] != d.shape[1] or d.shape[0] < 3 or not np.all(np.isfinite(d)):
        return None
    x = d[0].copy()
    top = float(d.max())
    if top <= 0 or np.any(np.diff(x) < 0):
        return None
    if np.abs(d - np.abs(x[:, None] - x[None, :])).max() > LINE_RTOL * top:
        return None
    return x


def monotone_channel(p: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The full observation's channel (rows (s, u), shape (n_s n, n)) carrying p (n_s, n) to x (n_s, n)
    by the monotone coupling (each row of x first rescaled to p's row total): row (s, u) sends the share
    of the interval [F_s(u - 1), F_s(u)] of p's cumulative sum that lies in [G_s(z - 1), G_s(z)] of x's
    to z.  Rows with p = 0 keep z = u."""
    n_s, n = p.shape
    x = rescaled_rows(p, x)
    zero = np.zeros((n_s, 1))
    f = np.concatenate([zero, np.cumsum(p, axis=1)], axis=1)
    g = np.concatenate([zero, np.cumsum(x, axis=1)], axis=1)
    overlap = (np.minimum(f[:, 1:, None], g[:, None, 1:]) - np.maximum(f[:, :-1, None], g[:, None, :-1]))
    chan = np.clip(overlap, 0.0, None) / np.where(p > 0, p, 1.0)[:, :, None]
    rows = chan.sum(axis=2, keepdims=True)
    chan = np.where(rows > 0, chan / np.where(rows > 0, rows, 1.0), np.eye(n)[None, :, :])
    return chan.reshape(n_s * n, n)


def _flow_program(p: np.ndarray, gaps: np.ndarray) -> tuple[sp.csc_matrix, np.ndarray, np.ndarray]:
    """(A, row lower, row upper) of the flow LP (module notes); columns f+ | f- | t, rows: the epigraph
    rows (n_s n, <= -p), the nonnegative P(S, Z) (n_s n, >= -p), the budget (its upper end set later)."""
    n_s, n = p.shape
    nf, cells = n_s * (n - 1), n_s * n
    cell = np.arange(cells).reshape(n_s, n)
    edge = np.arange(nf)
    into, out_of = cell[:, 1:].ravel(), cell[:, :-1].ravel()  # the cells an edge's flow enters and leaves
    rows, cols, vals = [], [], []
    for base in (0, cells):
        rows += [base + into, base + into, base + out_of, base + out_of]
        cols += [edge, nf + edge, edge, nf + edge]
        vals += [np.ones(nf), -np.ones(nf), -np.ones(nf), np.ones(nf)]
    rows += [cell.ravel(), np.full(2 * nf, 2 * cells)]
    cols += [2 * nf + np.tile(np.arange(n), n_s), np.arange(2 * nf)]
    vals += [-np.ones(cells), np.tile(np.tile(gaps, n_s), 2)]
    a = sp.csc_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                      shape=(2 * cells + 1, 2 * nf + n))
    inf = highspy.kHighsInf
    lower = np.r_[np.full(cells, -inf), -p.ravel(), -inf]
    upper = np.r_[-p.ravel(), np.full(cells, inf), inf]
    return a, lower, upper


class LineFullMap(ReducedFullMap):
    """The flow form of the MAP LP of one joint (sensitive values that occur) on a persistent HiGHS
    instance (``reduced_map.ReducedFullMap``: ``preferred``, ``certified``)."""

    label = "HiGHS on the flow of P(S, Z) (full observation, distortion on a line)"

    def __init__(self, joint: np.ndarray, positions: np.ndarray, data: FiniteData) -> None:
        super().__init__(joint, data)
        gaps = np.diff(np.asarray(positions, dtype=float))
        n_s, n = self.p.shape
        a, lower, upper = _flow_program(self.p, gaps)
        nf = n_s * (n - 1)
        self.h = self._highs(a, lower, upper, np.r_[np.zeros(2 * nf), np.ones(n)],
                             np.r_[np.zeros(2 * nf), np.full(n, -highspy.kHighsInf)])
        self.nf, self.cells = nf, n_s * n

    def solve(self, budget: float) -> LpResult:
        """Solve at ``budget`` (from the last basis); RuntimeError unless HiGHS reports optimality."""
        h, nf, cells = self.h, self.nf, self.cells
        h.changeRowBounds(2 * cells, -highspy.kHighsInf, budget)
        h.run()
        if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            raise RuntimeError(f"HiGHS: {h.modelStatusToString(h.getModelStatus())}")
        sol = h.getSolution()
        col = np.asarray(sol.col_value)
        flow = (col[:nf] - col[nf : 2 * nf]).reshape(self.p.shape[0], -1)
        x = self.p.copy()
        x[:, 1:] += flow
        x[:, :-1] -= flow
        dual = np.asarray(sol.row_dual)
        mu = np.clip(-dual[:cells], 0.0, None).reshape(self.p.shape)
        return self._result(h, x, mu, max(-float(dual[-1]), 0.0), budget, monotone_channel)
