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


def test_a_latent_kl_budget_is_not_an_overshoot_where_an_optimum_exists():
    # binary-gmm has an optimum; the latent filter's budget is a latent KL, not a distortion budget:
    # the point is scored at the distortion it reached and never flagged as over budget
    case = make_case("t", "e", "binary-gmm", {"prior": 0.75, "mu": 3, "sigma0": 2, "sigma1": 1}, "full", "map",
                     None, "latent-filter", {"latent_dim": 2, "hidden": 8, "vae_steps": 15, "filter_steps": 15,
                                             "batch_size": 32}, [0.01], 0, n_train=300, n_eval=400)
    sc = make_scenario(case.scenario, case.params)
    samples = sc.sample(case.n_train, np.random.default_rng(case.train_seed))
    task = task_for(sc, case.observation, case.training_privacy, case.distortion)
    mech = make_learner(case.learner, **case.learner_params).fit(samples, task, 0.01, seed=case.seed, device="cpu")
    f = score_budget(case, sc, mech, 0.01, evaluate, headline, score)
    assert f["status"] == "ok", f["error"]
    assert f["distortion"] > 0.05  # a real overshoot of 0.01, were the budget a distortion budget
    assert f["overshoot"] == 0.0 and f["optimum_at_budget"] == f["optimum_at_distortion"]
