"""The achievable end: an actual mechanism P(Z | W) built from an envelope LP's split.

The LP weights lam_k on posteriors q_k define Z with P(Z = k) = lam_k and
P(Z = k | W = w) = lam_k q_k(w) / P_W(w) (rows renormalised).  Its leakage and
H(U | Z) are then computed exactly from the model (not taken from the LP); where
the LP's tolerance leaves H(U | Z) a hair above the budget, the mechanism
time-shares with Z = W (H(U | W) = 0 for both observations) just enough to meet it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.special import entr

from ..measures import PRIVACY_MEASURES, release_joint
from .split import Split

__all__ = ["conditional_entropy", "mechanism_of_split", "release_measures"]


def conditional_entropy(p_uz: np.ndarray) -> float:
    """H(U | Z) in nats of a joint pmf of shape (n_u, n_z): the log-loss distortion."""
    p_uz = np.clip(np.asarray(p_uz, dtype=float), 0.0, None)
    return float(max(0.0, entr(p_uz).sum() - entr(p_uz.sum(axis=0)).sum()))


def release_measures(joint: np.ndarray, channel: np.ndarray, observation: str, privacy: str) -> tuple[float, float]:
    """(leakage, H(U | Z)) of a channel P(Z | W), exactly."""
    p_suz = release_joint(joint, channel, observation)
    return PRIVACY_MEASURES[privacy](p_suz.sum(axis=1)), conditional_entropy(p_suz.sum(axis=0))


def mechanism_of_split(split: Split, points: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """The channel P(Z | W), shape (n_w, k'), of the split with the positive ``weights`` (dead w: z = 0)."""
    keep = weights > 1e-13
    lam, q = weights[keep], points[keep]
    live = (lam[None, :] * q.T) / split.p_w[:, None]  # (n, k')
    live = np.clip(live, 0.0, None)
    channel = np.zeros((split.n_w, lam.size))
    channel[:, 0] = 1.0
    channel[split.live] = live / live.sum(axis=1, keepdims=True)
    return channel


def time_share(channel: np.ndarray, leak_dist: tuple[float, float], budget: float,
               joint: np.ndarray, observation: str, privacy: str) -> dict[str, Any]:
    """``channel`` if its H(U | Z) <= budget, else the smallest mix with Z = W that meets it."""
    leak, dist = leak_dist
    share = 0.0
    if dist > budget:
        share = min(1.0, (dist - budget) / dist * (1 + 1e-9) + 1e-15)
        n_w = channel.shape[0]
        channel = np.hstack([(1 - share) * channel, share * np.eye(n_w)])
        leak, dist = release_measures(joint, channel, observation, privacy)
    return {"channel": channel, "value": leak, "distortion": dist, "time_share": share}
