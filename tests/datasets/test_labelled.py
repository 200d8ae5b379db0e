"""Scenarios with no known optimum: bundled digit images and the chi-square paper's hypothesis test."""

from __future__ import annotations

import numpy as np
import pytest

from privbench.datasets import InputError, make_scenario, task_for
from privbench.datasets.labelled import Digits, HypothesisTesting, image_partition
from privbench.datasets.real import load_digits
from privbench.datasets.scenarios import SCENARIOS


def _one_line(exc_info) -> str:
    msg = str(exc_info.value)
    assert msg and "\n" not in msg
    return msg


def test_registered_with_their_params():
    for name in ("mnist-subset", "digits", "hypothesis-testing"):
        assert name in SCENARIOS
    sc = make_scenario("digits", {"labeling": "ge5-parity"})
    assert sc.id == "digits-ge5-parity" and sc.params() == {"labeling": "ge5-parity"}
    assert make_scenario("digits").labeling == "digit"
    h = make_scenario("hypothesis-testing", {"correlation": "correlated", "matrix_seed": "3"})
    assert (h.correlation, h.matrix_seed) == (0.4, 3) and h.id == "hypothesis-testing-a0.4-A3"
    assert make_scenario("hypothesis-testing").correlation == 0.25  # independent by default
    # params() round-trips through make_scenario (the store keeps them as JSON)
    assert make_scenario("hypothesis-testing", h.params()) == h


def test_image_partition_is_the_fixed_split_disjoint_and_deterministic():
    data = load_digits("digit")
    train, held = data.split(test_fraction=0.2, seed=0)
    tr, te, rows_tr, rows_te = image_partition("digits", "digit")
    assert len(rows_tr) + len(rows_te) == len(data) == 1797
    assert len(np.intersect1d(rows_tr, rows_te)) == 0
    assert np.array_equal(np.union1d(rows_tr, rows_te), np.arange(len(data)))
    assert len(rows_te) == round(0.2 * 1797)
    # the rows index the whole set: they are exactly ImageData.split's parts
    np.testing.assert_array_equal(data.images[rows_tr], train.images)
    np.testing.assert_array_equal(data.images[rows_te], held.images)
    np.testing.assert_array_equal(tr.images, train.images)
    # the partition does not depend on the labeling
    assert np.array_equal(image_partition("digits", "ge5-parity")[3], rows_te)


def test_image_draws_without_replacement_from_the_right_partition():
    sc = Digits("ge5-parity")
    full = load_digits("ge5-parity")
    _, _, rows_tr, rows_te = image_partition("digits", "ge5-parity")
    assert sc.max_n == len(rows_tr) == 1438
    d = sc.draw("train", sc.max_n, np.random.default_rng(5))
    assert len(np.unique(d.rows)) == sc.max_n and set(d.rows) == set(rows_tr)
    np.testing.assert_array_equal(d.samples.u, full.flat[d.rows])
    np.testing.assert_array_equal(d.samples.s, (full.labels[d.rows] >= 5).astype(int))
    h = sc.draw("held-out", 50, np.random.default_rng(5))
    assert set(h.rows) <= set(rows_te)
    # same seed, same rows; sample() is the train partition's draw
    again = sc.sample(100, np.random.default_rng(9))
    np.testing.assert_array_equal(again.u, sc.sample(100, np.random.default_rng(9)).u)
    assert again.u.shape == (100, 64) and again.u.min() >= 0 and again.u.max() <= 1


def test_image_derived_labels():
    sc = Digits("digit")
    d = sc.draw("held-out", None, np.random.default_rng(0))
    digit = load_digits().labels[d.rows]
    np.testing.assert_array_equal(d.labels["digit"], digit)
    np.testing.assert_array_equal(d.labels["circle"], [int(x in (0, 6, 8, 9)) for x in digit])
    np.testing.assert_array_equal(d.labels["ge5"], [int(x >= 5) for x in digit])
    np.testing.assert_array_equal(d.labels["parity"], [x % 2 for x in digit])
    np.testing.assert_array_equal(d.samples.s, digit)  # labeling digit: S is the digit
    assert d.n_classes == {"digit": 10, "circle": 2, "ge5": 2, "parity": 2}
    prior = sc.label_prior("circle", "held-out")
    assert prior.shape == (2,) and prior[1] == pytest.approx(np.isin(digit, (0, 6, 8, 9)).mean())


def test_tasks():
    t = task_for(Digits("ge5-parity"), "useful", "map")
    assert (t.kind, t.distortion, t.n_s, t.d_u, t.image_shape) == ("image", "xent", 2, 64, (8, 8))
    assert task_for(Digits("digit"), "full", "mi").n_s == 10
    h = task_for(HypothesisTesting(), "full", "map")
    assert (h.kind, h.distortion, h.n_s, h.d_u, h.d_w) == ("mixture", "mse", 2, 5, 6)


