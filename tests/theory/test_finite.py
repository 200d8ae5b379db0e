"""Finite-alphabet optima: convex programs against closed forms, an independent
LP solver, brute force and random feasible mechanisms.

Solver tolerance is 1e-9 (finite.SOLVER_TOL); tests use 1e-6 or looser.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog
from scipy.special import xlogy

from privbench.datasets import Binary, Finite, InputError, SymmetricPair
from privbench.theory import finite
from privbench.theory.finite import (
    binary_pdi_map,
    finite_min_distortion,
    solve_finite,
    symmetric_pair_mechanism,
    symmetric_pair_mi,
    symmetric_pair_rate,
)
from privbench.theory.measures import channel_measures, observation_kernel, release_joint

TOL = 1e-6
assert finite.SOLVER_TOL <= 1e-3 * TOL


def _solve(scenario, budget, privacy, observation):
    return solve_finite(scenario.joint(), scenario.distortion_matrix(), budget, privacy, observation)


# --------------------------------------------------------------------------
# symmetric pair: PPAN appendix G against the exponential-cone program
# --------------------------------------------------------------------------

SYM_CASES = [(2, 0.3), (3, 0.1), (4, 0.9), (5, 0.85), (6, 0.7), (10, 0.4), (7, 0.0), (3, 1.0), (4, 0.75)]


@pytest.mark.parametrize("m,p", SYM_CASES)
@pytest.mark.parametrize("observation", ["useful", "full"])
def test_symmetric_pair_closed_form_matches_convex_program(m, p, observation):
    sc = SymmetricPair(m, p)
    budgets = np.linspace(0.0, 1.0, 9)
    closed = symmetric_pair_mi(budgets, m, p, observation)
    for b, c in zip(budgets, closed):
        opt = _solve(sc, b, "mi", observation)
        assert opt.value == pytest.approx(c, abs=TOL), (m, p, observation, b)
        assert opt.certificate["duality_gap"] < 1e-7
        assert opt.certificate["budget_violation"] < 1e-8


@pytest.mark.parametrize("m,p", SYM_CASES)
@pytest.mark.parametrize("observation", ["useful", "full"])
def test_symmetric_pair_mechanism_attains_closed_form(m, p, observation):
    sc = SymmetricPair(m, p)
    for b in np.linspace(0.0, 1.0, 11):
        ch = symmetric_pair_mechanism(m, p, b, observation)
        meas = channel_measures(sc.joint(), ch, observation)
        assert meas["distortion"] <= b + 1e-12
        assert meas["mi"] == pytest.approx(symmetric_pair_mi([b], m, p, observation)[0], abs=1e-12)


def test_symmetric_pair_rate_is_mutual_information_of_the_model():
    for m, p in SYM_CASES:
        sc = SymmetricPair(m, p)
        ident = np.eye(m)
        assert channel_measures(sc.joint(), ident, "useful")["mi"] == pytest.approx(
            symmetric_pair_rate(m, p), abs=1e-12
        )


@pytest.mark.parametrize("m,p", [(3, 0.2), (5, 0.5), (10, 0.4), (4, 0.9)])
def test_symmetric_pair_useful_chi2_and_map_match_symmetry_argument(m, p):
    """With W = U the problem is invariant under relabelling, so an optimal
    channel is (1-a) I + a (J - I)/(m-1); (S, Z) is then a symmetric pair with
    parameter q = p + a (1 - p m/(m-1)), and a = min(delta, 1 - 1/m). Its chi2
    information is m (1-q)^2 + m q^2/(m-1) - 1 and its MAP accuracy
    max(1-q, q/(m-1)) -- derived here by hand, independent of the program."""
    sc = SymmetricPair(m, p)
    for b in np.linspace(0, 1, 7):
        a = min(b, 1 - 1 / m)
        q = p + a * (1 - p * m / (m - 1))
        chi2 = m * (1 - q) ** 2 + m * q**2 / (m - 1) - 1
        assert _solve(sc, b, "chi2", "useful").value == pytest.approx(chi2, abs=TOL)
        # MAP is not convex-symmetric in the same way only when the prior guess
        # is already optimal; accuracy can never be below 1/m.
        mapv = _solve(sc, b, "map", "useful").value
        assert mapv <= max(1 - q, q / (m - 1)) + TOL
        assert mapv >= 1 / m - TOL


# --------------------------------------------------------------------------
# binary model: GAP Theorem 1 (PDI) and LP (21) (PDD)
# --------------------------------------------------------------------------

PQ = [(0.5, 0.25), (0.75, 0.25), (0.3, 0.1), (0.9, 0.6), (0.2, 0.8), (0.5, 0.5), (0.6, 0.5), (0.1, 0.45)]


@pytest.mark.parametrize("p,q", PQ)
def test_binary_pdi_theorem1_matches_linear_program(p, q):
    sc = Binary(p, q)
    budgets = np.linspace(0, 1, 21)
    closed = binary_pdi_map(budgets, p, q)
    for b, c in zip(budgets, closed):
        assert _solve(sc, b, "map", "useful").value == pytest.approx(c, abs=TOL), (p, q, b)


def _gap_lp21(p: float, q: float, D: float) -> float:
    """GAP eq (21) transcribed literally and solved with HiGHS (scipy).

    GAP's X is our U (public), Y our S (private); p_{x,y} = P(X=x, Y=y).
    Variables: s11, s01, s10, s00, t0, t1.
    """
    pj = Binary(p, q).joint()  # [s, u]
    p11, p01, p10, p00 = pj[1, 1], pj[1, 0], pj[0, 1], pj[0, 0]
    c = [0, 0, 0, 0, 1, 1]
    A = [
        [-p11, p01, 0, 0, -1, 0],
        [0, 0, -p10, p00, -1, 0],
        [p11, -p01, 0, 0, 0, -1],
        [0, 0, p10, -p00, 0, -1],
        [-p11, -p01, -p10, -p00, 0, 0],
    ]
    b = [-p11, -p10, -p01, -p00, D - (p11 + p01 + p10 + p00)]
    res = linprog(c, A_ub=A, b_ub=b, bounds=[(0, 1)] * 4 + [(None, None)] * 2, method="highs")
    assert res.status == 0
    return float(res.fun)


@pytest.mark.parametrize("p,q", PQ)
def test_binary_pdd_matches_gap_lp21_solved_independently(p, q):
    sc = Binary(p, q)
    for D in np.linspace(0, 1, 11):
        assert _solve(sc, D, "map", "full").value == pytest.approx(_gap_lp21(p, q, D), abs=TOL)


def test_gap_figure5_endpoints():
    """GAP Fig 5a/b: at D = 0 the adversary guesses S from U with accuracy
    max(q, 1-q); PDD falls with slope 1 until the prior max(P(S=0), P(S=1))."""
    for p, q in [(0.5, 0.25), (0.75, 0.25)]:
        sc = Binary(p, q)
        prior = max(sc.joint().sum(axis=1))
        assert _solve(sc, 0.0, "map", "full").value == pytest.approx(0.75, abs=TOL)
        assert _solve(sc, 0.05, "map", "full").value == pytest.approx(max(0.7, prior), abs=TOL)
        assert _solve(sc, 1.0, "map", "full").value == pytest.approx(prior, abs=TOL)


# --------------------------------------------------------------------------
# general programs: independent LP, brute force, random mechanisms
# --------------------------------------------------------------------------


def _random_model(rng, n_s, n_u, n_z=None, hamming=True):
    joint = rng.dirichlet(np.ones(n_s * n_u)).reshape(n_s, n_u)
    if hamming:
        return Finite(joint)
    d = rng.uniform(0, 1, size=(n_u, n_z or n_u))
    return Finite(joint, d)


def _independent_map_lp(joint, distortion, kernel, budget):
    """min sum_z t_z s.t. t_z >= P(s,z), E d <= budget, rows of C sum to 1 (HiGHS)."""
    n_s, n_u = joint.shape
    n_w, n_z = kernel.shape[1], distortion.shape[1]
    p_suw = (joint.reshape(-1, 1) * kernel).reshape(n_s, n_u, n_w)
    nv = n_w * n_z + n_z
    cost = np.r_[np.zeros(n_w * n_z), np.ones(n_z)]
    A, b = [], []
    for s in range(n_s):
        for z in range(n_z):
            row = np.zeros(nv)
            row[np.arange(n_w) * n_z + z] = p_suw[s].sum(axis=0)
            row[n_w * n_z + z] = -1
            A.append(row)
            b.append(0.0)
    drow = np.zeros(nv)
    p_uw = p_suw.sum(axis=0)
    for w in range(n_w):
        for z in range(n_z):
            drow[w * n_z + z] = (p_uw[:, w] * distortion[:, z]).sum()
    A.append(drow)
    b.append(budget)
    Aeq = np.zeros((n_w, nv))
    for w in range(n_w):
        Aeq[w, w * n_z : (w + 1) * n_z] = 1
    res = linprog(cost, A_ub=A, b_ub=b, A_eq=Aeq, b_eq=np.ones(n_w),
                  bounds=[(0, None)] * (n_w * n_z) + [(None, None)] * n_z, method="highs")
    assert res.status == 0
    return float(res.fun)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("observation", ["useful", "full"])
def test_map_program_matches_independent_highs_lp(seed, observation):
    rng = np.random.default_rng(seed)
    sc = _random_model(rng, 3, 4, 3, hamming=False)
    kernel = observation_kernel(3, 4, observation)
    lo = finite_min_distortion(sc, observation)
    for b in np.linspace(lo, lo + 0.6, 5):
        ours = _solve(sc, b, "map", observation).value
        assert ours == pytest.approx(_independent_map_lp(sc.joint(), sc.distortion_matrix(), kernel, b), abs=TOL)


@pytest.mark.parametrize("privacy", ["mi", "chi2", "map"])
def test_binary_useful_programs_match_brute_force(privacy):
    """W = U binary: the channel has two free numbers (a, b); grid search over
    [0,1]^2 with a fine local refinement bounds the optimum from above."""
    sc = Binary(0.7, 0.2)
    from privbench.theory.measures import PRIVACY_MEASURES

    measure = PRIVACY_MEASURES[privacy]
    joint, dist = sc.joint(), sc.distortion_matrix()

    def evaluate(a, b):
        ch = np.array([[1 - a, a], [b, 1 - b]])
        p_suz = release_joint(joint, ch, "useful")
        return measure(p_suz.sum(axis=1)), float((p_suz.sum(axis=0) * dist).sum())

    for budget in (0.05, 0.15, 0.3):
        best = np.inf
        grid = np.linspace(0, 1, 201)
        for a in grid:
            # the distortion is linear in (a, b): P(U=0) a + P(U=1) b <= budget
            pu = joint.sum(axis=0)
            bmax = (budget - pu[0] * a) / pu[1]
            if bmax < 0:
                continue
            for b in np.linspace(0, min(bmax, 1.0), 201):
                best = min(best, evaluate(a, b)[0])
        opt = _solve(sc, budget, privacy, "useful").value
        assert opt <= best + TOL
        assert opt >= best - 2e-3  # the grid is within 2e-3 of the true optimum


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**31 - 1),
    n_s=st.integers(2, 3),
    n_u=st.integers(2, 4),
    privacy=st.sampled_from(["mi", "map", "chi2"]),
    observation=st.sampled_from(["useful", "full"]),
)
def test_no_random_feasible_mechanism_beats_the_optimum(seed, n_s, n_u, privacy, observation):
    rng = np.random.default_rng(seed)
    sc = _random_model(rng, n_s, n_u)
    n_w = n_u if observation == "useful" else n_s * n_u
    for _ in range(3):
        ch = rng.dirichlet(np.full(n_u, 0.5), size=n_w)
        meas = channel_measures(sc.joint(), ch, observation)
        opt = _solve(sc, meas["distortion"], privacy, observation)
        assert meas[privacy] >= opt.value - TOL


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@example(seed=443, privacy="mi", observation="full")  # the first-order solver found no multiplier: cvxpy instead
@example(seed=469, privacy="mi", observation="useful")  # budget 1 ulp below the minimum distortion: was ZeroDivisionError
@given(
    seed=st.integers(0, 2**31 - 1),
    privacy=st.sampled_from(["mi", "map", "chi2"]),
    observation=st.sampled_from(["useful", "full"]),
)
def test_curves_are_non_increasing_convex_and_vanish_past_threshold(seed, privacy, observation):
    rng = np.random.default_rng(seed)
    sc = _random_model(rng, 2, 3, 3, hamming=False)
    lo = finite_min_distortion(sc, observation)
    # the best constant release: leakage is zero (prior accuracy for map)
    p_u = sc.joint().sum(axis=0)
    hi = float((p_u @ sc.distortion_matrix()).min())
    budgets = np.linspace(lo, hi, 9)
    vals = np.array([_solve(sc, b, privacy, observation).value for b in budgets])
    assert np.all(np.diff(vals) <= TOL)
    # The optimal value of a convex program is convex in the constraint level.
    assert np.all(vals[:-2] - 2 * vals[1:-1] + vals[2:] >= -10 * TOL)
    floor = sc.joint().sum(axis=1).max() if privacy == "map" else 0.0
    assert vals[-1] == pytest.approx(floor, abs=TOL)
    assert _solve(sc, hi + 0.5, privacy, observation).value == pytest.approx(floor, abs=TOL)


# --------------------------------------------------------------------------
# certificates and bad input
# --------------------------------------------------------------------------


def test_certificate_reports_solver_primal_dual_and_exact_values():
    sc = SymmetricPair(10, 0.4)
    opt = solve_finite(sc.joint(), sc.distortion_matrix(), 0.2, "mi", "full", solver="cvxpy")
    cert = opt.certificate
    assert cert["solver"] == "Clarabel"
    assert cert["duality_gap"] == pytest.approx(abs(cert["primal"] - cert["dual"]))
    assert cert["duality_gap"] < 1e-7
    assert cert["exact_value"] == opt.value
    ch = np.array(opt.mechanism["channel"])
    assert ch.shape == (100, 10)
    assert np.allclose(ch.sum(axis=1), 1.0) and ch.min() >= 0


def test_budget_below_smallest_achievable_distortion_is_rejected():
    sc = Finite([[0.25, 0.25], [0.25, 0.25]], [[0.5, 1.0], [1.0, 0.5]])
    assert finite_min_distortion(sc, "useful") == pytest.approx(0.5)
    with pytest.raises(InputError, match="below the smallest achievable distortion"):
        _solve(sc, 0.4, "mi", "useful")
    assert _solve(sc, 0.5, "mi", "useful").value == pytest.approx(0.0, abs=TOL)


@pytest.mark.parametrize("budget", [-0.1, float("nan"), float("inf")])
def test_bad_budgets_are_rejected(budget):
    with pytest.raises(InputError, match="budget"):
        _solve(SymmetricPair(3, 0.2), budget, "mi", "useful")
    with pytest.raises(InputError, match="budget"):
        symmetric_pair_mi([0.1, budget], 3, 0.2, "full")


def test_unknown_privacy_and_observation_are_rejected():
    with pytest.raises(InputError, match="privacy='tv'"):
        _solve(SymmetricPair(3, 0.2), 0.1, "tv", "useful")
    with pytest.raises(InputError, match="observation='partial'"):
        _solve(SymmetricPair(3, 0.2), 0.1, "mi", "partial")


# --------------------------------------------------------------------------
# GAP Fig 5c,d: the binary model's MI tradeoff through the general program
# --------------------------------------------------------------------------


def _h2(x):
    return float(-xlogy(x, x) - xlogy(1 - x, 1 - x))


@pytest.mark.parametrize("p,q", [(0.5, 0.25), (0.75, 0.25)])
def test_binary_mi_tradeoff_gap_fig5cd(p, q):
    sc = Binary(p, q)
    p_s1 = p * (1 - q) + (1 - p) * q
    i_su = _h2(p_s1) - _h2(q)  # I(S;U) = H(S) - H(S|U) = H(S) - H(N)
    for obs in ("useful", "full"):
        assert _solve(sc, 0.0, "mi", obs).value == pytest.approx(i_su, abs=TOL)
        # the constant release costs min(p, 1-p) and leaks nothing
        assert _solve(sc, min(p, 1 - p), "mi", obs).value == pytest.approx(0.0, abs=TOL)
    for D in np.linspace(0, 0.5, 11):
        # seeing S can only help the mechanism: PDD <= PDI
        assert _solve(sc, D, "mi", "full").value <= _solve(sc, D, "mi", "useful").value + TOL
