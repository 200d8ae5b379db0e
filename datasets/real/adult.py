"""The UCI Adult census table from a local CSV file (nothing is downloaded)."""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from .idx import read_bytes


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
        text = read_bytes(path, "UCI-Adult").decode("utf-8")
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
