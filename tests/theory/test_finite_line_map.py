"""The MAP LP of the full observation under a distortion on a line, as a flow on P(S, Z)
(theory/finite/line_map.py), checked against the whole LP on every channel entry, against plain cvxpy, and
its channel's distortion against scipy's one-dimensional Wasserstein distance."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import wasserstein_distance

from privbench.theory.finite import solve_finite
from privbench.theory.finite.data import finite_data
from privbench.theory.finite.highs_lp import MapLP
from privbench.theory.finite.line_map import LineFullMap, line_positions, monotone_channel


def _line(positions) -> np.ndarray:
    x = np.asarray(positions, dtype=float)
    return np.abs(x[:, None] - x[None, :])


def test_line_positions_accepts_distances_on_a_line_only():
    u = np.arange(6)
    assert np.array_equal(line_positions(np.abs(u[:, None] - u[None, :]) / 5.0), u / 5.0)
    uneven = np.array([0.0, 0.5, 0.5, 2.0, 7.0])
    assert np.array_equal(line_positions(_line(uneven)), uneven)
    assert line_positions(np.abs(u[:, None] - u[None, :]) / 3.0 + 0.0) is not None  # |u - z| / c, rounded
    assert line_positions(1.0 - np.eye(4)) is None  # Hamming (hamming_map.py)
    assert line_positions(_line([0.0, 1.0])) is None  # two values: the Hamming case
    assert line_positions(((u[:, None] - u[None, :]) / 5.0) ** 2) is None  # squared: no metric on a line
    assert line_positions(_line([0.0, 2.0, 1.0])) is None  # out of order along the line
    assert line_positions(np.abs(u[:, None] - u[None, :])[:, :5]) is None  # not square
    assert line_positions(np.zeros((3, 3))) is None


@pytest.mark.parametrize("seed", range(4))
def test_the_monotone_channel_carries_p_to_x_at_the_transport_cost(sparse_joint, seed):
    rng = np.random.default_rng(seed)
    n_s, n = 3, 7
    pos = np.sort(rng.uniform(0.0, 3.0, n))
    p = sparse_joint(seed, n_s, n)
    x = rng.dirichlet(np.ones(n), size=n_s) * p.sum(axis=1, keepdims=True)
    chan = monotone_channel(p, x).reshape(n_s, n, n)
    assert np.allclose(chan.sum(axis=2), 1.0)
    assert np.allclose(np.einsum("su,suz->sz", p, chan), x, atol=1e-15)
    for s in range(n_s):
        cost = float(np.einsum("u,uz,uz->", p[s], chan[s], _line(pos)))
        ref = p[s].sum() * wasserstein_distance(pos, pos, p[s], x[s])
        assert cost == pytest.approx(ref, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("seed,n_s,n,zeros", [(0, 3, 5, False), (1, 4, 4, False), (2, 5, 6, True), (3, 2, 8, True)])
@pytest.mark.parametrize("budget", [0.02, 0.1, 0.3, 0.8])
def test_flow_lp_equals_the_whole_lp_and_certifies(sparse_joint, seed, n_s, n, zeros, budget):
    joint = sparse_joint(seed, n_s, n, zeros)
    pos = np.cumsum(np.random.default_rng(seed).uniform(0.1, 1.0, n)) - 0.1
    pos -= pos[0]
    dist = _line(pos)
    data = finite_data(joint, dist, "full")
    whole = MapLP(data).solve(budget)
    r = LineFullMap(joint, pos, data).solve(budget)
    assert r.value == pytest.approx(whole.value, abs=1e-9)
    assert r.value - r.bound <= 1e-9  # the bound is recomputed over every entry of the full program
    assert r.bound <= whole.value + 1e-9
    assert r.channel.shape == (int(data.live.sum()), n)
    assert np.allclose(r.channel.sum(axis=1), 1.0)
    assert float((data.cost * r.channel).sum()) <= budget + 1e-12


def test_solve_finite_takes_the_flow_lp_and_matches_plain_cvxpy(sparse_joint):
    joint = sparse_joint(7, 4, 6)
    u = np.arange(6)
    dist = np.abs(u[:, None] - u[None, :]) / 5.0
    for budget in (0.02, 0.08):
        fast = solve_finite(joint, dist, budget, "map", "full")
        ref = solve_finite(joint, dist, budget, "map", "full", solver="cvxpy")
        assert fast.certificate["solver"] == LineFullMap.label
        assert fast.certificate["certified"]
        assert fast.value == pytest.approx(ref.value, abs=1e-7)


def test_a_large_line_program_solves_on_the_flow_lp(monkeypatch):
    """Random joint, full, m = 40 (64,000 entries, past the whole LP): certified by the flow LP, the value
    that of the column generation on every entry (the flow LP switched off)."""
    from privbench.theory.finite import solve as solve_module

    m = 40
    joint = np.random.default_rng(m).dirichlet(np.full(m * m, 0.5)).reshape(m, m)
    u = np.arange(m)
    dist = np.abs(u[:, None] - u[None, :]) / (m - 1)
    fast = solve_finite(joint, dist, 0.01, "map", "full")
    assert fast.certificate["solver"] == LineFullMap.label and fast.certificate["relative_gap"] <= 1e-9
    monkeypatch.setattr(solve_module, "line_positions", lambda d: None)
    solve_module._cached_model.cache_clear()
    plain = solve_finite(joint, dist, 0.01, "map", "full")
    solve_module._cached_model.cache_clear()
    assert plain.certificate["solver"] == "HiGHS"
    assert fast.value == pytest.approx(plain.value, abs=1e-7)
