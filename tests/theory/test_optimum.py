"""theory.optimum dispatch: every (scenario, privacy, observation) it claims, and
a clear error for the rest; curve() agrees with optimum()."""

from __future__ import annotations

import numpy as np
import pytest

from privbench.datasets import (
    Binary,
    BinaryGMM,
    Finite,
    GaussianScalar,
    GaussianSource,
    GaussianVector,
    InputError,
    SymmetricPair,
)
from privbench.theory import curve, default_privacy, optimum, supported

SCENARIOS = [
    SymmetricPair(6, 0.3),
    Binary(0.75, 0.25),
    Finite([[0.3, 0.2], [0.1, 0.4]], [[0, 1, 0.4], [1, 0, 0.4]]),
    GaussianScalar(0.85),
    GaussianVector.from_rho([0.47, 0.24, 0.85]),
    GaussianSource((0.47, 0.24, 0.85)),
    BinaryGMM(0.75, 3.0, 2.0, 1.0),
]
BUDGETS = {"finite": [0.0, 0.1, 0.3], "gaussian": [0.05, 0.2, 0.8], "mixture": [1.0, 3.0]}


def _cases():
    for sc in SCENARIOS:
        for privacy, observation in supported(sc):
            if sc.kind == "mixture" and privacy == "mi":
                continue  # the certified sandwich, seconds per budget: tests/theory/test_mixture_certified.py
            yield pytest.param(sc, privacy, observation, id=f"{sc.id}-{privacy}-{observation}")


@pytest.mark.parametrize("scenario,privacy,observation", list(_cases()))
def test_curve_agrees_with_optimum_and_is_non_increasing(scenario, privacy, observation):
    budgets = BUDGETS[scenario.kind]
    values = curve(scenario, budgets, privacy, observation)
    assert values.shape == (len(budgets),)
    assert np.all(np.isfinite(values))
    assert np.all(np.diff(values) <= 1e-9)
    for b, v in zip(budgets, values):
        opt = optimum(scenario, b, privacy, observation)
        assert opt.value == pytest.approx(v, abs=1e-6)
        assert opt.bound_kind == ("family" if scenario.kind == "mixture" else "exact")
        assert opt.method


def test_rate_distortion_is_infinite_at_zero_budget():
    # a lossless release of a continuous source carries infinite information
    assert curve(GaussianSource((0.47, 0.24)), [0.0])[0] == np.inf
    assert curve(GaussianScalar(0.85), [0.0], observation="useful")[0] < np.inf  # |rho| < 1


def test_default_privacy():
    assert default_privacy(BinaryGMM(0.5, 3, 1, 1)) == "map"
    assert default_privacy(SymmetricPair(3, 0.2)) == "mi"


def test_gaussian_source_ignores_observation():
    sc = GaussianSource((1.0, 0.5))
    assert optimum(sc, 0.3).value == optimum(sc, 0.3, observation="full").value


def test_binary_gmm_family_defaults_follow_observation():
    sc = BinaryGMM(0.5, 3.0, 1.0, 1.0)
    assert optimum(sc, 2.0, observation="useful").family == "additive"
    assert optimum(sc, 2.0, observation="full").family == "general"
    with pytest.raises(InputError, match="needs S"):
        optimum(sc, 2.0, observation="useful", family="shift")
    with pytest.raises(InputError, match="family='best' is unknown"):
        optimum(sc, 2.0, observation="full", family="best")


@pytest.mark.parametrize(
    "scenario,privacy,observation,match",
    [
        (GaussianScalar(0.5), "map", "full", "no known optimum"),
        (GaussianScalar(0.5), "chi2", "useful", "no known optimum"),
        (GaussianVector.from_rho([0.5, 0.2]), "mi", "full", "no known optimum"),
        (BinaryGMM(0.5, 3, 1, 1), "chi2", "full", "no known optimum"),
        (SymmetricPair(3, 0.2), "tv", "full", "privacy='tv' is unknown"),
        (SymmetricPair(3, 0.2), "mi", None, "needs an observation model"),
        (SymmetricPair(3, 0.2), "mi", "both", "observation='both' is unknown"),
    ],
)
def test_unsupported_combinations_raise(scenario, privacy, observation, match):
    with pytest.raises(InputError, match=match):
        optimum(scenario, 0.1, privacy, observation)
