"""ppan-image's budget calibration (learners/image_calibration.py): a member over its budget is
blended with the image until it meets the budget on fresh draws.

Blends are checked against roots found here by scipy's brentq (xent) or the closed form
(1 - a)^2 d (mse); distortions on fresh draws with the test's own formulas.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import brentq

from privbench.datasets import InputError, Samples, Task
from privbench.learners import load_mechanism
from privbench.learners.image_calibration import A_MAX, image_budget_calibration
from privbench.learners.ppan_image import PPANImage
from privbench.learners.ppan_image_mechanism import ImageMLPMechanism

#: under-trained on purpose: one epoch of a plain 8-unit network ends far above the budgets below
RAW = dict(hidden=(8,), adv_hidden=(8,), n_noise=4, epochs=1, batch_size=50, arch="plain")


def xent_rows(u: np.ndarray, z: np.ndarray) -> np.ndarray:
    """Per-row mean over pixels of -(u log z + (1 - u) log(1 - z)), z strictly inside (0, 1)."""
    return -(u * np.log(z) + (1 - u) * np.log(1 - z)).mean(axis=1)


def synthetic(n: int, seed: int, distortion: str = "xent") -> tuple[Samples, Task]:
    """4x4 images in [0.05, 0.95]: S = 1 brightens the top half, S = 0 the bottom half."""
    rng = np.random.default_rng(seed)
    s = rng.integers(0, 2, n)
    u = 0.05 + rng.random((n, 4, 4)) * 0.3
    u[s == 1, :2] += 0.6
    u[s == 0, 2:] += 0.6
    return Samples(s, u.reshape(n, 16)), Task("image", "useful", "mi", distortion, n_s=2, d_u=16, image_shape=(4, 4))


def test_blend_is_the_root_of_the_distortion():
    rng = np.random.default_rng(0)
    u = rng.random((500, 20))
    z1, z2 = (rng.uniform(0.05, 0.95, (500, 20)) for _ in range(2))
    d0 = 0.5 * (xent_rows(u, z1) + xent_rows(u, z2))
    budget = 0.8 * d0.mean()
    cal = image_budget_calibration(z1, z2, u, budget, margin=2.0, distortion="xent")
    assert cal["applied"] and cal["train_distortion"] == pytest.approx(d0.mean(), rel=1e-12)

    def excess(a: float) -> float:  # distortion + 2 standard errors (over rows) - budget, at blend a
        y1, y2 = (1 - a) * z1 + a * u, (1 - a) * z2 + a * u
        rows = 0.5 * (xent_rows(u, y1) + xent_rows(u, y2))
        return rows.mean() + 2 * rows.std(ddof=1) / np.sqrt(len(rows)) - budget

    root = brentq(excess, 0.0, 1.0 - 1e-9, xtol=1e-14)
    assert cal["blend"] == pytest.approx(root, abs=1e-9)
    assert cal["calibrated_distortion"] <= cal["target"] + 1e-12
    # mse: the blend scales the error by (1 - a), the distortion by (1 - a)^2
    mse = image_budget_calibration(z1, z2, u, 0.5, margin=0.0, distortion="mse")
    d_mse = 0.5 * (((z1 - u) ** 2).sum(1) + ((z2 - u) ** 2).sum(1)).mean()
    assert mse["blend"] == pytest.approx(1 - np.sqrt(0.5 / d_mse), abs=1e-9)


def test_within_budget_is_left_alone_and_impossible_budgets_blend_fully():
    rng = np.random.default_rng(1)
    u = rng.random((200, 10))
    z = rng.uniform(0.05, 0.95, (200, 10))
    d = xent_rows(u, z).mean()
    kept = image_budget_calibration(z, z, u, d + 1e-9, margin=2.0, distortion="xent")
    assert not kept["applied"] and "blend" not in kept
    floor = xent_rows(u, u).mean()  # the identity's own cross-entropy: no release does better
    low = image_budget_calibration(z, z, u, 0.9 * floor, margin=0.0, distortion="xent")
    assert low["applied"] and low["blend"] == A_MAX and low["calibrated_distortion"] > 0.9 * floor
    with pytest.raises(ValueError, match="logloss"):
        image_budget_calibration(z, z, u, 0.5, margin=0.0, distortion="logloss")


@pytest.mark.parametrize("distortion,budget", [("xent", 0.6), ("mse", 0.4)])
def test_under_trained_member_meets_its_budget_on_fresh_draws(distortion, budget, tmp_path):
    """Three training sets: each calibrated member is within its budget on 4,000 fresh images up to one
    standard error beyond the calibration's margin of two, and within it on average."""
    fresh, _ = synthetic(4000, 99, distortion)
    u = fresh.u

    def fresh_distortion(mech) -> float:
        z = mech.release(u, np.random.default_rng(2))
        return float(xent_rows(u, z).mean() if distortion == "xent" else ((z - u) ** 2).sum(1).mean())

    measured = []
    for seed in range(3):
        samples, task = synthetic(400, seed, distortion)
        raw = PPANImage(**RAW, calibrate=False).fit(samples, task, budget, seed=seed, device="cpu")
        cal = PPANImage(**RAW).fit(samples, task, budget, seed=seed, device="cpu")
        assert fresh_distortion(raw) > 1.1 * budget  # the member is over its budget without the calibration
        info = cal.info["budget_calibration"]
        assert info["applied"] and 0 < info["blend"] < 1 and info["train_distortion"] > budget
        assert not cal.info["over_budget"] and cal.info["training_adversary"]["calibrated"] is True  # refit on it
        measured.append(fresh_distortion(cal))
        assert 0.95 * budget < measured[-1] <= budget + info["calibrated_stderr"], measured
    assert np.mean(measured) <= budget, measured
    unfit = PPANImage(**RAW, adversary_epochs=0).fit(samples, task, budget, seed=seed, device="cpu")
    assert unfit.info["training_adversary"]["calibrated"] is False  # the game's adversary saw the raw release
    # the release is (1 - a) Z + a U of the trained member, with the same noise
    a = info["blend"]
    z_raw = raw.release(u[:50], np.random.default_rng(3))
    np.testing.assert_allclose(cal.release(u[:50], np.random.default_rng(3)), (1 - a) * z_raw + a * u[:50],
                               rtol=1e-12, atol=1e-15)
    loaded = load_mechanism(cal.save(tmp_path / "m.pt"))  # the blend is part of the saved artifact
    assert loaded.blend == a
    np.testing.assert_array_equal(loaded.release(u, np.random.default_rng(4)), cal.release(u, np.random.default_rng(4)))


