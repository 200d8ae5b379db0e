"""The certified fast finite solvers (theory/finite/solve.py, mirror.py, highs_lp.py)
against the cvxpy programs, the closed forms and their own certificates.

Each fast answer is the leakage of a feasible channel and carries a proven lower
bound; the tests check the value against independent references (the cvxpy
program of program.py at solver tolerance 1e-9, the closed forms), the bound
against the references (a bound above the optimum would be a false
certificate), and the refusals of oversize programs.
"""

from __future__ import annotations

import numpy as np
import pytest

from privbench.datasets import Binary, Finite, InputError, SymmetricPair, make_scenario
from privbench.theory import curve, optimum
from privbench.theory.finite import (
    binary_pdi_map,
    finite_curve,
    finite_min_distortion,
    solve_finite,
    symmetric_pair_mi,
)
from privbench.theory.finite import solve as solve_module
from privbench.theory.finite.certificate import linearised_bound
from privbench.theory.finite.data import finite_data
from privbench.theory.finite.leakage import SMOOTH_LEAKAGES
from privbench.theory.measures import channel_measures

TOL = 1e-6


def _random_instance(seed: int):
    rng = np.random.default_rng(seed)
    n_s, n_u, n_z = (int(x) for x in rng.integers(2, 5, size=3))
    joint = rng.dirichlet(np.full(n_s * n_u, 0.8)).reshape(n_s, n_u)
    if seed % 2:
        return joint, rng.uniform(0.0, 1.0, size=(n_u, n_z))
    return joint, 1.0 - np.eye(n_u)


def _budgets(joint, dist, observation):
    """The minimum distortion, points inside, the constant release's cost and beyond it."""
    lo = finite_min_distortion(Finite(joint, dist), observation)
    hi = float((joint.sum(axis=0) @ dist).min())  # the best constant release
    return [lo, lo + 0.3 * (hi - lo), lo + 0.7 * (hi - lo), hi, hi + 0.5]


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("observation", ["useful", "full"])
@pytest.mark.parametrize("privacy", ["mi", "map", "chi2"])
def test_fast_solver_matches_cvxpy_program_on_random_models(seed, observation, privacy):
    joint, dist = _random_instance(seed)
    for b in _budgets(joint, dist, observation):
        fast = solve_finite(joint, dist, b, privacy, observation)
        ref = solve_finite(joint, dist, b, privacy, observation, solver="cvxpy")
        cert = fast.certificate
        assert "fallback" not in cert, cert["fallback"]
        assert cert["certified"] and cert["duality_gap"] <= 1e-7 * max(1.0, abs(fast.value))
        assert fast.value == pytest.approx(ref.value, abs=TOL), (seed, b)
        # a certificate above the optimum would be false: the bound is below the reference
        assert cert["dual"] <= ref.value + 1e-7
        # the value is that of the returned channel, which meets the budget
        meas = channel_measures(joint, np.array(fast.mechanism["channel"]), observation, dist)
        assert meas[privacy] == pytest.approx(fast.value, abs=1e-12)
        assert meas["distortion"] <= b + 1e-9


@pytest.mark.parametrize("m,p", [(3, 0.1), (4, 0.9), (6, 0.7), (8, 0.4), (5, 0.0)])
@pytest.mark.parametrize("observation", ["useful", "full"])
def test_fast_mi_solver_matches_the_symmetric_pair_closed_form(m, p, observation):
    sc = make_scenario("finite", {"joint": SymmetricPair(m, p).joint().tolist()})  # no closed form served
    budgets = np.array([0.0, 0.05, 0.2, 0.45, 1.0])
    values = curve(sc, budgets, "mi", observation)
    assert values == pytest.approx(symmetric_pair_mi(budgets, m, p, observation), abs=TOL)


