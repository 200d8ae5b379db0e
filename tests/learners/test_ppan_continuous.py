"""PPAN continuous mechanisms, scored independently of the learner.

The affine mechanism is released as a LinearGaussian, scored exactly with
privbench.theory.gaussian.linear_gaussian_leakage against PPAN Props 1 and 3.
Nonlinear mechanisms are checked for shapes, distortion on fresh samples and a
Gaussian-approximation leakage computed here (a lower bound, PPAN §III-B1).
"""

from __future__ import annotations

import numpy as np
import pytest

from privbench.datasets import BinaryGMM, GaussianScalar, GaussianVector, InputError, task_for
from privbench.learners import TrainingError, load_mechanism, make_learner
from privbench.learners import ppan_continuous as pc
from privbench.learners.mechanisms import LinearGaussian
from privbench.learners.nn import continuous_game as cg
from privbench.learners.nn.leakage import gaussian_mi, noise_baseline_mi
from privbench.theory.gaussian import linear_gaussian_leakage, scalar_full_mi, scalar_useful_mi

SC = GaussianScalar(0.85)  # PPAN §III-B3
TOL_NATS = 0.02


@pytest.fixture(scope="module")
def scalar_samples():
    return SC.sample(4000, np.random.default_rng(0))


def _exact(mech: LinearGaussian) -> tuple[float, float]:
    return linear_gaussian_leakage(SC.cov(), mech.A, mech.B, mech.noise_cov)


@pytest.mark.parametrize("observation,optimum", [("useful", scalar_useful_mi), ("full", scalar_full_mi)])
def test_affine_mechanism_reaches_props_1_and_3(scalar_samples, observation, optimum):
    """From the plain noise start (not the Prop-1 shrink start), within 0.02 nats at the achieved distortion."""
    task = task_for(SC, observation)
    budgets = [0.15, 0.4, 0.65]
    mechs = make_learner("ppan-linear", steps=3000, init="noise").fit(scalar_samples, task, budgets, seed=3,
                                                                     device="cpu")
    for m, b in zip(mechs, budgets):
        assert isinstance(m, LinearGaussian)
        leak, dist = _exact(m)
        gap = leak - float(optimum([dist], SC.rho)[0])
        assert -1e-9 <= gap <= TOL_NATS, (b, dist, leak, gap)
        assert abs(dist - b) <= 0.05, (b, dist)
        assert m.info["restarts"] == 0 and not m.info["collapsed"]
    if observation == "useful":
        assert np.all(mechs[0].B == 0)


def test_paper_schedule_with_the_affine_mechanism_runs(scalar_samples):
    """The paper's penalty (8) leaves budget unused; the point is still on or above the curve."""
    task = task_for(SC, "useful")
    m = make_learner("ppan-linear", schedule="paper", epochs=3).fit(scalar_samples, task, 0.5, seed=0, device="cpu")
    leak, dist = _exact(m)
    assert dist <= 0.5 + 0.05
    assert leak >= float(scalar_useful_mi([dist], SC.rho)[0]) - 1e-9


@pytest.mark.parametrize("name", ["ppan-seed", "ppan-gaussian", "ppan-gmm"])
def test_nonlinear_mechanisms_release_with_shapes_and_distortion_near_budget(scalar_samples, name, tmp_path):
    task = task_for(SC, "useful")
    budgets = [0.3, 0.6]
    mechs = make_learner(name, steps=800).fit(scalar_samples, task, budgets, seed=1, device="cpu")
    fresh = SC.sample(20000, np.random.default_rng(9))
    for m, b in zip(mechs, budgets):
        z = m.release(task.observe(fresh), np.random.default_rng(2))
        assert z.shape == (20000, 1) and z.dtype == np.float64 and np.all(np.isfinite(z))
        dist = float(np.mean((z - fresh.u) ** 2))
        assert abs(dist - b) <= 0.08, (name, b, dist)
        # leaks less than U itself (Gaussian approximation, a lower bound on I(S;Z))
        assert gaussian_mi(fresh.s, z) < gaussian_mi(fresh.s, fresh.u) - 0.05
        again = load_mechanism(m.save(tmp_path / f"{name}-{b}.pt"))
        w = task.observe(fresh)[:100]
        np.testing.assert_array_equal(again.release(w, np.random.default_rng(4)), m.release(w, np.random.default_rng(4)))
        assert again.params()["config"]["family"] == m.params()["config"]["family"]


