"""Data models with known distributions (scenarios).

Each scenario is a frozen dataclass, validated on construction, with a stable
string :attr:`Scenario.id`, a :meth:`Scenario.sample` method that returns
:class:`~privbench.datasets.samples.Samples`, and exact model facts:
``joint()`` / ``distortion_matrix()`` for finite alphabets, ``cov()`` for
Gaussians.  :data:`SCENARIOS` maps the CLI names to the classes and
:func:`make_scenario` builds one from ``NAME=VALUE`` strings.

Conventions: ``joint()[s, u] = P(S=s, U=u)``; ``distortion_matrix()[u, z]`` is
d(u, z); Gaussian covariances are ordered (S, U).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, fields
from typing import Any, Callable, ClassVar

import numpy as np

from .errors import InputError
from .validate import check_finite, check_positive, check_probability
from .samples import Samples

_REQUIRED = object()


@dataclass(frozen=True)
class Param:
    """Declaration of one scenario parameter for the CLI and ``list scenarios``."""

    name: str
    parse: Callable[[str], Any]
    default: Any
    help: str

    @property
    def required(self) -> bool:
        return self.default is _REQUIRED


def _fmt(x: float) -> str:
    return format(float(x), "g")


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise InputError(f"{text!r} is not an integer") from None


def _float(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise InputError(f"{text!r} is not a number") from None


def _float_list(text: str) -> tuple[float, ...]:
    parts = [t for t in str(text).replace(" ", "").split(",") if t]
    if not parts:
        raise InputError(f"{text!r} is not a comma-separated list of numbers")
    return tuple(_float(t) for t in parts)


def _matrix(text: str) -> tuple[tuple[float, ...], ...]:
    try:
        value = json.loads(text) if isinstance(text, str) else text
    except json.JSONDecodeError:
        raise InputError(f"{text!r} is not a JSON matrix such as [[0.5, 0], [0, 0.5]]") from None
    return _as_matrix(value, text)


def _as_matrix(value: Any, shown: Any) -> tuple[tuple[float, ...], ...]:
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise InputError(f"{shown!r} is not a numeric matrix") from None
    if arr.ndim == 0:
        arr = arr.reshape(1, 1)
    if arr.ndim != 2 or arr.size == 0:
        raise InputError(f"{shown!r} is not a 2-d matrix")
    if not np.all(np.isfinite(arr)):
        raise InputError(f"{shown!r} has entries that are not finite numbers")
    return tuple(tuple(float(x) for x in row) for row in arr)


def _digest(*arrays: Any) -> str:
    h = hashlib.sha1()
    for a in arrays:
        h.update(np.ascontiguousarray(np.asarray(a, dtype=float)).tobytes())
        h.update(b"|")
    return h.hexdigest()[:10]


class Scenario:
    """Base class of all scenarios (frozen dataclasses)."""

    name: ClassVar[str]
    kind: ClassVar[str]  # "finite", "gaussian" or "mixture"
    has_optimum: ClassVar[bool] = True  # False: labelled data, no known model
    summary: ClassVar[str]
    PARAMS: ClassVar[tuple[Param, ...]]

    @property
    def id(self) -> str:  # pragma: no cover - overridden
        raise NotImplementedError

    def params(self) -> dict[str, Any]:
        """The constructor parameters as plain JSON-able values."""
        out = {}
        for f in fields(self):  # type: ignore[arg-type]
            v = getattr(self, f.name)
            if isinstance(v, tuple):
                v = json.loads(json.dumps(v))
            out[f.name] = v
        return out

    def sample(self, n: int, rng: np.random.Generator) -> Samples:  # pragma: no cover
        raise NotImplementedError

    @staticmethod
    def _check_n(n: int) -> int:
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
            raise InputError(f"n={n!r} must be a non-negative integer")
        return int(n)


# --------------------------------------------------------------------------
# finite alphabets
# --------------------------------------------------------------------------


class FiniteScenario(Scenario):
    """A scenario whose S and U take finitely many values."""

    kind = "finite"

    def joint(self) -> np.ndarray:
        """P(S=s, U=u), shape (n_s, n_u)."""
        raise NotImplementedError  # pragma: no cover

    def distortion_matrix(self) -> np.ndarray:
        """d(u, z), shape (n_u, n_z); Hamming (Z has U's alphabet) by default."""
        return 1.0 - np.eye(self.joint().shape[1])

    @property
    def distortion_name(self) -> str:
        d = self.distortion_matrix()
        if d.shape[0] == d.shape[1] and np.array_equal(d, 1.0 - np.eye(d.shape[0])):
            return "hamming"
        return "matrix"

    def sample(self, n: int, rng: np.random.Generator) -> Samples:
        n = self._check_n(n)
        p = self.joint()
        idx = rng.choice(p.size, size=n, p=p.ravel())
        s, u = np.divmod(idx, p.shape[1])
        return Samples(s.astype(np.int64), u.astype(np.int64))


@dataclass(frozen=True)
class SymmetricPair(FiniteScenario):
    """PPAN eq (7): S, U on {0..m-1}; P = (1-p)/m on the diagonal, p/(m(m-1)) off it."""

    m: int
    p: float

    name: ClassVar[str] = "symmetric-pair"
    summary: ClassVar[str] = "PPAN eq (7); S = PPAN's X, U = PPAN's Y; Hamming distortion"
    PARAMS: ClassVar[tuple[Param, ...]] = (
        Param("m", _int, _REQUIRED, "alphabet size, integer >= 2"),
        Param("p", _float, _REQUIRED, "P(S != U), in [0, 1]"),
    )

    def __post_init__(self) -> None:
        if isinstance(self.m, bool) or not isinstance(self.m, (int, np.integer)) or self.m < 2:
            raise InputError(f"m={self.m!r} must be an integer >= 2")
        object.__setattr__(self, "m", int(self.m))
        object.__setattr__(self, "p", check_probability("p", self.p))

    @property
    def id(self) -> str:
        return f"{self.name}-m{self.m}-p{_fmt(self.p)}"

    def joint(self) -> np.ndarray:
        m, p = self.m, self.p
        out = np.full((m, m), p / (m * (m - 1)))
        np.fill_diagonal(out, (1.0 - p) / m)
        return out


@dataclass(frozen=True)
class Binary(FiniteScenario):
    """GAP §3: U ~ Bernoulli(p) public, N ~ Bernoulli(q) independent, S = U xor N."""

    p: float
    q: float

    name: ClassVar[str] = "binary"
    summary: ClassVar[str] = "GAP §3: U ~ Bern(p) public, S = U xor N with N ~ Bern(q)"
    PARAMS: ClassVar[tuple[Param, ...]] = (
        Param("p", _float, _REQUIRED, "P(U = 1), in [0, 1]"),
        Param("q", _float, _REQUIRED, "P(N = 1), in [0, 1]"),
    )

    def __post_init__(self) -> None:
        object.__setattr__(self, "p", check_probability("p", self.p))
        object.__setattr__(self, "q", check_probability("q", self.q))

    @property
    def id(self) -> str:
        return f"{self.name}-p{_fmt(self.p)}-q{_fmt(self.q)}"

    def joint(self) -> np.ndarray:
        pu = np.array([1.0 - self.p, self.p])
        pn = np.array([1.0 - self.q, self.q])
        out = np.empty((2, 2))
        for s in range(2):
            for u in range(2):
                out[s, u] = pu[u] * pn[s ^ u]
        return out


@dataclass(frozen=True)
class Finite(FiniteScenario):
    """Any finite model: a joint pmf P[s][u] and a distortion matrix d[u][z]."""

    joint_pmf: tuple[tuple[float, ...], ...]
    distortion: tuple[tuple[float, ...], ...] | None = None

    name: ClassVar[str] = "finite"
    summary: ClassVar[str] = "any finite model: joint P[s][u], distortion d[u][z]"
    PARAMS: ClassVar[tuple[Param, ...]] = (
        Param("joint", _matrix, _REQUIRED, "JSON matrix P[s][u], non-negative, sums to 1"),
        Param("distortion", _matrix, None, "JSON matrix d[u][z] >= 0 (default Hamming)"),
    )
    _CLI_TO_FIELD: ClassVar[dict[str, str]] = {"joint": "joint_pmf"}

    def __post_init__(self) -> None:
        joint = _as_matrix(self.joint_pmf, self.joint_pmf)
        arr = np.asarray(joint)
        if np.any(arr < 0):
            raise InputError(f"joint={_show(arr)} has negative entries (must be >= 0)")
        if abs(arr.sum() - 1.0) > 1e-9:
            raise InputError(f"joint={_show(arr)} sums to {arr.sum():.12g} (must sum to 1)")
        object.__setattr__(self, "joint_pmf", joint)
        if self.distortion is not None:
            dist = _as_matrix(self.distortion, self.distortion)
            d = np.asarray(dist)
            if d.shape[0] != arr.shape[1]:
                raise InputError(
                    f"distortion has {d.shape[0]} rows but U has {arr.shape[1]} values "
                    "(need one row per value of U)"
                )
            if np.any(d < 0):
                raise InputError(f"distortion={_show(d)} has negative entries (must be >= 0)")
            object.__setattr__(self, "distortion", dist)

    @property
    def id(self) -> str:
        d = self.distortion if self.distortion is not None else []
        a = np.asarray(self.joint_pmf)
        return f"{self.name}-{a.shape[0]}x{a.shape[1]}-{_digest(self.joint_pmf, d)}"

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


def _show(arr: np.ndarray) -> str:
    return json.dumps(np.round(arr, 6).tolist())


# --------------------------------------------------------------------------
# Gaussians
# --------------------------------------------------------------------------


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

    def sample(self, n: int, rng: np.random.Generator) -> Samples:
        n = self._check_n(n)
        d_s, d_u = self.dims
        cov = self.cov()
        vals, vecs = np.linalg.eigh(cov)
        factor = vecs * np.sqrt(np.clip(vals, 0.0, None))
        x = rng.standard_normal((n, d_s + d_u)) @ factor.T
        return Samples(x[:, :d_s].copy(), x[:, d_s:].copy())


def _check_psd(name: str, cov: np.ndarray, strict: bool) -> None:
    if not np.allclose(cov, cov.T, atol=1e-12):
        raise InputError(f"{name}={_show(cov)} is not symmetric")
    eig = np.linalg.eigvalsh(cov)
    tol = 1e-12 * max(1.0, float(np.max(np.abs(eig))))
    if (strict and eig.min() <= tol) or eig.min() < -tol:
        kind = "positive definite" if strict else "positive semi-definite"
        raise InputError(f"{name}={_show(cov)} is not {kind} (smallest eigenvalue {eig.min():.3g})")


@dataclass(frozen=True)
class GaussianScalar(GaussianScenario):
    """Scalar jointly Gaussian S, U with correlation rho (PPAN Props 1 and 3)."""

    rho: float
    var_s: float = 1.0
    var_u: float = 1.0

    name: ClassVar[str] = "gaussian-scalar"
    summary: ClassVar[str] = "PPAN Props 1, 3: scalar jointly Gaussian S, U; MSE distortion"
    PARAMS: ClassVar[tuple[Param, ...]] = (
        Param("rho", _float, _REQUIRED, "correlation of S and U, in [-1, 1]"),
        Param("var_s", _float, 1.0, "variance of S, > 0"),
        Param("var_u", _float, 1.0, "variance of U, > 0"),
    )

    def __post_init__(self) -> None:
        rho = check_finite("rho", self.rho)
        if abs(rho) > 1:
            raise InputError(f"rho={self.rho!r} is outside [-1, 1]")
        object.__setattr__(self, "rho", rho)
        object.__setattr__(self, "var_s", check_positive("var_s", self.var_s))
        object.__setattr__(self, "var_u", check_positive("var_u", self.var_u))

    @property
    def id(self) -> str:
        out = f"{self.name}-rho{_fmt(self.rho)}"
        if self.var_s != 1.0 or self.var_u != 1.0:
            out += f"-vs{_fmt(self.var_s)}-vu{_fmt(self.var_u)}"
        return out

    @property
    def dims(self) -> tuple[int, int]:
        return (1, 1)

    def cov(self) -> np.ndarray:
        c = self.rho * np.sqrt(self.var_s * self.var_u)
        return np.array([[self.var_s, c], [c, self.var_u]])


@dataclass(frozen=True)
class GaussianVector(GaussianScenario):
    """Jointly Gaussian vectors S in R^d_s, U in R^d_u (PPAN Prop 2)."""

    cov_s: tuple[tuple[float, ...], ...]
    cov_u: tuple[tuple[float, ...], ...]
    cov_su: tuple[tuple[float, ...], ...]

    name: ClassVar[str] = "gaussian-vector"
    summary: ClassVar[str] = "PPAN Prop 2: Gaussian vectors; MSE distortion"
    PARAMS: ClassVar[tuple[Param, ...]] = (
        Param("rho", _float_list, None, "comma list: identity covariances, diag(rho) cross-covariance"),
        Param("cov_s", _matrix, None, "JSON matrix, covariance of S (positive definite)"),
        Param("cov_u", _matrix, None, "JSON matrix, covariance of U (positive definite)"),
        Param("cov_su", _matrix, None, "JSON matrix, cross-covariance E[S U^T]"),
    )

    @classmethod
    def from_rho(cls, rho: Any) -> "GaussianVector":
        """Identity covariances and ``diag(rho)`` cross-covariance (PPAN §III-B4)."""
        r = np.atleast_1d(np.asarray(rho, dtype=float))
        if r.ndim != 1 or r.size == 0 or not np.all(np.isfinite(r)):
            raise InputError(f"rho={rho!r} must be a non-empty list of finite numbers")
        if np.any(np.abs(r) > 1):
            raise InputError(f"rho={_show(r)} has entries outside [-1, 1]")
        eye = np.eye(r.size)
        return cls(_as_matrix(eye, eye), _as_matrix(eye, eye), _as_matrix(np.diag(r), r))

    def __post_init__(self) -> None:
        cs = np.asarray(_as_matrix(self.cov_s, self.cov_s))
        cu = np.asarray(_as_matrix(self.cov_u, self.cov_u))
        csu = np.asarray(_as_matrix(self.cov_su, self.cov_su))
        if cs.shape[0] != cs.shape[1] or cu.shape[0] != cu.shape[1]:
            raise InputError("cov_s and cov_u must be square matrices")
        if csu.shape != (cs.shape[0], cu.shape[0]):
            raise InputError(
                f"cov_su has shape {csu.shape}, expected {(cs.shape[0], cu.shape[0])} (d_s x d_u)"
            )
        _check_psd("cov_s", cs, strict=True)
        _check_psd("cov_u", cu, strict=True)
        _check_psd("cov", np.block([[cs, csu], [csu.T, cu]]), strict=False)
        for f, a in (("cov_s", cs), ("cov_u", cu), ("cov_su", csu)):
            object.__setattr__(self, f, _as_matrix(a, a))

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
            return f"{self.name}-rho{','.join(_fmt(r) for r in rho)}"
        return f"{self.name}-{self.dims[0]}x{self.dims[1]}-{_digest(self.cov_s, self.cov_u, self.cov_su)}"

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


@dataclass(frozen=True)
class GaussianSource(GaussianScenario):
    """Rate-distortion: S = U = W ~ N(0, diag(variances)) (PPAN §III-B2)."""

    variances: tuple[float, ...]

    name: ClassVar[str] = "gaussian-source"
    summary: ClassVar[str] = "rate-distortion: S = U = W ~ N(0, diag(variances)); MSE"
    PARAMS: ClassVar[tuple[Param, ...]] = (
        Param("variances", _float_list, _REQUIRED, "comma list of component variances, each > 0"),
    )

    def __post_init__(self) -> None:
        v = tuple(check_positive("variances", x) for x in np.atleast_1d(self.variances))
        if not v:
            raise InputError("variances must be a non-empty list")
        object.__setattr__(self, "variances", v)

    @property
    def id(self) -> str:
        return f"{self.name}-var{','.join(_fmt(v) for v in self.variances)}"

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


# --------------------------------------------------------------------------
# binary Gaussian mixture
# --------------------------------------------------------------------------


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
        Param("prior", _float, _REQUIRED, "P(S = 1), in (0, 1)"),
        Param("mu", _float, _REQUIRED, "half the distance between the class means, >= 0"),
        Param("sigma0", _float, _REQUIRED, "standard deviation of U given S=0, > 0"),
        Param("sigma1", _float, _REQUIRED, "standard deviation of U given S=1, > 0"),
    )

    def __post_init__(self) -> None:
        prior = check_finite("prior", self.prior)
        if not 0.0 < prior < 1.0:
            raise InputError(f"prior={self.prior!r} is outside (0, 1)")
        mu = check_finite("mu", self.mu)
        if mu < 0:
            raise InputError(f"mu={self.mu!r} must be >= 0")
        object.__setattr__(self, "prior", prior)
        object.__setattr__(self, "mu", mu)
        object.__setattr__(self, "sigma0", check_positive("sigma0", self.sigma0))
        object.__setattr__(self, "sigma1", check_positive("sigma1", self.sigma1))

    @property
    def id(self) -> str:
        return (
            f"{self.name}-prior{_fmt(self.prior)}-mu{_fmt(self.mu)}"
            f"-s0{_fmt(self.sigma0)}-s1{_fmt(self.sigma1)}"
        )

    def sample(self, n: int, rng: np.random.Generator) -> Samples:
        n = self._check_n(n)
        s = (rng.random(n) < self.prior).astype(np.int64)
        mean = np.where(s == 1, self.mu, -self.mu)
        sd = np.where(s == 1, self.sigma1, self.sigma0)
        return Samples(s, mean + sd * rng.standard_normal(n))


