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
from privbench.learners.nn.core import init_module
from privbench.learners.nn.image_game import (ImageAdversary, ImageGame, release_parts, shrink_inputs,
                                               train_image_game)
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


@pytest.mark.parametrize("observation,arch", [("useful", "skip"), ("full", "skip"), ("useful", "gated"),
                                              ("full", "gated")])
def test_shapes_determinism_and_save_load(observation, arch, tmp_path):
    samples, task = synthetic(200, 0, observation)
    kw = dict(TINY, epochs=4, arch=arch, skip_clamp=0.01)
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
        path = m.save(tmp_path / f"{observation}-{arch}-{m.budget}.pt")
        loaded = load_mechanism(path)
        assert isinstance(loaded, ImageMLPMechanism) and loaded.skip_clamp == m.skip_clamp == 0.01
        assert loaded.gate_bias == m.gate_bias == (3.0 if arch == "gated" else None)
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
    for schedule in ("paper", "default", "sharp", "gpu"):  # sharp, gpu: their code paths at a tiny size
        kw = dict(TINY, epochs=3, schedule=schedule, gamma=2.0)
        a = PPANImage(**kw).fit(samples, task, 0.6, seed=1, device="cpu")
        b = PPANImage(**kw).fit(samples, task, 0.6, seed=1, device="cpu")
        np.testing.assert_array_equal(a.release(samples.u, np.random.default_rng(0)),
                                      b.release(samples.u, np.random.default_rng(0)))
        assert a.info["gamma"] == 2.0 and a.info["schedule"] == schedule
    # the paper's architecture: 1000-unit tanh layers and 20 noise inputs
    assert PPANImage(schedule="paper").resolved(task, 100)["hidden"] == (1000, 1000)
    assert PPANImage(schedule="paper").resolved(task, 100)["n_noise"] == 20
    gpu = PPANImage(schedule="gpu").resolved(task, 100)
    assert gpu["arch"] == "gated" and gpu["adv_standardise"] and min(gpu["hidden"]) >= 1000


@pytest.mark.parametrize("params,match", [
    (dict(schedule="fast"), "schedule='fast'"),
    (dict(hidden=(0,)), "hidden"),
    (dict(epochs=0), "epochs=0"),
    (dict(lr=-1.0), "lr=-1.0"),
    (dict(gamma=float("nan")), "gamma=nan"),
    (dict(activation="sine"), "activation='sine'"),
    (dict(skip="yes"), "skip='yes'"),
    (dict(arch="unet"), "arch='unet'"),
    (dict(skip_clamp=0.5), "skip_clamp=0.5"),
    (dict(adv_lr=0.0), "adv_lr=0.0"),
    (dict(gate_bias=float("inf")), "gate_bias=inf"),
    (dict(free_gate=1.5), "free_gate=1.5"),
    (dict(free_gate=True), "free_gate=True"),
    (dict(input_l1=-0.1), "input_l1=-0.1"),
])
def test_bad_hyper_parameters(params, match):
    samples, task = synthetic(40, 0)
    with pytest.raises(InputError, match=match):
        PPANImage(**{**TINY, **params}).fit(samples, task, 0.6, seed=0, device="cpu")


def test_mechanism_refuses_mismatched_layers():
    _, task = synthetic(10, 0)
    with pytest.raises(InputError, match="do not map 20 inputs to 16 outputs"):
        ImageMLPMechanism(task, 0.5, [torch.zeros(19, 16)], [torch.zeros(16)], n_noise=4)
    with pytest.raises(InputError, match="do not map 20 inputs to 32 outputs"):  # gated: image and gate logits
        ImageMLPMechanism(task, 0.5, [torch.zeros(20, 16)], [torch.zeros(16)], n_noise=4, skip_clamp=0.01,
                          gate_bias=3.0)
    with pytest.raises(InputError, match="needs skip_clamp"):
        ImageMLPMechanism(task, 0.5, [torch.zeros(20, 32)], [torch.zeros(32)], n_noise=4, gate_bias=3.0)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU")
