"""The MAP LP of the full observation under Hamming distortion, reduced to P(S, Z) (theory/finite/hamming_map.py),
checked against the whole LP on every channel entry and against plain cvxpy."""

from __future__ import annotations

import numpy as np
import pytest

from privbench.theory.finite import solve_finite
from privbench.theory.finite.data import finite_data
from privbench.theory.finite.hamming_map import HammingFullMap, hamming_scale, transport_channel
from privbench.theory.finite.highs_lp import MapLP


def test_hamming_scale_accepts_only_a_constant_off_diagonal():
    assert hamming_scale(1.0 - np.eye(4)) == 1.0
    assert hamming_scale(2.5 * (1.0 - np.eye(3))) == 2.5
    d = 1.0 - np.eye(4)
    d[0, 1] = 0.9
    assert hamming_scale(d) is None
    assert hamming_scale(np.ones((3, 4))) is None  # not square
    assert hamming_scale(np.zeros((3, 3))) is None  # c = 0
    assert hamming_scale(1.0 - np.eye(4) + np.eye(4) * 0.1) is None  # a diagonal cost


@pytest.mark.parametrize("seed", range(5))
def test_transport_channel_carries_p_to_x_at_the_transport_cost(sparse_joint, seed):
    rng = np.random.default_rng(seed)
    p = sparse_joint(seed, 3, 6)
    x = rng.dirichlet(np.ones(6), size=3) * p.sum(axis=1, keepdims=True)  # same row totals as p
    chan = transport_channel(p, x)
    n_s, n = p.shape
    assert np.allclose(chan.sum(axis=1), 1.0) and chan.min() >= 0
    blocks = chan.reshape(n_s, n, n)
    assert np.allclose(np.einsum("su,suz->sz", p, blocks), x)  # P(S, Z) = x
    moved = np.einsum("su,suz->s", p, blocks * (1.0 - np.eye(n)))
    assert np.allclose(moved, np.clip(p - x, 0.0, None).sum(axis=1))  # the Hamming transport cost
    total = moved.sum()
    tight = transport_channel(p, x, limit=0.5 * total).reshape(n_s, n, n)  # pulled toward p: half moves
    assert np.einsum("su,suz->", p, tight * (1.0 - np.eye(n))) == pytest.approx(0.5 * total, rel=1e-12)


@pytest.mark.parametrize("seed,n_s,n,zeros", [(0, 3, 5, False), (1, 4, 4, False), (2, 5, 6, True), (3, 2, 8, True)])
@pytest.mark.parametrize("budget", [0.05, 0.2, 0.4, 0.9])
def test_reduced_lp_equals_the_whole_lp_and_certifies(sparse_joint, seed, n_s, n, zeros, budget):
    joint = sparse_joint(seed, n_s, n, zeros)
    dist = 1.0 - np.eye(n)
    data = finite_data(joint, dist, "full")
    if budget < data.min_distortion:
        pytest.skip("unreachable budget")
    whole = MapLP(data).solve(budget)
    r = HammingFullMap(joint, 1.0, data).solve(budget)
    assert r.value == pytest.approx(whole.value, abs=1e-9)
    assert r.value - r.bound <= 1e-9  # the bound is recomputed over every entry of the full program
    assert r.channel.shape == (int(data.live.sum()), n)
    assert np.allclose(r.channel.sum(axis=1), 1.0)
    assert float((data.cost * r.channel).sum()) <= budget + 1e-12  # the budget met exactly


def test_scaled_hamming_distortion_matches_plain_cvxpy(sparse_joint):
    joint = sparse_joint(7, 3, 5)
    dist = 2.0 * (1.0 - np.eye(5))
    data = finite_data(joint, dist, "full")
    ref = solve_finite(joint, dist, 0.5, "map", "full", solver="cvxpy")
    r = HammingFullMap(joint, 2.0, data).solve(0.5)
    assert r.value == pytest.approx(ref.value, abs=1e-7)


def test_solve_finite_uses_the_reduced_lp_where_the_first_round_does_not_finish():
    # random joint, full, m = 30 (27,000 entries, past the whole-LP size): the column generation's first
    # round does not finish, the LP on P(S, Z) answers, and its value is the column generation's
    m = 30
    joint = np.random.default_rng(m).dirichlet(np.full(m * m, 0.5)).reshape(m, m)
    dist = 1.0 - np.eye(m)
    opt = solve_finite(joint, dist, 0.3, "map", "full")
    assert opt.certificate["solver"].startswith("HiGHS on P(S, Z)") and opt.certificate["certified"]
    from privbench.theory.finite.highs_cg import MapColumnGeneration

    cg = MapColumnGeneration(finite_data(joint, dist, "full")).solve(0.3)
    assert opt.value == pytest.approx(cg.value, abs=1e-9)
    assert opt.certificate["budget_violation"] == 0.0 or opt.certificate["budget_violation"] < 1e-12


def test_the_symmetric_pair_keeps_the_column_generation_and_other_distortions_never_reduce():
    from privbench.datasets import SymmetricPair

    sc = SymmetricPair(30, 0.4)
    opt = solve_finite(sc.joint(), sc.distortion_matrix(), 0.3, "map", "full")
    assert opt.certificate["solver"] == "HiGHS"  # its first round finishes
    m = 30
    joint = np.random.default_rng(m).dirichlet(np.full(m * m, 0.5)).reshape(m, m)
    dist = 1.0 - np.eye(m)
    dist[0, 1] = 0.5  # not Hamming
    opt = solve_finite(joint, dist, 0.3, "map", "full")
    assert opt.certificate["solver"] == "HiGHS" and opt.certificate["certified"]


def test_a_small_full_hamming_program_goes_to_the_reduced_lp_first_and_matches_cvxpy(sparse_joint):
    # at the whole LP's size (here 10 x 100 entries) the reduced LP answers first
    joint = sparse_joint(11, 10, 10)
    dist = 1.0 - np.eye(10)
    opt = solve_finite(joint, dist, 0.3, "map", "full")
    assert opt.certificate["solver"].startswith("HiGHS on P(S, Z)") and opt.certificate["certified"]
    assert opt.value == pytest.approx(solve_finite(joint, dist, 0.3, "map", "full", solver="cvxpy").value, abs=1e-7)


def test_where_the_interior_point_stops_short_the_simplex_answers(monkeypatch):
    # HiGHS's interior point ends with status Unknown on this program (random full m = 30, budget 0.1); with the
    # interior point forced on it, the reduced LP runs the dual simplex instead and still certifies
    from privbench.theory.finite import hamming_map

    monkeypatch.setattr(hamming_map, "IPM_MIN", 0)
    m = 30
    joint = np.random.default_rng(m).dirichlet(np.full(m * m, 0.5)).reshape(m, m)
    data = finite_data(joint, 1.0 - np.eye(m), "full")
    import highspy

    raw = HammingFullMap(joint, 1.0, data)  # the interior point alone, as HiGHS leaves it
    raw.h.changeRowBounds(2 * raw.big + m, -highspy.kHighsInf, 0.1)
    raw.h.run()
    if raw.h.getModelStatus() == highspy.HighsModelStatus.kOptimal:
        pytest.skip("this HiGHS's interior point solves the program: the fallback is not exercised")
    r = HammingFullMap(joint, 1.0, data).certified(0.1, 1e-7)
    assert r is not None and r.value - r.bound <= 1e-9
    assert r.value == pytest.approx(MapLP(data).solve(0.1).value, abs=1e-9)
