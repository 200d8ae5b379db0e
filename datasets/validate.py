"""The one set of validators for values that come from users.

Each returns the value in canonical form or raises
:class:`~privbench.datasets.errors.InputError` with one line naming the bad value
and what is allowed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from .errors import InputError
from .limits import MAX_MAGNITUDE, MIN_SCALE


def check_finite(name: str, value: Any) -> float:
    """Return ``value`` as a finite float, else raise :class:`InputError`."""
    try:
        v = float(value)
    except (TypeError, ValueError, OverflowError):
        raise InputError(f"{name}={value!r} is not a number") from None
    if not math.isfinite(v):
        raise InputError(f"{name}={value!r} must be a finite number")
    return v


def check_magnitude(name: str, value: Any, limit: float = MAX_MAGNITUDE) -> float:
    """Return ``value`` as a finite float of magnitude <= ``limit`` (:data:`~.limits.MAX_MAGNITUDE`)."""
    v = check_finite(name, value)
    if abs(v) > limit:
        raise InputError(f"{name}={value!r} is too large (the limit is {limit:g} in magnitude)")
    return v


def check_scale(name: str, value: Any) -> float:
    """A positive scale (standard deviation, variance) in [:data:`~.limits.MIN_SCALE`, :data:`~.limits.MAX_MAGNITUDE`]."""
    v = check_positive(name, value)
    if not MIN_SCALE <= v <= MAX_MAGNITUDE:
        raise InputError(f"{name}={value!r} is outside [{MIN_SCALE:g}, {MAX_MAGNITUDE:g}] (the documented limits)")
    return v


def check_probability(name: str, value: Any) -> float:
    """Return ``value`` as float if it lies in [0, 1], else raise :class:`InputError`."""
    v = check_finite(name, value)
    if not 0.0 <= v <= 1.0:
        raise InputError(f"{name}={value!r} is outside [0, 1]")
    return v


def check_positive(name: str, value: Any) -> float:
    """Return ``value`` as float if it is finite and > 0, else raise :class:`InputError`."""
    v = check_finite(name, value)
    if v <= 0:
        raise InputError(f"{name}={value!r} must be > 0")
    return v


def is_int(value: Any) -> bool:
    """True for Python and numpy integers (not bools)."""
    return not isinstance(value, bool) and isinstance(value, (int, np.integer))


def check_int(name: str, value: Any, minimum: int | None = None, what: str = "",
              maximum: int | None = None) -> int:
    """Return ``value`` as int if it is an integer in [``minimum``, ``maximum``], else raise :class:`InputError`.

    ``what`` (optional) is appended to the message in parentheses; ``maximum`` is a
    documented limit (:mod:`privbench.datasets.limits`) and named as such.
    """
    if not is_int(value) or (minimum is not None and value < minimum):
        bound = f" >= {minimum}" if minimum is not None else ""
        raise InputError(f"{name}={value!r} must be an integer{bound}" + (f" ({what})" if what else ""))
    if maximum is not None and value > maximum:
        raise InputError(f"{name}={value!r} exceeds the limit {maximum} (privbench.datasets.limits)")
    return int(value)


def check_choice(name: str, value: Any, allowed: Sequence[Any]) -> Any:
    """Return ``value`` if allowed, else InputError naming it and the allowed values."""
    if value not in allowed:
        raise InputError(f"{name}={value!r} is unknown (allowed: {', '.join(map(str, allowed))})")
    return value


def check_budget(budget: Any) -> float:
    """One distortion budget: a finite number >= 0."""
    b = check_finite("budget", budget)
    if b < 0:
        raise InputError(f"budget={budget!r} must be a finite number >= 0")
    return b


def check_budgets(budgets: Any, allow_empty: bool = False) -> np.ndarray:
    """Budgets as a 1-d float array of finite numbers >= 0.

    A single number is a list of one.  An empty list is refused unless
    ``allow_empty`` (a curve over no budgets is empty; a learner needs one).
    """
    try:
        arr = np.atleast_1d(np.asarray(budgets, dtype=float))
    except (TypeError, ValueError, OverflowError):
        raise InputError(f"budget={budgets!r} is not a number or a list of numbers") from None
    if arr.ndim != 1 or (arr.size == 0 and not allow_empty):
        raise InputError(f"budget={budgets!r} must be a number or a non-empty 1-d list")
    for b in arr:
        if not math.isfinite(b) or b < 0:
            raise InputError(f"budget={b!r} must be a finite number >= 0")
    return arr
