"""Gaussian scenarios: scalar and vector jointly Gaussian (S, U) (PPAN), and the Gaussian source."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ..errors import InputError
from ..samples import Samples
from ..tasks import Task
from ..validate import check_finite, check_scale
from .base import Scenario
from .params import REQUIRED, Param, as_matrix, digest, fmt, parse_float, parse_float_list, parse_matrix, show
from .registry import register_scenario


class GaussianScenario(Scenario):
    """Zero-mean jointly Gaussian (S, U) with MSE distortion E||U - Z||^2."""

    kind = "gaussian"
    distortion_name = "mse"

    def cov(self) -> np.ndarray:
        """Joint covariance of (S, U), shape (d_s + d_u, d_s + d_u)."""
        raise NotImplementedError  # pragma: no cover

    @property
    def dims(self) -> tuple[int, int]:
        """(d_s, d_u)."""
        raise NotImplementedError  # pragma: no cover

    #: The observation every task of this scenario has (None: the case's); a source has S = U = W.
    fixed_observation: ClassVar[str | None] = None

    def task(self, observation: str, privacy: str = "mi") -> Task:
        d_s, d_u = self.dims
        return Task("gaussian", self.fixed_observation or observation, privacy, "mse", d_s=d_s, d_u=d_u)

    def sample(self, n: int, rng: np.random.Generator) -> Samples:
        n = self._check_n(n)
        d_s, d_u = self.dims
        cov = self.cov()
        vals, vecs = np.linalg.eigh(cov)
        factor = vecs * np.sqrt(np.clip(vals, 0.0, None))
        x = rng.standard_normal((n, d_s + d_u)) @ factor.T
        return Samples(x[:, :d_s].copy(), x[:, d_s:].copy())


def check_psd(name: str, cov: np.ndarray, strict: bool) -> None:
    if not np.allclose(cov, cov.T, atol=1e-12):
        raise InputError(f"{name}={show(cov)} is not symmetric")
    eig = np.linalg.eigvalsh(cov)
    tol = 1e-12 * max(1.0, float(np.max(np.abs(eig))))
    if (strict and eig.min() <= tol) or eig.min() < -tol:
        kind = "positive definite" if strict else "positive semi-definite"
        raise InputError(f"{name}={show(cov)} is not {kind} (smallest eigenvalue {eig.min():.3g})")


@register_scenario
@dataclass(frozen=True)
class GaussianScalar(GaussianScenario):
    """Scalar jointly Gaussian S, U with correlation rho (PPAN Props 1 and 3)."""

    rho: float
    var_s: float = 1.0
    var_u: float = 1.0

    name: ClassVar[str] = "gaussian-scalar"
    summary: ClassVar[str] = "PPAN Props 1, 3: scalar jointly Gaussian S, U; MSE distortion"
    PARAMS: ClassVar[tuple[Param, ...]] = (
        Param("rho", parse_float, REQUIRED, "correlation of S and U, in [-1, 1]"),
        Param("var_s", parse_float, 1.0, "variance of S, > 0"),
        Param("var_u", parse_float, 1.0, "variance of U, > 0"),
    )
    EXAMPLE: ClassVar[dict[str, Any]] = {"rho": 0.5}

    def __post_init__(self) -> None:
        rho = check_finite("rho", self.rho)
        if abs(rho) > 1:
            raise InputError(f"rho={self.rho!r} is outside [-1, 1]")
        object.__setattr__(self, "rho", rho)
        object.__setattr__(self, "var_s", check_scale("var_s", self.var_s))
        object.__setattr__(self, "var_u", check_scale("var_u", self.var_u))

    @property
    def id(self) -> str:
        out = f"{self.name}-rho{fmt(self.rho)}"
        if self.var_s != 1.0 or self.var_u != 1.0:
            out += f"-vs{fmt(self.var_s)}-vu{fmt(self.var_u)}"
        return out

    @property
    def dims(self) -> tuple[int, int]:
        return (1, 1)

    def cov(self) -> np.ndarray:
        c = self.rho * np.sqrt(self.var_s * self.var_u)
        return np.array([[self.var_s, c], [c, self.var_u]])


@register_scenario
@dataclass(frozen=True)
class GaussianVector(GaussianScenario):
    """Jointly Gaussian vectors S in R^d_s, U in R^d_u (PPAN Prop 2)."""

    cov_s: tuple[tuple[float, ...], ...]
    cov_u: tuple[tuple[float, ...], ...]
    cov_su: tuple[tuple[float, ...], ...]

    name: ClassVar[str] = "gaussian-vector"
    summary: ClassVar[str] = "PPAN Prop 2: Gaussian vectors; MSE distortion"
    PARAMS: ClassVar[tuple[Param, ...]] = (
        Param("rho", parse_float_list, None, "comma list: identity covariances, diag(rho) cross-covariance"),
        Param("cov_s", parse_matrix, None, "JSON matrix, covariance of S (positive definite)"),
        Param("cov_u", parse_matrix, None, "JSON matrix, covariance of U (positive definite)"),
        Param("cov_su", parse_matrix, None, "JSON matrix, cross-covariance E[S U^T]"),
    )
    EXAMPLE: ClassVar[dict[str, Any]] = {"rho": "0.5,0.3"}

    @classmethod
    def build(cls, values: dict[str, Any]) -> "GaussianVector":
        """Either ``rho`` (identity covariances) or all of ``cov_s``, ``cov_u``, ``cov_su``."""
        has_rho = "rho" in values
        has_cov = [k for k in ("cov_s", "cov_u", "cov_su") if k in values]
        if has_rho and has_cov:
            raise InputError("gaussian-vector takes either rho or cov_s, cov_u, cov_su, not both")
        if has_rho:
            return cls.from_rho(values["rho"])
        if len(has_cov) != 3:
            raise InputError("gaussian-vector needs rho, or all of cov_s, cov_u and cov_su")
        return cls(**values)

    @classmethod
    def from_rho(cls, rho: Any) -> "GaussianVector":
        """Identity covariances and ``diag(rho)`` cross-covariance (PPAN §III-B4)."""
        r = np.atleast_1d(np.asarray(rho, dtype=float))
        if r.ndim != 1 or r.size == 0 or not np.all(np.isfinite(r)):
            raise InputError(f"rho={rho!r} must be a non-empty list of finite numbers")
        if np.any(np.abs(r) > 1):
            raise InputError(f"rho={show(r)} has entries outside [-1, 1]")
        eye = np.eye(r.size)
        return cls(as_matrix(eye, eye), as_matrix(eye, eye), as_matrix(np.diag(r), r))

    def __post_init__(self) -> None:
        cs = np.asarray(as_matrix(self.cov_s, self.cov_s))
        cu = np.asarray(as_matrix(self.cov_u, self.cov_u))
        csu = np.asarray(as_matrix(self.cov_su, self.cov_su))
        if cs.shape[0] != cs.shape[1] or cu.shape[0] != cu.shape[1]:
            raise InputError("cov_s and cov_u must be square matrices")
        if csu.shape != (cs.shape[0], cu.shape[0]):
            raise InputError(
                f"cov_su has shape {csu.shape}, expected {(cs.shape[0], cu.shape[0])} (d_s x d_u)"
            )
        check_psd("cov_s", cs, strict=True)
        check_psd("cov_u", cu, strict=True)
        check_psd("cov", np.block([[cs, csu], [csu.T, cu]]), strict=False)
        for f, a in (("cov_s", cs), ("cov_u", cu), ("cov_su", csu)):
            object.__setattr__(self, f, as_matrix(a, a))

    @property
    def rho(self) -> tuple[float, ...] | None:
        """The rho list when the model is of the identity/diag(rho) form, else None."""
        cs, cu, csu = (np.asarray(x) for x in (self.cov_s, self.cov_u, self.cov_su))
        if cs.shape != cu.shape or not np.array_equal(cs, np.eye(len(cs))):
            return None
        if not np.array_equal(cu, np.eye(len(cu))) or not np.array_equal(csu, np.diag(np.diag(csu))):
            return None
        return tuple(float(x) for x in np.diag(csu))

    @property
    def id(self) -> str:
        rho = self.rho
        if rho is not None:
            return f"{self.name}-rho{','.join(fmt(r) for r in rho)}"
        return f"{self.name}-{self.dims[0]}x{self.dims[1]}-{digest(self.cov_s, self.cov_u, self.cov_su)}"

    def params(self) -> dict[str, Any]:
        rho = self.rho
        if rho is not None:
            return {"rho": list(rho)}
        return super().params()

    @property
    def dims(self) -> tuple[int, int]:
        return (len(self.cov_s), len(self.cov_u))

    def cov(self) -> np.ndarray:
        cs, cu, csu = (np.asarray(x, dtype=float) for x in (self.cov_s, self.cov_u, self.cov_su))
        return np.block([[cs, csu], [csu.T, cu]])


@register_scenario
@dataclass(frozen=True)
class GaussianSource(GaussianScenario):
    """Rate-distortion: S = U = W ~ N(0, diag(variances)) (PPAN §III-B2)."""

    variances: tuple[float, ...]

    name: ClassVar[str] = "gaussian-source"
    summary: ClassVar[str] = "rate-distortion: S = U = W ~ N(0, diag(variances)); MSE"
    PARAMS: ClassVar[tuple[Param, ...]] = (
        Param("variances", parse_float_list, REQUIRED, "comma list of component variances, each > 0"),
    )
    EXAMPLE: ClassVar[dict[str, Any]] = {"variances": "1,0.5"}
    fixed_observation: ClassVar[str | None] = "useful"  # S = U = W: no observation model to choose

    def __post_init__(self) -> None:
        v = tuple(check_scale("variances", x) for x in np.atleast_1d(self.variances))
        if not v:
            raise InputError("variances must be a non-empty list")
        object.__setattr__(self, "variances", v)

    @property
    def id(self) -> str:
        return f"{self.name}-var{','.join(fmt(v) for v in self.variances)}"

    def params(self) -> dict[str, Any]:
        return {"variances": list(self.variances)}

    @property
    def dims(self) -> tuple[int, int]:
        return (len(self.variances), len(self.variances))

    def cov(self) -> np.ndarray:
        d = np.diag(self.variances)
        return np.block([[d, d], [d, d]])

    def sample(self, n: int, rng: np.random.Generator) -> Samples:
        n = self._check_n(n)
        x = rng.standard_normal((n, len(self.variances))) * np.sqrt(self.variances)
        return Samples(x, x.copy())
