"""The achievable (upper) end of the certified sandwich: the best piecewise-constant mechanism.

The mechanism sees the cell of U (observation ``useful``) or (S, cell of U)
(``full``) and releases Z on the atoms of the bins (bin midpoints; the finite end
for the two unbounded bins), with a channel x(k | cell) (resp. x_s(k | cell)).
For such a mechanism everything is linear in the channel and exact:

    P(S=s, Z=z_k) = sum_j P(S=s, U in C_j) x(k | j)
    E(Z - U)^2    = sum_{s,j,k} x(k | j) E[(z_k - U)^2; S=s, U in C_j]

with the truncated-normal moments of :func:`~.cells.cell_moments` (tails
included).  The best such mechanism with E(Z-U)^2 <= D is a linear program (MAP
accuracy) or an exponential-cone program (I(S;Z)); the channel it returns is
projected onto the simplex and its leakage and distortion recomputed exactly,
so the value is achieved by a concrete mechanism, not only a solver's estimate.
Only (cell, bin) pairs within the discretisation's radius are used: a
restriction, which keeps the point achievable.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.special import rel_entr

from privbench.datasets.errors import InputError

from ..lazy import cvxpy as cp
from .conic import solve_conic
from .discretize import Discretized

__all__ = ["achievable", "leakage_of"]

#: Solved at budget D (1 - MARGIN) so that solver tolerance never pushes the exact distortion over D.
MARGIN = 1e-7


def leakage_of(p_sz: np.ndarray, privacy: str) -> float:
    """MAP accuracy or I(S;Z) in nats of a joint P(S, Z), shape (2, K)."""
    if privacy == "map":
        return float(p_sz.max(axis=0).sum())
    p_s = p_sz.sum(axis=1, keepdims=True)
    p_z = p_sz.sum(axis=0, keepdims=True)
    return float(rel_entr(p_sz, p_s * p_z).sum())


def _objective(q: list[Any], weights: np.ndarray, privacy: str) -> tuple[Any, list[Any]]:
    if privacy == "map":
        t = cp.Variable(q[0].shape[0])
        return cp.sum(t), [t >= q[0], t >= q[1]]
    pz = q[0] + q[1]
    return sum(cp.sum(cp.rel_entr(q[s], weights[s] * pz)) for s in (0, 1)), []


def achievable(disc: Discretized, budget: float, privacy: str, observation: str,
               live: bool = False) -> dict[str, Any]:
    """The best piecewise-constant mechanism on ``disc`` with distortion <= ``budget``.

    ``live``: the solver stops at a loose primal residual (:func:`~.conic.solve_conic`); the
    value and distortion returned are recomputed exactly from the projected channel either way.

    Returns
    -------
    dict
        ``value`` (exact leakage of the projected channel), ``distortion`` (its exact
        E(Z-U)^2), ``channel`` (shape (P,) for useful, (2, P) for full: x(k | j) on
        the kept pairs ``disc.pj``, ``disc.pk``) and the solver's statistics.

    Raises
    ------
    InputError
        If no mechanism of this class meets the budget (it is below the
        smallest distortion of a piecewise-constant release on this grid).
    """
    cost = disc.exact_pair_distortion()  # (2, P)
    shared = observation == "useful"
    floor = _min_distortion(disc, cost, shared)
    if budget < floor:
        raise InputError(f"budget={budget!r} is below {floor:.6g}, the smallest distortion of a "
                         "piecewise-constant mechanism on this grid")
    x = [cp.Variable(disc.n_pairs, nonneg=True)] * 2 if shared else [cp.Variable(disc.n_pairs, nonneg=True)
                                                                     for _ in (0, 1)]
    cons = [disc.by_cell @ x[0] == 1] + ([] if shared else [disc.by_cell @ x[1] == 1])
    q = [disc.by_bin @ cp.multiply(disc.mass[s, disc.pj], x[s]) for s in (0, 1)]
    target = cp.Parameter(nonneg=True)
    cons.append(sum(cost[s] @ x[s] for s in (0, 1)) <= target)
    objective, extra = _objective(q, disc.weights, privacy)
    problem = cp.Problem(cp.Minimize(objective), cons + extra)
    target.value = max(floor, budget * (1 - MARGIN))
    for _ in range(4):  # the solver's tolerance may leave the exact distortion a hair over the budget
        stats = solve_conic(problem, live=live)
        chan = np.stack([_project(disc, np.asarray(x[s].value, dtype=float)) for s in (0, 1)])
        distortion = float((cost * chan).sum())
        if distortion <= budget:
            break
        target.value = max(floor, float(target.value) - 2 * (distortion - budget))
    p_sz = np.stack([np.bincount(disc.pk, disc.mass[s, disc.pj] * chan[s], minlength=len(disc.bins))
                     for s in (0, 1)])
    return {"value": leakage_of(p_sz, privacy), "distortion": distortion,
            "channel": chan[0] if shared else chan, "solver": stats}


def _project(disc: Discretized, x: np.ndarray) -> np.ndarray:
    x = np.clip(x, 0.0, None)
    rows = np.bincount(disc.pj, x, minlength=len(disc.cells))
    return x / rows[disc.pj]


def _min_distortion(disc: Discretized, cost: np.ndarray, shared: bool) -> float:
    n = len(disc.cells)
    parts = [cost.sum(axis=0)] if shared else [cost[0], cost[1]]
    total = 0.0
    for c in parts:
        best = np.full(n, np.inf)
        np.minimum.at(best, disc.pj, c)
        total += float(best.sum())
    return total
