"""ppan-image's own adversary, trained on against the frozen release (learners/nn/image_refit.py),
reports about what a fresh attacker finds; the game's adversary alone under-read it.

The fresh attackers are scikit-learn's LogisticRegression, trained on releases of images the learner
never saw and scored on releases of others, and the bench's own fresh classifier (an MLP; tests may
import the bench, learners may not).
"""

from __future__ import annotations

import numpy as np
from sklearn.linear_model import LogisticRegression

from privbench.bench.evaluators.classifier import FreshClassifier
from privbench.datasets import Samples, Task
from privbench.learners.ppan_image import PPANImage

#: one epoch of the game: its adversary has had about 25 steps against a barely trained mechanism
SHORT = dict(hidden=(16,), adv_hidden=(16,), n_noise=4, epochs=1, batch_size=100)


def synthetic(n: int, seed: int) -> tuple[Samples, Task]:
    """4x4 images: S = 1 brightens the top half by 0.2, S = 0 the bottom half (a linear signal)."""
    rng = np.random.default_rng(seed)
    s = rng.integers(0, 2, n)
    u = 0.05 + rng.random((n, 4, 4)) * 0.6
    u[s == 1, :2] += 0.2
    u[s == 0, 2:] += 0.2
    return Samples(s, u.reshape(n, 16)), Task("image", "useful", "mi", "xent", n_s=2, d_u=16, image_shape=(4, 4))


def test_converged_adversary_reads_what_a_fresh_attacker_reads():
    train, task = synthetic(3000, 0)
    fit, _ = synthetic(2000, 1)
    held, _ = synthetic(2000, 2)
    game_only = PPANImage(**SHORT, adversary_epochs=0).fit(train, task, 0.9, seed=0, device="cpu")
    refit = PPANImage(**SHORT, adversary_epochs=40).fit(train, task, 0.9, seed=0, device="cpu")  # the default 200: slow here
    # the same mechanism (the refit changes only the claim)
    np.testing.assert_array_equal(refit.release(held.u, np.random.default_rng(5)),
                                  game_only.release(held.u, np.random.default_rng(5)))
    z_fit, z_held = (refit.release(x.u, np.random.default_rng(i)) for i, x in enumerate((fit, held)))
    fresh = LogisticRegression(max_iter=2000).fit(z_fit, fit.s).score(z_held, held.s)
    own, before = refit.info["training_adversary"], game_only.info["training_adversary"]
    assert fresh > 0.85
    assert before["accuracy"] < fresh - 0.2  # the game's adversary under-reads the release
    # the bench's own fresh classifier (an MLP, four releases of 8,000 rows) reads more than the linear one
    big, _ = synthetic(8000, 3)
    zs = np.concatenate([refit.release(big.u, np.random.default_rng(10 + r)) for r in range(4)])
    mlp = FreshClassifier({"s": 2}, 0).fit(zs, {"s": np.tile(big.s, 4)}, np.tile(np.arange(len(big.s)), 4))
    bench = float((mlp.log_proba(z_held)["s"].argmax(1) == held.s).mean())
    assert abs(own["accuracy"] - bench) < 0.03, (own["accuracy"], bench)
    assert own["accuracy"] > fresh - 0.05, (own["accuracy"], fresh)
    assert own["end_of_game"]["accuracy"] == before["accuracy"] and own["calibrated"] is True
    assert 1 <= own["refit_epochs"] <= 40 and own["mi"] > before["mi"]


def test_refit_adversary_floors_near_constant_pixels():
    """A pixel that is almost always 0 (salt noise) has a tiny running deviation; divided by it, a rare
    bright value becomes an input of about 1e5 and the refit's cross-entropy explodes.  The refit's
    adversary floors each deviation at 0.1 x the median varying pixel's; the game's does not."""
    import torch

    from privbench.learners.nn.image_game import ImageAdversary
    from privbench.learners.nn.image_refit import REFIT

    g = torch.Generator().manual_seed(0)
    z = torch.rand(1, 256, 16, generator=g) * 0.5
    z[..., :2] = 0.0
    z[0, :3, :2] = 1e-5  # two near-constant pixels (deviation about 1e-6 .. 1e-5)
    probe = z[:, :1].clone()
    probe[..., :2] = 1.0  # a salt value
    seen = {}
    for floor in (0.0, REFIT["sd_floor"]):
        adv = ImageAdversary(1, 16, (4,), 2, "relu", True)
        adv.sd_floor = floor
        adv.observe(z)
        captured = []
        adv.net.register_forward_pre_hook(lambda mod, args: captured.append(args[0]))
        adv(probe)
        seen[floor] = float(captured[0].abs().max())
    median_sd = float(z[0].std(0, unbiased=False)[2:].median())
    assert seen[0.0] > 1e4
    assert seen[REFIT["sd_floor"]] <= 1.0 / (REFIT["sd_floor"] * median_sd) + 1.0


def test_whitened_refit_reads_what_the_benchs_classifier_reads(monkeypatch):
    """At budget 0.9 the short game's release leaves the standardised refit unconverged at its 40 epochs
    (0.82 where the bench's fresh classifier reads 0.96); the whitened adversary reads it, and is chosen
    only there: the other members' claims are bit for bit the standardised adversary's."""
    from privbench.learners.nn import image_refit

    train, task = synthetic(3000, 0)
    budgets = [0.3, 0.6, 0.9]
    both = PPANImage(**SHORT, adversary_epochs=40).fit(train, task, budgets, seed=0, device="cpu")
    monkeypatch.setitem(image_refit.REFIT, "whiten_max_dim", 0)
    alone = PPANImage(**SHORT, adversary_epochs=40).fit(train, task, budgets, seed=0, device="cpu")
    big, _ = synthetic(8000, 3)
    held, _ = synthetic(2000, 2)
    for b, m, m0 in zip(budgets, both, alone):
        own, own0 = m.info["training_adversary"], m0.info["training_adversary"]
        zs = np.concatenate([m.release(big.u, np.random.default_rng(10 + r)) for r in range(4)])
        fc = FreshClassifier({"s": 2}, 0).fit(zs, {"s": np.tile(big.s, 4)}, np.tile(np.arange(len(big.s)), 4))
        fresh = float((fc.log_proba(m.release(held.u, np.random.default_rng(99)))["s"].argmax(1) == held.s).mean())
        assert abs(own["accuracy"] - fresh) < 0.03, (b, own["accuracy"], fresh)
        if own["refit_input"] == "standardised":
            assert (own["accuracy"], own["mi"], own["refit_epochs"]) == (own0["accuracy"], own0["mi"], own0["refit_epochs"])
        else:
            assert own0["accuracy"] < fresh - 0.05, (b, own0["accuracy"], fresh)  # what the claim was before
    assert [m.info["training_adversary"]["refit_input"] for m in both] == ["standardised", "standardised", "whitened"]
