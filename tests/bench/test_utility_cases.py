"""A bench case with the paper formulation: the training samples carry the scenario's utility label,
and a budget the learner declares not to be a distortion budget (Learner.budget_kind) is never an overshoot."""

from __future__ import annotations

import numpy as np

from privbench.bench.evaluators import evaluate, headline
from privbench.bench.execute import score_budget
from privbench.bench.scores import score
from privbench.bench.suites import make_case
from privbench.datasets.scenarios import make_scenario
from privbench.datasets.tasks import task_for
from privbench.learners import make_learner

TINY = {"steps": 20, "batch_size": 64, "hidden": 8, "layers": 2}


def _fields(params):
    case = make_case("t", "e", "hypothesis-testing", {"correlation": "independent"}, "useful", "map", None,
                     "chi2-sanitizer", params, [0.001], 0, n_train=120, n_eval=200)
    sc = make_scenario(case.scenario, case.params)
    samples = sc.sample(case.n_train, np.random.default_rng(case.train_seed))
    assert samples.utility is not None and set(samples.utility) == {"u"}  # what execute_case trains on
    task = task_for(sc, case.observation, case.training_privacy, case.distortion)
    mech = make_learner(case.learner, **case.learner_params).fit(samples, task, 0.001, seed=case.seed, device="cpu")
    return score_budget(case, sc, mech, 0.001, evaluate, headline, score), mech


def test_an_eta_budget_is_not_an_overshoot():
    paper, mech = _fields({**TINY, "formulation": "utility"})
    assert paper["status"] == "ok", paper["error"]
    assert paper["distortion"] > 0.001 and paper["overshoot"] == 0.0  # eta 0.001, a chi-square level
    assert mech.info["budget_kind"] == "chi2-level"
