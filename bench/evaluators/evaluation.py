"""The Evaluation record and what every evaluator shares: checks of a mechanism and its release,
batch standard errors, sample distortion, the true log-density of S.

Imports nothing from the bench (every evaluator module imports it).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any, Callable

import numpy as np

from privbench.datasets.errors import InputError
from privbench.datasets.tasks import Task
from privbench.datasets.validate import check_int

#: An exact evaluator of one mechanism type: (mechanism, scenario) -> (leakage evaluations, distortion ones).
ExactEvaluator = Callable[[Any, Any], "tuple[list[Evaluation], list[Evaluation]]"]

KINDS = ("exact", "lower-bound", "estimate", "upper-bound")
METRICS = ("mi", "map", "chi2", "distortion", "utility")  # utility: labelled scenarios only
N_BATCHES = 10
MIN_N_EVAL = 200


@dataclass(frozen=True)
class Evaluation:
    """One measured number of a mechanism.

    Attributes
    ----------
    metric : {"mi", "map", "chi2", "distortion", "utility"}
    value : float
        Nats for ``mi``, probability for ``map``, dimensionless for ``chi2``,
        task units (Hamming probability, matrix cost or MSE) for ``distortion``,
        a classifier's accuracy for ``utility`` (labelled scenarios only).
        ``inf`` where the release determines S (exact or Gaussian-approx).
    evaluator : str
        See the module table.
    kind : {"exact", "lower-bound", "estimate", "upper-bound"}
        ``upper-bound``: the truth can be lower (a classifier's cross-entropy bounding H(U | Z)).
    stderr : float
        Statistical standard error (0.0 for exact).
    detail : dict
        JSON-able extras (sample sizes, raw values, hyper-parameters).
    """

    metric: str
    value: float
    evaluator: str
    kind: str
    stderr: float = 0.0
    detail: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Evaluation":
        return cls(**data)


def make_evaluation(metric: str, value: float, evaluator: str, kind: str, stderr: float = 0.0, **detail: Any) -> Evaluation:
    return Evaluation(metric, float(value), evaluator, kind, float(stderr), jsonable(detail))


def jsonable(x: Any) -> Any:
    if isinstance(x, dict):
        return {str(k): jsonable(v) for k, v in x.items()}
    if isinstance(x, np.ndarray):
        return jsonable(x.tolist())
    if isinstance(x, (list, tuple)):
        return [jsonable(v) for v in x]
    return x.item() if isinstance(x, np.generic) else x


def check_counts(n_eval: Any, seed: Any) -> None:
    """InputError unless ``n_eval`` >= MIN_N_EVAL and ``seed`` >= 0 are integers."""
    check_int("n_eval", n_eval, MIN_N_EVAL)
    check_int("seed", seed, 0)


def mechanism_task(mech: Any, task_of: Any, scenario_id: str, observation: str | None, privacy: str) -> Task:
    """The scenario's Task (``task_of(observation)``) after checking that ``mech`` was built for it."""
    task = getattr(mech, "task", None)
    if not isinstance(task, Task) or not callable(getattr(mech, "release", None)):
        raise InputError(f"mechanism={mech!r} is not a privbench Mechanism (needs .task and .release)")
    want = task_of(observation or task.observation)
    # utility labels are training data, not part of what the mechanism reads or releases
    mine = {**task.to_dict(), "privacy": privacy, "utility": None}
    theirs = {**want.to_dict(), "utility": None}
    if mine != theirs:
        diff = sorted(k for k in mine if mine[k] != theirs.get(k))
        raise InputError(f"mechanism was built for a different task than {scenario_id} with observation="
                         f"{want.observation} (differs in: {', '.join(diff)})")
    return want


def check_release(task: Task, z: Any, n: int) -> np.ndarray:
    """The release as int64 (n,) labels in 0..n_z-1 (finite) or float64 (n, d_u) (also (n,) when d_u = 1);
    InputError for anything else (no reshaping of other shapes, no casting of complex values)."""
    z = np.asarray(z)
    if task.kind == "finite":
        if z.dtype.kind == "f" and np.all(np.isfinite(z)) and np.all(z == np.round(z)):
            z = z.astype(np.int64)
        ok = z.shape == (n,) and z.dtype.kind in "iu" and (n == 0 or (z.min() >= 0 and z.max() < task.n_z))
        if not ok:
            raise InputError(f"mechanism released {z.dtype} labels of shape {z.shape}; expected ({n},) "
                             f"integers in 0..{task.n_z - 1}")
        return z.astype(np.int64)
    if z.dtype.kind not in "fiu":  # complex, bool, object: never cast silently (a complex part can carry S)
        raise InputError(f"mechanism released {z.dtype} values (expected real floats of shape ({n}, {task.d_u}))")
    if z.shape == (n,) and task.d_u == 1:  # the one shape besides (n, d_u) documented for a scalar release
        z = z.reshape(n, 1)
    z = z.astype(float)
    if z.shape != (n, task.d_u) or not np.all(np.isfinite(z)):
        raise InputError(f"mechanism released an array of shape {z.shape} (expected ({n}, {task.d_u}) of "
                         "finite floats)" + ("" if z.shape != (n, task.d_u) else ": it has NaN or inf values"))
    return z


def batches(n: int, k: int = N_BATCHES) -> list[np.ndarray]:
    return np.array_split(np.arange(n), k)


def batch_stderr(fn: Any, n: int, *arrays: np.ndarray) -> float:
    """Std of ``fn`` over N_BATCHES contiguous batches / sqrt(N_BATCHES).

    Approximates the standard error of ``fn`` on all n rows (the mean of the
    batch values has that variance when fn's variance scales as 1/n).
    """
    vals = np.array([fn(*(a[i] for a in arrays)) for i in batches(n)], dtype=float)
    if np.all(vals == np.inf):
        return 0.0  # every batch determines S: the value is inf, with no spread
    if not np.all(np.isfinite(vals)):
        return float("nan")  # unknown spread: headline() treats the evaluation as not credible
    return float(vals.std(ddof=1) / math.sqrt(len(vals)))


def sample_distortion(d: np.ndarray, evaluator: str = "sample-distortion") -> Evaluation:
    """Mean per-sample distortion ``d`` (n,) with stderr std / sqrt(n)."""
    return make_evaluation("distortion", d.mean(), evaluator, "estimate", d.std(ddof=1) / math.sqrt(d.size), n=d.size)


def gauss_logpdf(x: np.ndarray, cov: np.ndarray) -> np.ndarray:
    """log N(x; 0, cov) per row, shape (n,)."""
    chol = np.linalg.cholesky(cov)
    y = np.linalg.solve(chol, x.T)
    return -0.5 * (y * y).sum(axis=0) - np.log(np.diag(chol)).sum() - 0.5 * cov.shape[0] * math.log(2 * math.pi)


def log_p_and_entropy(sc: Any, s: np.ndarray) -> tuple[np.ndarray, float]:
    """The true log p(S = s) per row and the entropy of S (a differential one for a Gaussian S),
    from the scenario's model: the binary mixture's prior, or S's Gaussian covariance."""
    if sc.kind == "mixture":
        prior = np.array([1 - sc.prior, sc.prior])
        return np.log(prior)[s], float(-(prior * np.log(prior)).sum())
    cov_s = sc.cov()[: sc.dims[0], : sc.dims[0]]
    h_s = 0.5 * float(np.linalg.slogdet(2 * math.pi * math.e * cov_s)[1])
    return gauss_logpdf(s.reshape(len(s), -1), cov_s), h_s


def exact_by_type(table: dict[str, ExactEvaluator], mech: Any, sc: Any) -> tuple[list[Evaluation], list[Evaluation]]:
    """The exact evaluations ``table`` holds for ``mech``'s declared ``type_name`` ([], [] where none)."""
    exact = table.get(getattr(mech, "type_name", ""))
    return exact(mech, sc) if exact is not None else ([], [])
