"""chi2-sanitizer: the paper's formulas checked numerically, and learned mechanisms scored
by an evaluator independent of the learner (exact convolution densities of the release).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate
from scipy.stats import norm

from privbench.datasets import BinaryGMM, InputError, task_for
from privbench.learners import TrainingError, make_learner
from privbench.learners.nn.chi2 import estimate_chi2

GMM = BinaryGMM(0.5, 1.0, 1.0, 1.0)


def _binary_chi2_exact(mu: float, sd: float, prior: float = 0.5) -> float:
    """chi^2 information of S ~ Bern(prior), Z | S ~ N(+-mu, sd^2) by quadrature."""
    f0, f1 = (lambda x: norm.pdf(x, -mu, sd)), (lambda x: norm.pdf(x, mu, sd))
    mix = lambda x: (1 - prior) * f0(x) + prior * f1(x)  # noqa: E731
    val = integrate.quad(lambda x: ((1 - prior) * f0(x) ** 2 + prior * f1(x) ** 2) / mix(x), -15, 15, limit=200)[0]
    return val - 1.0


# ---------------------------------------------------------------- formulas


def test_paper_gaussian_chi2_closed_form_lacks_minus_one():
    # §III: chi2(N(mu0, s^2) || N(mu1, s^2)) is printed as exp((mu0 - mu1)^2 / s^2); the integral says - 1.
    mu0, mu1, s = 0.0, 1.3, 0.9
    num = integrate.quad(lambda x: norm.pdf(x, mu1, s) ** 2 / norm.pdf(x, mu0, s), -15, 15)[0] - 1
    assert num == pytest.approx(np.exp((mu0 - mu1) ** 2 / s**2) - 1, rel=1e-8)
    assert abs(num - np.exp((mu0 - mu1) ** 2 / s**2)) > 0.99


def test_variational_form_20_attains_chi2_at_optimal_critic_and_bounds_it():
    p = lambda x: norm.pdf(x, 0.7, 1.0)  # noqa: E731
    q = lambda x: norm.pdf(x, -0.2, 1.2)  # noqa: E731
    exact = integrate.quad(lambda x: p(x) ** 2 / q(x), -15, 15)[0] - 1

    def ratio(g):
        ep = integrate.quad(lambda x: g(x) * p(x), -15, 15)[0]
        eq = integrate.quad(lambda x: g(x) * q(x), -15, 15)[0]
        eq2 = integrate.quad(lambda x: g(x) ** 2 * q(x), -15, 15)[0]
        return (ep - eq) ** 2 / eq2

    assert ratio(lambda x: 1 - p(x) / q(x)) == pytest.approx(exact, rel=1e-7)
    assert ratio(lambda x: 3.0 * (1 - p(x) / q(x))) == pytest.approx(exact, rel=1e-7)  # scale-free
    for g in (lambda x: x, lambda x: np.tanh(x) + 0.3, lambda x: x**2 - 1):
        assert ratio(g) < exact
    # (19) at its optimiser 2 (p/q - 1) gives the same value
    g = lambda x: 2 * (p(x) / q(x) - 1)  # noqa: E731
    dual = integrate.quad(lambda x: g(x) * p(x) - (g(x) + g(x) ** 2 / 4) * q(x), -15, 15)[0]
    assert dual == pytest.approx(exact, rel=1e-7)


def test_estimate_21_matches_exact_chi2_information_binary():
    rng = np.random.default_rng(0)
    s = rng.integers(0, 2, 8000)
    z = np.where(s == 1, 1.0, -1.0) + rng.standard_normal(8000)
    exact = _binary_chi2_exact(1.0, 1.0)  # 0.5504
    est = estimate_chi2(s, z, n_s=2, steps=400, lr=1e-2, seed=1)
    assert est == pytest.approx(exact, rel=0.05)


def test_estimate_21_matches_exact_chi2_information_gaussian_pair():
    # chi^2 information of a bivariate Gaussian: rho^2 / (1 - rho^2) (the likelihood ratio is
    # heavy-tailed: at rho = 0.6 the estimate from 8000 samples is ~12% low, so rho = 0.4 here)
    rho = 0.4
    rng = np.random.default_rng(1)
    s = rng.standard_normal(8000)
    z = rho * s + np.sqrt(1 - rho**2) * rng.standard_normal(8000)
    est = estimate_chi2(s[:, None], z, steps=400, lr=1e-2, seed=2)
    assert est == pytest.approx(rho**2 / (1 - rho**2), rel=0.1)
    indep = estimate_chi2(s[:, None], rng.standard_normal(8000), steps=200, lr=1e-2, seed=2)
    assert indep < 0.02


# ---------------------------------------------------------------- learning


def _release_densities(mech, task, grid, n=3000):
    """Densities of Z | S = s on ``grid`` from the mechanism's own noise draws (U = 0 rows),
    convolved with the exact U | S law: valid because the noise does not depend on U."""
    out = []
    for s in (0, 1):
        w = np.zeros((n, task.d_w))
        if task.observation == "full":
            w[:, 0] = s
        h = mech.release(w, np.random.default_rng(5))[:, 0]
        mean, sd = (-GMM.mu, GMM.sigma0) if s == 0 else (GMM.mu, GMM.sigma1)
        out.append(norm.pdf(grid[:, None], mean + h[None, :], sd).mean(1))
    return out


def _leakage(mech, task):
    grid = np.linspace(-12, 12, 1201)
    dz = grid[1] - grid[0]
    f0, f1 = _release_densities(mech, task, grid)
    p1 = GMM.prior
    mix = (1 - p1) * f0 + p1 * f1
    chi2 = np.sum(((1 - p1) * f0**2 + p1 * f1**2) / np.maximum(mix, 1e-300)) * dz - 1
    acc = np.sum(np.maximum((1 - p1) * f0, p1 * f1)) * dz
    return float(chi2), float(acc)


def _distortion(mech, task):
    te = GMM.sample(20000, np.random.default_rng(9))
    z = mech.release(task.observe(te), np.random.default_rng(3))
    return float(np.mean((z[:, 0] - te.u) ** 2))


def test_sanitizer_mixture_useful_spends_budget_and_leaks_less_with_more_budget():
    task = task_for(GMM, "useful", "chi2")
    train = GMM.sample(2000, np.random.default_rng(0))
    budgets = [0.25, 1.0, 4.0]
    mechs = make_learner("chi2-sanitizer", steps=250, batch_size=256).fit(train, task, budgets, seed=1, device="cpu")
    raw = _binary_chi2_exact(1.0, 1.0)
    chis = []
    for b, m in zip(budgets, mechs):
        d = _distortion(m, task)
        assert 0.9 * b <= d <= 1.06 * b, (b, d)
        chi2, acc = _leakage(m, task)
        # at most 10% above Gaussian noise of the same power (GAP's additive mechanism)
        assert chi2 <= 1.1 * _binary_chi2_exact(1.0, np.sqrt(1 + b)) + 0.01, (b, chi2)
        chis.append(chi2)
        assert acc < norm.cdf(1.0)  # the raw MAP accuracy Phi(mu / sigma)
    assert chis[0] < raw and chis[0] > chis[1] > chis[2]


def test_sanitizer_full_observation_removes_leakage_when_budget_allows_shifts():
    # with S seen, shifting each class by mu (distortion mu^2 = 1) makes Z independent of S
    task = task_for(GMM, "full", "chi2")
    train = GMM.sample(2000, np.random.default_rng(0))
    low, high = make_learner("chi2-sanitizer", steps=300, batch_size=256).fit(train, task, [0.5, 1.2], seed=3,
                                                                             device="cpu")
    chi_low, acc_low = _leakage(low, task)
    chi_high, acc_high = _leakage(high, task)
    assert chi_high < 0.03 and acc_high < 0.56
    # GAP shift optimum at 0.5: total shift sqrt(0.5 / 0.25), MAP accuracy Phi(1 - shift / 2)
    assert acc_low == pytest.approx(norm.cdf(1 - np.sqrt(2.0) / 2), abs=0.03)
    assert _distortion(high, task) <= 1.2 * 1.06


def test_zero_budget_is_identity_and_bad_hyper_parameters_are_refused():
    task = task_for(GMM, "useful", "chi2")
    train = GMM.sample(200, np.random.default_rng(0))
    m = make_learner("chi2-sanitizer", steps=5, batch_size=32).fit(train, task, 0.0, seed=0, device="cpu")
    w = task.observe(train)
    np.testing.assert_array_equal(m.release(w, np.random.default_rng(0)), w)
    with pytest.raises(InputError, match="condition='s' needs observation 'full'"):
        make_learner("chi2-sanitizer", condition="s", steps=5).fit(train, task, 1.0, seed=0, device="cpu")
    with pytest.raises(InputError, match="schedule='fast' is unknown"):
        make_learner("chi2-sanitizer", schedule="fast").fit(train, task, 1.0, seed=0, device="cpu")
    with pytest.raises(InputError, match="privacy=mi"):
        make_learner("chi2-sanitizer").fit(train, task_for(GMM, "useful", "mi"), 1.0, seed=0, device="cpu")


def test_utility_model_release_stays_within_budget():
    task = task_for(GMM, "useful", "chi2")
    train = GMM.sample(1000, np.random.default_rng(0))
    m = make_learner("chi2-sanitizer", utility="mlp", steps=60, batch_size=128).fit(train, task, 1.0, seed=0,
                                                                                   device="cpu")
    assert m.info["train_distortion"] <= 1.0 + 1e-6
    assert _distortion(m, task) <= 1.08


def test_divergence_raises_training_error_naming_the_step():
    task = task_for(GMM, "useful", "chi2")
    train = GMM.sample(300, np.random.default_rng(0))
    with pytest.raises(TrainingError, match=r"not finite at step \d+"):
        make_learner("chi2-sanitizer", steps=20, lr=1e30, critic_lr=1e30, batch_size=64).fit(
            train, task, 1.0, seed=0, device="cpu")
