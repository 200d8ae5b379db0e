"""Tests of the certified sandwich for the binary Gaussian mixture (privbench.theory.mixture.certified).

References computed another way: the generic finite convex programs of
``theory/finite/program.py`` on the same cells (brute force of the achievable
end), exact leakage of random piecewise-constant mechanisms on a finer grid
(feasible points the lower end may never beat), GAP's family mechanisms (achievable
points), adaptive quadrature of truncated-normal moments, and the degenerate
mixture where S and U are independent (optimum = max prior / 0 nats).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import quad
from scipy.stats import norm

from privbench.datasets import BinaryGMM, InputError
from privbench.theory.finite.solve import solve_finite
from privbench.theory.mixture import mixture_optimum
from privbench.theory.mixture.achievable import achievable, leakage_of
from privbench.theory.mixture.cells import Grid, cell_moments
from privbench.theory.mixture.conic import SETTLED
from privbench.theory.mixture.certified import certified_sandwich
from privbench.theory.mixture.discretize import discretize
from privbench.theory.mixture.relaxation import NARROW_LIMIT, RATIO_LIMIT, relaxation
from privbench.theory.mixture.stored import stored_sandwich

COARSE = ((0.5, 0.5, 1.0, 0.5),)
MISMATCH = BinaryGMM(prior=0.75, mu=3.0, sigma0=2.0, sigma1=1.0)


def test_cell_moments_match_quadrature():
    grid = Grid(np.array([-3.0, -0.5, 0.25, 2.0]))
    mass, m1, m2 = cell_moments(grid, 0.7, 1.3, 0.4)
    for i, (a, b) in enumerate(zip(grid.lo, grid.hi)):
        for k, got in enumerate((mass[i], m1[i], m2[i])):
            ref = 0.4 * quad(lambda u: u**k * norm.pdf(u, 0.7, 1.3), a, b)[0]
            assert got == pytest.approx(ref, abs=1e-10)
    assert mass.sum() == pytest.approx(0.4, abs=1e-14)


def _brute_force_upper(disc, budget, privacy, observation):
    """The achievable program rebuilt as a generic finite model: U' = (class, cell)."""
    n = len(disc.cells)
    joint = np.zeros((2, 2 * n))
    joint[0, :n], joint[1, n:] = disc.mass[0], disc.mass[1]
    z = disc.bins.atom
    dist = np.vstack([(z[None, :] ** 2 * disc.mass[s][:, None] - 2 * z[None, :] * disc.m1[s][:, None]
                       + disc.m2[s][:, None]) / disc.mass[s][:, None] for s in (0, 1)])
    if observation == "full":  # W = U' reveals the class
        return solve_finite(joint, dist, budget, privacy, "useful").value
    kernel = np.tile(np.vstack([np.eye(n), np.eye(n)]), (2, 1))  # W = cell only
    return solve_finite(joint, dist, budget, privacy, kernel).value


@pytest.mark.parametrize("privacy", ["map", "mi"])
@pytest.mark.parametrize("observation", ["useful", "full"])
def test_achievable_end_agrees_with_generic_finite_program(privacy, observation):
    sc = BinaryGMM(prior=0.6, mu=1.0, sigma0=1.0, sigma1=0.7)
    disc = discretize(sc, 1.0, 1.0, radius=100.0, tails=3.0)  # every (cell, bin) pair kept
    assert disc.n_pairs == len(disc.cells) * len(disc.bins)
    for budget in (0.6, 1.5):
        got = achievable(disc, budget, privacy, observation)
        assert got["distortion"] <= budget
        assert got["value"] == pytest.approx(_brute_force_upper(disc, budget, privacy, observation), abs=2e-6)


