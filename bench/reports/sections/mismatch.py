"""The attacker-mismatch section (experiments with ``evaluators: mismatch``) and the overview of
every learner's training adversary against the independent measurement."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..paper_tables import ci95, obs_label, pm, row_evaluations, row_info
from ..render import Block


ATTACKERS = ("posthoc-attacker", "mixture-fresh-classifier", "fresh-classifier", "gaussian-approx", "ksg",
             "ensemble-linear", "ensemble-knn", "ensemble-gbt", "fine-scale-attacker")


def attacker_columns(columns: Any) -> list[str]:
    return sorted(c for c in columns if str(c).startswith("attacker-") or c in ATTACKERS)


def training_adversary(row: pd.Series, key: str) -> float:
    """The learner's own adversary's final estimate (``mi`` or ``accuracy``); the mean over users
    for a protocol that trains several filters; NaN when the learner has none."""
    info = row_info(row)
    found = [info.get("training_adversary")] + [v.get("training_adversary") for v in info.values()
                                                 if isinstance(v, dict) and "training_adversary" in v]
    vals = [float(t[key]) for t in found if isinstance(t, dict) and isinstance(t.get(key), (int, float))]
    return float(np.mean(vals)) if vals else float("nan")


def mismatch_frame(g: pd.DataFrame) -> pd.DataFrame:
    """Per row: the training adversary's estimate, the exact value where known, each fresh attacker."""
    rows = []
    for _, r in g[g["status"] == "ok"].iterrows():
        metric = "map" if r["privacy"] == "map" else "mi"
        row: dict[str, Any] = {"learner": r["learner"], "scenario": r["scenario_id"],
                               "observation": obs_label(r["observation"]), "metric": metric, "budget": r["budget"],
                               "rep": r["rep"], "headline": float(r["leakage"])}
        row["training adversary"] = training_adversary(r, "accuracy" if metric == "map" else "mi")
        row["exact"] = float(r["leakage"]) if r["leakage_kind"] == "exact" else float("nan")
        for e in row_evaluations(r):
            if e.get("metric") != metric or e.get("kind") == "exact":
                continue
            if attacker_columns([str(e.get("evaluator"))]):
                row[str(e["evaluator"])] = float(e["value"])
        rows.append(row)
    return pd.DataFrame(rows)


def independent(f: pd.DataFrame) -> pd.Series:
    """The best independent measurement per row: the exact value where known, else the largest attacker."""
    cols = attacker_columns(f.columns)
    best = f[cols].max(axis=1) if cols else pd.Series(np.nan, index=f.index)
    return f["exact"].where(f["exact"].notna(), best)


def mismatch_blocks(name: str, g: pd.DataFrame) -> list[Block]:
    f = mismatch_frame(g)
    if f.empty:
        return []
    att = attacker_columns(f.columns)
    f["independent"] = independent(f)
    rows = []
    for (lr, sid, obs, metric), h in f.groupby(["learner", "scenario", "observation", "metric"], sort=True):
        diff = h["independent"] - h["training adversary"]
        row = {"learner": lr, "metric": metric,
               "training adversary": pm(h["training adversary"].mean(), ci95(h["training adversary"]), ".3f"),
               "exact": pm(h["exact"].mean(), ci95(h["exact"]), ".3f") if h["exact"].notna().any() else "n/a"}
        for a in att:
            row[a] = pm(h[a].mean(), ci95(h[a]), ".3f") if a in h and h[a].notna().any() else "n/a"
        row["independent - training"] = pm(diff.mean(), ci95(diff), ".3f")
        row["survives?"] = ("n/a (no adversary estimate)" if diff.isna().all()
                            else ("yes" if diff.mean() <= 0.01 else "no"))
        rows.append(row)
    return [Block("h3", "Attacker mismatch: training adversary vs fresh attackers"),
            Block("p", "Mean ± 95% CI over seeds and budgets. 'training adversary': the learner's own adversary "
                       "at the end of training (info['training_adversary'], on training data); 'exact': the true "
                       "leakage where the mechanism's form allows it; attacker-*: trained from scratch on held-out "
                       "releases (lower bounds). 'independent' is the exact value where known, else the best "
                       "attacker. A learner's privacy 'survives' when the independent value exceeds its own "
                       "adversary's estimate by at most 0.01 (nats, or accuracy)."),
            Block("table", table=pd.DataFrame(rows))]


def mismatch_overview(df: pd.DataFrame) -> pd.DataFrame:
    """Every experiment: the learner's own adversary's estimate vs the independent measurement."""
    f = mismatch_frame(df.assign(scenario_id=df["experiment"]))
    if f.empty or f["training adversary"].isna().all():
        return pd.DataFrame()
    f["independent"] = independent(f)
    f = f[f["training adversary"].notna() & f["independent"].notna()]
    f["under-estimate"] = f["independent"] - f["training adversary"]
    out = (f.groupby(["learner", "scenario", "metric"], sort=True)
           .agg(points=("budget", "size"), training_adversary=("training adversary", "mean"),
                independent=("independent", "mean"), mean_under_estimate=("under-estimate", "mean"),
                worst_under_estimate=("under-estimate", "max")).reset_index()
           .rename(columns={"scenario": "experiment"}))
    return out
