"""ppan-image: shapes, determinism, persistence, budget use, and privacy judged by a fresh attacker.

Distortion is measured here with the test's own per-pixel cross-entropy; privacy
by a scikit-learn LogisticRegression trained on releases of images the learner
never saw and scored on releases of other unseen images (never the learner's
own adversary).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from sklearn.linear_model import LogisticRegression

from privbench.datasets import InputError, Samples, Task
from privbench.datasets.real import load_digits
from privbench.learners import Serves, available, load_mechanism, make_learner
from privbench.learners.ppan_image import ImageMLPMechanism, PPANImage

TINY = dict(hidden=(32,), adv_hidden=(32,), disc_hidden=(16,), n_noise=4, epochs=20, batch_size=50)


def xent(u: np.ndarray, z: np.ndarray) -> float:
    """Mean per-pixel binary cross-entropy -(u log z + (1 - u) log(1 - z)) (PPAN §III-C)."""
    return float(-(u * np.log(z) + (1 - u) * np.log1p(-z)).mean())


def fresh_attack(z_fit: np.ndarray, s_fit: np.ndarray, z_eval: np.ndarray, s_eval: np.ndarray) -> float:
    return float(LogisticRegression(max_iter=1000).fit(z_fit, s_fit).score(z_eval, s_eval))


def synthetic(n: int, seed: int, observation: str = "useful") -> tuple[Samples, Task]:
    """4x4 images: S = 1 brightens the top half, S = 0 the bottom half."""
    rng = np.random.default_rng(seed)
    s = rng.integers(0, 2, n)
    u = rng.random((n, 4, 4)) * 0.3
    u[s == 1, :2] += 0.6
    u[s == 0, 2:] += 0.6
    return Samples(s, u.reshape(n, 16)), Task("image", observation, "mi", "xent", n_s=2, d_u=16, image_shape=(4, 4))


@pytest.fixture(scope="module")
def digits():
    return load_digits()


def test_registered_with_honest_capabilities():
    cls = available()["ppan-image"]
    assert cls is PPANImage
    assert cls.declared() == Serves(kinds=("image",)) and cls.privacies == ("mi",) and set(cls.observations) == {"useful", "full"}
    samples, task = synthetic(64, 0)
    with pytest.raises(InputError, match="does not serve"):
        PPANImage(**TINY).fit(samples, task.with_privacy("map"), 0.6)


@pytest.mark.parametrize("observation", ["useful", "full"])
def test_shapes_determinism_and_save_load(observation, tmp_path):
    samples, task = synthetic(200, 0, observation)
    kw = dict(TINY, epochs=4, skip=True)
    mechs = make_learner("ppan-image", **kw).fit(samples, task, [0.55, 0.65], seed=3, device="cpu")
    again = make_learner("ppan-image", **kw).fit(samples, task, [0.55, 0.65], seed=3, device="cpu")
    other = make_learner("ppan-image", **kw).fit(samples, task, [0.55, 0.65], seed=4, device="cpu")
    w = task.observe(samples)
    for m, m2, m3 in zip(mechs, again, other):
        assert isinstance(m, ImageMLPMechanism)
        z = m.release(w, np.random.default_rng(0))
        assert z.shape == (200, 16) and z.dtype == np.float64
        assert z.min() > 0 and z.max() < 1  # strictly inside (0, 1): the cross-entropy is finite
        np.testing.assert_array_equal(z, m2.release(w, np.random.default_rng(0)))  # same seed, same mechanism
        assert not np.allclose(z, m3.release(w, np.random.default_rng(0)))  # another seed, another one
        assert not np.allclose(z, m.release(w, np.random.default_rng(1)))  # the release is randomised
        path = m.save(tmp_path / f"{observation}-{m.budget}.pt")
        loaded = load_mechanism(path)
        assert isinstance(loaded, ImageMLPMechanism) and loaded.skip_clamp == m.skip_clamp == 0.01
        np.testing.assert_array_equal(loaded.release(w, np.random.default_rng(5)), m.release(w, np.random.default_rng(5)))
        assert loaded.info["train_distortion"] == m.info["train_distortion"]
    if observation == "full":  # the mechanism really reads S: flipping it changes the release
        flipped = w.copy()
        flipped[:, 0] = 1 - flipped[:, 0]
        assert not np.allclose(mechs[0].release(w, np.random.default_rng(0)),
                               mechs[0].release(flipped, np.random.default_rng(0)))
        flipped[0, 0] = 2
        with pytest.raises(InputError, match="S column of W"):
            mechs[0].release(flipped, np.random.default_rng(0))


def test_distortion_tracks_the_budget():
    samples, task = synthetic(400, 0)
    held, _ = synthetic(400, 1)
    u = held.u
    floor = xent(u, np.clip(u, 1e-12, 1 - 1e-12))
    constant = xent(u, np.broadcast_to(samples.u.mean(axis=0), u.shape))
    budgets = [0.55, 0.6, 0.65]
    assert floor < budgets[0] and budgets[-1] < constant  # every budget binds (S is visible at each)
    mechs = PPANImage(**{**TINY, "epochs": 40}).fit(samples, task, budgets, seed=0, device="cpu")
    for m in mechs:
        d_train = xent(samples.u, m.release(samples.u, np.random.default_rng(1)))
        d_held = xent(u, m.release(u, np.random.default_rng(2)))
        assert abs(d_train - m.budget) < 0.03 * m.budget, (m.budget, d_train)
        assert abs(d_held - m.budget) < 0.05 * m.budget, (m.budget, d_held)
        assert not m.info["over_budget"]
    # an impossible budget (below the identity's own cross-entropy) is flagged, not hidden
    m0 = PPANImage(**{**TINY, "epochs": 5}).fit(samples, task, 0.0, seed=0, device="cpu")
    assert m0.info["over_budget"] and m0.info["train_distortion"] > floor


def test_fresh_attacker_loses_accuracy_on_digits(digits):
    """A few hundred sklearn digits: at a binding budget a fresh attacker recognises far fewer digits."""
    train, attack_fit, attack_eval = digits.subset(np.arange(600)), digits.subset(np.arange(600, 900)), \
        digits.subset(np.arange(900, 1200))
    identity_acc = fresh_attack(attack_fit.flat, attack_fit.s, attack_eval.flat, attack_eval.s)
    floor = xent(attack_eval.flat, np.clip(attack_eval.flat, 1e-12, 1 - 1e-12))
    budget = 0.34
    mech = PPANImage(hidden=(64, 64), adv_hidden=(64,), epochs=150).fit(
        train.samples(), train.task(), budget, seed=0, device="cpu")
    z_fit = mech.release(attack_fit.flat, np.random.default_rng(1))
    z_eval = mech.release(attack_eval.flat, np.random.default_rng(2))
    acc = fresh_attack(z_fit, attack_fit.s, z_eval, attack_eval.s)
    d_eval = xent(attack_eval.flat, z_eval)
    assert identity_acc > 0.85
    assert floor < budget and d_eval < 1.15 * budget, d_eval
    assert acc < identity_acc - 0.15, (acc, identity_acc)


def test_discriminator_and_paper_schedule_run(tmp_path):
    samples, task = synthetic(100, 2)
    for schedule in ("paper", "default"):
        kw = dict(TINY, epochs=3, schedule=schedule, gamma=2.0)
        a = PPANImage(**kw).fit(samples, task, 0.6, seed=1, device="cpu")
        b = PPANImage(**kw).fit(samples, task, 0.6, seed=1, device="cpu")
        np.testing.assert_array_equal(a.release(samples.u, np.random.default_rng(0)),
                                      b.release(samples.u, np.random.default_rng(0)))
        assert a.info["gamma"] == 2.0 and a.info["schedule"] == schedule
    # the paper's architecture: 1000-unit tanh layers and 20 noise inputs
    assert PPANImage(schedule="paper").resolved(task, 100)["hidden"] == (1000, 1000)
    assert PPANImage(schedule="paper").resolved(task, 100)["n_noise"] == 20


@pytest.mark.parametrize("params,match", [
    (dict(schedule="fast"), "schedule='fast'"),
    (dict(hidden=(0,)), "hidden"),
    (dict(epochs=0), "epochs=0"),
    (dict(lr=-1.0), "lr=-1.0"),
    (dict(gamma=float("nan")), "gamma=nan"),
    (dict(activation="sine"), "activation='sine'"),
    (dict(skip="yes"), "skip='yes'"),
])
def test_bad_hyper_parameters(params, match):
    samples, task = synthetic(40, 0)
    with pytest.raises(InputError, match=match):
        PPANImage(**{**TINY, **params}).fit(samples, task, 0.6, seed=0, device="cpu")


def test_mechanism_refuses_mismatched_layers():
    _, task = synthetic(10, 0)
    with pytest.raises(InputError, match="do not map 20 inputs to 16 pixels"):
        ImageMLPMechanism(task, 0.5, [torch.zeros(19, 16)], [torch.zeros(16)], n_noise=4)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU")
def test_cuda_training_releases_on_cpu():
    samples, task = synthetic(200, 0)
    mech = PPANImage(**TINY).fit(samples, task, [0.6, 0.7], seed=0, device="cuda")
    z = mech[0].release(samples.u, np.random.default_rng(0))
    assert z.shape == (200, 16) and np.all((z > 0) & (z < 1))
