"""Learned gaps on the privacy funnel: greedy-merge and the plug-in against theory's certified band.

    python scripts/funnel_gaps.py [--n 10000 --n 100000] [--seconds 20]

For each model (symmetric pair m = 3, 4; binary p = 0.3, q = 0.2; three random 3x3 joints with
seeds 0, 1, 2), observation ``useful``, budgets D = (0.25, 0.5, 0.75) H(U) and sample sizes n, the
learner is fit on n samples (seed 0) and its channel scored exactly on the true model.  The gap is
leakage - L(max(H(U | Z), D)) with L's certified lower end (an upper bound on the true gap) and its
achievable end (a lower bound): printed per point, then median and worst per learner and n.
"""

from __future__ import annotations

import argparse

import numpy as np

from privbench.bench.plug_in import PlugIn
from privbench.datasets.scenarios import Finite, make_scenario
from privbench.learners.baselines import GreedyMerge
from privbench.theory.funnel import funnel_optimum, release_measures, split_model


def models() -> dict[str, object]:
    out = {"symmetric-pair m=3": make_scenario("symmetric-pair", {"m": "3", "p": "0.2"}),
           "symmetric-pair m=4": make_scenario("symmetric-pair", {"m": "4", "p": "0.2"}),
           "binary p=0.3 q=0.2": make_scenario("binary", {"p": "0.3", "q": "0.2"})}
    for seed in (0, 1, 2):
        joint = np.random.default_rng(seed).dirichlet(np.ones(9)).reshape(3, 3)
        joint = joint / joint.sum()
        out[f"random 3x3 seed {seed}"] = Finite(tuple(map(tuple, joint.tolist())))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, action="append", default=None)
    ap.add_argument("--seconds", type=float, default=20.0)
    args = ap.parse_args()
    gaps: dict[tuple[str, int], list[tuple[float, float]]] = {}
    for name, sc in models().items():
        joint = sc.joint()
        h_u = split_model(joint, "useful").h_u
        for n in args.n or [10_000, 100_000]:
            samples = sc.sample(n, np.random.default_rng(0))
            task = sc.task("useful", "mi", "logloss")
            for learner in (GreedyMerge(), PlugIn(funnel_seconds=args.seconds)):
                for f in (0.25, 0.5, 0.75):
                    mech = learner.fit(samples, task, f * h_u, seed=0)
                    leak, dist = release_measures(joint, mech.channel(), "useful", "mi")
                    opt = funnel_optimum(joint, max(dist, f * h_u), "mi", "useful", time_limit=args.seconds)
                    gap = (leak - opt.lower, leak - opt.value)
                    gaps.setdefault((learner.name, n), []).append(gap)
                    print(f"{name:20s} n={n:<7d} {learner.name:13s} D={f:.2f}H(U) leak={leak:.5f} "
                          f"H(U|Z)={dist:.4f} band=[{opt.lower:.5f}, {opt.value:.5f}] gap<={gap[0]:.5f}", flush=True)
    for (learner, n), g in sorted(gaps.items()):
        hi = np.array([x[0] for x in g])
        print(f"{learner:13s} n={n:<7d} gap (vs certified end): median {np.median(hi):.5f}  worst {hi.max():.5f}"
              f"  ({len(g)} points)")


if __name__ == "__main__":
    main()
