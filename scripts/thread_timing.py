"""Training time of the small-network learners of a suite with 1 torch thread vs more (the per-worker default).

Usage: python scripts/thread_timing.py [--suite quick] [--learner ppan ...] [--threads 1 2] [--repeat 3]
                                       [--max-cases N]

For each case (first repetition) of the chosen learners, the learner is built with the suite's
hyper-parameters and ``threads=None`` (so the process's torch thread count applies, as in a bench
worker), then fitted once per thread count (best of ``--repeat``), with the case's own samples and
seed.  Prints one row per case (seconds per thread count and the ratio to the first) and the totals.
The bench's default (README, "Threads") was set from this: on the machine of the report, one thread
was faster than cores/jobs threads for every small network.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
import torch

from privbench.bench.suites import load_suite
from privbench.datasets.scenarios import make_scenario
from privbench.datasets.tasks import task_for
from privbench.learners import make_learner


def fit_seconds(case, threads: int, repeat: int) -> float:
    """Best of ``repeat`` wall-clock seconds of the case's fit with ``threads`` torch threads."""
    sc = make_scenario(case.scenario, case.params)
    task = task_for(sc, case.observation, case.training_privacy)
    samples = sc.sample(case.n_train, np.random.default_rng(case.train_seed))
    params = {**case.learner_params, "threads": None}
    best = float("inf")
    torch.set_num_threads(threads)
    for _ in range(repeat):
        learner = make_learner(case.learner, **params)
        t0 = time.perf_counter()
        learner.fit(samples, task, list(case.budgets), seed=case.seed, device="cpu")
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--suite", default="quick")
    ap.add_argument("--learner", action="append", help="learners to time (default: every learner of the suite "
                    "with a `threads` hyper-parameter)")
    ap.add_argument("--threads", type=int, nargs="+", default=[1, max(1, len(os.sched_getaffinity(0)))])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--max-cases", type=int, default=None)
    args = ap.parse_args()
    suite = load_suite(args.suite)
    cases = [c for c in suite.cases if c.rep == 0 and (
        c.learner in args.learner if args.learner else "threads" in make_learner(c.learner).get_params())]
    cases = cases[:args.max_cases]
    cores = len(os.sched_getaffinity(0))
    print(f"# {len(cases)} cases of suite {args.suite!r}; {cores} cores available; torch {torch.__version__}; "
          f"load average {os.getloadavg()[0]:.1f}")
    head = "  ".join(f"{t:>2} thr s" for t in args.threads)
    print(f"{'case':<58} {head}  ratio")
    totals = np.zeros(len(args.threads))
    for case in cases:
        secs = np.array([fit_seconds(case, t, args.repeat) for t in args.threads])
        totals += secs
        ratio = "  ".join(f"{s / secs[0]:.2f}" for s in secs[1:])
        print(f"{case.label()[:58]:<58} " + "  ".join(f"{s:8.2f}" for s in secs) + f"  {ratio}")
    ratio = "  ".join(f"{s / totals[0]:.2f}" for s in totals[1:])
    print(f"{'total':<58} " + "  ".join(f"{s:8.2f}" for s in totals) + f"  {ratio}")


if __name__ == "__main__":
    main()
