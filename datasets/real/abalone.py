"""The UCI Abalone table from a local CSV file (nothing is downloaded)."""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from .idx import read_bytes

ABALONE_COLUMNS = ("sex", "length", "diameter", "height", "whole-weight", "shucked-weight", "viscera-weight",
                   "shell-weight", "rings")
ABALONE_MEASUREMENTS = ABALONE_COLUMNS[1:-1]
#: The codes of the sex column, in the order of the labels 0, 1, 2: male, female, infant.
ABALONE_SEXES = ("M", "F", "I")


@dataclass(frozen=True)
class AbaloneData:
    """UCI-Abalone rows as numbers.

    Attributes
    ----------
    x : ndarray, shape (n, 7), float64
        The seven measurements (length, diameter, height, whole, shucked, viscera
        and shell weight), as given (not rescaled).
    sex : ndarray, shape (n,), int64
        0 male (M), 1 female (F), 2 infant (I).
    rings : ndarray, shape (n,), int64
        Number of rings (age in years is rings + 1.5).
    feature_names : tuple of str, length 7
    """

    x: np.ndarray
    sex: np.ndarray
    rings: np.ndarray
    feature_names: tuple[str, ...] = ABALONE_MEASUREMENTS

    def __len__(self) -> int:
        return len(self.sex)


def read_abalone(path: str | os.PathLike) -> AbaloneData:
    """Parse UCI's ``abalone.data`` (gzip detected): 9 comma-separated fields per line in the order
    of :data:`ABALONE_COLUMNS`, no header; blank lines are skipped.

    Raises
    ------
    InputError
        Missing file, wrong field count, an unknown sex code, a measurement that is
        not a finite number, rings that are not a non-negative integer; the message
        names the line and the value.
    """
    try:
        text = read_bytes(path, "UCI-Abalone").decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"UCI-Abalone file {str(path)!r} is not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    name = str(path)
    rows: list[list[float]] = []
    sex: list[int] = []
    rings: list[int] = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if not line:
            continue
        fields = [f.strip() for f in line.split(",")]
        if len(fields) != len(ABALONE_COLUMNS):
            raise InputError(f"{name!r} line {lineno} has {len(fields)} fields (UCI-Abalone has "
                             f"{len(ABALONE_COLUMNS)})")
        if fields[0] not in ABALONE_SEXES:
            raise InputError(f"{name!r} line {lineno}: sex={fields[0]!r} (allowed: {', '.join(ABALONE_SEXES)})")
        row = []
        for col, v in zip(ABALONE_MEASUREMENTS, fields[1:-1]):
            try:
                x = float(v)
            except ValueError:
                raise InputError(f"{name!r} line {lineno}: {col}={v!r} is not a number") from None
            if not np.isfinite(x):
                raise InputError(f"{name!r} line {lineno}: {col}={v!r} must be finite")
            row.append(x)
        if not fields[-1].isdigit():
            raise InputError(f"{name!r} line {lineno}: rings={fields[-1]!r} must be a non-negative integer")
        rows.append(row)
        sex.append(ABALONE_SEXES.index(fields[0]))
        rings.append(int(fields[-1]))
    if not rows:
        raise InputError(f"UCI-Abalone file {name!r} has no data rows")
    return AbaloneData(np.asarray(rows, dtype=float), np.asarray(sex, dtype=np.int64),
                       np.asarray(rings, dtype=np.int64))
