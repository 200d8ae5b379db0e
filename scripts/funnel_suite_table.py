"""Median and worst learned gap per learner and training size of a `funnel` suite run.

    privbench run --suite funnel --out DIR && python scripts/funnel_suite_table.py DIR

The gap is the stored one: leakage minus the certified bound's achievable end at the achieved
H(U | Z) (nats); the strict gap measures against the end at max(H(U | Z), budget) (a learner
that leaves budget unused is measured against what the budget allows).  Also counted: rows below the certified lower end (flagged ``below_bound``) and
rows over budget beyond the bench's tolerance (``privbench.bench.scores.overshoot_tolerance``).
"""

from __future__ import annotations

import sys

from privbench.bench.scores import overshoot_tolerance, strict_gap
from privbench.bench.store import read_records


def main(path: str) -> None:
    df = read_records(path)
    df = df[(df["distortion_name"] == "logloss") & (df["status"] == "ok")].copy()
    df["strict"] = strict_gap(df["leakage"], df["optimum_at_distortion"], df["optimum_at_budget"])
    df["over"] = [r["overshoot"] > overshoot_tolerance(r) for _, r in df.iterrows()]
    print("| learner | n_train | rows | median gap | worst gap | median strict gap | worst strict gap "
          "| below lower end | over budget |")
    print("|---|---|---|---|---|---|---|---|---|")
    for (learner, n), g in df.groupby(["learner", "n_train"], sort=True):
        print(f"| {learner} | {n:,} | {len(g)} | {g['gap'].median():.2g} | {g['gap'].max():.3g} | "
              f"{g['strict'].median():.2g} | {g['strict'].max():.3g} | "
              f"{int(g['below_bound'].sum())} | {int(g['over'].sum())} |")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "results/runs/funnel")
