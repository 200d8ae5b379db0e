"""A/B comparison of two result sets: per point, which side has the smaller gap, beyond noise or not.

Points are paired by scenario, observation, privacy, family, learner, budget and
n_train.  A pair whose learner hyper-parameters differ (``learner_params``) is
not compared unless ``allow_param_mismatch`` (then its row says so): otherwise a
change of settings would pass for a change of code.

Beyond noise, with at least two seeds on each side: Welch's t-test over seeds,
its p-values corrected for multiple comparisons by Benjamini-Hochberg over every
pair tested (``scipy.stats.false_discovery_control``), at false discovery rate
``alpha``.  With one seed on a side no test is possible: the difference must
exceed both sides' statistical tolerance (3 x the larger leakage stderr; exact
evaluators have none).  The same numbers on both sides (a rerun) are a tie, not a test.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..stats import bh_adjust, welch_p
from .tables import POINT

#: False discovery rate of ``compare``'s Benjamini-Hochberg correction.
ALPHA = 0.05


def params_of(g: pd.DataFrame) -> str:
    """The learner hyper-parameters of a point's rows (JSON), several joined by " | " when they differ."""
    col = g["learner_params"] if "learner_params" in g else pd.Series(["{}"] * len(g))
    return " | ".join(sorted(set(col.fillna("{}").astype(str))))


def compare(a: pd.DataFrame, b: pd.DataFrame, allow_param_mismatch: bool = False,
            alpha: float = ALPHA) -> pd.DataFrame:
    """Per point, which side has the smaller gap and whether the difference is beyond noise.

    Returns
    -------
    DataFrame with the :data:`POINT` columns and ``gap_a``, ``gap_b``, ``diff`` (A - B), ``better``
    ("A", "B", "tie", "only in A/B", "n/a (no optimum)", "not paired (learner parameters differ)"),
    ``params_differ``, ``params_a``, ``params_b``, ``p_value`` (Welch; 1 for a tie), ``q_value``
    (BH-adjusted over the Welch-tested pairs), ``beyond_noise``.
    """
    ka = {k: g for k, g in a[a["status"] == "ok"].fillna({"family": ""}).groupby(POINT, dropna=False)}
    kb = {k: g for k, g in b[b["status"] == "ok"].fillna({"family": ""}).groupby(POINT, dropna=False)}
    rows = [pair(key, ka.get(key), kb.get(key), allow_param_mismatch) for key in sorted(set(ka) | set(kb), key=str)]
    res = pd.DataFrame(rows)
    if res.empty:
        return res
    tested = res.pop("welch").astype(bool)
    res["q_value"] = np.nan
    res.loc[tested, "q_value"] = bh_adjust(res.loc[tested, "p_value"].to_numpy(dtype=float))
    res.loc[tested, "beyond_noise"] = res.loc[tested, "q_value"] < alpha
    res["beyond_noise"] = res["beyond_noise"].astype(bool)
    return res


def pair(key: tuple, ga: pd.DataFrame | None, gb: pd.DataFrame | None, allow_param_mismatch: bool) -> dict[str, Any]:
    """One point's comparison row (``beyond_noise`` of a Welch-tested pair is set after the correction)."""
    nan = float("nan")
    row: dict[str, Any] = dict(zip(POINT, key))
    row.update(params_a=None if ga is None else params_of(ga), params_b=None if gb is None else params_of(gb),
               diff=nan, p_value=nan, beyond_noise=False, welch=False)
    row["params_differ"] = ga is not None and gb is not None and row["params_a"] != row["params_b"]
    if ga is None or gb is None:
        return {**row, "gap_a": nan if ga is None else float(ga["gap"].mean()),
                "gap_b": nan if gb is None else float(gb["gap"].mean()), "better": "only in " + ("B" if ga is None else "A")}
    xa, xb = ga["gap"].astype(float).to_numpy(), gb["gap"].astype(float).to_numpy()
    if np.all(np.isnan(xa)) or np.all(np.isnan(xb)):  # no known optimum (bound_kind "none"): no gap
        return {**row, "gap_a": nan, "gap_b": nan, "better": "n/a (no optimum)"}
    row.update(gap_a=float(xa.mean()), gap_b=float(xb.mean()))
    if row["params_differ"] and not allow_param_mismatch:
        return {**row, "better": "not paired (learner parameters differ)"}
    diff = float(xa.mean() - xb.mean())
    row.update(diff=diff, better="A" if diff < 0 else ("B" if diff > 0 else "tie"))
    if np.array_equal(np.sort(xa), np.sort(xb)):  # the same numbers (a rerun): a tie, no test needed
        return {**row, "better": "tie", "p_value": 1.0}
    p = welch_p(xa, xb)
    row["welch"] = not np.isnan(p)
    if np.isnan(p):  # one seed on a side (or no spread): the statistical tolerance of the measurements
        tol = 3 * max(float(ga["leakage_stderr"].fillna(0).max()), float(gb["leakage_stderr"].fillna(0).max()))
        row["beyond_noise"] = abs(diff) > max(tol, 1e-9)
    return {**row, "p_value": p}
