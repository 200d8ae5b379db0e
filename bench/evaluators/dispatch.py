"""The evaluators' entry point: :func:`evaluate`, dispatching by the scenario's declared kind.

An evaluator never sees the learner's adversary or training data.  It uses the
TRUE scenario (exact joint pmf, covariances, mixture parameters) and FRESH
samples drawn with ``numpy.random.default_rng(seed)``:

=====================  ==========================  =========  ===============================
evaluator              applies to                  kind       what
=====================  ==========================  =========  ===============================
exact-channel          finite, ``channel()``       exact      I(S;Z), MAP, chi2 (theory.measures)
exact-distortion       channel / parametric        exact      E d(U, Z) from the model
exact-logloss          finite ``logloss`` tasks,   exact      H(U | Z) from the model (logloss.py;
                         verified ``channel()``                 sample-logloss / logloss-plugin too)
finite-plugin          finite without a channel    estimate   plug-in pmf of fresh (S, Z)
exact-mixture-params   binary-gmm, mixture-shift   exact      MAP (theory.mixture)
exact-linear-gaussian  gaussian, linear-gaussian   exact      I(S;Z) (theory.gaussian)
exact-constant         constant                    exact      I = 0, MAP = max(prior, 1-prior)
mixture-fresh-         binary-gmm, any mechanism   lower-     accuracy of a classifier trained
  classifier                                         bound      from scratch on held-out releases
posthoc-attacker       gaussian / binary-gmm       lower-     h(S) + E log Q(S|Z) (mi)
                                                     bound
gaussian-approx        gaussian, any mechanism     lower-     PPAN §III-B1
                                                     bound
ksg                    gaussian, any mechanism     estimate   Kraskov et al. estimator 1, every row
ensemble-linear, -knn, gaussian / binary-gmm       lower-     the study's attackers, feeding the
  -gbt (binary S)                                    bound      headline (ensemble.py)
fine-scale-attacker    gaussian / binary-gmm,      lower-     residues of Z's low-order digits
                         where a residue depends     bound      (finescale.py)
                         on S
attacker-linear, -mlp- gaussian / binary-gmm, only lower-     the attacker-mismatch study
  wide, -knn, -gbt       with evaluators="mismatch"  bound      (mismatch.py); never headline
sample-distortion      any mechanism               estimate   mean d(U, Z) over fresh samples
fresh-classifier       labelled scenarios (no      lower-     map, mi, utility accuracies of
                         known optimum)              bound      fresh MLPs (labelled.py)
fresh-classifier-      labelled scenarios          lower-     map, mi of S read by the utility
  shared                                             bound      classifier (labelled.py)
fresh-logloss          labelled ``logloss`` tasks  upper-     held-out cross-entropy of a fresh
                         (images)                    bound      classifier of U: >= H(U | Z)
                                                                (heldout_logloss.py)
=====================  ==========================  =========  ===============================

Mechanism types (``Mechanism.type_name``) choose the exact evaluators; the
bench imports no learner class.  Without an exact evaluator the headline is the
largest CREDIBLE sample value (:func:`.headline.credible`), and the record keeps
the spread between the evaluators (:func:`.headline.spread`).  "lower-bound" is up to estimation error:
every sample evaluator reports a ``stderr`` and
:func:`privbench.bench.scores.score` allows 3 of them.

Adding an evaluator for an existing kind: one function in that kind's module
(or one new module it calls).  A new scenario kind: one module with an
``evaluate_<kind>`` function and one entry in :data:`BY_KIND`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from privbench.datasets.errors import InputError
from privbench.datasets.scenarios import Scenario
from privbench.datasets.tasks import PRIVACIES, Task, task_for
from privbench.datasets.vocabulary import EVALUATOR_SETS as SUITE_EVALUATOR_SETS

from .evaluation import Evaluation, check_counts, check_release, mechanism_task
from .finite import evaluate_finite
from .logloss import evaluate_finite_logloss
from .gaussian import evaluate_gaussian
from .labelled import evaluate_labelled_scenario
from .mismatch import with_mismatch
from .mixture import evaluate_mixture

#: Extra evaluator sets :func:`evaluate` accepts: none, or one a suite may name.
EVALUATOR_SETS = (None, *SUITE_EVALUATOR_SETS)


@dataclass(frozen=True)
class KindEvaluators:
    """How releases of one scenario kind are evaluated.

    ``run(mech, scenario, task, s, u, z, seed, rng, cross_check)`` returns the
    standard evaluations; ``mismatch`` says whether the attacker-mismatch study
    applies (finite kinds: exact evaluators leave nothing for an attacker).
    """

    run: Callable[..., list[Evaluation]]
    mismatch: bool


#: Scenario kind (``Scenario.kind``) -> its evaluators.
BY_KIND: dict[str, KindEvaluators] = {
    "finite": KindEvaluators(lambda m, sc, task, s, u, z, seed, rng, cc:
                             (evaluate_finite_logloss if task.distortion == "logloss" else evaluate_finite)(
                                 m, sc, task, s, u, z, seed), mismatch=False),
    "mixture": KindEvaluators(evaluate_mixture, mismatch=True),
    "gaussian": KindEvaluators(evaluate_gaussian, mismatch=True),
}


def evaluate(mechanism: Any, scenario: Any, observation: str | None, privacy: str, *,
             n_eval: int = 20000, seed: int = 0, evaluators: str | None = None,
             cross_check: bool = True, distortion: str | None = None) -> list[Evaluation]:
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
        (:func:`privbench.bench.evaluators.mismatch.mismatch_evaluations`, gaussian and
        binary-gmm scenarios; none for finite ones, whose exact evaluators leave
        nothing for an attacker to add).  They are marked
        ``detail["study"] = "mismatch"``, seeded independently of the standard
        evaluators (whose numbers stay the same), and never used by
        :func:`~privbench.bench.evaluators.headline`.
    cross_check : bool
        Run the sample estimators (post-hoc attacker, KSG, fresh classifier) also
        where an exact evaluation of the leakage exists (default).  They cannot
        change the headline then (it takes the exact value); the runner turns
        them off to save time (the tests cross-check them against exact values).
    distortion : str, optional
        Another distortion than the scenario's own: ``logloss`` (the privacy funnel's H(U | Z);
        finite scenarios: :mod:`.logloss`; images: the utility label's, bounded from above by
        :mod:`.heldout_logloss`).  The mechanism must be built for that task.

    Returns
    -------
    list of Evaluation
        Privacy evaluations first, then distortion evaluations.
    """
    if isinstance(scenario, Scenario) and not scenario.has_optimum:  # labelled data: fresh classifiers only
        return evaluate_labelled_scenario(mechanism, scenario, observation, privacy, n_eval, seed, evaluators,
                                          distortion)
    task, kind = check(mechanism, scenario, observation, privacy, n_eval, seed, distortion)
    if evaluators not in EVALUATOR_SETS:
        raise InputError(f"evaluators={evaluators!r} is unknown (allowed: None, "
                         f"{', '.join(repr(e) for e in EVALUATOR_SETS if e)})")
    rng = np.random.default_rng(seed)
    torch_seed = int(np.random.SeedSequence(seed).generate_state(1)[0])
    samples = scenario.sample(int(n_eval), rng)
    w = np.array(task.observe(samples), copy=True)  # a copy: a release that writes into W cannot touch U
    z = check_release(task, mechanism.release(w, rng), int(n_eval))
    out = kind.run(mechanism, scenario, task, samples.s, samples.u, z, torch_seed, rng, cross_check)
    if evaluators == "mismatch" and kind.mismatch:
        out = with_mismatch(out, scenario, samples.s, z, seed)
    if not any(e.metric == privacy for e in out):
        raise InputError(f"privacy={privacy!r} has no evaluator for a {scenario.name} scenario "
                         f"(available: {', '.join(sorted({e.metric for e in out} - {'distortion'}))})")
    return out


def check(mech: Any, scenario: Any, observation: str | None, privacy: str, n_eval: Any,
          seed: Any, distortion: str | None = None) -> tuple[Task, KindEvaluators]:
    """The scenario's Task and its kind's evaluators, after checking every argument (InputError)."""
    if privacy not in PRIVACIES:
        raise InputError(f"privacy={privacy!r} is unknown (allowed: {', '.join(PRIVACIES)})")
    check_counts(n_eval, seed)
    kind = BY_KIND.get(scenario.kind) if isinstance(scenario, Scenario) else None
    if kind is None:
        raise InputError(f"scenario={scenario!r} has no evaluator (allowed: finite, gaussian, binary-gmm scenarios)")
    task = mechanism_task(mech, lambda obs: task_for(scenario, obs, privacy, distortion), scenario.id, observation,
                          privacy)
    return task, kind
