"""Finite programs at scale (issue 12, part 2): the certified fast solvers beside a plain cvxpy formulation.

Symmetric pair and a seeded random joint (Dirichlet(1/2), Hamming distortion), both
observations (full: |W| = m^2, useful: |W| = m; |Z| = m), m = 10, 20, 30, 50, 100, for mi, map and chi2. Each case times the project's solver (``solve_finite``,
its caches cleared first, so the time includes building the program) and a
plain cvxpy formulation of the same program solved by Clarabel and by SCS with
their default settings, in the same run. The plain references run up to
|W| |Z| = REF_MAX_ENTRIES (the full observation at m = 100, 1e6 entries, takes
them many minutes) and stop at REF_TIME_LIMIT seconds. Timings are reported, never
asserted.

These cases take minutes: they run only with --benchmark-enable (see conftest.py):

    python -m pytest tests/benchmarks/test_bench_finite_scale.py --benchmark-enable

The table of the closing note (m | observation | privacy | new | Clarabel | SCS | ratios, wall
and CPU | gap):

    python tests/benchmarks/test_bench_finite_scale.py [--random] [--observation full|useful] [--repeat N]
        [--budget B] [--privacy mi|map|chi2] [m ...]

(``--random``: a seeded random joint of the same size instead of the symmetric
pair, whose symmetry the first-order solver's uniform start happens to respect;
``--observation``: only that one, both by default; ``--repeat N``: every time is
the least of N runs, for a shared machine; ``--budget B``: that budget instead of 0.3;
``--privacy P``: only that program.)
"""

from __future__ import annotations

import os
import sys
import time

import cvxpy as cp
import numpy as np
import pytest

from privbench.datasets import SymmetricPair
from privbench.theory.finite import finite_curve, solve_finite
from privbench.theory.finite import solve as solve_module

SIZES = (10, 20, 30, 50, 100)
PRIVACIES = ("mi", "map", "chi2")
BUDGET = 0.3
CURVE = (0.05, 0.15, 0.3, 0.45, 0.6)
REF_MAX_ENTRIES = 50 ** 3
OBSERVATIONS = ("full", "useful")
REF_TIME_LIMIT = 120.0
P = 0.4
KINDS = ("symmetric-pair", "random")


def _model(m: int, kind: str = "symmetric-pair") -> tuple[np.ndarray, np.ndarray]:
    """The symmetric pair, or (``random``) a seeded Dirichlet(1/2) joint of the same size, Hamming."""
    if kind == "random":
        joint = np.random.default_rng(m).dirichlet(np.full(m * m, 0.5)).reshape(m, m)
        return joint, 1.0 - np.eye(m)
    sc = SymmetricPair(m, P)
    return sc.joint(), sc.distortion_matrix()


def _entries(m: int, observation: str) -> int:
    return (m * m if observation == "full" else m) * m


def plain_cvxpy(joint: np.ndarray, dist: np.ndarray, budget: float, privacy: str, solver: str,
                observation: str = "full") -> float:
    """The program as a user would write it in cvxpy (W = (S, U) or W = U, dense matrices)."""
    n_s, n_u = joint.shape
    if observation == "full":
        n_w = n_s * n_u
        g_s = np.zeros((n_s, n_w))  # P(S = s, W = w)
        g_u = np.zeros((n_u, n_w))  # P(U = u, W = w)
        for s in range(n_s):
            g_s[s, s * n_u:(s + 1) * n_u] = joint[s]
            g_u[np.arange(n_u), s * n_u + np.arange(n_u)] = joint[s]
    else:
        n_w = n_u
        g_s, g_u = joint.copy(), np.diag(joint.sum(axis=0))
    n_z = dist.shape[1]
    p_s, p_w = joint.sum(axis=1), g_s.sum(axis=0)
    c = cp.Variable((n_w, n_z), nonneg=True)
    p_sz, p_z = g_s @ c, p_w @ c
    cons = [cp.sum(c, axis=1) == 1, cp.sum(cp.multiply(dist, g_u @ c)) <= budget]
    if privacy == "mi":
        objective = cp.sum(cp.rel_entr(p_sz, np.reshape(p_s, (n_s, 1)) @ cp.reshape(p_z, (1, n_z), order="C")))
    elif privacy == "chi2":
        objective = sum(cp.quad_over_lin(p_sz[:, z] / np.sqrt(p_s), p_z[z]) for z in range(n_z)) - 1
    else:
        t = cp.Variable(n_z)
        cons.append(p_sz <= cp.reshape(t, (1, n_z), order="C"))
        objective = cp.sum(t)
    prob = cp.Problem(cp.Minimize(objective), cons)
    opts = {"time_limit": REF_TIME_LIMIT} if solver == "CLARABEL" else {"time_limit_secs": REF_TIME_LIMIT}
    prob.solve(solver=solver, **opts)
    return float(prob.value) if prob.value is not None else float("nan")


def _new(joint: np.ndarray, dist: np.ndarray, budget: float, privacy: str, observation: str = "full"):
    solve_module._cached_model.cache_clear()  # time the whole program, built from scratch
    return solve_finite(joint, dist, budget, privacy, observation)


@pytest.mark.parametrize("observation", OBSERVATIONS)
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("privacy", PRIVACIES)
@pytest.mark.parametrize("m", SIZES)
def test_new_solver_per_budget(benchmark, m, privacy, kind, observation):
    joint, dist = _model(m, kind)
    opt = benchmark.pedantic(_new, args=(joint, dist, BUDGET, privacy, observation), rounds=1, iterations=1)
    benchmark.extra_info.update(gap=opt.certificate["duality_gap"], value=opt.value)
    assert opt.certificate["certified"]


