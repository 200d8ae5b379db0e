"""greedy-merge: the privacy funnel's agglomerative heuristic, checked on exact samples against theory."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import entr

from privbench.datasets import InputError, Samples, SymmetricPair, Task
from privbench.learners.baselines import GreedyMerge
from privbench.theory.funnel import funnel_optimum, release_measures


def _exact_samples(counts: np.ndarray) -> Samples:
    """Samples whose empirical joint is exactly counts / counts.sum()."""
    s, u = np.divmod(np.repeat(np.arange(counts.size), counts.ravel()), counts.shape[1])
    return Samples(s.astype(np.int64), u.astype(np.int64))


COUNTS = np.array([[30, 10, 5, 5], [5, 20, 5, 10], [2, 3, 25, 5]])
JOINT = COUNTS / COUNTS.sum()
H_U = float(entr(JOINT.sum(axis=0)).sum())
SC = SymmetricPair(4, 0.2)


@pytest.mark.parametrize("observation", ["useful", "full"])
def test_release_meets_the_budget_and_never_beats_the_certified_optimum(observation):
    task = Task("finite", observation, "mi", "logloss", n_s=3, n_u=4, n_z=(4 if observation == "useful" else 12) + 1)
    for budget in (0.0, 0.3, 0.7, H_U + 0.1):
        mech = GreedyMerge().fit(_exact_samples(COUNTS), task, budget)
        leak, dist = release_measures(JOINT, mech.channel(), observation, "mi")
        assert dist <= budget + 1e-12
        assert leak >= funnel_optimum(JOINT, budget, "mi", observation, time_limit=1.0).lower - 1e-12
        assert set(mech.channel().ravel()) <= {0.0, 1.0}  # deterministic


def test_ends_of_the_budget():
    task = Task("finite", "useful", "mi", "logloss", n_s=3, n_u=4, n_z=5)
    none = GreedyMerge().fit(_exact_samples(COUNTS), task, 0.0)
    assert none.info["groups"] == [[0], [1], [2], [3]]  # D = 0: Z = U
    leak, _ = release_measures(JOINT, none.channel(), "useful", "mi")
    mi = float(entr(JOINT.sum(0)).sum() + entr(JOINT.sum(1)).sum() - entr(JOINT).sum())
    assert leak == pytest.approx(mi, abs=1e-12)
    everything = GreedyMerge().fit(_exact_samples(COUNTS), task, H_U)
    assert len(everything.info["groups"]) == 1 and sorted(everything.info["groups"][0]) == [0, 1, 2, 3]
    assert release_measures(JOINT, everything.channel(), "useful", "mi")[0] == pytest.approx(0.0, abs=1e-12)


def test_first_merge_is_the_cheapest_utility_per_leakage():
    """With budget for exactly one merge of the four singletons, the pair chosen minimises the ratio,
    computed here by enumeration."""
    p_u = JOINT.sum(axis=0)
    base_leak = float(entr(JOINT.sum(0)).sum() + entr(JOINT.sum(1)).sum() - entr(JOINT).sum())
    ratios = {}
    for a in range(4):
        for b in range(a + 1, 4):
            cols = [JOINT[:, [a, b]].sum(axis=1)] + [JOINT[:, c] for c in range(4) if c not in (a, b)]
            p_sz = np.stack(cols, axis=1)
            leak = float(entr(p_sz.sum(1)).sum() + entr(p_sz.sum(0)).sum() - entr(p_sz).sum())
            dist = float(entr(p_u[[a, b]] / p_u[[a, b]].sum()).sum() * p_u[[a, b]].sum())
            ratios[(a, b)] = (dist / (base_leak - leak), dist)
    pair = min(ratios, key=lambda k: ratios[k][0])
    budget = ratios[pair][1] + 1e-9  # room for this merge only if no cheaper second merge fits
    task = Task("finite", "useful", "mi", "logloss", n_s=3, n_u=4, n_z=5)
    groups = GreedyMerge().fit(_exact_samples(COUNTS), task, budget).info["groups"]
    assert sorted(pair) in [sorted(g) for g in groups]


def test_refuses_tasks_other_than_logloss():
    with pytest.raises(InputError, match="trains for distortions logloss, not hamming"):
        GreedyMerge().fit(SC.sample(100, np.random.default_rng(0)), SC.task("useful", "mi"), 0.1)
