"""A certified sandwich for the optimum over ALL mechanisms of the binary Gaussian mixture.

For privacy ``map`` or ``mi``, MSE distortion and either observation model,
:func:`certified_sandwich` returns ``lower <= OPT(D) <= upper`` where

* ``upper`` is the exact leakage of a concrete piecewise-constant mechanism with
  exact distortion <= D (:mod:`.achievable`), and
* ``lower`` is the dual objective of a finite relaxation (:mod:`.relaxation`;
  each step of it is argued there),

refining the grids (a fixed schedule of finer cells of U and bins of Z, each
level solving both programs, then adaptive rounds that halve the relaxation's
bins where both classes put mass) until ``upper - lower <= tol`` or the time
limit, keeping the smallest upper and the largest lower end met on the way (each is
valid on its own).  The width achieved is part of the result: it is NOT always
below ``tol``.  A point off the committed table is solved under the live cap :data:`LIVE`
(time with the next level's cost predicted, a work cap in relaxation pairs, Clarabel stopped
early where its dual residual allows: :mod:`.conic`); ``stopped`` says which rule ended it.  Each level's relaxation places its bins' likelihood-ratio thresholds
(:mod:`.ratio_split`) around the previous level's solution; with them the lower end
converges to second order in the bin width (the single threshold 1 of the first version
left a first-order term: MI on prior 0.5, mu 1, sd 1, D 0.5, cells 1, bins 0.5, 0.25, 0.125:
0.02105, 0.02681, 0.03040 before, 0.02811, 0.03333, 0.03404 after; the exact leakage of a
mechanism on steps 0.125 is 0.03521).

Grid steps are in units of the smallest component sd (min(sigma0, sigma1) for ``binary-gmm``).  The radius of kept (cell, bin)
pairs is ``max(8, 2 sqrt(D / min(prior, 1 - prior)) + 2)`` such units (the pure
shift of GAP Theorem 3 moves at most sqrt(D / (prior (1-prior))) ); mass moved
further is allowed in the relaxation at cost radius^2 (reported as ``far_mass``).
"""

from __future__ import annotations

import time
from functools import lru_cache
from typing import Any

import numpy as np

from privbench.datasets.errors import InputError
from privbench.datasets.scenarios import BinaryGMM

from ..base import Optimum
from .achievable import achievable
from .discretize import discretize
from .relaxation import NARROW_LIMIT, relaxation
from .interpolate import sandwich_at
from .model import min_sd
from .stored import stored_curve, stored_sandwich

__all__ = ["CERTIFIED", "LEVELS", "LIVE", "METHOD", "TOL", "certified_optimum", "certified_sandwich"]

#: The pseudo-family that selects this bound in ``theory.optimum(..., family=...)``.
CERTIFIED = "certified"
METHOD = ("certified sandwich over all mechanisms: achievable piecewise-constant mechanism (exact "
          "truncated-normal distortion) / finite relaxation (dual bound)")
TOL = 1e-3
#: (upper cell step, upper bin step, lower cell step, lower bin step), in units of min sd.
#: A level whose upper steps are None keeps the upper end (the relaxation's bins are where the width
#: lives: on the mismatch model, full, mi, D = 3, the upper end moves 3.5e-4 from steps 0.2 to 0.1 while
#: the lower end gains 6e-3 from bins 0.2 to 0.05 (0.0945 -> 0.1008; halving the cells instead gives 0.0991);
#: scripts/mixture_width_profile.py).  On prior 0.5, sigma0 = 2, full, mi, D = 1 (first-moment relaxation)
#: the lower end at cells 0.4 is 0.32261, 0.32820, 0.33094 for bins 0.2, 0.1, 0.05 (first order: about
#: 0.055 nats per unit of bin width; cells 0.2 at bins 0.1 give 0.32902), the upper 0.33600, 0.33517 for
#: steps 0.2, 0.1; the second-moment cuts add 8e-4 (bins 0.2) and 1.0e-3 (bins 0.1) to the lower end.
#: With the likelihood-ratio split (:mod:`.ratio_split`), on prior 0.5, sigma0 = 1, full, mi, D = 3 the lower
#: end at cells 0.4 went from 0.216580, 0.222920 to 0.225100, 0.228870 (bins 0.2, 0.1, each placed around the
#: previous solution); the stored upper end (steps 0.1) is 0.229333, so level 1 now leaves 4.6e-4 (was 6.4e-3).
LEVELS: tuple[tuple[float | None, float | None, float, float], ...] = (
    (0.2, 0.2, 0.4, 0.2),
    (0.1, 0.1, 0.4, 0.1),
    (None, None, 0.4, 0.05),
)


