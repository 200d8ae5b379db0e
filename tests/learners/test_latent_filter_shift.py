"""latent-filter with a nonlinear mean shift (filter_hidden > 0, the filter paper's footnote 2): the budget's
closed form with the shift against an independent multivariate-normal KL, the fitted mechanism's budget
recomputed from its stored tensors by a numpy forward pass, and its inputs checked."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from privbench.datasets import InputError, Samples, Task
from privbench.learners import make_learner
from privbench.learners.nn.latent_game import filter_divergence

TASK = Task("image", "full", "mi", "xent", n_s=2, d_u=36, image_shape=(6, 6), utility=(("t", 2),))
FAST = dict(hidden=32, latent_dim=4, vae_steps=300, filter_steps=200, lr=1e-2, filter_hidden=16,
            formulation="utility", beta=2.0)


def _kl_mvn(m1, c1, m0, c0):
    """KL(N(m1, c1) || N(m0, c0)), the textbook formula."""
    d = len(m0)
    inv = np.linalg.inv(c0)
    diff = m0 - m1
    return 0.5 * (np.trace(inv @ c1) + diff @ inv @ diff - d + np.log(np.linalg.det(c0) / np.linalg.det(c1)))


def _images(n: int, rng: np.random.Generator) -> Samples:
    """6x6 images: S = which half (left/right) is bright, t = whether the top half is bright."""
    s, t = rng.integers(0, 2, n), rng.integers(0, 2, n)
    img = np.full((n, 6, 6), 0.3)
    img[:, :, :3] += np.where(s == 0, 0.3, 0.0)[:, None, None]
    img[:, :, 3:] += np.where(s == 1, 0.3, 0.0)[:, None, None]
    img[:, :3, :] += np.where(t == 1, 0.3, 0.0)[:, None, None]
    img = img + 0.2 * (rng.random((n, 6, 6)) - 0.5)
    return Samples(s, np.clip(img, 0, 1).reshape(n, 36), {"t": t})


def _elu_mlp(tensors: dict, prefix: str, x: np.ndarray) -> np.ndarray:
    """A numpy forward pass of the stored plain MLP (ELU between layers)."""
    j = 0
    while f"{prefix}.{j}.weight" in tensors:
        x = x @ tensors[f"{prefix}.{j}.weight"].double().numpy() + tensors[f"{prefix}.{j}.bias"].double().numpy()
        j += 1
        if f"{prefix}.{j}.weight" in tensors:
            x = np.where(x > 0, x, np.expm1(np.minimum(x, 0)))
    return x


def test_divergence_with_a_shift_is_the_kl_of_the_shifted_gaussians():
    rng = np.random.default_rng(0)
    d_z, d_n, d_f, n = 3, 2, 2, 5
    g = rng.normal(size=(1, d_z, d_n + d_f)) * 0.4
    var = rng.uniform(0.2, 1.0, size=(n, d_z))
    f = np.eye(d_f)[rng.integers(0, d_f, n)]
    delta = rng.normal(size=(1, n, d_z)) * 0.5
    t = lambda a: torch.as_tensor(a, dtype=torch.float64)  # noqa: E731
    got = float(filter_divergence("kl", t(g), t(var), t(f), d_n, d_f, t(delta))[0])
    gw, gy = g[0, :, :d_n], g[0, :, d_n:]
    want = np.mean([_kl_mvn(gy @ f[i] + delta[0, i], np.diag(var[i]) + gw @ gw.T, np.zeros(d_z), np.diag(var[i]))
                    for i in range(n)])
    assert got == pytest.approx(want, rel=1e-9)
    without = float(filter_divergence("kl", t(g), t(var), t(f), d_n, d_f)[0])
    assert without < got  # the shift is counted (these shifts move away from zero on average)


def test_nonlinear_filter_stores_its_shift_and_meets_its_budget():
    rng = np.random.default_rng(3)
    train, test = _images(800, rng), _images(800, rng)
    mechs = make_learner("latent-filter", **FAST).fit(train, TASK, [0.5, 3.0], seed=0, device="cpu")
    for m in mechs:
        assert m.info["filter_hidden"] == 16
        shifts = {k: v for k, v in m.tensors.items() if k.startswith("shift.")}
        assert len(shifts) == 4 and float(shifts["shift.1.weight"].abs().max()) > 0  # trained, not its zero start
        # the latent KL budget recomputed from the stored tensors with numpy (mean shift Gamma_y y + delta(mu, y))
        with torch.no_grad():
            mu, logvar = (a.double().numpy() for a in m.autoencoder.encode(torch.as_tensor(train.u)))
        y = np.eye(2)[train.s]
        gamma = m.tensors["gamma"].double().numpy()
        gw, gy = gamma[:, :4], gamma[:, 4:]
        delta = _elu_mlp(m.tensors, "shift", np.c_[mu, y])

        def kl(shift):
            return np.mean([_kl_mvn(shift[i], np.diag(np.exp(logvar[i])) + gw @ gw.T, np.zeros(4),
                                    np.diag(np.exp(logvar[i]))) for i in range(len(mu))])

        with_shift, linear_only = kl(y @ gy.T + delta), kl(y @ gy.T)
        assert with_shift <= m.budget * (1 + 1e-3) + 1e-6
        assert with_shift == pytest.approx(m.info["train_divergence"], rel=2e-3, abs=1e-5)  # what training projected
        assert abs(with_shift - linear_only) > 0.01 * m.budget  # the shift is a real part of the filter
        z = m.release(TASK.observe(test), np.random.default_rng(1))
        assert z.shape == (800, 36) and np.all((z >= 0) & (z <= 1))


@pytest.mark.parametrize("bad", [-1, True, 1.5, "8"])
def test_filter_hidden_must_be_a_non_negative_integer(bad):
    rng = np.random.default_rng(0)
    with pytest.raises(InputError, match="filter_hidden"):
        make_learner("latent-filter", **{**FAST, "filter_hidden": bad}).fit(_images(50, rng), TASK, 1.0, seed=0,
                                                                             device="cpu")

