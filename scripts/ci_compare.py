"""Per experiment, learner (with its parameters) and budget: each measured number of a results directory
(leakage, distortion, every evaluation's value, e.g. fresh-classifier MAP/MI and utility accuracy) as
mean +- 95% CI over repetitions in OLD and its mean in NEW, flagged where NEW's mean lies outside OLD's
CI (``out``) and whether that is worse (higher leakage / MI / distortion, lower utility), with Welch's
t-test p-value of the difference (``p``; ``sig``: significant after Benjamini-Hochberg at 5% over
all numbers).  Under no change about 16% of numbers fall outside OLD's CI by chance (NEW's mean has
its own noise), so ``sig`` is the test that counts.

    python scripts/ci_compare.py OLD NEW [EXPERIMENT ...] [--params=KEY,KEY]

``--params=privacy,release`` matches rows by those learner parameters only (and learner, budget), so a
run whose schedules changed (steps, rates) is compared row by row with the run before the change.
"""
import glob
import json
import sys

import numpy as np
import pandas as pd
from scipy import stats


def only(params: str, keep: list[str] | None) -> str:
    """The learner parameters ``params`` (JSON) reduced to the keys ``keep`` (None: all)."""
    if keep is None:
        return params
    p = json.loads(params or "{}")
    return json.dumps({k: p[k] for k in keep if k in p}, sort_keys=True)


def table(path: str, experiments: list[str], keep: list[str] | None = None) -> pd.DataFrame:
    df = pd.concat(pd.read_parquet(f) for f in glob.glob(f"{path}/records/*.parquet"))
    if experiments:
        df = df[df.experiment.isin(experiments)]
    rows = []
    for _, r in df[df.status.isin(["ok", "inconsistent"])].iterrows():
        base = dict(experiment=r.experiment, learner=r.learner, params=only(r.learner_params, keep), budget=r.budget,
                    rep=r.rep)
        rows.append({**base, "metric": "distortion", "value": r.distortion})
        for e in json.loads(r.evaluations or "[]"):
            if e.get("metric") != "distortion" and e.get("value") is not None:
                rows.append({**base, "metric": f"{e['metric']}:{e['evaluator']}", "value": float(e["value"])})
    return pd.DataFrame(rows)


def main() -> None:
    flags = [x for x in sys.argv[3:] if x.startswith("--params=")]
    keep = flags[-1].split("=", 1)[1].split(",") if flags else None
    old, new, exps = sys.argv[1], sys.argv[2], [x for x in sys.argv[3:] if not x.startswith("--")]
    a, b = table(old, exps, keep), table(new, exps, keep)
    keys = ["experiment", "learner", "params", "budget", "metric"]
    ga = a.groupby(keys)["value"].agg(["mean", "std", "count"])
    gb = b.groupby(keys)["value"].agg(["mean", "count"])
    pv = {}
    for key, old_v in a.groupby(keys)["value"]:
        new_v = b.set_index(keys).loc[[key], "value"] if key in gb.index else None
        if new_v is not None and len(old_v) > 1 and len(new_v) > 1 and (old_v.std() > 0 or new_v.std() > 0):
            pv[key] = float(stats.ttest_ind(old_v, new_v, equal_var=False).pvalue)
        elif new_v is not None:
            pv[key] = 1.0 if np.allclose(old_v.mean(), new_v.mean()) else 0.0
    j = ga.join(gb, rsuffix="_new", how="inner")
    half = 1.96 * j["std"].fillna(0) / np.sqrt(j["count"])
    j["ci"] = half
    j["out"] = (j["mean_new"] - j["mean"]).abs() > half
    worse_if_up = ~j.index.get_level_values("metric").str.startswith("utility")
    j["worse"] = j["out"] & np.where(worse_if_up, j["mean_new"] > j["mean"], j["mean_new"] < j["mean"])
    j["p"] = [pv.get(key, np.nan) for key in j.index]
    order = np.argsort(j["p"].to_numpy())
    m, passed = len(j), np.zeros(len(j), bool)
    below = [i for rank, i in enumerate(order, 1) if j["p"].iloc[i] <= 0.05 * rank / m]
    if below:
        last = max(rank for rank, i in enumerate(order, 1) if j["p"].iloc[i] <= 0.05 * rank / m)
        passed[order[:last]] = True
    j["sig"] = passed
    pd.set_option("display.width", 250)
    pd.set_option("display.max_colwidth", 60)
    pd.set_option("display.max_rows", 1000)
    show = j.reset_index()
    show["params"] = show["params"].str.slice(0, 58)
    print(show[keys + ["mean", "ci", "count", "mean_new", "count_new", "out", "worse", "p", "sig"]].round(4).to_string(index=False))
    print(f"\n{int(j['out'].sum())} of {len(j)} numbers outside OLD's 95% CI, {int(j['worse'].sum())} of them worse; "
          f"{int(j['sig'].sum())} significantly different (Welch, BH 5%)")


if __name__ == "__main__":
    main()
