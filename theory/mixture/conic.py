"""Solve a cvxpy problem with Clarabel and keep its primal and dual objective values.

The dual objective of a minimisation is a lower bound on its optimum (weak
duality), which is what the relaxation's lower end uses.

Clarabel's equilibration (diagonal rescaling of the constraint matrix) makes it
stall within a few iterations on some of the relaxation's larger programs (the
mixture with sigma0 = 2, full, mi, bins 0.1: InsufficientProgress at iteration 4);
a solve that ends in InsufficientProgress or NumericalError is therefore tried once
more without it (``RETRY``), which then solves to the tolerances below.
"""

from __future__ import annotations

import warnings
from typing import Any

from ..lazy import cvxpy as cp

__all__ = ["RETRY", "TOL", "solve_conic"]

TOL = 1e-9
OPTIONS = dict(tol_gap_abs=TOL, tol_gap_rel=TOL, tol_feas=TOL, max_iter=400)
#: Options changed for the second try after a stall.
RETRY = dict(equilibrate_enable=False)
STALLED = ("InsufficientProgress", "NumericalError")


def solve_conic(problem: cp.Problem) -> dict[str, Any]:
    """Solve ``problem`` with Clarabel; return status, primal, dual and iterations.

    Raises
    ------
    RuntimeError
        If Clarabel does not report a (possibly inaccurate) optimum.
    """
    from cvxpy.reductions.solvers.conic_solvers.clarabel_conif import CLARABEL as Interface

    data, chain, inverse = problem.get_problem_data(cp.CLARABEL, solver_opts={})
    raw = Interface().solve_via_data(data, False, False, dict(OPTIONS))
    if str(raw.status) in STALLED:
        raw = Interface().solve_via_data(data, False, False, {**OPTIONS, **RETRY})
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            problem.unpack_results(raw, chain, inverse)
    except cp.error.SolverError:
        raise RuntimeError(f"Clarabel: {raw.status}") from None
    if problem.status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE):
        raise RuntimeError(f"Clarabel: {raw.status}")
    offset = float(data.get("offset", 0.0)) if isinstance(data, dict) else 0.0
    primal, dual = float(raw.obj_val) + offset, float(raw.obj_val_dual) + offset
    return {"status": str(raw.status), "primal": primal, "dual": dual, "iterations": int(raw.iterations),
            "value": float(problem.value)}
