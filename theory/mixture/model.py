"""Class models of the certified sandwich: any 1-D mixture of Gaussians with a binary S.

:class:`ComponentMixture` is ``P(S=1) = prior``, ``U | S=s ~ sum_k w_sk N(m_sk, sd_sk^2)``
with K_s components per class (weights within a class sum to 1).
:func:`class_components` gives, for it or for a
:class:`~privbench.datasets.BinaryGMM` (one component per class), the weighted
components of each class: ``[(weights, means, sds), (weights, means, sds)]`` with the
class-0 weights summing to 1 - prior and the class-1 weights to prior. Everything the
sandwich needs of a model is linear in these components (cell masses and moments)
except the density-ratio facts of the ``useful`` relaxation, which are used only
where each class is one Gaussian (without them the relaxation is only looser).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from privbench.datasets.errors import InputError

__all__ = ["ComponentMixture", "class_components", "min_sd", "prior_of"]

Components = tuple[tuple[float, float, float], ...]


def _check_class(name: str, comps: Sequence[Sequence[float]]) -> Components:
    try:
        rows = tuple((float(w), float(m), float(s)) for w, m, s in comps)
    except (TypeError, ValueError):
        raise InputError(f"{name}={comps!r} must be a list of (weight, mean, sd) triples") from None
    if not rows:
        raise InputError(f"{name} is empty (each class needs at least one component)")
    arr = np.array(rows)
    if not np.all(np.isfinite(arr)) or np.any(arr[:, 0] <= 0) or np.any(arr[:, 2] <= 0):
        raise InputError(f"{name}={comps!r}: weights and sds must be finite and > 0")
    if abs(arr[:, 0].sum() - 1.0) > 1e-9:
        raise InputError(f"{name} weights sum to {arr[:, 0].sum():.12g} (must sum to 1)")
    return rows


@dataclass(frozen=True)
class ComponentMixture:
    """S ~ Bern(prior); U | S=0 ~ sum w N(m, sd^2) over ``class0``, U | S=1 over ``class1``.

    ``class0``, ``class1``: sequences of (weight, mean, sd); weights within a class sum to 1.
    """

    prior: float
    class0: Components
    class1: Components

    def __post_init__(self) -> None:
        p = float(self.prior)
        if not 0.0 < p < 1.0:
            raise InputError(f"prior={self.prior!r} is outside (0, 1)")
        object.__setattr__(self, "prior", p)
        object.__setattr__(self, "class0", _check_class("class0", self.class0))
        object.__setattr__(self, "class1", _check_class("class1", self.class1))

    @property
    def id(self) -> str:
        def part(c: Components) -> str:
            return "+".join(f"{w:g}N({m:g},{s:g})" for w, m, s in c)
        return f"gmm-k-prior{self.prior:g}-[{part(self.class0)}]-[{part(self.class1)}]"

    def class_components(self) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        out = []
        for weight, comps in ((1.0 - self.prior, self.class0), (self.prior, self.class1)):
            arr = np.array(comps, dtype=float)
            out.append((weight * arr[:, 0], arr[:, 1], arr[:, 2]))
        return out


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
