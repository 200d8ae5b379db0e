"""Optimal Gaussian noise-adding mechanisms for the binary Gaussian mixture (GAP §4).

Modules: ``accuracy.py`` (exact MAP accuracy and distortion of a mechanism),
``families.py`` (the best mechanism of each family), ``bounds.py``
(:func:`mixture_optimum`, :func:`mixture_curve` and the ``binary-gmm`` provider).
The certified sandwich over ALL mechanisms (map and mi, ``family="certified"``):
``cells.py`` (cells/bins, truncated-normal moments, density-ratio facts),
``discretize.py`` (the shared discretised model), ``achievable.py`` (upper end),
``relaxation.py`` (lower end), ``conic.py`` (Clarabel with dual objective),
``certified.py`` (refinement, :func:`certified_optimum`), ``table.py`` (the
committed table), ``stored.py`` (reading it), ``interpolate.py`` (a bracket at any
budget from the stored ones) and ``identity.py`` (I(S; U), the identity release).

Model (:class:`~privbench.datasets.BinaryGMM`): S ~ Bern(prior),
U | S=0 ~ N(-mu, sigma0^2), U | S=1 ~ N(mu, sigma1^2).  Privacy is the accuracy
of the Bayes-optimal MAP adversary guessing S from Z, distortion E(Z - U)^2 <= D.
Mechanisms have the form of GAP §4 (GAP's Y, X, X-hat are our S, U, Z)::

    Z = U + (1-S) beta0 - S beta1 + ((1-S) gamma0 + S gamma1) N,   N ~ N(0, 1)

so Z | S=0 ~ N(-mu + beta0, sigma0^2 + gamma0^2), Z | S=1 ~ N(mu - beta1,
sigma1^2 + gamma1^2) and the distortion is
(1-prior)(beta0^2 + gamma0^2) + prior (beta1^2 + gamma1^2).

Families (each value is the exact MAP accuracy of the returned mechanism):

``additive``     PDI, Z = U + beta + gamma N (GAP Theorem 2): beta = 0, gamma = sqrt(D).
                 Also optimal for sigma0 != sigma1, because more common noise is a
                 garbling of less.
``shift``        gamma0 = gamma1 = 0, beta0, beta1 >= 0 (GAP Theorem 3).  Eq (40) is the
                 largest achievable total shift b_max = sqrt(D / (prior (1-prior)));
                 it is optimal only while b_max <= 2 mu: beyond that it over-shifts and
                 the accuracy rises again.  The family optimum is the total shift
                 min(b_max, 2 mu), for any variances (see below).
``shift-noise``  common gamma (GAP Theorem 4).  Optimal split b0 = prior b,
                 b1 = (1-prior) b, gamma^2 = D - prior (1-prior) b^2; for equal variances
                 (41) has the closed form b = min(b_max, 2 mu, (D + sigma^2) / (2 mu
                 prior (1-prior))) (sign of the derivative of (42)); otherwise a 1-d search.
``general``      all four parameters (GAP §4.1.2): grid search over (eps, w0, w1) in
                 [0, 1]^3 of eq (44), CORRECTED (see :func:`general_parameters`).

Two facts used throughout (both checked numerically in the tests): the MAP
error ∫ min(prior f1, (1-prior) f0) of two symmetric unimodal densities is
non-increasing in the distance of their centres (layer-cake: each level set is an
intersection of two intervals), so the accuracy is non-decreasing in |mean
difference|; and adding common independent noise never increases accuracy
(data processing).  Hence shifts beyond the point where the means meet never
help, beta >= 0 loses nothing, and optima lie on the distortion boundary.
"""

from __future__ import annotations

from .accuracy import (
    FAMILIES,
    general_parameters,
    map_accuracy_two_gaussians,
    mechanism_accuracy,
    mechanism_distortion,
)
from .bounds import DEFAULT_FAMILY, FAMILY_OBSERVATION, METHODS, MixtureFamilies, mixture_curve, mixture_optimum

__all__ = [
    "DEFAULT_FAMILY", "FAMILIES", "FAMILY_OBSERVATION", "METHODS", "MixtureFamilies", "general_parameters",
    "map_accuracy_two_gaussians", "mechanism_accuracy", "mechanism_distortion", "mixture_curve",
    "mixture_optimum",
]
