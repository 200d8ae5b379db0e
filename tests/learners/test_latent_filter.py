"""latent-filter: the paper's Gaussian closed forms checked numerically (and its chi-square
typo shown), and a tiny synthetic image task scored by a fresh classifier (numpy logistic
regression trained on one release, tested on another).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy.stats import multivariate_normal

from privbench.datasets import InputError, Samples, Task
from privbench.learners import TrainingError, make_learner
from privbench.learners.nn.vae import Autoencoder, gaussian_divergence

VAR = np.array([0.5, 0.3])
SHIFT = np.array([0.4, -0.3])
GW = np.array([[0.3, 0.1], [0.0, 0.2]])


def _div(kind, var=VAR, shift=SHIFT, gw=GW):
    t = lambda a: torch.as_tensor(np.asarray(a, dtype=float))[None]  # noqa: E731
    return float(gaussian_divergence(kind, t(var), t(shift), t(gw)[0])[0])


def _grid_chi2(mean_p, cov_p, mean_q, cov_q, half=9.0, n=701):
    """Standard chi^2(P || Q) = int p^2 / q - 1 on a 2-d grid (Q's centre +- half)."""
    xs = np.linspace(-half, half, n)
    xx, yy = np.meshgrid(xs, xs)
    pts = np.stack([xx.ravel(), yy.ravel()], 1)
    p = multivariate_normal(mean_p, cov_p).pdf(pts)
    q = multivariate_normal(mean_q, cov_q).pdf(pts)
    return float(np.sum(p**2 / q) * (xs[1] - xs[0]) ** 2 - 1)


# ---------------------------------------------------------------- closed forms


def test_kl_closed_form_matches_monte_carlo():
    cov_q = np.diag(VAR)
    cov_p = cov_q + GW @ GW.T
    p, q = multivariate_normal(SHIFT, cov_p), multivariate_normal(np.zeros(2), cov_q)
    x = p.rvs(300_000, random_state=np.random.default_rng(0))
    mc = np.mean(p.logpdf(x) - q.logpdf(x))
    assert _div("kl") == pytest.approx(mc, abs=0.01)
    # the paper's general KL (§6.3.1) in its own notation (psi = filtered, phi = raw)
    s1, s2, d = cov_q, cov_p, -SHIFT
    paper = 0.5 * (np.log(np.linalg.det(s1) / np.linalg.det(s2)) - 2 + np.trace(np.linalg.solve(s1, s2))
                   + d @ np.linalg.solve(s1, d))
    assert _div("kl") == pytest.approx(paper, rel=1e-9)
    # eq (18): equal covariances give half the squared Mahalanobis distance
    zero = np.zeros((2, 2))
    assert _div("kl", gw=zero) == pytest.approx(0.5 * np.sum(SHIFT**2 / VAR), rel=1e-9)
    assert _div("mahalanobis", gw=zero) == pytest.approx(2 * _div("kl", gw=zero), rel=1e-9)


def test_chi2_closed_form_matches_quadrature_and_the_paper_formula_does_not():
    cov_q = np.diag(VAR)
    gw = 0.5 * GW  # keep 2 Q - P positive definite (else chi2 is infinite)
    exact = _grid_chi2(SHIFT, cov_q + gw @ gw.T, np.zeros(2), cov_q)
    assert _div("chi2", gw=gw) == pytest.approx(exact, rel=1e-5)
    # equal covariances: true chi2 = exp(m) - 1 with m the squared Mahalanobis distance ...
    m = np.sum(SHIFT**2 / VAR)
    exact_eq = _grid_chi2(SHIFT, cov_q, np.zeros(2), cov_q)
    assert exact_eq == pytest.approx(np.expm1(m), rel=1e-6)
    assert _div("chi2", gw=np.zeros((2, 2))) == pytest.approx(exact_eq, rel=1e-6)
    # ... while the paper's (1/2)(e^{-s} - 1)^2, s = m / 2, is not even half of it (its f is (t-1)^2 / 2)
    paper = 0.5 * (np.exp(-m / 2) - 1) ** 2
    assert abs(paper - exact_eq / 2) > 0.25


def test_chi2_is_infinite_where_noise_exceeds_posterior_variance_and_barrier_is_finite():
    big = np.diag(np.sqrt(VAR)) * 1.5  # G G^T = 2.25 Sigma: 2 Sigma - (Sigma + G G^T) not PD
    val = _div("chi2", gw=big)
    assert np.isfinite(val) and val > 1e12
    assert _div("chi2", gw=big * 1.2) > val


# ---------------------------------------------------------------- learning


def _images(n, rng):
    """6x6 images: S = which half is bright, plus a contrast nuisance and pixel noise, in [0, 1]."""
    s = rng.integers(0, 2, n)
    left = np.where(s == 0, 0.7, 0.3)[:, None] + 0.2 * (rng.random((n, 1)) - 0.5)
    img = np.empty((n, 6, 6))
    img[:, :, :3] = left[:, :, None]
    img[:, :, 3:] = (1 - left)[:, :, None]
    img = img + 0.25 * (rng.random((n, 6, 6)) - 0.5)
    return Samples(s, np.clip(img, 0, 1).reshape(n, 36))


def _fresh_accuracy(xtr, ytr, xte, yte, l2=1e-3):
    """Logistic regression by Newton's method, trained on (xtr, ytr), accuracy on (xte, yte)."""
    x, xt = np.c_[xtr, np.ones(len(xtr))], np.c_[xte, np.ones(len(xte))]
    w = np.zeros(x.shape[1])
    for _ in range(25):
        p = 1 / (1 + np.exp(-x @ w))
        hess = (x * (p * (1 - p))[:, None]).T @ x / len(x) + l2 * np.eye(x.shape[1])
        w -= np.linalg.solve(hess, x.T @ (p - ytr) / len(x) + l2 * w)
    return float(np.mean(((xt @ w) > 0) == yte))


TASK = Task("image", "full", "mi", "xent", n_s=2, d_u=36, image_shape=(6, 6))
FAST = dict(hidden=32, latent_dim=4, vae_steps=400, filter_steps=300, lr=1e-2)


def test_filter_on_images_lowers_a_fresh_classifiers_accuracy_and_respects_the_budget():
    rng = np.random.default_rng(0)
    train, test = _images(1000, rng), _images(1000, rng)
    mechs = make_learner("latent-filter", **FAST).fit(train, TASK, [0.0, 3.0], seed=0, device="cpu")
    w_tr, w_te = TASK.observe(train), TASK.observe(test)
    raw = _fresh_accuracy(train.u, train.s, test.u, test.s)
    acc = []
    for m in mechs:
        z_tr, z_te = m.release(w_tr, np.random.default_rng(1)), m.release(w_te, np.random.default_rng(2))
        assert z_te.min() >= 0 and z_te.max() <= 1
        acc.append(_fresh_accuracy(z_tr, train.s, z_te, test.s))
        # the budget is a latent KL budget: recompute it from the stored filter and encoder
        mu, logvar = m.autoencoder.encode(torch.as_tensor(train.u))
        gamma = m.tensors["gamma"].double()
        shift = torch.as_tensor(np.eye(2)[train.s]) @ gamma[:, 4:].T
        kl = gaussian_divergence("kl", logvar.exp(), shift, gamma[:, :4]).mean()
        assert float(kl) <= m.budget * (1 + 1e-4) + 1e-6
    assert raw > 0.98 and acc[0] > 0.9          # the VAE alone keeps S
    assert acc[1] < 0.8 and acc[1] < acc[0] - 0.15, acc


def test_release_is_deterministic_per_seed():
    rng = np.random.default_rng(1)
    train = _images(300, rng)
    hp = dict(FAST, vae_steps=40, filter_steps=30)
    a = make_learner("latent-filter", **hp).fit(train, TASK, 2.0, seed=4, device="cpu")
    b = make_learner("latent-filter", **hp).fit(train, TASK, 2.0, seed=4, device="cpu")
    c = make_learner("latent-filter", **hp).fit(train, TASK, 2.0, seed=5, device="cpu")
    w = TASK.observe(train)
    za = a.release(w, np.random.default_rng(0))
    np.testing.assert_array_equal(za, b.release(w, np.random.default_rng(0)))
    assert not np.array_equal(za, c.release(w, np.random.default_rng(0)))
    assert not np.array_equal(za, a.release(w, np.random.default_rng(1)))


def test_per_user_filters_share_one_vae_and_train_on_their_own_rows():
    rng = np.random.default_rng(2)
    train = _images(400, rng)
    users = np.where(np.arange(400) < 150, "alice", "bob")
    hp = dict(FAST, vae_steps=60, filter_steps=40)
    out = make_learner("latent-filter", **hp).fit_users(train, TASK, [1.0, 2.0], users, seed=0, device="cpu")
    assert list(out) == ["alice", "bob"] and all(len(v) == 2 for v in out.values())
    (a1, _), (b1, _) = out["alice"], out["bob"]
    for key in a1.tensors:
        if key != "gamma":
            torch.testing.assert_close(a1.tensors[key], b1.tensors[key])
    assert not torch.equal(a1.tensors["gamma"], b1.tensors["gamma"])
    # the two-step API: one VAE, a filter for a user with a different private attribute
    learner = make_learner("latent-filter", **hp)
    ae = learner.fit_autoencoder(train, TASK, seed=0, device="cpu")
    assert isinstance(ae, Autoencoder)
    other = Samples((train.u[:, :18].mean(1) > 0.5).astype(int)[:150], train.u[:150])
    m = learner.fit_filter(ae, other, TASK, 1.0, seed=1, device="cpu")
    assert m.info["train_divergence"] <= 1.0 + 1e-4
    with pytest.raises(InputError, match="fewer than 2 samples"):
        learner.fit_users(train, TASK, 1.0, np.r_[["x"], ["y"] * 399], seed=0, device="cpu")
    with pytest.raises(InputError, match="user_ids must have shape"):
        learner.fit_users(train, TASK, 1.0, users[:10], seed=0, device="cpu")
    small = Task("image", "full", "mi", "xent", n_s=2, d_u=4, image_shape=(2, 2))
    with pytest.raises(InputError, match="autoencoder does not match"):
        learner.fit_filter(ae, Samples(train.s[:10], train.u[:10, :4]), small, 1.0, device="cpu")


def test_divergence_raises_training_error_naming_the_step():
    train = _images(100, np.random.default_rng(3))
    with pytest.raises(TrainingError, match=r"not finite at step \d+"):
        make_learner("latent-filter", hidden=8, latent_dim=2, vae_steps=30, filter_steps=5, lr=1e30).fit(
            train, TASK, 1.0, seed=0, device="cpu")