def test_cuda_training_releases_on_cpu():
    samples, task = synthetic(200, 0)
    mech = PPANImage(**TINY).fit(samples, task, [0.6, 0.7], seed=0, device="cuda")
    z = mech[0].release(samples.u, np.random.default_rng(0))
    assert z.shape == (200, 16) and np.all((z > 0) & (z < 1))


def test_gated_release_is_the_blend_it_declares():
    """Z = g clamp(U) + (1 - g) sigmoid(r), g = sigmoid(h + gate_bias), written out here in numpy."""
    rng = np.random.default_rng(0)
    u = rng.random((5, 6))
    out = rng.normal(size=(5, 12)) * 3
    z, log_z, log_1mz = release_parts(torch.as_tensor(out), torch.as_tensor(u), 0.01, 3.0)
    g = 1 / (1 + np.exp(-(out[:, 6:] + 3.0)))
    r = 1 / (1 + np.exp(-12.0 * np.tanh(out[:, :6] / 12.0)))
    want = g * np.clip(u, 0.01, 0.99) + (1 - g) * r
    np.testing.assert_allclose(z.numpy(), want, rtol=1e-12)
    np.testing.assert_allclose(log_z.numpy(), np.log(want), rtol=1e-12)
    np.testing.assert_allclose(log_1mz.numpy(), np.log1p(-want), rtol=1e-12)
    # the residual path: Z = sigmoid(soft_clip(out + logit(clamp(U))))
    z2, _, _ = release_parts(torch.as_tensor(out[:, :6]), torch.as_tensor(u), 0.01, None)
    uc = np.clip(u, 0.01, 0.99)
    np.testing.assert_allclose(z2.numpy(), 1 / (1 + np.exp(-12.0 * np.tanh((out[:, :6] + np.log(uc / (1 - uc))) / 12.0))),
                               rtol=1e-12)


def test_adversary_standardises_each_pixel_like_the_bench_classifier():
    """The own adversary reads (Z - mean) / sd per pixel (a pixel with sd <= 1e-6 unscaled), as the
    bench's fresh classifier does, so a tiny signal in a near-constant pixel is as visible to it."""
    g = torch.Generator().manual_seed(0)
    adv = init_module(ImageAdversary(1, 3, (4,), 2, "relu", standardise=True), g).double()
    z = torch.rand(1, 50, 3, generator=g, dtype=torch.float64)
    z[..., 1] = 0.5 + 1e-4 * z[..., 1]  # nearly constant, but not below the floor
    z[..., 2] = 0.25  # constant: left unscaled
    adv.observe(z)
    zn = z[0].numpy()
    mu, sd = zn.mean(0), zn.std(0)
    x = (zn - mu) / np.where(sd > 1e-6, sd, 1.0)
    np.testing.assert_allclose(adv(z)[0].detach().numpy(), adv.net(torch.as_tensor(x[None]))[0].detach().numpy(),
                               rtol=1e-9)
    assert abs(x[:, 1]).max() > 1.0  # the 1e-4 signal is read at unit scale


def test_own_adversary_accuracy_is_read_on_rows_it_never_trained_on():
    samples, task = synthetic(400, 0)
    m = PPANImage(**{**TINY, "epochs": 3}).fit(samples, task, 0.6, seed=0, device="cpu")
    facts = m.info["training_adversary"]
    assert 30 <= facts["n_held"] <= 90  # about 15% of 400 rows
    assert 0.0 <= facts["accuracy"] <= 1.0 and 0.0 <= facts["accuracy_fit_rows"] <= 1.0


