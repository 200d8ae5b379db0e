"""The z-channel's closed-form MAP optimum (theory/finite/z_channel.py) against the finite linear program."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privbench.datasets import make_scenario
from privbench.theory import curve, optimum
from privbench.theory.measures import scenario_channel_measures

probs = st.floats(0.02, 0.98)


@settings(max_examples=25, deadline=None)
@given(p=probs, e=probs, d=st.floats(0.0, 0.7), observation=st.sampled_from(["useful", "full"]))
def test_closed_form_equals_the_linear_program_of_the_same_joint(p, e, d, observation):
    zc = make_scenario("z-channel", {"p": p, "e": e})
    generic = make_scenario("finite", {"joint": zc.joint().tolist()})
    closed = optimum(zc, d, privacy="map", observation=observation)
    lp = optimum(generic, d, privacy="map", observation=observation)
    assert closed.method.startswith("closed form (z-channel")
    assert lp.method.startswith("convex program")
    assert abs(closed.value - lp.value) < 1e-7  # the solver's tolerance is far tighter


@pytest.mark.parametrize("observation", ["useful", "full"])
@pytest.mark.parametrize("p, e, d", [(0.4, 0.3, 0.1), (0.7, 0.2, 0.05), (0.3, 0.9, 0.2), (0.5, 0.0, 0.6)])
def test_the_optimal_mechanism_achieves_the_value_within_the_budget(p, e, d, observation):
    zc = make_scenario("z-channel", {"p": p, "e": e})
    opt = optimum(zc, d, privacy="map", observation=observation)
    m = scenario_channel_measures(zc, np.array(opt.mechanism["channel"]), observation)
    assert m["map"] == pytest.approx(opt.value, abs=1e-12)
    assert m["distortion"] <= d + 1e-12


def test_curve_is_the_prior_beyond_the_knee_and_other_privacies_fall_back_to_the_programs():
    zc = make_scenario("z-channel", {"p": 0.4, "e": 0.3})  # prior 0.6, A_id = 0.88: the knee at D = 0.28
    assert curve(zc, [0.0, 0.1, 0.28, 0.5], privacy="map", observation="useful") == pytest.approx(
        [0.88, 0.78, 0.6, 0.6], abs=1e-12)
    mi = optimum(zc, 0.1, privacy="mi", observation="useful")
    assert mi.method.startswith("convex program") and 0 <= mi.value < np.log(2)
