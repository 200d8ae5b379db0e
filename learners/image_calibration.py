"""Budget calibration of a trained image release (``ppan-image``): the last step of its fit.

A learner told "distortion <= D" must deliver it on fresh data, but a short schedule (the
paper suite's smoke: 2 epochs of a 16-unit network on 300 images) can end far above its
budget (0.55 nats/pixel at D = 0.18).  After training, the release is drawn twice (fresh
noise) on the training rows and its distortion ``d`` (the task's: per-pixel cross-entropy
``xent``, mean over pixels, 0 log 0 = 0; or ``mse``, squared error summed over pixels) and
its standard error ``se`` (over rows) are measured.  A release within its budget there
(``d <= D``) is left exactly as trained.  One above it is blended pixel by pixel with the
image it observed,

    Y = (1 - a) Z + a U,

with ``a`` in [0, A_MAX] the least blend whose distortion d(a) on those rows meets its target
``D - margin * se(a)`` (at least D / 2; se(a) the standard error of d(a)), found by regula falsi (Illinois).  Both distortions are convex in the
prediction, so the blend's distortion is convex in ``a`` and falls from ``d`` at a = 0 to its
least value at a = 1 (Y = U: the identity, the least cross-entropy any release can have); a
budget below that is met as nearly as any release can (a = A_MAX).  Y is post-processing of
(Z, U): it spends leakage (U shows S), which the bench measures on what is released; the
mechanism only says how far it blended (``info["budget_calibration"]``).  ``A_MAX`` < 1 keeps
the release strictly inside (0, 1) where Z is, so that its cross-entropy stays finite.

Given an ``anchor`` (``ppan-image`` passes the training images' mean image), the blend goes
towards it instead, Y = (1 - a) Z + a anchor, wherever that can meet the target (the anchor's
own distortion is low enough: on the MNIST subset the mean image costs 0.264 nats/pixel).  That
Y is post-processing of Z alone and carries no more information about S than Z; blending with U
put a copy of the image into releases that had hidden the digit (measured 2026-11-28: the paper
suite's ppan-image with the discriminator at 0.28 nats/pixel, blend 0.02-0.025, logistic digit
accuracy on standardised releases 0.28-0.42 before the blend, 0.85 after it).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.special import xlogy

#: the largest blend: Y stays strictly inside (0, 1) wherever Z is
A_MAX = 1.0 - 1e-6
#: the root search on the blend stops within this of the root (in blend or in distortion) or after MAX_STEPS
TOLERANCE = 1e-12
MAX_STEPS = 100
DISTORTIONS = ("xent", "mse")


def image_row_distortion(u: np.ndarray, z: np.ndarray, distortion: str) -> np.ndarray:
    """Per-row distortion, shape (n,): ``xent`` the mean over pixels of -(u log z + (1 - u) log(1 - z))
    (0 log 0 = 0), ``mse`` the squared error summed over pixels; u, z (n, d_u)."""
    if distortion == "xent":
        with np.errstate(divide="ignore", invalid="ignore"):
            return -(xlogy(u, z) + xlogy(1.0 - u, 1.0 - z)).mean(axis=1)
    return ((u - z) ** 2).sum(axis=1)


def apply_image_calibration(z: np.ndarray, u: np.ndarray, blend: float | None,
                            anchor: np.ndarray | None = None) -> np.ndarray:
    """Y = (1 - a) Z + a T for a blend ``a`` (None or 0: Z unchanged), T the image ``u`` or, given,
    the fixed image ``anchor`` (d_u,); z, u (n, d_u)."""
    if not blend:
        return z
    return (1.0 - blend) * z + blend * (u if anchor is None else anchor)


def image_budget_calibration(z1: np.ndarray, z2: np.ndarray, u: np.ndarray, budget: float, margin: float,
                             distortion: str, anchor: np.ndarray | None = None) -> dict[str, Any]:
    """The blend calibration of an image release measured on training rows; see the module docstring.

    Parameters
    ----------
    z1, z2 : ndarray, shape (n, d_u)
        Two independent releases of the same n training rows.
    u : ndarray, shape (n, d_u)
        The images of those rows, in [0, 1].
    budget : float
        The distortion budget D.
    margin : float
        How many standard errors of the measured distortion a release above D is brought below D.
    distortion : {"xent", "mse"}
        The task's distortion.
    anchor : ndarray of shape (d_u,), optional
        A fixed image (the training images' mean): the blend goes towards it instead of U where
        (1 - A_MAX) Z + A_MAX anchor meets the target, so that the calibration adds no image information.

    Returns
    -------
    dict
        ``applied`` (bool), ``distortion``, ``train_distortion`` (before, the mean over both
        releases), ``stderr`` (over rows), ``target`` (of the release returned), and when applied
        ``blend`` (a), ``calibrated_distortion`` and ``calibrated_stderr`` (after, same rows) and
        ``toward`` ("anchor" or "image", the T of the blend).
    """
    if distortion not in DISTORTIONS:
        raise ValueError(f"distortion={distortion!r} has no image calibration (allowed: {', '.join(DISTORTIONS)})")
    u = np.asarray(u, dtype=float).reshape(len(u), -1)
    z1, z2 = (np.asarray(x, dtype=float).reshape(u.shape) for x in (z1, z2))

    n = len(u)
    toward: np.ndarray | None = None  # T: None the image; the anchor once it is known to suffice

    def stats(a: float) -> tuple[float, float, float]:
        """(distortion, its standard error over rows, the target) of the blend a towards T."""
        per_row = 0.5 * (image_row_distortion(u, apply_image_calibration(z1, u, a, toward), distortion)
                         + image_row_distortion(u, apply_image_calibration(z2, u, a, toward), distortion))
        se = float(per_row.std(ddof=1) / np.sqrt(n)) if n > 1 else 0.0
        return float(per_row.mean()), se, max(float(budget) - float(margin) * se, 0.5 * float(budget))

    d, se, target = stats(0.0)
    out: dict[str, Any] = {"applied": False, "distortion": distortion, "train_distortion": d, "stderr": se,
                           "target": target}
    if not d > float(budget):
        return out
    hi = A_MAX
    if anchor is not None:  # the anchor's full blend first: kept where it meets its target
        toward = np.asarray(anchor, dtype=float).reshape(-1)
        hi_d, hi_se, hi_target = stats(hi)
        if hi_d > hi_target:
            toward = None
    if toward is None:
        hi_d, hi_se, hi_target = stats(hi)
    out["toward"] = "image" if toward is None else "anchor"
    if hi_d <= hi_target:
        hi, (hi_d, hi_se, hi_target) = bracketed_root(stats, d - target, hi, hi_d - hi_target)
    out.update(applied=True, blend=hi, calibrated_distortion=hi_d, calibrated_stderr=hi_se, target=hi_target)
    return out


def bracketed_root(stats: Any, g_lo: float, hi: float, g_hi: float) -> tuple[float, tuple[float, float, float]]:
    """The least blend in (0, hi] whose excess g(a) = distortion - target is <= 0, to ``TOLERANCE``:
    regula falsi with the Illinois rule (g is convex and falling: a few steps), bisection when it
    stalls; g(0) = ``g_lo`` > 0 >= g(hi) = ``g_hi``.  Returns (a, stats(a)) with g(a) <= 0."""
    lo = 0.0
    best = stats(hi)
    side = 0
    for step in range(MAX_STEPS):
        if hi - lo <= TOLERANCE or -g_hi <= TOLERANCE:
            break
        a = hi - g_hi * (hi - lo) / (g_hi - g_lo) if step % 4 != 3 else 0.5 * (lo + hi)
        a = min(max(a, lo + 0.01 * (hi - lo)), hi - 0.01 * (hi - lo))
        now = stats(a)
        g = now[0] - now[2]
        if g > 0:
            lo, g_lo = a, g
            g_hi = g_hi / 2 if side == -1 else g_hi  # Illinois: the end kept twice has its value halved
            side = -1
        else:
            hi, g_hi, best = a, g, now
            g_lo = g_lo / 2 if side == 1 else g_lo
            side = 1
    return hi, best
