"""The privacy-preserving VAE (chi-square paper §V-B): GAP-A's normalisation against a hand
computation, the sweep front end against the VAE it copies, and each privacy term end to end."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from privbench.datasets.errors import InputError
from privbench.datasets.scenarios import make_scenario
from privbench.learners import make_learner, resolve_learner
from privbench.learners.nn.core import generator, init_module
from privbench.learners.nn.normed_adversary import NormedAdversary, normalise
from privbench.learners.nn.sweep_vae import SweepVAE
from privbench.learners.nn.vae import train_autoencoder

H = np.array([[[1.0, 2.0, 6.0], [3.0, -1.0, 0.0]],
              [[0.5, 0.5, 0.5], [2.0, 4.0, -3.0]]])  # (k=2 members, n=2 rows, d=3 units)


def _by_hand(h: np.ndarray, kind: str) -> np.ndarray:
    """Element by element: batch -> each (member, unit) over the rows; instance -> each (member, row) over units."""
    out = np.empty_like(h)
    k, n, d = h.shape
    for a in range(k):
        for i in range(n):
            for j in range(d):
                vals = [h[a, r, j] for r in range(n)] if kind == "batch" else [h[a, i, c] for c in range(d)]
                mean = sum(vals) / len(vals)
                var = sum((v - mean) ** 2 for v in vals) / len(vals)
                out[a, i, j] = (h[a, i, j] - mean) / math.sqrt(var + 1e-5)
    return out


@pytest.mark.parametrize("kind", ["batch", "instance"])
def test_normalisation_matches_a_hand_computation(kind):
    got = normalise(torch.as_tensor(H), kind).numpy()
    np.testing.assert_allclose(got, _by_hand(H, kind), rtol=1e-12, atol=1e-12)
    assert np.array_equal(normalise(torch.as_tensor(H), "none").numpy(), H)


def test_gap_and_gap_a_differ_only_in_the_normalisation():
    # a constant row: instance normalisation maps it to zeros, batch normalisation does not
    h = torch.as_tensor(H)
    assert np.allclose(normalise(h, "instance")[1, 0].numpy(), 0.0)
    assert not np.allclose(normalise(h, "batch")[1, 0].numpy(), 0.0)
    a, b = (init_module(NormedAdversary(2, 3, [4], 2, norm), generator(0)) for norm in ("batch", "instance"))
    b.load_state_dict(a.state_dict())  # the same weights: outputs differ by the normalisation alone
    x = torch.randn(2, 5, 3, generator=generator(0))
    assert not torch.allclose(a(x), b(x))
    with pytest.raises(ValueError, match="norm='layer'"):
        NormedAdversary(1, 3, [4], 2, "layer")


def test_every_sweep_member_starts_as_the_pretrained_vae():
    sc = make_scenario("digits", {"labeling": "ge5-parity"})
    task = sc.task("useful", "map", "mse")
    s = sc.sample(200, np.random.default_rng(0))
    hp = dict(latent_dim=3, hidden=8, lr=1e-3, batch_size=32, vae_steps=5, gamma=1.0, kappa=0.0, lipschitz=1.0)
    ae = train_autoencoder(s, task, hp, 0, torch.device("cpu"))
    sweep = SweepVAE(ae, 3, torch.device("cpu"))
    u = torch.as_tensor(s.u[:7])
    mu, logvar = ae.encode(u)
    with torch.no_grad():
        smu, slogvar = sweep.encode(u.float())
        dec = torch.sigmoid(sweep.dec(smu))
    for i in range(3):
        np.testing.assert_allclose(smu[i].numpy(), mu.numpy(), atol=1e-5)
        np.testing.assert_allclose(slogvar[i].numpy(), logvar.numpy(), atol=1e-5)
        np.testing.assert_allclose(dec[i].numpy(), ae.decode(mu).numpy(), atol=1e-5)
        assert set(sweep.member(i)) == set(ae.tensors)


@pytest.mark.parametrize("privacy", ["none", "gap", "gap-a", "chi2"])
def test_each_privacy_term_trains_and_releases_images(privacy):
    sc = make_scenario("digits", {"labeling": "ge5-parity"})
    task = sc.task("full", "map", "mse")
    s = sc.sample(300, np.random.default_rng(1))
    lr = make_learner("private-vae", privacy=privacy, **resolve_learner("private-vae").test_params)
    mechs = lr.fit(s, task, [0.0, 5.0], seed=2)
    w = task.observe(s)
    for m, b in zip(mechs, (0.0, 5.0)):
        z = m.release(w, np.random.default_rng(0))
        assert z.shape == (300, 64) and np.all((z >= 0) & (z <= 1))
        assert m.info["privacy_term"] == privacy and m.info["privacy_weight"] == b
        assert (m.info["training_adversary"]["accuracy"] is not None) == (privacy in ("gap", "gap-a"))
    assert lr.budget_kind() == "privacy-weight"
    if privacy != "gap":
        return
    # the same seed, the same release
    again = lr.fit(s, task, [0.0, 5.0], seed=2)[1].release(w, np.random.default_rng(0))
    assert np.array_equal(again, mechs[1].release(w, np.random.default_rng(0)))


def test_bad_privacy_term_is_one_line():
    task = make_scenario("digits", {}).task("useful", "map", "mse")
    with pytest.raises(InputError, match="privacy='irl'"):
        make_learner("private-vae", privacy="irl").resolved(task, 100)


def test_finetune_lr_sets_only_the_fine_tuning_rate():
    sc = make_scenario("digits", {"labeling": "ge5-parity"})
    task = sc.task("full", "map", "mse")
    s = sc.sample(200, np.random.default_rng(1))
    w = task.observe(s)
    params = {**resolve_learner("private-vae").test_params, "privacy": "gap", "share_vae": False}

    def fit(**kw):
        m = make_learner("private-vae", **params, **kw).fit(s, task, [5.0], seed=3)[0]
        return m.release(w, np.random.default_rng(0)), m.info["vae_loss"]

    (base, vae_loss), (same, same_loss) = fit(), fit(finetune_lr=1e-3)
    assert np.array_equal(base, same) and vae_loss == same_loss  # finetune_lr=lr: the default, bit for bit
    other, other_loss = fit(finetune_lr=1e-2)
    assert other_loss == vae_loss and not np.array_equal(other, base)  # the same VAE, another fine-tuning
    with pytest.raises(InputError, match="finetune_lr=0"):
        make_learner("private-vae", finetune_lr=0).resolved(task, 100)
