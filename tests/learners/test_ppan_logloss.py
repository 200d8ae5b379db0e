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
        assert h <= budget + 1e-9  # on the training joint: the budget is met exactly
        assert leak < identity_leak - 0.05
    again = learner.fit(samples, task, [0.3, 0.6], seed=5, device="cpu")
    assert all(np.array_equal(a.channel(), b.channel()) for a, b in zip(mechs, again))


def test_an_overshooting_channel_is_mixed_with_the_identity_down_to_its_budget():
    from privbench.learners.ppan_logloss import to_budget

    joint = np.asarray(JOINT)
    merge_all = np.zeros((3, 4))
    merge_all[:, 0] = 1.0  # Z constant: H(U | Z) = H(U)
    h_u = _measures(joint, merge_all)[1]
    h_uw = np.diag(joint.sum(axis=0))  # P(U, W) for W = U
    ch, t = to_budget(merge_all, h_uw, 0.4)
    assert h_u > 0.4 and 0 < t < 1
    assert 0.4 - 1e-6 <= _measures(joint, ch)[1] <= 0.4
    assert to_budget(np.eye(3, 4), h_uw, 0.4)[1] == 0.0
