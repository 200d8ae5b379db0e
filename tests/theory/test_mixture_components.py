"""The certified sandwich for any binary-S mixture of 1-D Gaussians (theory/mixture/model.py).

References computed another way: adaptive quadrature of the class densities (cell
moments, the additive-noise mechanism's exact MAP accuracy), the generic finite
program of theory/finite on the same cells (brute force of the achievable end), the
binary-gmm sandwich (a class split into identical components is the same model) and
the independent case (optimum = max prior / 0 nats).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import quad
from scipy.stats import norm

from privbench.datasets import BinaryGMM, InputError
from privbench.theory.finite.solve import solve_finite
from privbench.theory.mixture.achievable import achievable
from privbench.theory.mixture.certified import certified_sandwich
from privbench.theory.mixture.discretize import discretize
from privbench.theory.mixture.model import ComponentMixture
from privbench.theory.mixture.relaxation import relaxation

COARSE = ((0.5, 0.5, 1.0, 0.5),)
BIMODAL = ComponentMixture(0.4, ((0.5, -2.5, 0.8), (0.5, 1.5, 0.6)), ((0.7, 0.0, 0.7), (0.3, 3.0, 1.0)))


def class_density(comps, weight):
    return lambda u: weight * sum(w * norm.pdf(u, m, s) for w, m, s in comps)


def test_cell_moments_of_k_components_match_quadrature():
    disc = discretize(BIMODAL, 0.9, 0.9, radius=3.0)
    for s, (comps, weight) in enumerate(((BIMODAL.class0, 0.6), (BIMODAL.class1, 0.4))):
        f = class_density(comps, weight)
        for j in (0, 3, len(disc.cells) // 2, len(disc.cells) - 1):
            a, b = disc.cells.lo[j], disc.cells.hi[j]
            for k, got in enumerate((disc.mass[s, j], disc.m1[s, j], disc.m2[s, j])):
                assert got == pytest.approx(quad(lambda u: u**k * f(u), a, b, limit=200)[0], abs=1e-9)
    assert disc.mass.sum(axis=1) == pytest.approx([0.6, 0.4], abs=1e-13)


@pytest.mark.parametrize("observation", ["useful", "full"])
def test_achievable_end_agrees_with_the_generic_finite_program(observation):
    disc = discretize(BIMODAL, 1.2, 1.2, radius=100.0, tails=3.0)
    n = len(disc.cells)
    joint = np.zeros((2, 2 * n))
    joint[0, :n], joint[1, n:] = disc.mass[0], disc.mass[1]
    z = disc.bins.atom
    dist = np.vstack([(z[None, :] ** 2 * disc.mass[s][:, None] - 2 * z[None, :] * disc.m1[s][:, None]
                       + disc.m2[s][:, None]) / disc.mass[s][:, None] for s in (0, 1)])
    kernel = "useful" if observation == "full" else np.tile(np.vstack([np.eye(n), np.eye(n)]), (2, 1))
    for budget in (0.8, 2.0):
        got = achievable(disc, budget, "map", observation)
        assert got["distortion"] <= budget
        assert got["value"] == pytest.approx(solve_finite(joint, dist, budget, "map", kernel).value, abs=2e-6)


def test_identical_components_give_the_binary_gmm_sandwich():
    sc = BinaryGMM(prior=0.6, mu=1.0, sigma0=1.0, sigma1=0.7)
    split = ComponentMixture(0.6, ((0.3, -1.0, 1.0), (0.7, -1.0, 1.0)), ((1.0, 1.0, 0.7),))
    a = certified_sandwich(sc, 0.5, "map", "full", levels=COARSE, rounds=0)
    b = certified_sandwich(split, 0.5, "map", "full", levels=COARSE, rounds=0)
    assert b["lower"] == pytest.approx(a["lower"], abs=1e-7) and b["upper"] == pytest.approx(a["upper"], abs=1e-7)


@pytest.mark.parametrize("privacy,exact", [("map", 0.65), ("mi", 0.0)])
def test_independent_s_and_u_contain_the_exact_optimum(privacy, exact):
    same = ((0.4, -2.0, 1.0), (0.6, 1.0, 0.5))
    got = certified_sandwich(ComponentMixture(0.35, same, same), 1.0, privacy, "full", levels=COARSE, rounds=0)
    assert got["lower"] - 1e-7 <= exact <= got["upper"] + 1e-7
    assert got["upper"] == pytest.approx(exact, abs=1e-6)


def test_lower_end_is_below_the_exact_additive_noise_mechanism():
    budget = 0.1  # Z = U + N(0, D): distortion D, exact MAP accuracy by quadrature
    f0 = lambda z: 0.6 * sum(w * norm.pdf(z, m, np.hypot(s, np.sqrt(budget))) for w, m, s in BIMODAL.class0)  # noqa: E731
    f1 = lambda z: 0.4 * sum(w * norm.pdf(z, m, np.hypot(s, np.sqrt(budget))) for w, m, s in BIMODAL.class1)  # noqa: E731
    acc = quad(lambda z: max(f0(z), f1(z)), -20, 20, limit=400, points=[-2.5, 0.0, 1.5, 3.0])[0]
    for observation in ("useful", "full"):
        low = relaxation(discretize(BIMODAL, 0.8, 0.4, radius=6.0), budget, "map", observation)["value"]
        assert low <= acc + 1e-7
        assert low > 0.6 + 0.01  # and says something beyond the trivial bound


def test_bad_components_are_refused():
    with pytest.raises(InputError, match="sum to 1"):
        ComponentMixture(0.5, ((0.5, 0.0, 1.0),), ((1.0, 1.0, 1.0),))
    with pytest.raises(InputError, match="> 0"):
        ComponentMixture(0.5, ((1.0, 0.0, -1.0),), ((1.0, 1.0, 1.0),))
    with pytest.raises(InputError, match="prior"):
        ComponentMixture(1.0, ((1.0, 0.0, 1.0),), ((1.0, 1.0, 1.0),))
