"""The interior point on a support (theory/finite/active_set.py) and the path of solve.py that
guesses the support by a short mirror descent, against the cvxpy program of program.py (Clarabel
at tolerance 1e-9 on every entry), the symmetric pair's closed form, and a certificate recomputed
here from the returned channel alone."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize_scalar

from privbench.datasets import SymmetricPair
from privbench.theory.finite import solve_finite, symmetric_pair_mi
from privbench.theory.finite import solve as solve_module
from privbench.theory.finite.active_set import ActiveSetSolver
from privbench.theory.finite.data import finite_data
from privbench.theory.finite.mirror import support_mask
from privbench.theory.finite.program import solve_conic
from privbench.theory.measures import channel_measures

TOL = 1e-6


def _instance(seed: int, hamming: bool):
    rng = np.random.default_rng(seed)
    n_s, n_u = (int(x) for x in rng.integers(2, 5, size=2))
    joint = rng.dirichlet(np.full(n_s * n_u, 0.6)).reshape(n_s, n_u)
    if hamming:
        return joint, 1.0 - np.eye(n_u)
    return joint, rng.uniform(0.0, 1.0, size=(n_u, int(rng.integers(2, 5))))


def _independent_bound(joint, dist, observation, channel, privacy, budget, lam):
    """The tangent minorant at ``channel``, built here from the model and the channel alone
    (I >= sum P(s,z) log(q(s|z)/P(s)); chi2 >= sum P(s,z)(2q/P(s) - sum q^2/P(s)) - 1 with
    q = P(S|z)), minimised over the row-stochastic channels at multiplier ``lam``."""
    n_s, n_u = joint.shape
    if observation == "full":
        g_s = np.zeros((n_s, n_s * n_u))
        g_u = np.zeros((n_u, n_s * n_u))
        for s in range(n_s):
            g_s[s, s * n_u:(s + 1) * n_u] = joint[s]
            g_u[np.arange(n_u), s * n_u + np.arange(n_u)] = joint[s]
    else:
        g_s, g_u = joint, np.diag(joint.sum(axis=0))
    p_s = joint.sum(axis=1)
    p_sz = g_s @ channel
    q = p_sz / p_sz.sum(axis=0)
    if privacy == "mi":
        slope, offset = np.log(q / p_s[:, None]), 0.0
    else:
        slope, offset = 2 * q / p_s[:, None] - (q**2 / p_s[:, None]).sum(axis=0), -1.0
    cost = g_u.T @ dist
    return offset + (g_s.T @ slope + lam * cost).min(axis=1).sum() - lam * budget


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), hamming=st.booleans(), frac=st.floats(0.0, 1.2),
       privacy=st.sampled_from(["mi", "chi2"]), observation=st.sampled_from(["useful", "full"]))
def test_active_set_from_the_cheapest_support_matches_cvxpy(seed, hamming, frac, privacy, observation):
    """Started from each row's cheapest release and the best constant one, so the pricing rounds run."""
    joint, dist = _instance(seed, hamming)
    data = finite_data(joint, dist, observation)
    const = float((joint.sum(axis=0) @ dist).min())
    budget = data.min_distortion + frac * (const - data.min_distortion)
    res = ActiveSetSolver(data, privacy).solve(budget, 1e-7, support_mask(data, budget))
    ref = solve_conic(joint, dist, budget, privacy, observation).value
    channel = np.full((data.live.size, dist.shape[1]), 1.0 / dist.shape[1])
    channel[data.live] = res.channel
    meas = channel_measures(joint, channel, observation, dist)
    assert meas[privacy] == pytest.approx(res.value, abs=1e-12)
    assert meas["distortion"] <= budget + 1e-12
    assert np.allclose(channel.sum(axis=1), 1.0) and channel.min() >= 0.0
    assert res.value == pytest.approx(ref, abs=TOL)
    # a bound above the optimum would be a false certificate (1e-7: the reference meets the budget
    # only to Clarabel's tolerance, which lowers its leakage at the minimum distortion)
    assert res.bound <= ref + 1e-7
    # the interior point alone is as accurate as Clarabel; solve_finite polishes to GAP_TOL
    fast = solve_finite(joint, dist, budget, privacy, observation)
    cert = fast.certificate
    assert cert["certified"] and "fallback" not in cert and cert["dual"] <= ref + 1e-7
    assert fast.value == pytest.approx(ref, abs=TOL)
    fast_channel = np.array(fast.mechanism["channel"])
    used = (np.asarray(data.g_s @ fast_channel[data.live]).sum(axis=0) > 1e-9).all()
    if used and support_mask(data, budget) is None:  # every release used, no tie restriction: the
        # plain tangent at the returned channel, maximised over the multiplier here, certifies it
        neg = lambda lam: -_independent_bound(joint, dist, observation, fast_channel, privacy, budget, lam)  # noqa: E731
        top = 10.0 * max(1.0, cert["multiplier"])
        grid = np.linspace(0.0, top, 2001)
        lam0 = grid[np.argmin([neg(x) for x in grid])]
        opt = minimize_scalar(neg, bounds=(max(0.0, lam0 - top / 2000), lam0 + top / 2000), method="bounded",
                              options={"xatol": 1e-13})
        lb = max(-min(opt.fun, neg(lam0)), 0.0)  # both leakages are >= 0
        assert lb <= ref + 1e-7
        assert fast.value - lb <= TOL * max(1.0, abs(fast.value))


