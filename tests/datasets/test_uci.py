"""UCI-Abalone reader, the bundled UCI files, and the adult / abalone scenarios (on generated tables)."""

from __future__ import annotations

import gzip
import hashlib

import numpy as np
import pytest

from privbench.datasets import make_scenario
from privbench.datasets.errors import InputError
from privbench.datasets.real import (ABALONE_SEXES, AdultData, UCI_SHA256, load_abalone, load_adult,
                                     read_abalone, read_adult, uci_path)
from privbench.datasets.real import uci_files
from privbench.datasets import tabular

ABALONE_ROWS = [
    "M,0.455,0.365,0.095,0.514,0.2245,0.101,0.15,15",
    "F,0.53,0.42,0.135,0.677,0.2565,0.1415,0.21,9",
    "I,0.33,0.255,0.08,0.205,0.0895,0.0395,0.055,7",
]


def test_read_abalone_encoding(tmp_path):
    p = tmp_path / "abalone.data.gz"
    p.write_bytes(gzip.compress(("\n".join(ABALONE_ROWS) + "\n\n").encode()))
    d = read_abalone(p)
    assert d.x.shape == (3, 7) and len(d) == 3
    np.testing.assert_array_equal(d.sex, [0, 1, 2])
    assert ABALONE_SEXES == ("M", "F", "I")
    np.testing.assert_array_equal(d.rings, [15, 9, 7])
    assert d.x[0, 0] == 0.455 and d.x[1, 6] == 0.21 and d.x[2, 4] == 0.0895


@pytest.mark.parametrize("line,match", [
    ("X,0.4,0.3,0.1,0.5,0.2,0.1,0.1,9", r"sex='X' \(allowed: M, F, I\)"),
    ("M,0.4,0.3,0.1,0.5,0.2,0.1,9", "has 8 fields"),
    ("M,0.4,abc,0.1,0.5,0.2,0.1,0.1,9", "diameter='abc' is not a number"),
    ("M,0.4,0.3,inf,0.5,0.2,0.1,0.1,9", "height='inf' must be finite"),
    ("M,0.4,0.3,0.1,0.5,0.2,0.1,0.1,9.5", "rings='9.5' must be a non-negative integer"),
])
def test_malformed_abalone_is_refused(tmp_path, line, match):
    p = tmp_path / "abalone.data"
    p.write_text(ABALONE_ROWS[0] + "\n" + line + "\n")
    with pytest.raises(InputError, match="line 2: " + match if "fields" not in match else "line 2 " + match):
        read_abalone(p)


def test_abalone_file_errors(tmp_path):
    with pytest.raises(InputError, match="does not exist"):
        read_abalone(tmp_path / "nope")
    (tmp_path / "empty").write_text("\n")
    with pytest.raises(InputError, match="has no data rows"):
        read_abalone(tmp_path / "empty")


def test_bundled_file_names_and_checksums_are_checked(tmp_path, monkeypatch):
    with pytest.raises(InputError, match=r"'iris.data' is not bundled \(allowed: adult.data, adult.test, abalone.data\)"):
        uci_path("iris.data")
    with pytest.raises(InputError, match=r"part='valid' is unknown \(allowed: train, test\)"):
        load_adult("valid")
    fake = tmp_path / "abalone.data.gz"
    fake.write_bytes(gzip.compress(("\n".join(ABALONE_ROWS) + "\n").encode()))
    monkeypatch.setattr(uci_files, "DATA_DIR", tmp_path)
    with pytest.raises(InputError, match="has sha256 .* not the UCI original's de37cdcd"):
        uci_path("abalone.data")
    assert uci_path("abalone.data", check=False) == fake
    with pytest.raises(InputError, match="is missing"):
        uci_path("adult.data")


@pytest.mark.bundled
def test_the_bundled_uci_files_are_the_uci_originals():
    """The one test that needs the shipped data: sha256 of each file and the row counts the paper uses."""
    for name, digest in UCI_SHA256.items():
        with gzip.open(uci_path(name, check=False), "rb") as fh:
            assert hashlib.sha256(fh.read()).hexdigest() == digest, name
    tr, te = load_adult("train"), load_adult("test")
    assert (len(tr), len(te)) == (30162, 15060)  # 45,222 rows without a missing value
    ab = load_abalone()
    assert len(ab) == 4177 and np.bincount(ab.sex).tolist() == [1528, 1307, 1342]


# --------------------------------------------------------------------------
# scenarios on generated tables
# --------------------------------------------------------------------------


def _abalone(n: int, seed: int):
    from privbench.datasets.real.abalone import AbaloneData

    rng = np.random.default_rng(seed)
    sex = rng.integers(0, 3, n)
    rings = rng.integers(1, 25, n)
    x = rng.random((n, 7)) + sex[:, None] * 0.1
    return AbaloneData(x, sex, rings)


@pytest.fixture
def fake_abalone(monkeypatch):
    data = _abalone(600, 4)
    monkeypatch.setattr(uci_files, "load_abalone", lambda: data)
    tabular.abalone_partition.cache_clear()
    yield data
    tabular.abalone_partition.cache_clear()


