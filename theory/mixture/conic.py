"""Solve a cvxpy problem with Clarabel and keep its primal and dual objective values.

The dual objective of a minimisation is a lower bound on its optimum (weak
duality), which is what the relaxation's lower end uses.

Clarabel's equilibration (diagonal rescaling of the constraint matrix) makes it
stall within a few iterations on some of the relaxation's larger programs (the
mixture with sigma0 = 2, full, mi, bins 0.1: InsufficientProgress at iteration 4);
a solve that ends in InsufficientProgress or NumericalError is therefore tried once
more without it (``RETRY``), which then solves to the tolerances below.

``live=True`` (a point the committed table does not hold, solved while a user waits) stops
after ``LIVE["max_iter"]`` iterations: on the exponential-cone relaxations Clarabel's primal
residual crawls (MI, useful, binary-gmm prior 0.5, mu 1, sd 1, D = 1, cells 0.4, bins 0.2: the
dual objective is 0.040758 at iteration 50 and 0.040759 at 60 (dual residual 4e-9), and the
strict solve spends 110 more iterations to end AlmostSolved at 0.0407596: 14 s instead of
about 5).  The lower end uses only the dual objective, which bounds the optimum from below
for a dual-feasible point whatever the primal residual, so a live solve's last iterate is
kept only where Clarabel's dual residual is at most ``LIVE_DUAL_RESIDUAL``; otherwise it is
solved again with ``OPTIONS``.  The achievable end recomputes its mechanism's leakage and
distortion exactly either way.
"""

from __future__ import annotations

import warnings
from typing import Any

from ..lazy import cvxpy as cp

__all__ = ["LIVE", "LIVE_DUAL_RESIDUAL", "RETRY", "TOL", "solve_conic"]

TOL = 1e-9
OPTIONS = dict(tol_gap_abs=TOL, tol_gap_rel=TOL, tol_feas=TOL, max_iter=400)
#: Options changed for the second try after a stall.
RETRY = dict(equilibrate_enable=False)
STALLED = ("InsufficientProgress", "NumericalError")
#: Options of a live solve: the same tolerances, fewer iterations (see the module notes).
LIVE = dict(OPTIONS, max_iter=60)
#: A live solve whose dual residual is larger than this is solved again with ``OPTIONS``.
LIVE_DUAL_RESIDUAL = 1e-7
#: A live solve whose dual residual is still above this fails at once (it is not converging: the useful MI
#: relaxation at mu 3 was at 2e7 after 60 iterations and ended in NumericalError while it kept ratio bounds
#: of 1e21, see relaxation.py).
LIVE_DIVERGED = 1.0
#: Clarabel statuses whose last iterate a live solve may keep (cvxpy unpacks all three).
LIVE_KEPT = ("Solved", "AlmostSolved", "MaxIterations")


def solve_conic(problem: cp.Problem, live: bool = False, dual_bound: bool = False) -> dict[str, Any]:
    """Solve ``problem`` with Clarabel; return status, primal, dual, iterations and the dual residual.

    ``live``: first try ``LIVE`` (at most 60 iterations), kept where its dual residual is small;
    with ``dual_bound`` (the caller uses the dual objective only: the relaxation) a live solve whose
    dual residual is above ``LIVE_DIVERGED`` raises at once.

    Raises
    ------
    RuntimeError
        If Clarabel does not report a (possibly inaccurate) optimum.
    """
    from cvxpy.reductions.solvers.conic_solvers.clarabel_conif import CLARABEL as Interface

    data, chain, inverse = problem.get_problem_data(cp.CLARABEL, solver_opts={})
    raw = None
    if live:
        raw = Interface().solve_via_data(data, False, False, dict(LIVE))
        if dual_bound and float(raw.r_dual) > LIVE_DIVERGED:  # not converging: the strict solve would stall too, later
            raise RuntimeError(f"Clarabel: dual residual {float(raw.r_dual):.1e} after {raw.iterations} iterations")
        if str(raw.status) not in LIVE_KEPT or not float(raw.r_dual) <= LIVE_DUAL_RESIDUAL:
            raw = None
    if raw is None:
        raw = Interface().solve_via_data(data, False, False, dict(OPTIONS))
    if str(raw.status) in STALLED:
        raw = Interface().solve_via_data(data, False, False, {**OPTIONS, **RETRY})
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            problem.unpack_results(raw, chain, inverse)
    except cp.error.SolverError:
        raise RuntimeError(f"Clarabel: {raw.status}") from None
    kept = (cp.OPTIMAL, cp.OPTIMAL_INACCURATE) + ((cp.USER_LIMIT,) if str(raw.status) == "MaxIterations"
                                                   and live and float(raw.r_dual) <= LIVE_DUAL_RESIDUAL else ())
    if problem.status not in kept:
        raise RuntimeError(f"Clarabel: {raw.status}")
    offset = float(data.get("offset", 0.0)) if isinstance(data, dict) else 0.0
    primal, dual = float(raw.obj_val) + offset, float(raw.obj_val_dual) + offset
    return {"status": str(raw.status), "primal": primal, "dual": dual, "iterations": int(raw.iterations),
            "value": float(problem.value), "dual_residual": float(raw.r_dual)}
