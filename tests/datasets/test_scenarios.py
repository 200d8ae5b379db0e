"""Scenarios: validation, stable ids, sampling against the exact model facts."""

from __future__ import annotations

import numpy as np
import pytest

from privbench.datasets import (
    SCENARIOS,
    Binary,
    BinaryGMM,
    Finite,
    GaussianScalar,
    GaussianSource,
    GaussianVector,
    InputError,
    Samples,
    SymmetricPair,
    make_scenario,
)

EXAMPLES = {
    "symmetric-pair": {"m": "10", "p": "0.4"},
    "binary": {"p": "0.75", "q": "0.25"},
    "finite": {"joint": "[[0.3, 0.2], [0.1, 0.4]]"},
    "gaussian-scalar": {"rho": "0.85"},
    "gaussian-vector": {"rho": "0.47,0.24,0.85,0.07,0.66"},
    "gaussian-source": {"variances": "0.47,0.24,0.85"},
    "binary-gmm": {"prior": "0.75", "mu": "3", "sigma0": "2", "sigma1": "1"},
    # no known optimum (privbench.datasets.labelled; tests/datasets/test_labelled.py)
    "mnist-subset": {"labeling": "ge5-parity"},
    "digits": {"labeling": "digit"},
    "hypothesis-testing": {"correlation": "correlated", "matrix_seed": "2"},
}


def test_examples_name_registered_scenarios():
    # every registered scenario also declares its own EXAMPLE (tests/datasets/test_registry.py)
    assert set(EXAMPLES) <= set(SCENARIOS)


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_ids_are_stable_and_distinguish_parameters(name):
    example = EXAMPLES.get(name, SCENARIOS[name].EXAMPLE)
    a = make_scenario(name, example)
    b = make_scenario(name, example)
    assert a == b and a.id == b.id and hash(a) == hash(b)
    assert a.id.startswith(name)
    # rebuilding from params() gives the same scenario
    params = {k: v for k, v in a.params().items() if v is not None}
    assert make_scenario(name, params).id == a.id


def test_specific_ids():
    assert SymmetricPair(10, 0.4).id == "symmetric-pair-m10-p0.4"
    assert Binary(0.75, 0.25).id == "binary-p0.75-q0.25"
    assert GaussianScalar(0.85).id == "gaussian-scalar-rho0.85"
    assert GaussianVector.from_rho([0.5, 0.2]).id == "gaussian-vector-rho0.5,0.2"
    assert Finite([[0.5, 0], [0, 0.5]]).id != Finite([[0.4, 0.1], [0.1, 0.4]]).id


@pytest.mark.parametrize("name", [n for n, c in SCENARIOS.items() if c.kind == "finite"])
def test_finite_sampling_matches_joint(name):
    sc = make_scenario(name, EXAMPLES.get(name, SCENARIOS[name].EXAMPLE))
    rng = np.random.default_rng(0)
    smp = sc.sample(200_000, rng)
    n_s, n_u = sc.joint().shape
    emp = np.zeros((n_s, n_u))
    np.add.at(emp, (smp.s, smp.u), 1)
    emp /= len(smp)
    assert np.abs(emp - sc.joint()).max() < 5e-3
    assert smp.s.dtype == np.int64 and smp.u.dtype == np.int64


@pytest.mark.parametrize("name", ["gaussian-scalar", "gaussian-vector", "gaussian-source"])
def test_gaussian_sampling_matches_covariance(name):
    sc = make_scenario(name, EXAMPLES[name])
    smp = sc.sample(200_000, np.random.default_rng(1))
    x = np.concatenate([smp.s, smp.u], axis=1)
    assert np.abs(np.cov(x.T) - sc.cov()).max() < 0.02
    assert np.abs(x.mean(axis=0)).max() < 0.01


def test_gaussian_source_releases_identical_s_and_u():
    smp = GaussianSource((1.0, 2.0)).sample(10, np.random.default_rng(0))
    assert np.array_equal(smp.s, smp.u)