@pytest.mark.parametrize("name, params, match", [
    ("digits", {"labeling": "parity"}, "labeling='parity' is unknown"),
    ("mnist-subset", {"labeling": "circle"}, "labeling='circle' is unknown"),
    ("digits", {"shape": "8"}, "parameter 'shape' is unknown"),
    ("hypothesis-testing", {"correlation": "strong"}, "correlation='strong'"),
    ("hypothesis-testing", {"correlation": "0.5"}, r"outside \(0, 0.5\)"),
    ("hypothesis-testing", {"correlation": "0"}, r"outside \(0, 0.5\)"),
    ("hypothesis-testing", {"correlation": -0.1}, r"outside \(0, 0.5\)"),
    ("hypothesis-testing", {"matrix_seed": "x"}, "'x' is not an integer"),
    ("hypothesis-testing", {"matrix_seed": "-1"}, "matrix_seed=-1 must be an integer >= 0"),
    ("hypothesis-testing", {"matrix_seed": 1.5}, "matrix_seed=1.5 must be an integer >= 0"),
])
def test_bad_params(name, params, match):
    with pytest.raises(InputError, match=match) as e:
        make_scenario(name, params)
    _one_line(e)


def test_too_many_rows_names_the_maximum():
    sc = Digits()
    with pytest.raises(InputError, match="maximum 1438") as e:
        sc.sample(1439, np.random.default_rng(0))
    _one_line(e)
    with pytest.raises(InputError, match="maximum 359"):
        sc.draw("held-out", 360, np.random.default_rng(0))
    with pytest.raises(InputError, match="part='test' is unknown"):
        sc.draw("test", 10, np.random.default_rng(0))


@pytest.mark.parametrize("corr, a", [("independent", 0.25), ("correlated", 0.4), ("0.1", 0.1)])
def test_hypothesis_testing_joint_frequencies(corr, a):
    sc = make_scenario("hypothesis-testing", {"correlation": corr})
    n = 200_000
    d = sc.draw("train", n, np.random.default_rng(1))
    s, u = d.labels["s"], d.labels["u"]
    np.testing.assert_array_equal(d.samples.s, s)
    for (si, ui), p in {(1, 1): a, (0, 0): a, (1, 0): 0.5 - a, (0, 1): 0.5 - a}.items():
        freq = np.mean((s == si) & (u == ui))
        assert abs(freq - p) < 4 * np.sqrt(p * (1 - p) / n), (si, ui, freq, p)
    assert sc.label_prior("s").tolist() == [0.5, 0.5]


def test_hypothesis_testing_observation_structure():
    """X = A [S'^2, U'^2, S'U', S', U']: undoing A gives features with that algebra."""
    sc = HypothesisTesting("correlated", matrix_seed=7)
    a = sc.matrix()
    np.testing.assert_array_equal(a, np.random.default_rng(7).standard_normal((5, 5)))
    d = sc.draw("held-out", 20_000, np.random.default_rng(2))
    x = d.samples.u
    assert x.shape == (20_000, 5)
    f = np.linalg.solve(a, x.T).T
    np.testing.assert_allclose(f[:, 0], f[:, 3] ** 2, atol=1e-8)
    np.testing.assert_allclose(f[:, 1], f[:, 4] ** 2, atol=1e-8)
    np.testing.assert_allclose(f[:, 2], f[:, 3] * f[:, 4], atol=1e-8)
    # S' ~ N(S, 1) with S = -1/+1: the mean of S' given the label is +-1, the spread 1
    sp, s = f[:, 3], d.labels["s"]
    for label, mean in ((0, -1.0), (1, 1.0)):
        assert abs(sp[s == label].mean() - mean) < 0.05 and abs(sp[s == label].std() - 1.0) < 0.05
    # another matrix seed, another matrix
    assert not np.allclose(HypothesisTesting("correlated", 8).matrix(), a)


def test_image_logloss_task_carries_the_utility_label() -> None:
    """Images under ``logloss``: W is still the image, U's label rides in Samples.utility (n_u classes)."""
    from privbench.datasets import InputError, Samples, Task, make_scenario

    for labeling, n_s, label in (("digit", 10, "circle"), ("ge5-parity", 2, "parity")):
        sc = make_scenario("digits", {"labeling": labeling})
        task = sc.task("full", "mi", "logloss")
        assert (task.kind, task.distortion, task.n_s, task.n_u, task.d_u) == ("image", "logloss", n_s, 2, 64)
        draw = sc.draw("train", 200, np.random.default_rng(0))
        checked = task.check_samples(draw.samples)
        assert set(checked.utility) == {label} and np.array_equal(checked.utility[label], draw.labels[label])
        assert task.observe(checked).shape == (200, 65)  # [S, image]
        with pytest.raises(InputError, match="utility"):
            task.check_samples(Samples(draw.samples.s, draw.samples.u))
        assert sc.task("useful", "mi").distortion == "xent"
        assert task.utility == ((label, 2),) and sc.task("useful", "mi").utility == ((label, 2),)
    with pytest.raises(InputError, match="n_u"):
        Task("image", "useful", "mi", "logloss", n_s=2, d_u=4)
    with pytest.raises(InputError, match="exactly one utility label"):
        Task("image", "useful", "mi", "logloss", n_s=2, n_u=2, d_u=4)
    with pytest.raises(InputError, match="outside the alphabet"):
        Task("image", "useful", "mi", "logloss", n_s=2, n_u=2, d_u=1, utility=(("lbl", 2),)).check_samples(
            Samples(np.array([0, 1]), np.array([[0.1], [0.2]]), {"lbl": np.array([0, 2])}))
    with pytest.raises(InputError, match="allowed: mse"):
        make_scenario("hypothesis-testing", {}).task("useful", "mi", "logloss")
    with pytest.raises(InputError, match="allowed: xent, logloss"):
        make_scenario("digits", {}).task("useful", "mi", "hamming")
