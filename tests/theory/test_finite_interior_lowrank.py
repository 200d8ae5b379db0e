"""The low-rank Newton solve of theory/finite/interior_lowrank.py: its Hessian against the dense blocks of
interior_full.py, its solve against the explicit N x N system, and the certified interior point it drives
against the cvxpy program (full observation, n_s n_z above the dense LU's limit)."""

from __future__ import annotations

import numpy as np
import pytest

from privbench.theory.finite import interior_certified, solve_finite
from privbench.theory.finite import solve as solve_module
from privbench.theory.finite.data import finite_data
from privbench.theory.finite.interior_certified import interior_system, solve_interior_certified
from privbench.theory.finite.interior_dense import Point
from privbench.theory.finite.interior_full import FULL_MAX_N, HESSIANS, FullSystem
from privbench.theory.finite.interior_lowrank import LOW_RANK, LowRankSystem
from privbench.theory.finite.leakage import SMOOTH_LEAKAGES

GAP_TOL = 1e-7


def _random(m: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    joint = np.random.default_rng(seed).dirichlet(np.full(m * m, 0.5)).reshape(m, m)
    return joint, 1.0 - np.eye(m)


def _point(data, seed: int, spread: float) -> Point:
    """A strictly interior point: random rows, duals spread over ``spread`` decades."""
    rng = np.random.default_rng(seed)
    c = rng.dirichlet(np.full(data.shape[1], 0.5), size=data.shape[0])
    lam = 10.0 ** rng.uniform(-spread, 0.0, size=c.shape)
    return Point(c, lam, np.zeros(data.shape[0]), 0.1, 1.0)


@pytest.mark.parametrize("privacy", ["mi", "chi2"])
def test_the_low_rank_hessian_is_the_dense_one(privacy):
    joint, dist = _random(7, 3)
    data = finite_data(joint, dist, "full")
    y = np.asarray(data.g_s @ _point(data, 0, 2).c)
    slope, dense = HESSIANS[privacy](y, data.p_s)
    slope_lr, lr = LOW_RANK[privacy](y, data.p_s)
    assert np.array_equal(slope, slope_lr)
    rebuilt = np.einsum("sza,zab,tzb->zst", lr.v, lr.w, lr.v)
    rebuilt[:, np.arange(y.shape[0]), np.arange(y.shape[0])] += lr.h.T
    assert np.allclose(rebuilt, dense, rtol=1e-12, atol=1e-12 * np.abs(dense).max())


@pytest.mark.parametrize("privacy", ["mi", "chi2"])
@pytest.mark.parametrize("spread", [0.0, 3.0, 6.0])
def test_the_low_rank_solve_solves_the_explicit_system(privacy, spread, monkeypatch):
    """(I + P H_y) x = v, with the matrix built explicitly from the dense Hessian blocks and P's blocks."""
    joint, dist = _random(6, 1)
    data = finite_data(joint, dist, "full")
    dense, low = FullSystem(privacy, data.g_s, data.p_s, data.cost), LowRankSystem(privacy, data.g_s, data.p_s, data.cost)
    pt = _point(data, 2, spread)
    seen = {}
    real = FullSystem.y_solver

    def keep_p(self, p, hess):
        seen["p"], seen["hess"] = p.copy(), hess
        return real(self, p, hess)

    monkeypatch.setattr(FullSystem, "y_solver", keep_p)
    dense.factor(pt, dense.gradient(pt)[1])
    monkeypatch.undo()
    p, hess = seen["p"], seen["hess"]
    n_s, n_z = p.shape[0], p.shape[1]
    big = (p[:, :, None, :] * hess.transpose(1, 2, 0)[:, None, :, :]).reshape(n_s * n_z, n_s * n_z)
    big += np.eye(n_s * n_z)
    solve = low.y_solver(p, low.gradient(pt)[1])
    v = np.random.default_rng(5).standard_normal((n_s, n_z))
    x = solve(v)
    assert np.abs(big @ x.ravel() - v.ravel()).max() <= 1e-9 * np.abs(v).max()


def test_the_system_is_low_rank_above_the_dense_limit_and_none_where_it_would_not_fit(monkeypatch):
    joint, dist = _random(13, 0)  # n_s n_z = 169 > FULL_MAX_N
    assert 13 * 13 > FULL_MAX_N
    data = finite_data(joint, dist, "full")
    assert isinstance(interior_system(data, "mi"), LowRankSystem)
    monkeypatch.setenv("PRIVBENCH_FINITE_MEMORY_LIMIT", str(10**6))  # the arrays take about 0.55 MB here
    assert isinstance(interior_system(data, "mi"), LowRankSystem)
    monkeypatch.setenv("PRIVBENCH_FINITE_MEMORY_LIMIT", str(200 * 169 * 13))  # below the arrays' bytes
    assert interior_system(data, "mi") is None
    assert solve_interior_certified(data, 0.3, "mi", GAP_TOL) is None


@pytest.mark.parametrize("privacy", ["mi", "chi2"])
@pytest.mark.parametrize("m,seed", [(13, 0), (16, 4)])
@pytest.mark.parametrize("budget", [0.1, 0.3, 0.6])  # 0.6: perfect privacy (the floor)
def test_the_low_rank_interior_point_matches_the_cvxpy_program(privacy, m, seed, budget):
    joint, dist = _random(m, seed)
    data = finite_data(joint, dist, "full")
    s = solve_interior_certified(data, budget, privacy, GAP_TOL)
    assert s is not None
    ref = solve_finite(joint, dist, budget, privacy, "full", solver="cvxpy")
    assert s.value - s.bound <= GAP_TOL * max(1.0, s.value)
    assert s.bound <= ref.value + 1e-7
    assert s.value == pytest.approx(ref.value, abs=2e-7)
    assert np.allclose(s.channel.sum(axis=1), 1.0) and s.channel.min() >= 0.0
    assert float((data.cost * s.channel).sum()) <= budget
    assert SMOOTH_LEAKAGES[privacy](np.asarray(data.g_s @ s.channel), data.p_s).value == pytest.approx(s.value, abs=1e-15)


@pytest.mark.parametrize("privacy", ["mi", "chi2"])
def test_solve_finite_takes_the_low_rank_interior_point_on_a_larger_full_observation_program(privacy):
    joint, dist = _random(16, 4)
    solve_module._cached_model.cache_clear()
    fast = solve_finite(joint, dist, 0.3, privacy, "full")
    assert fast.certificate["solver"] == "primal-dual interior point"
    assert fast.certificate["certified"]
    ref = solve_finite(joint, dist, 0.3, privacy, "full", solver="cvxpy")
    assert fast.value == pytest.approx(ref.value, abs=2e-7)
