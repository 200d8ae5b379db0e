"""Budget calibration of a trained continuous release: the last step of the PPAN learners' fit.

A learner told "distortion <= D" must deliver it on fresh data, but a short or unconverged
schedule can end above its budget (the Lagrangian's multiplier still growing; e.g. 0.26 at
D = 0.2 after 300 steps).  After training, the release is drawn twice (fresh noise) on the
training rows and its distortion ``d`` (mean ||U - Z||^2) and standard error ``se`` (over
rows) are measured.  A release within its budget there (``d <= D``) is left exactly as
trained.  One above it is brought to the target ``D - margin * se`` (at least D / 2), so that
its distortion on fresh data is below D with high probability, in two steps:

1. Scale its deviation from a centre c (the mean of Z; 0 for the linear-Gaussian mechanism of a
   zero-mean gaussian task): Z_s = c + s (Z - c), s > 0.  An invertible map of Z: the leakage
   I(S; Z_s) is that of Z.  Its distortion is quadratic in s; the s nearest 1 that meets the
   target is taken, or, if none does, the s of least distortion.
2. If Z_s is still above the target, blend it with U: Y = (1 - a) Z_s + a U, whose distortion
   is (1 - a)^2 that of Z_s, so a = 1 - sqrt(target / distortion) exactly.  Y is a mixture of
   the release and Z = U (distortion 0): it spends leakage only as far as the budget requires.

The result is stored as the map Z' = P Z + Q U + b with P = (1 - a) s I, Q = a I and
b = (1 - a)(1 - s) c; a linear-Gaussian mechanism stays one (A' = P A + Q, B' = P B, noise
P noise_cov P^T).  Releases within the budget are not pulled below it: a converged Lagrangian
schedule spends exactly D on average, and moving every such release down by the margin would
cost leakage on every point.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

#: the least scale of step 1 (the map stays invertible, far from a constant release)
MIN_SCALE = 1e-3

def training_releases(samples: Any, task: Any, mech: Any, rows: int,
                      rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Two releases (fresh noise, in this order) of up to ``rows`` training rows and their U, flattened
    to (n, d_u): what a calibration measures the release's distortion on."""
    n = min(len(samples), int(rows))
    w = task.observe(samples)[:n]
    u = np.asarray(samples.u, dtype=float).reshape(len(samples), -1)[:n]
    return mech.release(w, rng), mech.release(w, rng), u


def budget_calibration(z1: np.ndarray, z2: np.ndarray, u: np.ndarray, budget: float, margin: float,
                       centre: bool = True) -> dict[str, Any]:
    """The calibration of a release measured on training rows; see the module docstring.

    Parameters
    ----------
    z1, z2 : ndarray, shape (n, d_u)
        Two independent releases of the same n training rows.
    u : ndarray, shape (n, d_u)
        U of those rows.
    budget : float
        The distortion budget D.
    margin : float
        How many standard errors of the measured distortion a release above D is brought below D.
    centre : bool
        Scale about the mean of Z (else about 0).

    Returns
    -------
    dict
        ``applied`` (bool), ``train_distortion`` (before, the mean over both releases),
        ``stderr`` (over rows), ``target``, and when applied ``scale`` (s), ``blend`` (a),
        ``calibrated_distortion`` (after, same rows) and the map's ``P``, ``Q`` (d_u, d_u) and
        ``b`` (d_u,) as nested lists (JSON-able).
    """
    u = np.asarray(u, dtype=float).reshape(len(u), -1)
    z1, z2 = (np.asarray(x, dtype=float).reshape(u.shape) for x in (z1, z2))
    per_row = 0.5 * (((z1 - u) ** 2).sum(1) + ((z2 - u) ** 2).sum(1))
    n, d_u = u.shape
    d = float(per_row.mean())
    se = float(per_row.std(ddof=1) / np.sqrt(n)) if n > 1 else 0.0
    target = max(float(budget) - float(margin) * se, 0.5 * float(budget))
    out: dict[str, Any] = {"applied": False, "train_distortion": d, "stderr": se, "target": target}
    if not d > float(budget):
        return out
    z, uu = np.concatenate([z1, z2]), np.concatenate([u, u])
    c = z.mean(0) if centre else np.zeros(d_u)
    s, dist = _scale(uu - c, z - c, target, d)
    a = 0.0 if dist <= target else 1.0 - math.sqrt(target / dist)
    eye = np.eye(d_u)
    out.update(applied=True, scale=s, blend=a, calibrated_distortion=min(dist, target),
               P=((1.0 - a) * s * eye).tolist(), Q=(a * eye).tolist(), b=((1.0 - a) * (1.0 - s) * c).tolist())
    return out


def _scale(uc: np.ndarray, zc: np.ndarray, target: float, d: float) -> tuple[float, float]:
    """(s, distortion of c + s (Z - c)): the s between 1 and the least-distortion s > 0 (at least
    ``MIN_SCALE``) where the distortion meets the target, else that least-distortion s; uc = U - c,
    zc = Z - c, d the distortion at s = 1."""
    A, B, C = (float(np.mean(np.sum(x * y, axis=1))) for x, y in ((uc, uc), (uc, zc), (zc, zc)))
    if C <= 0.0:
        return 1.0, d
    best = max(B / C, MIN_SCALE)
    least = A - 2.0 * best * B + best * best * C
    if least > target:
        return best, least
    root = math.sqrt(max(B * B - C * (A - target), 0.0))
    return ((B + root) / C if best < 1.0 else (B - root) / C), target


def apply_calibration(z: np.ndarray, u: np.ndarray, calibration: dict[str, Any] | None) -> np.ndarray:
    """Z' = Z P^T + U Q^T + b for a calibration with ``P``, ``Q``, ``b`` (None: Z unchanged); z, u (n, d_u)."""
    if not calibration:
        return z
    P, Q, b = (np.asarray(calibration[key], dtype=float) for key in ("P", "Q", "b"))
    return z @ P.T + u @ Q.T + b
