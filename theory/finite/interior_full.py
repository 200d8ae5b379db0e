"""The Newton system of the interior point of ``interior_dense.py`` where each observation w has one s.

Under the full observation W = (S, U) each column of G = P(S, W) has one non-zero,
g_w = P(s(w), u(w)), so that y = P(S, Z) = G C sums disjoint groups of rows. The
dense system's n_w x n_w blocks (n_w = n_s n_u) would be too large; this one
works in the space of y instead (N = n_s n_z unknowns). With D = C / lambda
(entrywise), d_w = sum_z D[w, z] and the row projection

    proj(X)[w] = D[w] * X[w] - D[w] (D[w] . X[w]) / d_w,

the Newton step's channel is dC = proj(R1 - G^T xi - A dbeta) + D r_rows / d, with
xi = H_y dy (H_y: the leakage's Hessian in y, one n_s x n_s block per release), so
that dy = G dC solves the N x N system

    (I + P H_y) dy = G proj(R1) + G (D r_rows / d) - dbeta G proj(A),

P = G proj G^T, block-diagonal by s (n_z x n_z blocks, since the groups of rows
are disjoint); the budget's multiplier dbeta follows from one scalar equation.
One LU factorisation of I + P H_y per step serves the predictor, the corrector
and the budget's right-hand side. A step costs about N^3 / 3 flops: used up to
N = FULL_MAX_N; above it ``interior_lowrank.py`` solves the same system through
the structure of H_y (a diagonal plus low rank per release).
"""

from __future__ import annotations

import warnings
from typing import Any, Callable, NamedTuple

import numpy as np
import scipy.sparse as sp
from scipy.linalg import LinAlgWarning, lu_factor, lu_solve

from .interior_dense import Point, chi2_ratios, mi_slope

__all__ = ["FULL_MAX_N", "HESSIANS", "FullSystem", "one_s_per_w"]

FULL_MAX_N = 144  # n_s n_z up to this: the N x N system is factorised densely (above it the low-rank solve of
# ``interior_lowrank.py`` is faster: random joint, full, m = 14: 22-25 against 25-30 ms, m = 16: 32-35 against 41-47)
RES_TOL = 1e-9  # the row sums and the budget to this at the end (not 1e-12 as the dense system's: the
# projections leave ~1e-12 in the row sums, and chi2 on the random joint m = 10 then never stopped);
# the channel is renormalised and made to meet the budget before it is certified anyway


def one_s_per_w(g_s: sp.spmatrix) -> bool:
    """Whether every observation w has exactly one s with P(s, w) > 0."""
    return bool(np.all(np.diff(g_s.tocsc().indptr) == 1))