def test_budget_start_spends_each_budget_from_the_first_step():
    """start="budget": before any training, each member's release costs about its budget (measured here
    with the test's own cross-entropy on the releases), and a budget below the start's floor keeps the
    gate at its bias (the image)."""
    samples, task = synthetic(400, 0)
    learner = PPANImage(**{**TINY, "schedule": "sharp", "free_gate": 0.0})  # every member at its blend
    cfg = learner.resolved(task, 400)
    assert cfg["arch"] == "gated" and cfg["start"] == "budget"
    budgets = np.array([0.3, 0.55, 0.62])
    game = ImageGame(task, 3, cfg, seed=0, device=torch.device("cpu"), gamma=0.0, penalty=1e4)
    game.start_at_budgets(samples.u, budgets)
    u = torch.as_tensor(samples.u, dtype=torch.float32)
    noise = torch.rand(3, 400, cfg["n_noise"], generator=torch.Generator().manual_seed(1)) * 2 - 1
    with torch.no_grad():
        z, _ = game.release(u, u, noise)
    d = [xent(samples.u, z[i].double().numpy()) for i in range(3)]
    floor = xent(samples.u, np.clip(samples.u, 0.003, 0.997))
    assert 0.3 < floor < 0.55  # the first budget is below what even the image costs
    assert d[0] < floor + 0.03, (d, floor)  # so that member starts at (about) the image
    for i in (1, 2):
        assert abs(d[i] - budgets[i]) < 0.05 * budgets[i], (d, budgets)


def test_mi_objective_is_the_clipped_variational_bound():
    """objective="mi": max(0, H(S) + E log Q(S|Z)), H the batch labels' plug-in entropy (computed here),
    E log Q from the adversary's softmax (computed here from its logits); 0 where Q reads worse than
    the prior, and the other objectives differ from it."""
    samples, task = synthetic(64, 0)
    cfg = PPANImage(**TINY, objective="mi").resolved(task, 64)
    game = ImageGame(task, 2, cfg, 0, torch.device("cpu"), 0.0, 1e4)
    s = torch.as_tensor(samples.s)
    z = torch.as_tensor(samples.u, dtype=torch.float32).expand(2, -1, -1)
    p = np.bincount(samples.s, minlength=2) / len(samples.s)
    h = -(p * np.log(p)).sum()
    with torch.no_grad():
        for bias in (0.0, 6.0, -6.0):  # Q as trained so far; confident in label 0; confident in label 1
            game.adv.net.net[-1].bias[:, 0, 0] = bias
            logq = torch.log_softmax(game.adv(z), -1).double().numpy()
            want = np.maximum(0.0, h + logq[:, np.arange(64), samples.s].mean(1))
            np.testing.assert_allclose(game.privacy_loss(z, s).double().numpy(), want, rtol=1e-5, atol=1e-6)
        assert np.all(want == 0.0)  # confidently wrong on half the rows: no reward below the prior


def mean_image_cost(u: np.ndarray) -> float:
    """The cross-entropy of releasing the training images' mean image (clamped as the gated start is)."""
    return xent(u, np.broadcast_to(np.clip(u.mean(0), 0.003, 0.997), u.shape))


def test_free_start_releases_the_mean_image_whatever_the_image():
    """free_gate: a member whose budget start would keep less than free_gate of the image (here: one
    whose budget admits the mean image) starts image-free: its inputs from W are 0 and two different
    image batches give the same release under the same noise; a member at the image does not."""
    samples, task = synthetic(400, 0)
    cfg = PPANImage(**{**TINY, "schedule": "sharp"}).resolved(task, 400)
    assert cfg["free_gate"] == 0.25 and cfg["input_l1"] == 0.5
    m0 = mean_image_cost(samples.u)
    game = ImageGame(task, 2, cfg, seed=0, device=torch.device("cpu"), gamma=0.0, penalty=1e4)
    game.start_at_budgets(samples.u, np.array([0.05, m0 + 0.05]))
    assert game.free.tolist() == [False, True]
    first = game.mech.net[0].weight.detach()
    assert torch.all(first[1, :task.d_u] == 0) and torch.any(first[1, task.d_u:] != 0)  # noise inputs kept
    assert torch.all(first[0, :task.d_u] != 0)
    noise = torch.rand(2, 200, cfg["n_noise"], generator=torch.Generator().manual_seed(1)) * 2 - 1
    ua, ub = (torch.as_tensor(samples.u[a:a + 200], dtype=torch.float32) for a in (0, 200))
    with torch.no_grad():
        za, zb = game.release(ua, ua, noise)[0], game.release(ub, ub, noise)[0]
    assert torch.equal(za[1], zb[1]) and not torch.equal(za[0], zb[0])
    assert abs(xent(samples.u[:200], za[1].double().numpy()) - m0) < 0.03


