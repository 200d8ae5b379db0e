"""Ranking learners by the budget-respecting strict gap, as ``privbench check`` scores them.

strict gap = leakage - optimum at max(distortion, budget) (:func:`privbench.bench.scores.strict_gap`):
a learner that under-uses its budget (the identity release) is charged for it, and a point whose
distortion exceeds its budget beyond its statistical tolerance
(:func:`privbench.bench.scores.overshoot_tolerance`) fails the budget (the constant release): it is
shown as such and ranked after every learner within budget.  Means and 95% Student-t intervals are
over seeds (the mean over the budgets of one seed is one value); seeds measured by different
evaluators are never averaged together: an entry is one (experiment panel, learner, training size,
leakage evaluator).
"""

from __future__ import annotations

import math
from typing import Any
import numpy as np
import pandas as pd

from ..scores import aggregate, below_bound_fails, overshoot_tolerance, strict_gap
from .style import BOUND_MARK, FLAG_MARK, KIND_MARK, negative_mark

PANEL = ["experiment", "scenario_id", "observation", "privacy", "family"]
ENTRY = PANEL + ["learner", "n_train", "leakage_evaluator"]


def pool(df: pd.DataFrame) -> pd.DataFrame:
    """The ok rows scored against a bound and the rows that failed, timed out or were inconsistent (on any
    scenario not known to lack an optimum), with ``panel`` labels computed over both."""
    bound = df["bound_kind"].astype(str).isin(["exact", "family", "certified"])
    out = df[((df["status"] == "ok") & bound) | ((df["status"] != "ok") & (df["bound_kind"].astype(str) != "none"))]
    out = out.copy()
    for c in ("experiment", "observation", "family", "leakage_evaluator", "leakage_kind"):
        out[c] = out[c].fillna("").astype(str) if c in out else ""
    out["panel"] = panel_labels(out) if not out.empty else []
    return out


def scored_rows(df: pd.DataFrame) -> pd.DataFrame:
    """The ok rows scored against a bound, with ``strict_gap``, ``over_budget`` and ``panel`` (its label)."""
    ok = pool(df)
    ok = ok[ok["status"] == "ok"].copy()
    if ok.empty:
        return ok.assign(strict_gap=[], over_budget=[])
    ok["strict_gap"] = strict_gap(ok["leakage"].astype(float), ok["optimum_at_distortion"].astype(float),
                                  ok["optimum_at_budget"].astype(float))
    ok["over_budget"] = ok["overshoot"].astype(float).fillna(0) > ok.apply(overshoot_tolerance, axis=1)
    return ok


def panel_labels(df: pd.DataFrame) -> pd.Series:
    """One label per experiment panel: the experiment (or scenario id), plus what tells its panels apart."""
    base = df["experiment"].where(df["experiment"].astype(str) != "", df["scenario_id"]).astype(str)
    out = base.copy()
    for name, g in df.groupby(base, sort=False):
        keys = g[PANEL].astype(str).drop_duplicates()
        if len(keys) < 2:
            continue
        vary = [c for c in PANEL[1:] if keys[c].nunique() > 1]
        out[g.index] = name + " / " + g[vary].astype(str).agg(" / ".join, axis=1)
    return out


def below_failure(g: pd.DataFrame) -> pd.Series:
    """Rows below their bound where that is an evaluator failure: below an exact or certified bound (a
    learner outside GAP's family may legitimately beat a family bound)."""
    return pd.Series([below_bound_fails(b, k) for b, k in zip(g["below_bound"], g["bound_kind"])],
                     index=g.index, dtype=bool)


def flag_marks(g: pd.DataFrame) -> str:
    """The flag marks of a group of rows (over budget, below an exact bound, evaluators disagree)."""
    marks = []
    if g["over_budget"].any():
        marks.append(FLAG_MARK["over budget"])
    if below_failure(g).any():
        marks.append(FLAG_MARK["below bound"])
    if "evaluators_disagree" in g and g["evaluators_disagree"].fillna(False).astype(bool).any():
        marks.append(FLAG_MARK["evaluators disagree"])
    return "".join(marks)


def ci_text(n: int, lo: float, hi: float, fmt: str = ".3g") -> str:
    if n < 2:
        return "1 seed: no CI"
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return "n/a"
    return f"[{lo:{fmt}}, {hi:{fmt}}]"


