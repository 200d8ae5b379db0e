"""Small statistics shared by the bench: the t-interval over seeds, Welch's test, Benjamini-Hochberg.

One implementation each, on scipy (no hand-written critical values): reports,
scores and ``privbench compare`` call these.
"""

from __future__ import annotations

import math
import warnings
from typing import Any, Sequence

import numpy as np
from scipy import stats as sps

#: The confidence of every interval the bench reports.
CONFIDENCE = 0.95


def t_interval(values: Sequence[float] | Any, confidence: float = CONFIDENCE) -> tuple[float, float, float]:
    """(mean, lo, hi): Student-t interval of the mean of finite ``values`` (NaN dropped first).

    ``scipy.stats.t.interval(confidence, n - 1, loc=mean, scale=s / sqrt(n))``.  One value:
    (x, nan, nan); none: all NaN; all values equal: (x, x, x).
    """
    v = np.asarray(values, dtype=float).ravel()
    v = v[~np.isnan(v)]
    if v.size == 0:
        return (math.nan, math.nan, math.nan)
    mean = float(v.mean())
    if v.size == 1:
        return (mean, math.nan, math.nan)
    sem = float(v.std(ddof=1) / math.sqrt(v.size))
    if sem == 0.0:
        return (mean, mean, mean)
    lo, hi = sps.t.interval(confidence, v.size - 1, loc=mean, scale=sem)
    return (mean, float(lo), float(hi))


def t_half_width(values: Sequence[float] | Any, confidence: float = CONFIDENCE) -> float:
    """Half the width of :func:`t_interval` (the "±" of a table); NaN with fewer than two values."""
    mean, lo, hi = t_interval(values, confidence)
    return (hi - lo) / 2 if math.isfinite(lo) and math.isfinite(hi) else math.nan


def welch_p(a: Sequence[float] | Any, b: Sequence[float] | Any) -> float:
    """Two-sided p-value of Welch's t-test (unequal variances) of mean(a) = mean(b); NaN when undefined."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.size < 2 or b.size < 2 or (a.std() == 0 and b.std() == 0):
        return math.nan
    with warnings.catch_warnings():  # nearly identical samples: scipy warns of precision loss
        warnings.simplefilter("ignore", RuntimeWarning)
        return float(sps.ttest_ind(a, b, equal_var=False).pvalue)


def bh_adjust(p_values: Sequence[float] | Any) -> np.ndarray:
    """Benjamini-Hochberg adjusted p-values (``scipy.stats.false_discovery_control``); NaN entries stay NaN
    and are not counted as hypotheses."""
    p = np.asarray(p_values, dtype=float)
    out = np.full(p.shape, np.nan)
    tested = ~np.isnan(p)
    if tested.any():
        out[tested] = sps.false_discovery_control(p[tested], method="bh")
    return out
