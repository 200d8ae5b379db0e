"""The privacy funnel's known facts, on the certified sandwich of theory/funnel.

Each check uses only the sandwich's guarantee (lower <= optimum <= upper) and values
computed here from the joint pmf, never the code under test's own numbers.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import entr

from privbench.datasets import InputError
from privbench.datasets.scenarios import make_scenario
from privbench.theory import optimum, supported
from privbench.theory.funnel import funnel_optimum


def _h(p):
    return float(entr(np.clip(np.asarray(p, dtype=float), 0, None)).sum())


def _mi(joint):
    return _h(joint.sum(axis=1)) + _h(joint.sum(axis=0)) - _h(joint)


SP3 = make_scenario("symmetric-pair", {"m": "3", "p": "0.2"}).joint()
SKEWED = np.array([[0.45, 0.15], [0.05, 0.35]])


def test_curve_is_non_increasing_and_convex_in_the_budget():
    h_u = _h(SP3.sum(axis=0))
    budgets = np.linspace(0.0, h_u, 7)
    ends = [funnel_optimum(SP3, b, "mi", "useful") for b in budgets]
    upper = np.array([o.value for o in ends])
    lower = np.array([o.lower for o in ends])
    width = upper - lower
    assert np.all(width <= 1e-4 + 1e-12)
    # OPT(b_{i+1}) <= OPT(b_i): upper_{i+1} - width_{i+1} <= OPT_{i+1} <= OPT_i <= upper_i
    assert np.all(upper[1:] - width[1:] <= upper[:-1] + 1e-12)
    # convexity: OPT(mid) <= (OPT(a) + OPT(b)) / 2, so lower(mid) <= mean of the upper ends
    for a, b in [(0, 2), (1, 3), (2, 4), (3, 5), (4, 6), (0, 6)]:
        mid = funnel_optimum(SP3, 0.5 * (budgets[a] + budgets[b]), "mi", "useful")
        assert mid.lower <= 0.5 * (upper[a] + upper[b]) + 1e-12
    assert upper[0] > upper[3] > upper[-1]  # strictly informative at this model


@pytest.mark.parametrize("observation", ["useful", "full"])
def test_no_utility_leaks_nothing(observation):
    """R = 0, i.e. D = H(U): a constant release; the optimum is 0."""
    opt = funnel_optimum(SKEWED, _h(SKEWED.sum(axis=0)), "mi", observation)
    assert opt.lower <= 0.0 <= opt.value + 1e-15
    assert opt.value == pytest.approx(0.0, abs=1e-15)


@pytest.mark.parametrize("joint", [SP3, SKEWED], ids=["symmetric-pair", "skewed"])
@pytest.mark.parametrize("observation", ["useful", "full"])
def test_full_utility_leaks_the_mutual_information(joint, observation):
    """D = 0 (R = H(U)): Z determines U, so the optimum is I(S; U) (also when W = (S, U))."""
    if observation == "full" and joint.size > 4:
        pytest.skip("|W| = 9: refinement to 1e-4 takes longer than a CI test should")
    opt = funnel_optimum(joint, 0.0, "mi", observation)
    assert opt.lower - 1e-12 <= _mi(joint) <= opt.value + 1e-12
    assert opt.value - opt.lower <= 1e-4


@pytest.mark.parametrize("observation", ["useful", "full"])
def test_independent_s_and_u_leak_nothing_at_any_budget(observation):
    joint = np.outer([0.3, 0.7], [0.2, 0.5, 0.3]) if observation == "useful" else np.outer([0.3, 0.7], [0.6, 0.4])
    for budget in (0.0, 0.2, 0.5):
        opt = funnel_optimum(joint, budget, "mi", observation, time_limit=1.0)  # the ends, not their width
        assert opt.value == pytest.approx(0.0, abs=1e-9)
        assert opt.lower <= 1e-9


def _dependent():
    rng = np.random.default_rng(5)
    wide = rng.dirichlet(np.ones(6)).reshape(2, 3)  # 3 columns P(S | u) in R^2: dependent
    cond = np.array([[0.7, 0.1], [0.2, 0.3], [0.1, 0.6]])  # P(S | u) for u = 0, 1 ...
    cond = np.column_stack([cond, 0.4 * cond[:, 0] + 0.6 * cond[:, 1]])  # ... and u = 2 a mixture of them
    return {"2x3-random": wide, "3x3-mixture-column": cond * np.array([0.3, 0.3, 0.4])}


def _independent():
    rng = np.random.default_rng(6)
    square = rng.dirichlet(np.ones(9)).reshape(3, 3)
    assert np.linalg.matrix_rank(square) == 3
    return {"binary": make_scenario("binary", {"p": "0.3", "q": "0.2"}).joint(), "3x3-random": square}


@pytest.mark.parametrize("name,joint", list(_dependent().items()))
def test_perfect_privacy_at_positive_utility_with_dependent_columns(name, joint):
    """Columns P(S | u) linearly dependent: some I(U; Z) > 0 leaks nothing (Z moves along the null space)."""
    assert np.linalg.matrix_rank(joint / joint.sum(axis=0)) < joint.shape[1]
    budget = _h(joint.sum(axis=0)) - 0.01  # R = 0.01 nats
    opt = funnel_optimum(joint, budget, "mi", "useful")
    assert opt.lower <= 1e-9
    assert opt.value <= 1e-4


@pytest.mark.parametrize("name,joint", list(_independent().items()))
def test_no_perfect_privacy_with_independent_columns(name, joint):
    """Columns linearly independent: every I(U; Z) > 0 leaks, certified by the lower end."""
    assert np.linalg.matrix_rank(joint / joint.sum(axis=0)) == joint.shape[1]
    budget = _h(joint.sum(axis=0)) - 0.05  # R = 0.05 nats
    opt = funnel_optimum(joint, budget, "mi", "useful")
    assert opt.lower > 1e-5


def test_optimum_dispatches_logloss_to_the_certified_funnel():
    sc = make_scenario("symmetric-pair", {"m": "3", "p": "0.2"})
    assert ("mi", "useful") in supported(sc, "logloss")
    opt = optimum(sc, 0.4, "mi", "useful", distortion="logloss")
    assert opt.bound_kind == "certified" and opt.lower <= opt.value
    # the scenario's own distortion still goes to its own provider
    assert optimum(sc, 0.4, "mi", "useful", distortion="hamming").bound_kind == "exact"
    with pytest.raises(InputError, match="distortion='bogus' is unknown"):
        optimum(sc, 0.4, "mi", "useful", distortion="bogus")
    with pytest.raises(InputError, match="distortion=mse"):
        optimum(sc, 0.4, "mi", "useful", distortion="mse")


@pytest.mark.parametrize("privacy", ["map", "chi2"])
def test_map_and_chi2_sandwich_the_brute_force_minimum(privacy):
    """The envelope argument carries over to every leakage that averages a convex per-posterior cost."""
    joint, budget = SKEWED, 0.3
    p_w = joint.sum(axis=0)
    grid = np.linspace(0, 1, 201)
    # channels W -> Z in {0, 1, 2}: row 0 = (a, (1-a) c, (1-a)(1-c)), row 1 = (b, 1-b, 0), on a grid
    a, b, c = (x.ravel() for x in np.meshgrid(grid, grid[::4], grid[::8], indexing="ij"))
    rows = np.stack([np.stack([a, (1 - a) * c, (1 - a) * (1 - c)], 1), np.stack([b, 1 - b, 0 * b], 1)], 1)
    p_uz = p_w[None, :, None] * rows  # (K, u, z)
    p_sz = np.einsum("su,kuz->ksz", joint, rows)
    p_z = p_uz.sum(axis=1)
    h_u_z = entr(p_uz).sum(axis=(1, 2)) - entr(p_z).sum(axis=1)
    if privacy == "map":
        value = p_sz.max(axis=1).sum(axis=1)
    else:
        denom = joint.sum(axis=1)[None, :, None] * p_z[:, None, :]
        value = np.where(denom > 0, p_sz**2 / np.where(denom > 0, denom, 1), 0).sum(axis=(1, 2)) - 1
    best = float(value[h_u_z <= budget].min())
    opt = funnel_optimum(joint, budget, privacy, "useful")
    assert opt.lower <= best + 1e-9
    assert opt.value <= best + (opt.value - opt.lower) + 1e-9
