"""Optimal tradeoffs for any finite model: convex programs.

The general problem, for a known joint P(S, U), an observation kernel
P(W | S, U) and a distortion matrix d(u, z), is

    minimise_{P(Z|W)}  L(P_SZ)   subject to   E d(U, Z) <= budget,

with the channel C = P(Z|W) (n_w x n_z, row-stochastic) as the variable.
P_SZ = G_s C, P_UZ = G_u C and P_Z = g C are linear in C (G_s[s, w] =
P(S=s, W=w), G_u[u, w] = P(U=u, W=w), g[w] = P(W=w)), so every leakage below
is convex in C:

* ``mi``   I(S;Z) = sum rel_entr(P_SZ, P_S P_Z^T): exponential cone.
* ``chi2`` chi-square information sum_z sum_s P(s,z)^2 / (P(s) P(z)) - 1,
  a sum of quadratic-over-linear terms (a perspective): second-order cone.
  No source paper gives this program; it is the chi-square analogue of the
  MI program (the chi-square paper's metric, eq (16) with f(x) = x^2 - 1).
* ``map``  MAP accuracy sum_z max_s P(s,z), made linear with an epigraph
  variable t_z >= P(s,z): a linear program (GAP eq (21) for the binary PDD
  case; the same LP for any finite alphabet).

Programs are built once per (model, observation, privacy) with the budget as a
cvxpy Parameter and solved with Clarabel (SCS as fallback). Every solution
carries a certificate: the solver's primal and dual objective values, their
gap, and the exact leakage and distortion of the returned (projected) channel.

These programs are the reference: :mod:`.solve` (the provider of kind
``finite``) tries the faster certified solvers first (``mirror.py`` for mi and
chi2, ``highs_lp.py`` for map) and falls back to these.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from privbench.datasets.errors import InputError

from ..base import PRIVACIES, Optimum, check_budget
from ..lazy import cvxpy as cp
from ..measures import PRIVACY_MEASURES, expected_distortion, observation_kernel, release_joint

__all__ = ["SOLVER_TOL", "finite_min_distortion", "solve_conic"]

SOLVER_TOL = 1e-9
_CLARABEL_OPTS = dict(tol_gap_abs=SOLVER_TOL, tol_gap_rel=SOLVER_TOL, tol_feas=SOLVER_TOL, max_iter=500)
_SCS_OPTS = dict(eps_abs=1e-9, eps_rel=1e-9, max_iters=200_000)


@dataclass
class _Program:
    problem: cp.Problem
    channel: cp.Variable
    budget: cp.Parameter
    joint: np.ndarray
    kernel: np.ndarray
    distortion: np.ndarray
    privacy: str


def _build(joint: np.ndarray, kernel: np.ndarray, distortion: np.ndarray, privacy: str) -> _Program:
    n_s, n_u = joint.shape
    n_w, n_z = kernel.shape[1], distortion.shape[1]
    p_suw = joint.reshape(-1, 1) * kernel  # (n_s*n_u, n_w)
    g_s = p_suw.reshape(n_s, n_u, n_w).sum(axis=1)  # P(S=s, W=w)
    g_u = p_suw.reshape(n_s, n_u, n_w).sum(axis=0)  # P(U=u, W=w)
    p_w = p_suw.sum(axis=0)
    p_s = joint.sum(axis=1)

    # Observations that never occur do not matter; keep them out of the program
    # (their rows are fixed to the uniform channel afterwards).
    live = p_w > 0
    c = cp.Variable((int(live.sum()), n_z), nonneg=True)
    budget = cp.Parameter(nonneg=True)
    rows = p_s > 0
    n_r = int(rows.sum())
    # Auxiliary variables for P(S,Z) and P(Z): each cone then touches a few
    # variables instead of a long affine sum, which makes Clarabel ~10x faster.
    p_sz = cp.Variable((n_r, n_z))
    p_z = cp.Variable(n_z)
    cons = [
        cp.sum(c, axis=1) == 1,
        p_sz == g_s[rows][:, live] @ c,
        p_z == p_w[live] @ c,
        cp.sum(cp.multiply(distortion, g_u[:, live] @ c)) <= budget,
    ]
    if privacy == "mi":
        ref = cp.reshape(p_s[rows], (n_r, 1), order="C") @ cp.reshape(p_z, (1, n_z), order="C")
        objective = cp.sum(cp.rel_entr(p_sz, ref))
    elif privacy == "chi2":
        scale = 1.0 / np.sqrt(p_s[rows])
        objective = sum(cp.quad_over_lin(cp.multiply(scale, p_sz[:, z]), p_z[z]) for z in range(n_z)) - 1.0
    elif privacy == "map":
        t = cp.Variable(n_z)
        cons.append(p_sz <= cp.reshape(t, (1, n_z), order="C"))
        objective = cp.sum(t)
    else:  # pragma: no cover - validated by callers
        raise InputError(f"privacy={privacy!r} is unknown (allowed: mi, map, chi2)")
    problem = cp.Problem(cp.Minimize(objective), cons)
    return _Program(problem, c, budget, joint, kernel, distortion, privacy)


@lru_cache(maxsize=64)
def _cached_program(key: bytes, shapes: tuple, privacy: str) -> _Program:
    (js, ks, ds) = shapes
    buf = np.frombuffer(key, dtype=float)
    a, b = int(np.prod(js)), int(np.prod(ks))
    joint = buf[:a].reshape(js)
    kernel = buf[a : a + b].reshape(ks)
    distortion = buf[a + b :].reshape(ds)
    return _build(joint, kernel, distortion, privacy)


def _program(joint: np.ndarray, kernel: np.ndarray, distortion: np.ndarray, privacy: str) -> _Program:
    key = np.concatenate([joint.ravel(), kernel.ravel(), distortion.ravel()]).astype(float).tobytes()
    return _cached_program(key, (joint.shape, kernel.shape, distortion.shape), privacy)


def _solve(prog: _Program) -> dict[str, Any]:
    """Solve with Clarabel (SCS as fallback); return solver statistics.

    Clarabel is called through cvxpy's get_problem_data / solve_via_data so
    that its primal and dual objective values are available as a certificate.
    """
    from cvxpy.reductions.solvers.conic_solvers.clarabel_conif import CLARABEL as ClarabelInterface

    problem = prog.problem
    try:
        data, chain, inverse = problem.get_problem_data(cp.CLARABEL, solver_opts={})
        raw = ClarabelInterface().solve_via_data(data, False, False, dict(_CLARABEL_OPTS))
        with warnings.catch_warnings():  # accuracy is reported in the certificate instead
            warnings.simplefilter("ignore", UserWarning)
            problem.unpack_results(raw, chain, inverse)
        if problem.status in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE) and prog.channel.value is not None:
            primal, dual = float(raw.obj_val), float(raw.obj_val_dual)
            return {"solver": "Clarabel", "status": str(raw.status), "iterations": int(raw.iterations),
                    "primal": primal, "dual": dual, "duality_gap": abs(primal - dual)}
        last = str(raw.status)
    except cp.error.SolverError as exc:  # pragma: no cover - depends on solver health
        last = str(exc)
    try:
        problem.solve(solver=cp.SCS, **_SCS_OPTS)
    except cp.error.SolverError as exc:  # pragma: no cover
        raise RuntimeError(f"finite {prog.privacy} program failed: Clarabel {last}; SCS {exc}") from None
    if problem.status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE) or prog.channel.value is None:
        raise RuntimeError(f"finite {prog.privacy} program failed: Clarabel {last}; SCS {problem.status}")
    stats: dict[str, Any] = {"solver": "SCS", "status": problem.status}
    info = (problem.solver_stats.extra_stats or {}).get("info", {}) if problem.solver_stats else {}
    if "pobj" in info and "dobj" in info:
        stats.update(primal=float(info["pobj"]), dual=float(info["dobj"]),
                     duality_gap=abs(float(info["pobj"]) - float(info["dobj"])))
    return stats


def solve_conic(
    joint: np.ndarray,
    distortion: np.ndarray,
    budget: float,
    privacy: str = "mi",
    observation: str | np.ndarray = "useful",
) -> Optimum:
    """Optimal leakage of a finite model at one distortion budget (cvxpy convex program).

    The reference path: :func:`~.solve.solve_finite` calls it where the fast
    solvers do not certify their answer, or when asked to (``solver="cvxpy"``).

    Parameters
    ----------
    joint : ndarray, shape (n_s, n_u)
        P(S=s, U=u).
    distortion : ndarray, shape (n_u, n_z)
        d(u, z) >= 0.
    budget : float
        Bound on E d(U, Z), >= 0.
    privacy : {"mi", "map", "chi2"}
    observation : {"useful", "full"} or ndarray, shape (n_s * n_u, n_w)

    Returns
    -------
    Optimum
        ``value`` is the exact leakage of the returned channel (its rows
        projected onto the simplex), ``mechanism["channel"]`` is P(Z|W) of
        shape (n_w, n_z), and ``certificate`` holds the solver's primal and
        dual objectives and duality gap plus the channel's exact distortion.
    """
    if privacy not in PRIVACY_MEASURES:
        raise InputError(f"privacy={privacy!r} is unknown (allowed: {', '.join(PRIVACY_MEASURES)})")
    budget = check_budget(budget)
    joint = np.asarray(joint, dtype=float)
    distortion = np.asarray(distortion, dtype=float)
    kernel = observation_kernel(*joint.shape, observation)
    if distortion.ndim != 2 or distortion.shape[0] != joint.shape[1]:
        raise InputError(f"distortion has shape {distortion.shape}, expected ({joint.shape[1]}, n_z)")
    min_dist = _min_distortion(joint, kernel, distortion)
    if budget < min_dist - 1e-12:
        raise InputError(
            f"budget={budget!r} is below the smallest achievable distortion {min_dist:.6g} "
            "(no mechanism meets it)"
        )
    prog = _program(joint, kernel, distortion, privacy)
    prog.budget.value = budget
    stats = _solve(prog)

    live = (joint.reshape(-1, 1) * kernel).sum(axis=0) > 0
    channel = np.full((kernel.shape[1], distortion.shape[1]), 1.0 / distortion.shape[1])
    c = np.clip(np.asarray(prog.channel.value, dtype=float), 0.0, None)
    channel[live] = c / c.sum(axis=1, keepdims=True)

    p_suz = release_joint(joint, channel, kernel)
    value = PRIVACY_MEASURES[privacy](p_suz.sum(axis=1))
    dist = expected_distortion(p_suz.sum(axis=0), distortion)
    stats.update(exact_value=value, distortion=dist, budget_violation=max(0.0, dist - budget))
    kind = {"mi": "exponential cone", "chi2": "second-order cone", "map": "linear program"}[privacy]
    method = f"convex program ({kind}, {stats['solver']})"
    obs_name = observation if isinstance(observation, str) else "kernel"
    mech = {"type": "finite-channel", "observation": obs_name, "channel": channel.tolist()}
    return Optimum(value=value, method=method, bound_kind="exact", mechanism=mech, certificate=stats)


def _min_distortion(joint: np.ndarray, kernel: np.ndarray, distortion: np.ndarray) -> float:
    """Smallest E d(U,Z) any channel achieves: each w picks its best z."""
    p_uw = (joint.reshape(-1, 1) * kernel).reshape(*joint.shape, -1).sum(axis=0)  # (n_u, n_w)
    return float((p_uw.T @ distortion).min(axis=1).sum())


def finite_min_distortion(scenario: Any, observation: str | np.ndarray) -> float:
    """Smallest achievable distortion of a finite scenario under an observation model."""
    joint = scenario.joint()
    return _min_distortion(joint, observation_kernel(*joint.shape, observation), scenario.distortion_matrix())
