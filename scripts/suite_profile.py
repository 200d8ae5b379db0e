"""Where a run's time went: per experiment (and per learner) its cases, train, evaluation and wall seconds.

Usage: python scripts/suite_profile.py RESULTS_DIR [--by learner]

Reads the stored rows (privbench.bench.store.read_records): ``train_time_s`` is a case's fit time
divided among its budgets (and, for a bundle of repetitions, among its cases), ``wall_time_s`` its
whole time per budget, so the sums per experiment are the case seconds spent on it; "eval" is
wall minus train (saving, evaluation, scoring).  Wall seconds of a loaded machine are inflated
unevenly: compare shares of runs made under the same load, or CPU seconds.
"""

from __future__ import annotations

import argparse

from privbench.bench.store import read_records


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results")
    ap.add_argument("--by", default="experiment", choices=["experiment", "learner"])
    args = ap.parse_args()
    df = read_records(args.results)
    g = df.groupby(args.by).agg(cases=("case_key", "nunique"), train_s=("train_time_s", "sum"),
                                wall_s=("wall_time_s", "sum"))
    g["eval_s"] = g["wall_s"] - g["train_s"]
    g["share_%"] = 100 * g["wall_s"] / g["wall_s"].sum()
    g = g.sort_values("wall_s", ascending=False)
    print(f"| {args.by} | cases | train s | eval s | wall s | share % |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, r in g.iterrows():
        print(f"| {name} | {int(r.cases)} | {r.train_s:.0f} | {r.eval_s:.0f} | {r.wall_s:.0f} | {r['share_%']:.1f} |")
    print(f"| total | {int(g.cases.sum())} | {g.train_s.sum():.0f} | {g.eval_s.sum():.0f} | {g.wall_s.sum():.0f} | 100 |")


if __name__ == "__main__":
    main()
