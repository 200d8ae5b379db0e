"""Per-case reuse of evaluations (bench/eval_reuse.py): budgets whose mechanisms are one release are
evaluated once; anything else is evaluated every time."""

from __future__ import annotations

import numpy as np

from privbench.bench.eval_reuse import reusing, state_digest
from privbench.bench.evaluators import evaluate
from privbench.datasets import task_for
from privbench.datasets.scenarios import make_scenario
from privbench.learners import make_learner


def counting():
    calls = []

    def run(mech, *args, **kwargs):
        calls.append(mech.budget)
        return evaluate(mech, *args, **kwargs)

    return run, calls


def fitted(learner, budgets, **params):
    sc = make_scenario("binary-gmm", {"prior": 0.75, "mu": 3, "sigma0": 2, "sigma1": 1})
    task = task_for(sc, "full", "map", None)
    samples = sc.sample(400, np.random.default_rng(0))
    return sc, make_learner(learner, **params).fit(samples, task, budgets, seed=3)


def test_one_release_at_several_budgets_is_evaluated_once_with_the_same_numbers():
    sc, mechs = fitted("identity", [1.0, 3.0, 6.0])
    run, calls = counting()
    reuse = reusing(run)
    got = [reuse(m, sc, "full", "map", n_eval=2000, seed=5, cross_check=False) for m in mechs]
    assert calls == [1.0]
    direct = evaluate(mechs[2], sc, "full", "map", n_eval=2000, seed=5, cross_check=False)
    assert [(e.metric, e.evaluator, e.value) for e in got[2]] == [(e.metric, e.evaluator, e.value) for e in direct]
    assert got[1] is not got[0] and got[1][0] is not got[0][0]  # copies: scoring one budget cannot touch another


def test_different_states_or_arguments_are_evaluated_again():
    sc, mechs = fitted("gap-mixture", [1.0, 3.0], epochs=1, batch_size=64, hidden=(4,))
    assert state_digest(mechs[0]) != state_digest(mechs[1])
    run, calls = counting()
    reuse = reusing(run)
    for m in mechs:
        reuse(m, sc, "full", "map", n_eval=1000, seed=5, cross_check=False)
    reuse(mechs[0], sc, "full", "map", n_eval=1000, seed=6, cross_check=False)  # another seed
    assert calls == [1.0, 3.0, 1.0]


def test_a_mechanism_of_another_module_is_always_evaluated():
    sc, mechs = fitted("identity", [1.0])

    class Foreign(type(mechs[0])):
        pass

    Foreign.__module__ = "someone.else"
    foreign = Foreign(mechs[0].task, 1.0, 0.0, 0.0, 0.0, 0.0)
    assert state_digest(foreign) is None
    run, calls = counting()
    reuse = reusing(run)
    for _ in range(2):
        reuse(foreign, sc, "full", "map", n_eval=1000, seed=5, cross_check=False)
    assert calls == [1.0, 1.0]
