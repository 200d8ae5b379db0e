"""The README recipe "Wrapping third-party torch code": a plug-in around code that uses torch's global RNG
(``thirdparty_gaussian.py``, wrapped in ``wrapped_thirdparty.py``) is deterministic and leaves the caller's
RNG and thread count alone."""

from __future__ import annotations

import importlib
from pathlib import Path

import numpy as np
import pytest
import torch

from privbench.datasets import GaussianScalar
from privbench.datasets.tasks import task_for
from privbench.learners import load_mechanism, make_learner

HERE = Path(__file__).parent
SC = GaussianScalar(0.8)
BUDGETS = [0.3, 0.6]


@pytest.fixture
def modules(monkeypatch):
    monkeypatch.syspath_prepend(str(HERE))
    return importlib.import_module("thirdparty_gaussian"), importlib.import_module("wrapped_thirdparty")


def problem(n=2000, seed=0):
    return SC.sample(n, np.random.default_rng(seed)), task_for(SC, "useful", "mi")


def params(mechs):
    return [(m.info["a"], m.info["sigma"]) for m in mechs]


def test_the_thirdparty_code_alone_is_not_reproducible(modules):
    thirdparty, _ = modules
    samples, _ = problem()
    s = torch.as_tensor(np.asarray(samples.s, dtype=np.float32).reshape(-1, 1))
    u = torch.as_tensor(np.asarray(samples.u, dtype=np.float32).reshape(-1, 1))
    assert thirdparty.train(s, u, 0.3, steps=10) != thirdparty.train(s, u, 0.3, steps=10)


def test_the_wrapped_learner_is_deterministic_and_leaves_global_state_alone(modules):
    samples, task = problem()
    learner = make_learner("wrapped_thirdparty:WrappedThirdParty", steps=20)
    torch.manual_seed(1234)
    before, threads = torch.get_rng_state(), torch.get_num_threads()
    first = learner.fit(samples, task, BUDGETS, seed=7, device="cpu")
    assert torch.equal(torch.get_rng_state(), before) and torch.get_num_threads() == threads
    torch.manual_seed(99)  # whatever the caller's global state, the same seed gives the same mechanism
    again = make_learner("wrapped_thirdparty:WrappedThirdParty", steps=20).fit(samples, task, BUDGETS, seed=7,
                                                                                  device="cpu")
    assert params(first) == params(again)
    other = learner.fit(samples, task, BUDGETS, seed=8, device="cpu")
    assert params(other) != params(first)
    assert params(first)[0] != params(first)[1]  # one derived seed (and fit) per budget


def test_the_wrapped_mechanism_saves_loads_and_declares_its_limits(modules, tmp_path):
    samples, task = problem()
    learner = make_learner("wrapped_thirdparty:WrappedThirdParty", steps=20)
    mech = learner.fit(samples, task, 0.5, seed=3, device="cpu")
    again = load_mechanism(mech.save(tmp_path / "m.pt"))
    w = task.observe(task.check_samples(samples))[:100]
    np.testing.assert_array_equal(again.release(w, np.random.default_rng(5)), mech.release(w, np.random.default_rng(5)))
    assert learner.refusal(task_for(SC, "full", "mi")) == "serves observations useful, not full"
