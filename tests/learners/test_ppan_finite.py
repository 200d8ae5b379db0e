"""PPAN on finite alphabets, and the plug-in baseline it is compared with (PPAN §III-A).

Learned channels are scored with privbench.theory's exact measures against the
*empirical* joint of the training samples (the joint the learner optimises),
never with the learner's adversary.
"""

from __future__ import annotations

import numpy as np
import pytest

from privbench.bench.plug_in import PlugIn, estimate_joint
from privbench.datasets import Finite, InputError, Samples, SymmetricPair, Task, task_for
from privbench.learners import TrainingError, available, make_learner
from privbench.learners.nn.finite_game import empirical_tables, project_simplex
from privbench.theory.finite import solve_finite
from privbench.theory.measures import channel_measures

SC = SymmetricPair(6, 0.4)
BUDGETS = [0.0, 0.1, 0.25, 0.45, 0.7]


@pytest.fixture(scope="module")
def samples():
    return SC.sample(2000, np.random.default_rng(1))


def _emp(samples, n_s, n_u):
    j = np.zeros((n_s, n_u))
    np.add.at(j, (samples.s, samples.u), 1.0)
    return j / j.sum()


def _strict_gaps(mechs, joint, dist, observation, privacy="mi"):
    """leakage - optimum(max(distortion, budget)) on ``joint``, and the overshoots."""
    gaps, over = [], []
    for m in mechs:
        r = channel_measures(joint, m.channel(), observation, dist)
        at = max(r["distortion"], m.budget)
        gaps.append(r[privacy] - solve_finite(joint, dist, at, privacy, observation).value)
        over.append(r["distortion"] - m.budget)
    return np.array(gaps), np.array(over)


@pytest.mark.parametrize("observation", ["useful", "full"])
def test_ppan_reaches_the_optimum_of_its_empirical_joint(samples, observation):
    task = task_for(SC, observation, "mi")
    mechs = make_learner("ppan").fit(samples, task, BUDGETS, seed=3, device="cpu")
    gaps, over = _strict_gaps(mechs, _emp(samples, 6, 6), SC.distortion_matrix(), observation)
    assert gaps.max() <= 0.01, gaps
    assert over.max() <= 2e-3, over  # the augmented Lagrangian meets the budget


def test_ppan_penalty_form_lands_on_the_curve_with_a_small_overshoot(samples):
    task = task_for(SC, "useful", "mi")
    mechs = make_learner("ppan", constraint="penalty", penalty=500.0).fit(samples, task, [0.1, 0.25], seed=0,
                                                                          device="cpu")
    gaps, over = _strict_gaps(mechs, _emp(samples, 6, 6), SC.distortion_matrix(), "useful")
    assert gaps.max() <= 0.01
    assert 0 < over.max() <= 0.01  # lambda max(0, d - b)^2 stops at slope / (2 lambda) beyond b


def test_ppan_non_hamming_distortion_and_larger_release_alphabet():
    sc = Finite(joint_pmf=((0.3, 0.1, 0.05), (0.05, 0.2, 0.3)),
                distortion=((0.0, 1.0, 2.0, 0.5), (1.0, 0.0, 1.0, 0.5), (2.0, 1.0, 0.0, 0.5)))
    smp = sc.sample(3000, np.random.default_rng(0))
    task = task_for(sc, "full", "mi")
    mechs = make_learner("ppan").fit(smp, task, [0.1, 0.3, 0.6], seed=0, device="cpu")
    gaps, over = _strict_gaps(mechs, _emp(smp, 2, 3), sc.distortion_matrix(), "full")
    assert gaps.max() <= 0.01 and over.max() <= 2e-3


def test_same_seed_same_channel_other_seed_other_channel(samples):
    task = task_for(SC, "full", "mi")
    a = make_learner("ppan", steps=200).fit(samples, task, [0.1, 0.3], seed=7, device="cpu")
    b = make_learner("ppan", steps=200).fit(samples, task, [0.1, 0.3], seed=7, device="cpu")
    c = make_learner("ppan", steps=200).fit(samples, task, [0.1, 0.3], seed=8, device="cpu")
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x.channel(), y.channel())
    assert not np.array_equal(a[0].channel(), c[0].channel())


def test_absurd_learning_rate_raises_training_error_naming_the_step(samples):
    task = task_for(SC, "useful", "mi")
    with pytest.raises(TrainingError, match=r"PPAN privatizer loss is not finite at step \d+"):
        make_learner("ppan", lr=1e308, adversary_lr=1e308, steps=50).fit(samples, task, 0.1, seed=0, device="cpu")


@pytest.mark.parametrize("bad", [dict(schedule="fast"), dict(constraint="hard"), dict(steps=0),
                                 dict(lr=-1.0), dict(init="zeros"), dict(dtype="float16")])
