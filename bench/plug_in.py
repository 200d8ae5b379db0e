"""The plug-in baseline: estimate the joint, then solve the optimal program on the estimate.

This is the "conventional approach" PPAN §III-A compares with (its reference
[20]): estimate P(S, U) from the training samples by empirical counts (with an
optional add-``smoothing`` pseudo-count per cell), then solve the optimal
finite program (:func:`privbench.theory.finite.solve_finite`) on the estimate
at each budget.  It lives in ``bench/`` because learners may not import theory;
it is registered as the learner ``plugin`` through the ``privbench.learners``
entry-point group (setup.cfg).

Budgets below the least distortion achievable on the estimate (possible only
for distortion matrices whose rows have no zero, since the empirical joint is
used for both the program and the check) have no feasible mechanism there:
the mechanism returned is then the program's solution at that least
distortion (every w sent to its cheapest z on the estimate, leakage minimised
among such channels), with ``info["budget_infeasible"] = True`` and
``info["budget_used"]`` the distortion it was solved for.  W values absent
from the samples (with ``smoothing=0``) have no cost in the estimated program
(theory gives them the uniform row), but they do occur: such a row is replaced
by the release that is cheapest in the worst case over the U values that W
allows (Z = U under Hamming distortion), so that a small sample does not spend
distortion the program never saw (at n = 300 on a 16-value W the uniform rows
put PPAN Fig. 3's full observation at distortion 0.12-0.17 for a budget of 0.05).

Log-loss tasks (finite, ``distortion="logloss"``: the privacy funnel): the
achievable end of :func:`privbench.theory.funnel.funnel_optimum` on the estimated
joint (``funnel_seconds`` of refinement per budget at most), padded to the task's n_z = n_w + 1.

Gaussian tasks (kind ``gaussian``, privacy ``mi``, MSE distortion): the same idea
with a Gaussian model.  The sample means and covariance of (S, U) are estimated
from the training samples, a model of the structure theory has a closed form for
is built from them (:func:`estimate_gaussian_model`), and each budget gets the
optimal linear-Gaussian mechanism theory gives for that ESTIMATED model
(:func:`privbench.theory.gaussian.gaussian_optimum`: PPAN Props 1 and 3, Prop 2's
modified water-filling, reverse water-filling), returned as a
:class:`~privbench.learners.mechanisms.LinearGaussian` so that the bench scores
it exactly on the TRUE model.  Its gap is the finite-sample part of a learner's
gap (the optimisation part being zero).  Which structure is assumed, from the
task and the samples only:

=======================  ==========================================================
samples / task           estimated model
=======================  ==========================================================
S = U in every sample    ``gaussian-source``: the sample covariance's eigenvalues are
                         the source variances (reverse water-filling in its
                         eigenbasis, rotated back; observation ignored)
d_s = d_u = 1            ``gaussian-scalar``: sample correlation and variances
                         (Prop 1 for ``useful``, Prop 3 generalised for ``full``)
otherwise, ``useful``    ``gaussian-vector`` under PPAN Prop 2's condition, the
                         only one with a closed form: cov_u is ASSUMED to be c I
                         (c = mean sample variance of U); cov_s and cov_su are the
                         sample ones (``structure="prop2"``), or only their
                         diagonals, i.e. per-component pairs as in PPAN's examples
                         (``structure="diagonal"``, needs d_s = d_u)
otherwise, ``full``      no closed form in theory: InputError
=======================  ==========================================================

All of theory's Gaussian scenarios are zero-mean and a LinearGaussian release has
no offset, so the means are only recorded (``info["means"]``); the covariance is
the sample covariance about them.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from privbench.datasets.errors import InputError
from privbench.datasets.samples import Samples
from privbench.datasets.tasks import Task
from privbench.datasets.vocabulary import DISTORTIONS
from privbench.learners.base import Learner, Mechanism
from privbench.learners.mechanisms import FiniteChannel, LinearGaussian
from privbench.learners.serves import Serves


def estimate_joint(samples: Samples, n_s: int, n_u: int, smoothing: float = 0.0) -> np.ndarray:
    """Empirical P^(S=s, U=u) with ``smoothing`` pseudo-counts per cell, shape (n_s, n_u)."""
    counts = np.bincount(np.asarray(samples.s) * n_u + np.asarray(samples.u), minlength=n_s * n_u)
    counts = counts.reshape(n_s, n_u).astype(float) + smoothing
    return counts / counts.sum()


STRUCTURES = ("prop2", "diagonal")


def estimate_gaussian_model(samples: Samples, task: Task, structure: str = "prop2") -> tuple[Any, dict[str, Any]]:
    """The Gaussian scenario theory can solve, estimated from ``samples`` (see the module docstring).

    Parameters
    ----------
    samples : Samples
        S (n, d_s) and U (n, d_u), n >= 2.
    task : Task
        Kind ``gaussian``.
    structure : {"prop2", "diagonal"}
        For vector tasks: keep the sample cov_s and cov_su, or only their diagonals.

    Returns
    -------
    (scenario, facts)
        A GaussianScalar, GaussianVector or GaussianSource, and JSON-able facts
        (``structure``, ``means``, the estimated parameters, ``rotation`` for a source).

    Raises
    ------
    InputError
        Fewer than 2 samples, a degenerate sample covariance, a vector task with
        observation ``full`` (no closed form), or ``diagonal`` with d_s != d_u.
    """
    from privbench.datasets.scenarios import GaussianScalar, GaussianSource, GaussianVector

    if structure not in STRUCTURES:
        raise InputError(f"structure={structure!r} is unknown (allowed: {', '.join(STRUCTURES)})")
    n = len(samples)
    if n < 2:
        raise InputError(f"plugin needs at least 2 samples to estimate a covariance (got {n})")
    s = np.asarray(samples.s, dtype=float).reshape(n, -1)
    u = np.asarray(samples.u, dtype=float).reshape(n, -1)
    d_s, d_u = s.shape[1], u.shape[1]
    means = {"s": s.mean(axis=0).tolist(), "u": u.mean(axis=0).tolist()}
    cov = np.atleast_2d(np.cov(np.hstack([s, u]), rowvar=False))
    c_s, c_u, c_su = cov[:d_s, :d_s], cov[d_s:, d_s:], cov[:d_s, d_s:]
    if min(np.linalg.eigvalsh(c_s).min(), np.linalg.eigvalsh(c_u).min()) <= 0:
        raise InputError(f"the sample covariance of S or U from {n} samples is singular (need n > d_s + d_u "
                         "and non-degenerate samples)")
    if d_s == d_u and np.array_equal(s, u):
        w, v = np.linalg.eigh(c_u)
        return GaussianSource(tuple(float(x) for x in w)), {
            "structure": "source (S = U)", "means": means, "variances": w.tolist(), "rotation": v.tolist()}
    if d_s == 1 and d_u == 1:
        rho = float(np.clip(c_su[0, 0] / math.sqrt(c_s[0, 0] * c_u[0, 0]), -1.0, 1.0))
        return GaussianScalar(rho, float(c_s[0, 0]), float(c_u[0, 0])), {
            "structure": "scalar", "means": means, "rho": rho, "var_s": float(c_s[0, 0]),
            "var_u": float(c_u[0, 0])}
    if task.observation == "full":
        raise InputError(f"plugin: no closed-form optimum for a gaussian task with d_s={d_s}, d_u={d_u} and "
                         "observation=full (theory has one for scalar tasks, vector tasks with observation=useful "
                         "and sources)")
    if structure == "diagonal":
        if d_s != d_u:
            raise InputError(f"structure='diagonal' needs d_s = d_u (got d_s={d_s}, d_u={d_u}); use 'prop2'")
        c_s, c_su = np.diag(np.diag(c_s)), np.diag(np.diag(c_su))
    c = float(np.trace(c_u) / d_u)
    try:
        sc = GaussianVector(cov_s=_tuple2(c_s), cov_u=_tuple2(c * np.eye(d_u)), cov_su=_tuple2(c_su))
    except InputError as exc:
        raise InputError(f"plugin: the estimated model with cov_u = c I is not a valid covariance ({exc})") from None
    return sc, {"structure": f"vector ({structure}, cov_u = c I assumed)", "means": means, "c": c,
                "cov_s": c_s.tolist(), "cov_su": c_su.tolist()}


def _tuple2(a: np.ndarray) -> tuple[tuple[float, ...], ...]:
    return tuple(tuple(float(x) for x in row) for row in np.atleast_2d(a))


class PlugIn(Learner):
    """Estimate the model from the samples, then take theory's optimal mechanism for the estimate.

    Finite tasks: the empirical joint and the optimal convex program on it.
    Gaussian tasks (privacy ``mi`` only): the sample covariance, shaped to the
    structure theory solves in closed form (ASSUMED, see the module docstring:
    cov_u = c I for vector tasks, as in PPAN Prop 2 and its examples), and the
    optimal linear-Gaussian mechanism of that estimate.

    Parameters
    ----------
    smoothing : float
        Finite tasks: add-``smoothing`` pseudo-count per (s, u) cell (0: plain
        empirical frequencies).  Must be 0 for gaussian tasks.
    structure : {"prop2", "diagonal"}
        Gaussian vector tasks: sample cov_s and cov_su, or only their diagonals
        (per-component pairs).  Ignored elsewhere.
    funnel_seconds : float
        Log-loss tasks: refinement time per budget of the funnel on the estimate.
    """

    name = "plugin"
    summary = ("plug-in: estimate the model (empirical joint, add-alpha optional; or the Gaussian sample "
               "covariance), then theory's optimal mechanism for the estimate")
    serves = Serves(kinds=("finite", "gaussian"))
    observations = ("useful", "full")
    privacies = ("mi", "map", "chi2")
    distortions = DISTORTIONS  # logloss too: the funnel's achievable end on the estimate
    test_params: dict[str, Any] = {}

    def __init__(self, smoothing: float = 0.0, structure: str = "prop2", funnel_seconds: float = 10.0) -> None:
        self.smoothing = smoothing
        self.structure = structure
        self.funnel_seconds = funnel_seconds

    def refusal(self, task: Task) -> str | None:
        """As declared, and gaussian tasks for privacy ``mi`` only (theory's Gaussian closed forms)."""
        if task.kind == "gaussian" and task.privacy != "mi":
            return f"serves gaussian tasks for privacy mi only (theory's closed forms), not {task.privacy}"
        return super().refusal(task)

    def _fit(self, samples: Samples, task: Task, budgets: np.ndarray, seed: int, device: Any) -> list[Mechanism]:
        if task.kind == "gaussian":
            return self._fit_gaussian(samples, task, budgets)
        if task.distortion == "logloss":
            return self._fit_funnel(samples, task, budgets)
        a = self.smoothing
        if isinstance(a, bool) or not isinstance(a, (int, float)) or not math.isfinite(a) or a < 0:
            raise InputError(f"smoothing={a!r} must be a finite number >= 0")
        joint = estimate_joint(samples, task.n_s, task.n_u, float(a))  # type: ignore[arg-type]
        dist = task.distortion_array()
        from privbench.theory.finite import solve_finite  # here, not at import: a training worker
        from privbench.theory.measures import observation_kernel  # lists learners without loading theory

        kernel = observation_kernel(task.n_s, task.n_u, task.observation)  # type: ignore[arg-type]
        p_uw = (joint.reshape(-1, 1) * kernel).reshape(task.n_s, task.n_u, -1).sum(axis=0)  # type: ignore[arg-type]
        least = float((p_uw.T @ dist).min(axis=1).sum())  # each w sent to its cheapest z
        unseen = p_uw.sum(axis=0) <= 0
        allowed = kernel.reshape(task.n_s, task.n_u, -1).sum(axis=0) > 0  # (n_u, n_w): U values W allows
        worst = np.where(allowed.T[:, :, None], dist[None, :, :], -np.inf).max(axis=1)  # (n_w, n_z)
        safe = np.eye(dist.shape[1])[worst.argmin(axis=1)]  # per w: the z of least worst-case distortion
        out: list[Mechanism] = []
        for budget in budgets:
            used = max(float(budget), least)
            opt = solve_finite(joint, dist, used, task.privacy, task.observation)
            info = {"smoothing": float(a), "estimate_value": opt.value, "method": opt.method,
                    "budget_infeasible": bool(budget < least - 1e-12), "budget_used": used,
                    "estimate_distortion": float((opt.certificate or {}).get("distortion", float("nan")))}
            channel = np.asarray(opt.mechanism["channel"], dtype=float).copy()  # type: ignore[index]
            channel[unseen] = safe[unseen]
            info["unseen_w"] = int(unseen.sum())
            out.append(FiniteChannel(task, float(budget), channel, info))
        return out

    def _fit_funnel(self, samples: Samples, task: Task, budgets: np.ndarray) -> list[Mechanism]:
        """Log-loss tasks: the achievable end of theory's certified funnel on the estimated joint."""
        from privbench.theory.funnel import funnel_optimum

        a = self.smoothing
        if isinstance(a, bool) or not isinstance(a, (int, float)) or not math.isfinite(a) or a < 0:
            raise InputError(f"smoothing={a!r} must be a finite number >= 0")
        joint = estimate_joint(samples, task.n_s, task.n_u, float(a))  # type: ignore[arg-type]
        out: list[Mechanism] = []
        for budget in budgets:
            opt = funnel_optimum(joint, float(budget), task.privacy, task.observation,
                                 time_limit=float(self.funnel_seconds))
            ch = np.asarray(opt.mechanism["channel"])  # type: ignore[index]
            if ch.shape[1] > task.n_z:  # type: ignore[operator]
                raise InputError(f"plugin: the funnel's channel has {ch.shape[1]} outputs, the task allows "
                                 f"n_z={task.n_z} (need n_z >= n_w + 1)")
            channel = np.hstack([ch, np.zeros((ch.shape[0], task.n_z - ch.shape[1]))])  # type: ignore[operator]
            info = {"smoothing": float(a), "estimate_value": opt.value, "estimate_lower": opt.lower,
                    "method": opt.method, "estimate_distortion": float(opt.mechanism["distortion"])}  # type: ignore[index]
            out.append(FiniteChannel(task, float(budget), channel, info))
        return out

    def _fit_gaussian(self, samples: Samples, task: Task, budgets: np.ndarray) -> list[Mechanism]:
        from privbench.theory.gaussian import gaussian_optimum

        if self.smoothing != 0:
            raise InputError(f"smoothing={self.smoothing!r} applies to finite tasks only (must be 0 here)")
        sc, facts = estimate_gaussian_model(samples, task, self.structure)
        rot = np.asarray(facts.pop("rotation")) if "rotation" in facts else None
        d_s, d_u = int(task.d_s), int(task.d_u)  # type: ignore[arg-type]
        out: list[Mechanism] = []
        for budget in budgets:
            opt = gaussian_optimum(sc, float(budget), task.observation)
            m = opt.mechanism or {}
            A, B, noise = (np.asarray(m[k], dtype=float) for k in ("A", "B", "noise_cov"))
            if rot is not None:  # source: the mechanism is diagonal in the estimate's eigenbasis
                A, noise = rot @ A @ rot.T, rot @ noise @ rot.T
            B = B.reshape(d_u, d_s) if task.observation == "full" else np.zeros((d_u, d_s))
            info = {**facts, "estimate_value": float(opt.value), "method": opt.method,
                    "estimate_distortion": float(m.get("distortion", float("nan")))}
            out.append(LinearGaussian(task, float(budget), A, B, noise, info))
        return out
