"""The lower end of the certified sandwich: a finite relaxation of the problem over ALL mechanisms.

Take any mechanism P(Z | W) (W = U or (S, U)) with E(Z - U)^2 <= D, and let
Z' = bin(Z), a function of Z.  Each step below only enlarges the feasible set
or lowers the objective, so the program's optimum is <= the optimum over all
mechanisms:

1. **Binning Z** (data processing): Z' is a garbling of Z, so I(S;Z') <= I(S;Z);
   and any guess of S from Z' is a guess from Z, so the MAP accuracy of Z' is no
   larger than that of Z.  Z' is the bin refined by the release's likelihood ratio
   (:mod:`.ratio_split`: still a function of Z); the objective depends only on the
   masses P(S=s, Z'=(bin, part)), tied to the classes' first moments in the bin.
2. **Variables.**  For each class s, cell j and bin k within ``radius`` of each
   other: the mass pi = P(S=s, U in C_j, Z in B_k), the first moments
   y = E[Z; .] and v = E[U; .], and t >= E[(Z-U)^2; .].  They satisfy
   sum_k pi + f = P(S=s, U in C_j) and sum_k v + g = E[U; S=s, U in C_j] (f, g
   the mass and U-moment of the cell's *far* part, |Z - U| > radius), v and y in
   [cell] pi and [bin] pi.  By Cauchy-Schwarz (Jensen) E[(Z-U)^2; A] >= (E[Z-U; A])^2 / P(A),
   i.e. t pi >= (y - v)^2 (a rotated second-order cone), and the far part costs
   at least radius^2 f.  So the distortion constraint sum t + radius^2 sum f <= D
   holds for every real mechanism.  Where the far mass lands is left free (any
   F_s >= 0 on the bins with the same total), another relaxation.
2b. **Second moments** (:func:`_second_moments`): the spread of U inside a pair
   costs distortion too, since |Z - c_k| <= h_k / 2 on bin k gives
   (Z - U)^2 >= dist(U, B_k)^2; with w = E[(U - m_j)^2; .] (summing to the cell's exact
   central moment, w pi >= (v - m_j pi)^2, w <= (cell width / 2)^2 pi) this bounds t
   from below by convex functions of (w, v, pi).  A coarse cell mapped to one bin no
   longer hides its variance (the gain is first order in the cell width).
3. **Observation useful** (P(Z | U) only): within a cell the two classes' masses
   sent to a bin are integrals of the same kernel against P(S=1) p1 and
   P(S=0) p0, so pi_1 / pi_0 lies in the range of the weighted density ratio on
   the cell (each end kept only where it lies within [1e-6, 1e6]: far from the
   classes' overlap the ends reach 1e-25 and 1e21 on mu 3, sd 1, and bounds such as
   pi_1 >= 7e20 pi_0 made Clarabel stall on most useful programs until 2026-11-27;
   dropping a constraint only relaxes), and (pi_0, pi_1) lies between the tangents of the
   cell's Neyman-Pearson region at a few points (:func:`~.cells.ratio_tangents`);
   the same kernel also ties the classes' U-moments (:func:`~.cells.moment_coupling`), and, at
   second order in the cell width, each class's pair mass and U-moment to the other's mass, U-moment
   and second moment w (:mod:`.taylor`: the density ratio expanded about the cell's midpoint, its
   remainder bounded by the range of its second derivative on the cell).  The ratio range and the
   tangents see only a pair's masses, so a bin that takes one side of a cell was given the ratio of
   the whole cell; with the expansion the lower end converges as the bins shrink at fixed cells
   (prior 0.5, sigma0 2, mi, D = 1, cells 0.4: 0.366472 -> 0.373717 at bins 0.2, 0.378187 at bins 0.1).
   Observation full adds no constraint.

The lower end reported is Clarabel's dual objective (weak duality), so it does
not rely on the primal solution's accuracy.  As cells and bins shrink the
relaxation's slack (the Jensen gap Var(Z - U | cell, bin), the ratio range)
vanishes, which is what the refinement in :mod:`.certified` uses.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..lazy import cvxpy as cp
from .achievable import leakage_of
from .conic import solve_conic
from .discretize import Discretized
from .ratio_split import guess_thresholds, ratio_parts

__all__ = ["NARROW_LIMIT", "RATIO_LIMIT", "relaxation"]

RATIO_LIMIT = 1e6
#: The narrower ratio window of the first fallback (:func:`relaxation`'s ``ratio_limit``).
NARROW_LIMIT = 1e3


def _between(var: Any, mass: Any, lo: np.ndarray, hi: np.ndarray) -> list[Any]:
    """lo * mass <= var <= hi * mass, for the finite ends only."""
    cons = []
    fl, fh = np.isfinite(lo), np.isfinite(hi)
    if fl.any():
        cons.append(var[fl] >= cp.multiply(lo[fl], mass[fl]))
    if fh.any():
        cons.append(var[fh] <= cp.multiply(hi[fh], mass[fh]))
    return cons


def _class_block(disc: Discretized, s: int, second: bool = True) -> tuple[dict[str, Any], list[Any]]:
    """Variables and constraints of class s (masses, moments, Jensen cones, far part)."""
    p, n, k = disc.n_pairs, len(disc.cells), len(disc.bins)
    v = {name: cp.Variable(p) for name in ("y", "u", "t")}
    v["pi"] = cp.Variable(p, nonneg=True)
    v["f"], v["g"], v["F"] = cp.Variable(n, nonneg=True), cp.Variable(n), cp.Variable(k, nonneg=True)
    v["G"] = cp.Variable(k)  # E[Z; far part landing in bin k]
    c = disc.cells
    cons = [
        disc.by_cell @ v["pi"] + v["f"] == disc.mass[s],
        disc.by_cell @ v["u"] + v["g"] == disc.m1[s],
        cp.sum(v["F"]) == cp.sum(v["f"]),
        cp.SOC(v["t"] + v["pi"], cp.vstack([2 * (v["y"] - v["u"]), v["t"] - v["pi"]]), axis=0),
    ]
    cons += _between(v["u"], v["pi"], c.lo[disc.pj], c.hi[disc.pj])
    cons += _between(v["y"], v["pi"], disc.bins.lo[disc.pk], disc.bins.hi[disc.pk])
    cons += _between(v["g"], v["f"], c.lo, c.hi)
    cons += _between(v["G"], v["F"], disc.bins.lo, disc.bins.hi)
    if second:
        cons += _second_moments(disc, s, v)
    return v, cons


#: (lambda, beta / h) with lambda x^2 - beta x <= (x - h/2)_+^2 for all x >= 0 (beta >= h(1 - sqrt(1 - lambda))
#: and beta >= lambda h / 2; equality at both for lambda = 1 and 3/4).
_DIST_QUADRATICS = ((1.0, 1.0), (0.75, 0.5), (0.5, 1.0 - np.sqrt(0.5)))


def _second_moments(disc: Discretized, s: int, v: dict[str, Any]) -> list[Any]:
    """Second moments of U per pair: the spread of U inside a pair costs distortion (step 2b of the notes).

    w = E[(U - m_j)^2; pair] about the cell's atom m_j (W for the cell's far part) with
    sum_k w + W = E[(U - m_j)^2; S=s, U in C_j] (exact), w pi >= (E[U - m_j; pair])^2
    (Cauchy-Schwarz) and, on a bounded cell of width h_c, w <= (h_c / 2)^2 pi.  With
    Q = E[(U - c)^2; pair] (c the bin's centre, linear in w, u, pi) and bin width h:
    since |Z - c| <= h/2, (Z - U)^2 >= dist(U, bin)^2 = (|U - c| - h/2)_+^2 >= lambda (U - c)^2
    - beta |U - c| (:data:`_DIST_QUADRATICS`), and E[|U - c|; pair] <= r with r^2 <= pi Q, so
    t >= lambda Q - beta r for each (lambda, beta).
    """
    c, b = disc.cells, disc.bins
    m = c.atom
    mass, m1 = disc.mass[s], disc.m1[s]
    central = disc.m2[s] - 2 * m * m1 + m**2 * mass  # E[(U - m_j)^2; S=s, C_j]
    w, big_w = cp.Variable(disc.n_pairs, nonneg=True), cp.Variable(len(c), nonneg=True)
    v["w"] = w
    du = v["u"] - cp.multiply(m[disc.pj], v["pi"])  # E[U - m_j; pair]
    dg = v["g"] - cp.multiply(m, v["f"])
    cons = [disc.by_cell @ w + big_w == central,
            cp.SOC(w + v["pi"], cp.vstack([2 * du, w - v["pi"]]), axis=0),
            cp.SOC(big_w + v["f"], cp.vstack([2 * dg, big_w - v["f"]]), axis=0)]
    half = 0.5 * (c.hi - c.lo)
    bounded = np.isfinite(half)
    pb = bounded[disc.pj]
    if pb.any():
        cons.append(w[pb] <= cp.multiply(half[disc.pj][pb] ** 2, v["pi"][pb]))
    if bounded.any():
        cons.append(big_w[bounded] <= cp.multiply(half[bounded] ** 2, v["f"][bounded]))
    fin = np.isfinite(b.lo[disc.pk]) & np.isfinite(b.hi[disc.pk])
    if not fin.any():
        return cons
    idx = np.flatnonzero(fin)
    d = (m[disc.pj] - b.atom[disc.pk])[idx]  # U - c = (U - m_j) + d
    h = (b.hi - b.lo)[disc.pk][idx]
    pi = v["pi"][idx]
    q = w[idx] + 2 * cp.multiply(d, du[idx]) + cp.multiply(d**2, pi)
    r = cp.Variable(idx.size, nonneg=True)
    cons.append(cp.SOC(pi + q, cp.vstack([2 * r, pi - q]), axis=0))
    cons += [v["t"][idx] >= lam * q - cp.multiply(beta * h, r) for lam, beta in _DIST_QUADRATICS]
    return cons


def _coupling(disc: Discretized, blk0: dict[str, Any], blk1: dict[str, Any]) -> list[Any]:
    """Shared-kernel coupling of the classes' U-moments (see cells.moment_coupling)."""
    cp_ = disc.coupling
    if not cp_:
        return []
    lam, c = cp_["lam"][disc.pj], cp_["centre"][disc.pj]
    keep = cp_["valid"][disc.pj] & (lam >= 1 / RATIO_LIMIT) & (lam <= RATIO_LIMIT)
    if not keep.any():
        return []
    lam, c = lam[keep], c[keep]
    centred = [blk["u"][keep] - cp.multiply(c, blk["pi"][keep]) for blk in (blk0, blk1)]
    form = centred[1] - cp.multiply(lam, centred[0])
    return [form >= cp_["lo"][disc.pj][keep], form <= cp_["hi"][disc.pj][keep]]


def _taylor(disc: Discretized, blocks: list[dict[str, Any]], limit: float) -> list[Any]:
    """Second-order coupling of the classes' pair masses and moments under a shared kernel
    (:mod:`.taylor`), kept where kappa(c) lies within [1 / ``limit``, ``limit``] and the slack
    coefficients are below ``limit``."""
    cons = []
    for a, b, tab in disc.taylor:
        if "w" not in blocks[a]:
            continue
        kc, d1, lo2, hi2, third, c = (tab[k][disc.pj] for k in ("kappa", "d1", "k2_lo", "k2_hi", "third", "centre"))
        keep = (tab["valid"][disc.pj] & (kc >= 1 / limit) & (kc <= limit) & (np.abs(d1) <= limit)
                & (np.abs(lo2) <= limit) & (np.abs(hi2) <= limit))
        if not keep.any():
            continue
        kc, d1, lo2, hi2, third, c = (x[keep] for x in (kc, d1, lo2, hi2, third, c))
        pa, pb, wa = blocks[a]["pi"][keep], blocks[b]["pi"][keep], blocks[a]["w"][keep]
        ca = blocks[a]["u"][keep] - cp.multiply(c, pa)
        cb = blocks[b]["u"][keep] - cp.multiply(c, pb)
        mass = pb - cp.multiply(kc, pa) - cp.multiply(d1, ca)
        moment = cb - cp.multiply(kc, ca) - cp.multiply(d1, wa)
        cons += [mass >= cp.multiply(0.5 * lo2, wa), mass <= cp.multiply(0.5 * hi2, wa),
                 moment >= cp.multiply(-0.5 * third, wa), moment <= cp.multiply(0.5 * third, wa)]
        for t in tab["touch"]:  # quadratic minorants / majorants touching kappa off the midpoint
            co = {k: v[disc.pj][keep] for k, v in t.items()}
            ok = np.all([np.isfinite(v) & (np.abs(v) <= limit) for v in co.values()], axis=0)
            if not ok.any():
                continue
            for end, sign in (("lo", 1), ("hi", -1)):
                bound = (cp.multiply(co[f"alpha_{end}"][ok], pa[ok]) + cp.multiply(co[f"beta_{end}"][ok], ca[ok])
                         + cp.multiply(co[f"gamma_{end}"][ok], wa[ok]))
                cons.append(sign * (pb[ok] - bound) >= 0)
    return cons


def _ratio(disc: Discretized, pi0: Any, pi1: Any, wedge: bool = True, tangents: bool = True,
           limit: float = RATIO_LIMIT) -> list[Any]:
    """The pairs' class masses under a shared kernel: the ratio range (``wedge``) and the tangents, each
    kept only where its ratio lies within [1 / ``limit``, ``limit``]."""
    lo, hi = disc.ratio_lo[disc.pj], disc.ratio_hi[disc.pj]
    if not wedge:  # dropping a constraint only relaxes
        lo, hi = np.zeros_like(lo), np.full_like(hi, np.inf)
    cons = []
    keep_lo = (lo >= 1 / limit) & (lo <= limit)
    keep_hi = (hi >= 1 / limit) & (hi <= limit)
    if keep_lo.any():
        cons.append(pi1[keep_lo] >= cp.multiply(lo[keep_lo], pi0[keep_lo]))
    if keep_hi.any():
        cons.append(pi1[keep_hi] <= cp.multiply(hi[keep_hi], pi0[keep_hi]))
    for tan in disc.tangents if tangents else ():  # Neyman-Pearson tangents inside the cells (cells.ratio_tangents)
        kappa, top, bot = tan["kappa"][disc.pj], tan["top"][disc.pj], tan["bot"][disc.pj]
        keep = tan["valid"][disc.pj] & (kappa >= 1 / limit) & (kappa <= limit)
        if keep.any():
            gap = pi1[keep] - cp.multiply(kappa[keep], pi0[keep])
            cons += [gap <= top[keep], gap >= bot[keep]]
    return cons


def _split_bins(disc: Discretized, blocks: list[Any], q: list[Any],
                thresholds: np.ndarray) -> tuple[list[Any], list[Any]]:
    """Split each bounded bin into parts by the release's likelihood ratio (:mod:`.ratio_split`).

    Reporting (bin, part) is a function of Z, so its leakage is still a lower bound
    (data processing); the parts' masses are free variables under the constraints that
    tie them to the classes' first moments Y_s in the bin, which keep the relaxation
    from letting the classes sit at different places inside a bin for free.

    Returns the two-row masses of every part: [parts_0, tails_0], [parts_1, tails_1].
    """
    b = disc.bins
    fin = np.flatnonzero(np.isfinite(b.lo) & np.isfinite(b.hi))
    tails = np.flatnonzero(~(np.isfinite(b.lo) & np.isfinite(b.hi)))
    h, c = (b.hi - b.lo)[fin], b.atom[fin]
    centred = []
    for s, (blk, _) in enumerate(blocks):
        moment = disc.by_bin @ blk["y"] + blk["G"]
        centred.append(moment[fin] - cp.multiply(c, q[s][fin]))
    x, cons = ratio_parts(centred, [q[s][fin] for s in (0, 1)], h, thresholds)
    parts = [cp.hstack([cp.vec(x[s], order="C"), q[s][tails]]) for s in (0, 1)]
    return parts, cons


def relaxation(disc: Discretized, budget: float, privacy: str, observation: str, *,
               second_moments: bool = True, previous: tuple[np.ndarray, np.ndarray] | None = None,
               thresholds: np.ndarray | None = None, live: bool = False, wedge: bool = True,
               tangents: bool = True, ratio_limit: float = RATIO_LIMIT, taylor: bool = True) -> dict[str, Any]:
    """Lower bound on the optimal leakage over all mechanisms at distortion ``budget``.

    ``previous`` (bin edges, P(S, bin)) of an earlier solution places the bins' ratio thresholds
    (:func:`~.ratio_split.guess_thresholds`); ``thresholds`` gives them directly, shape
    (bounded bins, L).  Any thresholds give a valid lower end.  ``live``: the solver stops at a
    loose primal residual (:func:`~.conic.solve_conic`; the dual objective is what is used).
    ``wedge=False`` drops the ``useful`` relaxation's ratio range (pi_1 / pi_0 within the cell's
    range of the density ratio; the tangents stay): only looser, a fallback where Clarabel fails
    on the whole ``useful`` program.  (It failed on most of them while range ends outside
    [1e-6, 1e6] were kept: MI, prior 0.5, mu 3, sd 1, D = 3, cells 0.4, bins 0.2 stalled with
    dual residual 2e7 and now solves, lower end 0.22796; without the range 0.22540, the full
    relaxation 0.22510.)  ``tangents=False`` drops the Neyman-Pearson tangents instead, the first
    fallback: MI, prior 0.5, mu 3, sigma0 2, sigma1 1, D = 1, cells 0.4, bins 0.2 stalls with them
    (InsufficientProgress) and solves without them, lower end 0.36623, where the committed table's
    row had 0.35839 (the full relaxation, solved by an older version of this module).
    ``ratio_limit`` (default :data:`RATIO_LIMIT`) keeps a range end or a tangent only where its ratio
    lies within [1 / ratio_limit, ratio_limit]; :data:`NARROW_LIMIT` (1e3) is the fallback tried
    before dropping the tangents: that same program stalls with 1e6 (Clarabel InsufficientProgress,
    primal residual 2.6e-2 at iteration 34) and solves with 1e3 (AlmostSolved, dual residual 7.6e-10),
    lower end 0.36647 (1e2: 0.36514), so most of the tangents' gain is kept.

    Returns
    -------
    dict
        ``value`` (the dual objective: a certified lower bound up to the solver's
        dual feasibility, 1e-9), ``primal`` (leakage of the relaxation's P(S, Z')),
        ``far_mass``, ``p_sz`` (2, K) its P(S, bin), ``bin_edges`` and solver statistics.
    """
    blocks = [_class_block(disc, s, second_moments) for s in (0, 1)]
    cons = [c for _, cs in blocks for c in cs]
    if observation == "useful":
        cons += _ratio(disc, blocks[0][0]["pi"], blocks[1][0]["pi"], wedge, tangents, ratio_limit)
        cons += _coupling(disc, blocks[0][0], blocks[1][0])
        if taylor:
            cons += _taylor(disc, [blocks[0][0], blocks[1][0]], ratio_limit)
    r2 = disc.radius**2
    cons.append(sum(cp.sum(b["t"]) + r2 * cp.sum(b["f"]) for b, _ in blocks) <= budget)
    q = [disc.by_bin @ b["pi"] + b["F"] for b, _ in blocks]
    if thresholds is None:
        thresholds = guess_thresholds(disc.bins.edges, disc.weights, previous)
    parts, split = _split_bins(disc, blocks, q, thresholds)
    cons += split
    if privacy == "map":
        top = cp.Variable(parts[0].shape[0])
        objective = cp.sum(top)
        cons += [top >= parts[0], top >= parts[1]]
    else:
        pz = parts[0] + parts[1]
        objective = sum(cp.sum(cp.rel_entr(parts[s], disc.weights[s] * pz)) for s in (0, 1))
    stats = solve_conic(cp.Problem(cp.Minimize(objective), cons), live=live, dual_bound=True)
    p_sz = np.clip(np.stack([np.asarray(qs.value, dtype=float) for qs in q]), 0.0, None)
    far = float(sum(np.asarray(b["f"].value).sum() for b, _ in blocks))
    return {"value": min(stats["dual"], stats["primal"]), "primal": leakage_of(p_sz, privacy),
            "far_mass": far, "solver": stats, "p_sz": p_sz, "bin_edges": disc.bins.edges}
