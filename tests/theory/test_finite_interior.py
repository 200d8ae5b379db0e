"""The primal-dual interior point of theory/finite/interior_dense.py (with the y-space Newton system of
interior_full.py for the full observation) and its certificate (interior_certified.py), against the
cvxpy programs of program.py.

The interior point's channel is only a candidate: these tests check its value
against the independent cvxpy program, that its certified bound never exceeds
that program's optimum (a bound above the optimum would be a false certificate),
that the cleaning of the releases it is emptying is what makes the bound close,
and that solve_finite falls back to its other solvers where it fails.
"""

from __future__ import annotations

import numpy as np
import pytest

from privbench.theory.finite import solve as solve_module
from privbench.theory.finite import solve_finite
from privbench.theory.finite.active_set import meet_budget
from privbench.theory.finite.certificate import linearised_bound
from privbench.theory.finite.data import finite_data
from privbench.theory.finite import interior_certified
from privbench.theory.finite.interior_certified import interior_system, solve_interior_certified
from privbench.theory.finite.interior_dense import DenseSystem, solve_interior
from privbench.theory.finite.interior_full import FullSystem, one_s_per_w
from privbench.theory.finite.interior_lowrank import LowRankSystem
from privbench.theory.finite.leakage import MINORANT_SLOPES, SMOOTH_LEAKAGES
from privbench.theory.finite.unused import best_unused_q, best_unused_qs, clearing_qs

GAP_TOL = 1e-7


