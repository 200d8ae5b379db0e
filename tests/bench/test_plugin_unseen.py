"""The plug-in baseline on a small sample: W values the sample never shows must not spend
distortion the estimated program never saw (the paper smoke's plugin overshoots at n = 300)."""

from __future__ import annotations

import numpy as np

from privbench.datasets.scenarios import make_scenario
from privbench.datasets.tasks import task_for
from privbench.learners import make_learner


def test_unseen_w_rows_release_u_and_the_true_distortion_meets_the_budget():
    sc = make_scenario("symmetric-pair", {"m": 4, "p": 0.4})
    task = task_for(sc, "full", "mi", None)
    samples = sc.sample(40, np.random.default_rng(3))  # 40 draws of a 16-value W: some values unseen
    seen = np.bincount(np.asarray(samples.s) * 4 + np.asarray(samples.u), minlength=16) > 0
    assert not seen.all()
    budget = 0.05
    (mech,) = make_learner("plugin").fit(samples, task, [budget], seed=0, device="cpu")
    channel = np.asarray(mech.channel())
    for w in np.flatnonzero(~seen):  # W = (s, u), index s * 4 + u: Z = U costs no Hamming distortion
        np.testing.assert_array_equal(channel[w], np.eye(4)[w % 4])
    assert mech.info["unseen_w"] == int((~seen).sum())
    # the true distortion, from the model (independent of the learner's estimate): at most the budget the
    # estimate was solved for, up to the estimate's error on the seen values (each seen row costs at most 1)
    p_w = np.asarray(sc.joint()).ravel()
    dist = np.asarray(sc.distortion_matrix())
    true = float(sum(p_w[w] * channel[w] @ dist[w % 4] for w in range(16)))
    estimated = float(sum(np.mean((np.asarray(samples.s) * 4 + np.asarray(samples.u)) == w) * channel[w] @ dist[w % 4]
                          for w in range(16)))
    assert estimated <= budget + 1e-6
    assert true <= estimated + float(np.abs(p_w - np.bincount(np.asarray(samples.s) * 4 + np.asarray(samples.u),
                                                               minlength=16) / 40).sum())
