"""Gaussian-approximation leakage from samples (numpy): the collapse check of the PPAN learners."""

from __future__ import annotations

import numpy as np


def gaussian_mi(s: np.ndarray, z: np.ndarray) -> float:
    """Gaussian approximation of I(S; Z) from samples, nats (PPAN §III-B1).

    -1/2 sum log(1 - r_i^2) over the canonical correlations r_i of (S, Z); S (n, a)
    and Z (n, b) float arrays (a discrete S as one-hot columns).  Directions of
    (near-)zero empirical variance are dropped.
    """
    def whiten(x: np.ndarray) -> np.ndarray:
        x = x - x.mean(axis=0)
        w, v = np.linalg.eigh(x.T @ x / len(x))
        keep = w > 1e-10 * max(w.max(), 1e-300)
        return x @ (v[:, keep] / np.sqrt(w[keep]))

    ws, wz = whiten(np.asarray(s, float)), whiten(np.asarray(z, float))
    if ws.shape[1] == 0 or wz.shape[1] == 0:
        return 0.0
    r = np.linalg.svd(ws.T @ wz / len(ws), compute_uv=False)
    return float(-0.5 * np.sum(np.log1p(-np.minimum(r, 1 - 1e-12) ** 2)))


def noise_baseline_mi(s: np.ndarray, u: np.ndarray, distortion: float) -> float:
    """Gaussian-approximation leakage of Z = U + N(0, distortion/d_u I) from second moments.

    Closed form on the empirical covariances of (S, U) (no sampling): the reference a
    trained mechanism must beat at the same distortion.
    """
    s = np.asarray(s, float) - np.mean(s, axis=0)
    u = np.asarray(u, float) - np.mean(u, axis=0)
    n, d_u = u.shape
    cov_s = s.T @ s / n
    cov_su = s.T @ u / n
    cov_z = u.T @ u / n + max(distortion, 0.0) / d_u * np.eye(d_u)
    w, v = np.linalg.eigh(cov_s)
    keep = w > 1e-10 * max(w.max(), 1e-300)
    iw = v[:, keep] / np.sqrt(w[keep])
    wz, vz = np.linalg.eigh(cov_z)
    keepz = wz > 1e-12 * max(wz.max(), 1e-300)
    g = iw.T @ cov_su @ (vz[:, keepz] / np.sqrt(wz[keepz]))
    r = np.linalg.svd(g, compute_uv=False)
    return float(-0.5 * np.sum(np.log1p(-np.minimum(r, 1 - 1e-12) ** 2)))
