"""Mirror descent alone (theory/finite/mirror.py) and the certificate's treatment of nearly unused
releases, against the cvxpy program of program.py (Clarabel, an independent solver).

The mirror-descent step's projection finds the budget's multiplier from unnormalised exponentials
and judges each step from the rows' log-normalisers (no pass over the channel for the KL term):
these tests check what that must preserve -- the returned channel is row-stochastic and meets the
budget, its value is the optimum, the bound stays below the optimum, and a suboptimal channel is
not certified.
"""

from __future__ import annotations

import numpy as np
import pytest

from privbench.theory.finite.active_set import ActiveSetSolver
from privbench.theory.finite.data import finite_data
from privbench.theory.finite.leakage import SMOOTH_LEAKAGES
from privbench.theory.finite.mirror import solve_smooth, support_mask
from privbench.theory.finite.program import solve_conic


def _instance(seed: int):
    rng = np.random.default_rng(100 + seed)
    n_s, n_u, n_z = (int(x) for x in rng.integers(2, 6, size=3))
    joint = rng.dirichlet(np.full(n_s * n_u, 0.7)).reshape(n_s, n_u)
    dist = rng.uniform(0.0, 1.0, size=(n_u, n_z)) if seed % 2 else 1.0 - np.eye(n_u, n_z)
    return joint, dist


def _inside_budget(data, frac: float) -> float:
    hi = float(data.cost.sum(axis=0).min())  # the best constant release
    return data.min_distortion + frac * (hi - data.min_distortion)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("observation", ["useful", "full"])
@pytest.mark.parametrize("privacy", ["mi", "chi2"])
def test_mirror_descent_alone_reaches_the_cvxpy_optimum_with_a_valid_bound(seed, observation, privacy):
    joint, dist = _instance(seed)
    data = finite_data(joint, dist, observation)
    for frac in (0.2, 0.6):
        budget = _inside_budget(data, frac)
        ref = solve_conic(joint, dist, budget, privacy, observation).value
        out = solve_smooth(data, budget, privacy, tol=1e-7, max_iter=20_000)
        c = out.channel
        assert np.all(c >= 0) and np.allclose(c.sum(axis=1), 1.0, atol=1e-12)
        assert float((data.cost * c).sum()) <= budget + 1e-12 * max(1.0, budget)
        value = SMOOTH_LEAKAGES[privacy](np.asarray(data.g_s @ c), data.p_s).value
        assert value == pytest.approx(out.value, abs=1e-13)  # the value is the channel's own
        assert out.value - out.bound <= 1e-7 * max(1.0, out.value)  # certified ...
        assert out.bound <= ref + 1e-7  # ... by a bound below the optimum
        assert out.value == pytest.approx(ref, abs=1e-6)


@pytest.mark.parametrize("privacy", ["mi", "chi2"])
def test_a_suboptimal_start_is_not_certified(privacy):
    """Injected: a channel mixed 30% with the uniform one and no step taken (max_iter=0): the
    bound computed at it stays below the optimum and far from its value."""
    joint, dist = _instance(1)
    data = finite_data(joint, dist, "full")
    budget = _inside_budget(data, 0.5)
    ref = solve_conic(joint, dist, budget, privacy, "full").value
    opt = solve_smooth(data, budget, privacy, tol=1e-9, max_iter=20_000)
    bad = solve_smooth(data, budget, privacy, warm=opt.channel, tol=1e-7, max_iter=0, mix=0.3)
    assert bad.value > ref + 1e-4  # clearly suboptimal ...
    assert bad.bound <= ref + 1e-7 and bad.value - bad.bound > 1e-4  # ... and not certified


def test_interior_point_leftovers_on_unused_releases_still_certify():
    """The random joint of the scale benchmark (m = 20, useful, Hamming, budget 0.3): the interior
    point leaves ~1e-13 on two releases the optimum does not use. The tangent there is a poor
    minorant (its bound was 0 before leakage.UNUSED counted such releases as unused); the
    certificate must close on the whole program's answer."""
    m = 20
    joint = np.random.default_rng(m).dirichlet(np.full(m * m, 0.5)).reshape(m, m)
    dist = 1.0 - np.eye(m)
    data = finite_data(joint, dist, "useful")
    out = ActiveSetSolver(data, "mi").solve_whole(0.3, 1e-7, support_mask(data, 0.3))
    ref = solve_conic(joint, dist, 0.3, "mi", "useful").value
    p_z = np.asarray(data.g_s @ out.channel).sum(axis=0)
    assert 0 < p_z.min() < 1e-9 * p_z.max()  # the case: a nearly, not exactly, unused release
    assert out.value - out.bound <= 1e-7 * max(1.0, out.value) and out.bound <= ref + 1e-7
    assert out.value == pytest.approx(ref, abs=1e-6)
