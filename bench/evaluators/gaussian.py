"""Evaluators of Gaussian scenarios (scenario kind ``gaussian``).

Exact evaluators by the mechanism's declared type (:data:`EXACT`, keyed by
``Mechanism.type_name``): ``exact-linear-gaussian`` (``linear-gaussian``:
I(S;Z) and MSE from theory.gaussian) and ``exact-constant`` (``constant``).
For every mechanism: ``gaussian-approx`` (a lower bound for Gaussian S), the
sample distortion with per-component detail, and (unless the headline is exact
and ``cross_check`` is off) the ensemble of sample evaluators (:mod:`.ensemble`: post-hoc attacker,
KSG, linear and kNN attackers, the fine-scale attacker).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from privbench.theory.gaussian import linear_gaussian_leakage

from .ensemble import sample_leakage
from .verify import checked_description
from .verify_law import law_disagreement
from .evaluation import (Evaluation, ExactEvaluator, exact_by_type, jsonable, log_p_and_entropy, make_evaluation,
                         sample_distortion)
from .gaussian_approx import gaussian_approx_mi


def exact_linear_gaussian(mech: Any, sc: Any) -> tuple[list[Evaluation], list[Evaluation]]:
    """I(S;Z) and MSE of Z = A U + B S + noise from the scenario's covariance (theory.gaussian)."""
    mi, mse = linear_gaussian_leakage(sc.cov(), mech.A, mech.B, mech.noise_cov)
    return ([make_evaluation("mi", mi, "exact-linear-gaussian", "exact")],
            [make_evaluation("distortion", mse, "exact-distortion", "exact")])


def exact_constant(mech: Any, sc: Any) -> tuple[list[Evaluation], list[Evaluation]]:
    """A ``constant`` release c: I = 0, MSE = tr Cov U + |c|^2."""
    cov, d_s = sc.cov(), sc.dims[0]
    return ([make_evaluation("mi", 0.0, "exact-constant", "exact")],
            [make_evaluation("distortion", np.trace(cov[d_s:, d_s:]) + float(mech.value @ mech.value),
                             "exact-distortion", "exact")])


#: Mechanism type_name -> exact evaluator (leakage evaluations, distortion evaluations).
EXACT: dict[str, ExactEvaluator] = {
    "linear-gaussian": exact_linear_gaussian,
    "constant": exact_constant,
}


def evaluate_gaussian(mech: Any, sc: Any, task: Any, s: np.ndarray, u: np.ndarray, z: np.ndarray, seed: int,
                      rng: np.random.Generator, cross_check: bool = True) -> list[Evaluation]:
    """All evaluations of a release of a Gaussian scenario (module docstring); ``task`` gives the observation."""
    out, exact_d = exact_by_type(EXACT, mech, sc)
    z = z.reshape(len(z), -1)
    d_sample = with_components(sample_distortion(((u - z) ** 2).sum(axis=1)), s, u, z)
    out, exact_d, check = checked_description(out, exact_d, d_sample,
                                              law_disagreement(mech, s, u, z, task.observation))
    out.append(gaussian_approx_mi(s, z))
    if out[0].kind == "exact" and not cross_check:  # the headline is exact: skip the costly estimators
        return out + exact_d + [d_sample] + check
    log_p_s, h_s = log_p_and_entropy(sc, s)
    out += sample_leakage(z, s, discrete=False, log_p_s=log_p_s, h_s=h_s, seed=seed, rng=rng, gaussian_approx=False)
    return out + exact_d + [d_sample] + check


def with_components(ev: Evaluation, s: np.ndarray, u: np.ndarray, z: np.ndarray) -> Evaluation:
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
                      {**ev.detail, "per_component_distortion": jsonable(per_d), "per_component_mi": per_i})