@pytest.mark.parametrize("m,p", [(3, 0.2), (6, 0.5), (9, 0.4)])
def test_fast_chi2_and_map_match_the_symmetry_argument(m, p):
    """W = U: (S, Z) is a symmetric pair with q = p + a (1 - p m/(m-1)), a = min(D, 1 - 1/m)
    (tests/theory/test_finite.py derives it); chi2 = m (1-q)^2 + m q^2/(m-1) - 1."""
    sc = SymmetricPair(m, p)
    for b in (0.0, 0.1, 0.4, 0.9):
        a = min(b, 1 - 1 / m)
        q = p + a * (1 - p * m / (m - 1))
        chi2 = m * (1 - q) ** 2 + m * q**2 / (m - 1) - 1
        assert solve_finite(sc.joint(), sc.distortion_matrix(), b, "chi2", "useful").value == pytest.approx(
            chi2, abs=TOL)
        assert solve_finite(sc.joint(), sc.distortion_matrix(), b, "map", "useful").value <= max(1 - q, q / (m - 1)) + TOL


@pytest.mark.parametrize("p,q", [(0.5, 0.25), (0.75, 0.25), (0.2, 0.8), (0.6, 0.5)])
def test_fast_lp_matches_gap_theorem1(p, q):
    sc = Binary(p, q)
    budgets = np.linspace(0, 1, 11)
    opts = finite_curve(sc.joint(), sc.distortion_matrix(), budgets, "map", "useful")
    assert [o.value for o in opts] == pytest.approx(binary_pdi_map(budgets, p, q), abs=TOL)


@pytest.mark.parametrize("observation", ["useful", "full"])
@pytest.mark.parametrize("p,e", [(0.4, 0.3), (0.7, 0.2)])
def test_fast_lp_matches_the_z_channel_closed_form(p, e, observation):
    zc = make_scenario("z-channel", {"p": p, "e": e})
    generic = make_scenario("finite", {"joint": zc.joint().tolist()})
    budgets = [0.0, 0.05, 0.2, 0.6]
    assert curve(generic, budgets, "map", observation) == pytest.approx(
        curve(zc, budgets, "map", observation), abs=TOL)


@pytest.mark.parametrize("privacy", ["mi", "map", "chi2"])
def test_warm_started_curve_equals_independent_solves_in_any_order(privacy):
    joint, dist = _random_instance(3)
    budgets = _budgets(joint, dist, "full")[::-1]  # decreasing: the curve sorts internally
    opts = finite_curve(joint, dist, budgets, privacy, "full")
    singles = [solve_finite(joint, dist, b, privacy, "full", solver="cvxpy").value for b in budgets]
    assert [o.value for o in opts] == pytest.approx(singles, abs=TOL)


@pytest.mark.parametrize("privacy", ["mi", "chi2"])
def test_linearised_bound_never_exceeds_the_optimum(privacy):
    """The certificate at arbitrary (even infeasible) channels is a lower bound."""
    rng = np.random.default_rng(7)
    joint, dist = _random_instance(5)
    data = finite_data(joint, dist, "full")
    leak = SMOOTH_LEAKAGES[privacy]
    for b in _budgets(joint, dist, "full")[1:4]:
        ref = solve_finite(joint, dist, b, privacy, "full", solver="cvxpy").value
        for _ in range(5):
            c = rng.dirichlet(np.ones(data.shape[1]), size=data.shape[0])
            lin = leak(np.asarray(data.g_s @ c), data.p_s)
            # the minorant of leakage.py, and the plain tangent at c
            bound, lam = linearised_bound(lin.offset, np.asarray(data.g_s.T @ lin.slope), data.cost, b)
            assert bound <= ref + 1e-9 and lam >= 0
            grad = np.asarray(data.g_s.T @ lin.deriv)
            tangent, _ = linearised_bound(lin.value - float((grad * c).sum()), grad, data.cost, b)
            assert tangent <= ref + 1e-9


