"""theory.gaussian: every closed form against an independent numerical optimum
(scipy over linear-Gaussian mechanisms, cvxpy over allocations), achievability by
the returned mechanism, a sampling check, curve properties and bad input.

Solver tolerances (1e-10 to 1e-12) are far tighter than test tolerances (1e-6
for cvxpy, 2e-5 for multi-start SLSQP, 0.01 nats for sampling)."""

from __future__ import annotations

import json

import cvxpy as cp
import numpy as np
import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize
from scipy.stats import ortho_group

from privbench.datasets import (
    GaussianScalar,
    GaussianSource,
    GaussianVector,
    InputError,
    SymmetricPair,
)
from privbench.theory.gaussian import (
    canonical_form,
    gaussian_curve,
    gaussian_optimum,
    linear_gaussian_leakage,
    reverse_waterfill,
    scalar_full_mi,
    scalar_useful_mi,
    source_mi,
    waterfill_allocation,
)

PAPER_RHO = [0.47, 0.24, 0.85, 0.07, 0.66]  # PPAN §III-B4 / Figure 6
CVX_OPTS = dict(tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10, max_iter=500)
SLOW = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
FAST = settings(max_examples=60, deadline=None)


# --------------------------------------------------------------------------
# helpers: independent numerical optima
# --------------------------------------------------------------------------


def _matrices(opt):
    m = opt.mechanism
    return np.array(m["A"]), np.array(m["B"]), np.array(m["noise_cov"])


def _best_linear_mechanism(cov, d_s, d_u, budget, full, starts=6, seed=0):
    """min I(S;Z) over Z = A U + B S + N(0, L L^T) with E||U-Z||^2 <= budget (SLSQP, multi-start).

    B is fixed to 0 unless ``full``. Leakage and MSE are computed here from the
    determinant formula (not with the module under test). An upper bound on the
    true optimum. Starts are random perturbations of a feasible Z = alpha U."""
    rng = np.random.default_rng(seed)
    cov = np.asarray(cov, dtype=float)
    cov_s = cov[:d_s, :d_s]
    cond = cov - cov[:, :d_s] @ np.linalg.solve(cov_s, cov[:d_s, :])  # Cov((S, U) | S)
    tril = np.tril_indices(d_u)
    n_a, n_b, n_l = d_u * d_u, (d_u * d_s if full else 0), len(tril[0])
    sel = np.hstack([np.zeros((d_u, d_s)), np.eye(d_u)])

    def unpack(x):
        A = x[:n_a].reshape(d_u, d_u)
        B = x[n_a:n_a + n_b].reshape(d_u, d_s) if full else np.zeros((d_u, d_s))
        L = np.zeros((d_u, d_u))
        L[tril] = x[n_a + n_b:]
        return np.hstack([B, A]), L @ L.T

    def leak(x):
        M, N = unpack(x)
        _, ld = np.linalg.slogdet(M @ cov @ M.T + N)
        sign, ld_s = np.linalg.slogdet(M @ cond @ M.T + N)
        return 50.0 if sign <= 0 else min(0.5 * (ld - ld_s), 50.0)

    def slack(x):
        M, N = unpack(x)
        e = sel - M
        return budget - np.trace(e @ cov @ e.T) - np.trace(N)

    alpha = max(0.0, 1.0 - np.sqrt(budget / np.trace(cov[d_s:, d_s:])))
    x_feasible = np.concatenate([alpha * np.eye(d_u).ravel(), np.zeros(n_b), np.zeros(n_l)])
    best = np.inf
    for _ in range(starts):
        x0 = x_feasible + rng.normal(scale=0.15, size=x_feasible.size)
        res = minimize(leak, x0, method="SLSQP", constraints=[{"type": "ineq", "fun": slack}],
                       options={"ftol": 1e-14, "maxiter": 2000})
        if slack(res.x) >= -1e-10:
            best = min(best, leak(res.x))
    return best


def _cvx_allocation(rho, total):
    """The Prop 2 allocation program, solved directly: min sum -1/2 log(1 - r^2 + r^2 d)."""
    rho = np.asarray(rho, dtype=float)
    d = cp.Variable(rho.size)
    obj = cp.sum(-0.5 * cp.log(1 - rho**2 + cp.multiply(rho**2, d)))
    prob = cp.Problem(cp.Minimize(obj), [d >= 0, d <= 1, cp.sum(d) <= total])
    prob.solve(solver=cp.CLARABEL, **CVX_OPTS)
    return prob.value, d.value


