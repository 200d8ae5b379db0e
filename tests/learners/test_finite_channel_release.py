"""FiniteChannel.release draws Z by inverse CDF: the same labels as the plain (n, n_z) comparison, and the claimed law."""

from __future__ import annotations

import numpy as np
import pytest

from privbench.datasets import SymmetricPair, task_for
from privbench.learners.mechanisms.finite_channel import FiniteChannel


def reference(channel: np.ndarray, w: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Inverse-CDF sampling written out: for each row, the number of CDF values <= u (capped at n_z - 1)."""
    cdf = np.cumsum(channel, axis=1)
    u = rng.random(w.size)
    z = np.array([int(np.sum(u[i] >= cdf[w[i]])) for i in range(w.size)])
    return np.minimum(z, channel.shape[1] - 1)


@pytest.mark.parametrize("m", [2, 5, 12])
def test_release_gives_the_labels_of_the_plain_inverse_cdf(m):
    task = task_for(SymmetricPair(m=m, p=0.3), "useful", "mi")
    gen = np.random.default_rng(m)
    channel = gen.dirichlet(np.full(m, 0.4), size=m)
    channel[0] = 0.0
    channel[0, m // 2] = 1.0  # a deterministic row; zeros elsewhere
    mech = FiniteChannel(task, 0.2, channel)
    w = gen.integers(0, m, 3000)
    z = mech.release(w.copy(), np.random.default_rng(7))
    expected = reference(mech.channel(), w, np.random.default_rng(7))
    assert z.dtype == np.int64 and np.array_equal(z, expected)
    assert np.all(z[w == 0] == m // 2)


def test_release_follows_the_channel():
    task = task_for(SymmetricPair(m=3, p=0.3), "useful", "mi")
    channel = np.array([[0.7, 0.2, 0.1], [0.0, 0.5, 0.5], [0.1, 0.1, 0.8]])
    w = np.repeat(np.arange(3), 40_000)
    z = FiniteChannel(task, 0.2, channel).release(w, np.random.default_rng(3))
    freq = np.array([np.bincount(z[w == r], minlength=3) / 40_000 for r in range(3)])
    assert np.abs(freq - channel).max() < 0.01  # 5 standard errors of 0.0025
