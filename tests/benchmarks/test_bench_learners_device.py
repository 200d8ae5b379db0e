"""Wall time of one 20-budget curve per trained learner, default schedule, on CPU and CUDA.

A learner benchmark (skipped unless --benchmark-enable); CUDA cases skip without a GPU.
Run on a GPU machine with:
    python -m pytest tests/benchmarks/test_bench_learners_device.py --benchmark-enable -s
The suite's own timing records (``train_time_s`` per stored case, ``privbench run
--device cuda``) give the same numbers per case.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from privbench.datasets import Binary, BinaryGMM, GaussianScalar, Samples, SymmetricPair, Task, task_for
from privbench.learners import make_learner

N_BUDGETS = 20


def _digits_problem():
    from privbench.datasets.real import load_digits

    data = load_digits()
    s = (data.labels >= 5).astype(np.int64)
    u = data.images.reshape(len(s), -1)
    task = Task("image", "useful", "mi", "xent", n_s=2, d_u=u.shape[1], image_shape=data.shape)
    return Samples(s, u), task, np.linspace(0.25, 0.45, N_BUDGETS)


def _problem(name):
    rng = np.random.default_rng(0)
    if name == "ppan-image":
        return _digits_problem()
    if name in ("ppan", "plugin"):
        sc, obs, priv, b = SymmetricPair(10, 0.4), "full", "mi", np.linspace(0.0, 0.6, N_BUDGETS)
    elif name == "gap":
        sc, obs, priv, b = Binary(0.5, 0.25), "full", "map", np.linspace(0.0, 0.3, N_BUDGETS)
    elif name.startswith("ppan-"):
        sc, obs, priv, b = GaussianScalar(0.85), "full", "mi", np.linspace(0.02, 0.8, N_BUDGETS)
    else:
        sc = BinaryGMM(0.75, 3.0, 2.0, 1.0)
        obs = "useful" if name == "chi2-sanitizer" else "full"
        priv = {"gap-mixture": "map", "chi2-sanitizer": "chi2", "latent-filter": "mi"}[name]
        b = np.linspace(0.5, 8.0, N_BUDGETS)
    return sc.sample(8000, rng), task_for(sc, obs, priv), b


LEARNERS = ["ppan", "gap", "ppan-linear", "ppan-gaussian", "ppan-seed", "ppan-gmm", "gap-mixture",
            "chi2-sanitizer", "latent-filter", "ppan-image"]
DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(not torch.cuda.is_available(), reason="no GPU"))]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("learner", LEARNERS)
def test_curve_wall_time(benchmark, learner, device):
    samples, task, budgets = _problem(learner)
    fit = make_learner(learner).fit
    mechs = benchmark.pedantic(fit, args=(samples, task, list(budgets)), kwargs={"seed": 0, "device": device},
                               rounds=1, iterations=1)
    assert len(mechs) == N_BUDGETS
    print(f"\n{learner:15s} {device:4s} {N_BUDGETS}-budget curve: {benchmark.stats.stats.min:7.2f} s")
