"""Finite-alphabet scenarios: the symmetric pair (PPAN), the binary model (GAP), any joint pmf."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ..errors import InputError
from ..samples import Samples
from ..tasks import Task
from ..limits import MAX_ALPHABET
from ..validate import check_int, check_probability
from .base import Scenario
from .params import REQUIRED, Param, as_matrix, digest, fmt, parse_float, parse_int, parse_matrix, show
from .registry import register_scenario


class FiniteScenario(Scenario):
    """A scenario whose S and U take finitely many values."""

    kind = "finite"

    def joint(self) -> np.ndarray:
        """P(S=s, U=u), shape (n_s, n_u)."""
        raise NotImplementedError  # pragma: no cover

    def distortion_matrix(self) -> np.ndarray:
        """d(u, z), shape (n_u, n_z); Hamming (Z has U's alphabet) by default."""
        return 1.0 - np.eye(self.joint().shape[1])

    def alphabet_sizes(self) -> tuple[int, int, int]:
        """(n_s, n_u, n_z); models whose ``joint()`` may be huge override it so that a
        program's size can be checked before anything of that size is built."""
        n_u, n_z = self.distortion_matrix().shape
        return self.joint().shape[0], n_u, n_z

    @property
    def distortion_name(self) -> str:
        d = self.distortion_matrix()
        if d.shape[0] == d.shape[1] and np.array_equal(d, 1.0 - np.eye(d.shape[0])):
            return "hamming"
        return "matrix"

    def task(self, observation: str, privacy: str = "mi", distortion: str | None = None) -> Task:
        """The learner's task; ``distortion="logloss"`` asks for the privacy funnel's (H(U | Z), n_z = n_w + 1)."""
        joint = self.joint()
        if distortion == "logloss":
            n_s, n_u = joint.shape
            n_w = n_u if observation == "useful" else n_s * n_u
            return Task("finite", observation, privacy, "logloss", n_s=n_s, n_u=n_u, n_z=n_w + 1)
        if distortion not in (None, self.distortion_name):
            raise InputError(f"distortion={distortion!r} is not available for {self.name} "
                             f"(allowed: {self.distortion_name}, logloss)")
        dm = self.distortion_matrix()
        return Task("finite", observation, privacy, self.distortion_name, n_s=joint.shape[0],
                    n_u=joint.shape[1], n_z=dm.shape[1], distortion_matrix=tuple(map(tuple, dm.tolist())))

    def sample(self, n: int, rng: np.random.Generator) -> Samples:
        n = self._check_n(n)
        p = self.joint()
        idx = rng.choice(p.size, size=n, p=p.ravel())
        s, u = np.divmod(idx, p.shape[1])
        return Samples(s.astype(np.int64), u.astype(np.int64))


@register_scenario
@dataclass(frozen=True)
class SymmetricPair(FiniteScenario):
    """PPAN eq (7): S, U on {0..m-1}; P = (1-p)/m on the diagonal, p/(m(m-1)) off it."""

    m: int
    p: float

    name: ClassVar[str] = "symmetric-pair"
    summary: ClassVar[str] = "PPAN eq (7); S = PPAN's X, U = PPAN's Y; Hamming distortion"
    PARAMS: ClassVar[tuple[Param, ...]] = (
        Param("m", parse_int, REQUIRED, "alphabet size, integer >= 2"),
        Param("p", parse_float, REQUIRED, "P(S != U), in [0, 1]"),
    )
    EXAMPLE: ClassVar[dict[str, Any]] = {"m": 3, "p": 0.2}

    def __post_init__(self) -> None:
        object.__setattr__(self, "m", check_int("m", self.m, 2, maximum=MAX_ALPHABET))
        object.__setattr__(self, "p", check_probability("p", self.p))

    @property
    def id(self) -> str:
        return f"{self.name}-m{self.m}-p{fmt(self.p)}"

    def alphabet_sizes(self) -> tuple[int, int, int]:
        return self.m, self.m, self.m

    def joint(self) -> np.ndarray:
        m, p = self.m, self.p
        out = np.full((m, m), p / (m * (m - 1)))
        np.fill_diagonal(out, (1.0 - p) / m)
        return out


@register_scenario
@dataclass(frozen=True)
class Binary(FiniteScenario):
    """GAP §3: U ~ Bernoulli(p) public, N ~ Bernoulli(q) independent, S = U xor N."""

    p: float
    q: float

    name: ClassVar[str] = "binary"
    summary: ClassVar[str] = "GAP §3: U ~ Bern(p) public, S = U xor N with N ~ Bern(q)"
    PARAMS: ClassVar[tuple[Param, ...]] = (
        Param("p", parse_float, REQUIRED, "P(U = 1), in [0, 1]"),
        Param("q", parse_float, REQUIRED, "P(N = 1), in [0, 1]"),
    )
    EXAMPLE: ClassVar[dict[str, Any]] = {"p": 0.3, "q": 0.2}

    def __post_init__(self) -> None:
        object.__setattr__(self, "p", check_probability("p", self.p))
        object.__setattr__(self, "q", check_probability("q", self.q))

    @property
    def id(self) -> str:
        return f"{self.name}-p{fmt(self.p)}-q{fmt(self.q)}"

    def joint(self) -> np.ndarray:
        pu = np.array([1.0 - self.p, self.p])
        pn = np.array([1.0 - self.q, self.q])
        out = np.empty((2, 2))
        for s in range(2):
            for u in range(2):
                out[s, u] = pu[u] * pn[s ^ u]
        return out


@register_scenario
@dataclass(frozen=True)
class Finite(FiniteScenario):
    """Any finite model: a joint pmf P[s][u] and a distortion matrix d[u][z]."""

    joint_pmf: tuple[tuple[float, ...], ...]
    distortion: tuple[tuple[float, ...], ...] | None = None

    name: ClassVar[str] = "finite"
    summary: ClassVar[str] = "any finite model: joint P[s][u], distortion d[u][z]"
    PARAMS: ClassVar[tuple[Param, ...]] = (
        Param("joint", parse_matrix, REQUIRED, "JSON matrix P[s][u], non-negative, sums to 1"),
        Param("distortion", parse_matrix, None, "JSON matrix d[u][z] >= 0 (default Hamming)"),
    )
    EXAMPLE: ClassVar[dict[str, Any]] = {"joint": "[[0.4, 0.1], [0.2, 0.3]]"}
    _CLI_TO_FIELD: ClassVar[dict[str, str]] = {"joint": "joint_pmf"}

    @classmethod
    def build(cls, values: dict[str, Any]) -> "Finite":
        return cls(**{cls._CLI_TO_FIELD.get(k, k): v for k, v in values.items()})

    def __post_init__(self) -> None:
        joint = as_matrix(self.joint_pmf, self.joint_pmf)
        arr = np.asarray(joint)
        if np.any(arr < 0):
            raise InputError(f"joint={show(arr)} has negative entries (must be >= 0)")
        if abs(arr.sum() - 1.0) > 1e-9:
            raise InputError(f"joint={show(arr)} sums to {arr.sum():.12g} (must sum to 1)")
        object.__setattr__(self, "joint_pmf", joint)
        if self.distortion is not None:
            dist = as_matrix(self.distortion, self.distortion)
            d = np.asarray(dist)
            if d.shape[0] != arr.shape[1]:
                raise InputError(
                    f"distortion has {d.shape[0]} rows but U has {arr.shape[1]} values "
                    "(need one row per value of U)"
                )
            if np.any(d < 0):
                raise InputError(f"distortion={show(d)} has negative entries (must be >= 0)")
            object.__setattr__(self, "distortion", dist)

    @property
    def id(self) -> str:
        d = self.distortion if self.distortion is not None else []
        a = np.asarray(self.joint_pmf)
        return f"{self.name}-{a.shape[0]}x{a.shape[1]}-{digest(self.joint_pmf, d)}"

    def params(self) -> dict[str, Any]:
        return {
            "joint": [list(r) for r in self.joint_pmf],
            "distortion": None if self.distortion is None else [list(r) for r in self.distortion],
        }

    def joint(self) -> np.ndarray:
        return np.array(self.joint_pmf, dtype=float)

    def distortion_matrix(self) -> np.ndarray:
        if self.distortion is None:
            return super().distortion_matrix()
        return np.array(self.distortion, dtype=float)
