"""The Z-channel model: a binary S seen through a channel that only ever turns a 1 into a 0.

S ~ Bernoulli(p); U = 0 when S = 0, and when S = 1, U = 1 with probability
1 - e, else 0 (a Z-channel with erasure-to-zero probability e).  Distortion is
Hamming on U.  The example of adding a scenario to privbench: this file (the
data model) and ``theory/z_channel.py`` (its closed-form MAP optimum); every
other layer (tasks, learners, evaluators, suites, reports) serves it through
its kind, ``finite``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ..validate import check_probability
from .finite import FiniteScenario
from .params import REQUIRED, Param, fmt, parse_float
from .registry import register_scenario


@register_scenario
@dataclass(frozen=True)
class ZChannel(FiniteScenario):
    """S ~ Bern(p); U = S except that a 1 becomes 0 with probability e; Hamming distortion."""

    p: float
    e: float

    name: ClassVar[str] = "z-channel"
    summary: ClassVar[str] = "S ~ Bern(p), U = S through a Z-channel (1 -> 0 w.p. e); Hamming distortion"
    PARAMS: ClassVar[tuple[Param, ...]] = (
        Param("p", parse_float, REQUIRED, "P(S = 1), in [0, 1]"),
        Param("e", parse_float, REQUIRED, "P(U = 0 | S = 1), in [0, 1]"),
    )
    EXAMPLE: ClassVar[dict[str, Any]] = {"p": 0.4, "e": 0.3}

    def __post_init__(self) -> None:
        object.__setattr__(self, "p", check_probability("p", self.p))
        object.__setattr__(self, "e", check_probability("e", self.e))

    @property
    def id(self) -> str:
        return f"{self.name}-p{fmt(self.p)}-e{fmt(self.e)}"

    def joint(self) -> np.ndarray:
        """P(S=s, U=u): [[1 - p, 0], [p e, p (1 - e)]]."""
        p, e = self.p, self.e
        return np.array([[1.0 - p, 0.0], [p * e, p * (1.0 - e)]])
