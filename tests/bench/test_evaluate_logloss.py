"""The log-loss evaluator: exact H(U | Z) of a verified channel, consistent with its per-sample log loss;
plug-in estimates where the channel is missing or false."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import entr

from privbench.bench.evaluators.logloss import evaluate_finite_logloss
from privbench.datasets import SymmetricPair
from privbench.learners.mechanisms import FiniteChannel

SC = SymmetricPair(3, 0.2)
TASK = SC.task("useful", "mi", "logloss")  # n_z = 4
MERGE = np.array([[1.0, 0, 0, 0], [1.0, 0, 0, 0], [0, 1.0, 0, 0]])  # Z = 1{U = 2}


def _fresh(mech, n=20000, seed=3):
    rng = np.random.default_rng(seed)
    smp = SC.sample(n, rng)
    return smp.s, smp.u, mech.release(smp.u, rng)


def _by(evals, evaluator, metric):
    return next(e for e in evals if e.evaluator == evaluator and e.metric == metric)


def test_verified_channel_gets_exact_values():
    mech = FiniteChannel(TASK, 0.5, MERGE)
    evals = evaluate_finite_logloss(mech, SC, TASK, *_fresh(mech))
    p_u = SC.joint().sum(axis=0)
    h_u_z = (p_u[0] + p_u[1]) * float(entr(p_u[:2] / p_u[:2].sum()).sum())  # Z = 0 groups u = 0, 1
    assert _by(evals, "exact-logloss", "distortion").value == pytest.approx(h_u_z, abs=1e-12)
    sample = _by(evals, "sample-logloss", "distortion")
    assert abs(sample.value - h_u_z) <= 5 * sample.stderr
    joint = SC.joint()
    p_sz = np.stack([joint[:, :2].sum(axis=1), joint[:, 2]], axis=1)
    mi = float(entr(p_sz.sum(1)).sum() + entr(p_sz.sum(0)).sum() - entr(p_sz).sum())
    assert _by(evals, "exact-channel", "mi").value == pytest.approx(mi, abs=1e-12)
    assert next(e for e in evals if e.metric == "consistency").value == 1


class _Liar(FiniteChannel):
    """Claims the merge channel but releases Z = U (reveals everything)."""

    def release(self, w, rng):
        return np.asarray(w, dtype=np.int64)


def test_false_channel_is_ignored():
    mech = _Liar(TASK, 0.5, MERGE)
    evals = evaluate_finite_logloss(mech, SC, TASK, *_fresh(mech))
    assert not any(e.evaluator.startswith("exact") for e in evals)
    assert next(e for e in evals if e.metric == "consistency").value == 0
    plug = _by(evals, "logloss-plugin", "distortion")
    assert plug.value == pytest.approx(0.0, abs=1e-12)  # Z = U: nothing left to guess


def test_evaluate_dispatches_logloss_tasks():
    from privbench.bench.evaluators.dispatch import evaluate

    mech = FiniteChannel(TASK, 0.5, MERGE)
    evals = evaluate(mech, SC, "useful", "mi", n_eval=5000, seed=1, distortion="logloss")
    assert any(e.evaluator == "exact-logloss" for e in evals)
    with pytest.raises(Exception, match="different task"):
        evaluate(mech, SC, "useful", "mi", n_eval=5000, seed=1)  # a logloss mechanism is not a Hamming one


def test_an_honest_channel_with_a_rare_cell_is_not_called_inconsistent():
    # U = 0 goes to Z = 1 with probability 2e-4: that cell adds ~5e-4 nats to H(U | Z) with a loss of ~8 nats,
    # but 2,000 draws almost never contain it, so the sample's std / sqrt(n) is far too small to compare
    eps = 2e-4
    rare = np.array([[1 - eps, eps, 0, 0], [0, 1.0, 0, 0], [0, 0, 1.0, 0]])
    mech = FiniteChannel(TASK, 0.5, rare)
    s, u, z = _fresh(mech, n=2000, seed=5)
    assert not np.any((u == 0) & (z == 1))  # the rare cell is absent from these draws
    evals = evaluate_finite_logloss(mech, SC, TASK, s, u, z)
    exact, sample = _by(evals, "exact-logloss", "distortion"), _by(evals, "sample-logloss", "distortion")
    assert exact.value - sample.value > 20 * sample.stderr  # the plain 5-sigma comparison would flag it
    assert next(e for e in evals if e.metric == "consistency").value == 1