#: How a point off the committed table is solved while the caller waits: the live solver options, and
#: no level or round whose relaxation keeps more than ``max_pairs`` (cell, bin) pairs (a level doubles
#: the relaxation's bins and costs about 3 times the one before).  The cap counts work, not seconds, so
#: the same point gives the same sandwich on a loaded machine as on an idle one.  The result is a valid
#: sandwich at the width reached (the certificate's ``stopped`` says why it ended).  (Before the cap:
#: binary-gmm's EXAMPLE, mi, useful, D = 1 took 147 s in CI; with it 18 CPU-s, width 0.026.)
LIVE: dict[str, Any] = {"live": True, "time_limit": float("inf"), "growth": None, "max_pairs": 6000}


def pair_radius(sc: BinaryGMM, budget: float) -> float:
    """Radius (in units of min sd) of the kept (cell, bin) pairs at budget D."""
    unit = min_sd(sc)
    return max(8.0, 2.0 * np.sqrt(budget / min(sc.prior, 1 - sc.prior)) / unit + 2.0)


def certified_sandwich(sc: BinaryGMM, budget: float, privacy: str, observation: str, *,
                       tol: float = TOL, time_limit: float = 60.0,
                       levels: tuple[tuple[float | None, float | None, float, float], ...] = LEVELS,
                       rounds: int = 2, live: bool = False, growth: float | None = None,
                       max_pairs: int | None = None, min_radius: float = 0.0) -> dict[str, Any]:
    """lower <= optimum over all mechanisms <= upper at distortion budget ``budget``.

    Parameters
    ----------
    sc : BinaryGMM or ComponentMixture
        The binary mixture, or any binary-S mixture of 1-D Gaussians (:mod:`.model`).
    budget : float
        D > 0 (mean squared error).
    privacy : {"map", "mi"}
    observation : {"useful", "full"}
    tol : float
        Target width upper - lower (probability for map, nats for mi).
    time_limit : float
        No new level (or round) is started after this many seconds.
    levels : tuple of (upper cell, upper bin, lower cell, lower bin) steps
        In units of the smallest sd, coarse to fine; upper steps None: that level refines the lower end only.
    rounds : int
        Adaptive rounds after the levels (while the width and the time allow): the
        relaxation is solved again with its bins halved where both classes put mass
        in the last solution, where the relaxation's slack (the classes "meeting"
        inside a bin) lies.
    live : bool
        Solve with the live solver options (:func:`~.conic.solve_conic`: at most 60 iterations
        where the dual residual allows), as :func:`certified_optimum` does for a point off the table.
    growth : float, optional
        Also start no level or round whose predicted end (``growth`` times the last one's
        seconds from now) lies past ``time_limit``.  The first level always runs.
    max_pairs : int, optional
        A work cap: no level or round after the first whose relaxation keeps more (cell, bin)
        pairs than this (its cost grows with them).
    min_radius : float
        Least radius of the kept pairs (units of the smallest sd; else :func:`pair_radius`; the table: ``table.TABLE_RADIUS``).

    Returns
    -------
    dict
        ``lower``, ``upper``, ``width``, ``seconds``, ``level`` (last level solved),
        ``upper_distortion`` (exact distortion of the achieving mechanism, <= D),
        ``upper_grid`` / ``lower_grid`` (steps of the ends kept), ``far_mass``,
        ``lower_program`` (the relaxation used: the observation's, or ``full (reason)``),
        ``converged`` (width <= tol), ``stopped`` (why the refinement ended: ``width``,
        ``time``, ``pairs`` or ``schedule``), ``errors`` (solver failures met; their level is skipped).
        The lower end starts at the trivial bound (max prior for map, 0 for mi).  Every stop
        leaves a valid sandwich: only its width, reported as achieved, depends on where it stopped.
    """
    _check(budget, privacy, observation)
    unit = min_sd(sc)
    radius = max(pair_radius(sc, budget), float(min_radius)) * unit
    # trivial lower ends: MAP accuracy >= max prior, I(S;Z) >= 0
    floor = max(sc.prior, 1 - sc.prior) if privacy == "map" else 0.0
    best: dict[str, Any] = {"lower": floor, "upper": np.inf, "lower_grid": None, "far_mass": 0.0,
                            "lower_program": "trivial", "upper_distortion": np.nan, "upper_grid": None,
                            "errors": [], "stopped": "schedule"}
    run = _Run(sc, budget, privacy, observation, radius, live, tol, time_limit, growth, max_pairs)
    for i, (uc, ub, lc, lb) in enumerate(levels):
        disc = discretize(sc, lc * unit, lb * unit, radius)
        if i and run.stop(best, disc.n_pairs):
            break
        run.begin()
        up = None if uc is None or ub is None else _upper(sc, budget, privacy, observation, uc * unit, ub * unit,
                                                          radius, live)
        if up is not None and up["value"] < best["upper"]:
            best.update(upper=up["value"], upper_distortion=up["distortion"], upper_grid=(uc * unit, ub * unit))
        run.lower(best, disc, (lc * unit, lb * unit), f"level {i}")
        best["level"] = i
    _adaptive(run, best, rounds)
    for key in ("refine", "previous"):
        best.pop(key, None)
    best["width"] = best["upper"] - best["lower"]
    best["seconds"] = time.perf_counter() - run.start
    best["converged"] = bool(best["width"] <= tol)
    best["stopped"] = "width" if best["converged"] else best["stopped"]
    best["radius"] = radius
    return best