def _cvx_reverse_waterfill(var, total):
    var = np.asarray(var, dtype=float)
    d = cp.Variable(var.size)
    obj = cp.sum(-0.5 * cp.log(cp.multiply(d, 1.0 / var)))
    prob = cp.Problem(cp.Minimize(obj), [d >= 0, d <= var, cp.sum(d) <= total])
    prob.solve(solver=cp.CLARABEL, **CVX_OPTS)
    return prob.value, d.value


def _vector_from_canonical(rho, d_s, d_u, c, seed):
    """A gaussian-vector with canonical correlations ``rho``, random cov_s and rotations, cov_u = c I."""
    rng = np.random.default_rng(seed)
    lam = np.zeros((d_s, d_u))
    lam[np.arange(len(rho)), np.arange(len(rho))] = rho
    g = rng.normal(size=(d_s, d_s))
    cov_s = g @ g.T + 0.5 * np.eye(d_s)
    w, v = np.linalg.eigh(cov_s)
    r1 = ortho_group.rvs(d_s, random_state=rng) if d_s > 1 else np.eye(1)
    r2 = ortho_group.rvs(d_u, random_state=rng) if d_u > 1 else np.eye(1)
    cov_su = (v * np.sqrt(w)) @ v.T @ r1 @ lam @ r2.T * np.sqrt(c)
    return GaussianVector(cov_s, c * np.eye(d_u), cov_su)


def _assert_achieved(sc, opt, budget, tol=1e-9):
    """The returned mechanism's exact leakage is the value and its MSE meets the budget."""
    mi, mse = linear_gaussian_leakage(sc.cov(), *_matrices(opt))
    assert mi == pytest.approx(opt.value, abs=tol, rel=tol)
    assert mse == pytest.approx(opt.mechanism["distortion"], abs=tol, rel=tol)
    assert mse <= budget + tol
    json.dumps(opt.mechanism, allow_nan=False)


# --------------------------------------------------------------------------
# Prop 1 and Prop 3 (scalar)
# --------------------------------------------------------------------------

rhos = st.floats(-0.97, 0.97)
variances = st.floats(0.2, 5.0)
fractions = st.floats(0.03, 1.3)


@SLOW
@given(rho=rhos, var_s=variances, var_u=variances, frac=fractions)
def test_prop1_matches_best_linear_mechanism_and_is_achieved(rho, var_s, var_u, frac):
    sc, budget = GaussianScalar(rho, var_s, var_u), frac * var_u
    opt = gaussian_optimum(sc, budget, "useful")
    assert opt.method == "closed form (PPAN Prop 1)" and opt.bound_kind == "exact"
    _assert_achieved(sc, opt, budget)
    if frac < 1:
        assert opt.mechanism["distortion"] == pytest.approx(budget, rel=1e-12)
    numerical = _best_linear_mechanism(sc.cov(), 1, 1, budget, full=False)
    assert numerical == pytest.approx(opt.value, abs=2e-5)


@SLOW
@given(rho=rhos, var_s=variances, var_u=variances, frac=fractions)
def test_prop3_matches_best_linear_mechanism_and_is_achieved(rho, var_s, var_u, frac):
    sc, budget = GaussianScalar(rho, var_s, var_u), frac * var_u
    opt = gaussian_optimum(sc, budget, "full")
    assert "Prop 3" in opt.method
    _assert_achieved(sc, opt, budget)
    if frac < rho * rho:
        assert opt.mechanism["distortion"] == pytest.approx(budget, rel=1e-9)
    numerical = _best_linear_mechanism(sc.cov(), 1, 1, budget, full=True)
    assert numerical == pytest.approx(opt.value, abs=2e-5)


@FAST
@given(rho=st.floats(0.0, 0.999), frac=st.floats(0.0, 1.0))
def test_prop3_equals_papers_eq_28_below_threshold(rho, frac):
    delta = frac * rho * rho * 0.999
    paper = 0.5 * np.log(1 / (1 - (np.sqrt(rho**2 * (1 - delta)) - np.sqrt((1 - rho**2) * delta)) ** 2))
    assert scalar_full_mi([delta], rho)[0] == pytest.approx(paper, rel=1e-9, abs=1e-12)