def _mi_hessian(y: np.ndarray, p_s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(slope log(P(s|z) / P(s)), Hessian blocks diag(1 / y_z) - 1 1^T / P(z), shape (n_z, n_s, n_s))."""
    p_z = y.sum(axis=0)
    slope = mi_slope(y, p_s, p_z)
    n_s = y.shape[0]
    hess = np.repeat((-1.0 / p_z)[:, None, None], n_s, axis=1).repeat(n_s, axis=2)
    hess[:, np.arange(n_s), np.arange(n_s)] += (1.0 / y).T
    return slope, hess


def _chi2_hessian(y: np.ndarray, p_s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(slope 2 r - Q, blocks (2 / P(z)) (diag(1 / P(S)) - r 1^T - 1 r^T + Q 1 1^T)), r = P(s|z) / P(s)."""
    p_z = y.sum(axis=0)
    r, q = chi2_ratios(y, p_s, p_z)
    n_s = y.shape[0]
    hess = q[:, None, None] - r.T[:, :, None] - r.T[:, None, :]
    hess[:, np.arange(n_s), np.arange(n_s)] += 1.0 / p_s
    return 2.0 * r - q[None, :], hess * (2.0 / p_z)[:, None, None]


HESSIANS = {"mi": _mi_hessian, "chi2": _chi2_hessian}


class _Step(NamedTuple):
    dinv: np.ndarray  # C / lambda
    d: np.ndarray  # its row sums
    hess: Any  # H_y: (n_z, n_s, n_s) blocks, or ``interior_lowrank.LowRankHessian``
    solve: Callable[[np.ndarray], np.ndarray]  # v -> (I + P H_y)^-1 v
    pc: np.ndarray  # proj(A)
    b: np.ndarray  # G proj(A), (n_s, n_z)
    u_b: np.ndarray  # (I + P H_y)^-1 b
    h_ub: np.ndarray  # H_y u_b
    denom: float  # <b, H_y u_b> - <proj(A), A> - s / beta


class FullSystem:
    """The y-space Newton system (module docstring) for a G with one s per w."""

    stops_at_zero = False  # (``solve_interior``'s ``floor``; see ``interior_lowrank.py``)

    def __init__(self, privacy: str, g_s: sp.spmatrix, p_s: np.ndarray, cost: np.ndarray) -> None:
        self.hessian, self.p_s, self.cost = HESSIANS[privacy], p_s, cost
        csc = g_s.tocsc()
        self.s_of_w = csc.indices.copy()
        self.gw = csc.data.copy()
        self.g = sp.csr_matrix(g_s)
        self.g_dense = np.asarray(self.g.todense())  # the certificate's
        self.g2 = sp.csr_matrix((self.gw ** 2, (self.s_of_w, np.arange(self.gw.size))), shape=g_s.shape)
        self.p_w = self.gw
        self.res_tol = RES_TOL
        self.groups = [np.flatnonzero(self.s_of_w == s) for s in range(g_s.shape[0])]

    def gradient(self, pt: Point) -> tuple[np.ndarray, Any]:
        slope, hess = self.hessian(np.asarray(self.g @ pt.c), self.p_s)
        return self.gw[:, None] * slope[self.s_of_w], hess

    def _proj(self, dinv: np.ndarray, d: np.ndarray, x: np.ndarray) -> np.ndarray:
        return dinv * x - dinv * ((dinv * x).sum(axis=1) / d)[:, None]

    def h_times(self, hess: Any, v: np.ndarray) -> np.ndarray:
        """H_y v for v of shape (n_s, n_z)."""
        return np.einsum("zst,tz->sz", hess, v)

    def factor(self, pt: Point, hess: Any) -> _Step | None:
        dinv = pt.c / pt.lam
        d = dinv.sum(axis=1)
        n_s, n_z = self.p_s.size, pt.c.shape[1]
        p = np.zeros((n_s, n_z, n_z))
        scaled = dinv * np.sqrt(self.gw ** 2 / d)[:, None]
        for s, rows in enumerate(self.groups):
            p[s] = -scaled[rows].T @ scaled[rows]
        diag = np.asarray(self.g2 @ dinv)  # (n_s, n_z)
        p[:, np.arange(n_z), np.arange(n_z)] += diag
        solve = self.y_solver(p, hess)
        if solve is None:
            return None
        pc = self._proj(dinv, d, self.cost)
        b = np.asarray(self.g @ pc)
        u_b = solve(b)
        h_ub = self.h_times(hess, u_b)
        denom = float((b * h_ub).sum()) - float((pc * self.cost).sum()) - pt.s / pt.beta
        return _Step(dinv, d, hess, solve, pc, b, u_b, h_ub, denom)

    def y_solver(self, p: np.ndarray, hess: Any) -> Callable[[np.ndarray], np.ndarray] | None:
        """v -> (I + P H_y)^-1 v for v of shape (n_s, n_z), P's blocks ``p`` (n_s, n_z, n_z): one dense
        LU of the N x N system; None where it is singular or not finite."""
        n_s, n_z = p.shape[0], p.shape[1]
        big = p[:, :, None, :] * hess.transpose(1, 2, 0)[:, None, :, :]  # (s, z, t, y)
        n = n_s * n_z
        m = big.reshape(n, n)
        m[np.arange(n), np.arange(n)] += 1.0
        if not np.all(np.isfinite(m)):
            return None
        try:
            with warnings.catch_warnings():  # an exactly singular system: no step (the caller falls back)
                warnings.simplefilter("error", LinAlgWarning)
                lu = lu_factor(m, check_finite=False)
        except (np.linalg.LinAlgError, LinAlgWarning, ValueError):
            return None
        return lambda v: lu_solve(lu, v.ravel(), check_finite=False).reshape(n_s, n_z)

    def direction(self, nt: _Step, pt: Point, r_dual: np.ndarray, r_rows: np.ndarray, r_budget: float,
                  target: float, corr: np.ndarray | float, corr_b: float) -> tuple:
        r1 = -r_dual + (target - corr) / pt.c - pt.lam
        r3 = r_budget - (target - pt.s * pt.beta - corr_b) / pt.beta
        base = nt.dinv * (r_rows / nt.d)[:, None]
        a = np.asarray(self.g @ (self._proj(nt.dinv, nt.d, r1) + base))
        u_a = nt.solve(a)
        h_ua = self.h_times(nt.hess, u_a)
        dbeta = (r3 - float((nt.pc * r1).sum()) + float((nt.b * h_ua).sum())
                 - float((self.cost * base).sum())) / nt.denom
        xi = h_ua - dbeta * nt.h_ub
        x = r1 - self.gw[:, None] * xi[self.s_of_w] - self.cost * dbeta
        dc = self._proj(nt.dinv, nt.d, x) + base
        dnu = (r_rows - (nt.dinv * x).sum(axis=1)) / nt.d
        dlam = (target - corr - pt.c * pt.lam - pt.lam * dc) / pt.c
        ds = (target - pt.s * pt.beta - corr_b - pt.s * dbeta) / pt.beta
        return dc, dlam, dnu, ds, dbeta