def _check(budget: float, privacy: str, observation: str) -> None:
    if privacy not in ("map", "mi"):
        raise InputError(f"privacy={privacy!r} has no certified sandwich (allowed: map, mi)")
    if observation not in ("useful", "full"):
        raise InputError(f"observation={observation!r} is unknown (allowed: useful, full)")
    if not budget > 0:
        raise InputError(f"budget={budget!r} must be > 0 for the certified sandwich")


class _Run:
    """One refinement: its problem, its stopping rules (width, time, predicted time, pairs), its lower solves."""

    def __init__(self, sc: Any, budget: float, privacy: str, observation: str, radius: float, live: bool,
                 tol: float, time_limit: float, growth: float | None, max_pairs: int | None) -> None:
        self.sc, self.budget, self.privacy, self.observation, self.radius = sc, budget, privacy, observation, radius
        self.live, self.tol, self.time_limit, self.growth, self.max_pairs = live, tol, time_limit, growth, max_pairs
        self.start = self.step_start = time.perf_counter()
        self.last = 0.0

    def begin(self) -> None:
        self.step_start = time.perf_counter()

    def stop(self, best: dict[str, Any], n_pairs: int) -> bool:
        """Whether the next level or round (its relaxation keeping ``n_pairs`` pairs) is not started;
        sets ``best["stopped"]``."""
        now = time.perf_counter() - self.start
        reason = None
        if best["upper"] - best["lower"] <= self.tol:
            reason = "width"
        elif now > self.time_limit or (self.growth is not None and now + self.growth * self.last > self.time_limit):
            reason = "time"
        elif self.max_pairs is not None and n_pairs > self.max_pairs:
            reason = "pairs"
        if reason:
            best["stopped"] = reason
        return reason is not None

    def lower(self, best: dict[str, Any], disc: Any, grid: tuple[Any, Any], label: str) -> bool:
        """Solve the relaxation on ``disc``, keep its lower end where larger and its solution (which
        places the next thresholds and bins); False where the solver failed."""
        try:
            lo = _lower(disc, self.budget, self.privacy, self.observation, best.get("previous"), self.live)
        except RuntimeError as exc:  # the solver failed on this level: keep the ends found so far
            best["errors"].append(f"{label} lower: {exc}")
            self.last = time.perf_counter() - self.step_start
            return False
        if lo["value"] > best["lower"]:
            best.update(lower=lo["value"], lower_grid=grid, far_mass=lo["far_mass"], lower_program=lo["program"])
        best["refine"] = (refine_edges(lo["bin_edges"], lo["p_sz"]), grid[0])
        best["previous"] = (lo["bin_edges"], lo["p_sz"])
        self.last = time.perf_counter() - self.step_start
        return True