@pytest.mark.parametrize("privacy", ["mi", "chi2"])
@pytest.mark.parametrize("seed", range(4))
def test_the_guessed_support_path_matches_cvxpy(privacy, seed):
    """solve_finite (the support guessed by mirror steps), every budget from the minimum
    distortion to beyond the constant release (zero leakage)."""
    solve_module._cached_model.cache_clear()
    joint, dist = _instance(100 + seed, seed % 2 == 0)
    data = finite_data(joint, dist, "full")
    const = float((joint.sum(axis=0) @ dist).min())
    for budget in (data.min_distortion, 0.3 * const, 0.7 * const, const, const + 0.1):
        budget = max(budget, data.min_distortion)
        fast = solve_finite(joint, dist, budget, privacy, "full")
        ref = solve_conic(joint, dist, budget, privacy, "full").value
        cert = fast.certificate
        assert "fallback" not in cert and cert["certified"], cert
        assert fast.value == pytest.approx(ref, abs=TOL)
        assert cert["dual"] <= ref + 1e-7
        meas = channel_measures(joint, np.array(fast.mechanism["channel"]), "full", dist)
        assert meas[privacy] == pytest.approx(fast.value, abs=1e-12)
        assert meas["distortion"] <= budget + 1e-12


@pytest.mark.parametrize("m,p", [(5, 0.3), (7, 0.6)])
def test_the_guessed_support_path_matches_the_symmetric_pair_closed_form(m, p):
    solve_module._cached_model.cache_clear()
    sc = SymmetricPair(m, p)
    budgets = np.array([0.0, 0.05, 0.2, 0.45, 1.0])
    values = [solve_finite(sc.joint(), sc.distortion_matrix(), b, "mi", "full").value for b in budgets]
    assert values == pytest.approx(symmetric_pair_mi(budgets, m, p, "full"), abs=TOL)


def test_an_uncertified_answer_without_fallback_is_a_sandwich_not_exact(monkeypatch):
    """Where the cvxpy program is over the memory limit, an answer whose gap is not closed is
    returned as the sandwich [proven bound, achieved value], never as exact."""
    monkeypatch.setattr(solve_module, "GAP_TOL", -1.0)  # no gap is small enough
    monkeypatch.setattr(solve_module, "MAX_ITER", 20)
    monkeypatch.setattr(solve_module, "estimate_bytes", lambda *args: float("inf"))
    solve_module._cached_model.cache_clear()
    joint, dist = _instance(7, True)
    ref = solve_conic(joint, dist, 0.3, "mi", "full").value
    opt = solve_finite(joint, dist, 0.3, "mi", "full")
    assert opt.bound_kind == "certified" and not opt.certificate["certified"]
    assert "over the memory limit" in opt.certificate["fallback"]
    assert opt.lower <= ref + 1e-7 and opt.value >= ref - 1e-7


