"""Measure the continuous-leakage evaluators on the ground-truth tasks (bench/evaluators/groundtruth.py).

Usage: python scripts/groundtruth_table.py [--n 20000] [--seed 0] [--tasks NAME ...]

Prints one row per task: the truth (I(S;Z), and the MAP accuracy for a binary S), each evaluator's
value (marked where not credible), the headline and its stderr (the largest credible,
:func:`privbench.bench.evaluators.headline`), headline - truth,
the spread between evaluators and whether they disagree, and the seconds (wall and CPU of this process)
the evaluators took.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from privbench.bench.evaluators import headline
from privbench.bench.evaluators.ensemble import sample_leakage
from privbench.bench.evaluators.groundtruth import BY_NAME, TASKS
from privbench.bench.evaluators.headline import credible, spread


def measure(task, n: int, seed: int) -> list[str]:
    rng = np.random.default_rng(seed)
    s, z, log_p = task.sample(n, rng)
    t0, c0 = time.perf_counter(), time.process_time()
    evs = sample_leakage(z, s, discrete=task.s_kind == "binary", log_p_s=log_p, h_s=task.h_s, seed=seed, rng=rng,
                         gaussian_approx=task.s_kind == "gaussian")
    secs, cpu = time.perf_counter() - t0, time.process_time() - c0
    lines = []
    for metric, truth in (("mi", task.mi), ("map", task.map)):
        if truth is None:
            continue
        lead = headline(evs, metric)
        sp, bad = spread(evs, metric)
        vals = " ".join(f"{e.evaluator}={e.value:.3f}{'' if credible(e) else ' (not credible)'}"
                        for e in evs if e.metric == metric)
        lines.append(f"| {task.name} | {metric} | {n} | {truth:.3f} | {lead.value:.3f} +- {lead.stderr:.3f} ({lead.evaluator}) | "
                     f"{lead.value - truth:+.3f} | {sp:.3f}{' DISAGREE' if bad else ''} | {secs:.1f} | {cpu:.1f} | {vals} |")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, nargs="+", default=[20000])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--tasks", nargs="*", default=[t.name for t in TASKS])
    a = ap.parse_args()
    print("| task | metric | n | truth | headline +- stderr (evaluator) | headline - truth | spread | s | cpu s | evaluators |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name in a.tasks:
        for n in a.n:
            for line in measure(BY_NAME[name], n, a.seed):
                print(line, flush=True)


if __name__ == "__main__":
    main()
