"""GAP on the binary data model (GAP §3): learned mechanisms against the LP optimum.

MAP accuracy of a learned channel is computed exactly (privbench.theory.measures)
on the empirical joint of the training samples, and compared with the MAP
linear program (GAP eq (21) for PDD, the same LP over P(Z|U) for PDI) solved on
that joint: the learner's own adversary is never used to score it.
"""

from __future__ import annotations

import numpy as np
import pytest

from privbench.datasets import Binary, InputError, SymmetricPair, task_for
from privbench.learners import TrainingError, make_learner
from privbench.theory.finite import solve_finite
from privbench.theory.measures import channel_measures

BUDGETS = [0.0, 0.05, 0.15, 0.25, 0.4]


def _emp(samples, n):
    j = np.zeros((n, n))
    np.add.at(j, (samples.s, samples.u), 1.0)
    return j / j.sum()


def _gaps(mechs, joint, dist, observation, privacy):
    gaps, over = [], []
    for m in mechs:
        r = channel_measures(joint, m.channel(), observation, dist)
        at = max(r["distortion"], m.budget)
        gaps.append(r[privacy] - solve_finite(joint, dist, at, privacy, observation).value)
        over.append(r["distortion"] - m.budget)
    return np.array(gaps), np.array(over)


@pytest.mark.parametrize("p", [0.5, 0.75])
@pytest.mark.parametrize("observation", ["full", "useful"])
def test_gap_map_accuracy_within_1pp_of_the_lp_optimum(p, observation):
    sc = Binary(p, 0.25)
    smp = sc.sample(5000, np.random.default_rng(2))
    mechs = make_learner("gap").fit(smp, task_for(sc, observation, "map"), BUDGETS, seed=1, device="cpu")
    gaps, over = _gaps(mechs, _emp(smp, 2), sc.distortion_matrix(), observation, "map")
    assert gaps.max() <= 0.01, gaps
    assert over.max() <= 2e-3, over


def test_gap_serves_mi_with_its_cross_entropy_adversary():
    sc = SymmetricPair(4, 0.3)
    smp = sc.sample(3000, np.random.default_rng(0))
    learner = make_learner("gap")
    task = task_for(sc, "full", "mi")
    assert learner.resolved(task, len(smp))["adversary_loss"] == "log"
    mechs = learner.fit(smp, task, [0.05, 0.2, 0.5], seed=0, device="cpu")
    gaps, over = _gaps(mechs, _emp(smp, 4), sc.distortion_matrix(), "full", "mi")
    assert gaps.max() <= 0.01 and over.max() <= 2e-3


def test_paper_schedule_runs_its_own_parametrisation_and_penalty():
    sc = Binary(0.75, 0.25)
    smp = sc.sample(2000, np.random.default_rng(0))
    task = task_for(sc, "full", "map")
    learner = make_learner("gap", schedule="paper", steps=400)
    cfg = learner.resolved(task, len(smp))
    assert (cfg["parametrization"], cfg["constraint"], cfg["belief"], cfg["adversary_loss"], cfg["lr"]) == \
        ("direct", "linear-penalty", "mixture", "log", 0.01)
    mechs = learner.fit(smp, task, [0.1, 0.3], seed=0, device="cpu")
    for m in mechs:
        ch = m.channel()
        assert ch.shape == (4, 2) and np.allclose(ch.sum(1), 1) and ch.min() >= 0
        r = channel_measures(_emp(smp, 2), ch, "full", sc.distortion_matrix())
        assert r["distortion"] <= m.budget + 0.02  # the growing linear penalty holds the budget


def test_alpha_loss_adversary_variant_trains():
    sc = Binary(0.75, 0.25)
    smp = sc.sample(2000, np.random.default_rng(0))
    task = task_for(sc, "useful", "map")
    learner = make_learner("gap", adversary="alpha", alpha=3.0)
    assert learner.resolved(task, len(smp))["adversary_loss"] == "alpha"
    mechs = learner.fit(smp, task, [0.1, 0.3], seed=0, device="cpu")
    gaps, _ = _gaps(mechs, _emp(smp, 2), sc.distortion_matrix(), "useful", "map")
    assert gaps.max() <= 0.01


def test_same_seed_same_channel():
    sc = Binary(0.5, 0.25)
    smp = sc.sample(1000, np.random.default_rng(0))
    task = task_for(sc, "full", "map")
    a = make_learner("gap", steps=200).fit(smp, task, [0.1, 0.2], seed=3, device="cpu")
    b = make_learner("gap", steps=200).fit(smp, task, [0.1, 0.2], seed=3, device="cpu")
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x.channel(), y.channel())


def test_absurd_learning_rate_raises_training_error_naming_the_step():
    sc = Binary(0.5, 0.25)
    smp = sc.sample(1000, np.random.default_rng(0))
    with pytest.raises(TrainingError, match=r"GAP privatizer loss is not finite at step \d+"):
        make_learner("gap", lr=1e308, adversary_lr=1e308, adversary="xent", steps=50).fit(
            smp, task_for(sc, "full", "map"), 0.1, seed=0, device="cpu")


@pytest.mark.parametrize("bad", [dict(adversary="mse"), dict(belief="soft"), dict(alpha=0.5),
                                 dict(adversary="alpha", belief="mixture"), dict(parametrization="sigmoid")])
def test_bad_hyper_parameters_are_refused(bad):
    sc = Binary(0.5, 0.25)
    smp = sc.sample(200, np.random.default_rng(0))
    with pytest.raises(InputError):
        make_learner("gap", **bad).fit(smp, task_for(sc, "full", "map"), 0.1, seed=0, device="cpu")
