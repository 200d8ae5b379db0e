"""From f-divergence privacy to probabilistic information privacy (IP) and weak DP.

Source: Wang & Tay, "On the relationship between information-theoretic privacy
metrics and probabilistic information privacy" (``shared/seeds/chi2_privacy_wang_tay.txt``;
the paper's release Y is privbench's Z). For a finite joint pmf ``p_sz[s, z] =
P(S=s, Z=z)`` this module computes the exact quantities (f-divergence
informations, exact smallest IP / strong-IP / DP deltas) and the paper's bounds
(Theorem 1, Corollary 1, Lemma 1) that turn a measured TV / KL / chi-square
level into an (eps, delta) guarantee.

Conventions and corrections of the OCR'd paper (checked against the appendices
and against exact numbers in ``tests/theory/test_guarantees.py``):

* TV is the paper's ``sum |p - q|`` (in [0, 2], no factor 1/2).
* Theorem 1(a) prints ``delta = eta / (1 e^{-eps})``; Appendix A proves
  ``eta / (1 - e^{-eps})``, which is used. Read literally (product, or
  ``1 + e^{-eps}``) the bound is false. Appendix A is also loose: since
  ``sum (p-q)_+ = sum (q-p)_+ = TV/2``, ``P(R) <= TV / (2(1 - e^{-eps}))`` and
  ``P(L) <= TV / (2(e^eps - 1))``; their sum (see :func:`ip_tail_bounds`) is
  smaller by the factor ``(1 + e^eps) / (2 e^eps)`` and is attained in the limit.
* Theorem 1(b): ``zeta(-eps)`` must take the sup over ``p < e^{-eps}`` only (the
  proof's domain ``gamma > p``); over all of [0, 1] the point p = 1 (0 log 0 = 0)
  would make it 1. If ``eta >= eps`` then ``zeta(eps) = 1`` (trivial).
* Theorem 1(c): the right-tail term exceeds 1 and is *increasing* in eps for
  ``e^eps < sqrt(1 + eta)``; the bound is capped at 1, which makes it monotone.
* Strong IP (eq 3) counts every s, including s with P(s | z) = 0 (d = 0).

The chi-square level ``chi2_information`` is :func:`privbench.theory.measures.chi2_information`
(re-exported here beside :func:`tv_information` and :func:`kl_information`).

Modules: ``checks.py`` (validation), ``exact.py`` (exact quantities),
``bounds.py`` (the paper's bounds and :func:`guarantees`), ``metric.py`` (which privbench
privacy metric gives which guarantee: :func:`leakage_guarantee`, :func:`joint_guarantee`).
"""

from ..measures import chi2_information
from .bounds import SOURCES, dp_from_strong_ip, guarantees, ip_delta_bound, ip_tail_bounds, strong_ip_delta_bound
from .checks import DIVERGENCES, RTOL
from .metric import METRIC_DIVERGENCE, joint_guarantee, leakage_guarantee, map_tv_bound
from .exact import dp_delta, ip_delta, ip_tails, kl_information, strong_divergences, strong_ip_delta, tv_information

__all__ = [
    "DIVERGENCES", "METRIC_DIVERGENCE", "RTOL", "SOURCES", "chi2_information", "dp_delta", "dp_from_strong_ip", "guarantees",
    "ip_delta", "ip_delta_bound", "ip_tail_bounds", "ip_tails", "joint_guarantee", "kl_information",
    "leakage_guarantee", "map_tv_bound", "strong_divergences",
    "strong_ip_delta", "strong_ip_delta_bound", "tv_information",
]