@pytest.mark.parametrize("seed", range(6))
def test_linearised_bound_finds_the_maximum_of_its_piecewise_linear_bound(seed):
    """LB(lambda) = offset + sum_w min_z (S + lambda A)[w, z] - lambda D, maximised over lambda >= 0, against
    the same maximum as a linear program (t_w <= S[w, z] + lambda A[w, z]) solved by HiGHS, from guesses of
    the multiplier far below, near and far above it."""
    from scipy.optimize import linprog

    rng = np.random.default_rng(seed)
    n_w, n_z = (int(x) for x in rng.integers(3, 40, size=2))
    scores = rng.normal(size=(n_w, n_z))
    cost = rng.uniform(0.0, 1.0, size=(n_w, n_z)) / n_w
    budget = float(cost.min(axis=1).sum() + rng.uniform(0.05, 0.5) * (cost.mean(axis=1).sum() - cost.min(axis=1).sum()))
    # variables (t_1..t_nw, lambda): maximise sum t - lambda D
    a = np.zeros((n_w * n_z, n_w + 1))
    a[np.arange(n_w * n_z), np.repeat(np.arange(n_w), n_z)] = 1.0
    a[:, -1] = -cost.ravel()
    lp = linprog(np.r_[-np.ones(n_w), budget], A_ub=a, b_ub=scores.ravel(),
                 bounds=[(None, None)] * n_w + [(0, None)], method="highs")
    assert lp.status == 0
    best = -lp.fun
    for lam0 in (0.0, 1e-6, lp.x[-1], 10.0 * lp.x[-1] + 1.0, 1e6):
        bound, lam = linearised_bound(0.0, scores, cost, budget, None, lam0)
        assert lam >= 0
        assert abs(bound - best) <= 1e-9 * max(1.0, abs(best))


def test_an_uncertified_answer_falls_back_to_cvxpy_and_says_so(monkeypatch):
    monkeypatch.setattr(solve_module, "GAP_TOL", -1.0)  # no gap is small enough
    monkeypatch.setattr(solve_module, "MAX_ITER", 20)
    joint, dist = _random_instance(2)
    opt = solve_finite(joint, dist, 0.3, "mi", "full")
    assert "cvxpy used" in opt.certificate["fallback"]
    assert opt.certificate["solver"] in ("Clarabel", "SCS")


def test_oversize_programs_are_refused_before_anything_is_built(monkeypatch):
    with pytest.raises(InputError, match="m=100000 exceeds the limit 256"):  # the alphabet limit comes first
        SymmetricPair(100000, 0.4)
    monkeypatch.setenv("PRIVBENCH_FINITE_MEMORY_LIMIT", "1e7")
    big = SymmetricPair(200, 0.4)  # full observation: |W| x |Z| = 40000 x 200
    with pytest.raises(InputError, match=r"unknowns.*over the limit"):
        optimum(big, 0.1, "map", "full")
    with pytest.raises(InputError, match="over the limit"):
        optimum(big, 0.1, "chi2", "full")
    with pytest.raises(InputError, match="mechanism .full.*over the limit"):
        optimum(big, 0.1, "mi", "full")
    # the closed-form curve needs no program and stays available
    assert curve(big, [0.1], "mi", "full")[0] > 0


def test_the_memory_limit_is_configurable(monkeypatch):
    sc = SymmetricPair(20, 0.4)
    monkeypatch.setenv("PRIVBENCH_FINITE_MEMORY_LIMIT", "1e6")
    with pytest.raises(InputError, match=r"\|W\| x \|Z\| = 400 x 20 .*over the limit"):
        solve_finite(sc.joint(), sc.distortion_matrix(), 0.1, "mi", "full")
    monkeypatch.setenv("PRIVBENCH_FINITE_MEMORY_LIMIT", "lots")
    with pytest.raises(InputError, match="PRIVBENCH_FINITE_MEMORY_LIMIT='lots'"):
        solve_finite(sc.joint(), sc.distortion_matrix(), 0.1, "mi", "full")


def test_unknown_solver_is_rejected():
    with pytest.raises(InputError, match="solver='gurobi'"):
        solve_finite([[0.5, 0], [0, 0.5]], [[0, 1], [1, 0]], 0.1, "mi", "full", solver="gurobi")


def test_highs_prints_nothing_on_stdout(capfd):
    """HiGHS prints a banner from C when an instance is created; `privbench optimum --json` must stay JSON."""
    solve_module._cached_model.cache_clear()
    joint, dist = _random_instance(4)
    solve_finite(joint, dist, 0.3, "map", "full")
    out, _ = capfd.readouterr()
    assert out == ""
