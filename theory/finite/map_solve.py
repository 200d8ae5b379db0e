"""The MAP linear program of a finite model: which HiGHS program answers it (``solve.py``'s map branch)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .highs_cg import MAX_ROUNDS, whole_lp
from .highs_lp import MapLP

__all__ = ["solve_map"]


def solve_map(model: Any, budget: float, tol: float) -> tuple[np.ndarray, dict[str, Any]]:
    """The MAP LP: where the full observation has Hamming distortion or one on a line, the LP on P(S, Z) of
    ``hamming_map.py`` / ``line_map.py``
    (for a program past the whole LP's size only where the column generation's first round does not finish:
    the symmetric pair's does, at m = 100 in 0.1 s against 0.2-0.9 s); then
    (or else) the column generation to the end; the whole LP where HiGHS fails.  ``model`` is ``solve.py``'s
    (``data``, ``map_lp()``, ``reduced_lp()``); ``tol`` the relative gap the reduced LP's channel must certify to.
    Returns (channel on the live rows, certificate)."""
    reduced = model.reduced_lp()
    if reduced is not None and whole_lp(model.data):  # small: the reduced LP first (whole LPs of m = 10 and 20,
        reduced.preferred = True  # random joint, budgets 0.1-0.6: 2.4-3.7 -> 2.3-2.5 ms and 13-43 -> 9-12 ms)
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
            return s.channel, {"solver": reduced.label,
                               "highs_objective": s.solver_primal, "multiplier": s.multiplier, "dual": s.bound}
        try:
            r = model.map_lp().solve(budget)
        except RuntimeError:
            r = None
    if r is None:  # HiGHS did not finish: the full LP, once
        r = MapLP(model.data).solve(budget)
    return r.channel, {"solver": "HiGHS", "highs_objective": r.solver_primal, "rounds": r.iterations,
                       "multiplier": r.multiplier, "dual": r.bound}
