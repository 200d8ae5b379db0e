"""CPU seconds of five repetitions of a paper-suite entry: five fits against one fit_many, for the
learners batched by issue 16 part 5 (gap-mixture, chi2-sanitizer in both formulations), at the suite's
schedules, sizes and budgets.

    python scripts/fit_many_timing.py [ENTRY ...]    # entries: gap-tables, chi2-distortion, chi2-utility,
                                                     # mismatch-chi2 (default: all)
"""
import sys
import time

import numpy as np

from privbench.datasets import task_for
from privbench.datasets.scenarios import make_scenario
from privbench.learners import make_learner

GMM = {"prior": 0.75, "mu": 3, "sigma0": 2, "sigma1": 1}
ENTRIES = {  # name: (learner, its parameters, scenario, params, observation, privacy, n_train, budgets)
    "gap-tables": ("gap-mixture", {}, "binary-gmm", GMM, "full", "map", 10000, [1, 2, 3, 4, 5, 6, 7, 8, 9]),
    "chi2-distortion": ("chi2-sanitizer", {}, "hypothesis-testing", {"correlation": "correlated"}, "useful", "chi2",
                        4000, [1, 5, 10, 20, 40, 80]),
    "chi2-utility": ("chi2-sanitizer", {"formulation": "utility"}, "hypothesis-testing", {"correlation": "correlated"},
                     "useful", "chi2", 4000, [0.001, 0.01, 0.03, 0.1, 0.3]),
    "mismatch-chi2": ("chi2-sanitizer", {}, "gaussian-scalar", {"rho": 0.85}, "full", "chi2", 10000, [0.1, 0.3, 0.6]),
}

for name in sys.argv[1:] or list(ENTRIES):
    learner_name, kw, scenario, params, observation, privacy, n, budgets = ENTRIES[name]
    sc = make_scenario(scenario, params)
    task = task_for(sc, observation, privacy, None)
    sets = [sc.sample(n, np.random.default_rng(r)) for r in range(5)]
    learner = make_learner(learner_name, **kw)
    t = time.process_time()
    for r, s in enumerate(sets):
        learner.fit(s, task, budgets, seed=1 + r, device="cpu")
    alone = time.process_time() - t
    t = time.process_time()
    learner.fit_many(sets, task, budgets, [1, 2, 3, 4, 5], device="cpu")
    many = time.process_time() - t
    print(f"{name} ({learner_name}, n = {n}, {len(budgets)} budgets): five fits {alone:.1f} CPU-s, "
          f"one fit_many {many:.1f} CPU-s", flush=True)
