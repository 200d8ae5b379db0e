"""The continuous-release log-loss evaluator: a fresh classifier's held-out cross-entropy brackets H(U | Z)
from above, on releases whose H(U | Z) is known independently (0, H(U), and a numerical integral)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, stats

from privbench.bench.evaluators import heldout_logloss
from privbench.datasets.errors import InputError


def labels(n: int, p1: float, rng: np.random.Generator) -> np.ndarray:
    return (rng.random(n) < p1).astype(np.int64)


def entropy(p: np.ndarray) -> float:
    p = p[p > 0]
    return float(-(p * np.log(p)).sum())


def test_release_that_is_u_gives_about_zero() -> None:
    rng = np.random.default_rng(1)
    u = labels(4000, 0.3, rng)
    z = np.eye(2)[u] + 0.01 * rng.standard_normal((4000, 2))
    ev = heldout_logloss(z[:3000], u[:3000], z[3000:], u[3000:], 2, seed=0)
    assert ev.metric == "distortion" and ev.kind == "upper-bound" and ev.evaluator == "fresh-logloss"
    assert ev.value >= 0.0
    assert ev.value < 0.03


def test_independent_release_gives_h_u_from_above() -> None:
    rng = np.random.default_rng(2)
    u = labels(6000, 0.3, rng)
    z = rng.standard_normal((6000, 4))
    ev = heldout_logloss(z[:4000], u[:4000], z[4000:], u[4000:], 2, seed=0)
    h_u = entropy(np.array([0.7, 0.3]))  # 0.6109 nats
    assert ev.value >= h_u - 3 * ev.stderr
    assert ev.value <= h_u + 0.03


def test_noisy_release_brackets_the_integral_from_above() -> None:
    """Z = (2U - 1) + N(0, 1), U ~ Bernoulli(1/2): H(U | Z) by quadrature of the exact posterior."""
    def h_post(z: float) -> float:
        a, b = stats.norm.pdf(z, -1, 1), stats.norm.pdf(z, 1, 1)
        q = b / (a + b)
        h = -(q * math.log(q) if q > 0 else 0.0) - ((1 - q) * math.log(1 - q) if q < 1 else 0.0)
        return 0.5 * (a + b) * h

    truth = integrate.quad(h_post, -12, 12)[0]  # about 0.3563 nats
    rng = np.random.default_rng(3)
    u = labels(10000, 0.5, rng)
    z = (2.0 * u - 1.0 + rng.standard_normal(10000))[:, None]
    ev = heldout_logloss(z[:6000], u[:6000], z[6000:], u[6000:], 2, seed=0)
    assert ev.value >= truth - 3 * ev.stderr
    assert ev.value <= truth + 0.03
    assert ev.detail["epochs"] < ev.detail["max_epochs"]  # early stopping ended it, not the cap


def test_three_classes_and_bad_labels() -> None:
    rng = np.random.default_rng(4)
    u = rng.integers(0, 3, 3000)
    z = np.eye(3)[u] + 0.01 * rng.standard_normal((3000, 3))
    assert heldout_logloss(z[:2000], u[:2000], z[2000:], u[2000:], 3, seed=1).value < 0.05
    with pytest.raises(InputError, match="outside 0..1"):
        heldout_logloss(z[:2000], u[:2000], z[2000:], u[2000:], 2, seed=1)
    with pytest.raises(InputError, match="do not match"):
        heldout_logloss(z[:2000], u[:1999], z[2000:], u[2000:], 3, seed=1)
