"""Independent evaluators: what a fitted mechanism leaks and how much it distorts.

An evaluator never sees the learner's adversary or training data.  It uses the
TRUE scenario (exact joint pmf, covariances, mixture parameters) and FRESH
samples drawn with ``numpy.random.default_rng(seed)``:

=====================  ==========================  =========  ===============================
evaluator              applies to                  kind       what
=====================  ==========================  =========  ===============================
exact-channel          finite, ``channel()``       exact      I(S;Z), MAP, chi2 (theory.measures)
exact-distortion       channel / parametric        exact      E d(U, Z) from the model
finite-plugin          finite without a channel    estimate   plug-in pmf of fresh (S, Z)
exact-mixture-params   binary-gmm, MixtureShift    exact      MAP (theory.mixture)
exact-linear-gaussian  gaussian, LinearGaussian    exact      I(S;Z) (theory.gaussian)
exact-constant         ConstantGaussian            exact      I = 0, MAP = max(prior, 1-prior)
mixture-fresh-         binary-gmm, any mechanism   lower-     accuracy of a classifier trained
  classifier                                         bound      from scratch on held-out releases
posthoc-attacker       gaussian / binary-gmm       lower-     h(S) + E log Q(S|Z) (mi)
                                                     bound
gaussian-approx        gaussian, any mechanism     lower-     PPAN §III-B1
                                                     bound
ksg                    gaussian, any mechanism     estimate   Kraskov et al. estimator 1
attacker-linear, -mlp- gaussian / binary-gmm, only lower-     the attacker-mismatch study
  wide, -knn, -gbt       with evaluators="mismatch"  bound      (bench/attackers.py); never headline
sample-distortion      any mechanism               estimate   mean d(U, Z) over fresh samples
fresh-classifier       labelled scenarios (no      lower-     map, mi, utility accuracies of
                         known optimum)              bound      fresh MLPs (evaluate_labelled.py)
=====================  ==========================  =========  ===============================

"lower-bound" is up to estimation error: every sample evaluator reports a
``stderr`` and :func:`privbench.bench.scores.score` allows 3 of them.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
from scipy.spatial import cKDTree
from scipy.special import digamma, ndtri

from privbench.datasets.errors import InputError
from privbench.datasets.scenarios import BinaryGMM, FiniteScenario, GaussianScenario
from privbench.datasets.tasks import PRIVACIES, Task, task_for
from privbench.datasets.vocabulary import LABELLED_PRIVACIES
from privbench.learners.mechanisms import ConstantGaussian, LinearGaussian, MixtureShift
from privbench.theory.gaussian import linear_gaussian_leakage
from privbench.theory.measures import PRIVACY_MEASURES, scenario_channel_measures
from privbench.theory.mixture import mechanism_accuracy, mechanism_distortion

METRICS = ("mi", "map", "chi2", "distortion", "utility")  # utility: labelled scenarios only
KINDS = ("exact", "lower-bound", "estimate")
KSG_K = 4
KSG_MAX_N = 10000  # above KSG_SMALL_DIM joint dimensions KSG uses only this many rows (cost)
KSG_SMALL_DIM = 4
N_BATCHES = 10
MIN_N_EVAL = 200
EVALUATOR_SETS = (None, "mismatch")  # as privbench.bench.suites.EVALUATOR_SETS, plus None


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
    kind : {"exact", "lower-bound", "estimate"}
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


def _ev(metric: str, value: float, evaluator: str, kind: str, stderr: float = 0.0, **detail: Any) -> Evaluation:
    return Evaluation(metric, float(value), evaluator, kind, float(stderr), _jsonable(detail))


def _jsonable(x: Any) -> Any:
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, np.ndarray):
        return _jsonable(x.tolist())
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    return x.item() if isinstance(x, np.generic) else x


# --------------------------------------------------------------------------
# entry points
# --------------------------------------------------------------------------


def evaluate(mechanism: Any, scenario: Any, observation: str | None, privacy: str, *,
             n_eval: int = 20000, seed: int = 0, evaluators: str | None = None,
             cross_check: bool = True) -> list[Evaluation]:
    """Evaluate a mechanism against the true scenario with fresh samples.

    Parameters
    ----------
    mechanism : privbench.learners.Mechanism
        Anything with ``release(w, rng)`` and a ``task``; ``channel()`` and
        ``params()`` are used where the type offers an exact evaluator.
    scenario : Scenario
        The true model (finite, gaussian or binary-gmm).
    observation : {"useful", "full"} or None
        Must match ``mechanism.task.observation`` (None: the mechanism's).
    privacy : {"mi", "map", "chi2"}
        The privacy metric the case is scored on; the returned list always holds
        at least one evaluation of it (InputError where none exists, e.g. ``map``
        for a Gaussian S).
    n_eval : int
        Fresh samples of (S, U), >= 200.  Sample evaluators use all of them;
        the post-hoc attacker trains on one half and is scored on the other.
    seed : int
        Seeds the fresh samples, releases, KSG jitter and the attacker.
    evaluators : {None, "mismatch"}
        An extra evaluator set on top of the standard ones.  ``mismatch``: fresh
        attackers of other architectures on the same releases
        (:func:`privbench.bench.attackers.mismatch_evaluations`, gaussian and
        binary-gmm scenarios; none for finite ones, whose exact evaluators leave
        nothing for an attacker to add).  They are marked
        ``detail["study"] = "mismatch"``, seeded independently of the standard
        evaluators (whose numbers stay the same), and never used by
        :func:`headline`.
    cross_check : bool
        Run the sample estimators (post-hoc attacker, KSG, fresh classifier) also
        where an exact evaluation of the leakage exists (default).  They cannot
        change the headline then (it takes the exact value); the runner turns
        them off to save time (the tests cross-check them against exact values).

    Returns
    -------
    list of Evaluation
        Privacy evaluations first, then distortion evaluations.
    """
    if getattr(scenario, "has_optimum", True) is False:  # labelled data: fresh classifiers only
        return _labelled(mechanism, scenario, observation, privacy, n_eval, seed, evaluators)
    task = _check(mechanism, scenario, observation, privacy, n_eval, seed)
    if evaluators not in EVALUATOR_SETS:
        raise InputError(f"evaluators={evaluators!r} is unknown (allowed: None, "
                         f"{', '.join(repr(e) for e in EVALUATOR_SETS if e)})")
    rng = np.random.default_rng(seed)
    torch_seed = int(np.random.SeedSequence(seed).generate_state(1)[0])
    samples = scenario.sample(int(n_eval), rng)
    z = _check_release(task, mechanism.release(task.observe(samples), rng), int(n_eval))
    if isinstance(scenario, FiniteScenario):
        out = _finite(mechanism, scenario, task, samples.s, samples.u, z)
    elif isinstance(scenario, BinaryGMM):
        out = _mixture(mechanism, scenario, samples.s, samples.u, z, torch_seed, cross_check)
    else:
        out = _gaussian(mechanism, scenario, samples.s, samples.u, z, torch_seed, rng, cross_check)
    if evaluators == "mismatch" and not isinstance(scenario, FiniteScenario):
        out = _with_mismatch(out, scenario, samples.s, z, seed)
    if not any(e.metric == privacy for e in out):
        raise InputError(f"privacy={privacy!r} has no evaluator for a {scenario.name} scenario "
                         f"(available: {', '.join(sorted({e.metric for e in out} - {'distortion'}))})")
    return out


def _with_mismatch(out: list[Evaluation], sc: Any, s: np.ndarray, z: np.ndarray, seed: int) -> list[Evaluation]:
    """``out`` with the mismatch-study attackers inserted before the distortion evaluations."""
    from .attackers import mismatch_evaluations

    log_p_s, h_s = _log_p_and_entropy(sc, s)
    extra = mismatch_evaluations(z, s, isinstance(sc, BinaryGMM), log_p_s, h_s, seed)
    cut = next((i for i, e in enumerate(out) if e.metric == "distortion"), len(out))
    return out[:cut] + extra + out[cut:]


def _log_p_and_entropy(sc: Any, s: np.ndarray) -> tuple[np.ndarray, float]:
    """The true log p(S = s) per row and the entropy of S (a differential one for a Gaussian S),
    from the scenario's model: the binary mixture's prior, or S's Gaussian covariance."""
    if isinstance(sc, BinaryGMM):
        prior = np.array([1 - sc.prior, sc.prior])
        return np.log(prior)[s], float(-(prior * np.log(prior)).sum())
    cov_s = sc.cov()[: sc.dims[0], : sc.dims[0]]
    h_s = 0.5 * float(np.linalg.slogdet(2 * math.pi * math.e * cov_s)[1])
    return _gauss_logpdf(s.reshape(len(s), -1), cov_s), h_s


def _labelled(mech: Any, sc: Any, observation: str | None, privacy: str, n_eval: Any, seed: Any,
              evaluators: str | None) -> list[Evaluation]:
    """Scenarios with no known optimum (``privbench.datasets.labelled``): the fresh-classifier
    evaluators of :mod:`privbench.bench.evaluate_labelled` (map, mi, utility, distortion)."""


    from .evaluate_labelled import evaluate_labelled

    if privacy not in LABELLED_PRIVACIES:
        raise InputError(f"privacy={privacy!r} has no evaluator for {sc.name} (allowed: "
                         f"{', '.join(LABELLED_PRIVACIES)})")
    _check_counts(n_eval, seed)
    if evaluators is not None:
        raise InputError(f"evaluators={evaluators!r} is not available for {sc.name} (only the standard "
                         "fresh-classifier evaluators)")
    want = _mechanism_task(mech, lambda obs: sc.task_for(obs, privacy), sc.id, observation, privacy)
    return evaluate_labelled(mech, sc, want, int(n_eval), int(seed))


def headline(evals: list[Evaluation], metric: str) -> Evaluation:
    """The evaluation a case is scored on.

    Evaluations of a side study (``detail["study"]`` set, e.g. the
    attacker-mismatch study's ``attacker-*``) are skipped: a case must score the
    same whether or not a suite asked for the study, so that cases with and
    without it stay comparable, and an extra attacker never moves a gap (the
    study reports its attackers next to the headline, not instead of it).

    An ``exact`` evaluation of ``metric`` if there is one (the first).  Otherwise
    the LARGEST credible value among the lower bounds and estimates: conservative,
    so that a learner never looks better because one estimator under-estimates
    (a larger MI, MAP accuracy or chi2 is more leakage; a larger distortion is
    worse).  Credible means a value that is not NaN, a stderr that is not NaN,
    and no ``detail["credible"] == False``.  Ties go to the earlier evaluation.

    Raises
    ------
    InputError
        No (credible) evaluation of ``metric``.
    """
    mine = [e for e in evals if e.metric == metric and not e.detail.get("study")]
    exact = [e for e in mine if e.kind == "exact" and not math.isnan(e.value)]
    if exact:
        return exact[0]
    ok = [e for e in mine if not math.isnan(e.value) and not math.isnan(e.stderr)
          and e.detail.get("credible", True) is not False]
    if not ok:
        raise InputError(f"no credible evaluation of metric={metric!r} "
                         f"(have: {', '.join(f'{e.metric}/{e.evaluator}' for e in evals) or 'none'})")
    best = ok[0]
    for e in ok[1:]:
        if e.value > best.value:
            best = e
    return best


def _check(mech: Any, scenario: Any, observation: str | None, privacy: str, n_eval: Any, seed: Any) -> Task:
    if privacy not in PRIVACIES:
        raise InputError(f"privacy={privacy!r} is unknown (allowed: {', '.join(PRIVACIES)})")
    _check_counts(n_eval, seed)
    if not isinstance(scenario, (FiniteScenario, GaussianScenario, BinaryGMM)):
        raise InputError(f"scenario={scenario!r} has no evaluator (allowed: finite, gaussian, binary-gmm scenarios)")
    return _mechanism_task(mech, lambda obs: task_for(scenario, obs, privacy), scenario.id, observation, privacy)


def _check_counts(n_eval: Any, seed: Any) -> None:
    for name, v, lo in (("n_eval", n_eval, MIN_N_EVAL), ("seed", seed, 0)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < lo:
            raise InputError(f"{name}={v!r} must be an integer >= {lo}")


def _mechanism_task(mech: Any, task_of: Any, scenario_id: str, observation: str | None, privacy: str) -> Task:
    """The scenario's Task (``task_of(observation)``) after checking that ``mech`` was built for it."""
    task = getattr(mech, "task", None)
    if not isinstance(task, Task) or not callable(getattr(mech, "release", None)):
        raise InputError(f"mechanism={mech!r} is not a privbench Mechanism (needs .task and .release)")
    want = task_of(observation or task.observation)
    mine = {**task.to_dict(), "privacy": privacy}
    if mine != want.to_dict():
        diff = sorted(k for k in mine if mine[k] != want.to_dict()[k])
        raise InputError(f"mechanism was built for a different task than {scenario_id} with observation="
                         f"{want.observation} (differs in: {', '.join(diff)})")
    return want


def _check_release(task: Task, z: Any, n: int) -> np.ndarray:
    """The release as int64 (n,) labels in 0..n_z-1 (finite) or float64 (n, d_u); InputError otherwise."""
    z = np.asarray(z)
    if task.kind == "finite":
        if z.dtype.kind == "f" and np.all(np.isfinite(z)) and np.all(z == np.round(z)):
            z = z.astype(np.int64)
        ok = z.shape == (n,) and z.dtype.kind in "iu" and (n == 0 or (z.min() >= 0 and z.max() < task.n_z))
        if not ok:
            raise InputError(f"mechanism released {z.dtype} labels of shape {z.shape}; expected ({n},) "
                             f"integers in 0..{task.n_z - 1}")
        return z.astype(np.int64)
    z = z.astype(float).reshape(n, -1) if z.size == n * task.d_u else z  # type: ignore[operator]
    if z.shape != (n, task.d_u) or not np.all(np.isfinite(z)):
        raise InputError(f"mechanism released an array of shape {z.shape} (expected ({n}, {task.d_u}) of "
                         "finite floats)" + ("" if z.shape != (n, task.d_u) else ": it has NaN or inf values"))
    return z


def _batches(n: int, k: int = N_BATCHES) -> list[np.ndarray]:
    return np.array_split(np.arange(n), k)


def _batch_stderr(fn: Any, n: int, *arrays: np.ndarray) -> float:
    """Std of ``fn`` over N_BATCHES contiguous batches / sqrt(N_BATCHES).

    Approximates the standard error of ``fn`` on all n rows (the mean of the
    batch values has that variance when fn's variance scales as 1/n).
    """
    vals = np.array([fn(*(a[i] for a in arrays)) for i in _batches(n)], dtype=float)
    if np.all(vals == np.inf):
        return 0.0  # every batch determines S: the value is inf, with no spread
    if not np.all(np.isfinite(vals)):
        return float("nan")  # unknown spread: headline() treats the evaluation as not credible
    return float(vals.std(ddof=1) / math.sqrt(len(vals)))


def _sample_distortion(d: np.ndarray, evaluator: str = "sample-distortion") -> Evaluation:
    """Mean per-sample distortion ``d`` (n,) with stderr std / sqrt(n)."""
    return _ev("distortion", d.mean(), evaluator, "estimate", d.std(ddof=1) / math.sqrt(d.size), n=d.size)


# --------------------------------------------------------------------------
# finite
# --------------------------------------------------------------------------


def _finite(mech: Any, sc: FiniteScenario, task: Task, s: np.ndarray, u: np.ndarray, z: np.ndarray) -> list[Evaluation]:
    dm = sc.distortion_matrix()
    sample_d = _sample_distortion(dm[u, z.astype(np.int64)])
    ch = mech.channel()
    if ch is not None:
        m = scenario_channel_measures(sc, np.asarray(ch, dtype=float), task.observation)
        out = [_ev(k, m[k], "exact-channel", "exact") for k in PRIVACY_MEASURES]
        return out + [_ev("distortion", m["distortion"], "exact-distortion", "exact"), sample_d]
    n_s, n_z = task.n_s, task.n_z

    def pmf(ss: np.ndarray, zz: np.ndarray) -> np.ndarray:
        return np.bincount(ss * n_z + zz, minlength=n_s * n_z).reshape(n_s, n_z) / ss.size

    z = z.astype(np.int64)
    out = []
    for k, f in PRIVACY_MEASURES.items():
        fn = lambda a, b, f=f: f(pmf(a, b))  # noqa: E731
        out.append(_ev(k, fn(s, z), "finite-plugin", "estimate", _batch_stderr(fn, s.size, s, z),
                       n=s.size, note="plug-in pmf of fresh (S, Z); biased upwards for small n"))
    return out + [sample_d]


# --------------------------------------------------------------------------
# binary Gaussian mixture
# --------------------------------------------------------------------------


def _mixture(mech: Any, sc: BinaryGMM, s: np.ndarray, u: np.ndarray, z: np.ndarray, seed: int,
             cross_check: bool = True) -> list[Evaluation]:
    out: list[Evaluation] = []
    exact_d: list[Evaluation] = []
    if isinstance(mech, MixtureShift):
        p = mech.params()
        out += [_ev("map", mechanism_accuracy(sc, **p), "exact-mixture-params", "exact", params=p)]
        exact_d = [_ev("distortion", mechanism_distortion(sc, **p), "exact-distortion", "exact")]
    elif isinstance(mech, ConstantGaussian):
        c = float(mech.value[0])
        mean_u = sc.mu * (2 * sc.prior - 1)
        var_u = sc.prior * sc.sigma1**2 + (1 - sc.prior) * sc.sigma0**2 + sc.prior * (1 - sc.prior) * 4 * sc.mu**2
        out += [_ev("map", max(sc.prior, 1 - sc.prior), "exact-constant", "exact"),
                _ev("mi", 0.0, "exact-constant", "exact")]
        exact_d = [_ev("distortion", var_u + (mean_u - c) ** 2, "exact-distortion", "exact")]
    d_sample = _sample_distortion(((u.reshape(-1, 1) - z.reshape(len(z), -1)) ** 2).sum(axis=1))
    if out and not cross_check:  # the MAP headline is exact: skip the fresh classifier
        return out + exact_d + [d_sample]
    log_p_s, h_s = _log_p_and_entropy(sc, s)
    att = _attacker(z, s, discrete=True, log_p_s=log_p_s, h_s=h_s, seed=seed)
    acc = att.pop("accuracy")
    n_te = att["n_test"]
    out.append(_ev("map", acc, "mixture-fresh-classifier", "lower-bound", math.sqrt(acc * (1 - acc) / n_te),
                   **att, note="held-out accuracy of a classifier trained from scratch; <= MAP accuracy"))
    out.append(_ev("mi", att.pop("bound"), "posthoc-attacker", "lower-bound", att.pop("bound_stderr"), **att,
                   note="H(S) + E log Q(S|Z) on held-out releases, H(S) exact from the prior"))
    return out + exact_d + [d_sample]


# --------------------------------------------------------------------------
# Gaussian scenarios
# --------------------------------------------------------------------------


def _gaussian(mech: Any, sc: GaussianScenario, s: np.ndarray, u: np.ndarray, z: np.ndarray, seed: int,
              rng: np.random.Generator, cross_check: bool = True) -> list[Evaluation]:
    cov = sc.cov()
    d_s = sc.dims[0]
    out: list[Evaluation] = []
    exact_d: list[Evaluation] = []
    if isinstance(mech, LinearGaussian):
        mi, mse = linear_gaussian_leakage(cov, mech.A, mech.B, mech.noise_cov)
        out.append(_ev("mi", mi, "exact-linear-gaussian", "exact"))
        exact_d = [_ev("distortion", mse, "exact-distortion", "exact")]
    elif isinstance(mech, ConstantGaussian):
        out.append(_ev("mi", 0.0, "exact-constant", "exact"))
        exact_d = [_ev("distortion", np.trace(cov[d_s:, d_s:]) + float(mech.value @ mech.value),
                       "exact-distortion", "exact")]
    z = z.reshape(len(z), -1)
    out.append(gaussian_approx_mi(s, z))
    d_sample = _with_components(_sample_distortion(((u - z) ** 2).sum(axis=1)), s, u, z)
    if out[0].kind == "exact" and not cross_check:  # the headline is exact: skip the costly estimators
        return out + exact_d + [d_sample]
    log_p_s, h_s = _log_p_and_entropy(sc, s)
    att = _attacker(z, s, discrete=False, log_p_s=log_p_s, h_s=h_s, seed=seed)
    out.append(_ev("mi", att.pop("bound"), "posthoc-attacker", "lower-bound", att.pop("bound_stderr"), **att,
                   note="h(S) + E log Q(S|Z) on held-out releases, h(S) exact from the scenario's cov"))
    out.append(ksg_mi(s, z, rng=rng))
    return out + exact_d + [d_sample]


def _with_components(ev: Evaluation, s: np.ndarray, u: np.ndarray, z: np.ndarray) -> Evaluation:
    """Add per-component MSE and Gaussian-approximation leakage I(S_i; Z_i) (PPAN appendix H's picture).

    Only where S, U and Z have the same dimension > 1 (component i of S paired with component i of Z,
    as in PPAN's diagonal Gaussian vectors); the per-component leakages are not a decomposition of
    I(S; Z) in general (they are for independent pairs and a component-wise mechanism).
    """
    s2, u2, z2 = s.reshape(len(s), -1), u.reshape(len(u), -1), z.reshape(len(z), -1)
    if not (s2.shape[1] == u2.shape[1] == z2.shape[1] > 1):
        return ev
    per_d = ((u2 - z2) ** 2).mean(axis=0)
    per_i = [gaussian_approx_mi(s2[:, [i]], z2[:, [i]]).value for i in range(s2.shape[1])]
    return Evaluation(ev.metric, ev.value, ev.evaluator, ev.kind, ev.stderr,
                      {**ev.detail, "per_component_distortion": _jsonable(per_d), "per_component_mi": per_i})


def _gauss_logpdf(x: np.ndarray, cov: np.ndarray) -> np.ndarray:
    """log N(x; 0, cov) per row, shape (n,)."""
    chol = np.linalg.cholesky(cov)
    y = np.linalg.solve(chol, x.T)
    return -0.5 * (y * y).sum(axis=0) - np.log(np.diag(chol)).sum() - 0.5 * cov.shape[0] * math.log(2 * math.pi)


def gaussian_approx_mi(s: np.ndarray, z: np.ndarray) -> Evaluation:
    """PPAN §III-B1: the MI of jointly Gaussian variables with the sample covariance of (S, Z).

    I_G = 1/2 log det C_S - 1/2 log det (C_S - C_SZ C_Z^+ C_SZ^T), sample
    covariances (centred), computed by theory's :func:`linear_gaussian_leakage`
    with the sample covariance of (S, Z) as the model and Z = U.

    Lower bound (population version, any mechanism): with L(Z) the affine MMSE
    estimate of S and E = S - L(Z),  I(S;Z) = h(S) - h(E | Z) >= h(S) - h(E)
    >= h(S) - 1/2 log det(2 pi e Cov E) = I_G.  The last step is the Gaussian
    maximum-entropy bound (for h(E)); the FIRST equality with h(S) = 1/2 log
    det(2 pi e C_S) needs S GAUSSIAN.  So I_G can only under-estimate I(S;Z) for
    a Gaussian S, whatever Z is (discrete, nonlinear, non-Gaussian noise; finite
    second moments);
    equality when (S, Z) is jointly Gaussian.  For a non-Gaussian S it is no
    bound (a binary S with Z = S gives I_G = inf > log 2); it is only run on
    Gaussian scenarios.  The sample version is biased upward by O(d_s d_z / n)
    (tests/bench/test_evaluate.py checks both directions).

    Parameters
    ----------
    s : ndarray, shape (n, d_s)
    z : ndarray, shape (n, d_z)
    """
    s = s.reshape(len(s), -1)
    z = z.reshape(len(z), -1)

    def fn(a: np.ndarray, b: np.ndarray) -> float:
        d_s, d_z = a.shape[1], b.shape[1]
        c = np.atleast_2d(np.cov(np.hstack([a, b]), rowvar=False))
        return linear_gaussian_leakage(c, np.eye(d_z), np.zeros((d_z, d_s)), np.zeros((d_z, d_z)))[0]

    return _ev("mi", fn(s, z), "gaussian-approx", "lower-bound", _batch_stderr(fn, len(s), s, z), n=len(s),
               note="PPAN III-B1; a lower bound on I(S;Z) for Gaussian S (up to O(d/n) sample bias)")


def _ksg(x: np.ndarray, y: np.ndarray, k: int) -> float:
    """Kraskov-Stoegbauer-Grassberger estimator 1 (max-norm), nats."""
    n = len(x)
    xy = np.hstack([x, y])
    eps = cKDTree(xy).query(xy, k=k + 1, p=np.inf)[0][:, -1]
    r = np.nextafter(eps, 0)  # strictly closer than the k-th joint neighbour
    nx = cKDTree(x).query_ball_point(x, r, p=np.inf, return_length=True) - 1
    ny = cKDTree(y).query_ball_point(y, r, p=np.inf, return_length=True) - 1
    return float(digamma(k) + digamma(n) - np.mean(digamma(nx + 1) + digamma(ny + 1)))


def ksg_mi(s: np.ndarray, z: np.ndarray, *, rng: np.random.Generator, k: int = KSG_K) -> Evaluation:
    """KSG kNN estimate of I(S;Z) (Kraskov et al. 2004, estimator 1, k neighbours).

    Each variable's columns are scaled to unit sample variance (columns with
    zero variance are left), then a jitter of 1e-10 standard normals is added
    to break ties (as scikit-learn does).  When d_s + d_z > 4 only the first
    ``KSG_MAX_N`` = 10000 rows are used (the neighbour counts get expensive in
    high dimension).  ``value`` is the estimate clipped at 0 (``detail["raw"]``
    unclipped); ``stderr`` is the spread over 10 batches divided by sqrt(10).
    Consistent, but biased downward for strong dependence in many dimensions
    (about -0.07 nats of 0.44 for PPAN's 5+5-dimensional example, -0.6 of 3.1
    for its 5-dimensional Gaussian source at 10^4 samples); kind "estimate".

    Parameters
    ----------
    s : ndarray, shape (n, d_s)
    z : ndarray, shape (n, d_z)
    """

    def prep(a: np.ndarray) -> np.ndarray:
        a = a.reshape(len(a), -1).astype(float)
        sd = a.std(axis=0)
        a = (a - a.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
        return a + 1e-10 * rng.standard_normal(a.shape)

    s, z = s.reshape(len(s), -1), z.reshape(len(z), -1)
    n = len(s) if s.shape[1] + z.shape[1] <= KSG_SMALL_DIM else min(len(s), KSG_MAX_N)
    x, y = prep(s[:n]), prep(z[:n])
    raw = _ksg(x, y, k)
    se = _batch_stderr(lambda a, b: _ksg(a, b, k), len(x), x, y)
    return _ev("mi", max(raw, 0.0), "ksg", "estimate", se, raw=raw, k=k, n=len(x))


# --------------------------------------------------------------------------
# the post-hoc attacker (torch, trained from scratch)
# --------------------------------------------------------------------------

def _normal_scores(z: np.ndarray, n_fit: int) -> np.ndarray:
    """Phi^-1 of each column's empirical CDF (mid-ranks) on the first n_fit rows, shape (n, d)."""
    out = np.empty_like(z)
    for j in range(z.shape[1]):
        vals, counts = np.unique(z[:n_fit, j], return_counts=True)
        cdf = (np.cumsum(counts) - 0.5 * counts) / n_fit
        out[:, j] = ndtri(np.interp(z[:, j], vals, cdf)) if vals.size > 1 else 0.0
    return out


ATTACKER = {"hidden": 32, "steps": 300, "patience": 60, "min_gain_se": 2.0, "lr": 0.01, "log_var_min": -18.0}


def _attacker(z: np.ndarray, s: np.ndarray, *, discrete: bool, log_p_s: np.ndarray, h_s: float,
              seed: int) -> dict[str, Any]:
    """Train Q(S|Z) on the first half of (Z, S), score on the second half.

    Inputs: Z, its normal scores (each column through the empirical CDF of the
    fitting rows, then the standard normal quantile: invariant to monotone
    transforms such as Z = U^3), and Z^2 for a discrete S; all standardised.
    Network: a linear map of the inputs plus a tanh MLP (2 hidden layers of 32, last layer starting at 0), full-batch
    Adam, 300 steps, float32, seeded init (``torch.Generator``), one thread.
    Early stopping: the training half is split 80/20; the parameters with the
    best validation loss (checked every 10 steps) are kept, since the
    heteroscedastic head otherwise over-fits by a few hundredths of a nat at
    10^4 samples; training stops after 60 steps without improvement.  The
    trained network replaces the starting fit only if its validation gain is
    significant (> 2 standard errors of the paired per-sample gain).
    Discrete S: logits (bias starting at the log class frequencies).  Continuous
    S: Q = N(mu(Z), L diag(exp v(Z)) L^T) with L a learned constant
    lower-triangular factor; training starts from the least-squares fit (mu
    affine in Z, L the Cholesky factor of the residual covariance), so a jointly
    Gaussian (S, Z) is fitted from step 0 and the MLP only adds what is
    nonlinear.  Everything is fitted on the training half only.

    The bound h(S) + E log Q(S|Z) equals E[log Q(S|Z) - log p(S)] (h(S) =
    -E log p(S), p the TRUE marginal), estimated by the held-out mean of that
    difference: same expectation, much smaller variance.  Any Q gives a lower
    bound on I(S;Z) in expectation (the gap is E KL(P(S|Z) || Q)).

    Returns
    -------
    dict
        ``bound``, ``bound_stderr``, ``h_plus_mean_log_q`` (the same bound with
        h(S) exact plus the mean log Q), ``n_train``, ``n_test``, ``credible``
        (False when training produced NaN), hyper-parameters, and ``accuracy``
        (discrete S).
    """
    import torch
    from torch import nn

    from privbench.learners.nn import generator, init_module, torch_threads

    n = len(z)
    n_tr = n // 2
    n_fit = (4 * n_tr) // 5
    z = z.reshape(n, -1).astype(float)
    feats = np.hstack([z, z * z, _normal_scores(z, n_fit)] if discrete else [z, _normal_scores(z, n_fit)])
    mu, sd = feats[:n_fit].mean(axis=0), feats[:n_fit].std(axis=0)
    x = (feats - mu) / np.where(sd > 1e-12 * (1 + np.abs(mu)), sd, 1.0)
    d_in, h = x.shape[1], ATTACKER["hidden"]
    if discrete:
        n_out = max(int(s.max()) + 1, 2)
        y_all = s.astype(np.int64)
        log_scale = 0.0
        freq = np.bincount(y_all[:n_tr], minlength=n_out) + 1.0
        w0, b0 = np.zeros((n_out, d_in)), np.log(freq / freq.sum())
    else:
        y = s.reshape(n, -1).astype(float)
        ym, scale = y[:n_tr].mean(axis=0), y[:n_tr].std(axis=0)
        y_all = (y - ym) / scale
        log_scale = float(np.log(scale).sum())
        n_out = y.shape[1]
        xt = np.hstack([x[:n_fit], np.ones((n_fit, 1))])
        coef = np.linalg.lstsq(xt, y_all[:n_fit], rcond=None)[0]  # (d_in + 1, n_out)
        resid = y_all[:n_fit] - xt @ coef
        c_r = np.atleast_2d(np.cov(resid, rowvar=False)) + math.exp(ATTACKER["log_var_min"]) * np.eye(n_out)
        L0 = np.linalg.cholesky(c_r)
        chol0 = np.tril(L0, -1) + np.diag(np.log(np.diag(L0)))
        w0 = np.vstack([coef[:-1].T, np.zeros((n_out, d_in))])
        b0 = np.concatenate([coef[-1], np.zeros(n_out)])
    with torch_threads(1):
        g = generator(seed)
        k = n_out if discrete else 2 * n_out
        lin = nn.Linear(d_in, k)
        mlp = nn.Sequential(nn.Linear(d_in, h), nn.Tanh(), nn.Linear(h, h), nn.Tanh(), nn.Linear(h, k))
        init_module(mlp, g)
        with torch.no_grad():
            lin.weight.copy_(torch.as_tensor(w0))
            lin.bias.copy_(torch.as_tensor(b0))
            mlp[-1].weight.zero_()
            mlp[-1].bias.zero_()
        params = list(lin.parameters()) + list(mlp.parameters())
        if not discrete:
            chol = nn.Parameter(torch.as_tensor(chol0, dtype=torch.float32))
            params.append(chol)
        X = torch.as_tensor(x, dtype=torch.float32)
        Y = torch.as_tensor(y_all, dtype=torch.int64 if discrete else torch.float32)

        def log_q(idx: slice) -> torch.Tensor:
            out = lin(X[idx]) + mlp(X[idx])
            if discrete:
                return torch.log_softmax(out, dim=1).gather(1, Y[idx, None])[:, 0]
            m, v = out[:, :n_out], out[:, n_out:].clamp(min=ATTACKER["log_var_min"], max=10.0)
            L = torch.tril(chol, -1) + torch.diag(torch.exp(torch.diagonal(chol)))
            r = torch.linalg.solve_triangular(L, (Y[idx] - m).T, upper=False).T
            return (-0.5 * (r * r * torch.exp(-v)).sum(1) - 0.5 * v.sum(1)
                    - torch.diagonal(chol).sum() - 0.5 * n_out * math.log(2 * math.pi))

        opt = torch.optim.Adam(params, lr=ATTACKER["lr"])
        fit, val, te = slice(0, n_fit), slice(n_fit, n_tr), slice(n_tr, n)
        credible, best_step = True, 0
        with torch.no_grad():
            start_val = log_q(val)
        best_val = float(start_val.mean())
        start = best = [p.detach().clone() for p in params]
        for step in range(1, ATTACKER["steps"] + 1):
            opt.zero_grad()
            loss = -log_q(fit).mean()
            if not bool(torch.isfinite(loss)):
                credible = False
                break
            loss.backward()
            opt.step()
            if step % 10 == 0:
                with torch.no_grad():
                    v = float(log_q(val).mean())
                if v > best_val:
                    best_val, best_step = v, step
                    best = [p.detach().clone() for p in params]
                elif step - best_step >= ATTACKER["patience"]:
                    break
        with torch.no_grad():
            for p, b in zip(params, best):
                p.copy_(b)
            gain = log_q(val) - start_val  # paired per-sample gain over the starting fit
            if float(gain.mean()) <= ATTACKER["min_gain_se"] * float(gain.std()) / math.sqrt(len(gain)):
                best_step = 0  # not a significant gain: keep the start (no selection on noise)
                for p, b in zip(params, start):
                    p.copy_(b)
        with torch.no_grad():
            lq = log_q(te).double().numpy()
            acc = float(np.mean((lin(X[te]) + mlp(X[te])).argmax(1).numpy() == y_all[n_tr:])) if discrete else None
    diff = lq - log_scale - log_p_s[n_tr:]  # log q in S's own units, minus the true log p(S)
    credible = credible and bool(np.all(np.isfinite(diff)))
    nan = float("nan")
    out: dict[str, Any] = {
        "bound": float(diff.mean()) if credible else nan,
        "bound_stderr": float(diff.std(ddof=1) / math.sqrt(diff.size)) if credible else nan,
        "h_plus_mean_log_q": float(h_s + lq.mean() - log_scale) if credible else nan,
        "n_train": n_tr, "n_test": n - n_tr, "best_step": best_step, "credible": credible, **ATTACKER,
    }
    if discrete:
        out["accuracy"] = acc
    return out
