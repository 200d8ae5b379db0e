"""Replay a finished run's cases in finishing order through CostETA; compare with the time truly left.

Usage: python scripts/eta_replay.py RUN_DIR  (a run made with --jobs 2; the replay assumes 2 workers)

Unlike scripts/eta_accuracy.py it needs no progress log, so the ETA of today's code can be
measured on an old run's records (in-sample when bench/case_costs.csv comes from that run).
"""
import glob, json, sys
from types import SimpleNamespace
import pandas as pd
from privbench.bench.eta import CostETA

run = sys.argv[1]
df = pd.concat(pd.read_parquet(f) for f in glob.glob(f"{run}/records/*.parquet"))
df["fin"] = pd.to_datetime(df["finished_at"])
g = df.groupby("case_key").agg(learner=("learner", "first"), scenario=("scenario", "first"), experiment=("experiment", "first"),
                               params=("params", "first"), n_train=("n_train", "first"),
                               nb=("budget", "size"), wall=("wall_time_s", "sum"), fin=("fin", "max"),
                               start=("started_at", "min")).sort_values("fin")
cases = [SimpleNamespace(key=k, learner=r.learner, scenario=r.scenario, experiment=r.experiment, params_json=r.params, n_train=r.n_train,
                         budgets=[0.0] * r.nb) for k, r in g.iterrows()]
t0 = pd.to_datetime(g["start"]).min()
end = (g["fin"].max() - t0).total_seconds()
eta = CostETA(cases, workers=2)
errs, shown = [], {int(f * len(cases)) for f in (0.02, 0.1, 0.25, 0.5, 0.75, 0.9)}
for i, (c, (k, r)) in enumerate(zip(cases, g.iterrows())):
    eta.finished(c.key, r.wall)
    el = (r.fin - t0).total_seconds()
    e = eta.eta(el)
    if e is not None:
        errs.append(abs(e - (end - el)))
    if i in shown:
        print(f"{i+1:>4}/{len(cases)} elapsed {el:7.0f} left {end-el:7.0f} ETA {e if e is None else round(e):>7}")
print(f"mean abs error {sum(errs)/len(errs):.0f} s over {len(errs)} points; run {end:.0f} s")
