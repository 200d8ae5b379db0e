"""The attacker-mismatch section (experiments with ``evaluators: mismatch``) and the overview of
every learner's training adversary against the independent measurement."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from ..paper_tables import ci95, obs_label, pm, row_evaluations, row_info
from ..render import Block
from .trust import EVALUATOR, LEAKAGE_IS, KIND_WORDS, kind_words

#: The evaluator column of a row whose independent measurement is the largest of its attackers' values.
BEST_ATTACKER = "best fresh attacker"


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
    rows, seen = [], {}
    for _, r in g[g["status"] == "ok"].iterrows():
        metric = "map" if r["privacy"] == "map" else "mi"
        row: dict[str, Any] = {"learner": r["learner"], "scenario": r["scenario_id"],
                               "observation": obs_label(r["observation"]), "metric": metric, "budget": r["budget"],
                               "rep": r["rep"], "headline": float(r["leakage"])}
        row["training adversary"] = training_adversary(r, "accuracy" if metric == "map" else "mi")
        row["exact"] = float(r["leakage"]) if r["leakage_kind"] == "exact" else float("nan")
        kinds = {}
        for e in row_evaluations(r):
            if e.get("metric") != metric or e.get("kind") == "exact":
                continue
            if attacker_columns([str(e.get("evaluator"))]):
                row[str(e["evaluator"])] = float(e["value"])
                kinds[str(e["evaluator"])] = str(e.get("kind", ""))
        seen.update(kinds)
        rows.append({**row, **independent(row, kinds, str(r["leakage_evaluator"]))})
    out = pd.DataFrame(rows)
    out.attrs["kinds"] = seen  # attacker column -> the kind of its numbers
    return out


def independent(row: dict[str, Any], kinds: dict[str, str], headline: str) -> dict[str, Any]:
    """The best independent measurement of a row: the exact value where known (its evaluator), else the largest
    value of its lower-bound attackers ('best fresh attacker', a lower bound: the largest of lower bounds), else
    (no lower bound measured) the largest estimate; columns ``independent``, ``independent evaluator``,
    ``independent kind``."""
    if not math.isnan(row["exact"]):
        return {"independent": row["exact"], "independent evaluator": headline, "independent kind": KIND_WORDS["exact"]}
    vals = {a: row[a] for a in kinds if not math.isnan(row[a]) and kinds[a] == "lower-bound"} or \
        {a: row[a] for a in kinds if not math.isnan(row[a])}
    if not vals:
        return {"independent": math.nan, "independent evaluator": "", "independent kind": ""}
    top = max(vals, key=lambda a: vals[a])
    return {"independent": vals[top], "independent evaluator": BEST_ATTACKER,
            "independent kind": kind_words(kinds[top])}


def mismatch_blocks(name: str, g: pd.DataFrame) -> list[Block]:
    f = mismatch_frame(g)
    if f.empty:
        return []
    att = attacker_columns(f.columns)
    rows = []
    keys = ["learner", "scenario", "observation", "metric", "independent evaluator", "independent kind"]
    for (lr, sid, obs, metric, ev, kind), h in f.groupby(keys, sort=True):  # evaluators never averaged together
        diff = h["independent"] - h["training adversary"]
        row = {"learner": lr, "metric": metric, EVALUATOR: ev, LEAKAGE_IS: kind,
               "training adversary": pm(h["training adversary"].mean(), ci95(h["training adversary"]), ".3f"),
               "independent": pm(h["independent"].mean(), ci95(h["independent"]), ".3f"),
               "independent - training": pm(diff.mean(), ci95(diff), ".3f"),
               "survives?": ("n/a (no adversary estimate)" if diff.isna().all()
                             else ("yes" if diff.mean() <= 0.01 else "no")),
               "exact": pm(h["exact"].mean(), ci95(h["exact"]), ".3f") if h["exact"].notna().any() else "n/a"}
        for a in att:  # each attacker's own column, named with what its numbers are where not a lower bound
            label = a if f.attrs["kinds"].get(a) == "lower-bound" else f"{a} ({kind_words(f.attrs['kinds'].get(a))})"
            row[label] = pm(h[a].mean(), ci95(h[a]), ".3f") if a in h and h[a].notna().any() else "n/a"
        rows.append(row)
    return [Block("h3", "Attacker mismatch: training adversary vs fresh attackers", toc=True),
            Block("p", "Mean ± 95% CI over seeds and budgets. 'training adversary': the learner's own claim "
                       "after training (info['training_adversary'], on its training data: its game's final adversary, "
                       "or, for ppan-image, one refit to convergence against the frozen release); 'exact': the true "
                       "leakage where the mechanism's form allows it; attacker-*: trained from scratch on held-out "
                       "releases (lower bounds; KSG an estimate, so named). 'independent' is the exact value where "
                       "known, else the best lower-bound attacker (the evaluator and leakage-is columns say which, "
                       "and whether that number is exact, a "
                       "lower bound or an estimate; rows of different kinds are never averaged together). A "
                       "learner's privacy 'survives' when the independent value exceeds its own adversary's estimate "
                       "by at most 0.01 (nats, or accuracy)."),
            Block("table", table=pd.DataFrame(rows))]


def mismatch_overview(df: pd.DataFrame) -> pd.DataFrame:
    """Every experiment: the learner's own adversary's estimate vs the independent measurement."""
    f = mismatch_frame(df.assign(scenario_id=df["experiment"]))
    if f.empty or f["training adversary"].isna().all():
        return pd.DataFrame()
    f = f[f["training adversary"].notna() & f["independent"].notna()]
    f["under-estimate"] = f["independent"] - f["training adversary"]
    out = (f.groupby(["learner", "scenario", "metric", "independent evaluator", "independent kind"], sort=True)
           .agg(points=("budget", "size"), training_adversary=("training adversary", "mean"),
                independent=("independent", "mean"), mean_under_estimate=("under-estimate", "mean"),
                worst_under_estimate=("under-estimate", "max")).reset_index()
           .rename(columns={"scenario": "experiment", "independent evaluator": EVALUATOR,
                            "independent kind": LEAKAGE_IS}))
    return out
