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

``dual_bound=True`` (the caller uses only the dual objective: the relaxation's lower end) also
stops a strict solve once the dual side is settled (:data:`DUAL_SETTLED`: dual residual at most
``TOL`` and relative gap at most 1e-8, checked by Clarabel's termination callback at every
iteration), where Clarabel would go on until the *primal* residual meets ``TOL`` too.  On the
useful MI relaxations the primal residual crawls: prior 0.5, mu 3, sigma0 2, sigma1 1, D = 1,
cells 0.4, bins 0.2 (ratio window 1e3) had its dual objective at 0.3664727 with dual residual
6e-9 by iteration 50, then took 164 more iterations for the primal residual to stall at 2.6e-8
(AlmostSolved, 57 s).  The bound's validity rests on the dual residual alone (weak duality for a
dual point feasible to within it), so the settled iterate's dual objective is as good a lower end
as the strict solve's, up to the relative gap.
"""

from __future__ import annotations

import warnings
from typing import Any

from ..lazy import cvxpy as cp

__all__ = ["DUAL_SETTLED", "LIVE", "LIVE_DUAL_RESIDUAL", "RETRY", "SETTLED", "TOL", "solve_conic"]

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
#: A ``dual_bound`` solve stops at the first iterate with a dual residual and a relative gap at most these.
DUAL_SETTLED = {"res_dual": TOL, "gap_rel": 1e-8}
SETTLED = "DualSettled"  # the status reported for such a stop (Clarabel's own: CallbackTerminated)


class _Settled:
    """A Clarabel solution stopped by :data:`DUAL_SETTLED`, shown to cvxpy as AlmostSolved (an inexact
    optimum: cvxpy then unpacks the primal point, which the relaxation uses only to place thresholds)."""

    def __init__(self, raw: Any) -> None:
        for name in ("x", "z", "s", "obj_val", "obj_val_dual", "solve_time", "iterations", "r_prim", "r_dual"):
            setattr(self, name, getattr(raw, name))
        self.status = "AlmostSolved"


def _dual_settled(info: Any) -> bool:
    return bool(info.res_dual <= DUAL_SETTLED["res_dual"] and info.gap_rel <= DUAL_SETTLED["gap_rel"])


def _clarabel(data: dict[str, Any], opts: dict[str, Any], settle: bool) -> tuple[Any, str]:
    """Clarabel on cvxpy's problem data (as cvxpy's interface builds it), stopped by :func:`_dual_settled`
    where ``settle``: (the solution cvxpy can unpack, Clarabel's status or :data:`SETTLED`)."""
    from cvxpy.reductions.solvers.conic_solvers.clarabel_conif import CLARABEL as Interface
    from cvxpy.reductions.solvers.conic_solvers.clarabel_conif import dims_to_solver_cones

    if not settle:
        raw = Interface().solve_via_data(data, False, False, opts)
        return raw, str(raw.status)
    import clarabel
    import scipy.sparse as sp

    q = data["c"]
    p = sp.triu(data["P"]).tocsc() if "P" in data else sp.csc_array((q.size, q.size))
    solver = clarabel.DefaultSolver(p, q, data["A"], data["b"], dims_to_solver_cones(data["dims"]),
                                    Interface.parse_solver_opts(False, opts))
    solver.set_termination_callback(_dual_settled)
    raw = solver.solve()
    if str(raw.status) == "CallbackTerminated":
        return _Settled(raw), SETTLED
    return raw, str(raw.status)


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
        status = str(raw.status)
        if status not in LIVE_KEPT or not float(raw.r_dual) <= LIVE_DUAL_RESIDUAL:
            raw = None
    if raw is None:
        raw, status = _clarabel(data, dict(OPTIONS), dual_bound)
    if status in STALLED:
        raw, status = _clarabel(data, {**OPTIONS, **RETRY}, dual_bound)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            problem.unpack_results(raw, chain, inverse)
    except cp.error.SolverError:
        raise RuntimeError(f"Clarabel: {status}") from None
    kept = (cp.OPTIMAL, cp.OPTIMAL_INACCURATE) + ((cp.USER_LIMIT,) if str(raw.status) == "MaxIterations"
                                                   and live and float(raw.r_dual) <= LIVE_DUAL_RESIDUAL else ())
    if problem.status not in kept:
        raise RuntimeError(f"Clarabel: {status}")
    offset = float(data.get("offset", 0.0)) if isinstance(data, dict) else 0.0
    primal, dual = float(raw.obj_val) + offset, float(raw.obj_val_dual) + offset
    return {"status": status, "primal": primal, "dual": dual, "iterations": int(raw.iterations),
            "value": float(problem.value), "dual_residual": float(raw.r_dual)}
