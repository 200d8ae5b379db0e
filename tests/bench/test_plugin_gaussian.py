"""The plug-in learner on Gaussian tasks: estimated covariance -> theory's optimal mechanism.

Its gap is scored on the TRUE model by the exact linear-Gaussian evaluator (or
theory's leakage formula directly); references are theory's optimal curve at the
achieved distortion.
"""

from __future__ import annotations

import numpy as np
import pytest

from privbench.bench.evaluators import evaluate, headline
from privbench.datasets.errors import InputError
from privbench.datasets.samples import Samples
from privbench.datasets.scenarios import make_scenario
from privbench.datasets.tasks import task_for
from privbench.learners import make_learner
from privbench.learners.mechanisms import LinearGaussian
from privbench.theory.gaussian import linear_gaussian_leakage
from privbench.theory.optimum import curve, optimum

CASES = [
    ("gaussian-scalar", {"rho": 0.8}, "useful", [0.2, 0.5]),
    ("gaussian-scalar", {"rho": -0.6, "var_s": 2.0, "var_u": 0.5}, "full", [0.05, 0.1, 0.3]),
    ("gaussian-vector", {"rho": [0.47, 0.24, 0.85]}, "useful", [0.5, 1.5]),
    ("gaussian-source", {"variances": [0.47, 0.24, 0.85]}, None, [0.3, 1.0]),
]
IDS = [f"{c[0]}-{c[2]}" for c in CASES]


def _gaps(name, params, obs, budgets, n, reps, learner_params=None):
    """Mean over reps and budgets of leakage - optimum(achieved distortion), on the true model."""
    sc = make_scenario(name, params)
    task = task_for(sc, obs, "mi")
    out = []
    for rep in range(reps):
        smp = sc.sample(n, np.random.default_rng(100 + rep))
        for m in make_learner("plugin", **(learner_params or {})).fit(smp, task, budgets, seed=0):
            assert isinstance(m, LinearGaussian)
            mi, mse = linear_gaussian_leakage(sc.cov(), m.A, m.B, m.noise_cov)
            out.append(mi - float(curve(sc, [mse], "mi", task.observation, None)[0]))
    return np.array(out)


@pytest.mark.parametrize("name,params,obs,budgets", CASES, ids=IDS)
def test_many_samples_reach_the_optimum(name, params, obs, budgets):
    sc = make_scenario(name, params)
    task = task_for(sc, obs, "mi")
    smp = sc.sample(200_000, np.random.default_rng(0))
    for m, b in zip(make_learner("plugin").fit(smp, task, budgets, seed=0), budgets):
        evs = evaluate(m, sc, obs, "mi", n_eval=400, seed=1)
        leak, dist = headline(evs, "mi"), headline(evs, "distortion")
        assert leak.evaluator == "exact-linear-gaussian" and dist.kind == "exact"
        opt_at_d = float(curve(sc, [dist.value], "mi", task.observation, None)[0])
        assert leak.value - opt_at_d >= -1e-9  # never below the optimum
        assert leak.value - opt_at_d < 2e-4
        # spends what the true optimal mechanism spends (the budget, or less where more cannot help)
        spent = optimum(sc, b, "mi", task.observation).mechanism["distortion"]
        assert abs(dist.value - spent) < 0.02 * max(spent, 0.1)
        assert m.info["estimate_value"] == pytest.approx(float(curve(sc, [b], "mi", task.observation, None)[0]),
                                                        abs=0.01)


@pytest.mark.parametrize("name,params,obs,budgets", CASES[1:], ids=IDS[1:])
def test_finite_sample_gap_positive_and_shrinking(name, params, obs, budgets):
    small, mid, big = (_gaps(name, params, obs, budgets, n, reps=8) for n in (60, 600, 6000))
    assert np.all(small >= -1e-9) and np.all(mid >= -1e-9) and np.all(big >= -1e-9)
    assert small.mean() > 0
    assert small.mean() > mid.mean() > big.mean()


def test_scalar_useful_gap_shrinks():
    """Prop 1's family is one-dimensional: a wrong rho costs little, but it still costs and shrinks."""
    small, big = (_gaps("gaussian-scalar", {"rho": 0.8}, "useful", [0.2, 0.5], n, reps=8) for n in (30, 3000))
    assert small.mean() > 0 and small.mean() > big.mean()


def test_diagonal_structure_for_per_component_pairs():
    """PPAN's vector example has independent pairs: estimating only the diagonals is no worse on average."""
    args = ("gaussian-vector", {"rho": [0.47, 0.24, 0.85]}, "useful", [0.5, 1.5], 60)
    full, diag = _gaps(*args, reps=8), _gaps(*args, reps=8, learner_params={"structure": "diagonal"})
    assert np.all(diag >= -1e-9) and diag.mean() < full.mean()


def test_refusals():
    vec = make_scenario("gaussian-vector", {"rho": [0.5, 0.3]})
    smp = vec.sample(500, np.random.default_rng(0))
    with pytest.raises(InputError, match="observation=full"):
        make_learner("plugin").fit(smp, task_for(vec, "full", "mi"), [0.5])
    with pytest.raises(InputError, match="gaussian tasks for privacy mi only .*not chi2"):
        make_learner("plugin").fit(smp, task_for(vec, "useful", "chi2"), [0.5])
    with pytest.raises(InputError, match="structure='bogus'"):
        make_learner("plugin", structure="bogus").fit(smp, task_for(vec, "useful", "mi"), [0.5])
    with pytest.raises(InputError, match="smoothing"):
        make_learner("plugin", smoothing=1.0).fit(smp, task_for(vec, "useful", "mi"), [0.5])
    sca = make_scenario("gaussian-scalar", {"rho": 0.5})
    flat = Samples(np.ones((10, 1)), np.arange(10.0).reshape(-1, 1))
    with pytest.raises(InputError, match="singular"):
        make_learner("plugin").fit(flat, task_for(sca, "useful", "mi"), [0.5])
