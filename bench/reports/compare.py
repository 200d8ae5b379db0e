"""A/B comparison of two result sets: per point, which side has the smaller gap, beyond noise or not."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .tables import POINT


def compare(a: pd.DataFrame, b: pd.DataFrame) -> pd.DataFrame:
    """Per case (point), which side has the smaller gap and whether the difference is beyond noise.

    Beyond noise: Welch's t-test over seeds at the 5% level when both sides have >= 2
    seeds; with one seed each, the difference must exceed both sides' statistical
    tolerance (3 x the larger leakage stderr), exact evaluators having none.
    """
    rows = []
    ka = {k: g for k, g in a[a["status"] == "ok"].fillna({"family": ""}).groupby(POINT, dropna=False)}
    kb = {k: g for k, g in b[b["status"] == "ok"].fillna({"family": ""}).groupby(POINT, dropna=False)}
    for key in sorted(set(ka) | set(kb), key=str):
        row: dict[str, Any] = dict(zip(POINT, key))
        ga, gb = ka.get(key), kb.get(key)
        if ga is None or gb is None:
            row.update(gap_a=float("nan") if ga is None else float(ga["gap"].mean()),
                       gap_b=float("nan") if gb is None else float(gb["gap"].mean()),
                       better="only in " + ("B" if ga is None else "A"), beyond_noise=False, p_value=float("nan"))
            rows.append(row)
            continue
        xa, xb = ga["gap"].astype(float).to_numpy(), gb["gap"].astype(float).to_numpy()
        if np.all(np.isnan(xa)) or np.all(np.isnan(xb)):  # no known optimum (bound_kind "none"): no gap
            row.update(gap_a=float("nan"), gap_b=float("nan"), diff=float("nan"), better="n/a (no optimum)",
                       beyond_noise=False, p_value=float("nan"))
            rows.append(row)
            continue
        diff = xa.mean() - xb.mean()
        if np.array_equal(np.sort(xa), np.sort(xb)):  # the same numbers (a rerun): a tie, no test needed
            p, beyond = 1.0, False
        elif len(xa) >= 2 and len(xb) >= 2 and (xa.std() > 0 or xb.std() > 0):
            import warnings

            from scipy.stats import ttest_ind

            with warnings.catch_warnings():  # nearly identical samples: scipy warns of precision loss
                warnings.simplefilter("ignore", RuntimeWarning)
                p = float(ttest_ind(xa, xb, equal_var=False).pvalue)
            beyond = bool(p < 0.05)
        else:
            tol = 3 * max(float(ga["leakage_stderr"].fillna(0).max()), float(gb["leakage_stderr"].fillna(0).max()))
            p, beyond = float("nan"), abs(diff) > max(tol, 1e-9)
        row.update(gap_a=float(xa.mean()), gap_b=float(xb.mean()), diff=float(diff),
                   better="A" if diff < 0 else ("B" if diff > 0 else "tie"), beyond_noise=bool(beyond), p_value=p)
        rows.append(row)
    return pd.DataFrame(rows)