def test_shrink_inputs_soft_thresholds_the_chosen_members_image_inputs():
    """w <- sign(w) max(|w| - step, 0) on the first n_inputs inputs of the chosen members, computed
    here in numpy; other members and the noise inputs untouched."""
    game = ImageGame(synthetic(8, 0)[1], 3, PPANImage(**{**TINY, "schedule": "sharp"}).resolved(
        synthetic(8, 0)[1], 8), 0, torch.device("cpu"), 0.0, 1e4)
    first = game.mech.net[0]
    before = first.weight.detach().double().numpy().copy()
    step = float(np.median(np.abs(before)))  # about half of the weights go to 0
    shrink_inputs(first, torch.tensor([True, False, True]), 16, step)
    after = first.weight.detach().double().numpy()
    want = before.copy()
    want[[0, 2], :16] = np.sign(before[[0, 2], :16]) * np.maximum(np.abs(before[[0, 2], :16]) - step, 0)
    np.testing.assert_allclose(after, want, rtol=0, atol=1e-7)
    assert 0.3 < np.mean(after[[0, 2], :16] == 0) < 0.7 and np.all(after[1] == before[1])


def test_image_free_member_hides_s_where_the_mean_image_is_within_budget():
    """A budget above the mean image's cost: the trained release is judged by a fresh logistic
    attacker on images the learner never saw (S is read perfectly from the images themselves)."""
    samples, task = synthetic(600, 0)
    budget = mean_image_cost(samples.u) + 0.02
    mech = PPANImage(**{**TINY, "schedule": "sharp", "epochs": 30}).fit(samples, task, budget, seed=0,
                                                                        device="cpu")
    fresh, _ = synthetic(1200, 1)
    rng = np.random.default_rng(2)
    z = mech.release(fresh.u, rng)
    assert xent(fresh.u, z) <= budget + 0.01
    assert fresh_attack(fresh.u[:600], fresh.s[:600], fresh.u[600:], fresh.s[600:]) > 0.95
    assert fresh_attack(z[:600], fresh.s[:600], z[600:], fresh.s[600:]) < 0.6


def test_input_l1_keeps_an_image_free_member_off_the_image():
    """Trained where its budget admits the mean image, an image-free member's image inputs stay
    (almost all) exactly 0 under the default input_l1; with input_l1 = 0 the moving adversary's
    noise gradients, each an Adam step, walk every one of them away from 0 (measured here)."""
    samples, task = synthetic(600, 0)
    budgets = np.array([0.05, mean_image_cost(samples.u) + 0.02])
    inputs = {}
    for l1 in (None, 0.0):
        cfg = PPANImage(**{**TINY, "schedule": "sharp", "epochs": 30, "input_l1": l1}).resolved(task, 600)
        game = ImageGame(task, 2, cfg, 0, torch.device("cpu"), 0.0, 1e5)
        train_image_game(game, samples.u, samples.u, samples.s, budgets, 1, torch.device("cpu"))
        assert game.free.tolist() == [False, True]
        inputs[l1] = game.mech.net[0].weight.detach()[:, :task.d_u].abs()
    assert (inputs[None][1] == 0).float().mean() > 0.8 and inputs[None][1].max() < 0.01
    assert (inputs[0.0][1] == 0).float().mean() < 0.1 and inputs[0.0][1].max() > 0.01
    assert torch.all(inputs[None][0] > 0)  # the member started at its blend is never thresholded