def test_bad_hyper_parameters_are_refused(samples, bad):
    with pytest.raises(InputError):
        make_learner("ppan", **bad).fit(samples, task_for(SC, "useful", "mi"), 0.1, seed=0, device="cpu")


def test_paper_schedule_is_the_papers_hyper_parameters():
    learner = make_learner("ppan", schedule="paper")
    full = learner.resolved(task_for(SC, "full", "mi"), 1000)
    useful = learner.resolved(task_for(SC, "useful", "mi"), 1000)
    assert (full["steps"], useful["steps"]) == (25_000, 20_000)
    assert full["lr"] == full["adversary_lr"] == 1e-3 and full["betas"] == (0.9, 0.999)
    assert full["constraint"] == "penalty" and full["penalty"] == 500.0 and full["adversary_steps"] == 1


def test_empirical_tables_match_the_sample_counts(samples):
    task = task_for(SC, "full", "mi")
    g_sw, d_wz, unseen = empirical_tables(samples, task)
    joint = _emp(samples, 6, 6)
    assert g_sw.shape == (6, 36) and d_wz.shape == (36, 6)
    np.testing.assert_allclose(g_sw.reshape(6, 6, 6)[np.arange(6), np.arange(6)], joint)  # w = s*6+u
    # E d(U, Z) of the identity channel is 0 and of "always z=0" is P(U != 0)
    assert np.isclose((d_wz * np.eye(6)[np.arange(36) % 6]).sum(), 0.0)
    assert np.isclose(d_wz[:, 0].sum(), 1 - joint[:, 0].sum())
    assert unseen == int((joint.ravel() == 0).sum())


def test_project_simplex_projects():
    import torch

    x = torch.tensor([[0.2, 0.9, -0.4], [1.0, 1.0, 1.0], [5.0, 0.0, 0.0]], dtype=torch.float64)
    p = project_simplex(x)
    assert torch.allclose(p.sum(-1), torch.ones(3, dtype=torch.float64)) and (p >= 0).all()
    assert torch.allclose(p[1], torch.full((3,), 1 / 3, dtype=torch.float64))
    assert torch.allclose(p[2], torch.tensor([1.0, 0.0, 0.0], dtype=torch.float64))


# --------------------------------------------------------------------------
# the plug-in baseline (bench/plug_in.py)
# --------------------------------------------------------------------------


def test_plugin_is_registered_through_the_entry_point():
    assert available()["plugin"] is PlugIn


@pytest.mark.parametrize("privacy", ["mi", "map", "chi2"])
@pytest.mark.parametrize("observation", ["useful", "full"])
def test_plugin_equals_the_optimum_of_the_estimate(privacy, observation):
    sc = SymmetricPair(3, 0.3)
    smp = sc.sample(500, np.random.default_rng(4))
    task = task_for(sc, observation, privacy)
    for smoothing in (0.0, 1.0):
        est = estimate_joint(smp, 3, 3, smoothing)
        mechs = PlugIn(smoothing=smoothing).fit(smp, task, [0.05, 0.3], seed=0, device="cpu")
        for m in mechs:
            r = channel_measures(est, m.channel(), observation, sc.distortion_matrix())
            opt = solve_finite(est, sc.distortion_matrix(), m.budget, privacy, observation).value
            assert r[privacy] == pytest.approx(opt, abs=1e-6)
            assert r["distortion"] <= m.budget + 1e-6 and not m.info["budget_infeasible"]
    assert not np.allclose(estimate_joint(smp, 3, 3, 1.0), estimate_joint(smp, 3, 3, 0.0))


def test_plugin_budget_below_the_least_distortion_returns_the_least_distortion_solution():
    dist = ((0.2, 1.0), (1.0, 0.3))  # no zero distortion: E d >= 0.2 P(U=0) + 0.3 P(U=1)
    task = Task("finite", "useful", "mi", "matrix", n_s=2, n_u=2, n_z=2, distortion_matrix=dist)
    smp = Samples(np.array([0, 0, 1, 1, 0, 1]), np.array([0, 0, 1, 1, 1, 0]))
    m = PlugIn().fit(smp, task, 0.0, seed=0, device="cpu")
    assert m.info["budget_infeasible"] and m.info["budget_used"] == pytest.approx(0.25)
    r = channel_measures(estimate_joint(smp, 2, 2), m.channel(), "useful", np.array(dist))
    assert r["distortion"] == pytest.approx(0.25, abs=1e-6)


def test_plugin_refuses_bad_smoothing(samples):
    with pytest.raises(InputError, match="smoothing"):
        PlugIn(smoothing=-1.0).fit(samples, task_for(SC, "useful", "mi"), 0.1, seed=0, device="cpu")