@pytest.mark.parametrize("privacy", ["mi", "chi2"])
def test_a_wrong_interior_point_answer_fails_its_certificate(privacy, monkeypatch):
    """Injected: the whole program's channel mixed 5% with the uniform one (feasible, suboptimal),
    with Clarabel's own duals. The dual certificate must not close on it (nor rise above the
    optimum), and solve_finite must still end at the optimum by another path."""
    from privbench.theory.finite import active_set

    real = active_set._restricted

    def wrong(*args, **kwargs):
        out = real(*args, **kwargs)
        return None if out is None else (0.95 * out[0] + 0.05 / out[0].shape[1], out[1], out[2])

    joint, dist = _instance(3, True)
    data = finite_data(joint, dist, "full")
    budget = data.min_distortion + 0.4 * (float((joint.sum(axis=0) @ dist).min()) - data.min_distortion)
    ref = solve_conic(joint, dist, budget, privacy, "full").value
    good = ActiveSetSolver(data, privacy).solve_whole(budget, 1e-7)
    assert good.value - good.bound <= 1e-7 * max(1.0, good.value) and good.bound <= ref + 1e-7
    monkeypatch.setattr(active_set, "_restricted", wrong)
    bad = ActiveSetSolver(data, privacy).solve_whole(budget, 1e-7)
    assert bad.value > ref + 1e-5  # the injected channel is clearly suboptimal ...
    assert bad.value - bad.bound > 1e-5 and bad.bound <= ref + 1e-7  # ... and its certificate says so
    solve_module._cached_model.cache_clear()
    fast = solve_finite(joint, dist, budget, privacy, "full")
    solve_module._cached_model.cache_clear()
    assert fast.certificate["certified"] and fast.value == pytest.approx(ref, abs=TOL)
    assert fast.certificate["dual"] <= ref + 1e-7


@pytest.mark.parametrize("seed", range(3))
def test_the_compact_chi2_program_matches_cvxpy_and_its_duals_are_the_slope(seed):
    """chi2_cone.py (P(S,Z) written into the cones) on every entry, solved by Clarabel here: its
    optimum is the cvxpy program's, and the slope read off its cones' duals is the derivative
    dL/dP(s,z) = 2 P(s,z) / (P(s) P(z)) - sum_s' P(s',z)^2 / (P(s') P(z)^2), computed here from the
    returned channel, up to a constant per used z (which cancels on row-stochastic channels)."""
    import clarabel
    import scipy.sparse as sp

    from privbench.theory.finite.chi2_cone import chi2_program, chi2_slope

    joint, dist = _instance(200 + seed, seed != 1)
    data = finite_data(joint, dist, "full")
    budget = data.min_distortion + 0.5 * (float((joint.sum(axis=0) @ dist).min()) - data.min_distortion)
    w, z = np.divmod(np.arange(data.cost.size), data.shape[1])
    a, b, q, cones, _ = chi2_program(data, w, z, budget)
    settings_ = clarabel.DefaultSettings()
    settings_.verbose = False
    settings_.tol_gap_abs = settings_.tol_gap_rel = settings_.tol_feas = 1e-9  # as program.py's reference
    sol = clarabel.DefaultSolver(sp.csc_matrix((q.size, q.size)), q, a, b, cones, settings_).solve()
    assert str(sol.status) == "Solved"
    ref = solve_conic(joint, dist, budget, "chi2", "full").value
    assert sol.obj_val - 1.0 == pytest.approx(ref, abs=1e-7)
    channel = np.clip(np.asarray(sol.x)[: w.size], 0.0, None).reshape(data.shape) / data.p_w[:, None]
    p_sz = np.asarray(data.g_s @ channel)
    p_z, p_s = p_sz.sum(axis=0), data.p_s
    used = p_z > 1e-3
    deriv = 2 * p_sz / (p_s[:, None] * p_z) - (p_sz**2 / p_s[:, None]).sum(axis=0) / p_z**2
    slope = chi2_slope(np.asarray(sol.z), data, w.size)
    centred = lambda x: x - x.mean(axis=0)  # noqa: E731
    assert used.any()
    assert np.allclose(centred(slope[:, used]), centred(deriv[:, used]), atol=1e-4)
