"""What a learner is told about its problem: the :class:`Task`.

A learner never receives a scenario (it could read the optimum off it); it
gets training :class:`~privbench.datasets.samples.Samples` and a Task: the kind
of data, alphabet sizes or dimensions, the distortion function, the privacy
objective and the observation model.  Pure numpy.

Task kinds
----------
``finite``    S and U on finite alphabets {0..n_s-1}, {0..n_u-1}; the release Z on
              {0..n_z-1} with distortion matrix d[u][z] (Hamming: n_z = n_u).
``gaussian``  S in R^d_s, U in R^d_u (continuous), MSE distortion, Z in R^d_u.
``mixture``   S in {0..n_s-1}, U in R^d_u (GAP's binary Gaussian mixture), MSE.
``image``     S in {0..n_s-1} (a label), U in [0, 1]^d_u (flattened image of
              ``image_shape``), per-pixel cross-entropy (``xent``) or MSE distortion;
              or ``logloss``: utility is a label derived from the image
              (``Samples.utility`` in {0..n_u-1}), the distortion H(label | Z) in nats; the
              mechanism still observes the image and releases Z in R^d_u.

What the mechanism observes, W (see :meth:`Samples.observed`): ``useful`` is
W = U; ``full`` is W = (S, U): for ``finite`` the flat index s * n_u + u, for
``gaussian`` the columns [S, U], for ``mixture``/``image`` the columns [S, U]
with S as a float column.

Utility labels (``Task.utility``): a task may declare labels beside S that the
training samples carry (``Samples.utility``), e.g. ``circle`` for the digit
images with labeling ``digit``, ``u`` for the chi-square paper's hypothesis
test.  Learners that train against a utility classifier (the chi-square
sanitizer's and the latent filter's ``formulation="utility"``) read them;
every other learner ignores them.  They never enter W or the release.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from .errors import InputError
from .samples import OBSERVATIONS, Samples

from .vocabulary import DISTORTIONS, PRIVACIES, TASK_KINDS


@dataclass(frozen=True)
class Task:
    """A learner's problem statement (no model parameters, no optimum).

    Attributes
    ----------
    kind : {"finite", "gaussian", "mixture", "image"}
    observation : {"useful", "full"}
    privacy : {"mi", "map", "chi2"}
        The privacy objective the learner should minimise.
    distortion : {"hamming", "matrix", "mse", "xent", "logloss"}
        ``logloss``: H(U | Z) in nats, the privacy funnel.  Finite: no distortion matrix, and
        ``n_z`` is free (theory's optima need at most n_w + 1 outputs).  Image: H(label | Z) of the
        utility label (``Samples.utility``, ``n_u`` classes) derived from the image U.
    n_s, n_u, n_z : int or None
        Alphabet sizes (finite S; finite U and Z; for an image ``logloss`` task n_u is the
        utility label's).
    d_s, d_u : int or None
        Dimensions of continuous S and U (Z has U's dimension).
    distortion_matrix : tuple of tuples or None
        d[u][z] for ``matrix`` (and ``hamming``, where it is 1 - I).
    image_shape : tuple of int or None
        For ``image``: the shape of one image, prod = d_u.
    utility : tuple of (str, int) pairs
        Utility labels the training samples carry beside S: (name, number of classes), each
        label an integer in 0..n_classes-1 per row (``Samples.utility[name]``); empty (the
        default) when there are none.  Names are unique non-empty strings; n_classes >= 2.
    """

    kind: str
    observation: str
    privacy: str = "mi"
    distortion: str = "hamming"
    n_s: int | None = None
    n_u: int | None = None
    n_z: int | None = None
    d_s: int | None = None
    d_u: int | None = None
    distortion_matrix: tuple[tuple[float, ...], ...] | None = None
    image_shape: tuple[int, ...] | None = None
    utility: tuple[tuple[str, int], ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "utility", _utility_labels(self.utility))
        _choice("task kind", self.kind, TASK_KINDS)
        _choice("observation", self.observation, OBSERVATIONS)
        _choice("privacy", self.privacy, PRIVACIES)
        _choice("distortion", self.distortion, DISTORTIONS)
        for name in ("n_s", "n_u", "n_z", "d_s", "d_u"):
            v = getattr(self, name)
            if v is not None:
                if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                    raise InputError(f"task {name}={v!r} must be a positive integer")
                object.__setattr__(self, name, int(v))
        need = {
            "finite": ("n_s", "n_u", "n_z"),
            "gaussian": ("d_s", "d_u"),
            "mixture": ("n_s", "d_u"),
            "image": ("n_s", "d_u"),
        }[self.kind]
        missing = [n for n in need if getattr(self, n) is None]
        if missing:
            raise InputError(f"a {self.kind} task needs {', '.join(missing)}")
        if self.kind == "finite" and self.distortion == "logloss":
            if self.distortion_matrix is not None:
                raise InputError("distortion='logloss' takes no distortion_matrix (it is H(U | Z))")
        elif self.kind == "finite":
            if self.distortion not in ("hamming", "matrix"):
                raise InputError(f"distortion={self.distortion!r} is not for finite tasks "
                                 "(allowed: hamming, matrix, logloss)")
            if self.distortion_matrix is None:
                if self.distortion == "matrix" or self.n_z != self.n_u:
                    raise InputError("a finite task with a non-Hamming distortion needs distortion_matrix")
                object.__setattr__(self, "distortion_matrix",
                                   tuple(map(tuple, (1.0 - np.eye(self.n_u)).tolist())))
            d = np.asarray(self.distortion_matrix, dtype=float)
            if d.shape != (self.n_u, self.n_z) or not np.all(np.isfinite(d)) or np.any(d < 0):
                raise InputError(
                    f"distortion_matrix must be a finite non-negative ({self.n_u}, {self.n_z}) matrix, "
                    f"got shape {d.shape}")
            object.__setattr__(self, "distortion_matrix", tuple(map(tuple, d.tolist())))
        elif self.kind == "image" and self.distortion == "logloss":
            if self.n_u is None:
                raise InputError("an image task with distortion='logloss' needs n_u "
                                 "(the utility label's alphabet size)")
            if len(self.utility) != 1 or self.utility[0][1] != self.n_u:
                raise InputError(f"an image task with distortion='logloss' declares exactly one utility label with "
                                 f"n_u={self.n_u} classes (the label of H(U | Z)), got utility={self.utility!r}")
        elif self.distortion not in ("mse", "xent"):  # (not finite)
            raise InputError(f"distortion={self.distortion!r} is not for {self.kind} tasks "
                             f"(allowed: mse, xent{', logloss' if self.kind == 'image' else ''})")
        if self.distortion == "xent" and self.kind != "image":
            raise InputError("distortion='xent' is only for image tasks")
        if self.kind == "image":
            shape = tuple(int(x) for x in (self.image_shape or (self.d_u,)))
            if int(np.prod(shape)) != self.d_u:
                raise InputError(f"image_shape={shape} does not have d_u={self.d_u} pixels")
            object.__setattr__(self, "image_shape", shape)

    # ------------------------------------------------------------------
    @property
    def n_w(self) -> int | None:
        """Alphabet size of W for finite tasks (n_u, or n_s * n_u for ``full``)."""
        if self.kind != "finite":
            return None
        return self.n_u if self.observation == "useful" else self.n_s * self.n_u  # type: ignore[operator]

    @property
    def d_w(self) -> int | None:
        """Dimension of W for continuous-U tasks (d_u, plus d_s or 1 for ``full``)."""
        if self.kind == "finite":
            return None
        extra = (self.d_s if self.kind == "gaussian" else 1) if self.observation == "full" else 0
        return self.d_u + extra  # type: ignore[operator]

    @property
    def utility_classes(self) -> dict[str, int]:
        """The utility labels as an ordered dict name -> number of classes ({} when none)."""
        return dict(self.utility)

    def distortion_array(self) -> np.ndarray:
        """d[u][z] as an array, shape (n_u, n_z) (finite tasks only)."""
        if self.distortion_matrix is None:
            raise InputError(f"a {self.kind} task has no distortion matrix")
        return np.asarray(self.distortion_matrix, dtype=float)

    def to_dict(self) -> dict[str, Any]:
        """JSON-able fields (tuples as lists); :meth:`from_dict` inverts it."""
        return json.loads(json.dumps(asdict(self)))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Task":
        d = dict(data)
        if d.get("distortion_matrix") is not None:
            d["distortion_matrix"] = tuple(map(tuple, d["distortion_matrix"]))
        if d.get("image_shape") is not None:
            d["image_shape"] = tuple(d["image_shape"])
        if d.get("utility") is not None:
            d["utility"] = _utility_labels(d["utility"])
        return cls(**d)

    def with_privacy(self, privacy: str) -> "Task":
        return Task.from_dict({**self.to_dict(), "privacy": privacy})

    # ------------------------------------------------------------------
    def check_samples(self, samples: Samples) -> Samples:
        """Validate training samples against this task; return them as canonical arrays.

        Finite labels become int64 of shape (n,); continuous attributes float64 of
        shape (n, d); a finite S of a mixture/image task int64 of shape (n,); the declared
        utility labels (``Task.utility``) int64 of shape (n,) each (undeclared ones dropped).

        Raises
        ------
        InputError
            Wrong type, shape or dtype, NaN/inf, labels outside the alphabet, or
            fewer than 2 samples; the message names the value.
        """
        if not isinstance(samples, Samples):
            raise InputError(f"samples must be privbench Samples(s, u), got {type(samples).__name__}")
        if len(samples) < 2:
            raise InputError(f"samples has {len(samples)} rows; at least 2 are needed")
        if self.kind == "finite":
            s = _labels("S", samples.s, self.n_s)  # type: ignore[arg-type]
            u = _labels("U", samples.u, self.n_u)  # type: ignore[arg-type]
        elif self.kind == "gaussian":
            s = _vectors("S", samples.s, self.d_s)  # type: ignore[arg-type]
            u = _vectors("U", samples.u, self.d_u)  # type: ignore[arg-type]
        else:
            s = _labels("S", samples.s, self.n_s)  # type: ignore[arg-type]
            u = _vectors("U", samples.u, self.d_u)  # type: ignore[arg-type]
            if self.kind == "image" and (u.min() < 0 or u.max() > 1):
                raise InputError(f"image pixels must lie in [0, 1], got range [{u.min():.3g}, {u.max():.3g}]")
        return Samples(s, u, self._check_utility(samples))

    def _check_utility(self, samples: Samples) -> dict[str, np.ndarray] | None:
        """The declared utility labels of ``samples`` as int64 (n,) arrays (None when the task has none).

        Labels the task does not declare are dropped (a task without utility labels accepts
        any samples); a declared label that is missing or malformed is an InputError.
        """
        if not self.utility:
            return None
        given = dict(samples.utility or {})
        out = {}
        for name, card in self.utility:
            if name not in given:
                raise InputError(f"samples carry no utility label {name!r} (the task declares "
                                 f"{', '.join(n for n, _ in self.utility)}; pass Samples(s, u, utility={{...}}))")
            out[name] = _labels(f"utility label {name!r}", given[name], card)
        return out

    def observe(self, samples: Samples) -> np.ndarray:
        """W for (already checked) samples: int64 (n,) for finite, float64 (n, d_w) otherwise."""
        if self.kind == "finite":
            return samples.observed(self.observation, self.n_u)
        if self.observation == "useful":
            return np.asarray(samples.u, dtype=float).reshape(len(samples), -1)
        s = np.asarray(samples.s, dtype=float).reshape(len(samples), -1)
        return np.concatenate([s, np.asarray(samples.u, dtype=float).reshape(len(samples), -1)], axis=1)

    def check_w(self, w: Any) -> np.ndarray:
        """Validate what a mechanism is asked to release from: canonical W array."""
        if self.kind == "finite":
            return _labels("W", w, self.n_w)  # type: ignore[arg-type]
        return _vectors("W", w, self.d_w)  # type: ignore[arg-type]


def _utility_labels(value: Any) -> tuple[tuple[str, int], ...]:
    """Canonical ``Task.utility``: a tuple of (name, n_classes) pairs (also from a dict or JSON lists)."""
    if value is None:
        return ()
    items = list(value.items()) if isinstance(value, dict) else value
    if isinstance(items, (str, bytes)) or not isinstance(items, (tuple, list)):
        raise InputError(f"task utility={value!r} must be a sequence of (name, n_classes) pairs")
    out: list[tuple[str, int]] = []
    for item in items:
        if not isinstance(item, (tuple, list)) or len(item) != 2:
            raise InputError(f"task utility entry {item!r} must be a (name, n_classes) pair")
        name, card = item
        if not isinstance(name, str) or not name.strip():
            raise InputError(f"task utility label name {name!r} must be a non-empty string")
        if isinstance(card, bool) or not isinstance(card, (int, np.integer)) or card < 2:
            raise InputError(f"task utility label {name!r} has n_classes={card!r} (must be an integer >= 2)")
        if name in (n for n, _ in out):
            raise InputError(f"task utility label {name!r} is declared twice (names must be unique)")
        out.append((name, int(card)))
    return tuple(out)


def _choice(name: str, value: Any, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise InputError(f"{name}={value!r} is unknown (allowed: {', '.join(allowed)})")


def _labels(name: str, x: Any, card: int) -> np.ndarray:
    a = np.asarray(x)
    if a.ndim == 2 and a.shape[1] == 1:
        a = a[:, 0]
    if a.ndim != 1:
        raise InputError(f"{name} must be a 1-d array of labels, got shape {a.shape}")
    if a.dtype.kind == "f":
        if not np.all(np.isfinite(a)):
            raise InputError(f"{name} has NaN or inf values (labels must be integers 0..{card - 1})")
        if np.any(a != np.round(a)):
            raise InputError(f"{name} has non-integer values (labels must be integers 0..{card - 1})")
    elif a.dtype.kind not in "iub":
        raise InputError(f"{name} has dtype {a.dtype} (labels must be integers 0..{card - 1})")
    a = a.astype(np.int64)
    if a.size and (a.min() < 0 or a.max() >= card):
        bad = a[(a < 0) | (a >= card)][0]
        raise InputError(f"{name} has label {int(bad)} outside the alphabet 0..{card - 1}")
    return a


def _vectors(name: str, x: Any, dim: int) -> np.ndarray:
    a = np.asarray(x)
    if a.dtype.kind not in "fiub":
        raise InputError(f"{name} has dtype {a.dtype} (must be numeric)")
    a = a.astype(np.float64)
    if a.ndim == 1 and dim == 1:
        a = a[:, None]
    if a.ndim != 2 or a.shape[1] != dim:
        raise InputError(f"{name} must have shape (n, {dim}), got {a.shape}")
    if not np.all(np.isfinite(a)):
        raise InputError(f"{name} has NaN or inf values")
    return a


def task_for(scenario: Any, observation: str | None, privacy: str = "mi", distortion: str | None = None) -> Task:
    """The Task a learner gets for a scenario (what it may know: sizes, not the model).

    Each scenario class describes its own task (:meth:`Scenario.task`); ``observation``
    None means ``useful`` (``gaussian-source`` always uses ``useful``: S = U = W).
    ``distortion`` (None: the scenario's own) asks for another one, e.g. ``logloss`` for finite scenarios.
    """
    if observation is None:
        observation = "useful"
    task = getattr(scenario, "task", None)
    if not callable(task):
        raise InputError(f"scenario={scenario!r} has no task description")
    if distortion is not None:
        return task(observation, privacy, distortion)
    return task(observation, privacy)
