"""I(S; U) of the binary Gaussian mixture: the leakage of the identity release Z = U."""

from __future__ import annotations

import numpy as np
from scipy.integrate import quad
from scipy.special import xlogy
from scipy.stats import norm

from privbench.datasets.scenarios import BinaryGMM

__all__ = ["identity_mi"]


def identity_mi(sc: BinaryGMM) -> float:
    """I(S; U) in nats, by adaptive quadrature of sum_s P(s) p_s(u) log(p_s(u) / p(u)) (abs. error ~1e-10)."""
    w = (1 - sc.prior, sc.prior)
    dens = (lambda u: w[0] * norm.pdf(u, -sc.mu, sc.sigma0), lambda u: w[1] * norm.pdf(u, sc.mu, sc.sigma1))

    def integrand(u: float) -> float:
        a, b = dens[0](u), dens[1](u)
        tot = a + b
        if tot <= 0:
            return 0.0
        return float(xlogy(a, a / (w[0] * tot)) + xlogy(b, b / (w[1] * tot)))

    lo = min(-sc.mu - 12 * sc.sigma0, sc.mu - 12 * sc.sigma1)
    hi = max(-sc.mu + 12 * sc.sigma0, sc.mu + 12 * sc.sigma1)
    pts = sorted({-sc.mu, sc.mu, 0.0})
    return float(max(0.0, quad(integrand, lo, hi, points=pts, limit=400, epsabs=1e-12, epsrel=1e-10)[0]))
