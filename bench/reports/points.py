"""Learned points of the scored experiments: one row per (panel, learner, training size, leakage evaluator,
budget) with means and 95% t-intervals over seeds of distortion, leakage and strict gap (seeds measured
by different evaluators stay in different rows), the optimum at the budget, and the flags."""

from __future__ import annotations

import pandas as pd

from ..scores import aggregate
from .ranking import ENTRY, below_failure, ci_text, flag_marks
from .style import BOUND_MARK, DISTORTION_MARK, KIND_MARK, negative_mark


def point_frame(scored: pd.DataFrame) -> pd.DataFrame:
    """Numeric learned points of :func:`~.ranking.scored_rows` output (columns ``<x>``, ``<x>_lo``, ``<x>_hi``
    for distortion, leakage and strict_gap; n, over_budget, below_bound, trust, bound, flags)."""
    rows = []
    for key, g in scored.groupby(ENTRY + ["budget"], sort=True):
        row = {**dict(zip(ENTRY + ["budget"], key)), "panel": g["panel"].iloc[0], "n": len(g),
               "trust": str(g["leakage_kind"].iloc[0]), "bound": str(g["bound_kind"].iloc[0]),
               "distortion_trust": str(g["distortion_kind"].iloc[0]) if "distortion_kind" in g else "",
               "optimum_at_budget": float(g["optimum_at_budget"].astype(float).mean()),
               "over_budget": int(g["over_budget"].sum()),
               "below_bound": int(below_failure(g).sum()), "flags": flag_marks(g)}
        for col in ("distortion", "leakage", "strict_gap"):
            row[col], row[f"{col}_lo"], row[f"{col}_hi"] = aggregate(g[col].astype(float).to_numpy())
        for col in guarantee_columns(g):  # guarantees implied by the measured leakage, where rows carry them
            row[col] = float(pd.to_numeric(g[col], errors="coerce").max())
        rows.append(row)
    return pd.DataFrame(rows)


def guarantee_columns(df: pd.DataFrame) -> list[str]:
    """The stored guarantee columns (``guarantee*``) that hold a number in ``df``."""
    return [c for c in df.columns if str(c).startswith("guarantee")
            and pd.to_numeric(df[c], errors="coerce").notna().any()]


def pm_text(r: pd.Series, col: str, fmt: str = ".4g") -> str:
    m, lo, hi = r[col], r[f"{col}_lo"], r[f"{col}_hi"]
    if pd.isna(m):
        return "n/a"
    return f"{m:{fmt}}" + ("" if pd.isna(lo) else f" ± {(hi - lo) / 2:{fmt}}")


def points_table(pts: pd.DataFrame) -> pd.DataFrame:
    """:func:`point_frame` for reading: mean ± 95% half-width (or '1 seed: no CI'), evaluator, trust, flags."""
    rows = []
    for _, r in pts.iterrows():
        rows.append({"learner": r["learner"], "n_train": int(r["n_train"]), "budget": r["budget"], "seeds": r["n"],
                     "distortion": pm_text(r, "distortion") + DISTORTION_MARK.get(r.get("distortion_trust"), ""),
                     "leakage": pm_text(r, "leakage")
                     + KIND_MARK.get(r["trust"], ""), "optimum at budget": f"{r['optimum_at_budget']:.4g}"
                     + BOUND_MARK.get(r["bound"], ""),
                     "strict gap": pm_text(r, "strict_gap") + negative_mark(r["strict_gap"], r["trust"]),
                     **({"CI": "" if r["n"] > 1 else ci_text(1, 0.0, 0.0)} if (pts["n"] == 1).any() else {}),
                     "over budget": f"{r['over_budget']} of {r['n']}" if r["over_budget"] else "",
                     "evaluator": r["leakage_evaluator"], "leakage is": r["trust"], "flags": r["flags"],
                     **{f"{c} (worst seed)": r[c] for c in guarantee_columns(pts)}})
    return pd.DataFrame(rows)
