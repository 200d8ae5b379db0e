"""Which privbench privacy metric gives which guarantee, and the guarantee of a leakage value or a joint.

privbench measures leakage as ``mi`` (I(S;Z) in nats), ``chi2`` (chi-square
information) or ``map`` (Bayes-optimal MAP accuracy). Wang & Tay's Theorem 1
turns an f-divergence *level* D_f(P_SZ || P_S P_Z) into (eps, delta)-IP:

* ``mi``   is the KL level itself (Theorem 1(b));
* ``chi2`` is the chi-square level itself (Theorem 1(c));
* ``map`` with binary S: the TV level (``sum |P(s,z) - P(s)P(z)|``) is at most
  ``4 pi (acc - pi)`` with ``pi = min_s P(s)`` (tight, :func:`map_tv_bound`),
  which Theorem 1(a) turns into IP. With more than two values of S no bound of
  that form exists and the metric gives no guarantee (refused).

Weak DP needs *strong* f-divergence privacy (Corollary 1, then Lemma 1):
``max_s D_f(P_Z || P_{Z|S=s})``, which none of the three metrics measures. It is
available only from a known joint P(S, Z) (:func:`joint_guarantee`), e.g. the
optimal mechanism of a finite scenario.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from privbench.datasets.errors import InputError

from ..measures import chi2_information
from .bounds import SOURCES, dp_from_strong_ip, ip_delta_bound, strong_ip_delta_bound
from .checks import check_eps, check_joint, check_level
from .exact import dp_delta, ip_delta, kl_information, strong_divergences, strong_ip_delta, tv_information

__all__ = ["LEVELS", "METRIC_DIVERGENCE", "joint_guarantee", "leakage_guarantee", "map_tv_bound"]

#: The f-divergence whose level each privacy metric gives (``map``: a bound on it, binary S only).
METRIC_DIVERGENCE = {"mi": "kl", "chi2": "chi2", "map": "tv"}
LEVELS = {"kl": kl_information, "tv": tv_information, "chi2": chi2_information}


def _check_priors(priors: Any) -> np.ndarray:
    p = np.asarray(priors, dtype=float).ravel()
    if p.size < 1 or not np.all(np.isfinite(p)) or np.any(p <= 0) or abs(p.sum() - 1.0) > 1e-6:
        raise InputError(f"priors={priors!r} must be positive probabilities of S summing to 1")
    return p / p.sum()


def map_tv_bound(accuracy: float, min_prior: float) -> float:
    """Largest TV information ``sum_{s,z} |P(s,z) - P(s)P(z)|`` of a binary S with this MAP accuracy.

    ``4 pi (acc - pi)`` with ``pi = min(P(S=0), P(S=1))``, capped at ``4 pi (1 - pi)``
    (the largest TV of any joint with these priors). With ``x_z = P(1,z) - P(0,z)`` and
    ``c = 1 - 2 P(S=1)``, TV = ``sum_z |c P(z) + x_z|`` and ``sum_z |x_z| = 2 acc - 1``;
    the maximum puts every ``x_z`` of the sign opposite to ``c`` on a z with
    ``P(z) = |x_z|``. Equal priors give ``2 acc - 1`` exactly. At the trivial accuracy
    ``acc = 1 - pi`` the bound is ``4 pi (1 - 2 pi)``: with unequal priors a MAP
    adversary that always guesses the majority says nothing about independence.

    Parameters
    ----------
    accuracy : float
        MAP accuracy, in [1 - min_prior, 1] (a lower value is impossible and refused
        unless within 1e-9, which is clipped).
    min_prior : float
        min_s P(S=s), in (0, 1/2].
    """
    pi = float(min_prior)
    if not 0 < pi <= 0.5:
        raise InputError(f"min_prior={min_prior!r} is outside (0, 1/2] (binary S)")
    acc = check_level(accuracy)
    if acc > 1 + 1e-9 or acc < 1 - pi - 1e-9:
        raise InputError(f"MAP accuracy {accuracy!r} is outside [{1 - pi:.6g}, 1] (the majority prior and 1)")
    acc = min(max(acc, 1 - pi), 1.0)
    return float(4 * pi * (acc - pi))


def leakage_guarantee(privacy: str, leakage: float, eps: float, priors: Any = None) -> dict[str, Any]:
    """The (eps, delta)-IP that a leakage value of metric ``privacy`` guarantees (Theorem 1).

    Parameters
    ----------
    privacy : {"mi", "chi2", "map"}
    leakage : float
        The leakage in the metric's units (nats for mi).
    eps : float
        IP budget, finite and >= 0.
    priors : array_like of shape (n_s,), optional
        P(S = s); needed for ``map`` (which gives a guarantee only for n_s = 2).

    Returns
    -------
    dict
        ``kind`` ("ip"), ``divergence``, ``level`` (the f-divergence level used),
        ``eps``, ``delta`` and ``source``.
    """
    if privacy not in METRIC_DIVERGENCE:
        raise InputError(f"privacy={privacy!r} gives no guarantee (allowed: {', '.join(METRIC_DIVERGENCE)})")
    e = check_eps(eps)
    if e.ndim != 0:
        raise InputError(f"eps has shape {e.shape} (one number >= 0)")
    div = METRIC_DIVERGENCE[privacy]
    source = SOURCES[div] + " (Wang & Tay)"
    if privacy == "map":
        if priors is None:
            raise InputError("privacy='map' needs the priors of S to give a guarantee")
        p = _check_priors(priors)
        if p.size != 2:
            raise InputError(f"privacy='map' gives no guarantee for |S| = {p.size} (only binary S: "
                             "use mi or chi2)")
        level = map_tv_bound(leakage, float(p.min()))
        source = "TV <= 4 pi (acc - pi), " + source
    else:
        level = check_level(leakage)
    return {"kind": "ip", "divergence": div, "level": float(level), "eps": float(e),
            "delta": float(ip_delta_bound(level, float(e), div)), "source": source}


def joint_guarantee(p_sz: Any, privacy: str, eps: float) -> dict[str, Any]:
    """Guarantees of a known joint P(S, Z): the metric's bound, strong IP, weak DP, and the exact deltas.

    Parameters
    ----------
    p_sz : ndarray, shape (n_s, n_z)
        Joint pmf of S and the release.
    privacy : {"mi", "chi2", "map"}
        Picks the f-divergence (``map``: TV).
    eps : float
        IP budget.

    Returns
    -------
    dict
        :func:`leakage_guarantee` of the joint's own level (``map``: its TV), plus
        ``strong_level`` = max_s D_f(P_Z || P_{Z|S=s}), ``strong_ip_delta`` (Corollary 1),
        ``dp_eps``, ``dp_delta`` (Lemma 1), and the exact smallest ``exact_ip_delta``,
        ``exact_strong_ip_delta``, ``exact_dp_delta`` (at eps for IP, at ``dp_eps`` for DP).
    """
    p = check_joint(p_sz)
    if privacy not in METRIC_DIVERGENCE:
        raise InputError(f"privacy={privacy!r} gives no guarantee (allowed: {', '.join(METRIC_DIVERGENCE)})")
    div = METRIC_DIVERGENCE[privacy]
    eta = float(LEVELS[div](p))
    e = float(check_eps(eps))
    out = {"kind": "ip", "divergence": div, "level": eta, "eps": e,
           "delta": float(ip_delta_bound(eta, e, div)), "source": SOURCES[div] + " (Wang & Tay)"}
    n_s, p_s = p.shape[0], p.sum(axis=1)
    strong = strong_divergences(p, div)
    out["strong_level"] = strong
    out["strong_ip_delta"] = float(strong_ip_delta_bound(strong, e, div, n_s))
    out["dp_eps"], out["dp_delta"] = dp_from_strong_ip(e, out["strong_ip_delta"], float(p_s.min()))
    out["exact_ip_delta"] = ip_delta(p, e)
    out["exact_strong_ip_delta"] = strong_ip_delta(p, e)
    out["exact_dp_delta"] = dp_delta(p, out["dp_eps"])
    return out
