"""A certified sandwich at ANY distortion from the stored ones at a few budgets (no solving).

The optimum over all mechanisms OPT(D) (MAP accuracy or I(S;Z)) is non-increasing
and convex in D: releasing, with an independent hidden coin, mechanism a with
probability lambda and b otherwise has distortion lambda D_a + (1-lambda) D_b and
leakage at most lambda L_a + (1-lambda) L_b (an adversary that also saw the coin
does at least as well, and with the coin MAP accuracy and I(S;Z,C) = I(S;Z|C) are
linear). Given sandwiches ``lower_i <= OPT(D_i) <= upper_i`` with achieving
mechanisms of distortion ``d_i <= D_i``:

* **upper at d**: the lower convex envelope, at d, of the achievable points
  (d_i, upper_i), the identity release (0, leakage of U) and the constant release
  (Var U, trivial leakage); every point of a chord is a time-shared mechanism.
* **lower at d**: the largest of the trivial floor, ``lower_j`` for the first
  D_j >= d (monotone), and the convexity extensions of chords: for D_a < D_b,
  ``OPT(d) >= lower_b + (D_b - d) (lower_b - upper_c) / (D_c - D_b)`` for d <= D_b < D_c,
  and ``OPT(d) >= lower_b - (d - D_b) (upper_a - lower_b) / (D_b - D_a)`` for D_a < D_b <= d.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

__all__ = ["interpolated_lower", "interpolated_upper", "sandwich_at"]


def interpolated_upper(points: Sequence[tuple[float, float]], d: float) -> float:
    """Lower convex envelope at ``d`` of achievable (distortion, leakage) points; inf if none has distortion <= d."""
    pts = sorted((float(x), float(y)) for x, y in points)
    best = min((y for x, y in pts if x <= d), default=np.inf)
    for i, (xa, ya) in enumerate(pts):
        for xb, yb in pts[i + 1:]:
            if xa <= d <= xb and xb > xa:
                best = min(best, ya + (yb - ya) * (d - xa) / (xb - xa))
    return float(best)


def interpolated_lower(rows: Sequence[tuple[float, float, float]], d: float, floor: float) -> float:
    """Lower end at ``d`` from (budget D_i, lower_i, upper_i) rows of a non-increasing convex OPT."""
    rows = sorted((float(b), float(lo), float(up)) for b, lo, up in rows)
    best = float(floor)
    for i, (b, lo, up) in enumerate(rows):
        if b >= d:
            best = max(best, lo)  # monotone
            for c, _, up_c in rows[i + 1:]:  # chord (b, c) extended to the left
                best = max(best, lo + (b - d) * max(0.0, lo - up_c) / (c - b))
        else:
            for a, _, up_a in rows[:i]:  # chord (a, b) extended to the right
                best = max(best, lo - (d - b) * max(0.0, up_a - lo) / (b - a))
    return float(best)


def sandwich_at(rows: Sequence[dict[str, Any]], d: float, floor: float,
                anchors: Sequence[tuple[float, float]] = ()) -> tuple[float, float]:
    """(lower, upper) of OPT(d) from stored rows (``budget``, ``lower``, ``upper``, ``upper_distortion``).

    ``anchors`` are extra achievable (distortion, leakage) points (identity and constant
    releases); ``floor`` the trivial lower end (max prior for map, 0 for mi).
    """
    points = [(r["upper_distortion"], r["upper"]) for r in rows] + list(anchors)
    low = interpolated_lower([(r["budget"], r["lower"], r["upper"]) for r in rows], d, floor)
    return low, interpolated_upper(points, d)
