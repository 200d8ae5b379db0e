"""A gallery of planted cheaters: mechanisms whose account of themselves is false.

Each is a small third-party mechanism (or learner) that lies or carries a
plausible bug.  For each, the test states the truth (computed from the model)
and asserts what the bench reports: the row is ``inconsistent`` and its numbers
come from the releases, never from the lie.  Honest mechanisms are verified and
scored exactly as before.
"""

import math

import numpy as np
import pytest

from privbench.bench.evaluators import evaluate, headline
from privbench.bench.run import score_budget
from privbench.bench.scores import score
from privbench.bench.suites import make_case
from privbench.datasets import SymmetricPair, task_for
from privbench.datasets.errors import InputError
from privbench.learners import Learner, Mechanism
from privbench.learners.base import mechanism_type
from privbench.learners.mechanisms import FiniteChannel
from privbench.testing import assert_near_optimal
from privbench.theory import optimum
from privbench.theory.measures import scenario_channel_measures

SC = SymmetricPair(4, 0.3)
TASK = task_for(SC, "useful", "mi")
TRUE_MI_OF_U = float(scenario_channel_measures(SC, np.eye(4), "useful")["mi"])  # I(S;U), 0.4452 nats


@mechanism_type("test-claiming")
class Claiming(Mechanism):
    """Releases through one channel, claims another (the planted bug); saves and loads like any mechanism."""

    def __init__(self, task, budget, released, claimed, info=None):
        super().__init__(task, budget, info)
        self.released, self.claimed = FiniteChannel(task, budget, released), np.asarray(claimed, float)

    def release(self, w, rng):
        return self.released.release(w, rng)

    def channel(self):
        return self.claimed.copy()

    def _state(self):
        import torch

        return {}, {"released": torch.as_tensor(self.released.channel()), "claimed": torch.as_tensor(self.claimed)}

    @classmethod
    def _from_state(cls, task, budget, info, config, tensors):
        return cls(task, budget, tensors["released"].numpy(), tensors["claimed"].numpy(), info)


def _constant():
    return np.tile([1.0, 0.0, 0.0, 0.0], (4, 1))


def _optimal(budget):
    return np.array(optimum(SC, budget, privacy="mi", observation="useful").mechanism["channel"])


def _evals(mech, seed=5):
    return evaluate(mech, SC, "useful", "mi", n_eval=20000, seed=seed, cross_check=False)


def _row(mech, budget=0.2):
    case = make_case("t", "cheaters", SC.name, SC.params(), "useful", "mi", None, "identity", {}, [budget], 0,
                     100, 20000)
    return score_budget(case, SC, mech, budget, evaluate, headline, score)


def test_the_issue_s_lying_channel_is_inconsistent_and_scored_from_its_releases():
    # claims the constant channel (leakage 0, distortion 0.75) but releases Z = U (leakage 0.445, distortion 0)
    lie = Claiming(TASK, 0.2, np.eye(4), _constant())
    row = _row(lie)
    assert row["status"] == "inconsistent" and "channel() does not describe release()" in row["error"]
    assert row["leakage_evaluator"] == "finite-plugin" and row["distortion"] == 0.0
    assert abs(row["leakage"] - TRUE_MI_OF_U) < 0.01  # the plug-in estimate of the truth, not the claimed 0
    assert abs(row["gap"]) < 0.01  # scored truthfully: the identity release, on the curve at distortion 0


def test_permuted_rows_are_caught():
    perm = np.eye(4)[[1, 0, 3, 2]]  # a plausible indexing bug: the rows of two values swapped
    evals = _evals(Claiming(TASK, 0.2, np.eye(4), perm))
    assert [e.value for e in evals if e.metric == "consistency"] == [0.0]
    assert not any(e.evaluator == "exact-channel" for e in evals)


def test_a_channel_for_another_budget_is_caught():
    lie = Claiming(TASK, 0.2, _optimal(0.1), _optimal(0.3))  # releases the 0.1 mechanism, claims the 0.3 one
    row = _row(lie)
    assert row["status"] == "inconsistent"
    true = scenario_channel_measures(SC, _optimal(0.1), "useful")
    assert abs(row["leakage"] - true["mi"]) < 0.02 and abs(row["distortion"] - true["distortion"]) < 0.01


def test_a_small_lie_in_one_row_is_caught():
    released = _optimal(0.2)
    claimed = released.copy()
    claimed[2] = 0.97 * claimed[2] + 0.03 * np.eye(4)[(int(np.argmax(claimed[2])) + 1) % 4]  # TV 0.03 in one row
    assert _row(Claiming(TASK, 0.2, released, claimed))["status"] == "inconsistent"


