"""Utility labels as task data: ``Task.utility`` declares them, ``Samples.utility`` carries them."""

from __future__ import annotations

import numpy as np
import pytest

from privbench.datasets.errors import InputError
from privbench.datasets.labelled import HypothesisTesting, MnistSubset
from privbench.datasets.real import image_data
from privbench.datasets.samples import Samples
from privbench.datasets.tasks import Task


def _task(**kw):
    return Task("mixture", "useful", "map", "mse", n_s=2, d_u=3, **kw)


def _samples(n=6, **util):
    rng = np.random.default_rng(0)
    return Samples(np.arange(n) % 2, rng.standard_normal((n, 3)), util or None)


def test_a_task_declares_utility_labels_and_round_trips():
    t = _task(utility={"u": 2, "colour": 3})
    assert t.utility == (("u", 2), ("colour", 3))
    assert t.utility_classes == {"u": 2, "colour": 3}
    assert Task.from_dict(t.to_dict()) == t
    assert Task.from_dict({k: v for k, v in t.to_dict().items() if k != "utility"}).utility == ()
    assert t.with_privacy("mi").utility == t.utility


@pytest.mark.parametrize("bad, words", [
    ("u", "sequence"), ([("u",)], "pair"), ([("", 2)], "non-empty"), ([("u", 1)], ">= 2"),
    ([("u", 2.0)], "integer"), ([("u", True)], "integer"), ([("u", 2), ("u", 3)], "twice"),
])
def test_bad_utility_declarations_are_one_line_input_errors(bad, words):
    with pytest.raises(InputError, match=words) as e:
        _task(utility=bad)
    assert "\n" not in str(e.value)


def test_check_samples_validates_the_declared_labels_like_s():
    t = _task(utility=(("u", 2),))
    good = t.check_samples(_samples(u=np.array([0, 1, 1, 0, 1, 0], dtype=np.int32)))
    assert good.utility["u"].dtype == np.int64 and good.utility["u"].tolist() == [0, 1, 1, 0, 1, 0]
    with pytest.raises(InputError, match="no utility label 'u'"):
        t.check_samples(_samples())
    with pytest.raises(InputError, match="outside the alphabet 0..1"):
        t.check_samples(_samples(u=np.array([0, 1, 2, 0, 1, 0])))
    with pytest.raises(InputError, match="non-integer"):
        t.check_samples(_samples(u=np.array([0, 1, 0.5, 0, 1, 0])))
    with pytest.raises(InputError, match="1-d array"):
        t.check_samples(_samples(u=np.zeros((6, 2), dtype=int)))
    with pytest.raises(InputError, match="must match"):
        _samples(u=np.zeros(5, dtype=int))


def test_a_task_without_utility_labels_accepts_and_drops_them():
    t = _task()
    out = t.check_samples(_samples(u=np.array([0, 1, 1, 0, 1, 0])))
    assert out.utility is None
    assert t.check_samples(_samples()).utility is None


def test_take_keeps_utility_labels_aligned():
    s = _samples(u=np.array([0, 1, 1, 0, 1, 0]))
    part = s.take(np.array([1, 4]))
    assert part.s.tolist() == [1, 0] and part.utility["u"].tolist() == [1, 1]


def test_hypothesis_testing_samples_carry_u_as_their_utility_label():
    sc = HypothesisTesting(correlation="correlated")
    draw = sc.draw("train", 500, np.random.default_rng(1))
    task = sc.task("useful")
    assert task.utility == (("u", 2),)
    checked = task.check_samples(draw.samples)
    assert np.array_equal(checked.utility["u"], draw.labels["u"])
    # correlated model: P(S = U) = 0.8, so the carried label is U, not a copy of S
    assert 0.7 < np.mean(checked.utility["u"] == draw.labels["s"]) < 0.9


def test_image_samples_carry_the_labelings_utility_label():
    digits = np.array([0, 1, 5, 6, 8, 9, 3, 7])
    data = image_data(np.zeros((8, 2, 2)), digits, "ge5-parity")
    assert data.task().utility == (("parity", 2),)
    assert data.samples().utility["parity"].tolist() == (digits % 2).tolist()
    data = image_data(np.zeros((8, 2, 2)), digits, "digit")
    assert data.task().utility == (("circle", 2),)
    assert data.samples().utility["circle"].tolist() == [1, 0, 0, 1, 1, 1, 0, 0]


def test_mnist_scenario_samples_match_the_task():
    sc = MnistSubset(labeling="digit")
    draw = sc.draw("train", 50, np.random.default_rng(0))
    assert sc.task("full").utility == (("circle", 2),)
    assert np.array_equal(draw.samples.utility["circle"], draw.labels["circle"])
    assert np.array_equal(sc.sample(50, np.random.default_rng(0)).s, draw.samples.s)  # same rows as before
