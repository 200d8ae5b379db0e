"""The one exception type for bad input anywhere in privbench.

Every layer raises :class:`InputError` with a one-line message that names the
bad value and what is allowed; the CLI prints that line and exits with 2.
It subclasses :class:`ValueError` so library users can catch it either way.
"""

from __future__ import annotations


class InputError(ValueError):
    """Bad user input: the message is one line naming the value and what is allowed."""


def check_probability(name: str, value: float) -> float:
    """Return ``value`` as float if it lies in [0, 1], else raise :class:`InputError`."""
    v = check_finite(name, value)
    if not 0.0 <= v <= 1.0:
        raise InputError(f"{name}={value!r} is outside [0, 1]")
    return v


def check_finite(name: str, value: float) -> float:
    """Return ``value`` as a finite float, else raise :class:`InputError`."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise InputError(f"{name}={value!r} is not a number") from None
    if v != v or v in (float("inf"), float("-inf")):
        raise InputError(f"{name}={value!r} must be a finite number")
    return v


def check_positive(name: str, value: float) -> float:
    """Return ``value`` as float if it is finite and > 0, else raise :class:`InputError`."""
    v = check_finite(name, value)
    if v <= 0:
        raise InputError(f"{name}={value!r} must be > 0")
    return v
