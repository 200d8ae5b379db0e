"""The bench scores the saved mechanism, in a process of its own, never the object that training built.

Each planted learner below would get a better score if it were evaluated in the
process that trained it; each test states the truth from the model and asserts
what the bench reports.
"""

from __future__ import annotations

import os
import textwrap

import numpy as np
import pytest

from privbench.bench.run import execute_case, run_cases
from privbench.bench.store import read_records
from privbench.bench.suites import make_case
from privbench.datasets import SymmetricPair
from privbench.learners import load_mechanism
from privbench.testing import assert_near_optimal
from privbench.theory.measures import scenario_channel_measures

SC = SymmetricPair(4, 0.3)
TRUE_MI_OF_U = float(scenario_channel_measures(SC, np.eye(4), "useful")["mi"])  # I(S;U) = 0.4452 nats

PLANTED = textwrap.dedent("""
    import os
    import numpy as np
    import torch
    from privbench.learners import Learner, Mechanism
    from privbench.learners.base import mechanism_type

    FITTED_HERE = False  # set by fit: true only in the training process

    @mechanism_type("test-two-faced")
    class TwoFaced(Mechanism):
        '''Constant Z (no leakage) in the process that trained it, Z = W anywhere else; describes nothing.'''

        def release(self, w, rng):
            print("stray output of a release")  # must not disturb the evaluator's replies
            w = np.asarray(w, dtype=np.int64)
            return np.zeros_like(w) if FITTED_HERE else w.copy()

        def _state(self):
            return {}, {}

        @classmethod
        def _from_state(cls, task, budget, info, config, tensors):
            return cls(task, budget, info)

    class TwoFacedLearner(Learner):
        name = "test-two-faced"
        serves = ("finite",)

        def _fit(self, samples, task, budgets, seed, device):
            global FITTED_HERE
            FITTED_HERE = True
            return [TwoFaced(task, b, {"note": "trained"}) for b in budgets]

    @mechanism_type("test-evaluator-aware")
    class EvaluatorAware(TwoFaced):
        '''Constant Z whenever it can see the bench (its modules loaded, its files in the stack), else Z = W.'''

        def release(self, w, rng):
            import inspect
            import sys

            w = np.asarray(w, dtype=np.int64)
            watched = (any(name.startswith("privbench.bench") for name in sys.modules)
                       or any("/bench/" in frame.filename for frame in inspect.stack()))
            return np.zeros_like(w) if watched else w.copy()

    class EvaluatorAwareLearner(TwoFacedLearner):
        name = "test-evaluator-aware"

        def _fit(self, samples, task, budgets, seed, device):
            return [EvaluatorAware(task, b) for b in budgets]

    class Unregistered(TwoFaced):
        '''A subclass that never registered its own type name.'''

    class UnregisteredLearner(Learner):
        name = "test-unregistered"
        serves = ("finite",)

        def _fit(self, samples, task, budgets, seed, device):
            return [Unregistered(task, b) for b in budgets]

    @mechanism_type("test-killer")
    class Killer(TwoFaced):
        def release(self, w, rng):
            os._exit(3)

    class KillerLearner(Learner):
        name = "test-killer"
        serves = ("finite",)

        def _fit(self, samples, task, budgets, seed, device):
            return [Killer(task, b) for b in budgets]
""")


@pytest.fixture()
def planted(tmp_path, monkeypatch):
    """The planted learners as an importable module (here and in child processes)."""
    d = tmp_path / "plug"
    d.mkdir()
    (d / "pb_planted.py").write_text(PLANTED)
    monkeypatch.syspath_prepend(str(d))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(d), os.environ.get("PYTHONPATH", "")]))
    import importlib

    return importlib.import_module("pb_planted")


def _case(learner, budgets=(0.2,)):
    return make_case("t", "artifacts", SC.name, SC.params(), "useful", "mi", None, learner, {}, list(budgets), 0,
                     500, 20000)


def test_a_mechanism_that_behaves_only_in_its_training_process_is_scored_as_shipped(planted):
    # in the training process it releases a constant (leakage 0); loaded anywhere else it releases Z = U
    (row,) = execute_case(_case("pb_planted:TwoFacedLearner"), "cpu")
    assert row["status"] == "ok", row["error"]
    assert row["leakage_evaluator"] == "finite-plugin"
    assert row["leakage"] == pytest.approx(TRUE_MI_OF_U, abs=0.01)
    assert row["distortion"] == 0.0  # Z = U exactly
    assert '"note": "trained"' in row["mechanism_info"]  # the saved info travels with the file


def test_a_release_that_looks_for_the_bench_finds_nothing(planted):
    # constant Z whenever privbench.bench is imported or in the stack: the release server has neither
    (row,) = execute_case(_case("pb_planted:EvaluatorAwareLearner"), "cpu")
    assert row["status"] == "ok", row["error"]
    assert row["leakage"] == pytest.approx(TRUE_MI_OF_U, abs=0.01) and row["distortion"] == 0.0


def test_assert_near_optimal_scores_the_saved_file_too(planted):
    with pytest.raises(AssertionError, match="gap"):
        assert_near_optimal(planted.TwoFacedLearner(), SC, budgets=[0.2], privacy="mi", observation="useful",
                            tol=0.05, n_train=200, n_eval=5000)


def test_an_unregistered_mechanism_class_fails_with_the_reason(planted):
    rows = execute_case(_case("pb_planted:UnregisteredLearner", (0.1, 0.3)), "cpu")
    assert [r["status"] for r in rows] == ["failed", "failed"]
    assert all("is not registered" in r["error"] and "@mechanism_type" in r["error"] for r in rows)


def test_a_release_that_kills_the_evaluator_fails_its_case_and_the_next_case_runs(planted):
    (row,) = execute_case(_case("pb_planted:KillerLearner"), "cpu")
    assert row["status"] == "failed" and "process died" in row["error"]
    (again,) = execute_case(_case("randomized-response"), "cpu")
    assert again["status"] == "ok"


def test_a_run_keeps_every_mechanism_with_its_results(tmp_path):
    out = tmp_path / "res"
    summary = run_cases([_case("randomized-response", (0.1, 0.3))], out, jobs=1, device="cpu", progress="none")
    assert summary.counts["ok"] == 2 and summary.rows == 2
    df = read_records(out)
    assert len(df) == 2
    for _, row in df.iterrows():
        path = out / row["mechanism_file"]
        assert path.is_file() and not os.path.isabs(row["mechanism_file"])
        mech = load_mechanism(path)  # a user inspects the scored mechanism without retraining
        assert mech.budget == row["budget"]
        exact = scenario_channel_measures(SC, mech.channel(), "useful")
        assert row["leakage_evaluator"] == "exact-channel"
        assert float(exact["mi"]) == row["leakage"]  # the stored number is the saved file's, bit for bit
