"""The claimed law of a parametric mechanism is tested against its releases.

Honest mechanisms (exactly the law they claim) pass at every seed; each planted
lie below keeps the claimed parameters' mean and distortion right (so the
distortion check alone cannot see it) and is rejected by the law test; through
the evaluators the row becomes inconsistent and is scored from its releases.
"""

from __future__ import annotations

import numpy as np
import pytest

from privbench.bench.evaluators import evaluate, headline, inconsistency
from privbench.bench.evaluators.verify_law import law_disagreement
from privbench.datasets import BinaryGMM, GaussianScalar, GaussianVector, task_for
from privbench.learners.mechanisms import ConstantGaussian, LinearGaussian, MixtureShift
from privbench.theory.gaussian import linear_gaussian_leakage

N = 20000


def _draw(sc, observation, seed=0):
    samples = sc.sample(N, np.random.default_rng(seed))
    task = task_for(sc, observation, "mi")
    return task, samples.s, samples.u, task.observe(samples)


HONEST = [
    (GaussianScalar(0.85), "useful", lambda t: LinearGaussian(t, 0.2, [[0.7]], [[0.0]], [[0.3]])),
    (GaussianScalar(0.85), "full", lambda t: LinearGaussian(t, 0.2, [[0.9]], [[-0.4]], [[0.2]])),
    (GaussianScalar(0.85), "useful", lambda t: LinearGaussian(t, 0.0, [[1.0]], [[0.0]], [[0.0]])),  # Z = U
    (GaussianVector.from_rho([0.5, 0.3]), "useful",
     lambda t: LinearGaussian(t, 0.2, [[0.8, 0.1], [0.0, 0.6]], np.zeros((2, 2)), [[0.3, 0.1], [0.1, 0.2]])),
    (GaussianVector.from_rho([0.5, 0.3]), "useful",  # noise in one direction only
     lambda t: LinearGaussian(t, 0.2, np.eye(2), np.zeros((2, 2)), [[0.25, 0.0], [0.0, 0.0]])),
    (GaussianVector.from_rho([0.5, 0.3]), "useful",  # nearly singular: float noise of sd 1e-8 and 1e-15
     lambda t: LinearGaussian(t, 0.2, np.eye(2), np.zeros((2, 2)), [[0.25, 0.0], [0.0, 1e-16]])),
    (GaussianVector.from_rho([0.5, 0.3]), "useful",
     lambda t: LinearGaussian(t, 0.2, np.eye(2), np.zeros((2, 2)), [[1e-30, 0.0], [0.0, 0.3]])),
    (GaussianScalar(0.85), "useful", lambda t: ConstantGaussian(t, 1.0, [0.3])),
    (BinaryGMM(0.75, 3.0, 2.0, 1.0), "full", lambda t: MixtureShift(t, 1.0, 0.5, -0.2, 1.5, 0.7)),
    (BinaryGMM(0.75, 3.0, 2.0, 1.0), "useful", lambda t: MixtureShift(t, 1.0, 0.4, -0.4, 1.1, 1.1)),
    (BinaryGMM(0.5, 1.0, 1.0, 1.0), "full", lambda t: MixtureShift(t, 1.0, 0.0, 0.0, 0.0, 0.9)),
]


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("sc, obs, make", HONEST)
def test_honest_parametric_mechanisms_pass(sc, obs, make, seed):
    task, s, u, w = _draw(sc, obs, seed)
    mech = make(task)
    z = mech.release(w, np.random.default_rng(100 + seed))
    assert law_disagreement(mech, s, u, z, obs) is None


class Lying(LinearGaussian):
    """Claims Z = A U + N(0, noise_cov); releases ``fake(u, s, rng)`` instead."""

    fake = None

    def release(self, w, rng):
        w = self.task.check_w(w)
        return type(self).fake(w[:, -1:], w[:, :1], rng)


def _sd():
    return float(np.sqrt(0.3))


LIES = {
    # same variance, uniform instead of Gaussian noise
    "uniform noise": lambda u, s, rng: 0.7 * u + rng.uniform(-1, 1, u.shape) * _sd() * np.sqrt(3),
    # same average variance, more noise when S > 0: S hidden in the noise level
    "noise level carries S": lambda u, s, rng: 0.7 * u + rng.standard_normal(u.shape) * _sd()
    * np.where(s > 0, 0.6, np.sqrt(2 - 0.36)),
    # claims less noise than it adds in a nonlinear way: sign of S in the noise's sign
    "noise sign carries S": lambda u, s, rng: 0.7 * u + np.abs(rng.standard_normal(u.shape)) * _sd() * np.sign(s),
    # the honest law to 1e-6, S hidden in the digits below it
    "S in low-order digits": lambda u, s, rng: np.round(0.7 * u + rng.standard_normal(u.shape) * _sd(), 6)
    + 1e-7 * (s > 0),
}


@pytest.mark.parametrize("name", sorted(LIES))
def test_releases_that_break_the_claimed_law_are_rejected(name):
    sc = GaussianScalar(0.85)
    task, s, u, w = _draw(sc, "full", 1)
    liar = type("Liar", (Lying,), {"fake": staticmethod(LIES[name])})(task, 0.2, [[0.7]], [[0.0]], [[0.3]])
    z = liar.release(w, np.random.default_rng(2))
    reason = law_disagreement(liar, s, u, z, "full")
    assert reason is not None and "claimed law" in reason, name


def test_a_constant_that_moves_with_s_is_rejected_at_once():
    sc = GaussianScalar(0.85)
    task, s, u, w = _draw(sc, "full", 3)
    mech = ConstantGaussian(task, 1.0, [0.3])
    z = mech.release(w, np.random.default_rng(0)) + 1e-3 * (s > 0)
    assert "no noise" in law_disagreement(mech, s, u, z, "full")


def test_the_low_digit_liar_is_inconsistent_and_scored_from_its_releases():
    sc = GaussianScalar(0.85)
    task = task_for(sc, "full", "mi")
    liar = type("Liar", (Lying,), {"fake": staticmethod(LIES["S in low-order digits"])})(
        task, 0.2, [[0.7]], [[0.0]], [[0.3]])
    evals = evaluate(liar, sc, "full", "mi", n_eval=N, seed=4, cross_check=False)
    assert "claimed law" in inconsistency(evals)
    assert all(e.kind != "exact" for e in evals if e.metric in ("mi", "distortion"))
    claimed = linear_gaussian_leakage(sc.cov(), liar.A, liar.B, liar.noise_cov)[0]
    assert headline(evals, "mi").evaluator != "exact-linear-gaussian" and np.isfinite(claimed)