def _adaptive(run: _Run, best: dict[str, Any], rounds: int) -> None:
    """Adaptive rounds: halve the bins where both classes have mass (where the slack lies); updates ``best``."""
    while best.get("refine") is not None and rounds > 0:
        edges, lc = best["refine"]
        disc = discretize(run.sc, lc, 0.0, run.radius, bin_edges=edges)
        if run.stop(best, disc.n_pairs):
            return
        rounds -= 1
        run.begin()
        del best["refine"]
        if not run.lower(best, disc, (lc, f"adaptive, {len(edges) + 1} bins"), "adaptive"):
            return
        best["level"] = f"{best['level']}+adaptive"


def refine_edges(edges: np.ndarray, p_sz: np.ndarray, share: float = 1e-3) -> np.ndarray:
    """Bin edges with every bounded bin where both classes have mass >= ``share`` times the largest
    such overlap split at its midpoint.  ``p_sz``: (2, len(edges) + 1) masses per bin (tails first/last)."""
    overlap = np.minimum(p_sz[0], p_sz[1])[1:-1]  # the bounded bins (e_i, e_{i+1}]
    split = overlap >= share * max(float(overlap.max()), 1e-300)
    mids = 0.5 * (edges[:-1] + edges[1:])[split]
    return np.sort(np.concatenate([edges, mids]))


def _lower(disc: Any, budget: float, privacy: str, observation: str,
           previous: tuple[np.ndarray, np.ndarray] | None = None, live: bool = False) -> dict[str, Any]:
    """The relaxation on one grid (``previous``: the last solution's (bin edges, P(S, bin)), which places
    the bins' likelihood-ratio thresholds, :mod:`.ratio_split`).  Where Clarabel fails on the ``useful``
    relaxation, the same with its ratio range, tangents and Taylor coupling kept only where their ratios lie
    in [1e-3, 1e3] is tried, then that without its Taylor coupling (:mod:`.taylor`), then without its
    Neyman-Pearson tangents, then without its ratio range (both also without the Taylor coupling), then
    the ``full`` one (a mechanism that sees U only is one that sees (S, U), so its optimum is no lower).
    Each drops constraints only, so each is still a valid lower end; ``program`` says which was used."""
    try:
        return {**relaxation(disc, budget, privacy, observation, previous=previous, live=live), "program": observation}
    except RuntimeError as exc:
        if observation != "useful":
            raise
        reason = str(exc)
    for label, drop in (("the ratios outside [1e-3, 1e3]", {"ratio_limit": NARROW_LIMIT}),
                        ("the Taylor coupling", {"ratio_limit": NARROW_LIMIT, "taylor": False}),
                        ("the tangents", {"tangents": False, "taylor": False}),
                        ("the ratio range", {"wedge": False, "taylor": False})):
        try:  # the same with fewer constraints (.relaxation)
            return {**relaxation(disc, budget, privacy, observation, previous=previous, live=live, **drop),
                    "program": f"useful without {label} ({reason})"}
        except RuntimeError:
            pass
    return {**relaxation(disc, budget, privacy, "full", previous=previous, live=live), "program": f"full ({reason})"}