def ranking_frame(df: pd.DataFrame, order: list[str] | None = None) -> pd.DataFrame:
    """One row per entry (panel, learner, n_train, evaluator) with the mean strict gap over seeds, its 95%
    t-interval, seeds, points, points over budget, flags and ``rank`` (NaN: over budget, or below an exact or
    certified bound: never a win), ``best`` the best-ranked entries whose leakage is exact (the best-ranked of
    all where none is: a lower bound or an estimate can hide a larger gap); sorted by panel (experiments in ``order``
    first, e.g. a suite's order; the rest alphabetically), then rank."""
    ok = scored_rows(df)
    rows = failed_entries(df, ok)
    if ok.empty and not rows:
        return pd.DataFrame()
    for key, g in ok.groupby(ENTRY, sort=False):
        per_seed = g.groupby("rep")["strict_gap"].mean()
        mean, lo, hi = aggregate(per_seed.to_numpy())
        below_exact = bool(below_failure(g).any())
        rows.append({**dict(zip(ENTRY, key)), "panel": g["panel"].iloc[0],
                     "trust": str(g["leakage_kind"].iloc[0]), "bound": str(g["bound_kind"].iloc[0]),
                     "mean_strict_gap": mean, "ci_low": lo, "ci_high": hi, "seeds": int(per_seed.size),
                     "points": int(g["budget"].nunique()), "over_budget": int(g["over_budget"].sum()),
                     "rows": len(g), "flags": flag_marks(g), "eligible": not (g["over_budget"].any() or below_exact)})
    out = add_failures(pd.DataFrame(rows), df)
    out["rank"] = np.nan
    for _, g in out.groupby("panel", sort=False):
        el = g[g["eligible"] & np.isfinite(g["mean_strict_gap"].astype(float))]
        out.loc[el.index, "rank"] = el["mean_strict_gap"].round(6).rank(method="min")
    out["best"] = False
    for _, g in out.groupby("panel", sort=False):
        el = g[g["rank"].notna()]
        exact = el[el["trust"] == "exact"]
        cand = exact if not exact.empty else el  # a lower bound or estimate can hide a larger gap
        if not cand.empty:
            m = cand["mean_strict_gap"].round(6)
            out.loc[cand.index[m == m.min()], "best"] = True
    labelled = pool(df)
    first = {e: i for i, e in enumerate(order or [])}
    labelled = labelled.assign(_e=labelled["experiment"].map(first).fillna(len(first)))
    panels = dict.fromkeys(labelled.sort_values(["_e"] + PANEL, kind="stable")["panel"])
    out["_p"] = out["panel"].map({p: i for i, p in enumerate(panels)})
    out = out.sort_values(["_p", "rank", "mean_strict_gap"], na_position="last", kind="stable")
    return out.drop(columns="_p").reset_index(drop=True)


def failed_entries(df: pd.DataFrame, ok: pd.DataFrame) -> list[dict[str, Any]]:
    """Entries for the (panel, learner, n_train) whose every row failed, timed out or was inconsistent."""
    bad = pool(df)
    bad = bad[bad["status"] != "ok"]
    have = set(zip(ok["panel"], ok["learner"], ok["n_train"])) if not ok.empty else set()
    rows = []
    for (panel, lr, n), g in bad.groupby(["panel", "learner", "n_train"], sort=False):
        if (panel, lr, n) in have:
            continue
        rows.append({**{c: g[c].iloc[0] for c in PANEL}, "learner": lr, "n_train": n, "leakage_evaluator": "",
                     "panel": panel, "trust": "", "bound": str(g["bound_kind"].iloc[0] or ""),
                     "mean_strict_gap": np.nan, "ci_low": np.nan, "ci_high": np.nan, "seeds": 0, "points": 0,
                     "over_budget": 0, "rows": 0, "flags": "", "eligible": False})
    return rows


def add_failures(rank: pd.DataFrame, df: pd.DataFrame) -> pd.DataFrame:
    """``failed_rows`` per entry (its panel, learner and training size) and their flag marks."""
    bad = pool(df)
    bad = bad[bad["status"] != "ok"]
    counts = bad.groupby(["panel", "learner", "n_train", "status"]).size()
    failed, marks = [], []
    for _, r in rank.iterrows():
        c = counts.get(r["panel"], pd.Series(dtype=int))
        c = c.get(r["learner"], pd.Series(dtype=int)) if not c.empty else c
        c = c.get(r["n_train"], pd.Series(dtype=int)) if not c.empty else c
        failed.append(int(c.sum()) if not c.empty else 0)
        m = (FLAG_MARK["inconsistent"] if "inconsistent" in c.index else "") + \
            (FLAG_MARK["failed"] if c.index.isin(["failed", "timeout"]).any() else "")
        marks.append(r["flags"] + m)
    return rank.assign(failed_rows=failed, flags=marks)


