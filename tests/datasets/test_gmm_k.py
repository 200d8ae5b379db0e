"""The ``gmm-k`` scenario: a binary S with K Gaussian components per class (datasets/scenarios/gmm_k.py)."""

from __future__ import annotations

import numpy as np
import pytest

from privbench.datasets import BinaryGMM, InputError
from privbench.datasets.scenarios import SCENARIOS, make_scenario
from privbench.datasets.scenarios.gmm_k import MAX_COMPONENTS, ComponentMixture

CLASS0 = ((0.5, -2.5, 0.8), (0.5, 1.5, 0.6))
CLASS1 = ((0.7, 0.0, 0.7), (0.3, 3.0, 1.0))


def moments(comps):
    """Mean and variance of sum w N(m, sd^2), by the law of total variance (not by the scenario's code)."""
    w, m, s = (np.array(c, dtype=float) for c in zip(*comps))
    mean = float((w * m).sum())
    return mean, float((w * (s**2 + m**2)).sum() - mean**2)


def test_registered_and_built_from_cli_strings():
    assert SCENARIOS["gmm-k"] is ComponentMixture
    sc = make_scenario("gmm-k", {"prior": "0.4", "class0": "[[0.5,-2.5,0.8],[0.5,1.5,0.6]]",
                                 "class1": "[[0.7,0,0.7],[0.3,3,1]]"})
    assert sc == ComponentMixture(0.4, CLASS0, CLASS1)
    assert sc.task("full").kind == "mixture" and sc.task("full").d_u == 1 and sc.task("full").n_s == 2


def test_samples_follow_the_class_mixtures():
    sc = ComponentMixture(0.4, CLASS0, CLASS1)
    n = 200_000
    smp = sc.sample(n, np.random.default_rng(3))
    assert smp.s.dtype == np.int64 and smp.u.shape == (n,)
    assert smp.s.mean() == pytest.approx(0.4, abs=5 * np.sqrt(0.24 / n))
    for cls, comps in ((0, CLASS0), (1, CLASS1)):
        u = smp.u[smp.s == cls]
        mean, var = moments(comps)
        assert u.mean() == pytest.approx(mean, abs=5 * np.sqrt(var / u.size))
        assert u.var() == pytest.approx(var, rel=0.02)
    # the lower component of class 0 (mean -2.5, sd 0.8) holds half of class 0's mass below -1
    assert np.mean(smp.u[smp.s == 0] < -1.0) == pytest.approx(0.5 * 0.9696, abs=0.01)


def test_same_seed_same_samples_and_one_component_matches_binary_gmm_in_law():
    sc = ComponentMixture(0.3, ((1.0, -1.0, 1.0),), ((1.0, 1.0, 0.5),))
    a, b = sc.sample(1000, np.random.default_rng(7)), sc.sample(1000, np.random.default_rng(7))
    assert np.array_equal(a.s, b.s) and np.array_equal(a.u, b.u)
    big = sc.sample(100_000, np.random.default_rng(8))
    ref = BinaryGMM(0.3, 1.0, 1.0, 0.5).sample(100_000, np.random.default_rng(9))
    for cls in (0, 1):
        assert big.u[big.s == cls].mean() == pytest.approx(ref.u[ref.s == cls].mean(), abs=0.03)
        assert big.u[big.s == cls].std() == pytest.approx(ref.u[ref.s == cls].std(), abs=0.03)


@pytest.mark.parametrize("class0, needle", [
    (((0.5, 0.0, 1.0),), "sum to"),
    (((1.0, 0.0, -1.0),), "must be finite and > 0"),
    ((), "is empty"),
    ((("a", 0.0, 1.0),), "triples"),
    (tuple((1 / (MAX_COMPONENTS + 1), float(k), 1.0) for k in range(MAX_COMPONENTS + 1)), "at most"),
])
def test_bad_components_are_refused_with_one_line(class0, needle):
    with pytest.raises(InputError, match="class0") as err:
        ComponentMixture(0.5, class0, ((1.0, 1.0, 1.0),))
    assert needle in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize("prior", [0.0, 1.0, float("nan"), -0.2])
def test_prior_outside_the_open_interval_is_refused(prior):
    with pytest.raises(InputError, match="prior"):
        ComponentMixture(prior, CLASS0, CLASS1)
