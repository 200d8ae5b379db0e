"""The gallery of planted cheaters through the front doors: ``privbench run``, ``privbench check`` and
``privbench.testing.assert_near_optimal``.

(``tests/bench/test_verify_law.py`` holds the parametric lies told through the built-in classes, which
only an in-process :func:`~privbench.bench.evaluators.evaluate` could meet.)

Each cheater is a third-party learner in an importable module (as a user would
ship one).  For each, the truth comes from the model, and every door must
either store it ``inconsistent`` (scored from its releases, at or above its
true leakage) or measure it at its true leakage; none may pass
``assert_near_optimal``.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from privbench.bench.store import read_records
from privbench.datasets import BinaryGMM, GaussianScalar, SymmetricPair
from privbench.testing import assert_near_optimal
from privbench.theory.measures import scenario_channel_measures
from privbench.theory.mixture import mechanism_accuracy

SYM, GAUSS, GMM = SymmetricPair(4, 0.3), GaussianScalar(0.85), BinaryGMM(0.75, 3.0, 2.0, 1.0)
TRUTH = {  # the true leakage of each cheater's releases, from the model
    "ChannelLiar": float(scenario_channel_measures(SYM, np.eye(4), "useful")["mi"]),  # Z = U: I(S;U)
    "TwoFaced": float(scenario_channel_measures(SYM, np.eye(4), "useful")["mi"]),
    "EvaluatorAware": float(scenario_channel_measures(SYM, np.eye(4), "useful")["mi"]),
    "NoiseLiar": -0.5 * math.log(1 - 0.85**2),  # Z = U: I(S;U) of the scalar Gaussian pair
    "DigitLiar": math.log(2),  # the sign of S, recoverable from Z's digits: at least log 2 nats
    "ShiftLiar": float(mechanism_accuracy(GMM, 0.0, 0.0, 0.0, 0.0)),  # Z = U: MAP accuracy of U
}
# A channel is verified whatever the class (the finite evaluators read any channel()): the lie is caught.
# A parametric description is read only from the built-in types, and a saved file of a built-in type
# loads as the built-in class; a subclass must register a type of its own, which no exact evaluator
# knows: it is measured from its releases.
INCONSISTENT = {"ChannelLiar"}
NEVER_EXACT = {"ChannelLiar", "TwoFaced", "EvaluatorAware", "NoiseLiar", "DigitLiar", "ShiftLiar"}

GALLERY = textwrap.dedent('''
    import inspect, sys
    import numpy as np
    import torch
    from privbench.learners import Learner, Mechanism
    from privbench.learners.base import mechanism_type
    from privbench.learners.mechanisms import FiniteChannel, LinearGaussian, MixtureShift

    TRAINED_HERE = False

    @mechanism_type("gallery-channel-liar")
    class LyingChannel(FiniteChannel):
        """Releases Z = U, claims the constant channel."""
        def release(self, w, rng):
            return np.asarray(w, dtype=np.int64).copy()
        @classmethod
        def _from_state(cls, task, budget, info, config, tensors):
            return cls(task, budget, tensors["channel"].numpy(), info)

    class ChannelLiar(Learner):
        serves = ("finite",)
        def _fit(self, samples, task, budgets, seed, device):
            return [LyingChannel(task, b, np.tile(np.eye(task.n_z)[0], (task.n_w, 1))) for b in budgets]

    @mechanism_type("gallery-two-faced")
    class TwoFacedChannel(LyingChannel):
        """Constant in the process that trained it, Z = U elsewhere; claims nothing."""
        def channel(self):
            return None
        def release(self, w, rng):
            w = np.asarray(w, dtype=np.int64)
            return np.zeros_like(w) if TRAINED_HERE else w.copy()

    class TwoFaced(Learner):
        serves = ("finite",)
        def _fit(self, samples, task, budgets, seed, device):
            global TRAINED_HERE
            TRAINED_HERE = True
            return [TwoFacedChannel(task, b, np.tile(np.eye(task.n_z)[0], (task.n_w, 1))) for b in budgets]

    @mechanism_type("gallery-evaluator-aware")
    class AwareChannel(TwoFacedChannel):
        """Constant whenever the bench is loaded or in the stack, Z = U elsewhere."""
        def release(self, w, rng):
            w = np.asarray(w, dtype=np.int64)
            seen = any(m.startswith("privbench.bench") for m in sys.modules) or any(
                "/bench/" in f.filename for f in inspect.stack())
            return np.zeros_like(w) if seen else w.copy()

    class EvaluatorAware(Learner):
        serves = ("finite",)
        def _fit(self, samples, task, budgets, seed, device):
            return [AwareChannel(task, b, np.tile(np.eye(task.n_z)[0], (task.n_w, 1))) for b in budgets]

    @mechanism_type("gallery-noise-liar")
    class QuietGaussian(LinearGaussian):
        """Claims Z = U + N(0, 1); adds no noise."""
        def release(self, w, rng):
            return np.asarray(w, dtype=float)[:, -1:].copy()

    class NoiseLiar(Learner):
        serves = ("gaussian",)
        def _fit(self, samples, task, budgets, seed, device):
            d = task.d_u
            return [QuietGaussian(task, b, np.eye(d), np.zeros((d, task.d_s)), np.eye(d)) for b in budgets]

    @mechanism_type("gallery-digit-liar")
    class DigitGaussian(LinearGaussian):
        """Releases its claimed law to 1e-6 and the sign of S in the digits below."""
        def release(self, w, rng):
            w = np.asarray(w, dtype=float)
            z = super().release(w, rng)
            return np.round(z, 6) + 1e-7 * (w[:, :1] > 0)

    class DigitLiar(Learner):
        serves = ("gaussian",)
        observations = ("full",)
        def _fit(self, samples, task, budgets, seed, device):
            return [DigitGaussian(task, b, [[0.5]], [[0.0]], [[0.5]]) for b in budgets]

    @mechanism_type("gallery-shift-liar")
    class QuietShift(MixtureShift):
        """Claims noise of sd 5 on both classes; releases Z = U."""
        def release(self, w, rng):
            return np.asarray(w, dtype=float)[:, -1:].copy()

    class ShiftLiar(Learner):
        serves = ("mixture",)
        def _fit(self, samples, task, budgets, seed, device):
            return [QuietShift(task, b, 0.0, 0.0, 5.0, 5.0) for b in budgets]
''')

SUITE = textwrap.dedent('''
    description: the cheater gallery
    reps: 1
    n_train: 200
    n_eval: 20000
    learners:
      pb_gallery:ChannelLiar: {on: [sym]}
      pb_gallery:TwoFaced: {on: [sym]}
      pb_gallery:EvaluatorAware: {on: [sym]}
      pb_gallery:NoiseLiar: {on: [gauss]}
      pb_gallery:DigitLiar: {on: [gauss]}
      pb_gallery:ShiftLiar: {on: [gmm]}
    experiments:
      - {name: sym, scenario: symmetric-pair, params: {m: 4, p: 0.3}, observation: useful, privacy: mi,
         budgets: [0.2]}
      - {name: gauss, scenario: gaussian-scalar, params: {rho: 0.85}, observation: full, privacy: mi,
         budgets: [0.2]}
      - {name: gmm, scenario: binary-gmm, params: {prior: 0.75, mu: 3.0, sigma0: 2.0, sigma1: 1.0},
         observation: full, privacy: map, budgets: [1.0]}
''')


@pytest.fixture(scope="module")
def gallery(tmp_path_factory):
    d = tmp_path_factory.mktemp("gallery")
    (d / "pb_gallery.py").write_text(GALLERY)
    (d / "gallery.yaml").write_text(SUITE)
    sys.path.insert(0, str(d))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(d), os.environ.get("PYTHONPATH", "")])}
    yield d, env
    sys.path.remove(str(d))


def test_privbench_run_scores_every_cheater_at_its_truth(gallery):
    d, env = gallery
    out = subprocess.run([sys.executable, "-m", "privbench.bench.cli", "run", "--suite", str(d / "gallery.yaml"),
                          "--out", str(d / "res"), "--jobs", "1", "--quiet"],
                         capture_output=True, text=True, env=env, timeout=900)
    assert out.returncode in (0, 1), out.stderr[-2000:]
    df = read_records(d / "res")
    assert len(df) == len(TRUTH)
    for _, row in df.iterrows():
        name = row["learner"].split(":")[1]
        expected = "inconsistent" if name in INCONSISTENT else "ok"
        assert row["status"] == expected, (name, row["status"], row["error"])
        assert (row["leakage_kind"] != "exact") == (name in NEVER_EXACT), name
        assert row["leakage"] >= TRUTH[name] - 0.02, (name, row["leakage"], row["leakage_evaluator"], TRUTH[name])


@pytest.mark.parametrize("name, scenario, observation, privacy, budget", [
    ("ChannelLiar", SYM, "useful", "mi", 0.2), ("TwoFaced", SYM, "useful", "mi", 0.2),
    ("EvaluatorAware", SYM, "useful", "mi", 0.2), ("NoiseLiar", GAUSS, "full", "mi", 0.2),
    ("DigitLiar", GAUSS, "full", "mi", 0.2), ("ShiftLiar", GMM, "full", "map", 1.0),
])
def test_no_cheater_passes_assert_near_optimal(gallery, name, scenario, observation, privacy, budget):
    import pb_gallery

    with pytest.raises(AssertionError, match="inconsistent|gap"):
        assert_near_optimal(getattr(pb_gallery, name)(), scenario, budgets=[budget], privacy=privacy,
                            observation=observation, tol=0.05, n_train=200, n_eval=20000)


@pytest.mark.parametrize("name", ["NoiseLiar", "TwoFaced"])
def test_privbench_check_fails_the_cheater(gallery, name):
    d, env = gallery
    out = subprocess.run([sys.executable, "-m", "privbench.bench.cli", "check", "--learner", f"pb_gallery:{name}",
                          "--suite", "regression", "--out", str(d / f"check-{name}"), "--jobs", "1"],
                         capture_output=True, text=True, env=env, timeout=900)
    assert out.returncode == 1, out.stderr[-2000:]
    assert "REGRESSION" in out.stdout + out.stderr
