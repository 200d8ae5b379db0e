"""What every table of the paper report's special sections says about its numbers: which evaluator
produced them, whether that leakage is exact, a lower bound or an estimate, and a gap that a lower
bound (or an estimate) puts below zero marked as such instead of shown as a plain negative gap.

Seeds measured by different evaluators are never averaged into one number: the sections group by
:data:`EVALUATOR` (the headline evaluator of each row) and show it in a column.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from ..paper_tables import pm
from ..style import NEGATIVE_MARK

#: The evaluator column every special-section table carries, and its "leakage is" companion.
EVALUATOR = "evaluator"
LEAKAGE_IS = "leakage is"
#: leakage_kind -> the words a table shows in its "leakage is" column.
KIND_WORDS = {"exact": "exact", "lower-bound": "lower bound", "estimate": "estimate", "upper-bound": "upper bound"}


def kind_words(kind: Any) -> str:
    """'exact', 'lower bound' or 'estimate' for a ``leakage_kind`` ('' for none, the raw text otherwise)."""
    k = "" if kind is None or (isinstance(kind, float) and math.isnan(kind)) else str(kind)
    return KIND_WORDS.get(k, k)


def one_kind(kinds: pd.Series) -> str:
    """The words of the kinds in ``kinds`` (one group's rows): one kind, or 'mixed: a, b' (never silent)."""
    ks = sorted({kind_words(k) for k in kinds.dropna()} - {""})
    if not ks:
        return ""
    return ks[0] if len(ks) == 1 else "mixed: " + ", ".join(ks)


def gap_text(mean: float, ci: float, kind: Any, fmt: str = ".4f") -> str:
    """``mean ± ci`` of a gap; where it is negative and the leakage behind it is a lower bound or an estimate,
    marked: the attacker (or estimator) found less than the bound allows, which says nothing of a win."""
    text = pm(mean, ci, fmt)
    k = kind_words(kind)
    if text != "n/a" and mean < 0 and k != "exact":
        return f"{text} {NEGATIVE_MARK} {k or 'not exact'} < 0, not a win"
    return text


def frame_kind(g: pd.DataFrame) -> str:
    """:func:`one_kind` of a group of records (its ``leakage_kind`` column)."""
    return one_kind(g["leakage_kind"]) if "leakage_kind" in g else ""


def frame_evaluator(g: pd.DataFrame) -> str:
    """The headline evaluator(s) of a group of records, joined (one name once the group is split by it)."""
    if "leakage_evaluator" not in g:
        return ""
    return ", ".join(sorted({str(e) for e in g["leakage_evaluator"].dropna() if str(e)}))
