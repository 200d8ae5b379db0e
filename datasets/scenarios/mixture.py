"""The binary Gaussian mixture (GAP §4)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ..errors import InputError
from ..samples import Samples
from ..tasks import Task
from ..validate import check_finite, check_magnitude, check_scale
from .base import Scenario
from .params import REQUIRED, Param, fmt, parse_float
from .registry import register_scenario


@register_scenario
@dataclass(frozen=True)
class BinaryGMM(Scenario):
    """GAP §4: S ~ Bern(prior); U | S=0 ~ N(-mu, sigma0^2), U | S=1 ~ N(mu, sigma1^2)."""

    prior: float
    mu: float
    sigma0: float
    sigma1: float

    kind: ClassVar[str] = "mixture"
    distortion_name: ClassVar[str] = "mse"
    name: ClassVar[str] = "binary-gmm"
    summary: ClassVar[str] = "GAP §4: U | S=0 ~ N(-mu, sigma0^2), U | S=1 ~ N(mu, sigma1^2)"
    PARAMS: ClassVar[tuple[Param, ...]] = (
        Param("prior", parse_float, REQUIRED, "P(S = 1), in (0, 1)"),
        Param("mu", parse_float, REQUIRED, "half the distance between the class means, >= 0"),
        Param("sigma0", parse_float, REQUIRED, "standard deviation of U given S=0, > 0"),
        Param("sigma1", parse_float, REQUIRED, "standard deviation of U given S=1, > 0"),
    )
    EXAMPLE: ClassVar[dict[str, Any]] = {"prior": 0.5, "mu": 1.0, "sigma0": 1.0, "sigma1": 1.0}

    def task(self, observation: str, privacy: str = "mi") -> Task:
        return Task("mixture", observation, privacy, "mse", n_s=2, d_u=1)

    def __post_init__(self) -> None:
        prior = check_finite("prior", self.prior)
        if not 0.0 < prior < 1.0:
            raise InputError(f"prior={self.prior!r} is outside (0, 1)")
        mu = check_magnitude("mu", self.mu)
        if mu < 0:
            raise InputError(f"mu={self.mu!r} must be >= 0")
        object.__setattr__(self, "prior", prior)
        object.__setattr__(self, "mu", mu)
        object.__setattr__(self, "sigma0", check_scale("sigma0", self.sigma0))
        object.__setattr__(self, "sigma1", check_scale("sigma1", self.sigma1))

    @property
    def id(self) -> str:
        return (
            f"{self.name}-prior{fmt(self.prior)}-mu{fmt(self.mu)}"
            f"-s0{fmt(self.sigma0)}-s1{fmt(self.sigma1)}"
        )

    def sample(self, n: int, rng: np.random.Generator) -> Samples:
        n = self._check_n(n)
        s = (rng.random(n) < self.prior).astype(np.int64)
        mean = np.where(s == 1, self.mu, -self.mu)
        sd = np.where(s == 1, self.sigma1, self.sigma0)
        return Samples(s, mean + sd * rng.standard_normal(n))
