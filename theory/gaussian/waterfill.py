"""Piecewise-linear allocations (water-filling), vectorised over budgets.

:func:`waterfill_allocation` is PPAN Prop 2's modified water-filling;
:func:`reverse_waterfill` and :func:`source_mi` the rate-distortion function of
a Gaussian source.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..base import check_budgets

__all__ = ["RHO_ZERO", "reverse_waterfill", "source_mi", "waterfill_allocation"]

RHO_ZERO = 1e-12  # canonical correlations below this are treated as exactly 0


def _interp_allocation(budgets: np.ndarray, total: np.ndarray, table: np.ndarray) -> np.ndarray:
    """Invert a piecewise-linear allocation known at its breakpoints.

    ``table[j]`` is the allocation (shape (k,)) at breakpoint j and ``total[j]``
    its sum, non-decreasing in j. Between breakpoints the allocation is linear in
    its total, so allocation(budget) is np.interp per component, shape (n, k).
    Repeated totals (flat stretches, where the allocation does not change) are
    dropped first; budgets beyond the last breakpoint get the last row.
    """
    total, first = np.unique(total, return_index=True)
    table = table[first]
    if total.size == 1:
        return np.broadcast_to(table[0], (budgets.size, table.shape[1])).copy()
    return np.column_stack([np.interp(budgets, total, table[:, i]) for i in range(table.shape[1])])


def waterfill_allocation(budgets: Any, rho: Any) -> np.ndarray:
    """PPAN Prop 2 allocation delta'_i(B) = max{0, min{1, t - (rho_i^-2 - 1)}}, sum = B.

    Parameters
    ----------
    budgets : array_like, shape (n,)
        Total normalised budgets B = D / c (B >= number of nonzero rho: all 1).
    rho : array_like, shape (k,)
        Canonical correlations in [0, 1]; entries <= 1e-12 get delta' = 0.

    Returns
    -------
    ndarray, shape (n, k)
        The allocation. Each breakpoint (t = a_p or a_p + 1, a = rho^-2 - 1)
        is evaluated as (a_p - a_i) + offset so that tiny correlations (huge a)
        lose no precision.
    """
    b = check_budgets(budgets)
    r = np.abs(np.asarray(rho, dtype=float)).ravel()
    out = np.zeros((b.size, r.size))
    live = r > RHO_ZERO
    if not np.any(live):
        return out
    inv2 = 1.0 / r[live] ** 2
    p = np.repeat(np.arange(inv2.size), 2)
    off = np.tile([0.0, 1.0], inv2.size)
    order = np.argsort(inv2[p] + off, kind="stable")
    p, off = p[order], off[order]
    table = np.clip(inv2[p][:, None] - inv2[None, :] + off[:, None], 0.0, 1.0)
    out[:, live] = _interp_allocation(b, table.sum(axis=1), table)
    return out


def reverse_waterfill(budgets: Any, variances: Any) -> np.ndarray:
    """Per-component distortions D_i = min(theta, sigma_i^2) with sum D_i = min(D, sum sigma^2).

    Parameters
    ----------
    budgets : array_like, shape (n,)
    variances : array_like, shape (k,)

    Returns
    -------
    ndarray, shape (n, k)
    """
    b = check_budgets(budgets)
    var = np.asarray(variances, dtype=float).ravel()
    theta = np.concatenate([[0.0], np.unique(var)])
    table = np.minimum(theta[:, None], var[None, :])
    return _interp_allocation(b, table.sum(axis=1), table)


def source_mi(budgets: Any, variances: Any) -> np.ndarray:
    """R(D) = sum_i 1/2 log(sigma_i^2 / D_i) (reverse water-filling), shape (n,); inf at D = 0."""
    var = np.asarray(variances, dtype=float).ravel()
    dist = reverse_waterfill(budgets, var)
    with np.errstate(divide="ignore"):
        return np.maximum(-0.5 * np.log(dist / var).sum(axis=1), 0.0)