def test_a_channel_claiming_an_impossible_release_is_caught_at_once():
    claimed = np.eye(4) * 0.0 + np.eye(4)[[0, 0, 0, 0]]  # every row says Z = 0 always
    released = np.full((4, 4), 0.25)
    evals = _evals(Claiming(TASK, 0.2, released, claimed))
    reason = next(e for e in evals if e.metric == "consistency").detail["reason"]
    assert "P(Z=1 | W=0) = 0" in reason


def test_a_malformed_claim_is_inconsistent_not_a_crash():
    bad = np.full((4, 4), 0.3)  # rows sum to 1.2
    assert _row(Claiming(TASK, 0.2, np.eye(4), bad))["status"] == "inconsistent"


@pytest.mark.parametrize("budget", [0.05, 0.2, 0.5])
def test_honest_channels_are_verified_and_scored_exactly(budget):
    honest = FiniteChannel(TASK, budget, _optimal(budget))
    evals = _evals(honest)
    check = [e for e in evals if e.metric == "consistency"]
    assert [e.value for e in check] == [1.0] and check[0].detail["rows"] == 4
    row = _row(honest, budget)
    assert row["status"] == "ok" and row["leakage_evaluator"] == "exact-channel"
    assert row["leakage"] == pytest.approx(optimum(SC, budget, privacy="mi", observation="useful").value, abs=1e-7)


def test_verification_does_not_move_the_evaluators_numbers():
    honest = FiniteChannel(TASK, 0.2, _optimal(0.2))
    a, b = _evals(honest, seed=11), _evals(honest, seed=11)
    assert [(e.evaluator, e.value) for e in a] == [(e.evaluator, e.value) for e in b]
    sample = next(e for e in a if e.evaluator == "sample-distortion")
    exact = next(e for e in a if e.evaluator == "exact-distortion")
    assert abs(sample.value - exact.value) < 5 * sample.stderr + 1e-12


@pytest.mark.parametrize("z, match", [
    (lambda n: np.full(n, 4), "integers in 0..3"),  # a label outside the alphabet
    (lambda n: np.zeros((n, 2), dtype=np.int64), "expected"),  # wrong shape
    (lambda n: np.full(n, np.nan), "expected"),  # NaN labels
])
def test_malformed_releases_are_refused(z, match):
    class Bad(Claiming):
        def release(self, w, rng):
            return z(len(w))

    with pytest.raises(InputError, match=match):
        _evals(Bad(TASK, 0.2, np.eye(4), np.eye(4)))


class LyingLearner(Learner):
    """A third-party learner whose mechanisms release Z = U and claim the constant channel."""

    name = "liar"
    serves = ("finite",)

    def _fit(self, samples, task, budgets, seed, device):
        return [Claiming(task, b, np.eye(task.n_w)[:, : task.n_z], np.tile(np.eye(task.n_z)[0], (task.n_w, 1)))
                for b in budgets]


def test_assert_near_optimal_refuses_the_liar():
    with pytest.raises(AssertionError, match="inconsistent|channel\\(\\) does not describe"):
        assert_near_optimal(LyingLearner(), SC, budgets=[0.2], privacy="mi", observation="useful", tol=0.05,
                            n_train=200, n_eval=5000)
    assert math.isfinite(TRUE_MI_OF_U)


# --- parametric mechanisms whose parameters claim more noise than they add -----------------------------


def test_a_linear_gaussian_claiming_noise_it_does_not_add_is_inconsistent():
    from privbench.datasets import GaussianScalar
    from privbench.learners.mechanisms import LinearGaussian

    sc = GaussianScalar(0.85)
    task = task_for(sc, "useful", "mi")
    truth = LinearGaussian(task, 0.2, A=[[1.0]], B=[[0.0]], noise_cov=[[0.0]])  # Z = U: I = -log(1 - rho^2)/2

    class Claims(LinearGaussian):
        def release(self, w, rng):
            return truth.release(w, rng)

    lie = Claims(task, 0.2, A=[[1.0]], B=[[0.0]], noise_cov=[[4.0]])  # claims I(S;Z) = 0.13, MSE 4
    case = make_case("t", "cheaters", sc.name, sc.params(), "useful", "mi", None, "identity", {}, [0.2], 0,
                     100, 20000)
    row = score_budget(case, sc, lie, 0.2, evaluate, headline, score)
    true_mi = -0.5 * math.log(1 - 0.85**2)  # 0.6410 nats
    assert row["status"] == "inconsistent" and "parameters do not describe release()" in row["error"]
    assert row["leakage_evaluator"] != "exact-linear-gaussian" and row["leakage"] > true_mi - 0.05
    assert row["distortion"] < 1e-12


