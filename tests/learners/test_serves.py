"""``Serves``: what a learner declares it serves, and ``Learner.supports``/``refusal`` built on it."""

from __future__ import annotations

import pytest

from privbench.datasets.errors import InputError
from privbench.datasets.tasks import Task
from privbench.learners import Learner, Serves

BINARY = Task(kind="finite", observation="useful", privacy="mi", n_s=2, n_u=2, n_z=2)
SIX = Task(kind="finite", observation="full", privacy="mi", n_s=6, n_u=6, n_z=6)
TWO_BY_THREE = Task(kind="finite", observation="full", privacy="chi2", n_s=2, n_u=3, n_z=3)
GAUSS3 = Task(kind="gaussian", observation="useful", privacy="mi", distortion="mse", d_s=3, d_u=3)


class Anything(Learner):
    name = "anything"

    def _fit(self, samples, task, budgets, seed, device):  # pragma: no cover - never trained here
        raise NotImplementedError


def test_the_default_serves_every_task():
    for task in (BINARY, SIX, TWO_BY_THREE, GAUSS3, BINARY.with_privacy("chi2")):
        assert Anything().supports(task) and Anything().refusal(task) is None


def test_size_limits_refuse_with_the_size_named():
    s = Serves(kinds=("finite",), n_s=2, n_u=(2, 2))
    assert s.refusal(BINARY) is None
    assert s.refusal(SIX) == "serves n_s = 2, not n_s=6"
    assert s.refusal(TWO_BY_THREE) == "serves n_u = 2, not n_u=3"
    assert s.refusal(GAUSS3) == "serves task kinds finite, not gaussian"


def test_dimension_ranges_and_open_upper_ends():
    s = Serves(kinds=("gaussian",), d_s=(1, 2), d_u=(2, None))
    assert s.refusal(GAUSS3) == "serves 1 <= d_s <= 2, not d_s=3"
    assert s.refusal(Task(kind="gaussian", observation="useful", distortion="mse", d_s=2, d_u=50)) is None
    assert s.refusal(Task(kind="gaussian", observation="useful", distortion="mse", d_s=1, d_u=1)) == "serves d_u >= 2, not d_u=1"
    assert s.describe() == "kinds gaussian; 1 <= d_s <= 2; d_u >= 2"


def test_distortions_are_declared_too():
    s = Serves(distortions=("hamming",))
    matrix = Task(kind="finite", observation="useful", distortion="matrix", n_s=2, n_u=2, n_z=3,
                  distortion_matrix=((0, 1, 0.5), (1, 0, 0.5)))
    assert s.refusal(BINARY) is None
    assert s.refusal(matrix) == "serves distortions hamming, not matrix"


def test_observations_and_privacies_stay_learner_attributes():
    class MiUseful(Anything):
        observations = ("useful",)
        privacies = ("mi",)

    assert MiUseful().refusal(SIX) == "serves observations useful, not full"
    assert MiUseful().refusal(BINARY.with_privacy("map")) == "trains for privacy mi, not map"
    with pytest.raises(InputError, match="does not serve this finite task.*observations useful, not full"):
        MiUseful().fit(None, SIX, 0.1)


def test_the_older_tuple_form_still_means_those_kinds():
    class Old(Anything):
        serves = ("finite",)

    assert Old.declared() == Serves(kinds=("finite",))
    assert Old().supports(SIX) and not Old().supports(GAUSS3)
    s = Serves(kinds=("finite", "image"))
    assert list(s) == ["finite", "image"] and "image" in s and "gaussian" not in s  # reads like the tuple


@pytest.mark.parametrize("kwargs, match", [
    ({"kinds": ("finite", "graph")}, "kinds: 'graph' is unknown"),
    ({"kinds": 3}, "kinds=3 must be a tuple of names"),
    ({"n_s": 0}, "n_s=0 must be an integer >= 1"),
    ({"d_u": (3, 2)}, r"d_u=\(3, 2\)"),
    ({"n_u": (1, 2, 3)}, "n_u="),
    ({"n_z": True}, "n_z=True"),
    ({"distortions": ("l1",)}, "distortions: 'l1' is unknown"),
])
def test_bad_declarations_are_one_line_input_errors(kwargs, match):
    with pytest.raises(InputError, match=match) as info:
        Serves(**kwargs)
    assert "\n" not in str(info.value)