def test_binary_gmm_sampling_matches_model():
    sc = BinaryGMM(0.75, 3.0, 2.0, 1.0)
    smp = sc.sample(200_000, np.random.default_rng(2))
    assert smp.s.mean() == pytest.approx(0.75, abs=5e-3)
    assert smp.u[smp.s == 0].mean() == pytest.approx(-3, abs=0.03)
    assert smp.u[smp.s == 0].std() == pytest.approx(2, abs=0.03)
    assert smp.u[smp.s == 1].std() == pytest.approx(1, abs=0.03)


def test_same_seed_same_samples_and_no_global_rng():
    sc = SymmetricPair(5, 0.3)
    a = sc.sample(100, np.random.default_rng(7))
    np.random.seed(123)  # the global RNG must not matter
    b = sc.sample(100, np.random.default_rng(7))
    assert np.array_equal(a.s, b.s) and np.array_equal(a.u, b.u)


def test_observed_w():
    smp = Samples(np.array([0, 1, 2]), np.array([2, 0, 1]))
    assert np.array_equal(smp.observed("useful"), [2, 0, 1])
    assert np.array_equal(smp.observed("full", n_u=3), [2, 3, 7])
    cont = Samples(np.ones((2, 1)), np.zeros((2, 2)))
    assert cont.observed("full").shape == (2, 3)


@pytest.mark.parametrize(
    "name,params,match",
    [
        ("symmetric-pair", {"m": "1", "p": "0.3"}, "m=1 must be an integer >= 2"),
        ("symmetric-pair", {"m": "2.5", "p": "0.3"}, "not an integer"),
        ("symmetric-pair", {"m": "3", "p": "1.5"}, r"p=1.5 is outside \[0, 1\]"),
        ("symmetric-pair", {"m": "3", "p": "nan"}, "p=nan must be a finite number"),
        ("symmetric-pair", {"m": "3"}, "needs parameter p"),
        ("symmetric-pair", {"m": "3", "p": "0.1", "k": "2"}, "parameter 'k' is unknown"),
        ("binary", {"p": "-0.1", "q": "0.2"}, "outside"),
        ("gaussian-scalar", {"rho": "1.2"}, r"rho=1.2 is outside \[-1, 1\]"),
        ("gaussian-scalar", {"rho": "0.5", "var_u": "0"}, "var_u=0.0 must be > 0"),
        ("gaussian-vector", {"rho": "0.5,1.5"}, "outside"),
        ("gaussian-vector", {"cov_s": "[[1]]", "cov_u": "[[1]]", "cov_su": "[[2]]"}, "not positive semi-definite"),
        ("gaussian-vector", {"cov_s": "[[1, 2], [2, 1]]", "cov_u": "[[1]]", "cov_su": "[[0], [0]]"}, "not positive definite"),
        ("gaussian-vector", {"cov_s": "[[1]]"}, "needs rho, or all of"),
        ("gaussian-vector", {"rho": "0.5", "cov_s": "[[1]]"}, "not both"),
        ("gaussian-source", {"variances": "1,-2"}, "must be > 0"),
        ("finite", {"joint": "[[0.5, 0.2], [0.1, 0.1]]"}, "sums to 0.9"),
        ("finite", {"joint": "[[0.6, -0.1], [0.4, 0.1]]"}, "negative"),
        ("finite", {"joint": "not json"}, "not a JSON matrix"),
        ("finite", {"joint": "[[0.5, 0.5]]", "distortion": "[[0, 1]]"}, "distortion has 1 rows"),
        ("binary-gmm", {"prior": "1", "mu": "3", "sigma0": "1", "sigma1": "1"}, r"outside \(0, 1\)"),
        ("nope", {}, "scenario 'nope' is unknown"),
    ],
)
def test_bad_parameters_give_one_line_errors(name, params, match):
    with pytest.raises(InputError, match=match) as info:
        make_scenario(name, params)
    assert "\n" not in str(info.value)


def test_bad_sample_size():
    with pytest.raises(InputError, match="n=-1"):
        SymmetricPair(3, 0.2).sample(-1, np.random.default_rng(0))
