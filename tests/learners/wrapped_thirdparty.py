"""The README recipe "Wrapping third-party torch code", applied to ``thirdparty_gaussian.train``.

- seeding: the third-party code draws from torch's global RNG, so each fit runs inside
  ``torch.random.fork_rng`` (the caller's global state is restored afterwards) and seeds it with
  ``torch.manual_seed`` from the seed privbench gives (one derived seed per budget);
- threads: ``torch_threads(self.threads)`` (1 by default: small networks run fastest on one
  thread, and the bench runs one case per worker process);
- device: tensors go to the ``device`` privbench passes (a torch.device); fork_rng forks the
  CUDA generator of that device too;
- saving: the result is returned as a built-in mechanism type (``LinearGaussian``), so saving,
  loading and exact evaluation need no code here.
"""

from __future__ import annotations

import numpy as np
import torch

import thirdparty_gaussian
from privbench.learners import Learner, Serves
from privbench.learners.mechanisms import LinearGaussian
from privbench.learners.nn.core import seeds, torch_threads


class WrappedThirdParty(Learner):
    name = "wrapped-third-party"
    summary = "thirdparty_gaussian.train wrapped by the README recipe (scalar Gaussian, useful data)"
    serves = Serves(kinds=("gaussian",), d_s=1, d_u=1)
    observations = ("useful",)
    privacies = ("mi",)
    test_params = {"steps": 20}

    def __init__(self, steps: int = 60, threads: int | None = 1) -> None:
        self.steps = steps
        self.threads = threads

    def _fit(self, samples, task, budgets, seed, device):
        s = torch.as_tensor(np.asarray(samples.s, dtype=np.float32).reshape(-1, 1), device=device)
        u = torch.as_tensor(np.asarray(samples.u, dtype=np.float32).reshape(-1, 1), device=device)
        forked = [device] if device.type == "cuda" else []
        mechs = []
        for budget, budget_seed in zip(budgets, seeds(seed, len(budgets))):
            with torch.random.fork_rng(devices=forked), torch_threads(self.threads):
                torch.manual_seed(budget_seed)          # the global RNG, seeded from privbench's seed
                fitted = thirdparty_gaussian.train(s, u, float(budget), steps=self.steps)
            a, sigma = fitted["a"], fitted["sigma"]
            mechs.append(LinearGaussian(task, float(budget), np.array([[a]]), np.zeros((1, 1)),
                                        np.array([[sigma ** 2]]), {"a": a, "sigma": sigma}))
        return mechs
