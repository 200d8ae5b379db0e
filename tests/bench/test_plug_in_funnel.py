"""The plug-in on log-loss tasks: theory's achievable funnel mechanism of the estimated joint."""

from __future__ import annotations

import numpy as np
import pytest

from privbench.bench.plug_in import PlugIn
from privbench.datasets import Samples, SymmetricPair, Task
from privbench.theory.funnel import funnel_optimum, release_measures

COUNTS = np.array([[40, 8, 2], [6, 30, 14], [4, 12, 34]])
JOINT = COUNTS / COUNTS.sum()


def _exact_samples(counts):
    s, u = np.divmod(np.repeat(np.arange(counts.size), counts.ravel()), counts.shape[1])
    return Samples(s.astype(np.int64), u.astype(np.int64))


@pytest.mark.parametrize("observation", ["useful", "full"])
def test_plug_in_of_an_exact_estimate_is_within_the_certified_band(observation):
    n_w = 3 if observation == "useful" else 9
    task = Task("finite", observation, "mi", "logloss", n_s=3, n_u=3, n_z=n_w + 1)
    for budget in (0.2, 0.6):
        mech = PlugIn(funnel_seconds=1.0).fit(_exact_samples(COUNTS), task, budget)
        leak, dist = release_measures(JOINT, mech.channel(), observation, "mi")
        assert dist <= budget + 1e-9  # the estimate is the model here
        opt = funnel_optimum(JOINT, budget, "mi", observation, time_limit=1.0)
        assert opt.lower - 1e-12 <= leak
        assert mech.channel().shape == (n_w, n_w + 1)


def test_logloss_task_of_a_scenario():
    task = SymmetricPair(3, 0.2).task("full", "mi", "logloss")
    assert task.distortion == "logloss" and task.n_z == 10 and task.distortion_matrix is None