def _random_mechanism_points(sc, observation, rng, n_mech=2):
    """Exact (distortion, MAP, MI) of random piecewise-constant mechanisms on a fine grid."""
    disc = discretize(sc, 0.15, 0.15, radius=2.5, tails=5.0)
    cost = disc.exact_pair_distortion()
    out = []
    for _ in range(n_mech):
        chans = []
        for _s in ((0,) if observation == "useful" else (0, 1)):
            # sharp random channels: a random shift per cell plus a little spread
            w = rng.gamma(0.3, size=disc.n_pairs) * np.exp(-((disc.bins.atom[disc.pk] - disc.cells.atom[disc.pj]
                                                             - rng.normal(0, 1)) ** 2))
            rows = np.bincount(disc.pj, w, minlength=len(disc.cells))
            chans.append(w / rows[disc.pj])
        chan = np.stack(chans * (2 if observation == "useful" else 1))
        p_sz = np.stack([np.bincount(disc.pk, disc.mass[s, disc.pj] * chan[s], minlength=len(disc.bins))
                         for s in (0, 1)])
        out.append((float((cost * chan).sum()), leakage_of(p_sz, "map"), leakage_of(p_sz, "mi")))
    return out


@pytest.mark.parametrize("observation", ["useful", "full"])
def test_lower_end_never_beats_a_feasible_mechanism(observation):
    sc = BinaryGMM(prior=0.7, mu=1.0, sigma0=1.0, sigma1=0.6)
    rng = np.random.default_rng(7)
    for dist, acc, mi in _random_mechanism_points(sc, observation, rng):
        disc = discretize(sc, 0.75, 0.5, radius=4.0)
        assert relaxation(disc, dist, "map", observation)["value"] <= acc + 1e-7
        assert relaxation(disc, dist, "mi", observation)["value"] <= mi + 1e-7


@pytest.mark.parametrize("privacy,exact", [("map", 0.7), ("mi", 0.0)])
@pytest.mark.parametrize("observation", ["useful", "full"])
def test_degenerate_mixture_contains_the_independent_optimum(privacy, exact, observation):
    # mu = 0, equal variances: S is independent of U, so no release can leak anything
    sc = BinaryGMM(prior=0.7, mu=0.0, sigma0=1.0, sigma1=1.0)
    got = certified_sandwich(sc, 0.5, privacy, observation, levels=COARSE)
    assert got["lower"] <= exact + 1e-7 <= got["upper"] + 2e-7
    assert got["upper"] - exact <= 1e-6


@pytest.mark.parametrize("privacy", ["map", "mi"])
def test_budget_beyond_the_variance_reaches_no_leakage(privacy):
    # D >= Var(U): the constant release E[U] meets the budget and leaks nothing
    sc = BinaryGMM(prior=0.5, mu=1.0, sigma0=1.0, sigma1=1.0)  # Var(U) = 2
    got = certified_sandwich(sc, 2.3, privacy, "useful", levels=COARSE)
    exact = 0.5 if privacy == "map" else 0.0
    assert got["lower"] <= exact + 1e-7
    assert got["upper"] - exact <= 5e-4


@pytest.mark.parametrize("budget,observation,family", [(1.0, "full", "general"), (4.0, "useful", "additive")])
def test_sandwich_lies_below_the_family_bounds(budget, observation, family):
    # GAP's family mechanisms are achievable: the optimum over all mechanisms is at most their value
    fam = mixture_optimum(MISMATCH, budget, family).value
    got = certified_sandwich(MISMATCH, budget, "map", observation, levels=COARSE)
    assert got["lower"] <= got["upper"] + 1e-9
    assert got["lower"] <= fam + 1e-9


def test_width_below_1e3_map_full_mismatch_and_the_stored_row_is_reproduced():
    got = certified_sandwich(MISMATCH, 3.0, "map", "full", levels=((0.2, 0.2, 0.4, 0.2),))
    assert got["width"] <= 1e-3
    stored = stored_sandwich(MISMATCH.id, 3.0, "map", "full")  # the committed table, same code
    assert stored is not None and stored["lower"] == pytest.approx(got["lower"], abs=1e-8)
    assert stored["upper"] == pytest.approx(got["upper"], abs=1e-8)
    assert got["upper_distortion"] <= 3.0
    # the observation: ppan-gmm reached 0.805 where the family bound is 0.848
    assert got["upper"] < 0.805 < mixture_optimum(MISMATCH, 3.0, "general").value


def test_bad_input_is_one_line():
    with pytest.raises(InputError, match="privacy='chi2'"):
        certified_sandwich(MISMATCH, 1.0, "chi2", "full")
    with pytest.raises(InputError, match="budget=0"):
        certified_sandwich(MISMATCH, 0.0, "map", "full")


