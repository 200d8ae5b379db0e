"""The certified bracket between stored budgets (theory/mixture/interpolate.py) and I(S; U) of the mixture."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import norm

from privbench.datasets import BinaryGMM
from privbench.theory import optimum
from privbench.theory.mixture.identity import identity_mi
from privbench.theory.mixture.interpolate import interpolated_lower, interpolated_upper, sandwich_at

MISMATCH = BinaryGMM(prior=0.75, mu=3.0, sigma0=2.0, sigma1=1.0)


def convex(d):
    return 0.5 + 0.4 * np.exp(-np.asarray(d) / 2.0)  # non-increasing and convex, like OPT(D)


def test_bracket_contains_a_convex_curve_from_noisy_sandwiches():
    rng = np.random.default_rng(3)
    budgets = np.arange(1.0, 10.0)
    for _ in range(20):
        lo_w, up_w = rng.uniform(0, 0.01, budgets.size), rng.uniform(0, 0.01, budgets.size)
        dist = budgets - rng.uniform(0, 0.05, budgets.size)  # achieving mechanisms under the budget
        rows = [{"budget": b, "lower": convex(b) - lw, "upper": convex(x) + uw, "upper_distortion": x}
                for b, x, lw, uw in zip(budgets, dist, lo_w, up_w)]
        anchors = [(0.0, convex(0.0)), (30.0, 0.5)]
        for d in np.linspace(0.0, 12.0, 241):
            low, up = sandwich_at(rows, d, 0.5, anchors)
            assert low - 1e-12 <= convex(d) <= up + 1e-12


def test_exact_rows_give_the_curve_at_the_budgets_and_convexity_beats_monotonicity():
    rows = [(b, float(convex(b)), float(convex(b))) for b in (1.0, 2.0, 3.0)]
    for b, v, _ in rows:
        assert interpolated_lower(rows, b, 0.5) == pytest.approx(v, abs=1e-15)
        assert interpolated_upper([(x, y) for x, y, _ in rows], b) == pytest.approx(v, abs=1e-15)
    # between budgets the chord extensions lift the lower end above the monotone step convex(2)
    d = 1.5
    chord = convex(2.0) + 0.5 * (convex(2.0) - convex(3.0))
    assert interpolated_lower(rows, d, 0.5) == pytest.approx(chord, abs=1e-15)
    assert chord > convex(2.0) and chord <= convex(d)
    assert interpolated_upper([(x, y) for x, y, _ in rows], d) == pytest.approx(0.5 * (convex(1.0) + convex(2.0)))
    assert interpolated_upper([(1.0, 0.7)], 0.5) == np.inf  # nothing achievable at that distortion


def test_identity_mi_against_a_fine_grid():
    u = np.linspace(-40, 40, 800_001)
    a = 0.25 * norm.pdf(u, -3.0, 2.0)
    b = 0.75 * norm.pdf(u, 3.0, 1.0)
    tot = a + b
    with np.errstate(divide="ignore", invalid="ignore"):
        f = np.where(a > 0, a * np.log(a / (0.25 * tot)), 0.0) + np.where(b > 0, b * np.log(b / (0.75 * tot)), 0.0)
    assert identity_mi(MISMATCH) == pytest.approx(np.trapezoid(f, u), abs=1e-8)
    assert identity_mi(BinaryGMM(prior=0.3, mu=0.0, sigma0=1.0, sigma1=1.0)) == pytest.approx(0.0, abs=1e-10)


def test_off_grid_budgets_are_bracketed_without_solving_and_respect_the_family():
    # the committed table holds D = 1..9; 2.97 lies between: no solve (fast), a valid band
    for d in (0.4, 2.97, 3.5, 12.0):
        opt = optimum(MISMATCH, d, "map", "full", "certified")
        fam = optimum(MISMATCH, d, "map", "full", "general")  # an achievable mechanism: >= OPT >= lower
        assert opt.bound_kind == "certified" and opt.certificate["interpolated"]
        assert opt.lower <= fam.value + 1e-9 and opt.lower <= opt.value
    at3 = optimum(MISMATCH, 3.0, "map", "full", "certified")
    near = optimum(MISMATCH, 2.97, "map", "full", "certified")
    assert near.lower >= at3.lower and near.value <= optimum(MISMATCH, 2.0, "map", "full", "certified").value
    assert near.value - near.lower < 2e-3  # close to the stored rows' widths (7e-4, 6e-4)
