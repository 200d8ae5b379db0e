"""The MAP linear program of a finite model: which HiGHS program answers it (``solve.py``'s map branch)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .highs_cg import MAX_ROUNDS
from .highs_lp import MapLP

__all__ = ["solve_map"]


def solve_map(model: Any, budget: float, tol: float) -> tuple[np.ndarray, dict[str, Any]]:
    """The MAP LP: where the full observation has Hamming distortion, the column generation's first round
    where it finishes (the symmetric pair's does), else the LP on P(S, Z) of ``hamming_map.py``; then
    (or else) the column generation to the end; the whole LP where HiGHS fails.  ``model`` is ``solve.py``'s
    (``data``, ``map_lp()``, ``hamming_lp()``); ``tol`` the relative gap the reduced LP's channel must certify to.
    Returns (channel on the live rows, certificate)."""
    reduced = model.hamming_lp()
    r = None
    if reduced is None or not reduced.preferred:  # (a curve's later budgets skip a first round that failed)
        try:
            r = model.map_lp().solve(budget, max_rounds=1 if reduced is not None else MAX_ROUNDS)
        except RuntimeError:
            r = None
    if r is None and reduced is not None:
        reduced.preferred = True
        s = reduced.certified(budget, tol)
        if s is not None:
            return s.channel, {"solver": "HiGHS on P(S, Z) (full observation, Hamming)",
                               "highs_objective": s.solver_primal, "multiplier": s.multiplier, "dual": s.bound}
        try:
            r = model.map_lp().solve(budget)
        except RuntimeError:
            r = None
    if r is None:  # HiGHS did not finish: the full LP, once
        r = MapLP(model.data).solve(budget)
    return r.channel, {"solver": "HiGHS", "highs_objective": r.solver_primal, "rounds": r.iterations,
                       "multiplier": r.multiplier, "dual": r.bound}