# --------------------------------------------------------------------------
# registry
# --------------------------------------------------------------------------

SCENARIOS: dict[str, type[Scenario]] = {
    cls.name: cls
    for cls in (SymmetricPair, Binary, Finite, GaussianScalar, GaussianVector, GaussianSource, BinaryGMM)
}

# scenarios without a known optimum (labelled data); labelled.py builds on the classes above
from .labelled import LABELLED_SCENARIOS  # noqa: E402

SCENARIOS.update({cls.name: cls for cls in LABELLED_SCENARIOS})


def make_scenario(name: str, params: dict[str, Any] | None = None) -> Scenario:
    """Build a scenario from its CLI name and parameters (strings or values).

    Raises :class:`InputError` for an unknown scenario or parameter, a missing
    required parameter, or an invalid value.
    """
    if name not in SCENARIOS:
        raise InputError(f"scenario {name!r} is unknown (allowed: {', '.join(SCENARIOS)})")
    cls = SCENARIOS[name]
    params = dict(params or {})
    declared = {p.name: p for p in cls.PARAMS}
    for key in params:
        if key not in declared:
            raise InputError(
                f"parameter {key!r} is unknown for {name} (allowed: {', '.join(declared)})"
            )
    values: dict[str, Any] = {}
    for p in cls.PARAMS:
        if p.name in params:
            raw = params[p.name]
            try:
                values[p.name] = p.parse(raw) if isinstance(raw, str) else raw
            except InputError as exc:
                raise InputError(f"{name} parameter {p.name}: {exc}") from None
        elif not p.required and p.default is not None:
            values[p.name] = p.default
        elif p.required:
            raise InputError(f"{name} needs parameter {p.name} ({p.help})")
    if cls is GaussianVector:
        has_rho = "rho" in values
        has_cov = [k for k in ("cov_s", "cov_u", "cov_su") if k in values]
        if has_rho and has_cov:
            raise InputError("gaussian-vector takes either rho or cov_s, cov_u, cov_su, not both")
        if has_rho:
            return GaussianVector.from_rho(values["rho"])
        if len(has_cov) != 3:
            raise InputError("gaussian-vector needs rho, or all of cov_s, cov_u and cov_su")
    if cls is Finite:
        values = {Finite._CLI_TO_FIELD.get(k, k): v for k, v in values.items()}
    return cls(**values)
