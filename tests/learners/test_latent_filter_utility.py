"""latent-filter, formulation="utility" (the filter paper's eq 15: a utility classifier on z~), judged by
fresh classifiers the learner never saw, and the default formulation untouched by utility labels."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from sklearn.linear_model import LogisticRegression

from privbench.datasets import InputError, Samples, Task

from privbench.learners import make_learner

TASK = Task("image", "full", "mi", "xent", n_s=2, d_u=36, image_shape=(6, 6), utility=(("t", 2),))
FAST = dict(hidden=32, latent_dim=4, vae_steps=400, filter_steps=300, lr=1e-2)


def _images(n: int, rng: np.random.Generator) -> Samples:
    """6x6 images: S = which half (left/right) is bright, the utility label t = whether the top half is
    bright (independent of S), pixel noise; in [0, 1]."""
    s, t = rng.integers(0, 2, n), rng.integers(0, 2, n)
    img = np.full((n, 6, 6), 0.3)
    img[:, :, :3] += np.where(s == 0, 0.3, 0.0)[:, None, None]
    img[:, :, 3:] += np.where(s == 1, 0.3, 0.0)[:, None, None]
    img[:, :3, :] += np.where(t == 1, 0.3, 0.0)[:, None, None]
    img = img + 0.2 * (rng.random((n, 6, 6)) - 0.5)
    return Samples(s, np.clip(img, 0, 1).reshape(n, 36), {"t": t})


def _accuracy(z_tr, y_tr, z_te, y_te) -> float:
    return float(LogisticRegression(max_iter=500).fit(z_tr, y_tr).score(z_te, y_te))


def test_utility_filter_hides_s_and_keeps_the_utility_label():
    rng = np.random.default_rng(0)
    train, test = _images(1000, rng), _images(1000, rng)
    mechs = make_learner("latent-filter", formulation="utility", beta=2.0, **FAST).fit(
        train, TASK, [0.0, 3.0], seed=0, device="cpu")
    acc = {}
    for m in mechs:
        z_tr = m.release(TASK.observe(train), np.random.default_rng(1))
        z_te = m.release(TASK.observe(test), np.random.default_rng(2))
        acc[m.budget] = {"s": _accuracy(z_tr, train.s, z_te, test.s),
                         "t": _accuracy(z_tr, train.utility["t"], z_te, test.utility["t"])}
        assert m.info["formulation"] == "utility" and m.info["budget_kind"] == "latent-kl"
    assert acc[0.0]["s"] > 0.9 and acc[0.0]["t"] > 0.8, acc  # the VAE alone keeps both
    assert acc[3.0]["s"] < acc[0.0]["s"] - 0.15, acc         # the filter hides S ...
    assert acc[3.0]["t"] > acc[0.0]["t"] - 0.03, acc         # ... and keeps what the VAE kept of t


def test_only_the_utility_formulation_reads_the_utility_labels():
    rng = np.random.default_rng(3)
    train = _images(300, rng)
    shuffled = Samples(train.s, train.u, {"t": np.random.default_rng(4).permutation(train.utility["t"])})
    hp = dict(FAST, vae_steps=30, filter_steps=30)

    def gamma(samples: Samples, formulation: str) -> torch.Tensor:
        m = make_learner("latent-filter", formulation=formulation, **hp).fit(samples, TASK, 2.0, seed=0, device="cpu")
        return m.tensors["gamma"]

    assert torch.equal(gamma(train, "distortion"), gamma(shuffled, "distortion"))
    assert not torch.equal(gamma(train, "utility"), gamma(shuffled, "utility"))


def test_utility_formulation_is_refused_without_utility_labels():
    bare = Task("image", "full", "mi", "xent", n_s=2, d_u=36, image_shape=(6, 6))
    learner = make_learner("latent-filter", formulation="utility", **FAST)
    assert "utility labels" in learner.refusal(bare)
    assert make_learner("latent-filter").supports(bare)
    with pytest.raises(InputError, match="utility labels"):
        learner.fit(_images(20, np.random.default_rng(0)), bare, 1.0)
    with pytest.raises(InputError, match="formulation"):
        make_learner("latent-filter", formulation="eq15").fit(_images(20, np.random.default_rng(0)), TASK, 1.0)
    with pytest.raises(InputError, match="no utility label 't'"):
        learner.fit(Samples(np.zeros(20, int), np.zeros((20, 36))), TASK, 1.0)