def test_bad_calibration_parameters():
    samples, task = synthetic(40, 0)
    with pytest.raises(InputError, match="calibrate='yes'"):
        PPANImage(**RAW, calibrate="yes").fit(samples, task, 0.6, seed=0, device="cpu")
    with pytest.raises(InputError, match="budget_margin=-1"):
        PPANImage(**RAW, budget_margin=-1.0).fit(samples, task, 0.6, seed=0, device="cpu")


def test_blend_goes_to_the_anchor_where_the_anchor_meets_the_budget():
    """With an anchor (a fixed image) whose own distortion is within the target, Y = (1 - a) Z + a anchor
    (root checked by brentq); where the anchor cannot meet the budget, exactly the blend towards U."""
    rng = np.random.default_rng(5)
    u = rng.random((400, 12))
    z1, z2 = (rng.uniform(0.02, 0.98, (400, 12)) for _ in range(2))
    anchor = np.clip(u.mean(0), 1e-6, 1 - 1e-6)
    d_anchor = xent_rows(u, np.broadcast_to(anchor, u.shape)).mean()
    d0 = 0.5 * (xent_rows(u, z1) + xent_rows(u, z2)).mean()
    assert d_anchor < d0
    budget = 0.5 * (d_anchor + d0)
    cal = image_budget_calibration(z1, z2, u, budget, margin=2.0, distortion="xent", anchor=anchor)
    assert cal["applied"] and cal["toward"] == "anchor"

    def excess(a: float) -> float:
        rows = 0.5 * (xent_rows(u, (1 - a) * z1 + a * anchor) + xent_rows(u, (1 - a) * z2 + a * anchor))
        return rows.mean() + 2 * rows.std(ddof=1) / np.sqrt(len(rows)) - budget

    assert cal["blend"] == pytest.approx(brentq(excess, 0.0, 1.0 - 1e-9, xtol=1e-14), abs=1e-9)
    low = 0.9 * d_anchor  # below what the anchor can reach: the blend goes towards U, as without an anchor
    with_anchor = image_budget_calibration(z1, z2, u, low, margin=2.0, distortion="xent", anchor=anchor)
    without = image_budget_calibration(z1, z2, u, low, margin=2.0, distortion="xent")
    assert with_anchor["toward"] == without["toward"] == "image" and with_anchor == without


def test_member_calibrated_towards_the_mean_image_adds_no_image(tmp_path):
    """A budget the training images' mean image meets: the calibrated release is (1 - a) Z + a M, M the
    mean training image computed here, with Z the trained member's release under the same noise; the
    anchor is part of the saved artifact."""
    samples, task = synthetic(400, 0)
    m = np.clip(samples.u.mean(0), 1e-6, 1 - 1e-6)
    budget = xent_rows(samples.u, np.broadcast_to(m, samples.u.shape)).mean() + 0.009  # the raw member: + 0.011
    raw = PPANImage(**RAW, calibrate=False).fit(samples, task, budget, seed=0, device="cpu")
    cal = PPANImage(**RAW).fit(samples, task, budget, seed=0, device="cpu")
    info = cal.info["budget_calibration"]
    assert info["applied"] and info["toward"] == "anchor" and 0 < info["blend"] < 1
    u = synthetic(300, 7)[0].u
    a = info["blend"]
    want = (1 - a) * raw.release(u, np.random.default_rng(3)) + a * m
    np.testing.assert_allclose(cal.release(u, np.random.default_rng(3)), want, rtol=1e-12, atol=1e-15)
    loaded = load_mechanism(cal.save(tmp_path / "m.pt"))
    np.testing.assert_array_equal(loaded.anchor.numpy(), cal.anchor.numpy())
    np.testing.assert_array_equal(loaded.release(u, np.random.default_rng(4)), cal.release(u, np.random.default_rng(4)))


@pytest.mark.parametrize("anchor", [np.full(15, 0.5), np.r_[np.full(15, 0.5), 0.0], np.r_[np.full(15, 0.5), 1.0]])
def test_mechanism_refuses_a_bad_anchor(anchor):
    samples, task = synthetic(100, 0)
    mech = PPANImage(**RAW, calibrate=False).fit(samples, task, 0.6, seed=0, device="cpu")
    with pytest.raises(InputError, match="anchor must be 16 pixel values inside"):
        ImageMLPMechanism(task, 0.6, mech.weights, mech.biases, mech.n_noise, mech.activation, mech.skip_clamp,
                          {}, mech.gate_bias, 0.5, anchor)
