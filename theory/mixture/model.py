"""Class models of the certified sandwich: any 1-D mixture of Gaussians with a binary S.

:class:`ComponentMixture` (the ``gmm-k`` scenario, :mod:`privbench.datasets.scenarios.gmm_k`) is
``P(S=1) = prior``, ``U | S=s ~ sum_k w_sk N(m_sk, sd_sk^2)`` with K_s components per class
(weights within a class sum to 1).
:func:`class_components` gives, for it or for a
:class:`~privbench.datasets.BinaryGMM` (one component per class), the weighted
components of each class: ``[(weights, means, sds), (weights, means, sds)]`` with the
class-0 weights summing to 1 - prior and the class-1 weights to prior. Everything the
sandwich needs of a model is linear in these components (cell masses and moments)
except the density-ratio facts of the ``useful`` relaxation, which are used only
where each class is one Gaussian (without them the relaxation is only looser).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from privbench.datasets.scenarios.gmm_k import ComponentMixture

__all__ = ["ComponentMixture", "class_components", "min_sd", "prior_of"]


def class_components(sc: Any) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Weighted components per class of ``sc`` (a ComponentMixture, or a BinaryGMM)."""
    own = getattr(sc, "class_components", None)
    if callable(own):
        return own()
    return [(np.array([1.0 - sc.prior]), np.array([-sc.mu]), np.array([sc.sigma0])),
            (np.array([sc.prior]), np.array([sc.mu]), np.array([sc.sigma1]))]


def min_sd(sc: Any) -> float:
    """The smallest component standard deviation (the grid unit)."""
    return float(min(float(s.min()) for _, _, s in class_components(sc)))


def prior_of(sc: Any) -> float:
    """P(S = 1)."""
    return float(sc.prior)
