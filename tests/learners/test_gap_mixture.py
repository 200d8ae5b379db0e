"""GAP §4.2 mixture privatizer: scored with the exact MAP accuracy of privbench.theory.

The learner sees samples only; the score (theory.mixture.mechanism_accuracy at the
true model) and the family optimum (theory.optimum, family "general" / "additive")
are independent of it.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from privbench.datasets import BinaryGMM, InputError, Samples, task_for
from privbench.learners import TrainingError, load_mechanism, make_learner
from privbench.learners.gap_mixture import classifier_loss
from privbench.theory.mixture import mechanism_accuracy, mechanism_distortion, mixture_optimum

SC = BinaryGMM(0.75, 3.0, 2.0, 1.0)  # GAP Table 5 (dataset 4)
FAST = {"epochs": 40, "batch_size": 100}


def _gaps_pp(mechs, family):
    """MAP accuracy minus the family optimum at the achieved (exact) distortion, in pp."""
    out = []
    for m in mechs:
        p = m.params()
        d = float(mechanism_distortion(SC, **p))
        out.append(100 * (float(mechanism_accuracy(SC, **p)) - mixture_optimum(SC, d, family).value))
    return np.array(out)


@pytest.fixture(scope="module")
def samples():
    return SC.sample(4000, np.random.default_rng(0))


def test_full_observation_within_1pp_of_general_family(samples):
    task = task_for(SC, "full", "map")
    mechs = make_learner("gap-mixture", **FAST).fit(samples, task, [1.0, 3.0], seed=0, device="cpu")
    gaps = _gaps_pp(mechs, "general")
    assert np.all(gaps <= 1.0), gaps
    assert np.all(gaps >= -0.05), gaps  # nothing in the family beats its optimum
    for m in mechs:  # the budget is spent (exact distortion, empirical prior)
        assert abs(float(mechanism_distortion(SC, **m.params())) - m.budget) <= 0.05 * m.budget


def test_useful_observation_ties_parameters_and_matches_additive(samples):
    task = task_for(SC, "useful", "map")
    mechs = make_learner("gap-mixture", **FAST).fit(samples, task, [2.0, 5.0], seed=1, device="cpu")
    for m in mechs:
        p = m.params()
        assert p["beta1"] == -p["beta0"] and p["gamma1"] == p["gamma0"]
    assert np.all(_gaps_pp(mechs, "additive") <= 1.0)


def test_prior_is_estimated_from_the_samples_only(samples):
    task = task_for(SC, "full", "map")
    m = make_learner("gap-mixture", epochs=2, batch_size=200).fit(samples, task, 2.0, seed=0, device="cpu")
    assert m.info["prior_estimate"] == pytest.approx(float(np.mean(samples.s)))
    # a relabelled copy of the data (S flipped, U mirrored) is the same problem mirrored
    flipped = Samples(1 - samples.s, -samples.u)
    m2 = make_learner("gap-mixture", epochs=2, batch_size=200).fit(flipped, task, 2.0, seed=0, device="cpu")
    assert m2.info["prior_estimate"] == pytest.approx(1 - float(np.mean(samples.s)))


@pytest.mark.parametrize("constraint,distortion", [("penalty", "exact"), ("lagrangian", "sampled")])
def test_other_constraint_forms_run_and_respect_the_budget(samples, constraint, distortion):
    task = task_for(SC, "full", "map")
    m = make_learner("gap-mixture", constraint=constraint, distortion=distortion, **FAST).fit(
        samples, task, 3.0, seed=0, device="cpu")
    d = float(mechanism_distortion(SC, **m.params()))
    assert d <= 3.0 * 1.1
    assert _gaps_pp([m], "general")[0] <= 5.0


def test_alpha_loss_limits():
    logit = torch.tensor([[-2.0, 0.3, 1.5]])
    s = torch.tensor([0.0, 1.0, 1.0])
    xent = classifier_loss(logit, s, "xent")
    near_one = classifier_loss(logit, s, "alpha", 1.0 + 1e-4)
    assert torch.allclose(near_one, xent, atol=1e-3)
    p_true = torch.sigmoid(torch.where(s > 0.5, logit, -logit))
    big = classifier_loss(logit, s, "alpha", 1e6)
    assert torch.allclose(big, 1 - p_true, atol=1e-4)


def test_same_seed_same_mechanism_and_save_load(samples, tmp_path):
    task = task_for(SC, "full", "map")
    a = make_learner("gap-mixture", epochs=3).fit(samples, task, [1.0, 4.0], seed=7, device="cpu")
    b = make_learner("gap-mixture", epochs=3).fit(samples, task, [1.0, 4.0], seed=7, device="cpu")
    c = make_learner("gap-mixture", epochs=3).fit(samples, task, [1.0, 4.0], seed=8, device="cpu")
    assert [m.params() for m in a] == [m.params() for m in b]
    assert [m.params() for m in a] != [m.params() for m in c]
    again = load_mechanism(a[1].save(tmp_path / "m.pt"))
    assert again.params() == a[1].params()


def test_overflowing_budget_raises_training_error_naming_the_step(samples):
    task = task_for(SC, "full", "map")
    with pytest.raises(TrainingError, match="not finite at step 0"):
        make_learner("gap-mixture", epochs=1).fit(samples, task, 1e300, seed=0, device="cpu")


@pytest.mark.parametrize("bad", [{"constraint": "nope"}, {"loss": "hinge"}, {"epochs": 0}, {"lr": -1.0},
                                 {"hidden": ()}, {"schedule": "fast"}, {"loss": "alpha", "alpha": 0.5}])
def test_bad_hyper_parameters_are_refused(samples, bad):
    task = task_for(SC, "full", "map")
    with pytest.raises(InputError):
        make_learner("gap-mixture", **bad).fit(samples, task, 1.0, seed=0, device="cpu")
