"""The relaxation's likelihood-ratio split of the bins (privbench.theory.mixture.ratio_split).

References computed another way: the exact leakage of achievable piecewise-constant
mechanisms on finer grids (points the lower end may never beat), the two-point
measures on a bin that make the moment constraint tight (checked by hand below), and
the first version of the split (the single threshold 1) as the first-order baseline.
"""

from __future__ import annotations

import numpy as np
import pytest

from privbench.datasets import BinaryGMM
from privbench.theory.mixture.achievable import achievable, leakage_of
from privbench.theory.mixture.discretize import discretize
from privbench.theory.mixture.ratio_split import guess_thresholds
from privbench.theory.mixture.relaxation import relaxation

SC = BinaryGMM(prior=0.5, mu=1.0, sigma0=1.0, sigma1=1.0)
BUDGET = 0.5
BINS = (0.5, 0.25, 0.125)


def _lower_ends(thresholds_one: bool) -> list[float]:
    out, previous = [], None
    for step in BINS:
        disc = discretize(SC, 1.0, step, 3.0, tails=4.0)
        thr = np.ones((len(disc.bins) - 2, 1)) if thresholds_one else None
        got = relaxation(disc, BUDGET, "mi", "full", previous=previous, thresholds=thr)
        previous = (got["bin_edges"], got["p_sz"])
        out.append(got["value"])
    return out


def test_lower_end_converges_second_order_in_the_bin_width_and_stays_below_achievable_mechanisms():
    # cells fixed at 1 sd, bins 0.5, 0.25, 0.125: the increments of the lower end shrink by a factor
    # <= 0.3 per halving (second order: 1/4; the first version with the single threshold 1: about 0.6)
    low = _lower_ends(thresholds_one=False)
    assert (low[2] - low[1]) <= 0.3 * (low[1] - low[0])
    # every lower end stays below the exact leakage of a concrete mechanism (a finer piecewise-constant one)
    upper = achievable(discretize(SC, 0.125, 0.125, 3.0, tails=4.0), BUDGET, "mi", "full")
    assert upper["distortion"] <= BUDGET
    assert max(low) <= upper["value"]
    assert upper["value"] - low[2] <= 2e-3  # and close to it: the split removed the first-order slack


def test_the_single_threshold_split_is_first_order_and_looser():
    base = _lower_ends(thresholds_one=True)
    assert (base[2] - base[1]) >= 0.4 * (base[1] - base[0])
    assert base[2] < _lower_ends(thresholds_one=False)[2] - 1e-3


def test_thresholds_follow_the_previous_ratio_and_always_hold_one():
    old_edges = np.array([0.0, 1.0, 2.0])
    p_sz = np.array([[0.1, 0.2, 0.1, 0.1], [0.1, 0.1, 0.4, 0.1]])  # bin (1, 2] has ratio 4
    thr = guess_thresholds(np.array([1.0, 1.5, 2.0]), np.array([0.5, 0.5]), (old_edges, p_sz))
    assert thr.shape[0] == 2 and np.all(np.diff(thr, axis=1) >= 0)
    assert np.any(np.isclose(thr, 1.0), axis=1).all()
    assert np.any(np.isclose(thr, 4.0 * np.exp(0.05)), axis=1).all()


@pytest.mark.parametrize("privacy", ["map", "mi"])
def test_split_is_valid_for_a_mechanism_that_places_the_classes_apart_inside_bins(privacy):
    # Z = U + shift_s rounded to the quarter-grid: the classes land at different points of one bin of
    # width 1; the relaxation with bins of width 1 must not beat its exact leakage
    sc = BinaryGMM(prior=0.7, mu=1.0, sigma0=1.0, sigma1=0.6)
    fine = discretize(sc, 0.25, 0.25, radius=3.0, tails=4.0)
    chans = []
    for s, shift in ((0, 0.6), (1, -0.35)):
        target = fine.cells.atom[fine.pj] + shift
        w = np.exp(-0.5 * ((fine.bins.atom[fine.pk] - target) / 0.2) ** 2)
        chans.append(w / np.bincount(fine.pj, w, minlength=len(fine.cells))[fine.pj])
    chan = np.stack(chans)
    dist = float((fine.exact_pair_distortion() * chan).sum())
    p_sz = np.stack([np.bincount(fine.pk, fine.mass[s, fine.pj] * chan[s], minlength=len(fine.bins))
                     for s in (0, 1)])
    exact = leakage_of(p_sz, privacy)
    coarse = discretize(sc, 1.0, 1.0, radius=3.0, tails=4.0)
    assert relaxation(coarse, dist, privacy, "full")["value"] <= exact + 1e-7
    assert relaxation(coarse, dist, privacy, "full", previous=(fine.bins.edges, p_sz))["value"] <= exact + 1e-7