def test_papers_prop3_mechanism_leaks_above_threshold():
    """Eq (27) as printed, used for rho^2 < delta <= 1, has nonzero leakage (optimum is 0)."""
    rho, delta = 0.5, 0.5
    k = np.sqrt(delta * (1 - delta) / (1 - rho**2))
    paper_mi, mse = linear_gaussian_leakage(GaussianScalar(rho).cov(), [[1 - delta + rho * k]], [[-k]], [[0]])
    assert mse == pytest.approx(delta)
    assert paper_mi > 0.03  # corr(S, Z) = rho sqrt(1-d) - sqrt((1-rho^2) d) = -0.259
    assert scalar_full_mi([delta], rho)[0] == 0.0
    # below the threshold the printed mechanism is the optimal one
    opt = gaussian_optimum(GaussianScalar(rho), 0.1, "full")
    k = np.sqrt(0.1 * 0.9 / (1 - rho**2))
    assert opt.mechanism["A"][0][0] == pytest.approx(0.9 + rho * k)
    assert opt.mechanism["B"][0][0] == pytest.approx(-k)


@pytest.mark.parametrize("rho", [1.0, -1.0])
def test_perfect_correlation(rho):
    sc = GaussianScalar(rho, 2.0, 3.0)
    for obs in ("useful", "full"):
        vals = gaussian_curve(sc, [0.0, 0.3, 3.0, 4.0], obs)
        assert vals[0] == np.inf
        assert vals[1] == pytest.approx(-0.5 * np.log(0.1))
        assert vals[2] == vals[3] == 0.0
        opt = gaussian_optimum(sc, 0.3, obs)
        _assert_achieved(sc, opt, 0.3)
        assert gaussian_optimum(sc, 0.0, obs).value == np.inf


