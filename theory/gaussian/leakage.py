"""Exact I(S;Z) and MSE of a linear-Gaussian mechanism Z = A U + B S + N(0, noise_cov).

Every optimal Gaussian mechanism of :mod:`privbench.theory.gaussian` has this
form; :func:`linear_description` is the header of their JSON description.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from privbench.datasets.errors import InputError

__all__ = ["FORM", "SINGULAR_RTOL", "linear_description", "linear_gaussian_leakage"]

SINGULAR_RTOL = 1e-13  # whitened Var(S|Z) eigenvalue below this: S is determined, I = inf
FORM = "Z = A U + B S + N(0, noise_cov)"


def linear_description(observation: str | None) -> dict[str, Any]:
    """The start of a linear-Gaussian mechanism's description (entries ``A``, ``B``, ... follow)."""
    return {"type": "linear-gaussian", "observation": observation, "form": FORM}


def linear_gaussian_leakage(cov: Any, A: Any, B: Any, noise_cov: Any) -> tuple[float, float]:
    """Exact I(S;Z) (nats) and E||U - Z||^2 of Z = A U + B S + N(0, noise_cov).

    Parameters
    ----------
    cov : array_like, shape (d_s + d_u, d_s + d_u)
        Joint covariance of (S, U), S first; cov_s must be positive definite.
    A : array_like, shape (d_u, d_u)
    B : array_like, shape (d_u, d_s)
    noise_cov : array_like, shape (d_u, d_u)
        Positive semi-definite covariance of the independent noise.

    Returns
    -------
    (mi, mse) : tuple of float
        ``mi`` uses I = 1/2 log det cov_s - 1/2 log det Var(S|Z), with Var(S|Z)
        from a pseudo-inverse on the range of cov_z (so a deterministic or zero Z
        is fine); ``mi`` is ``inf`` when Z determines a direction of S (whitened
        Var(S|Z) eigenvalue below 1e-13, i.e. beyond about 15 nats per dimension).
    """
    cov = np.atleast_2d(np.asarray(cov, dtype=float))
    A = np.atleast_2d(np.asarray(A, dtype=float))
    B = np.atleast_2d(np.asarray(B, dtype=float))
    noise = np.atleast_2d(np.asarray(noise_cov, dtype=float))
    d_u, d_s = A.shape[1], B.shape[1]
    if cov.shape != (d_s + d_u, d_s + d_u) or A.shape[0] != d_u or B.shape[0] != d_u \
            or noise.shape != (d_u, d_u):
        raise InputError(
            f"shapes cov {cov.shape}, A {A.shape}, B {B.shape}, noise_cov {noise.shape} do not fit "
            "(need cov (d_s+d_u)^2, A (d_u, d_u), B (d_u, d_s), noise_cov (d_u, d_u))"
        )
    M = np.hstack([B, A])  # Z = M [S; U] + N
    cov_z = M @ cov @ M.T + noise
    cov_z = 0.5 * (cov_z + cov_z.T)
    cov_s = cov[:d_s, :d_s]
    cov_sz = cov[:d_s] @ M.T
    err = np.hstack([-B, np.eye(d_u) - A])  # U - Z = err [S; U] - N
    mse = float(np.trace(err @ cov @ err.T) + np.trace(noise))

    ws, vs = np.linalg.eigh(cov_s)
    whiten = vs / np.sqrt(ws)  # cov_s^{-1/2} up to rotation
    wz, vz = np.linalg.eigh(cov_z)
    ref = np.linalg.norm(M, 2) ** 2 * np.linalg.norm(cov, 2) + np.linalg.norm(noise, 2)
    keep = wz > 1e-12 * ref
    if not np.any(keep):
        return 0.0, mse
    g = whiten.T @ cov_sz @ vz[:, keep]  # whitened cross-covariance on range(cov_z)
    explained = np.linalg.eigvalsh((g / wz[keep]) @ g.T)  # eigenvalues of I - whitened Var(S|Z)
    resid = np.clip(1.0 - explained, 0.0, 1.0)
    if resid.min() <= SINGULAR_RTOL:
        return float("inf"), mse
    return float(-0.5 * np.sum(np.log(resid))), mse
