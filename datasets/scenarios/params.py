"""Scenario parameters: declarations for the CLI and the parsers of their values."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ..errors import InputError
from ..limits import MAX_ALPHABET, MAX_DEPTH, MAX_MAGNITUDE

REQUIRED = object()


@dataclass(frozen=True)
class Param:
    """Declaration of one scenario parameter for the CLI and ``list scenarios``."""

    name: str
    parse: Callable[[str], Any]
    default: Any
    help: str

    @property
    def required(self) -> bool:
        return self.default is REQUIRED


def fmt(x: float) -> str:
    """A number as in scenario ids (``format(x, "g")``)."""
    return format(float(x), "g")


def parse_int(text: str) -> int:
    """Parse a CLI integer (InputError naming the text)."""
    try:
        return int(text)
    except ValueError:
        raise InputError(f"{text!r} is not an integer") from None


def parse_float(text: str) -> float:
    """Parse a CLI number (InputError naming the text)."""
    try:
        return float(text)
    except ValueError:
        raise InputError(f"{text!r} is not a number") from None


def parse_float_list(text: str) -> tuple[float, ...]:
    """Parse a comma-separated list of numbers."""
    parts = [t for t in str(text).replace(" ", "").split(",") if t]
    if not parts:
        raise InputError(f"{text!r} is not a comma-separated list of numbers")
    return tuple(parse_float(t) for t in parts)


def parse_matrix(text: str) -> tuple[tuple[float, ...], ...]:
    """Parse a JSON matrix (or take a nested sequence) as a tuple of float rows."""
    if isinstance(text, str) and len(text) - len(text.lstrip("[")) > MAX_DEPTH:
        raise InputError(f"{short(text)} is nested deeper than {MAX_DEPTH} levels (not a matrix)")
    try:
        value = json.loads(text) if isinstance(text, str) else text
    except (json.JSONDecodeError, RecursionError):
        raise InputError(f"{short(text)} is not a JSON matrix such as [[0.5, 0], [0, 0.5]]") from None
    return as_matrix(value, text)


def as_matrix(value: Any, shown: Any) -> tuple[tuple[float, ...], ...]:
    """A finite 2-d numeric matrix as a tuple of float rows (InputError showing ``shown``)."""
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError, OverflowError, RecursionError):
        raise InputError(f"{short(shown)} is not a numeric matrix") from None
    if arr.ndim == 0:
        arr = arr.reshape(1, 1)
    if arr.ndim != 2 or arr.size == 0:
        raise InputError(f"{short(shown)} is not a 2-d matrix")
    if not np.all(np.isfinite(arr)):
        raise InputError(f"{short(shown)} has entries that are not finite numbers")
    if max(arr.shape) > MAX_ALPHABET:
        raise InputError(f"{short(shown)} has shape {arr.shape}: a side exceeds the limit {MAX_ALPHABET} "
                         "(privbench.datasets.limits.MAX_ALPHABET)")
    if np.abs(arr).max() > MAX_MAGNITUDE:
        raise InputError(f"{short(shown)} has an entry of magnitude {np.abs(arr).max():g}, beyond the limit "
                         f"{MAX_MAGNITUDE:g} (privbench.datasets.limits.MAX_MAGNITUDE)")
    return tuple(tuple(float(x) for x in row) for row in arr)


def short(value: Any, n: int = 80) -> str:
    """``repr(value)``, cut to ``n`` characters (error messages stay one readable line)."""
    text = repr(value)
    return text if len(text) <= n else text[:n - 3] + "..."


def digest(*arrays: Any) -> str:
    """A short stable hash of float arrays (for scenario ids)."""
    h = hashlib.sha1()
    for a in arrays:
        h.update(np.ascontiguousarray(np.asarray(a, dtype=float)).tobytes())
        h.update(b"|")
    return h.hexdigest()[:10]


def show(arr: np.ndarray) -> str:
    """An array as compact JSON (6 decimals) for error messages."""
    return json.dumps(np.round(arr, 6).tolist())
