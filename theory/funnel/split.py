"""A finite model seen as a split of P_W: posteriors q = P(W | Z = z) and their per-z costs.

Any mechanism P(Z | W) is a split of P_W into posteriors q_z with weights p(z)
(sum_z p(z) q_z = P_W), and every quantity of the funnel is an average over it:

* H(U | Z) = sum_z p(z) h_U(q_z), ``h_U(q) = H(A_U q)`` (concave in q);
* the leakage is sum_z p(z) cost(q_z) with a convex ``cost``:
  ``mi``: I(S; Z), cost(q) = H(S) - H(A_S q);
  ``map``: MAP accuracy, cost(q) = max_s (A_S q)_s;
  ``chi2``: chi-square information, cost(q) = sum_s (A_S q)_s^2 / P(s) - 1.

A_S, A_U hold the columns P(S | w), P(U | w).  :func:`supporting` gives, for each
cell barycentre c, an affine function of q that is <= cost everywhere (a tangent
or subgradient plane of the convex cost at c): the certified end's lower model.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import entr

from privbench.datasets.errors import InputError

from ..measures import observation_kernel

__all__ = ["PRIVACIES", "Split", "entropy_rows", "split_model"]

#: Leakages with the split structure (each is an average of a convex per-posterior cost).
PRIVACIES = ("mi", "map", "chi2")


def entropy_rows(p: np.ndarray) -> np.ndarray:
    """Shannon entropy (nats) of each row of ``p`` (shape (k, n)), 0 log 0 = 0."""
    return entr(np.clip(p, 0.0, None)).sum(axis=-1)


@dataclass(frozen=True)
class Split:
    """P_W on its live values and the posterior maps of a finite model.

    Attributes
    ----------
    p_w : ndarray, shape (n,)
        P(W = w) for the live w (P(w) > 0).
    live : ndarray of int
        Indices of the live w in the observation alphabet (size ``n_w``).
    n_w : int
        Size of the observation alphabet (``useful``: n_u, ``full``: n_s n_u).
    a_s : ndarray, shape (n_s, n)
        Columns P(S | w), for the s with P(s) > 0.
    a_u : ndarray, shape (n_u, n)
        Columns P(U | w).
    """

    p_w: np.ndarray
    live: np.ndarray
    n_w: int
    a_s: np.ndarray
    a_u: np.ndarray

    @property
    def p_s(self) -> np.ndarray:
        return self.a_s @ self.p_w

    @property
    def h_s(self) -> float:
        return float(entropy_rows(self.p_s[None])[0])

    @property
    def h_u(self) -> float:
        return float(entropy_rows((self.a_u @ self.p_w)[None])[0])

    @property
    def anchors(self) -> np.ndarray:
        """Posteriors worth offering the achievable end besides the triangulation: P_W (Z constant)
        and P(W | U = u) for each u (Z = U), rows of shape (1 + n_u', n)."""
        p_uw = self.a_u * self.p_w  # (n_u, n)
        keep = p_uw.sum(axis=1) > 0
        return np.vstack([self.p_w[None], p_uw[keep] / p_uw[keep].sum(axis=1, keepdims=True)])

    def h_u_of(self, q: np.ndarray) -> np.ndarray:
        """h_U(q) = H(A_U q) for each row q of ``q`` (shape (k, n))."""
        return entropy_rows(q @ self.a_u.T)

    def cost(self, q: np.ndarray, privacy: str) -> np.ndarray:
        """The per-posterior leakage cost of each row of ``q``."""
        p = q @ self.a_s.T
        if privacy == "mi":
            return self.h_s - entropy_rows(p)
        if privacy == "map":
            return p.max(axis=1)
        return (p**2 / self.p_s).sum(axis=1) - 1.0

    def prior_minorant(self, q: np.ndarray, privacy: str) -> np.ndarray:
        """The affine minorant of ``cost`` tangent where A_S q = P(S) (cost 0, or max P(s) for map), at each row
        of ``q``: exact on the whole set of posteriors that leak nothing, where the barycentre's is loose."""
        p = q @ self.a_s.T
        if privacy == "mi":
            return self.h_s + p @ np.log(self.p_s)
        if privacy == "map":
            return p[:, int(np.argmax(self.p_s))]
        return np.zeros(len(q))

    def supporting(self, centres: np.ndarray, privacy: str) -> tuple[np.ndarray, np.ndarray]:
        """Affine minorants of ``cost``: (a, b) with cost(q) >= a_k . q + b_k for all q, one per centre.

        mi: H(p) <= -sum_s p_s log c_s (Gibbs) with c = A_S centre; map: max_s p_s >= p_{s*},
        s* = argmax c; chi2: the tangent plane of the convex quadratic at the centre.
        """
        c = centres @ self.a_s.T  # (k, n_s)
        k = centres.shape[0]
        if privacy == "mi":
            logc = np.where(c > 0, np.log(np.where(c > 0, c, 1.0)), 0.0)  # s with c_s = 0 have p_s = 0 in the cell
            return logc @ self.a_s, np.full(k, self.h_s)
        if privacy == "map":
            return self.a_s[np.argmax(c, axis=1)], np.zeros(k)
        grad = (2.0 * c / self.p_s) @ self.a_s
        value = (c**2 / self.p_s).sum(axis=1) - 1.0
        return grad, value - (grad * centres).sum(axis=1)


def split_model(joint: np.ndarray, observation: str) -> Split:
    """The :class:`Split` of a joint pmf P(S, U) under the observation ``useful`` or ``full``."""
    joint = np.asarray(joint, dtype=float)
    n_s, n_u = joint.shape
    kernel = observation_kernel(n_s, n_u, observation)
    p_suw = (joint.reshape(-1, 1) * kernel).reshape(n_s, n_u, -1)
    p_w = p_suw.sum(axis=(0, 1))
    live = np.flatnonzero(p_w > 0)
    if live.size == 0:  # pragma: no cover - a joint pmf has mass
        raise InputError("the model has no mass")
    p_sw = p_suw.sum(axis=1)[:, live]
    keep_s = p_sw.sum(axis=1) > 0
    a_s = p_sw[keep_s] / p_w[live]
    a_u = p_suw.sum(axis=0)[:, live] / p_w[live]
    return Split(p_w[live], live, int(kernel.shape[1]), a_s, a_u)