def _random_useful(m: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """A Dirichlet(1/2) joint on m x m with Hamming distortion, as the scale benchmark's."""
    joint = np.random.default_rng(seed).dirichlet(np.full(m * m, 0.5)).reshape(m, m)
    return joint, 1.0 - np.eye(m)


CASES = [("useful", 0, 4), ("useful", 1, 6), ("useful", 10, 10), ("useful", 20, 20),
         ("full", 0, 3), ("full", 1, 5), ("full", 10, 8)]


@pytest.mark.parametrize("privacy", ["mi", "chi2"])
@pytest.mark.parametrize("observation,seed,m", CASES)
@pytest.mark.parametrize("budget", [0.1, 0.3, 0.6])
def test_the_certified_interior_point_matches_the_cvxpy_program(privacy, observation, seed, m, budget):
    """Useful: the dense Newton system; full (one s per w): the y-space one of interior_full.py."""
    joint, dist = _random_useful(m, seed)
    data = finite_data(joint, dist, observation)
    if budget <= data.min_distortion:
        pytest.skip("budget at or below the minimum distortion")
    assert isinstance(interior_system(data, privacy), FullSystem if observation == "full" else DenseSystem)
    s = solve_interior_certified(data, budget, privacy, GAP_TOL)
    assert s is not None
    ref = solve_finite(joint, dist, budget, privacy, observation, solver="cvxpy")
    assert s.value - s.bound <= GAP_TOL * max(1.0, s.value)
    assert s.bound <= ref.value + 1e-7  # the bound is a lower bound (up to cvxpy's own accuracy)
    assert s.value == pytest.approx(ref.value, abs=2e-7)
    assert np.allclose(s.channel.sum(axis=1), 1.0) and s.channel.min() >= 0.0
    assert float((data.cost * s.channel).sum()) <= budget  # feasible exactly, not to a tolerance
    assert SMOOTH_LEAKAGES[privacy](np.asarray(data.g_s @ s.channel), data.p_s).value == pytest.approx(s.value, abs=1e-15)


def test_the_raw_interior_point_tangent_is_loose_where_releases_empty_and_the_cleaned_one_is_not():
    """Random useful m = 20, mi, budget 0.3: two releases carry ~1e-10 of mass at the end, and their
    posterior is noise; the tangent of the raw channel misses by > 1e-3, the cleaned one certifies."""
    joint, dist = _random_useful(20, 20)
    data = finite_data(joint, dist, "useful")
    g = np.asarray(data.g_s.todense())
    r = solve_interior("mi", g, data.p_s, data.cost, 0.3)
    assert r is not None
    lin = SMOOTH_LEAKAGES["mi"](g @ r.channel, data.p_s)
    raw, _ = linearised_bound(lin.offset, g.T @ lin.slope, data.cost, 0.3, None, r.multiplier)
    assert lin.value - raw > 1e-3
    s = solve_interior_certified(data, 0.3, "mi", GAP_TOL)
    assert s is not None and s.value - s.bound <= GAP_TOL * max(1.0, s.value)


@pytest.mark.parametrize("privacy", ["mi", "chi2"])
@pytest.mark.parametrize("seed", range(4))
def test_the_batched_unused_release_program_reaches_the_single_ones_objective(privacy, seed):
    rng = np.random.default_rng(seed)
    n_s, n_w, k = 3 + seed, 5 + seed, 3
    g = rng.dirichlet(np.ones(n_s * n_w)).reshape(n_s, n_w)
    p_s = g.sum(axis=1)
    row_min, shifts = rng.normal(size=n_w) * 0.1, rng.random((n_w, k)) * 0.1
    qs = best_unused_qs(privacy, g, p_s, row_min, shifts)
    assert qs is not None and np.allclose(qs.sum(axis=0), 1.0)

    def objective(q, j):
        score = g.T @ MINORANT_SLOPES[privacy](q[:, None], p_s)[:, 0]
        return np.minimum(row_min, score + shifts[:, j]).sum()

    for j in range(k):
        single = best_unused_q(privacy, g, p_s, row_min, shifts[:, j])
        assert objective(qs[:, j], j) == pytest.approx(objective(single, j), abs=1e-8)


@pytest.mark.parametrize("privacy", ["mi", "chi2"])
@pytest.mark.parametrize("seed", range(4))
def test_the_dual_steps_clear_every_row_where_a_planted_q_does(privacy, seed):
    """Row minima a planted pmf clears with margin 0.02 P(w): clearing_qs finds a q that clears them too
    (its objective is sum row_min, all that Clarabel's best q can reach); minima no pmf can clear (above
    every q's score: the largest score of a q is at most max_s log(1 / P(s)) P(w) for mi, P(w) / min P(s)
    for chi2) are reported as not cleared."""
    rng = np.random.default_rng(seed)
    n_s, n_w, k = 3 + 2 * seed, 6 + 3 * seed, 4
    g = rng.dirichlet(np.full(n_s * n_w, 0.5)).reshape(n_s, n_w)
    p_s, p_w = g.sum(axis=1), g.sum(axis=0)
    planted = rng.dirichlet(np.ones(n_s), size=k).T
    shifts = rng.random((n_w, k)) * 0.1
    scores = g.T @ MINORANT_SLOPES[privacy](planted, p_s)
    row_min = (scores + shifts - 0.02 * p_w[:, None]).min(axis=1)
    qs, cleared = clearing_qs(privacy, g, p_s, row_min, shifts)
    assert cleared.all()
    found = g.T @ MINORANT_SLOPES[privacy](qs, p_s) + shifts
    assert np.all(found >= row_min[:, None]) and np.allclose(qs.sum(axis=0), 1.0)
    best = best_unused_qs(privacy, g, p_s, row_min, shifts)
    reach = np.minimum(row_min[:, None], g.T @ MINORANT_SLOPES[privacy](best, p_s) + shifts).sum(axis=0)
    assert np.all(reach <= row_min.sum() + 1e-9)
    top = p_w * (np.log(1.0 / p_s.min()) if privacy == "mi" else 1.0 / p_s.min())
    _, cleared = clearing_qs(privacy, g, p_s, top + 1.0, shifts, steps=50)
    assert not cleared.any()


@pytest.mark.parametrize("privacy", ["mi", "chi2"])
def test_solve_finite_takes_the_interior_point_on_a_dense_program(privacy):
    joint, dist = _random_useful(10, 10)
    fast = solve_finite(joint, dist, 0.3, privacy, "useful")
    ref = solve_finite(joint, dist, 0.3, privacy, "useful", solver="cvxpy")
    assert fast.certificate["solver"] == "primal-dual interior point"
    assert fast.certificate["certified"]
    assert fast.value == pytest.approx(ref.value, abs=2e-7)


@pytest.mark.parametrize("privacy", ["mi", "chi2"])
def test_where_the_interior_point_fails_solve_finite_falls_back_and_still_certifies(privacy, monkeypatch):
    joint, dist = _random_useful(10, 10)
    monkeypatch.setattr(solve_module, "solve_interior_certified", lambda *a, **k: None)
    solve_module._cached_model.cache_clear()
    fast = solve_finite(joint, dist, 0.3, privacy, "useful")
    ref = solve_finite(joint, dist, 0.3, privacy, "useful", solver="cvxpy")
    assert fast.certificate["solver"] != "primal-dual interior point"
    assert fast.certificate["certified"] and "fallback" not in fast.certificate
    assert fast.value == pytest.approx(ref.value, abs=2e-7)


def test_the_system_follows_the_structure_of_p_s_w(monkeypatch):
    joint, dist = _random_useful(6, 1)
    full, useful = finite_data(joint, dist, "full"), finite_data(joint, dist, "useful")
    assert one_s_per_w(full.g_s) and not one_s_per_w(useful.g_s)
    assert isinstance(interior_system(useful, "mi"), DenseSystem)
    assert isinstance(interior_system(full, "mi"), FullSystem)
    monkeypatch.setattr(interior_certified, "FULL_MAX_N", 6 * 6 - 1)  # n_s n_z = 36: over the dense LU's limit
    assert isinstance(interior_system(full, "mi"), LowRankSystem)


@pytest.mark.parametrize("privacy", ["mi", "chi2"])
def test_solve_finite_takes_the_interior_point_on_a_small_full_observation_program(privacy):
    joint, dist = _random_useful(5, 1)  # |W| |Z| = 125 entries
    fast = solve_finite(joint, dist, 0.3, privacy, "full")
    ref = solve_finite(joint, dist, 0.3, privacy, "full", solver="cvxpy")
    assert fast.certificate["solver"] == "primal-dual interior point"
    assert fast.certificate["certified"]
    assert fast.value == pytest.approx(ref.value, abs=2e-7)


def test_meeting_the_budget_gives_no_mass_to_the_releases_the_channel_leaves_empty():
    joint, dist = _random_useful(6, 3)
    data = finite_data(joint, dist, "useful")
    channel = np.zeros((6, 6))
    channel[:, [1, 4]] = 0.5  # releases 1 and 4 only
    used = channel.sum(axis=0) > 0
    over = float((data.cost * channel).sum())
    budget = 0.9 * over
    out = meet_budget(channel, data, budget, used)
    assert float((data.cost * out).sum()) <= budget
    assert np.all(out[:, ~used] == 0.0) and np.allclose(out.sum(axis=1), 1.0)
    plain = meet_budget(channel, data, budget)  # the cheapest release of each row: here z = w
    assert np.any(plain[:, ~used] > 0.0)


def test_a_multiplier_guess_saves_the_steps_that_grow_it():
    """Random joint, full, m = 30, d = |u - z| / 29, chi2 at budget 0.002: the default start's multiplier
    (1e-2) is far below the optimum's (about 160) and grows by about 15% a step; started from a short
    mirror descent's multiplier the interior point certifies in fewer steps, at the same value."""
    from privbench.theory.finite.mirror import solve_smooth

    m = 30
    joint = np.random.default_rng(m).dirichlet(np.full(m * m, 0.5)).reshape(m, m)
    u = np.arange(m)
    data = finite_data(joint, np.abs(u[:, None] - u[None, :]) / (m - 1), "full")
    guess = solve_smooth(data, 0.002, "chi2", None, tol=GAP_TOL, max_iter=10, check_every=10).multiplier
    plain = solve_interior_certified(data, 0.002, "chi2", GAP_TOL)
    warm = solve_interior_certified(data, 0.002, "chi2", GAP_TOL, guess)
    assert plain is not None and warm is not None
    for s in (plain, warm):
        assert s.value - s.bound <= GAP_TOL * max(1.0, s.value)
    assert warm.iterations < plain.iterations
    assert warm.value == pytest.approx(plain.value, abs=2e-7)