def _upper(sc: BinaryGMM, budget: float, privacy: str, observation: str, cell: float, bin_: float,
           radius: float, live: bool = False) -> dict[str, Any] | None:
    """The achievable end on one grid, or None where no mechanism of the grid meets the budget."""
    try:
        up = achievable(discretize(sc, cell, bin_, radius), budget, privacy, observation, live=live)
    except (InputError, RuntimeError):  # budget below this grid's floor, or the solver failed
        return None
    return up if up["distortion"] <= budget else None


@lru_cache(maxsize=512)
def certified_optimum(sc: BinaryGMM, budget: float, privacy: str, observation: str) -> Optimum:
    """The sandwich as an :class:`~privbench.theory.base.Optimum` (cached per argument tuple).

    A budget the committed table holds is served from it; a budget it does not hold,
    where it holds the same (scenario, observation, privacy) at other budgets, is
    bracketed from those rows without solving (:mod:`.interpolate`: time-shared
    mechanisms above, monotonicity and convexity below); otherwise it is solved live, under
    the budget :data:`LIVE` (the width reached is in the certificate, ``stopped`` says why it ended).

    ``value`` is the achievable (upper) end, ``lower`` the certified lower end,
    ``bound_kind="certified"``; the certificate holds the whole result of
    :func:`certified_sandwich` (width, seconds, grids, convergence).
    """
    stored = stored_sandwich(sc.id, budget, privacy, observation)
    if stored is not None:  # the committed table (each row a valid sandwich on its own)
        mech = {"type": "piecewise-constant", "observation": observation, "distortion": stored["upper_distortion"]}
        return Optimum(stored["upper"], METHOD + "; stored table", "certified", mech, CERTIFIED, stored,
                       lower=stored["lower"])
    curve = stored_curve(sc.id, privacy, observation)
    if curve:  # the committed table has this curve at other budgets: time-sharing / convexity bracket
        return _interpolated(sc, budget, privacy, observation, curve)
    got = certified_sandwich(sc, budget, privacy, observation, **LIVE)
    if not np.isfinite(got["upper"]):
        raise InputError(f"budget={budget!r}: no piecewise-constant mechanism of the certified grids meets it")
    cert = {k: (list(v) if isinstance(v, tuple) else v) for k, v in got.items()}
    mech = {"type": "piecewise-constant", "observation": observation, "cell_step": got["upper_grid"][0],
            "bin_step": got["upper_grid"][1], "distortion": got["upper_distortion"]}
    return Optimum(float(got["upper"]), METHOD, "certified", mech, CERTIFIED, cert, lower=float(got["lower"]))


def anchors(sc: BinaryGMM, privacy: str) -> list[tuple[float, float]]:
    """Achievable (distortion, leakage) points that need no solving: Z = U and Z = E[U]."""
    from .accuracy import map_accuracy_two_gaussians
    from .identity import identity_mi

    p, mu = sc.prior, sc.mu
    var_u = (1 - p) * (sc.sigma0**2 + mu**2) + p * (sc.sigma1**2 + mu**2) - ((2 * p - 1) * mu) ** 2
    if privacy == "map":
        ident = float(map_accuracy_two_gaussians(p, -mu, sc.sigma0, mu, sc.sigma1))
        return [(0.0, ident), (var_u, max(p, 1 - p))]
    return [(0.0, identity_mi(sc)), (var_u, 0.0)]


def _interpolated(sc: BinaryGMM, budget: float, privacy: str, observation: str,
                  curve: list[dict[str, Any]]) -> Optimum:
    floor = max(sc.prior, 1 - sc.prior) if privacy == "map" else 0.0
    low, up = sandwich_at(curve, float(budget), floor, anchors(sc, privacy))
    cert = {"lower": low, "upper": up, "width": up - low, "stored": True, "interpolated": True,
            "budgets": [r["budget"] for r in curve]}
    mech = {"type": "time-shared piecewise-constant", "observation": observation}
    return Optimum(up, METHOD + "; stored table, bracketed between its budgets (time sharing, convexity)",
                   "certified", mech, CERTIFIED, cert, lower=low)