def test_dispatch_serves_the_sandwich_and_keeps_the_family_bounds():
    from privbench.theory import curve, optimum

    sc = BinaryGMM(prior=0.7, mu=0.0, sigma0=1.0, sigma1=1.0)
    opt = optimum(sc, 0.5, "map", "useful", "certified")
    assert opt.bound_kind == "certified" and opt.lower <= 0.7 + 1e-7 <= opt.value + 2e-7
    assert curve(sc, [0.5], "map", "useful", "certified")[0] == opt.value
    assert optimum(sc, 0.5, "map", "useful").bound_kind == "family"  # the default stays GAP's family
    assert optimum(sc, 0.5, "mi", "useful").bound_kind == "certified"  # the only bound for mi


@pytest.mark.parametrize("observation", ["useful", "full"])
def test_achievable_mechanism_checked_by_monte_carlo(observation):
    # release Z from the returned channel on fresh samples; its distortion and MAP accuracy must match
    disc = discretize(MISMATCH, 0.5, 0.5, radius=8.0)
    got = achievable(disc, 3.0, "map", observation)
    chan = got["channel"] if observation == "full" else np.stack([got["channel"]] * 2)
    rng = np.random.default_rng(3)
    n = 200_000
    s = (rng.random(n) < MISMATCH.prior).astype(int)
    u = np.where(s == 1, MISMATCH.mu + MISMATCH.sigma1 * rng.standard_normal(n),
                 -MISMATCH.mu + MISMATCH.sigma0 * rng.standard_normal(n))
    cell = np.searchsorted(disc.cells.edges, u, side="left")  # cell j = (e_{j-1}, e_j]
    z_bin = np.empty(n, dtype=int)
    for c in np.unique(cell):
        rows = np.flatnonzero(disc.pj == c)
        for cls in (0, 1):
            idx = np.flatnonzero((cell == c) & (s == cls))
            p = np.clip(chan[cls, rows], 0, None)
            z_bin[idx] = disc.pk[rows[rng.choice(rows.size, size=idx.size, p=p / p.sum())]]
    sq = (disc.bins.atom[z_bin] - u) ** 2
    assert abs(sq.mean() - got["distortion"]) < 4 * sq.std() / np.sqrt(n)
    joint = np.zeros((2, len(disc.bins)))
    np.add.at(joint, (s, z_bin), 1.0 / n)
    guess = joint.argmax(axis=0)[z_bin]  # plug-in MAP rule; its accuracy on the same draws
    acc = (guess == s).mean()
    assert abs(acc - got["value"]) < 4 * np.sqrt(got["value"] * (1 - got["value"]) / n) + 2e-3


def test_adaptive_round_splits_the_overlap_bins_and_stays_a_valid_lower_end():
    from privbench.theory.mixture.certified import refine_edges

    edges = np.array([0.0, 1.0, 2.0, 3.0])
    p_sz = np.array([[0.1, 0.3, 0.2, 0.0, 0.4], [0.0, 0.3, 0.0, 0.5, 0.2]])  # overlap only in bin (0, 1]
    assert np.array_equal(refine_edges(edges, p_sz), [0.0, 0.5, 1.0, 2.0, 3.0])
    sc = BinaryGMM(prior=0.7, mu=1.0, sigma0=1.0, sigma1=0.6)
    plain = certified_sandwich(sc, 0.1, "map", "full", levels=COARSE, rounds=0, tol=0.0)
    refined = certified_sandwich(sc, 0.1, "map", "full", levels=COARSE, rounds=1, tol=0.0)
    assert 0.7 < plain["lower"] <= refined["lower"] + 1e-9
    assert refined["lower"] <= refined["upper"] + 1e-9
    assert refined["lower"] <= mixture_optimum(sc, 0.1, "general").value + 1e-9


def test_a_level_without_upper_steps_refines_the_lower_end_only():
    sc = BinaryGMM(prior=0.6, mu=1.0, sigma0=1.0, sigma1=0.7)
    one = certified_sandwich(sc, 0.5, "mi", "full", levels=COARSE, rounds=0, tol=0.0)
    two = certified_sandwich(sc, 0.5, "mi", "full", levels=(*COARSE, (None, None, 1.0, 0.25)), rounds=0, tol=0.0)
    assert two["upper"] == one["upper"] and two["upper_grid"] == one["upper_grid"]
    assert two["lower"] > one["lower"] + 1e-4 and two["lower_grid"][1] == pytest.approx(0.25 * 0.7)
    assert two["lower"] <= two["upper"]


