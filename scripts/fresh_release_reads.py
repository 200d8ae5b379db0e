"""Re-evaluate stored labelled mechanisms with one release per training row and with the bench's four.

    python scripts/fresh_release_reads.py RUN EXPERIMENT [--runs DIR ...] [--last N] [--params TEXT]

RUN is a results directory (its records name each row's ``mechanism_file``; the file is looked up in
RUN, then in each ``--runs`` directory, as ``paper_rerun.py`` refreshes leave older experiments'
mechanisms in the run they came from). For the first repetition of EXPERIMENT, the ``--last`` N
largest budgets of each learner (and learner parameters containing ``--params``) are evaluated by
``evaluate`` twice: with :data:`RELEASES_PER_ROW` = 1 (the classifier trains on one release per row,
as before 2026-11-26) and with the bench's value; it prints S and utility accuracy, epochs and CPU
seconds of each.
"""

from __future__ import annotations

import argparse
import glob
import json
import time
from pathlib import Path

import pandas as pd

from privbench.bench.evaluators import labelled
from privbench.datasets.scenarios import make_scenario
from privbench.learners import load_builtin_mechanism


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("run")
    ap.add_argument("experiment")
    ap.add_argument("--runs", nargs="*", default=[])
    ap.add_argument("--last", type=int, default=2)
    ap.add_argument("--params", default="")
    a = ap.parse_args()
    df = pd.concat(pd.read_parquet(f) for f in glob.glob(f"{a.run}/records/*.parquet"))
    rows = df[(df.experiment == a.experiment) & (df.status == "ok")]
    rows = rows[(rows.rep == rows.rep.min()) & rows.learner_params.str.contains(a.params, regex=False)]
    rows = rows.sort_values(["learner", "learner_params", "budget"]).groupby(["learner", "learner_params"]).tail(a.last)
    default = labelled.RELEASES_PER_ROW
    for _, r in rows.iterrows():
        path = next(Path(d) / r.mechanism_file for d in [a.run, *a.runs] if (Path(d) / r.mechanism_file).exists())
        mech = load_builtin_mechanism(path)
        sc = make_scenario(r.scenario, json.loads(r.params))
        cells = []
        for k in (1, default):
            labelled.RELEASES_PER_ROW = k
            t = time.process_time()
            ev = {e.metric: e for e in labelled.evaluate_labelled_scenario(
                mech, sc, r.observation, r.privacy, r.n_eval, int(r.seed), None)}
            cells.append(f"k={k}: S {ev['map'].value:.3f} U {ev['utility'].value:.3f} "
                         f"epochs {ev['map'].detail['epochs']} cpu {time.process_time() - t:.1f}")
        labelled.RELEASES_PER_ROW = default
        print(f"{r.learner} {r.learner_params} budget {r.budget:.4g}: " + " | ".join(cells), flush=True)


if __name__ == "__main__":
    main()