def test_seed_mechanism_vector_and_mixture_shapes():
    vec = GaussianVector.from_rho([0.47, 0.24, 0.85, 0.07, 0.66])
    task = task_for(vec, "useful")
    s = vec.sample(1000, np.random.default_rng(0))
    m = make_learner("ppan-seed", steps=100).fit(s, task, 2.0, seed=0, device="cpu")
    assert m.release(task.observe(s)[:7], np.random.default_rng(0)).shape == (7, 5)
    assert m.params()["config"]["n_noise"] == 8
    gmm = BinaryGMM(0.75, 3.0, 2.0, 1.0)
    for obs in ("useful", "full"):
        t = task_for(gmm, obs, "mi")
        sm = gmm.sample(1000, np.random.default_rng(1))
        ms = make_learner("ppan-seed", steps=100).fit(sm, t, [1.0, 4.0], seed=0, device="cpu")
        assert all(x.release(t.observe(sm)[:9], np.random.default_rng(0)).shape == (9, 1) for x in ms)


def test_mixture_adversary_log_likelihood():
    """n_mix equal components give the Gaussian log-likelihood; the mixture is normalised."""
    import torch

    from privbench.learners.nn.adversary import log_q

    gen = torch.Generator().manual_seed(0)
    s = torch.randn(7, 2, generator=gen)
    gauss = torch.randn(1, 7, 4, generator=gen)
    comp = torch.cat([torch.zeros(1, 7, 1), gauss], dim=-1)
    np.testing.assert_allclose(log_q(comp.repeat(1, 1, 3), s, False, 3).numpy(), log_q(gauss, s, False).numpy(),
                               rtol=1e-5, atol=1e-5)
    grid = torch.linspace(-12, 12, 4001)[:, None]  # 1-d density integrates to 1 (constant restored)
    out = torch.tensor([[[0.3, -1.0, 0.2, -0.5, 2.0, -0.4]]]).expand(1, len(grid), 6)
    dens = torch.exp(log_q(out, grid, False, 2) - 0.5 * np.log(2 * np.pi))
    assert float(torch.trapezoid(dens[0], grid[:, 0])) == pytest.approx(1.0, abs=1e-4)


# ----------------------------------------------------------------------------- collapse


def test_noiseless_release_is_worse_than_the_noise_baseline():
    """The detector's indicator: a shrunk but noiseless release leaks I(S;U) at any distortion."""
    s = SC.sample(20000, np.random.default_rng(5))
    z = 0.3 * s.u  # distortion 0.49, no noise: I(S;Z) = I(S;U)
    leak, base = gaussian_mi(s.s, z), noise_baseline_mi(s.s, s.u, 0.49)
    assert leak == pytest.approx(-0.5 * np.log(1 - 0.85 ** 2), abs=0.02)
    assert leak - base > 0.2


def _collapse_member(monkeypatch, which, attempts):
    """Make ``train_sweep`` return member ``which`` with its noise removed on the first ``attempts`` calls."""
    calls = {"n": 0}
    real = pc.train_sweep

    def fake(data, cfg, hp, budgets, member_seeds, sweep_seed, device):
        mech, extra = real(data, cfg, hp, budgets, member_seeds, sweep_seed, device)
        calls["n"] += 1
        if calls["n"] <= attempts and which < len(budgets):
            mech.L.data[which] = 0.0  # a noiseless release, as when a seed network's noise input dies
        return mech, extra

    monkeypatch.setattr(pc, "train_sweep", fake)
    return calls


def test_collapsed_member_is_detected_and_restarted(scalar_samples, monkeypatch):
    calls = _collapse_member(monkeypatch, which=1, attempts=1)
    task = task_for(SC, "useful")
    mechs = make_learner("ppan-linear", steps=300).fit(scalar_samples, task, [0.2, 0.5], seed=0, device="cpu")
    assert calls["n"] == 2  # the full sweep, then member 1 alone
    assert mechs[0].info["restarts"] == 0 and len(mechs[0].info["collapse_history"]) == 1
    info = mechs[1].info
    assert info["restarts"] == 1 and info["collapse_history"][0] > 0.2 and info["attempt"] == 1
    assert not info["collapsed"] and info["collapse_history"][1] < 0
    assert info["member_seed"] != mechs[0].info["member_seed"]
    leak, _ = _exact(mechs[1])
    assert leak < 0.5  # the kept mechanism is the restarted one, not the noiseless one (0.64 nats)