@pytest.mark.parametrize("observation", OBSERVATIONS)
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("privacy", PRIVACIES)
@pytest.mark.parametrize("m", SIZES)
def test_new_solver_curve_of_five_budgets(benchmark, m, privacy, kind, observation):
    joint, dist = _model(m, kind)
    solve_module._cached_model.cache_clear()
    opts = benchmark.pedantic(finite_curve, args=(joint, dist, CURVE, privacy, observation), rounds=1, iterations=1)
    assert all(o.certificate["certified"] for o in opts)


@pytest.mark.parametrize("observation", OBSERVATIONS)
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("solver", ["CLARABEL", "SCS"])
@pytest.mark.parametrize("privacy", PRIVACIES)
@pytest.mark.parametrize("m", SIZES)
def test_plain_cvxpy_reference_per_budget(benchmark, m, privacy, solver, kind, observation):
    if _entries(m, observation) > REF_MAX_ENTRIES:
        pytest.skip("the plain reference takes many minutes at this size")
    joint, dist = _model(m, kind)
    value = benchmark.pedantic(plain_cvxpy, args=(joint, dist, BUDGET, privacy, solver, observation),
                               rounds=1, iterations=1)
    benchmark.extra_info.update(value=value)


def _timed(fn, *args, repeat: int = 1):
    """(result, least wall time, least CPU time of this process, over ``repeat`` runs).

    On a shared, loaded machine the wall time mostly measures the wait for a core; the
    CPU time (all threads of this process) is the fairer comparison, so both are reported.
    """
    wall = cpu = float("inf")
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        out = fn(*args)
        wall, cpu = min(wall, time.perf_counter() - t0), min(cpu, time.process_time() - c0)
    return out, wall, cpu


def _curve(joint, dist, privacy, observation="full"):
    solve_module._cached_model.cache_clear()
    return finite_curve(joint, dist, CURVE, privacy, observation)


def _references(joint, dist, m, privacy, repeat, observation="full"):
    refs = {}
    for solver in ("CLARABEL", "SCS"):
        refs[solver] = (float("nan"),) * 3
        if _entries(m, observation) <= REF_MAX_ENTRIES:
            try:
                refs[solver] = _timed(plain_cvxpy, joint, dist, BUDGET, privacy, solver, observation, repeat=repeat)
            except cp.error.SolverError:
                pass
    return refs


def _fmt(x: float) -> str:
    return f"{x:.3g}" if x == x else "skipped"


def _row(m: int, observation: str, privacy: str, kind: str, repeat: int) -> list[str]:
    """One row of the table: the new solver, its warm curve and the plain references, one after the other."""
    joint, dist = _model(m, kind)
    opt, t_new, c_new = _timed(_new, joint, dist, BUDGET, privacy, observation, repeat=repeat)
    curve_opts, t_curve, _ = _timed(_curve, joint, dist, privacy, observation, repeat=repeat)
    refs = _references(joint, dist, m, privacy, repeat, observation)
    walls = [refs[s][1] for s in ("CLARABEL", "SCS") if refs[s][1] == refs[s][1]]
    cpus = [refs[s][2] for s in ("CLARABEL", "SCS") if refs[s][2] == refs[s][2]]
    row = [str(m), observation, privacy, f"{t_new:.3g}", f"{c_new:.3g}", f"{t_curve / len(CURVE):.3g}"]
    row += [f"{_fmt(refs[s][1])} / {_fmt(refs[s][2])}" for s in ("CLARABEL", "SCS")]
    row += [f"{t_new / min(walls):.3g}" if walls else "-", f"{c_new / min(cpus):.3g}" if cpus else "-"]
    cert = all(o.certificate.get("certified") for o in [*curve_opts, opt])
    gap = f"{opt.certificate.get('relative_gap', float('nan')):.1e}" + ("" if cert else " (not all certified)")
    return row + [gap, f"{opt.value:.9f}", f"{refs['CLARABEL'][0]:.9f}"]


def table(sizes=SIZES, kind: str = "symmetric-pair", repeat: int = 1, observations=OBSERVATIONS) -> None:
    """Print the closing note's table: every number of a row measured in the same run, one after the other."""
    print(f"model: {kind}, budget {BUDGET}, least of {repeat} run(s), load average {os.getloadavg()[0]:.1f}")
    print("| m | observation | privacy | new wall (s/budget) | new CPU | curve wall (s/budget, 5 warm) "
          "| plain Clarabel wall / CPU | plain SCS wall / CPU | ratio wall | ratio CPU "
          "| certificate gap | value new | value Clarabel |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for m, observation in ((m, o) for m in sizes for o in observations):
        for privacy in PRIVACIES:
            print("| " + " | ".join(_row(m, observation, privacy, kind, repeat)) + " |", flush=True)
    print(f"load average at the end {os.getloadavg()[0]:.1f}")


def _option(argv: list[str], name: str) -> str | None:
    """The value after ``name`` in ``argv`` (both removed), or None."""
    if name not in argv:
        return None
    i = argv.index(name)
    value = argv[i + 1]
    del argv[i:i + 2]
    return value


if __name__ == "__main__":
    argv = sys.argv[1:]
    reps = int(_option(argv, "--repeat") or 1)
    one = _option(argv, "--observation")
    obs = (one,) if one else OBSERVATIONS
    BUDGET = float(_option(argv, "--budget") or BUDGET)
    PRIVACIES = (_option(argv, "--privacy"),) if "--privacy" in argv else PRIVACIES
    args = [a for a in argv if a != "--random"]
    table(tuple(int(a) for a in args) or SIZES, "random" if "--random" in argv else "symmetric-pair", reps, obs)
