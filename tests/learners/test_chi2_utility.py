"""chi2-sanitizer, formulation="utility" (the paper's objective (25) with a utility classifier,
eta as the budget), judged by classifiers the learner never saw."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.neural_network import MLPClassifier

from privbench.datasets import BinaryGMM, InputError, task_for
from privbench.datasets.labelled import HypothesisTesting
from privbench.learners import make_learner

SMALL = {"steps": 300, "hidden": 16, "layers": 3, "batch_size": 250}


def _accuracy(z: np.ndarray, y: np.ndarray) -> float:
    zs = (z - z.mean(0)) / z.std(0)
    half = len(y) // 2
    clf = MLPClassifier((32,), max_iter=300, random_state=0).fit(zs[:half], y[:half])
    return float(clf.score(zs[half:], y[half:]))


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_independent_hypotheses_lose_s_and_keep_u():
    # Fig. 4a: S and U independent; a tiny eta must cost S accuracy but not U accuracy, against
    # a generous eta (10, far above the data's chi-square information) that leaves Y near X.
    sc = HypothesisTesting(correlation="independent")
    samples = sc.sample(2000, np.random.default_rng(1))
    mechs = make_learner("chi2-sanitizer", formulation="utility", **SMALL).fit(
        samples, sc.task("useful", "chi2"), [1e-3, 10.0], seed=0, device="cpu")
    test = sc.draw("held-out", 4000, np.random.default_rng(5))
    acc = {m.budget: {k: _accuracy(m.release(test.samples.u, np.random.default_rng(0)), test.labels[k])
                      for k in "su"} for m in mechs}
    assert acc[1e-3]["s"] < acc[10.0]["s"] - 0.08
    assert acc[1e-3]["u"] > acc[10.0]["u"] - 0.03
    for m in mechs:
        assert m.info["budget_kind"] == "chi2-level" and m.info["eta"] == m.budget
    assert mechs[0].info["train_distortion"] > mechs[1].info["train_distortion"]


def test_utility_formulation_needs_utility_labels_and_refuses_a_utility_network():
    gmm_task = task_for(BinaryGMM(0.5, 1.0, 1.0, 1.0), "useful", "chi2")
    learner = make_learner("chi2-sanitizer", formulation="utility", **SMALL)
    assert not learner.supports(gmm_task) and "utility labels" in learner.refusal(gmm_task)
    assert make_learner("chi2-sanitizer").supports(gmm_task)  # the default formulation still serves it
    sc = HypothesisTesting()
    with pytest.raises(InputError, match="formulation"):
        make_learner("chi2-sanitizer", formulation="paper").fit(sc.sample(50, np.random.default_rng(0)),
                                                                sc.task("useful", "chi2"), 1.0)
    with pytest.raises(InputError, match="utility='mlp'"):
        make_learner("chi2-sanitizer", formulation="utility", utility="mlp").fit(
            sc.sample(50, np.random.default_rng(0)), sc.task("useful", "chi2"), 1.0)


def test_the_budget_kind_is_declared_by_the_learner_for_its_parameters():
    # the bench reads what a budget means from the learner (Learner.budget_kind), never from a mechanism
    from privbench.learners import make_learner
    from privbench.learners.chi2_utility import BUDGET_KIND

    assert make_learner("chi2-sanitizer", formulation="utility").budget_kind() == BUDGET_KIND
    assert make_learner("chi2-sanitizer").budget_kind() == "distortion"
    assert make_learner("latent-filter").budget_kind().startswith("latent-")
    assert make_learner("vfae").budget_kind() == "mmd-weight"
    assert make_learner("ppan").budget_kind() == "distortion"
