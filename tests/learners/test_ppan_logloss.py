"""PPAN with the log-loss utility (Appendix D): the training channel meets its budget in H(U | Z), leaks less
than the identity, and the same seed gives the same channel.  Entropies are computed here with numpy."""

from __future__ import annotations

import numpy as np

from privbench.datasets import make_scenario, task_for
from privbench.learners import make_learner

JOINT = [[0.0176, 0.0625, 0.2243], [0.3527, 0.0551, 0.0413], [0.0697, 0.0164, 0.1604]]


def _measures(joint: np.ndarray, ch: np.ndarray) -> tuple[float, float]:
    """(I(S; Z), H(U | Z)) in nats of the channel P(z | u) on the joint P(s, u)."""
    p_sz, p_uz = joint @ ch, joint.sum(axis=0)[:, None] * ch
    pz = p_uz.sum(axis=0)
    prod = np.outer(joint.sum(axis=1), pz)
    m = p_sz > 0
    mi = float((p_sz[m] * np.log(p_sz[m] / prod[m])).sum())
    m = p_uz > 0
    return mi, float(-(p_uz[m] * np.log(p_uz[m] / np.broadcast_to(pz, p_uz.shape)[m])).sum())


def test_meets_its_budget_leaks_less_than_identity_and_is_deterministic():
    sc = make_scenario("finite", {"joint": JOINT})
    samples = sc.sample(5000, np.random.default_rng(3))
    task = task_for(sc, "useful", "mi", "logloss")
    emp = np.bincount(samples.s * 3 + samples.u, minlength=9).reshape(3, 3) / len(samples)
    learner = make_learner("ppan-logloss", steps=600)
    mechs = learner.fit(samples, task, [0.3, 0.6], seed=5, device="cpu")
    identity_leak = _measures(emp, np.eye(3, task.n_z))[0]
    for mech, budget in zip(mechs, (0.3, 0.6)):
        leak, h = _measures(emp, mech.channel())
        assert h <= budget + 0.01  # the variational bound >= H(U | Z) is held at the budget
        assert leak < identity_leak - 0.05
    again = learner.fit(samples, task, [0.3, 0.6], seed=5, device="cpu")
    assert all(np.array_equal(a.channel(), b.channel()) for a, b in zip(mechs, again))
