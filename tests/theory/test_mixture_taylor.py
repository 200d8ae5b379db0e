"""The second-order coupling of the useful relaxation (theory.mixture.taylor), checked against quadrature.

For any kernel r(u) in [0, 1] on a cell, the two classes' pair masses and moments are integrals of r
against the weighted class densities; the coupling's two bands must hold for every such kernel
(computed here by quadrature on a fine grid, independently of the module), and the mass band must
shrink at second order in the cell width.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import norm

from privbench.datasets import BinaryGMM
from privbench.theory.mixture.achievable import achievable
from privbench.theory.mixture.cells import Grid, uniform_edges
from privbench.theory.mixture.discretize import discretize
from privbench.theory.mixture.relaxation import relaxation
from privbench.theory.mixture.taylor import TOUCH_POINTS, taylor_coupling

MODELS = [  # (weights, means, sds)
    (np.array([0.5, 0.5]), np.array([-3.0, 3.0]), np.array([2.0, 1.0])),
    (np.array([0.25, 0.75]), np.array([-1.0, 1.0]), np.array([1.0, 0.7])),
    (np.array([0.6, 0.4]), np.array([-0.5, 0.5]), np.array([1.0, 1.0])),
]


def _kernels(rng: np.random.Generator, u: np.ndarray) -> list[np.ndarray]:
    lo, hi = u[0], u[-1]
    cut = lo + rng.uniform(0.05, 0.95) * (hi - lo)
    return [rng.uniform(size=u.size), (u < cut).astype(float), (u > cut).astype(float),
            np.clip(np.sin(rng.uniform(1, 60) * u + rng.uniform(0, 6)), 0, 1), np.ones_like(u)]


@pytest.mark.parametrize("model", range(len(MODELS)))
def test_the_coupling_holds_for_every_kernel_by_quadrature(model):
    weights, means, sds = MODELS[model]
    cells = Grid(uniform_edges(means, sds, 0.5, tails=4.0))
    tables = taylor_coupling(cells, weights, means, sds)
    rng = np.random.default_rng(model)
    checked = 0
    for j in range(1, len(cells) - 1):
        u = np.linspace(cells.lo[j], cells.hi[j], 2001)
        dens = [weights[s] * norm.pdf(u, means[s], sds[s]) for s in (0, 1)]
        for r in _kernels(rng, u):
            for a, b, t in tables:
                assert t["valid"][j]
                c = t["centre"][j]

                def integral(f):
                    return np.trapezoid(f * r, u)

                pa, pb = integral(dens[a]), integral(dens[b])
                ca, cb = integral((u - c) * dens[a]), integral((u - c) * dens[b])
                wa = integral((u - c) ** 2 * dens[a])
                mass = pb - t["kappa"][j] * pa - t["d1"][j] * ca
                moment = cb - t["kappa"][j] * ca - t["d1"][j] * wa
                tol = 1e-9 * max(pb, pa, 1e-300)  # quadrature error
                assert 0.5 * t["k2_lo"][j] * wa - tol <= mass <= 0.5 * t["k2_hi"][j] * wa + tol
                assert abs(moment) <= 0.5 * t["third"][j] * wa + tol
                for touch in t["touch"]:  # the minorants and majorants touching kappa off the midpoint
                    lo, hi = (touch[f"alpha_{e}"][j] * pa + touch[f"beta_{e}"][j] * ca + touch[f"gamma_{e}"][j] * wa
                              for e in ("lo", "hi"))
                    assert lo - tol <= pb <= hi + tol
                checked += 1
    assert checked > 100
    assert not any(t["valid"][0] or t["valid"][-1] for _, _, t in tables)  # the unbounded tail cells


def test_the_mass_band_shrinks_at_second_order_in_the_cell_width():
    # band width relative to the pair's mass: (k2_hi - k2_lo) h^2 / (2 kappa), h the half-width, at a fixed point
    weights, means, sds = MODELS[0]
    widths = []
    for step in (0.4, 0.2, 0.1):
        cells = Grid(uniform_edges(means, sds, step))
        j = int(np.searchsorted(cells.edges, 0.0))  # the cell just right of 0
        t = taylor_coupling(cells, weights, means, sds)[0][2]
        h = 0.5 * (cells.hi[j] - cells.lo[j])
        widths.append((t["k2_hi"][j] - t["k2_lo"][j]) * h**2 / (2 * t["kappa"][j]))
    assert widths[0] / widths[1] > 3.5 and widths[1] / widths[2] > 3.5


def test_a_kernel_near_a_touch_point_is_held_to_its_own_ratio():
    # a kernel on [c + 0.45 h, c + 0.55 h]: the band of the minorant / majorant touching at c + h / 2 is
    # much narrower than the midpoint expansion's, and both contain the true class-b mass
    weights, means, sds = MODELS[0]
    cells = Grid(uniform_edges(means, sds, 0.4))
    j = int(np.searchsorted(cells.edges, 0.0))
    a, b, t = taylor_coupling(cells, weights, means, sds)[0]
    c, h = t["centre"][j], 0.5 * (cells.hi[j] - cells.lo[j])
    u = np.linspace(c + 0.45 * h, c + 0.55 * h, 2001)
    pa, pb = (np.trapezoid(weights[s] * norm.pdf(u, means[s], sds[s]), u) for s in (a, b))
    ca = np.trapezoid((u - c) * weights[a] * norm.pdf(u, means[a], sds[a]), u)
    wa = np.trapezoid((u - c) ** 2 * weights[a] * norm.pdf(u, means[a], sds[a]), u)
    base = t["kappa"][j] * pa + t["d1"][j] * ca
    mid = 0.5 * (t["k2_hi"][j] - t["k2_lo"][j]) * wa
    touch = t["touch"][list(TOUCH_POINTS).index(0.5)]
    lo, hi = (touch[f"alpha_{e}"][j] * pa + touch[f"beta_{e}"][j] * ca + touch[f"gamma_{e}"][j] * wa for e in ("lo", "hi"))
    assert base + 0.5 * t["k2_lo"][j] * wa <= pb <= base + 0.5 * t["k2_hi"][j] * wa
    assert lo <= pb <= hi
    assert hi - lo < mid / 20


def test_the_useful_relaxation_with_the_coupling_tightens_and_stays_below_a_mechanism():
    # adding valid constraints can only raise the lower end; a concrete mechanism's exact leakage bounds it above
    sc = BinaryGMM(prior=0.5, mu=3.0, sigma0=2.0, sigma1=1.0)
    disc = discretize(sc, 0.8, 0.4, radius=8.0)
    upper = achievable(discretize(sc, 0.4, 0.4, radius=8.0), 2.0, "mi", "useful")["value"]
    without = relaxation(disc, 2.0, "mi", "useful", taylor=False, ratio_limit=1e3)["value"]
    with_ = relaxation(disc, 2.0, "mi", "useful", ratio_limit=1e3)["value"]
    assert without - 1e-7 <= with_ <= upper
    assert with_ > without + 1e-3
