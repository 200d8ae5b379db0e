"""What a learner serves: :class:`Serves`, the declaration suites and ``privbench check`` select cases by.

A learner declares it as a class attribute (``serves = Serves(kinds=("finite",), n_s=2, n_u=2)``);
the default, ``Serves()``, is every task.  The older form, a tuple of task kinds
(``serves = ("finite",)``), still works and means ``Serves(kinds=...)``.  Observations and
privacy metrics stay the learner's own attributes (``observations``, ``privacies``: the
first privacy is the one it trains for when a task asks for another).

Sizes are ranges ``(least, most)`` with ``most`` None for no limit, or one integer for
exactly that size.  A size the task does not have (``d_s`` of a finite task) is not
checked.  Pure Python: the bench reads it without importing torch.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator

from privbench.datasets.errors import InputError
from privbench.datasets.vocabulary import DISTORTIONS, TASK_KINDS

#: The task sizes a declaration may limit (attributes of :class:`~privbench.datasets.tasks.Task`).
SIZES = ("n_s", "n_u", "n_z", "d_s", "d_u")
ANY = (1, None)


def size_range(name: str, value: Any) -> tuple[int, int | None]:
    """``value`` (None, an int, or a (least, most) pair with most None) as a (least, most) pair."""
    if value is None:
        return ANY
    pair = (value, value) if isinstance(value, int) and not isinstance(value, bool) else value
    ok = isinstance(pair, (tuple, list)) and len(pair) == 2
    lo, hi = pair if ok else (None, None)
    ok = ok and isinstance(lo, int) and not isinstance(lo, bool) and lo >= 1 and (
        hi is None or (isinstance(hi, int) and not isinstance(hi, bool) and hi >= lo))
    if not ok:
        raise InputError(f"Serves {name}={value!r} must be an integer >= 1 or a pair (least, most) "
                         "with least >= 1 and most >= least or None")
    return int(lo), None if hi is None else int(hi)  # type: ignore[arg-type]


def names(what: str, value: Any, allowed: tuple[str, ...]) -> tuple[str, ...]:
    """``value`` (a name or a sequence of names, each in ``allowed``) as a tuple."""
    value = (value,) if isinstance(value, str) else value
    if not isinstance(value, (tuple, list)) or not all(isinstance(v, str) for v in value):
        raise InputError(f"Serves {what}={value!r} must be a tuple of names (allowed: {', '.join(allowed)})")
    bad = [v for v in value if v not in allowed]
    if bad:
        raise InputError(f"Serves {what}: {bad[0]!r} is unknown (allowed: {', '.join(allowed)})")
    return tuple(value)


def show_range(name: str, rng: tuple[int, int | None]) -> str:
    lo, hi = rng
    if hi is None:
        return f"{name} >= {lo}"
    return f"{name} = {lo}" if lo == hi else f"{lo} <= {name} <= {hi}"


@dataclass(frozen=True)
class Serves:
    """The tasks a learner can train for (the default: every task).

    Attributes
    ----------
    kinds : tuple of str
        Task kinds (``privbench.datasets.vocabulary.TASK_KINDS``).
    n_s, n_u, n_z, d_s, d_u : int or (int, int or None)
        Alphabet sizes |S|, |U|, |Z| and dimensions of S and U: exactly one size, or
        (least, most) with most None for no upper limit.  Default: any.
    distortions : tuple of str
        Distortion functions (``hamming``, ``matrix``, ``mse``, ``xent``).

    Iterating over it (or ``kind in serves``) goes over its kinds, as over the older tuple form.
    """

    kinds: tuple[str, ...] = TASK_KINDS
    n_s: Any = None
    n_u: Any = None
    n_z: Any = None
    d_s: Any = None
    d_u: Any = None
    distortions: tuple[str, ...] = DISTORTIONS

    def __post_init__(self) -> None:
        object.__setattr__(self, "kinds", names("kinds", self.kinds, TASK_KINDS))
        object.__setattr__(self, "distortions", names("distortions", self.distortions, DISTORTIONS))
        for name in SIZES:
            object.__setattr__(self, name, size_range(name, getattr(self, name)))

    def __iter__(self) -> Iterator[str]:
        return iter(self.kinds)

    def __contains__(self, kind: object) -> bool:
        return kind in self.kinds

    def refusal(self, task: Any) -> str | None:
        """Why a task is outside this declaration (one phrase), or None when it is served."""
        if task.kind not in self.kinds:
            return f"serves task kinds {', '.join(self.kinds)}, not {task.kind}"
        if task.distortion not in self.distortions:
            return f"serves distortions {', '.join(self.distortions)}, not {task.distortion}"
        for name in SIZES:
            value = getattr(task, name, None)
            lo, hi = getattr(self, name)
            if value is not None and (value < lo or (hi is not None and value > hi)):
                return f"serves {show_range(name, (lo, hi))}, not {name}={value}"
        return None

    def describe(self) -> str:
        """One line: kinds, then every limit that is not 'any'."""
        parts = [f"kinds {', '.join(self.kinds)}"]
        parts += [show_range(n, getattr(self, n)) for n in SIZES if getattr(self, n) != ANY]
        if self.distortions != DISTORTIONS:
            parts.append(f"distortions {', '.join(self.distortions)}")
        return "; ".join(parts)


def as_serves(value: Any) -> Serves:
    """A learner's ``serves`` attribute as a :class:`Serves` (a tuple of kinds is the older form)."""
    if isinstance(value, Serves):
        return value
    return Serves(kinds=value)
