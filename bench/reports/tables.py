"""The generic report's tables from the long records table: points without a known optimum, flags,
timings; and the one-paragraph summary (the ranking and learned points: :mod:`.ranking`, :mod:`.points`)."""

from __future__ import annotations

import pandas as pd

from ..scores import overshoot_tolerance

GROUP = ["scenario", "scenario_id", "observation", "privacy", "family"]
POINT = GROUP + ["learner", "budget", "n_train"]  # a learned point (compare.py pairs them)


def no_optimum_table(df: pd.DataFrame) -> pd.DataFrame:
    """Learned points of scenarios with no known optimum: mean leakage, distortion and the
    held-out accuracy of every utility label (``utility X`` columns) per learner and budget.
    Where a distortion is not an estimate (the log-loss of an image release: a fresh classifier's
    held-out cross-entropy, an upper bound) the ``distortion is`` column says so, and the
    ``S accuracy`` column gives the fresh classifier's accuracy for S where the leakage is MI."""
    from ..evaluators import utility_accuracies
    from .sections.trust import kind_words

    ok = df[(df["status"] == "ok") & (df["bound_kind"].astype(str) == "none")].copy()
    if ok.empty:
        return pd.DataFrame()
    acc = pd.DataFrame([utility_accuracies(e) for e in ok["evaluations"]], index=ok.index)
    acc.columns = [f"utility {c}" for c in acc.columns]
    ok = pd.concat([ok, acc], axis=1)
    keys = ["scenario_id", "observation", "privacy", "learner", "budget"]
    bounded = "distortion_kind" in ok and (ok["distortion_kind"].astype(str) == "upper-bound").any()
    if bounded:
        ok["S accuracy"] = [metric_value(e, "map") for e in ok["evaluations"]]
    cols = ["leakage", "distortion", "overshoot"] + (["S accuracy"] if bounded else []) + list(acc.columns)
    out = ok.groupby(keys, dropna=False)[cols].mean().reset_index()
    out.insert(len(keys), "seeds", ok.groupby(keys, dropna=False).size().to_numpy())
    if bounded:
        words = ok.groupby(keys, dropna=False)["distortion_kind"].first().map(kind_words).to_numpy()
        out.insert(out.columns.get_loc("distortion") + 1, "distortion is", words)
    return out.sort_values(keys).reset_index(drop=True)


def metric_value(evaluations: object, metric: str) -> float:
    """The first evaluation of ``metric`` in a stored row's ``evaluations`` JSON (NaN where none)."""
    import json

    evs = json.loads(evaluations) if isinstance(evaluations, str) else list(evaluations or [])  # type: ignore[arg-type]
    for e in evs:
        if e["metric"] == metric:
            return float(e["value"])
    return float("nan")


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


def summary_text(df: pd.DataFrame) -> str:
    n = len(df)
    ok = int((df["status"] == "ok").sum())
    bb = int(df["below_bound"].fillna(False).astype(bool).sum())
    return (f"{n} records: {ok} ok, {n - ok} failed, timed out or inconsistent, {bb} below the bound. "
            f"Devices: {', '.join(sorted(set(df['device'].astype(str))))}. "
            "Leakage is the headline evaluator's value (exact where the release alphabet or "
            "parametric form allows it, else the largest credible lower bound or estimate, marked as such); "
            "strict gap = leakage - optimum at max(distortion, budget), as `privbench check` scores it "
            "(none where the optimum is unknown, bound_kind 'none'); overshoot = max(0, distortion - budget), "
            "a failure of the budget beyond its statistical tolerance.")