def ranking_table(rank: pd.DataFrame, with_panel: bool = True) -> pd.DataFrame:
    """The ranking as people read it: rank (★ best), gap ± CI, within budget or not, evaluator and trust."""
    if rank.empty:
        return pd.DataFrame()
    rows = []
    for _, r in rank.iterrows():
        rk = "—" if math.isnan(r["rank"]) else f"{int(r['rank'])}" + (" ★" if r["best"] else "")
        within = "yes" if r["over_budget"] == 0 else f"NO: {r['over_budget']} of {r['rows']} rows over"
        row = {"experiment": r["panel"]} if with_panel else {}
        none = r["seeds"] == 0  # every row failed, timed out or was inconsistent
        row.update({"rank": rk, "learner": r["learner"], "n_train": int(r["n_train"]),
                    "strict gap (mean)": "no number" if none else f"{r['mean_strict_gap']:.4g}"
                                         f"{KIND_MARK.get(r['trust'], '')}{BOUND_MARK.get(r['bound'], '')}"
                                         f"{negative_mark(r['mean_strict_gap'], r['trust'])}",
                    "95% CI": "—" if none else ci_text(r["seeds"], r["ci_low"], r["ci_high"]), "seeds": r["seeds"],
                    "within budget": "—" if none else within, "evaluator": r["leakage_evaluator"] or "—",
                    "leakage is": r["trust"] or "—", "bound": r["bound"], "flags": r["flags"],
                    "failed rows": r.get("failed_rows", 0)})
        rows.append(row)
    return pd.DataFrame(rows)


def heatmap_frame(rank: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(values, annotations), learners x panels: per cell the learner's entry that is the panel's best, else
    its entry with the largest training size and the most rows (mean strict gap; NaN where the learner
    fails the budget or has no number), and its text with trust and flag marks."""
    if rank.empty:
        return pd.DataFrame(), pd.DataFrame()
    pick = rank.sort_values(["best", "n_train", "rows"], ascending=False, kind="stable")
    pick = pick.drop_duplicates(["panel", "learner"])
    panels = list(dict.fromkeys(rank["panel"]))
    learners = sorted(pick["learner"].unique())
    val = pd.DataFrame(np.nan, index=learners, columns=panels)
    txt = pd.DataFrame("", index=learners, columns=panels)
    for _, r in pick.iterrows():
        mark = KIND_MARK.get(r["trust"], "") + BOUND_MARK.get(r["bound"], "")
        if r["seeds"] == 0:
            txt.loc[r["learner"], r["panel"]] = f"{r['flags']} no\nnumber"
            continue
        if r["over_budget"] > 0:
            txt.loc[r["learner"], r["panel"]] = f"{FLAG_MARK['over budget']} over\nbudget"
            continue
        val.loc[r["learner"], r["panel"]] = r["mean_strict_gap"]
        extra = ("★" if r["best"] else "") + "".join(c for c in r["flags"] if c != FLAG_MARK["over budget"])
        txt.loc[r["learner"], r["panel"]] = f"{r['mean_strict_gap']:.2g}{mark}{extra}"
    return val, txt


def best_table(rank: pd.DataFrame) -> pd.DataFrame:
    """Per panel its best learner within budget: strict gap, 95% CI, seeds, what the leakage number is,
    the bound, the evaluator, and the runner-up's gap (how clear the win is)."""
    rows = []
    for panel, g in rank.groupby("panel", sort=False):
        best = g[g["best"]]
        if best.empty:
            rows.append({"experiment": panel, "best learner": "(none within budget)"})
            continue
        r = best.iloc[0]
        nxt = g[g["rank"].notna() & ~g["best"] & ~g["learner"].isin(best["learner"])]["mean_strict_gap"]
        rows.append({"experiment": panel, "best learner": " = ".join(best["learner"].drop_duplicates()),
                     "strict gap": f"{r['mean_strict_gap']:.3g}",
                     "95% CI": ci_text(r["seeds"], r["ci_low"], r["ci_high"]),
                     "seeds": int(r["seeds"]), "leakage is": r["trust"], "bound": r["bound"],
                     "evaluator": r["leakage_evaluator"],
                     "next ranked gap": f"{nxt.min():.3g}" if not nxt.empty else ""})
    return pd.DataFrame(rows)