def _quantizer_point(sc, step):
    """Exact (distortion, MAP, MI) of Z = the midpoint of U's interval of width ``step`` (quadrature)."""
    edges = np.arange(-12.0, 12.0 + step / 2, step)
    classes = ((1 - sc.prior, -sc.mu, sc.sigma0), (sc.prior, sc.mu, sc.sigma1))
    p_sz = np.array([[w * (norm.cdf(b, m, s) - norm.cdf(a, m, s)) for a, b in zip(edges[:-1], edges[1:])]
                     for w, m, s in classes])
    dist = sum(w * quad(lambda u: (u - 0.5 * (a + b)) ** 2 * norm.pdf(u, m, s), a, b)[0]
               for w, m, s in classes for a, b in zip(edges[:-1], edges[1:]))
    return dist, leakage_of(p_sz, "map"), leakage_of(p_sz, "mi")


@pytest.mark.parametrize("observation", ["useful", "full"])
def test_second_moment_lower_end_tightens_and_stays_below_exact_mechanisms(observation):
    # Z = quantised U spends its whole budget on the spread of U inside a cell, which only the second
    # moments see; Z = U + N(0, D) is the exact Gaussian channel (MI and MAP by quadrature)
    sc = BinaryGMM(prior=0.6, mu=1.0, sigma0=1.0, sigma1=0.7)
    dist, acc, mi = _quantizer_point(sc, 1.0)
    disc = discretize(sc, 1.0, 0.5, radius=4.0)
    for privacy, exact in (("map", acc), ("mi", mi)):
        first = relaxation(disc, dist, privacy, observation, second_moments=False)["value"]
        second = relaxation(disc, dist, privacy, observation)["value"]
        assert first - 1e-7 <= second <= exact + 1e-7
        assert second > first + 1e-3  # the within-cell spread is no longer free
    budget = 0.3
    dens = [lambda z, m=m, s=s, w=w: w * norm.pdf(z, m, np.hypot(s, np.sqrt(budget)))
            for w, m, s in ((0.4, -1.0, 1.0), (0.6, 1.0, 0.7))]
    acc = quad(lambda z: max(dens[0](z), dens[1](z)), -15, 15, limit=400)[0]
    mi = quad(lambda z: sum(d(z) * np.log(d(z) / (w * (dens[0](z) + dens[1](z))))
                            for d, w in zip(dens, (0.4, 0.6)) if d(z) > 0), -15, 15, limit=400)[0]
    assert relaxation(disc, budget, "map", observation)["value"] <= acc + 1e-7
    assert relaxation(disc, budget, "mi", observation)["value"] <= mi + 1e-7


@pytest.fixture(scope="module")
def first_level():
    """The first level's sandwich alone (mi, full), which every capped refinement below must return."""
    return certified_sandwich(CAPPED_MODEL, 0.5, "mi", "full", levels=COARSE, rounds=0, tol=0.0)


CAPPED_MODEL = BinaryGMM(prior=0.6, mu=1.0, sigma0=1.0, sigma1=0.7)


@pytest.mark.parametrize("cap,reason", [({"max_pairs": 1}, "pairs"), ({"time_limit": 0.0}, "time"),
                                        ({"growth": 1e12}, "time")])
def test_a_capped_refinement_stops_after_the_first_level_and_reports_the_width_reached(cap, reason, first_level):
    # the cap of a live point (work, time, predicted time): the finer level is not started, and the
    # result is the first level's sandwich, whose width is reported as reached (not the target)
    sc, one = CAPPED_MODEL, first_level
    finer = (*COARSE, (None, None, 1.0, 0.25))
    capped = certified_sandwich(sc, 0.5, "mi", "full", levels=finer, rounds=1, tol=0.0, **cap)
    assert capped["level"] == 0 and capped["stopped"] == reason and not capped["converged"]
    assert capped["lower"] == pytest.approx(one["lower"], abs=1e-9) and capped["upper"] == one["upper"]
    assert capped["width"] == capped["upper"] - capped["lower"] > 1e-3


