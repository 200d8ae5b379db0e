"""A binary S with K Gaussian components per class: any 1-D mixture of Gaussians (issue 12).

``P(S=1) = prior``; ``U | S=s ~ sum_k w_sk N(m_sk, sd_sk^2)`` with ``class0`` / ``class1`` lists
of (weight, mean, sd) rows whose weights sum to 1 within a class.  With one component per class
it is :class:`~privbench.datasets.scenarios.BinaryGMM` under another name; with more it is the
model the certified sandwich (theory/mixture/certified.py) covers beyond the papers: theory's
``gmm-k`` provider bounds the optimum over ALL mechanisms from both ends (MAP and MI, both
observations), solving the sandwich for each budget (seconds to minutes; nothing is stored).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Sequence

import numpy as np

from ..errors import InputError
from ..limits import MAX_MAGNITUDE
from ..samples import Samples
from ..tasks import Task
from ..validate import check_finite
from .base import Scenario
from .params import REQUIRED, Param, parse_float, parse_matrix
from .registry import register_scenario

Components = tuple[tuple[float, float, float], ...]
#: Components per class at most (the sandwich's grids grow with the support).
MAX_COMPONENTS = 16


def check_components(name: str, comps: Sequence[Sequence[float]]) -> Components:
    """``comps`` as (weight, mean, sd) rows: weights and sds finite and > 0, weights summing to 1."""
    try:
        rows = tuple((float(w), float(m), float(s)) for w, m, s in comps)
    except (TypeError, ValueError):
        raise InputError(f"{name}={comps!r} must be a list of (weight, mean, sd) triples") from None
    if not rows:
        raise InputError(f"{name} is empty (each class needs at least one component)")
    if len(rows) > MAX_COMPONENTS:
        raise InputError(f"{name} has {len(rows)} components (at most {MAX_COMPONENTS})")
    arr = np.array(rows)
    if not np.all(np.isfinite(arr)) or np.any(arr[:, 0] <= 0) or np.any(arr[:, 2] <= 0):
        raise InputError(f"{name}={comps!r}: weights and sds must be finite and > 0")
    if np.any(np.abs(arr[:, 1:]) > MAX_MAGNITUDE):
        raise InputError(f"{name}={comps!r}: means and sds must be at most {MAX_MAGNITUDE:g} in magnitude")
    if abs(arr[:, 0].sum() - 1.0) > 1e-9:
        raise InputError(f"{name} weights sum to {arr[:, 0].sum():.12g} (must sum to 1)")
    return rows


@register_scenario
@dataclass(frozen=True)
class ComponentMixture(Scenario):
    """S ~ Bern(prior); U | S=0 ~ sum w N(m, sd^2) over ``class0``, U | S=1 over ``class1``."""

    prior: float
    class0: Components
    class1: Components

    kind: ClassVar[str] = "mixture"
    distortion_name: ClassVar[str] = "mse"
    name: ClassVar[str] = "gmm-k"
    summary: ClassVar[str] = "binary S, U | S=s a mixture of K Gaussians (certified sandwich over all mechanisms)"
    PARAMS: ClassVar[tuple[Param, ...]] = (
        Param("prior", parse_float, REQUIRED, "P(S = 1), in (0, 1)"),
        Param("class0", parse_matrix, REQUIRED, "U | S=0: JSON list of [weight, mean, sd] rows, weights sum to 1"),
        Param("class1", parse_matrix, REQUIRED, "U | S=1: JSON list of [weight, mean, sd] rows, weights sum to 1"),
    )
    EXAMPLE: ClassVar[dict[str, Any]] = {"prior": 0.4, "class0": [[0.5, -2.5, 0.8], [0.5, 1.5, 0.6]],
                                         "class1": [[0.7, 0.0, 0.7], [0.3, 3.0, 1.0]]}

    def __post_init__(self) -> None:
        p = check_finite("prior", self.prior)
        if not 0.0 < p < 1.0:
            raise InputError(f"prior={self.prior!r} is outside (0, 1)")
        object.__setattr__(self, "prior", p)
        object.__setattr__(self, "class0", check_components("class0", self.class0))
        object.__setattr__(self, "class1", check_components("class1", self.class1))

    def task(self, observation: str, privacy: str = "mi") -> Task:
        return Task("mixture", observation, privacy, "mse", n_s=2, d_u=1)

    @property
    def id(self) -> str:
        def part(c: Components) -> str:
            return "+".join(f"{w:g}N({m:g},{s:g})" for w, m, s in c)
        return f"{self.name}-prior{self.prior:g}-[{part(self.class0)}]-[{part(self.class1)}]"

    def class_components(self) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """Per class: (weights scaled by P(S=s), means, sds) of its components."""
        out = []
        for weight, comps in ((1.0 - self.prior, self.class0), (self.prior, self.class1)):
            arr = np.array(comps, dtype=float)
            out.append((weight * arr[:, 0], arr[:, 1], arr[:, 2]))
        return out

    def sample(self, n: int, rng: np.random.Generator) -> Samples:
        n = self._check_n(n)
        s = (rng.random(n) < self.prior).astype(np.int64)
        u = np.empty(n)
        for cls, comps in ((0, self.class0), (1, self.class1)):
            rows = np.flatnonzero(s == cls)
            arr = np.array(comps, dtype=float)
            k = rng.choice(len(arr), size=rows.size, p=arr[:, 0] / arr[:, 0].sum())
            u[rows] = arr[k, 1] + arr[k, 2] * rng.standard_normal(rows.size)
        return Samples(s, u)
