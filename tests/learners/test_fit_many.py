"""Learner.fit_many: a case's repetitions trained as one batched network give each repetition the
mechanisms of its own fit (same member seeds, minibatches and noise; float32 rounding aside).

The reference is the learner's plain ``fit`` of each training set alone (another code path: one
set, one generator); the comparison is of the fitted mechanisms' parameters and diagnostics.
"""

from __future__ import annotations

import numpy as np
import pytest

from privbench.datasets import InputError, task_for
from privbench.datasets.scenarios import make_scenario
from privbench.learners import make_learner

CASES = [("ppan-seed", "gaussian-vector", {"rho": [0.47, 0.85]}, "useful"),
         ("ppan-linear", "gaussian-scalar", {"rho": 0.85}, "full"),
         ("ppan-gmm", "binary-gmm", {"prior": 0.75, "mu": 3, "sigma0": 2, "sigma1": 1}, "full")]
PARAMS = {"steps": 40, "batch_size": 64, "hidden": (8,), "adversary_hidden": (8,)}


def close(a: dict, b: dict) -> None:
    """Same parameter names and values up to float32 rounding (batched kernels may round differently)."""
    assert sorted(a) == sorted(b)
    for name in a:
        np.testing.assert_allclose(np.asarray(a[name], float), np.asarray(b[name], float), rtol=1e-4, atol=1e-5,
                                   err_msg=name)


def beside_fits_alone(learner, task, sets, budgets, first_seed, many):
    """(r, got, want) for every set r and budget: ``fit_many``'s member beside a fit of set r alone (seed
    ``first_seed + r``), once the budgets and the trained weights are checked to be the same."""
    assert len(many) == len(sets)
    for r, mechs in enumerate(many):
        alone = learner.fit(sets[r], task, budgets, seed=first_seed + r, device="cpu")
        assert len(mechs) == len(alone)
        for got, want in zip(mechs, alone):
            assert got.budget == want.budget
            close(got._state()[1], want._state()[1])
            yield r, got, want


@pytest.mark.parametrize("name,scenario,params,observation", CASES)
def test_fit_many_gives_each_set_its_own_fit(name, scenario, params, observation):
    sc = make_scenario(scenario, params)
    task = task_for(sc, observation, "mi", None)
    sets = [sc.sample(500, np.random.default_rng(r)) for r in range(3)]
    learner = make_learner(name, max_restarts=1, collapse_tol=0.0, **PARAMS)  # collapse_tol 0: restarts happen
    many = learner.fit_many(sets, task, [0.1, 0.4], [11, 12, 13], device="cpu")
    for r, got, want in beside_fits_alone(learner, task, sets, [0.1, 0.4], 11, many):
        for key in ("train_distortion", "excess", "multiplier", "restarts", "member_seed"):
            np.testing.assert_allclose(got.info[key], want.info[key], rtol=1e-4, atol=1e-6, err_msg=key)
    a, b = many[0][0]._state()[1], many[1][0]._state()[1]  # the sets differ: a mix-up of sets or seeds shows
    assert any(not np.allclose(np.asarray(a[n], float), np.asarray(b[n], float)) for n in a)


def test_fit_many_checks_its_inputs():
    sc = make_scenario("gaussian-scalar", {"rho": 0.5})
    task = task_for(sc, "full", "mi", None)
    sets = [sc.sample(100, np.random.default_rng(r)) for r in range(2)]
    learner = make_learner("ppan-linear", steps=5, batch_size=32)
    with pytest.raises(InputError, match="2 training sets and 1 seeds"):
        learner.fit_many(sets, task, [0.1], [1])
    with pytest.raises(InputError, match="seed=-1"):
        learner.fit_many(sets, task, [0.1], [1, -1])


