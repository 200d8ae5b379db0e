"""CPU seconds of the latent filter's step 2 for five repetitions: five fits against one fit_many (the
paper suite's filter-mnist/digit entries, 200 filter steps instead of 1,000; the VAEs trained once
beforehand and shared, so only the filters are timed).

    python scripts/filter_fit_many_timing.py [FILTER_STEPS]
"""
import sys
import time

import numpy as np

from privbench.datasets import task_for
from privbench.datasets.scenarios import make_scenario
from privbench.learners import make_learner

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 200
sc = make_scenario("mnist-subset", {"labeling": "digit"})
task = task_for(sc, "full", "map", None)
sets = [sc.sample(4000, np.random.default_rng(r)) for r in range(5)]
budgets = [3, 15, 60, 200]
base = dict(vae_steps=1000, filter_steps=steps, lr=0.003, adv_hidden=64, adv_steps=3)
for name, kw in (("utility", dict(base, beta=2, formulation="utility")), ("distortion", base)):
    learner = make_learner("latent-filter", **kw)
    t = time.process_time()
    learner.fit_many(sets, task, budgets, [1, 2, 3, 4, 5], device="cpu")  # trains and keeps the five VAEs
    first = time.process_time() - t
    t = time.process_time()
    for r, s in enumerate(sets):
        learner.fit(s, task, budgets, seed=1 + r, device="cpu")
    alone = time.process_time() - t
    t = time.process_time()
    learner.fit_many(sets, task, budgets, [1, 2, 3, 4, 5], device="cpu")
    many = time.process_time() - t
    print(f"{name}: five VAEs + fit_many {first:.1f} s; filters only: five fits {alone:.1f} s, fit_many {many:.1f} s "
          f"({steps} filter steps, 4 budgets)", flush=True)