def test_a_live_solve_keeps_a_valid_lower_end_within_its_iterations():
    # live: at most 60 Clarabel iterations, the last iterate's dual objective kept where its dual residual
    # is small; it is a lower end of the same program (never above the strict solve's) and close to it
    from privbench.theory.mixture.conic import LIVE, LIVE_DUAL_RESIDUAL

    sc = BinaryGMM(prior=0.6, mu=1.0, sigma0=1.0, sigma1=0.7)
    disc = discretize(sc, 1.0, 0.5, radius=4.0)
    strict = relaxation(disc, 0.3, "mi", "useful")
    live = relaxation(disc, 0.3, "mi", "useful", live=True)
    assert live["solver"]["iterations"] <= LIVE["max_iter"] or live["solver"]["iterations"] == \
        strict["solver"]["iterations"]  # kept, or solved again strictly
    assert live["solver"]["dual_residual"] <= max(LIVE_DUAL_RESIDUAL, strict["solver"]["dual_residual"])
    assert strict["value"] - 1e-5 <= live["value"] <= strict["value"] + 1e-7


def test_a_strict_relaxation_stops_once_its_dual_side_is_settled(monkeypatch):
    # the lower end uses the dual objective only: Clarabel stops at the first iterate whose dual residual
    # and relative gap are within DUAL_SETTLED, where the primal residual would crawl on for hundreds of
    # iterations; that end is never above the strict solve's and within 1e-6 of it
    from privbench.theory.mixture import conic

    # (the program without the second-order coupling, whose primal residual crawls; with it Clarabel ends
    # AlmostSolved before the dual side settles)
    sc = BinaryGMM(prior=0.5, mu=3.0, sigma0=1.0, sigma1=1.0)
    disc = discretize(sc, 1.0, 0.5, radius=8.0)
    settled = relaxation(disc, 3.0, "mi", "useful", taylor=False)
    monkeypatch.setitem(conic.DUAL_SETTLED, "res_dual", 0.0)  # never settled: Clarabel's own stop
    strict = relaxation(disc, 3.0, "mi", "useful", taylor=False)
    assert settled["solver"]["status"] == SETTLED and strict["solver"]["status"] != SETTLED
    assert settled["solver"]["dual_residual"] <= conic.TOL  # (DUAL_SETTLED["res_dual"] before the patch)
    assert settled["solver"]["iterations"] < strict["solver"]["iterations"] / 2
    assert strict["value"] - 1e-6 <= settled["value"] <= strict["value"] + 1e-9


def test_the_useful_relaxation_without_its_ratio_range_lies_between_the_full_and_the_useful_one():
    # the fallback where Clarabel fails on the whole useful program: dropping constraints only relaxes
    sc = BinaryGMM(prior=0.6, mu=1.0, sigma0=1.0, sigma1=0.7)
    disc = discretize(sc, 1.0, 0.5, radius=4.0)
    full, useful = (relaxation(disc, 0.3, "mi", obs)["value"] for obs in ("full", "useful"))
    no_wedge = relaxation(disc, 0.3, "mi", "useful", wedge=False)["value"]
    assert full - 1e-7 <= no_wedge <= useful + 1e-7
    assert useful > full + 1e-4  # the observations differ here, so the sandwich between them means something


@pytest.mark.parametrize("privacy", ["map", "mi"])
def test_the_useful_relaxation_solves_on_a_well_separated_mixture(privacy):
    # mu 3, sd 1: the cells' density-ratio ranges run from 1e-25 to 1e21; a range end outside [1e-6, 1e6]
    # is dropped (each end on its own), so Clarabel solves the useful program itself (it stalled
    # when the bounds pi_1 >= 7e20 pi_0 of the far cells were kept) and its end lies above the full one's
    sc = BinaryGMM(prior=0.5, mu=3.0, sigma0=1.0, sigma1=1.0)
    disc = discretize(sc, 1.0, 0.5, radius=8.0)
    full, useful = (relaxation(disc, 3.0, privacy, obs) for obs in ("full", "useful"))
    assert useful["solver"]["status"] in ("Solved", "AlmostSolved", SETTLED)
    assert useful["value"] > full["value"] + 1e-4
    upper = achievable(discretize(sc, 0.5, 0.5, radius=8.0), 3.0, privacy, "useful")["value"]
    assert useful["value"] <= upper