def test_a_learner_without_batching_fits_one_set_after_the_other():
    sc = make_scenario("symmetric-pair", {"m": 3, "p": 0.3})
    task = task_for(sc, "full", "mi", None)
    sets = [sc.sample(300, np.random.default_rng(r)) for r in range(2)]
    learner = make_learner("plugin")
    many = learner.fit_many(sets, task, [0.2], [1, 2])
    for r in range(2):
        alone = learner.fit(sets[r], task, [0.2], seed=1 + r)
        close(many[r][0]._state()[1], alone[0]._state()[1])


@pytest.mark.parametrize("name,scenario,params,observation", CASES)
def test_sets_of_different_sizes_share_a_network_and_each_gets_its_own_fit(name, scenario, params, observation):
    sc = make_scenario(scenario, params)
    task = task_for(sc, observation, "mi", None)
    sizes = [130, 500, 500, 70]  # epochs of 2, 7, 7 and 1 minibatches of 64; diagnosed on 130, 500, 500, 70 rows
    sets = [sc.sample(n, np.random.default_rng(r)) for r, n in enumerate(sizes)]
    learner = make_learner(name, max_restarts=1, collapse_tol=0.0, **PARAMS)
    many = learner.fit_many(sets, task, [0.1, 0.4], [21, 22, 23, 24], device="cpu")
    for r, got, want in beside_fits_alone(learner, task, sets, [0.1, 0.4], 21, many):
        for key in ("train_distortion", "excess", "noise_variance", "multiplier", "restarts", "member_seed"):
            np.testing.assert_allclose(got.info[key], want.info[key], rtol=1e-4, atol=1e-6, err_msg=key)
        assert got.info["training_adversary"]["n"] == want.info["training_adversary"]["n"] == sizes[r]
        np.testing.assert_allclose(got.info["training_adversary"]["mi"], want.info["training_adversary"]["mi"],
                                   rtol=1e-4, atol=1e-5)


def test_a_batching_learner_groups_sets_by_their_hyper_parameters():
    sc = make_scenario("gaussian-scalar", {"rho": 0.5})
    task = task_for(sc, "full", "mi", None)
    learner = make_learner("ppan-linear", steps=5, batch_size=64)
    assert learner.batch_group(task, 100) == learner.batch_group(task, 5000)  # batch 64 either way
    assert learner.batch_group(task, 40) != learner.batch_group(task, 100)  # batch 40: a network of its own
    by_epochs = make_learner("ppan-linear", epochs=2, batch_size=64)
    assert by_epochs.batch_group(task, 100) != by_epochs.batch_group(task, 5000)  # steps follow the size


FILTER_CASES = [("mnist-subset", {"labeling": "ge5-parity"}, "utility"),   # image: sigmoid decoder, label S
                ("mnist-subset", {"labeling": "ge5-parity"}, "distortion"),
                ("gaussian-vector", {"rho": [0.47, 0.85]}, "distortion")]  # linear decoder, continuous S


@pytest.mark.parametrize("scenario,params,formulation", FILTER_CASES)
def test_latent_filter_fit_many_gives_each_set_its_own_fit(scenario, params, formulation):
    sc = make_scenario(scenario, params)
    task = task_for(sc, "full", "map" if sc.kind == "image" else "mi", None)
    sets = [sc.sample(120, np.random.default_rng(r)) for r in range(3)]
    learner = make_learner("latent-filter", latent_dim=2, hidden=8, vae_steps=5, filter_steps=12, batch_size=32,
                           adv_hidden=6, adv_steps=2, formulation=formulation)
    many = learner.fit_many(sets, task, [1.0, 4.0], [21, 22, 23], device="cpu")
    for r, got, want in beside_fits_alone(learner, task, sets, [1.0, 4.0], 21, many):
        for key in ("train_divergence", "projection"):
            np.testing.assert_allclose(got.info[key], want.info[key], rtol=1e-4, atol=1e-6, err_msg=key)
        for key in ("mi", "accuracy"):
            if want.info["training_adversary"][key] is not None:
                np.testing.assert_allclose(got.info["training_adversary"][key], want.info["training_adversary"][key],
                                           rtol=1e-4, atol=1e-5, err_msg=key)
    a, b = many[0][0]._state()[1]["gamma"], many[1][0]._state()[1]["gamma"]
    assert not np.allclose(np.asarray(a, float), np.asarray(b, float))


