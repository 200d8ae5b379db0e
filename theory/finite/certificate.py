"""Lower bounds on finite privacy-utility programs: the certificates of the fast solvers.

Every program here minimises a convex f(C) over row-stochastic channels C
(n_w x n_z, entries allowed only on a support mask) subject to <A, C> <= D.
Given a linear minorant f(C') >= offset + <S, C'> valid for every C' (the
tangent at any channel C, with S = grad f(C) and offset = f(C) - <S, C>, or
the minorants of ``leakage.py``) and any lambda >= 0, weak duality gives

    optimum >= LB(lambda) = offset + sum_w min_z (S + lambda A)[w, z] - lambda D,

(the minimum of a linear function over the product of simplices is attained
row by row).  LB is concave and piecewise linear in lambda;
:func:`linearised_bound` maximises it by a cutting-plane search on the lines
through its values with the supergradients sum_w A[w, argmin_z] - D.  The MAP linear program's own dual
gives a bound of the same form (:func:`map_dual_bound`).
"""

from __future__ import annotations

import numpy as np

__all__ = ["linearised_bound", "map_dual_bound"]

_EPS = 4.0 * np.finfo(float).eps

def _row_min_terms(scores: np.ndarray, cost: np.ndarray, lam: float, support: np.ndarray | None
                   ) -> tuple[float, float]:
    """sum_w min_z (scores + lam cost)[w, z] and sum_w cost[w, argmin]; shapes (n_w, n_z).

    The sum is lowered by a bound on its rounding error (each entry and the summation), so that
    it stays below the exact one even where lam is huge and the terms cancel against lam D.
    """
    total = scores + lam * cost
    if support is not None:
        total = np.where(support, total, np.inf)
    arg = total.argmin(axis=1)
    rows = np.arange(total.shape[0])
    picked = total[rows, arg]
    scale = float(np.abs(scores[rows, arg]).sum() + lam * np.abs(cost[rows, arg]).sum())
    guard = _EPS * (4.0 + np.log2(max(2, picked.size))) * scale
    return float(picked.sum()) - guard, float(cost[rows, arg].sum())


def linearised_bound(offset: float, scores: np.ndarray, cost: np.ndarray, budget: float,
                     support: np.ndarray | None = None, lam0: float = 0.0, steps: int = 40) -> tuple[float, float]:
    """max over lambda >= 0 of LB(lambda) (module docstring); returns (bound, lambda).

    Parameters
    ----------
    offset : float
        The minorant's constant.
    scores, cost : ndarray, shape (n_w, n_z)
        The minorant's slope S in channel coordinates, and A.
    budget : float
        D.
    support : ndarray of bool, shape (n_w, n_z), optional
        Entries a feasible channel may use (all by default).
    lam0 : float
        A guess of the multiplier (the solver's): the bisection starts around it.
    """
    base = float(offset)
    grad = scores

    def bound(lam: float) -> tuple[float, float]:
        mins, dist = _row_min_terms(grad, cost, lam, support)
        return base + mins - lam * budget * (1.0 + _EPS), dist - budget

    best, slope = bound(0.0)
    best_lam = 0.0
    if slope <= 0:
        return best, 0.0
    lo, f_lo, g_lo = 0.0, best, slope
    hi = max(lam0, 1e-12)
    while True:  # bracket the maximiser: the supergradient turns <= 0
        val, slope = bound(hi)
        if val > best:
            best, best_lam = val, hi
        if slope <= 0 or hi > 1e300:
            break
        lo, f_lo, g_lo, hi = hi, val, slope, 2.0 * hi
    f_hi, g_hi = val, slope
    for _ in range(steps):  # the two sides' supporting lines meet above the maximum: evaluate there (LB is
        # piecewise linear, so this ends once the lines are the pieces at the maximum), bisect if rounding
        # puts the meeting point outside the bracket
        mid = (f_hi - f_lo + g_lo * lo - g_hi * hi) / (g_lo - g_hi) if g_lo > g_hi else 0.5 * (lo + hi)
        if not lo < mid < hi:
            mid = 0.5 * (lo + hi)
            if not lo < mid < hi:
                break
        top = min(f_lo + g_lo * (mid - lo), f_hi + g_hi * (mid - hi))
        val, slope = bound(mid)
        if val > best:
            best, best_lam = val, mid
        if top - val <= _EPS * max(1.0, abs(top)):
            break
        if slope > 0:
            lo, f_lo, g_lo = mid, val, slope
        else:
            hi, f_hi, g_hi = mid, val, slope
    return best, best_lam


def map_dual_bound(weights: np.ndarray, g_s: np.ndarray, cost: np.ndarray, budget: float, lam: float
                   ) -> float:
    """Lower bound on min sum_z max_s P(s,z) from dual weights of the MAP linear program.

    For mu >= 0 with columns summing to one (mu[s, z]) and lambda >= 0,
    sum_z max_s P(s,z) >= sum_{s,z} mu P(s,z), hence the optimum is at least
    sum_w min_z (G_s^T mu + lambda A)[w, z] - lambda D.  ``weights`` are any
    non-negative numbers of shape (n_s, n_z) (normalised here; a column of
    zeros becomes uniform).
    """
    mu = np.clip(np.asarray(weights, dtype=float), 0.0, None)
    col = mu.sum(axis=0)
    mu = np.where(col > 0, mu / np.where(col > 0, col, 1.0), 1.0 / mu.shape[0])
    scores = np.asarray(g_s.T @ mu)
    mins, _ = _row_min_terms(scores, cost, max(lam, 0.0), None)
    return mins - max(lam, 0.0) * budget
