"""Evaluators of the binary Gaussian mixture (scenario kind ``mixture``).

Exact evaluators by the mechanism's declared type (:data:`EXACT`, keyed by
``Mechanism.type_name``): ``exact-mixture-params`` (``mixture-shift``: MAP
accuracy and MSE from theory.mixture) and ``exact-constant`` (``constant``).
For every mechanism: the ensemble of sample evaluators (:mod:`.ensemble`: the fresh
classifier ``mixture-fresh-classifier``, a lower bound on the MAP accuracy, the
``posthoc-attacker`` MI bound, linear, kNN and boosted attackers, the fine-scale
attacker) and the sample distortion.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from privbench.theory.mixture import mechanism_accuracy, mechanism_distortion

from .ensemble import sample_leakage
from .verify import checked_description
from .verify_law import law_disagreement
from .evaluation import (Evaluation, ExactEvaluator, exact_by_type, log_p_and_entropy, make_evaluation,
                         sample_distortion)


def exact_mixture_shift(mech: Any, sc: Any) -> tuple[list[Evaluation], list[Evaluation]]:
    """MAP accuracy and distortion of a ``mixture-shift`` mechanism from its parameters (theory.mixture)."""
    p = mech.params()
    return ([make_evaluation("map", mechanism_accuracy(sc, **p), "exact-mixture-params", "exact", params=p)],
            [make_evaluation("distortion", mechanism_distortion(sc, **p), "exact-distortion", "exact")])


def exact_constant(mech: Any, sc: Any) -> tuple[list[Evaluation], list[Evaluation]]:
    """A ``constant`` release: MAP = the larger prior, I = 0, MSE = Var U + (E U - c)^2."""
    c = float(mech.value[0])
    mean_u = sc.mu * (2 * sc.prior - 1)
    var_u = sc.prior * sc.sigma1**2 + (1 - sc.prior) * sc.sigma0**2 + sc.prior * (1 - sc.prior) * 4 * sc.mu**2
    return ([make_evaluation("map", max(sc.prior, 1 - sc.prior), "exact-constant", "exact"),
             make_evaluation("mi", 0.0, "exact-constant", "exact")],
            [make_evaluation("distortion", var_u + (mean_u - c) ** 2, "exact-distortion", "exact")])


#: Mechanism type_name -> exact evaluator (leakage evaluations, distortion evaluations).
EXACT: dict[str, ExactEvaluator] = {
    "mixture-shift": exact_mixture_shift,
    "constant": exact_constant,
}
#: Scenario name -> its exact evaluators: the formulas above are for one Gaussian per class (GAP §4);
#: ``gmm-k`` (K components per class) is evaluated from its releases only.
EXACT_BY_SCENARIO: dict[str, dict[str, ExactEvaluator]] = {"binary-gmm": EXACT}


def evaluate_mixture(mech: Any, sc: Any, task: Any, s: np.ndarray, u: np.ndarray, z: np.ndarray, seed: int,
                     rng: np.random.Generator, cross_check: bool = True) -> list[Evaluation]:
    """All evaluations of a release of a mixture scenario (module docstring); ``task`` gives the observation."""
    out, exact_d = exact_by_type(EXACT_BY_SCENARIO.get(sc.name, {}), mech, sc)
    d_sample = sample_distortion(((u.reshape(-1, 1) - z.reshape(len(z), -1)) ** 2).sum(axis=1))
    out, exact_d, check = checked_description(out, exact_d, d_sample,
                                              law_disagreement(mech, s, u, z, task.observation))
    if out and not cross_check:  # the MAP headline is exact: skip the fresh classifier
        return out + exact_d + [d_sample] + check
    log_p_s, h_s = log_p_and_entropy(sc, s)
    out += sample_leakage(z.reshape(len(z), -1), s, discrete=True, log_p_s=log_p_s, h_s=h_s, seed=seed, rng=rng,
                          gaussian_approx=False)
    return out + exact_d + [d_sample] + check