def test_member_that_always_collapses_is_flagged(scalar_samples, monkeypatch):
    calls = _collapse_member(monkeypatch, which=0, attempts=99)
    task = task_for(SC, "useful")
    m = make_learner("ppan-linear", steps=100, max_restarts=2).fit(scalar_samples, task, 0.5, seed=0, device="cpu")
    assert calls["n"] == 3
    assert m.info["collapsed"] and m.info["restarts"] == 2 and len(m.info["collapse_history"]) == 3


# ----------------------------------------------------------------------------- robustness


def test_nan_loss_raises_training_error_naming_the_step(scalar_samples, monkeypatch):
    real, calls = cg.log_q, {"n": 0}

    def poisoned(out, s, discrete, *args):
        calls["n"] += 1
        res = real(out, s, discrete, *args)
        return res * float("nan") if calls["n"] == 5 else res

    monkeypatch.setattr(cg, "log_q", poisoned)
    task = task_for(SC, "useful")
    with pytest.raises(TrainingError, match="mechanism loss is not finite at step 4"):
        make_learner("ppan-seed", steps=20).fit(scalar_samples, task, 0.5, seed=0, device="cpu")
    calls["n"] = 0
    # 2 adversary steps + 1 mechanism step per step: call 5 is the second adversary step of step 1
    with pytest.raises(TrainingError, match="adversary loss is not finite at step 1"):
        make_learner("ppan-seed", steps=20, adversary_steps=2).fit(scalar_samples, task, 0.5, seed=0, device="cpu")


def test_same_seed_same_mechanism(scalar_samples):
    task = task_for(SC, "full")
    kw = {"steps": 60, "hidden": (8,)}
    for name in ("ppan-linear", "ppan-gmm"):
        a = make_learner(name, **kw).fit(scalar_samples, task, [0.2, 0.4], seed=11, device="cpu")
        b = make_learner(name, **kw).fit(scalar_samples, task, [0.2, 0.4], seed=11, device="cpu")
        c = make_learner(name, **kw).fit(scalar_samples, task, [0.2, 0.4], seed=12, device="cpu")
        w = task.observe(scalar_samples)[:50]
        za = [m.release(w, np.random.default_rng(0)) for m in a]
        np.testing.assert_array_equal(za, [m.release(w, np.random.default_rng(0)) for m in b])
        assert not np.array_equal(za, [m.release(w, np.random.default_rng(0)) for m in c])


def test_paper_schedule_resolves_to_the_papers_settings():
    learner = make_learner("ppan-seed", schedule="paper")
    scalar_full = learner.resolved(task_for(SC, "full"), 8000)
    assert scalar_full["hidden"] == (5, 5) and scalar_full["penalty"] == 50.0 and scalar_full["n_noise"] == 1
    assert scalar_full["steps"] == 250 * 40 and scalar_full["adversary_steps"] == 5 and scalar_full["lr"] == 1e-3
    assert scalar_full["constraint"] == "sample-penalty"
    vec = learner.resolved(task_for(GaussianVector.from_rho([0.5, 0.2]), "useful"), 8000)
    assert vec["hidden"] == (20, 20) and vec["penalty"] == 10.0 and vec["n_noise"] == 8


@pytest.mark.parametrize("bad", [{"constraint": "nope"}, {"schedule": "fast"}, {"steps": 0}, {"lr": 0.0},
                                 {"hidden": (0,)}, {"init": "zeros"}, {"average_fraction": 2.0},
                                 {"adversary_steps": -1}, {"whiten": "yes"}, {"max_restarts": -1}])
def test_bad_hyper_parameters_are_refused(scalar_samples, bad):
    with pytest.raises(InputError):
        make_learner("ppan-linear", **bad).fit(scalar_samples, task_for(SC, "useful"), 0.3, seed=0, device="cpu")
