"""Exact privacy and distortion measures of a finite channel against a known model.

A finite mechanism is a row-stochastic matrix ``channel[w, z] = P(Z=z | W=w)``.
What the mechanism observes is described by an observation kernel
``K[(s, u), w] = P(W=w | S=s, U=u)`` (rows ordered ``s * n_u + u``):
``useful`` is W = U, ``full`` is W = (S, U) with ``w = s * n_u + u``; any other
kernel may be passed as an array.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.special import rel_entr

from privbench.datasets.errors import InputError
from privbench.datasets.samples import check_observation

Observation = str | np.ndarray


def observation_kernel(n_s: int, n_u: int, observation: Observation) -> np.ndarray:
    """P(W | S, U) as a matrix of shape (n_s * n_u, n_w).

    Parameters
    ----------
    n_s, n_u : int
        Alphabet sizes of S and U.
    observation : {"useful", "full"} or ndarray of shape (n_s * n_u, n_w)
        ``useful``: W = U (n_w = n_u); ``full``: W = (S, U) (n_w = n_s * n_u,
        index ``s * n_u + u``); an array is validated and returned.
    """
    if isinstance(observation, str):
        check_observation(observation)
        if observation == "useful":
            return np.tile(np.eye(n_u), (n_s, 1))
        return np.eye(n_s * n_u)
    k = np.asarray(observation, dtype=float)
    if k.ndim != 2 or k.shape[0] != n_s * n_u:
        raise InputError(
            f"observation kernel has shape {k.shape}, expected ({n_s * n_u}, n_w) = P(W | S, U)"
        )
    _check_stochastic("observation kernel", k)
    return k


def _check_stochastic(name: str, mat: np.ndarray) -> None:
    if not np.all(np.isfinite(mat)):
        raise InputError(f"{name} has entries that are not finite (must be probabilities)")
    if np.any(mat < -1e-12):
        raise InputError(f"{name} has negative entries (min {mat.min():.3g}; must be >= 0)")
    rows = mat.sum(axis=1)
    bad = np.abs(rows - 1.0) > 1e-6
    if np.any(bad):
        raise InputError(
            f"{name} row {int(np.argmax(bad))} sums to {rows[bad][0]:.9g} (rows must sum to 1)"
        )


def release_joint(
    joint: np.ndarray, channel: np.ndarray, observation: Observation
) -> np.ndarray:
    """The joint pmf P(S=s, U=u, Z=z) of a channel applied to a model.

    Parameters
    ----------
    joint : ndarray, shape (n_s, n_u)
        P(S=s, U=u).
    channel : ndarray, shape (n_w, n_z)
        P(Z=z | W=w), rows sum to 1.
    observation : {"useful", "full"} or kernel array
        See :func:`observation_kernel`.

    Returns
    -------
    ndarray, shape (n_s, n_u, n_z)
    """
    joint = np.asarray(joint, dtype=float)
    channel = np.asarray(channel, dtype=float)
    n_s, n_u = joint.shape
    kernel = observation_kernel(n_s, n_u, observation)
    if channel.ndim != 2 or channel.shape[0] != kernel.shape[1]:
        raise InputError(
            f"channel has shape {channel.shape}, expected ({kernel.shape[1]}, n_z) = P(Z | W)"
        )
    _check_stochastic("channel", channel)
    channel = np.clip(channel, 0.0, None)
    p_suz = joint.reshape(-1, 1) * (kernel @ channel)
    return p_suz.reshape(n_s, n_u, -1)


def mutual_information(p_sz: np.ndarray) -> float:
    """I(S; Z) in nats of a joint pmf of shape (n_s, n_z)."""
    p_sz = np.asarray(p_sz, dtype=float)
    prod = p_sz.sum(axis=1, keepdims=True) * p_sz.sum(axis=0, keepdims=True)
    return float(max(0.0, rel_entr(p_sz, prod).sum()))


def map_accuracy(p_sz: np.ndarray) -> float:
    """Accuracy of the Bayes-optimal (MAP) guess of S from Z: sum_z max_s P(s, z)."""
    return float(np.asarray(p_sz, dtype=float).max(axis=0).sum())


def chi2_information(p_sz: np.ndarray) -> float:
    """Chi-square information sum_{s,z} P(s,z)^2 / (P(s) P(z)) - 1 of shape (n_s, n_z)."""
    p_sz = np.asarray(p_sz, dtype=float)
    prod = p_sz.sum(axis=1, keepdims=True) * p_sz.sum(axis=0, keepdims=True)
    mask = prod > 0
    return float(max(0.0, (p_sz[mask] ** 2 / prod[mask]).sum() - 1.0))


PRIVACY_MEASURES = {"mi": mutual_information, "map": map_accuracy, "chi2": chi2_information}


def expected_distortion(p_uz: np.ndarray, distortion: np.ndarray) -> float:
    """E d(U, Z) = sum_{u,z} P(u,z) d(u,z); both arrays of shape (n_u, n_z)."""
    return float(np.sum(np.asarray(p_uz) * np.asarray(distortion)))


def channel_measures(
    joint: np.ndarray,
    channel: np.ndarray,
    observation: Observation,
    distortion: np.ndarray | None = None,
) -> dict[str, Any]:
    """All exact measures of a finite channel against a model.

    Parameters
    ----------
    joint : ndarray, shape (n_s, n_u)
    channel : ndarray, shape (n_w, n_z)
    observation : {"useful", "full"} or kernel array
    distortion : ndarray, shape (n_u, n_z), optional
        Defaults to Hamming (requires n_z == n_u).

    Returns
    -------
    dict with ``mi`` (nats), ``map`` (probability), ``chi2`` and ``distortion``.
    """
    p_suz = release_joint(joint, channel, observation)
    n_u, n_z = p_suz.shape[1], p_suz.shape[2]
    if distortion is None:
        if n_z != n_u:
            raise InputError(f"Hamming distortion needs n_z == n_u, got n_z={n_z}, n_u={n_u}")
        distortion = 1.0 - np.eye(n_u)
    distortion = np.asarray(distortion, dtype=float)
    if distortion.shape != (n_u, n_z):
        raise InputError(f"distortion has shape {distortion.shape}, expected {(n_u, n_z)}")
    p_sz = p_suz.sum(axis=1)
    out: dict[str, Any] = {k: f(p_sz) for k, f in PRIVACY_MEASURES.items()}
    out["distortion"] = expected_distortion(p_suz.sum(axis=0), distortion)
    return out


def scenario_channel_measures(scenario: Any, channel: np.ndarray, observation: Observation) -> dict[str, Any]:
    """:func:`channel_measures` for a finite scenario object (``joint()``, ``distortion_matrix()``)."""
    return channel_measures(scenario.joint(), channel, observation, scenario.distortion_matrix())
