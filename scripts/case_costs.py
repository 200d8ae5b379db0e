"""Write the ETA's prior case costs (bench/case_costs.csv) from a finished run's records.

Usage: python scripts/case_costs.py RUN_DIR [--out privbench/bench/case_costs.csv]

One line per (experiment, scenario, learner, n_train): the median over its cases of the
wall-clock seconds per budget (the rows' wall_time_s, as the run's progress counts them).
:class:`privbench.bench.eta.CostETA` uses them as prior costs (then calibrates them with the
cases the current run has finished), so regenerate the file after a change that moves a
learner's cost by a large factor.
"""

from __future__ import annotations

import argparse
import glob
from pathlib import Path

import pandas as pd


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0], allow_abbrev=False)
    ap.add_argument("run", help="a privbench run directory (records/*.parquet)")
    ap.add_argument("--out", default=str(Path(__file__).resolve().parents[1] / "bench" / "case_costs.csv"))
    args = ap.parse_args()
    files = glob.glob(f"{args.run}/records/*.parquet")
    if not files:
        raise SystemExit(f"{args.run}: no records")
    df = pd.concat(pd.read_parquet(f, columns=["case_key", "experiment", "scenario", "learner", "n_train", "budget",
                                                "wall_time_s", "status"]) for f in files)
    df = df[df["status"] == "ok"]
    per_case = df.groupby("case_key").agg(experiment=("experiment", "first"), scenario=("scenario", "first"), learner=("learner", "first"),
                                          n_train=("n_train", "first"), rows=("budget", "size"),
                                          wall=("wall_time_s", "sum"))
    per_case["spb"] = per_case["wall"] / per_case["rows"]
    table = per_case.groupby(["experiment", "scenario", "learner", "n_train"]).agg(
        seconds_per_budget=("spb", "median"), cases=("spb", "size")).reset_index()
    table["seconds_per_budget"] = table["seconds_per_budget"].round(4)
    table.to_csv(args.out, index=False)
    print(f"wrote {args.out}: {len(table)} (experiment, learner, n_train) lines from {len(per_case)} cases")


if __name__ == "__main__":
    main()