def test_abalone_scenario_partitions_and_labels(fake_abalone):
    data = fake_abalone
    sc = make_scenario("abalone", {})
    assert sc.id == "abalone-mfi" and sc.n_s == 3
    task = sc.task("full")
    assert (task.kind, task.n_s, task.d_u, task.distortion) == ("mixture", 3, 7, "mse")
    assert sc.part_size("train") == 480 and sc.part_size("held-out") == 120
    tr = sc.draw("train", None, np.random.default_rng(0))
    te = sc.draw("held-out", None, np.random.default_rng(0))
    # every row in exactly one part: the label counts add up to the table's
    assert np.array_equal(np.bincount(tr.labels["sex"], minlength=3) + np.bincount(te.labels["sex"], minlength=3),
                          np.bincount(data.sex, minlength=3))
    assert int(tr.labels["rings"].sum() + te.labels["rings"].sum()) == int((data.rings > 10).sum())
    np.testing.assert_allclose(tr.samples.u.mean(axis=0), 0, atol=1e-12)
    np.testing.assert_allclose(tr.samples.u.std(axis=0), 1, atol=1e-12)
    assert np.array_equal(tr.samples.s, tr.labels["sex"])
    np.testing.assert_allclose(sc.label_prior("sex", "held-out"), np.bincount(te.labels["sex"], minlength=3) / 120)
    with pytest.raises(InputError, match="n=481 exceeds the train partition of abalone"):
        sc.draw("train", 481, np.random.default_rng(0))
    with pytest.raises(InputError, match="label='age' is unknown"):
        sc.label_prior("age")
    a, b = sc.sample(50, np.random.default_rng(9)), sc.sample(50, np.random.default_rng(9))
    assert np.array_equal(a.u, b.u) and len(np.unique(a.u[:, 0])) == 50  # without replacement
    # the utility label rings > 10 is declared by the task and carried by the samples, row by row
    assert task.utility == (("rings", 2),) and set(tr.samples.utility) == {"rings"}
    assert np.array_equal(tr.samples.utility["rings"], tr.labels["rings"])
    rows = {tuple(np.round(x, 9)): r for x, r in zip(tr.samples.u, tr.labels["rings"])}
    assert all(rows[tuple(np.round(x, 9))] == r for x, r in zip(a.u, a.utility["rings"]))
    assert task.check_samples(a).utility["rings"].dtype == np.int64


def test_abalone_without_infants(fake_abalone):
    sc = make_scenario("abalone", {"infants": "drop"})
    n = int((fake_abalone.sex != 2).sum())
    assert sc.id == "abalone-mf" and sc.n_s == 2 and sc.task("useful").n_s == 2
    assert sc.part_size("train") + sc.part_size("held-out") == n
    assert set(np.unique(sc.draw("train", None, np.random.default_rng(0)).labels["sex"])) <= {0, 1}
    with pytest.raises(InputError, match=r"infants='some' is unknown \(allowed: keep, drop\)"):
        make_scenario("abalone", {"infants": "some"})


ADULT_ROWS = [
    "39, State-gov, 77516, Bachelors, 13, Never-married, Adm-clerical, Not-in-family, White, Male, 2174, 0, 40, United-States, <=50K",
    "50, Self-emp-not-inc, 83311, Bachelors, 13, Married-civ-spouse, Exec-managerial, Husband, White, Male, 0, 0, 13, United-States, >50K",
    "38, Private, 215646, HS-grad, 9, Divorced, ?, Not-in-family, Black, Female, 0, 0, 40, ?, <=50K",
    "31, Private, 45781, Masters, 14, Never-married, Prof-specialty, Not-in-family, White, Female, 14084, 0, 50, Holand-Netherlands, >50K",
]


def test_adult_scenario_uses_uci_split_and_log_capital(tmp_path, monkeypatch):
    p = tmp_path / "adult.data"
    p.write_text("\n".join(ADULT_ROWS) + "\n")
    d = read_adult(p)  # 3 rows (one has a missing value)
    held = AdultData(d.x[:2].copy(), d.sex[:2].copy(), d.income[:2].copy(), d.feature_names)
    monkeypatch.setattr(uci_files, "load_adult", lambda part: d if part == "train" else held)
    tabular.adult_partition.cache_clear()
    try:
        sc = make_scenario("adult", {})
        assert sc.id == "adult" and sc.part_size("train") == 3 and sc.part_size("held-out") == 2
        assert sc.task("full").d_u == 103 and sc.task("full").n_s == 2
        tr = sc.draw("train", None, np.random.default_rng(0))
        gain = np.log1p(np.array([2174.0, 0.0, 14084.0]))
        j = list(d.feature_names).index("capital-gain")
        np.testing.assert_allclose(tr.samples.u[:, j], (gain - gain.mean()) / gain.std())
        np.testing.assert_array_equal(tr.labels["sex"], [1, 1, 0])
        np.testing.assert_array_equal(tr.labels["income"], [0, 1, 1])
        assert sc.task("full").utility == (("income", 2),)
        np.testing.assert_array_equal(tr.samples.utility["income"], [0, 1, 1])
        k = list(d.feature_names).index("education=Masters")
        np.testing.assert_array_equal(tr.samples.u[:, k], [0, 0, 1])  # one-hot columns are not rescaled
    finally:
        tabular.adult_partition.cache_clear()


def test_fresh_classifiers_on_a_table_use_its_partition_capped_by_n_eval(fake_abalone):
    """The bench's evaluators on a table: whole partitions, or n_eval rows of each where n_eval is smaller."""
    from privbench.bench.evaluators import evaluate
    from privbench.learners import make_learner

    sc = make_scenario("abalone", {})
    task = sc.task("full", "map")
    mech = make_learner("identity").fit(sc.sample(100, np.random.default_rng(0)), task, [0.0], seed=1)[0]
    full = {e.metric: e for e in evaluate(mech, sc, "full", "map", n_eval=1000, seed=2)}
    assert full["map"].detail["n_train"] == 480 and full["map"].detail["n_test"] == 120
    capped = {e.metric: e for e in evaluate(mech, sc, "full", "map", n_eval=200, seed=2)}
    assert capped["map"].detail["n_train"] == 200 and capped["map"].detail["n_test"] == 120
    assert full["distortion"].value == 0.0 and set(full["utility"].detail["accuracy"]) == {"sex", "rings"}
    assert full["utility"].detail["label"] == "rings"
