"""The generic report's tables from the long records table: points with 95% t-intervals, gaps,
points without a known optimum, flags, timings; and the one-paragraph summary."""

from __future__ import annotations

import pandas as pd

from ..scores import overshoot_tolerance
from ..stats import t_half_width

GROUP = ["scenario", "scenario_id", "observation", "privacy", "family"]
POINT = GROUP + ["learner", "budget", "n_train"]
UNIT_LABEL = {"mi": "I(S;Z) [nats]", "map": "MAP adversary accuracy", "chi2": "chi-square information"}




def aggregate_points(df: pd.DataFrame) -> pd.DataFrame:
    """Mean and 95% t-interval over seeds of leakage, distortion and gap per learned point.

    Returns
    -------
    DataFrame with one row per (scenario, observation, privacy, family, learner,
    budget, n_train) and columns n, leakage, leakage_ci, distortion, distortion_ci,
    gap, gap_ci, gap_worst, below_bound (count), overshoot, train_time_s.
    """
    ok = df[df["status"] == "ok"].copy()
    if ok.empty:
        return pd.DataFrame()
    ok["family"] = ok["family"].fillna("")
    ok["observation"] = ok["observation"].fillna("")  # gaussian-source has none
    rows = []
    for key, g in ok.groupby(POINT, dropna=False, sort=True):
        n = len(g)
        row = dict(zip(POINT, key))
        for col in ("leakage", "distortion", "gap"):
            v = g[col].astype(float)
            row[col] = float(v.mean())
            row[f"{col}_ci"] = t_half_width(v) if n > 1 else float("nan")
        row.update(n=n, gap_worst=float(g["gap"].max()), below_bound=int(g["below_bound"].sum()),
                   overshoot=float(g["overshoot"].max()), train_time_s=float(g["train_time_s"].mean()),
                   leakage_evaluator=", ".join(sorted(set(g["leakage_evaluator"].astype(str)))),
                   bound_kind=str(g["bound_kind"].iloc[0]))
        rows.append(row)
    return pd.DataFrame(rows)


def gap_table(df: pd.DataFrame) -> pd.DataFrame:
    """Median and worst gap per learner x scenario (over budgets and seeds), with flags and time.

    Scenarios with no known optimum (``bound_kind == "none"``) are left out: see :func:`no_optimum_table`.
    """
    ok = df[(df["status"] == "ok") & (df["bound_kind"].astype(str) != "none")]
    if ok.empty:
        return pd.DataFrame()
    g = ok.groupby(["learner", "scenario_id", "observation", "privacy"], dropna=False)
    out = g.agg(median_gap=("gap", "median"), worst_gap=("gap", "max"), cases=("gap", "size"),
                below_bound=("below_bound", "sum"), max_overshoot=("overshoot", "max"),
                mean_train_s=("train_time_s", "mean")).reset_index()
    return out.sort_values(["scenario_id", "observation", "privacy", "learner"]).reset_index(drop=True)


def no_optimum_table(df: pd.DataFrame) -> pd.DataFrame:
    """Learned points of scenarios with no known optimum: mean leakage, distortion and the
    held-out accuracy of every utility label (``utility X`` columns) per learner and budget."""
    from ..evaluators import utility_accuracies

    ok = df[(df["status"] == "ok") & (df["bound_kind"].astype(str) == "none")].copy()
    if ok.empty:
        return pd.DataFrame()
    acc = pd.DataFrame([utility_accuracies(e) for e in ok["evaluations"]], index=ok.index)
    acc.columns = [f"utility {c}" for c in acc.columns]
    ok = pd.concat([ok, acc], axis=1)
    keys = ["scenario_id", "observation", "privacy", "learner", "budget"]
    cols = ["leakage", "distortion", "overshoot"] + list(acc.columns)
    out = ok.groupby(keys, dropna=False)[cols].mean().reset_index()
    out.insert(len(keys), "seeds", ok.groupby(keys, dropna=False).size().to_numpy())
    return out.sort_values(keys).reset_index(drop=True)


def flags_table(df: pd.DataFrame) -> pd.DataFrame:
    """Every case that failed, timed out, was inconsistent, went below the bound, overshot its budget
    beyond its statistical tolerance (:func:`privbench.bench.scores.overshoot_tolerance`, as ``check``),
    or whose leakage evaluators disagree (``evaluators_disagree``: the headline is corroborated by no
    other evaluator, :func:`privbench.bench.evaluators.headline.spread`; the evaluator and the spread
    between the evaluators are shown)."""
    over = df["overshoot"].fillna(0) > (df.apply(overshoot_tolerance, axis=1) if len(df) else 0.0)
    disagree = df["evaluators_disagree"].fillna(False).astype(bool) if "evaluators_disagree" in df else False
    bad = (df["status"] != "ok") | df["below_bound"].fillna(False).astype(bool) | over | disagree
    cols = ["status", "learner", "scenario_id", "observation", "privacy", "budget", "rep", "gap", "overshoot",
            "below_bound", "below_bound_reason", "evaluators_disagree", "leakage_evaluator", "leakage_spread",
            "error"]
    out = df.loc[bad, [c for c in cols if c in df.columns]].reset_index(drop=True)
    for c in ("below_bound_reason", "error"):
        if c in out.columns:
            out[c] = out[c].fillna("")
    return out


def timing_table(df: pd.DataFrame) -> pd.DataFrame:
    """Training and wall time per learner and device."""
    g = df.groupby(["learner", "device"], dropna=False)
    return g.agg(cases=("wall_time_s", "size"), mean_train_s=("train_time_s", "mean"),
                 total_wall_s=("wall_time_s", "sum")).reset_index()


# --------------------------------------------------------------------------
# figures
# --------------------------------------------------------------------------


def summary_text(df: pd.DataFrame) -> str:
    n = len(df)
    ok = int((df["status"] == "ok").sum())
    bb = int(df["below_bound"].fillna(False).astype(bool).sum())
    return (f"{n} records: {ok} ok, {n - ok} failed, timed out or inconsistent, {bb} below the bound. "
            f"Devices: {', '.join(sorted(set(df['device'].astype(str))))}. "
            "Leakage is the headline evaluator's value (exact where the release alphabet or "
            "parametric form allows it, else the largest credible estimate); gap = leakage - optimum "
            "at the distortion achieved (none where the optimum is unknown, bound_kind 'none'); "
            "overshoot = max(0, distortion - budget).")
