"""theory's ``gmm-k`` provider: the certified sandwich over all mechanisms, served through optimum()."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import quad
from scipy.stats import norm

from privbench.datasets import InputError
from privbench.datasets.scenarios.gmm_k import ComponentMixture
from privbench.theory import optimum, resolve, supported

SC = ComponentMixture(0.4, ((0.5, -2.5, 0.8), (0.5, 1.5, 0.6)), ((0.7, 0.0, 0.7), (0.3, 3.0, 1.0)))


def var_u(sc):
    """Var U of the whole mixture, from the components (law of total variance)."""
    rows = [(w * p, m, s) for p, comps in ((1 - sc.prior, sc.class0), (sc.prior, sc.class1)) for w, m, s in comps]
    w, m, s = (np.array(c) for c in zip(*rows))
    mean = (w * m).sum()
    return float((w * (s**2 + m**2)).sum() - mean**2)


def test_serves_map_both_observations_and_mi_full_with_certified_only():
    assert sorted(supported(SC)) == sorted([("map", "useful"), ("map", "full"), ("mi", "full")])
    assert resolve(SC, "mi", "full", None)[2] == "certified"
    with pytest.raises(InputError, match="family='additive' is not available for gmm-k"):
        optimum(SC, 1.0, "map", "full", "additive")


def test_past_the_variance_the_sandwich_holds_perfect_privacy():
    # a constant release at E[U] costs Var U and leaks nothing: the optimum there is the floor (the
    # larger prior), and no mechanism goes below it.  (MI, the same check, solves for minutes: the
    # coarse-grid MI checks are in test_mixture_components.py.)
    floor = 0.6
    opt = optimum(SC, var_u(SC) + 0.05, "map", "full")
    assert opt.bound_kind == "certified"
    assert opt.lower - 1e-9 <= floor <= opt.value + 1e-9
    assert opt.value - opt.lower <= 1e-3


def test_near_zero_distortion_is_bounded_by_the_bayes_accuracy_of_u():
    # at D > 0 no mechanism beats the MAP accuracy of U itself (Z = U, D = 0), by data processing;
    # that accuracy by quadrature of the class densities, independently of theory
    f0 = lambda u: 0.6 * sum(w * norm.pdf(u, m, s) for w, m, s in SC.class0)  # noqa: E731
    f1 = lambda u: 0.4 * sum(w * norm.pdf(u, m, s) for w, m, s in SC.class1)  # noqa: E731
    bayes = quad(lambda u: max(f0(u), f1(u)), -12, 14, limit=400, points=[-2.5, 0.0, 1.5, 3.0])[0]
    opt = optimum(SC, 0.05, "map", "full")
    assert 0.6 - 1e-9 <= opt.lower <= opt.value <= bayes + 1e-9
