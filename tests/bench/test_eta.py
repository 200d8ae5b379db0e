"""The cost-weighted ETA of a run, on synthetic sequences of cases whose costs differ."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest

from privbench.bench.eta import CostETA, case_dimension, prior_cost


@dataclass(frozen=True)
class FakeCase:
    key: str
    learner: str
    n_train: int = 10_000
    budgets: tuple = (0.1,)
    params_json: str = '{"m": 2}'


def trains(name):
    return name != "baseline"


def simulate(cases, seconds, workers=1, known_workers=False):
    """Finish ``cases`` in order on ``workers`` equal workers; yield (estimate, naive, truth) after each case."""
    est = CostETA(cases, trains=trains, workers=workers if known_workers else None)
    work_done = 0.0
    total = sum(seconds)
    for i, (case, s) in enumerate(zip(cases, seconds)):
        est.finished(case.key, s)
        work_done += s
        elapsed = work_done / workers
        truth = (total - work_done) / workers
        naive = elapsed / (i + 1) * (len(cases) - i - 1)
        yield i, est.eta(elapsed), naive, truth


def mixed_suite():
    slow = [FakeCase(f"s{i}", "ppan") for i in range(10)]
    fast = [FakeCase(f"f{i}", "baseline") for i in range(10)]
    return slow, fast


def test_slow_cases_first_the_cost_weighted_eta_is_close_where_equal_cost_triples_it():
    slow, fast = mixed_suite()
    cases, secs = slow + fast, [10.0] * 10 + [0.05] * 10  # the order run_cases uses: trained learners first
    i, eta, naive, truth = list(simulate(cases, secs))[4]  # five slow cases done: 50.5 s left
    assert truth == pytest.approx(50.5)
    assert eta == pytest.approx(truth, rel=0.05)
    assert naive / truth > 2.5  # the old estimate: 150 s


def test_fast_cases_first_the_estimate_recovers_after_one_slow_case():
    slow, fast = mixed_suite()
    steps = list(simulate(fast + slow, [0.05] * 10 + [10.0] * 10))
    _, eta, naive, truth = steps[9]  # only baselines measured: the prior still says the rest is far costlier
    assert truth == pytest.approx(100.0)
    assert truth / eta < 5 and truth / naive > 100
    _, eta, naive, truth = steps[10]  # one slow case measured: calibrated
    assert eta == pytest.approx(truth, rel=0.02)
    assert truth / naive > 5


@pytest.mark.parametrize("known", [False, True])
def test_parallel_workers_shorten_the_estimate(known):
    # known: the run's jobs; unknown: inferred from the throughput (elapsed per worker-second done)
    slow, fast = mixed_suite()
    one = list(simulate(slow + fast, [10.0] * 10 + [0.05] * 10, workers=1, known_workers=known))[4][1]
    two = list(simulate(slow + fast, [10.0] * 10 + [0.05] * 10, workers=2, known_workers=known))[4][1]
    assert two == pytest.approx(one / 2)


def test_known_workers_ignore_start_up_time():
    cases = [FakeCase(f"s{i}", "ppan") for i in range(3)]
    est = CostETA(cases, trains=trains, workers=1)
    est.finished("s0", 10.0)
    assert est.eta(elapsed=40.0) == pytest.approx(20.0)  # 30 s of start-up do not inflate the estimate
    est = CostETA(cases, trains=trains, workers=8)  # more workers than cases left: each runs on its own
    est.finished("s0", 10.0)
    assert est.eta(elapsed=10.0) == pytest.approx(10.0)


def test_prior_grows_with_n_train_budgets_and_dimension_and_training():
    base = FakeCase("a", "ppan")
    assert prior_cost(FakeCase("b", "ppan", n_train=40_000), trains) > prior_cost(base, trains)
    assert prior_cost(FakeCase("b", "ppan", budgets=(0.1, 0.2, 0.3)), trains) > prior_cost(base, trains)
    assert prior_cost(FakeCase("b", "ppan", params_json='{"m": 20}'), trains) > prior_cost(base, trains)
    assert prior_cost(FakeCase("b", "baseline"), trains) < prior_cost(base, trains) / 10
    assert case_dimension(json.loads('{"rho": [0.1, 0.2, 0.3], "m": 2}')) == 3


def test_no_measurement_no_estimate():
    est = CostETA([FakeCase("a", "ppan")], trains=trains)
    assert est.eta(5.0) is None
    est.finished("a", None)  # e.g. finished by another process: nothing learned
    assert est.eta(5.0) is None


@dataclass(frozen=True)
class SuiteCase(FakeCase):
    experiment: str = ""
    scenario: str = ""


def test_measured_costs_price_a_learners_expensive_experiment_before_it_is_reached():
    # one learner, two experiments a hundred times apart in cost (the paper suite's ppan-linear: 7 s cases
    # in ppan-fig6, 75 s ones in sample complexity); the cheap ones run first, at 1.2x the reference machine
    cheap = [SuiteCase(f"c{i}", "ppan", experiment="cheap", scenario="s") for i in range(10)]
    dear = [SuiteCase(f"d{i}", "ppan", experiment="dear", scenario="s") for i in range(2)]
    table = {("cheap", "ppan", 10_000): (10_000, 1.0), ("dear", "ppan", 10_000): (10_000, 100.0),
             ("s", "ppan"): (10_000, 50.0)}
    truth = 2 * 120.0
    with_table = CostETA(cheap + dear, trains=trains, workers=1, table=table)
    without = CostETA(cheap + dear, trains=trains, workers=1, table={})
    for est in (with_table, without):
        for c in cheap:
            est.finished(c.key, 1.2)
    assert with_table.eta(12.0) == pytest.approx(truth, rel=0.01)  # priced by the cheap cases' machine speed
    assert without.eta(12.0) < truth / 50  # the per-learner rate of the cheap cases: badly low
