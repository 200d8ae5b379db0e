"""ppan-logloss-image: PPAN appendix D on images (the utility label's log-loss as distortion)."""

from __future__ import annotations

import numpy as np
import pytest

from privbench.bench.evaluators import evaluate
from privbench.datasets import InputError, Samples, make_scenario
from privbench.learners import make_learner

SMOKE = dict(hidden=(32,), adv_hidden=(32,), post_hidden=(32,), epochs=20, lr=3e-3)


def test_serves_image_logloss_only() -> None:
    sc = make_scenario("digits", {"labeling": "digit"})
    learner = make_learner("ppan-logloss-image")
    assert learner.supports(sc.task("useful", "mi", "logloss"))
    assert learner.supports(sc.task("full", "mi", "logloss"))
    assert "logloss" in learner.refusal(sc.task("useful", "mi"))  # the per-pixel xent task
    finite = make_scenario("symmetric-pair", {"m": 3, "p": 0.3}).task("useful", "mi", "logloss")
    assert "image" in learner.refusal(finite)


def test_needs_the_utility_label() -> None:
    sc = make_scenario("digits", {"labeling": "digit"})
    task = sc.task("useful", "mi", "logloss")
    smp = sc.sample(100, np.random.default_rng(0))
    with pytest.raises(InputError, match="utility"):
        make_learner("ppan-logloss-image", **SMOKE).fit(Samples(smp.s, smp.u), task, 0.3)
    with pytest.raises(InputError, match="adv_steps"):
        make_learner("ppan-logloss-image", adv_steps=0).fit(smp, task, 0.3)


def test_loose_budget_hides_more_of_s_at_smoke_size() -> None:
    """Digits, S = digit, U = circle (H(U) = 0.673 nats): at a budget near H(U) the released images
    tell a fresh classifier less about the digit than at a budget that asks to keep U (0.02), and
    the fresh classifier's log-loss of U (an upper bound on H(U | Z)) is smaller at the tight budget."""
    sc = make_scenario("digits", {"labeling": "digit"})
    task = sc.task("useful", "mi", "logloss")
    smp = sc.sample(sc.max_n, np.random.default_rng(0))
    tight, loose = make_learner("ppan-logloss-image", **SMOKE).fit(smp, task, [0.02, 0.67], seed=0, device="cpu")
    got = []
    for mech in (tight, loose):
        evs = evaluate(mech, sc, "useful", "map", n_eval=359, seed=1, distortion="logloss")
        by = {e.metric: e for e in evs}
        assert by["distortion"].evaluator == "fresh-logloss" and by["distortion"].kind == "upper-bound"
        got.append((by["map"].value, by["distortion"].value))
    (acc_t, d_t), (acc_l, d_l) = got
    assert acc_l < acc_t - 0.05
    assert d_t < d_l
