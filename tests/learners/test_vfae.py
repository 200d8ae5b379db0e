"""The VFAE learner: its MMD against an independent computation, its release, and that the MMD weight
buys privacy against a classifier trained afterwards."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from privbench.datasets import InputError, Samples, Task
from privbench.learners import resolve_learner
from privbench.learners.nn.vfae import BANDWIDTHS, mmd_groups


def _mmd_numpy(z: np.ndarray, s: np.ndarray) -> float:
    """Biased MMD^2 summed over pairs of groups, codes standardised per dimension (written out with loops)."""
    z = (z - z.mean(0)) / z.std(0, ddof=1)
    d = z.shape[1]

    def k(a, b):
        return sum(np.exp(-np.sum((a - b) ** 2) / (2.0 * d * h * h)) for h in BANDWIDTHS)

    groups = [z[s == g] for g in np.unique(s)]
    total = 0.0
    for i in range(len(groups)):
        for j in range(i + 1, len(groups)):
            a, b = groups[i], groups[j]
            kaa = np.mean([k(x, y) for x in a for y in a])
            kbb = np.mean([k(x, y) for x in b for y in b])
            kab = np.mean([k(x, y) for x in a for y in b])
            total += kaa + kbb - 2.0 * kab
    return total


def test_mmd_matches_an_independent_computation():
    rng = np.random.default_rng(0)
    z = rng.normal(size=(2, 30, 3))
    z[1, :10] += 2.0
    s = rng.integers(0, 3, 30)
    onehot = torch.as_tensor(np.eye(3)[s])
    got = mmd_groups(torch.as_tensor(z), onehot).numpy()
    for m in range(2):
        assert got[m] == pytest.approx(_mmd_numpy(z[m], s), rel=1e-9)
    # the same points in both groups: no discrepancy; an absent group adds nothing
    twice = torch.as_tensor(np.concatenate([z[0, :12], z[0, :12]])[None])
    both = torch.as_tensor(np.eye(3)[np.repeat([0, 2], 12)])
    assert float(mmd_groups(twice, both)[0]) == pytest.approx(0.0, abs=1e-12)


def _problem(n: int, seed: int):
    """S scales U's first column (sd 1 or 4): a decoder told S cannot explain that away, a code must carry it."""
    rng = np.random.default_rng(seed)
    s = rng.integers(0, 2, n)
    u = rng.normal(size=(n, 3))
    u[:, 0] *= 1.0 + 3.0 * s
    return Samples(s, u), Task("mixture", "full", "map", "mse", n_s=2, d_u=3)


def _accuracy(z_tr, s_tr, z_te, s_te) -> float:
    """Held-out accuracy of a logistic regression on (z, z^2) (S shows in the codes' spread)."""
    from sklearn.linear_model import LogisticRegression

    def f(z):
        return np.concatenate([z, z ** 2], axis=1)

    return float(LogisticRegression().fit(f(z_tr), s_tr).score(f(z_te), s_te))


def test_mmd_weight_hides_s_from_a_classifier_trained_afterwards():
    train, task = _problem(800, 1)
    test, _ = _problem(800, 2)
    assert _accuracy(train.u, train.s, test.u, test.s) > 0.75  # the raw data show S
    vfae = resolve_learner("vfae")(latent_dim=2, hidden=16, steps=400, batch_size=128, lr=3e-3)
    plain, fair = vfae.fit(train, task, [0.0, 20.0], seed=0)
    acc = []
    for m in (plain, fair):
        z_tr = m.release(task.observe(train), np.random.default_rng(0))
        z_te = m.release(task.observe(test), np.random.default_rng(1))
        acc.append(_accuracy(z_tr[:, :2], train.s, z_te[:, :2], test.s))
    assert acc[0] > 0.7, acc   # no MMD: the code keeps U's first column, and S with it (measured 0.80)
    assert acc[1] < 0.62, acc  # MMD weight 20: near chance (measured 0.52)


def test_release_shapes_and_what_it_reads():
    train, task = _problem(200, 3)
    w = task.observe(train)
    flipped = w.copy()
    flipped[:, 0] = 1 - flipped[:, 0]
    small = dict(latent_dim=2, hidden=8, steps=20, batch_size=32)
    latent = resolve_learner("vfae")(**small).fit(train, task, 1.0, seed=0)
    z = latent.release(w, np.random.default_rng(0))
    assert z.shape == (200, 3) and np.all(z[:, 2] == 0.0)      # code in the first latent_dim columns
    assert np.array_equal(z, latent.release(flipped, np.random.default_rng(0)))  # encoder ignores S by default
    seen = resolve_learner("vfae")(encode_s=True, **small).fit(train, task, 1.0, seed=0)
    assert not np.allclose(seen.release(w, np.random.default_rng(0)), seen.release(flipped, np.random.default_rng(0)))
    dec = resolve_learner("vfae")(release="decoded", **small).fit(train, task, 1.0, seed=0)
    zd = dec.release(w, np.random.default_rng(0))
    assert zd.shape == (200, 3) and np.all(zd[:, 2] != 0.0)
    assert np.array_equal(zd, dec.release(flipped, np.random.default_rng(0)))
    bad = w.copy()
    bad[0, 0] = 0.5
    with pytest.raises(InputError, match=r"the S column of W must hold labels 0..1"):
        seen.release(bad, np.random.default_rng(0))


def test_bad_hyper_parameters_are_refused():
    train, task = _problem(50, 4)
    with pytest.raises(InputError, match=r"release='code' is unknown"):
        resolve_learner("vfae")(release="code").fit(train, task, 1.0)
    with pytest.raises(InputError, match=r"hidden=0 must be an integer"):
        resolve_learner("vfae")(hidden=0).fit(train, task, 1.0)
    with pytest.raises(InputError, match=r"kl_weight=-1 must be a finite number >= 0"):
        resolve_learner("vfae")(kl_weight=-1).fit(train, task, 1.0)
    assert resolve_learner("vfae")(latent_dim=8).resolved(task, 50)["latent_dim"] == 3  # at most d_u