@pytest.mark.parametrize("observation,schedule", [("full", "default"), ("useful", "paper")])
def test_gap_mixture_fit_many_gives_each_set_its_own_fit(observation, schedule):
    # default: exact distortion, alpha-loss, cosine rate; paper: sampled distortion, cross-entropy
    sc = make_scenario("binary-gmm", {"prior": 0.75, "mu": 3, "sigma0": 2, "sigma1": 1})
    task = task_for(sc, observation, "map", None)
    sets = [sc.sample(400, np.random.default_rng(r)) for r in range(3)]
    learner = make_learner("gap-mixture", schedule=schedule, epochs=3, batch_size=64, hidden=(8,))
    many = learner.fit_many(sets, task, [1.0, 3.0], [31, 32, 33], device="cpu")
    for r, got, want in beside_fits_alone(learner, task, sets, [1.0, 3.0], 31, many):
        assert got.info["prior_estimate"] == want.info["prior_estimate"] == float(np.mean(sets[r].s))
        for key in ("multiplier", "final_adversary_loss"):
            np.testing.assert_allclose(got.info[key], want.info[key], rtol=1e-4, atol=1e-6, err_msg=key)
        for key in ("mi", "accuracy", "h_s"):
            np.testing.assert_allclose(got.info["training_adversary"][key], want.info["training_adversary"][key],
                                       rtol=1e-4, atol=1e-5, err_msg=key)
    a, b = many[0][0]._state()[1]["params"], many[1][0]._state()[1]["params"]
    assert not np.allclose(np.asarray(a, float), np.asarray(b, float))


CHI2_CASES = [("hypothesis-testing", {"correlation": "correlated"}, "useful", {}),                 # label S
              ("binary-gmm", {"prior": 0.75, "mu": 3, "sigma0": 2, "sigma1": 1}, "full", {"utility": "mlp"}),
              ("gaussian-scalar", {"rho": 0.85}, "full", {"condition": "w", "fill_budget": False}),  # S continuous
              ("hypothesis-testing", {"correlation": "independent"}, "full", {"formulation": "utility"})]  # eta


@pytest.mark.parametrize("scenario,params,observation,extra", CHI2_CASES)
def test_chi2_sanitizer_fit_many_gives_each_set_its_own_fit(scenario, params, observation, extra):
    sc = make_scenario(scenario, params)
    task = task_for(sc, observation, "chi2", None)
    sets = [sc.sample(300, np.random.default_rng(r)) for r in range(3)]
    budgets = [0.0, 0.3, 1.0] if sc.kind == "gaussian" else [0.0, 1.0, 3.0]  # budget 0: Z = U, not trained
    learner = make_learner("chi2-sanitizer", steps=30, batch_size=64, hidden=8, **extra)
    many = learner.fit_many(sets, task, budgets, [41, 42, 43], device="cpu")
    for r, got, want in beside_fits_alone(learner, task, sets, budgets, 41, many):
        assert got._state()[0]["u_mean"] == want._state()[0]["u_mean"]
        for key in ("amplitude",):
            np.testing.assert_allclose(got._state()[0][key], want._state()[0][key], rtol=1e-4, err_msg=key)
        if got.budget > 0 or "formulation" in extra:  # budget 0 of the distortion formulation: Z = U
            for key in ("train_distortion", "last_batch_chi2_estimate"):
                np.testing.assert_allclose(got.info[key], want.info[key], rtol=1e-4, atol=1e-6, err_msg=key)
            np.testing.assert_allclose(got.info["training_adversary"]["chi2"],
                                       want.info["training_adversary"]["chi2"], rtol=1e-4, atol=1e-6)
    a, b = many[0][1]._state()[1], many[1][1]._state()[1]
    assert any(not np.allclose(np.asarray(a[n], float), np.asarray(b[n], float)) for n in a)