def test_a_mixture_shift_claiming_noise_it_does_not_add_is_inconsistent():
    from privbench.datasets import BinaryGMM
    from privbench.learners.mechanisms import MixtureShift

    sc = BinaryGMM(0.75, 3.0, 2.0, 1.0)
    task = task_for(sc, "full", "map")
    truth = MixtureShift(task, 1.0, 0.0, 0.0, 0.0, 0.0)  # Z = U: MAP accuracy of S from U

    class Claims(MixtureShift):
        def release(self, w, rng):
            return truth.release(w, rng)

    lie = Claims(task, 1.0, 0.0, 0.0, 5.0, 5.0)  # claims noise of sd 5 on both classes
    case = make_case("t", "cheaters", sc.name, sc.params(), "full", "map", "general", "identity", {}, [1.0], 0,
                     100, 20000)
    row = score_budget(case, sc, lie, 1.0, evaluate, headline, score)
    from privbench.theory.mixture import mechanism_accuracy

    true_acc = mechanism_accuracy(sc, **truth.params())
    # the claimed parameters are ignored: the headline is the largest sample-based bound (which sample
    # attacker wins depends on the draw), at the true leakage
    assert row["status"] == "inconsistent" and row["leakage_evaluator"] != "exact-mixture-params"
    assert row["leakage_evaluator"] in ("mixture-fresh-classifier", "ensemble-linear", "ensemble-knn", "ensemble-gbt")
    assert row["leakage"] > true_acc - 0.02 and row["distortion"] < 1e-12


# --- releases that game the evaluator's arrays, dtypes and shapes ----------------------------------------


def _gauss():
    from privbench.datasets import GaussianScalar

    sc = GaussianScalar(0.85)
    return sc, task_for(sc, "useful", "mi")


def test_a_release_that_writes_into_w_cannot_change_the_measured_distortion():
    from privbench.learners.mechanisms import LinearGaussian

    sc, task = _gauss()

    class Overwrites(LinearGaussian):
        def release(self, w, rng):
            z = np.full((len(w), 1), 2.0)
            w[:] = z  # under `useful`, W was the evaluator's own U
            return z

    evals = evaluate(Overwrites(task, 0.2, [[1.0]], [[0.0]], [[0.0]]), sc, "useful", "mi", n_eval=4000, seed=1,
                     cross_check=False)
    d = next(e for e in evals if e.evaluator == "sample-distortion")
    assert d.value == pytest.approx(1.0 + 4.0, abs=0.15)  # E(U - 2)^2 = Var U + 4, not 0


@pytest.mark.parametrize("make, match", [
    (lambda w: w.astype(complex) + 1j * w, "complex"),  # S carried in the imaginary part
    (lambda w: np.ascontiguousarray(np.hstack([w, w]).T), "shape"),  # (d, n) instead of (n, d)
    (lambda w: w > 0, "bool"),
])
def test_releases_of_the_wrong_dtype_or_layout_are_refused(make, match):
    from privbench.learners.mechanisms import LinearGaussian

    sc, task = _gauss()

    class Odd(LinearGaussian):
        def release(self, w, rng):
            return make(np.asarray(w, dtype=float))

    with pytest.raises(InputError, match=match):
        evaluate(Odd(task, 0.2, [[1.0]], [[0.0]], [[0.0]]), sc, "useful", "mi", n_eval=400, seed=1)


def test_privbench_check_fails_a_lying_third_party_learner(tmp_path):
    import inspect
    import os
    import subprocess
    import sys

    mod = tmp_path / "liar_mod.py"
    mod.write_text("import numpy as np\nfrom privbench.learners import Learner, Mechanism\n"
                   "from privbench.learners.base import mechanism_type\n"
                   "from privbench.learners.mechanisms import FiniteChannel\n\n\n"
                   + inspect.getsource(Claiming) + "\n\n" + inspect.getsource(LyingLearner))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-m", "privbench.bench.cli", "check", "--learner", "liar_mod:LyingLearner",
                          "--suite", "regression", "--out", str(tmp_path / "out"), "--jobs", "1"],
                         capture_output=True, text=True, env=env, timeout=600)
    assert out.returncode == 1, out.stderr[-2000:]
    assert "inconsistent (channel() does not describe release()" in out.stdout + out.stderr


def test_a_plug_in_named_like_a_built_in_learner_does_not_replace_it(tmp_path):
    import os
    import subprocess
    import sys

    (tmp_path / "impostor_mod.py").write_text(
        "from privbench.learners import Learner\n\nclass Impostor(Learner):\n    name = 'ppan-linear'\n"
        "    serves = ('gaussian',)\n\n    def _fit(self, samples, task, budgets, seed, device):\n"
        "        raise NotImplementedError\n")
    dist = tmp_path / "impostor-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: impostor\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[privbench.learners]\nppan-linear = impostor_mod:Impostor\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    code = ("import warnings; warnings.simplefilter('ignore')\n"
            "from privbench.learners import available, plugin_errors\n"
            "print(available()['ppan-linear'].__module__); print(plugin_errors()['ppan-linear'])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    module, error = out.stdout.strip().splitlines()
    assert module == "privbench.learners.ppan_continuous"  # the built-in stays
    assert "impostor_mod:Impostor" in error and "already registered (privbench.learners.ppan_continuous:" in error
