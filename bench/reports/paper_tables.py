"""The paper report's shared tables and row helpers: timing, the optimum per budget, 95% half-widths,
learner variant labels (the ranking and learned points: :mod:`.ranking`, :mod:`.points`)."""

from __future__ import annotations

import json
import math
from typing import Any

import pandas as pd

from ..stats import t_half_width


def ci95(v: pd.Series) -> float:
    """Half-width of the 95% t-interval of ``v``'s mean (:func:`privbench.bench.stats.t_half_width`)."""
    return t_half_width(v.astype(float))


def pm(mean: float, ci: float, fmt: str = ".4f") -> str:
    if mean is None or (isinstance(mean, float) and math.isnan(mean)):
        return "n/a"
    return f"{mean:{fmt}}" + ("" if ci is None or math.isnan(ci) else f" ± {ci:{fmt}}")


def row_evaluations(row: pd.Series) -> list[dict[str, Any]]:
    try:
        return json.loads(row["evaluations"]) if isinstance(row.get("evaluations"), str) else []
    except (TypeError, ValueError):
        return []


def row_info(row: pd.Series) -> dict[str, Any]:
    raw = row.get("mechanism_info")
    try:
        return json.loads(raw) if isinstance(raw, str) and raw else {}
    except (TypeError, ValueError):
        return {}


def has_bound(g: pd.DataFrame) -> bool:
    return bool((g["bound_kind"].astype(str).isin(["exact", "family", "certified"])).any())


def obs_label(v: Any) -> str:
    return v if isinstance(v, str) and v else "-"


def timing_by_experiment(df: pd.DataFrame) -> pd.DataFrame:
    """Cases, seeds and summed wall time per experiment (the time of its cases, one core each)."""
    g = df.groupby("experiment", sort=True)
    return g.agg(rows=("case_id", "size"), cases=("case_key", "nunique"), seeds=("rep", "nunique"),
                 ok=("status", lambda s: int((s == "ok").sum())),
                 core_seconds=("wall_time_s", "sum")).reset_index()


def optimum_table(g: pd.DataFrame) -> pd.DataFrame:
    """Our optimum (or family bound) at each budget of the experiment; for certified rows ``optimum`` is the
    sandwich's achievable end, with its certified lower end and the family bound beside it."""
    ok = g[(g["status"] == "ok") & g["optimum_at_budget"].notna()].copy()
    if ok.empty:
        return pd.DataFrame()
    ok["observation"] = ok["observation"].fillna("")
    extra = {}
    if (ok["bound_kind"] == "certified").any():  # the sandwich's lower end and the family bound beside it
        extra = {c: (c, "first") for c in ("optimum_lower_at_budget", "family_bound_at_budget") if c in ok}
    out = (ok.groupby(["scenario_id", "observation", "privacy", "budget"], sort=True)
           .agg(optimum=("optimum_at_budget", "first"), bound=("bound_kind", "first"), **extra).reset_index())
    out["observation"] = out["observation"].map(obs_label)
    return out.rename(columns={"optimum_lower_at_budget": "certified lower end",
                               "family_bound_at_budget": "family bound"})


def variant_labels(df: pd.DataFrame) -> pd.Series:
    """``learner``, or ``learner (k=v, ...)`` where one experiment runs a learner with several settings.

    The settings shown are the hyper-parameters that differ between its variants in that
    experiment (``-`` for one that a variant leaves at its default).
    """
    out = df["learner"].astype(str).copy()
    for (_, lr), g in df.groupby(["experiment", "learner"], sort=False):
        variants = {p: json.loads(p) if isinstance(p, str) and p else {} for p in g["learner_params"].unique()}
        if len(variants) < 2:
            continue
        keys = sorted({k for v in variants.values() for k in v
                       if len({json.dumps(w.get(k), sort_keys=True) for w in variants.values()}) > 1})
        for raw, v in variants.items():
            tag = ", ".join(f"{k}={v[k] if k in v else '-'}" for k in keys)
            out[g.index[g["learner_params"] == raw]] = f"{lr} ({tag})"
    return out