def test_where_the_useful_program_fails_the_fallbacks_drop_constraints_one_kind_at_a_time(monkeypatch):
    # first the ratio constraints outside [1e-3, 1e3] (with the 1e6 window Clarabel stalled on prior 0.5,
    # sigma0 2, D = 1 and solves with 1e3), then the Taylor coupling, then the Neyman-Pearson tangents, then
    # the ratio range, then the full relaxation; each end is looser than the whole useful program's, none
    # below the full one's
    import privbench.theory.mixture.certified as certified

    sc = BinaryGMM(prior=0.6, mu=1.0, sigma0=1.0, sigma1=0.7)
    level = ((None, None, 1.0, 0.5),)
    whole = certified_sandwich(sc, 0.3, "mi", "useful", levels=level, rounds=0)
    full = certified_sandwich(sc, 0.3, "mi", "full", levels=level, rounds=0)
    failing: set[str] = set()
    limits = []

    def flaky(disc, budget, privacy, observation, **kw):
        kind = "tangents" if kw.get("tangents", True) else "no tangents"
        kind = kind if kw.get("wedge", True) else "no range"
        kind = "narrow" if kw.get("ratio_limit", RATIO_LIMIT) < RATIO_LIMIT else kind
        kind = "narrow, no taylor" if kind == "narrow" and not kw.get("taylor", True) else kind
        assert kw.get("taylor", True) or kind != "tangents"  # every step after the first two drops it
        limits.append(kw.get("ratio_limit", RATIO_LIMIT))
        if observation == "useful" and kind in failing:
            raise RuntimeError("Clarabel: InsufficientProgress")
        return relaxation(disc, budget, privacy, observation, **kw)

    monkeypatch.setattr(certified, "relaxation", flaky)
    ends = []
    for fail, program in ((set(), "useful"), ({"tangents"}, "useful without the ratios outside [1e-3, 1e3]"),
                          ({"tangents", "narrow"}, "useful without the Taylor coupling"),
                          ({"tangents", "narrow", "narrow, no taylor"}, "useful without the tangents"),
                          ({"tangents", "narrow", "narrow, no taylor", "no tangents"},
                           "useful without the ratio range"),
                          ({"tangents", "narrow", "narrow, no taylor", "no tangents", "no range"}, "full")):
        failing.clear()
        failing.update(fail)
        limits.clear()
        got = certified_sandwich(sc, 0.3, "mi", "useful", levels=level, rounds=0)
        assert got["lower_program"].split(" (")[0] == program
        assert limits[0] == RATIO_LIMIT and (len(limits) == 1 or limits[1] == NARROW_LIMIT)
        ends.append(got["lower"])
    assert ends[0] == pytest.approx(whole["lower"], abs=1e-12)
    assert all(full["lower"] - 1e-7 <= e <= whole["lower"] + 1e-7 for e in ends)
    assert ends[2] <= ends[1] + 1e-7 <= ends[0] + 2e-7  # the narrow window, then the coupling, only drop constraints
    assert ends[-1] == pytest.approx(full["lower"], abs=1e-9)


def test_a_least_radius_keeps_more_pairs_and_never_lowers_the_lower_end():
    # a pair further than the radius becomes far mass, which pays radius^2 but may land anywhere; a larger
    # radius keeps such pairs (whose |Z - U| >= gap >= the old radius costs at least as much), so every
    # feasible point of the wider relaxation is one of the narrower: its lower end is never lower
    from privbench.theory.mixture.certified import pair_radius

    sc, level = CAPPED_MODEL, ((None, None, 1.0, 0.5),)
    unit = min(sc.sigma0, sc.sigma1)
    base = certified_sandwich(sc, 2.0, "mi", "useful", levels=level, rounds=0)
    wide = certified_sandwich(sc, 2.0, "mi", "useful", levels=level, rounds=0,
                              min_radius=pair_radius(sc, 2.0) + 3.0)
    assert base["radius"] == pytest.approx(pair_radius(sc, 2.0) * unit)
    assert wide["radius"] == pytest.approx((pair_radius(sc, 2.0) + 3.0) * unit)
    assert wide["lower"] >= base["lower"] - 1e-7
