"""Which metric gives which guarantee: map -> TV bound (tight), leakage and joint guarantees vs exact deltas."""

from __future__ import annotations

import math

import numpy as np
import pytest

from privbench.datasets.errors import InputError
from privbench.theory.guarantees import (
    dp_delta,
    ip_delta,
    joint_guarantee,
    leakage_guarantee,
    map_tv_bound,
    strong_ip_delta,
)


def tv_by_hand(p: np.ndarray) -> float:
    return float(np.abs(p - np.outer(p.sum(1), p.sum(0))).sum())


def test_map_tv_bound_equal_priors_is_2acc_minus_1_by_hand():
    # uniform binary S through a symmetric channel with P(z = s | s) = c: acc = c, TV = 2c - 1
    for c in (0.5, 0.6, 0.9, 1.0):
        p = 0.5 * np.array([[c, 1 - c], [1 - c, c]])
        assert tv_by_hand(p) == pytest.approx(2 * c - 1, abs=1e-15)
        assert map_tv_bound(c, 0.5) == pytest.approx(2 * c - 1, abs=1e-15)


def test_map_tv_bound_holds_on_random_binary_joints_and_is_attained():
    rng = np.random.default_rng(12)
    worst = 0.0
    for _ in range(2000):
        n_z = int(rng.integers(2, 7))
        p = rng.dirichlet(np.full(2 * n_z, rng.choice([0.2, 1.0, 5.0]))).reshape(2, n_z)
        acc, pi = p.max(axis=0).sum(), p.sum(1).min()
        bound = map_tv_bound(acc, pi)
        assert tv_by_hand(p) <= bound + 1e-12
        worst = max(worst, tv_by_hand(p) / bound if bound > 0 else 1.0)
    assert worst > 0.9  # random joints come close
    # the extremal joint of the proof: P(S=1) = 0.3, every negative x_z alone on its z
    p1, acc = 0.3, 0.85  # c = 0.4 > 0: x_z < 0 on z0 (only S=0), the rest split
    x_pos, x_neg = (2 * acc - 1 - 0.4) / 2, (2 * acc - 1 + 0.4) / 2
    rest = 1 - x_neg - x_pos  # mass with x = 0, split evenly between S=0 and S=1
    p = np.array([[x_neg, 0.0, rest / 2], [0.0, x_pos, rest / 2]])
    assert p.sum(1)[1] == pytest.approx(p1) and p.max(axis=0).sum() == pytest.approx(acc)
    assert tv_by_hand(p) == pytest.approx(map_tv_bound(acc, p1), abs=1e-12)
    assert map_tv_bound(acc, p1) == pytest.approx(4 * 0.3 * (0.85 - 0.3))  # 0.66 by hand


def test_leakage_guarantee_values_by_hand():
    e = math.e
    g = leakage_guarantee("map", 0.8, 1.0, [0.75, 0.25])  # TV <= 4 * 0.25 * 0.55 = 0.55
    assert g["level"] == pytest.approx(0.55) and g["divergence"] == "tv" and g["kind"] == "ip"
    assert g["delta"] == pytest.approx(0.55 / (1 - 1 / e), rel=1e-12)  # Theorem 1(a): 0.870087...
    g = leakage_guarantee("chi2", 0.1, 1.0)  # Theorem 1(c)
    by_hand = (0.1 / e) / ((1 / e - 1) ** 2 + 0.1) + (e * 0.1) / ((e - 1) ** 2 + 0.1)
    assert g["delta"] == pytest.approx(by_hand, rel=1e-12) and g["divergence"] == "chi2"
    # Theorem 1(b) at eta = 0.05, eps = 1: the largest tail masses p with f(p, gamma) <= eta, by a dense grid
    grid = np.linspace(0, 1, 2_000_001)[:-1]
    zeta = 0.0
    for gamma in (math.exp(-1.0), math.exp(1.0)):
        q = grid[grid < min(1.0, gamma)]
        f = np.log(gamma) + (1 - q) * np.log((1 - q) / (gamma - q))
        zeta += q[f <= 0.05].max()
    assert leakage_guarantee("mi", 0.05, 1.0)["delta"] == pytest.approx(zeta, abs=1e-5)


def test_no_guarantee_is_refused_clearly():
    with pytest.raises(InputError, match=r"\|S\| = 3"):
        leakage_guarantee("map", 0.5, 1.0, [0.2, 0.3, 0.5])
    with pytest.raises(InputError, match="needs the priors"):
        leakage_guarantee("map", 0.8, 1.0)
    with pytest.raises(InputError, match="outside"):
        map_tv_bound(0.6, 0.25)  # below the majority prior 0.75: impossible
    with pytest.raises(InputError, match="gives no guarantee"):
        leakage_guarantee("hamming", 0.1, 1.0)


@pytest.mark.parametrize("privacy", ["mi", "chi2", "map"])
def test_joint_guarantee_bounds_hold_against_exact_deltas(privacy):
    rng = np.random.default_rng(7)
    for _ in range(150):
        n_s, n_z = (2 if privacy == "map" else int(rng.integers(2, 5))), int(rng.integers(2, 6))
        prod = np.outer(rng.dirichlet(np.ones(n_s)), rng.dirichlet(np.ones(n_z)))
        lam = float(rng.uniform(0.0, 0.3))
        p = (1 - lam) * prod + lam * rng.dirichlet(np.ones(n_s * n_z)).reshape(n_s, n_z)
        for eps in (0.1, 0.5, 1.0, 2.0):
            g = joint_guarantee(p, privacy, eps)
            assert g["delta"] >= ip_delta(p, eps) - 1e-12 and g["exact_ip_delta"] == pytest.approx(ip_delta(p, eps), abs=1e-12)
            assert g["strong_ip_delta"] >= strong_ip_delta(p, eps) - 1e-12
            assert g["dp_eps"] == 2 * eps and g["dp_delta"] >= dp_delta(p, 2 * eps) - 1e-12
            if privacy == "map":  # the joint's own TV is within the MAP bound
                assert g["level"] <= map_tv_bound(p.max(axis=0).sum(), p.sum(1).min()) + 1e-12