@FAST
@given(rho=st.floats(-1.0, 1.0), var_s=variances, var_u=variances)
def test_scalar_curve_properties(rho, var_s, var_u):
    sc = GaussianScalar(rho, var_s, var_u)
    b = np.linspace(1e-3, 1.5, 600) * var_u
    p1, p3 = gaussian_curve(sc, b, "useful"), gaussian_curve(sc, b, "full")
    for v in (p1, p3):
        assert np.all(np.isfinite(v)) and np.all(v >= 0)
        assert np.all(np.diff(v) <= 1e-12)
        assert np.all(np.diff(v, 2) >= -1e-10)  # convex
    assert np.all(p3 <= p1 + 1e-12)  # seeing S can only help
    assert np.all(p1[b >= var_u] == 0)
    if abs(rho) > 1e-3:
        assert np.all(p1[b < var_u * 0.999] > 0)
    assert np.all(p3[b >= rho**2 * var_u] == 0)
    if 0.05 < abs(rho) < 1:
        assert np.all(p3[b < rho**2 * var_u * 0.99] > 0)
    # invariance: var_s and the sign of rho do not matter; var_u rescales the budget
    unit = GaussianScalar(abs(rho))
    np.testing.assert_allclose(p1, gaussian_curve(unit, b / var_u, "useful"), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(p3, gaussian_curve(unit, b / var_u, "full"), rtol=1e-12, atol=1e-15)


def test_scalar_reference_values():
    assert scalar_useful_mi([0.0, 0.5, 1.0], 0.8)[0] == pytest.approx(-0.5 * np.log(0.36))
    assert scalar_useful_mi([0.5], 0.8)[0] == pytest.approx(-0.5 * np.log(1 - 0.64 + 0.32))
    assert scalar_full_mi([0.2], 0.8)[0] == pytest.approx(-np.log(np.sqrt(0.36 * 0.8) + 0.8 * np.sqrt(0.2)))
    assert scalar_full_mi([0.64, 0.7], 0.8).tolist() == [0.0, 0.0]


# --------------------------------------------------------------------------
# Prop 2 (vector)
# --------------------------------------------------------------------------


@pytest.mark.parametrize("budget", [0.0, 0.3, 1.0, 1.7, 2.5, 3.6, 4.99, 6.0])
def test_prop2_paper_example_against_cvxpy(budget):
    sc = GaussianVector.from_rho(PAPER_RHO)
    opt = gaussian_optimum(sc, budget, "useful")
    assert "Prop 2" in opt.method
    value, alloc = _cvx_allocation(PAPER_RHO, budget)
    assert opt.value == pytest.approx(value, abs=1e-7)
    order = np.argsort(PAPER_RHO)[::-1]  # the SVD sorts the components
    np.testing.assert_allclose(opt.mechanism["allocation"], np.asarray(alloc)[order], atol=1e-5)
    _assert_achieved(sc, opt, budget)
    if budget < 5:
        assert opt.mechanism["distortion"] == pytest.approx(budget, abs=1e-12)


@SLOW
@given(rho=st.lists(st.floats(0.0, 1.0), min_size=1, max_size=6), frac=st.floats(0.0, 1.1))
@example(rho=[1.0], frac=0.0)  # infinite leakage: the reference has no finite optimum (found by hypothesis)
def test_waterfilling_against_cvxpy(rho, frac):
    rho = np.array(rho)
    total = frac * rho.size
    alloc = waterfill_allocation([total], rho)[0]
    assert np.all((alloc >= 0) & (alloc <= 1))
    assert alloc.sum() == pytest.approx(min(total, np.sum(rho > 1e-12)), abs=1e-9)
    ours = -0.5 * np.sum(np.log1p(-(rho**2) * (1 - alloc)))
    if not np.isfinite(ours):
        # infinite leakage is unavoidable only when the budget cannot cover every component with
        # rho = 1 (there the reference program has no finite optimum and the solver fails)
        assert total < np.sum(rho >= 1.0)
        return
    # A component left with 1 - rho^2 (1 - a) below 1e-9 (rho = 1 - 1e-16, found by hypothesis) is
    # outside what the reference can check: its conic log is not that precise (17.95 against 18.02
    # nats at rho = 1 - 1e-16); such draws are rejected, not compared.
    assume(np.all(np.log1p(-(rho**2) * (1 - alloc)) > np.log(1e-9)))
    value, cvx_alloc = _cvx_allocation(rho, total)
    assert ours == pytest.approx(value, abs=1e-6)
    live = (rho > 1e-3) & (rho < 1)
    np.testing.assert_allclose(alloc[live], cvx_alloc[live], atol=1e-4)


@pytest.mark.parametrize(
    "rho,d_s,d_u,c",
    [
        ([0.8, 0.5], 2, 3, 1.7),  # d_u > d_s: a component of U' uncorrelated with S
        ([0.9, 0.3], 3, 2, 0.6),  # d_s > d_u
        ([0.7, 0.0], 2, 2, 2.0),  # a zero singular value
        ([0.6, 0.6], 2, 2, 1.0),  # repeated singular values
    ],
)
@pytest.mark.parametrize("frac", [0.15, 0.5, 0.9])
def test_prop2_general_covariances(rho, d_s, d_u, c, frac):
    sc = _vector_from_canonical(rho, d_s, d_u, c, seed=len(rho) * 10 + d_s)
    budget = frac * c * np.sum(np.array(rho) > 0)
    opt = gaussian_optimum(sc, budget, "useful")
    # invariant: the same curve as the canonical from_rho model with budget / c
    canon = GaussianVector.from_rho(rho)
    assert opt.value == pytest.approx(gaussian_curve(canon, [budget / c], "useful")[0], rel=1e-9)
    assert opt.value == pytest.approx(_cvx_allocation(rho, budget / c)[0], abs=1e-7)
    _assert_achieved(sc, opt, budget)
    assert opt.mechanism["distortion"] == pytest.approx(budget, rel=1e-9)
    alloc = np.array(opt.mechanism["allocation"])
    rho_full = np.zeros(d_u)
    rho_full[: min(d_s, d_u)] = opt.mechanism["canonical_rho"]
    assert alloc.shape == (d_u,) and np.all(alloc[rho_full == 0] == 0)  # released exactly
    numerical = _best_linear_mechanism(sc.cov(), d_s, d_u, budget, full=False, starts=4)
    assert numerical == pytest.approx(opt.value, abs=5e-5)


def test_prop2_one_component_is_prop1_and_unit_rho_is_rate_distortion():
    b = np.linspace(0, 2.5, 101)
    vec = GaussianVector([[2.0]], [[3.0]], [[0.6 * np.sqrt(6.0)]])
    np.testing.assert_allclose(gaussian_curve(vec, b, "useful"),
                               gaussian_curve(GaussianScalar(0.6, 2.0, 3.0), b, "useful"), rtol=1e-12)
    # a 1x1 vector scenario with full observation is Prop 3 (theory.optimum claims it)
    np.testing.assert_allclose(gaussian_curve(vec, b, "full"),
                               gaussian_curve(GaussianScalar(0.6, 2.0, 3.0), b, "full"), rtol=1e-12)
    with np.errstate(divide="ignore"):
        np.testing.assert_allclose(gaussian_curve(GaussianVector.from_rho([1.0, 1.0]), b[1:], "useful"),
                                   source_mi(b[1:], [1.0, 1.0]), rtol=1e-12)


def test_prop2_curve_properties():
    b = np.linspace(0, 6, 3001)
    v = gaussian_curve(GaussianVector.from_rho(PAPER_RHO), b, "useful")
    assert np.all(np.diff(v) <= 1e-12) and np.all(np.diff(v, 2) >= -1e-10)
    assert np.all(v[b >= 5] == 0) and np.all(v[b < 4.999] > 0)
    assert v[0] == pytest.approx(sum(-0.5 * np.log(1 - r * r) for r in PAPER_RHO))


def test_prop2_condition_failure_and_full_observation_raise():
    bad = GaussianVector(np.eye(2), np.diag([1.0, 2.0]), [[0.5, 0.0], [0.0, 0.3]])
    with pytest.raises(InputError, match="condition .* fails.*no known closed form"):
        canonical_form(bad)
    with pytest.raises(InputError, match="condition"):
        gaussian_curve(bad, [0.5], "useful")
    ok = GaussianVector(np.diag([1.0, 4.0]), 2.0 * np.eye(2), [[0.5, 0.0], [0.2, 0.3]])
    assert canonical_form(ok).c == pytest.approx(2.0)  # cov_s need not be isotropic
    with pytest.raises(InputError, match="no known optimum for gaussian-vector with full observation"):
        gaussian_optimum(GaussianVector.from_rho([0.5, 0.2]), 0.1, "full")


# --------------------------------------------------------------------------
# reverse water-filling (gaussian-source)
# --------------------------------------------------------------------------


def test_reverse_waterfilling_two_components_by_hand():
    var = (1.0, 0.25)
    sc = GaussianSource(var)
    # D = 0.2: theta = 0.1 on both; R = 1/2 log(1/0.1) + 1/2 log(0.25/0.1) = log 5
    # D = 0.9: the small component is dropped (D_2 = 0.25), theta = 0.65; R = 1/2 log(1/0.65)
    vals = gaussian_curve(sc, [0.0, 0.2, 0.5, 0.9, 1.25, 3.0], None)
    np.testing.assert_allclose(vals, [np.inf, np.log(5), np.log(2), 0.5 * np.log(1 / 0.65), 0, 0])
    np.testing.assert_allclose(reverse_waterfill([0.9], var)[0], [0.65, 0.25])
    assert gaussian_curve(sc, [0.9], "full")[0] == gaussian_curve(sc, [0.9], "useful")[0]


@SLOW
@given(var=st.lists(st.floats(0.05, 5.0), min_size=1, max_size=6), frac=st.floats(0.01, 1.2))
def test_reverse_waterfilling_against_cvxpy_and_mechanism(var, frac):
    budget = frac * sum(var)
    sc = GaussianSource(tuple(var))
    opt = gaussian_optimum(sc, budget, None)
    assert opt.method == "closed form (reverse water-filling R(D))"
    if frac < 1:
        assert opt.value == pytest.approx(_cvx_reverse_waterfill(var, budget)[0], abs=1e-6)
    else:
        assert opt.value == 0.0
    _assert_achieved(sc, opt, budget)


def test_source_curve_properties():
    b = np.linspace(1e-3, 3, 2000)
    v = gaussian_curve(GaussianSource((0.47, 0.24, 0.85, 0.85)), b, None)
    assert np.all(np.diff(v) <= 1e-12) and np.all(np.diff(v, 2) >= -1e-10)
    assert np.all(v[b >= 2.41] == 0) and np.all(v[b < 2.40] > 0)


# --------------------------------------------------------------------------
# sampling check: apply the returned mechanism to draws from the scenario
# --------------------------------------------------------------------------


def _gaussian_fit_mi(s, z):
    """Gaussian-fit I(S;Z) from samples; directions in which Z is constant are dropped."""
    w, v = np.linalg.eigh(np.cov(z.T).reshape(z.shape[1], z.shape[1]))
    z = z @ v[:, w > 1e-9 * max(w.max(), 1e-300)]
    if z.shape[1] == 0:
        return 0.0
    d_s = s.shape[1]
    c = np.cov(np.hstack([s, z]).T)
    return 0.5 * (np.linalg.slogdet(c[:d_s, :d_s])[1] + np.linalg.slogdet(c[d_s:, d_s:])[1]
                  - np.linalg.slogdet(c)[1])


@pytest.mark.parametrize(
    "scenario,observation,budget",
    [
        (GaussianScalar(0.8, 2.0, 3.0), "useful", 1.2),
        (GaussianScalar(-0.8, 2.0, 3.0), "full", 0.6),
        (GaussianScalar(0.5, 1.0, 2.0), "full", 1.0),  # zero-leakage region, Z = U - E[U|S]
        (GaussianVector.from_rho(PAPER_RHO), "useful", 1.7),
        (_vector_from_canonical([0.8, 0.5], 2, 3, 1.7, seed=3), "useful", 1.0),
        (GaussianSource((0.47, 0.24, 0.85)), None, 0.6),
    ],
)
def test_sampling_matches_value(scenario, observation, budget):
    rng = np.random.default_rng(20240601)
    opt = gaussian_optimum(scenario, budget, observation)
    A, B, N = _matrices(opt)
    x = scenario.sample(300_000, rng)
    w, v = np.linalg.eigh(N)
    noise = rng.standard_normal(x.u.shape) @ (v * np.sqrt(np.clip(w, 0, None))).T
    z = x.u @ A.T + x.s @ B.T + noise
    mse = np.mean(np.sum((x.u - z) ** 2, axis=1))
    assert mse == pytest.approx(opt.mechanism["distortion"], rel=0.02)
    assert _gaussian_fit_mi(x.s, z) == pytest.approx(opt.value, abs=0.01)


# --------------------------------------------------------------------------
# exact measure and bad input
# --------------------------------------------------------------------------


def test_linear_gaussian_leakage_matches_determinant_formula():
    rng = np.random.default_rng(1)
    g = rng.normal(size=(5, 5))
    cov = g @ g.T + 0.1 * np.eye(5)  # d_s = 2, d_u = 3
    A, B = rng.normal(size=(3, 3)), rng.normal(size=(3, 2))
    h = rng.normal(size=(3, 3))
    N = h @ h.T
    mi, mse = linear_gaussian_leakage(cov, A, B, N)
    M = np.hstack([B, A])
    joint = np.block([[cov[:2, :2], cov[:2] @ M.T], [M @ cov[:, :2], M @ cov @ M.T + N]])
    ref = 0.5 * (np.linalg.slogdet(cov[:2, :2])[1] + np.linalg.slogdet(joint[2:, 2:])[1]
                 - np.linalg.slogdet(joint)[1])
    assert mi == pytest.approx(ref, rel=1e-10)
    e = np.hstack([-B, np.eye(3) - A])
    assert mse == pytest.approx(np.trace(e @ cov @ e.T) + np.trace(N), rel=1e-12)
    assert linear_gaussian_leakage(cov, np.zeros((3, 3)), np.zeros((3, 2)), np.zeros((3, 3)))[0] == 0.0
    with pytest.raises(InputError, match="shapes"):
        linear_gaussian_leakage(cov, A, B, np.eye(2))


@pytest.mark.parametrize("bad", [np.nan, -0.1, np.inf, [0.1, np.nan], [[0.1]]])
@pytest.mark.parametrize(
    "scenario,observation",
    [(GaussianScalar(0.5), "useful"), (GaussianScalar(0.5), "full"),
     (GaussianVector.from_rho([0.5, 0.2]), "useful"), (GaussianSource((1.0, 2.0)), None)],
)
def test_bad_budgets_raise(bad, scenario, observation):
    with pytest.raises(InputError, match="budget"):
        gaussian_curve(scenario, bad, observation)
    if np.ndim(bad) == 0:
        with pytest.raises(InputError, match="budget"):
            gaussian_optimum(scenario, bad, observation)


def test_bad_observation_and_scenario_raise():
    with pytest.raises(InputError, match="observation=None is unknown"):
        gaussian_curve(GaussianScalar(0.5), [0.1], None)
    with pytest.raises(InputError, match="observation='both' is unknown"):
        gaussian_optimum(GaussianScalar(0.5), 0.1, "both")
    with pytest.raises(InputError, match="no Gaussian closed form"):
        gaussian_curve(SymmetricPair(3, 0.2), [0.1], "useful")
