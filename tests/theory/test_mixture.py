"""Tests of privbench.theory.mixture (GAP §4, binary Gaussian mixture, MAP privacy).

Every formula is checked against something computed another way: MAP accuracy
against adaptive quadrature, Monte Carlo and GAP eq (37); each family optimum
against a multi-start SLSQP over the family's raw parameters; the `general`
family against GAP Tables 2-5 (P_detect-theory), with the one row where the
paper is wrong listed in KNOWN_PAPER_ERRORS together with the evidence.
"""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.integrate import quad
from scipy.optimize import minimize
from scipy.stats import norm

from privbench.datasets import BinaryGMM, InputError
from privbench.theory.base import Optimum
from privbench.theory.mixture import (
    FAMILIES,
    general_parameters,
    map_accuracy_two_gaussians,
    mechanism_accuracy,
    mechanism_distortion,
    mixture_curve,
    mixture_optimum,
)

# --------------------------------------------------------------------------
# independent references
# --------------------------------------------------------------------------


def quad_accuracy(p: float, m0: float, s0: float, m1: float, s1: float) -> float:
    """∫ max(p N(m1, s1^2), (1-p) N(m0, s0^2)) by adaptive quadrature.

    The integrand's kinks (where the two weighted densities cross) are located
    numerically, by sign changes of their log ratio on a fine grid refined with
    brentq, not by the closed form under test; without them quad can miss the
    kink by ~1e-7 for narrow peaks (hypothesis found p=1/3, means 0 and 1/3, sd 0.2).
    """
    from scipy.optimize import brentq

    f = lambda x: max(p * norm.pdf(x, m1, s1), (1 - p) * norm.pdf(x, m0, s0))  # noqa: E731
    g = lambda x: math.log(p) + norm.logpdf(x, m1, s1) - math.log(1 - p) - norm.logpdf(x, m0, s0)  # noqa: E731
    lo, hi = min(m0 - 14 * s0, m1 - 14 * s1), max(m0 + 14 * s0, m1 + 14 * s1)
    grid = np.linspace(lo, hi, 20001)
    vals = math.log(p) + norm.logpdf(grid, m1, s1) - math.log(1 - p) - norm.logpdf(grid, m0, s0)
    # the log ratio is quadratic in x: at most two real crossings; sign changes of a ratio that is 0 up to
    # rounding (identical weighted densities, which hypothesis found) are not kinks
    kinks = [brentq(g, a, b, xtol=1e-14) for a, b, va, vb in zip(grid[:-1], grid[1:], vals[:-1], vals[1:])
             if va * vb < 0 and max(abs(va), abs(vb)) > 1e-9]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return quad(f, lo, hi, points=sorted({m0, m1, *kinks}), limit=500, epsabs=1e-12, epsrel=1e-12)[0]


def eq37(p: float, alpha: float) -> float:
    """GAP eq (37): MAP accuracy for equal variances, alpha = (mean gap) / sigma > 0."""
    eta = (1 - p) / p
    q = norm.sf
    return p * q(-alpha / 2 + math.log(eta) / alpha) + (1 - p) * q(-alpha / 2 - math.log(eta) / alpha)


def _raw(family: str, x: np.ndarray) -> tuple[float, float, float, float]:
    """Raw family parameters -> (beta0, beta1, gamma0, gamma1); betas unrestricted in sign."""
    if family == "general":
        return x[0], x[1], x[2], x[3]
    if family == "shift-noise":
        return x[0], x[1], x[2], x[2]
    if family == "shift":
        return x[0], x[1], 0.0, 0.0
    return x[0], -x[0], x[1], x[1]  # additive: Z = U + beta + gamma N


def brute_force(sc: BinaryGMM, budget: float, family: str, n_starts: int = 12, seed: int = 0):
    """Multi-start SLSQP over the family's raw parameters s.t. distortion <= budget."""
    rng = np.random.default_rng(seed)
    k = {"general": 4, "shift-noise": 3, "shift": 2, "additive": 2}[family]
    f = lambda x: float(mechanism_accuracy(sc, *_raw(family, x)))  # noqa: E731
    c = lambda x: budget - float(mechanism_distortion(sc, *_raw(family, x)))  # noqa: E731
    best, best_x = np.inf, None
    for _ in range(n_starts):
        x0 = rng.uniform(-0.3, 1.0, k) * 1.5 * math.sqrt(budget)
        scale = math.sqrt(float(mechanism_distortion(sc, *_raw(family, x0))) / budget)
        if scale > 1:
            x0 = 0.99 * x0 / scale
        r = minimize(f, x0, method="SLSQP", constraints=[{"type": "ineq", "fun": c}],
                     options={"ftol": 1e-13, "maxiter": 500})
        if c(r.x) >= -1e-10 and r.fun < best:
            best, best_x = float(r.fun), r.x
    return best, best_x


# --------------------------------------------------------------------------
# exact MAP accuracy
# --------------------------------------------------------------------------

probs = st.floats(0.02, 0.98)
means = st.floats(-5.0, 5.0)
sds = st.floats(0.2, 5.0)


@settings(max_examples=80, deadline=None)
@given(p=probs, m0=means, s0=sds, m1=means, s1=sds, equal=st.booleans())
def test_map_accuracy_matches_quadrature(p, m0, s0, m1, s1, equal):
    if equal:
        s1 = s0
    ours = float(map_accuracy_two_gaussians(p, m0, s0, m1, s1))
    assert ours == pytest.approx(quad_accuracy(p, m0, s0, m1, s1), abs=1e-8)


@settings(max_examples=80, deadline=None)
@given(p=probs, m=st.floats(-4.0, 4.0), gap=st.floats(1e-3, 10.0), s=sds)
def test_map_accuracy_equals_eq37_for_equal_variances(p, m, gap, s):
    ours = float(map_accuracy_two_gaussians(p, m, s, m + gap, s))
    assert ours == pytest.approx(eq37(p, gap / s), abs=1e-12)
    # eq (37) is symmetric in the sign of the gap
    assert float(map_accuracy_two_gaussians(p, m + gap, s, m, s)) == pytest.approx(ours, abs=1e-12)


@pytest.mark.parametrize(
    "p, m0, s0, m1, s1",
    [(0.5, -3, 2, 3, 1), (0.75, -1, 2, 1, 0.5), (0.3, 0, 1, 0, 3), (0.9, 0.5, 0.3, -0.2, 1.7)],
)
def test_map_accuracy_matches_monte_carlo(p, m0, s0, m1, s1):
    rng = np.random.default_rng(20240601)
    n = 400_000
    s = rng.random(n) < p
    x = np.where(s, rng.normal(m1, s1, n), rng.normal(m0, s0, n))
    guess = np.log(p) + norm.logpdf(x, m1, s1) > np.log(1 - p) + norm.logpdf(x, m0, s0)
    est = float(np.mean(guess == s))
    ours = float(map_accuracy_two_gaussians(p, m0, s0, m1, s1))
    assert abs(est - ours) < 5 * math.sqrt(ours * (1 - ours) / n)


def test_map_accuracy_degenerate_cases():
    # identical classes: the adversary can only guess the prior's mode
    for p in (0.2, 0.5, 0.8):
        assert float(map_accuracy_two_gaussians(p, 1.0, 2.0, 1.0, 2.0)) == max(p, 1 - p)
    assert float(map_accuracy_two_gaussians(0.0, 0, 1, 1, 2)) == 1.0
    assert float(map_accuracy_two_gaussians(1.0, 0, 1, 1, 2)) == 1.0
    # identical means, unequal variances: two crossings, no NaN
    v = float(map_accuracy_two_gaussians(0.5, 0.0, 1.0, 0.0, 3.0))
    assert v == pytest.approx(quad_accuracy(0.5, 0.0, 1.0, 0.0, 3.0), abs=1e-9)
    # nearly equal variances: continuous with the linear case (no cancellation)
    for ds in (1e-13, 1e-9, 1e-6):
        near = float(map_accuracy_two_gaussians(0.7, -1.0, 1.0, 1.0, 1.0 + ds))
        same = float(map_accuracy_two_gaussians(0.7, -1.0, 1.0, 1.0, 1.0))
        assert near == pytest.approx(same, abs=10 * ds + 1e-12)
    # broadcasting
    out = map_accuracy_two_gaussians(np.array([0.3, 0.6])[:, None], 0.0, 1.0, np.linspace(0, 3, 5), 1.5)
    assert out.shape == (2, 5) and np.all(np.isfinite(out))


@settings(max_examples=60, deadline=None)
@given(p=probs, s0=sds, s1=sds, d1=st.floats(0, 6), d2=st.floats(0, 6), t=st.floats(0, 4))
def test_accuracy_monotone_in_mean_gap_and_common_noise(p, s0, s1, d1, d2, t):
    """The two facts the family reductions use: accuracy non-decreasing in |mean gap|, and
    adding common independent noise never increases it."""
    lo, hi = sorted((d1, d2))
    a_lo = float(map_accuracy_two_gaussians(p, 0.0, s0, lo, s1))
    a_hi = float(map_accuracy_two_gaussians(p, 0.0, s0, hi, s1))
    assert a_lo <= a_hi + 1e-12
    assert float(map_accuracy_two_gaussians(p, 0.0, s0, -hi, s1)) == pytest.approx(a_hi, abs=1e-12)
    noisy = float(map_accuracy_two_gaussians(p, 0.0, math.hypot(s0, t), hi, math.hypot(s1, t)))
    assert noisy <= a_hi + 1e-12


def test_bad_accuracy_input_raises():
    with pytest.raises(InputError, match="s1"):
        map_accuracy_two_gaussians(0.5, 0, 1, 1, 0.0)
    with pytest.raises(InputError, match="prior"):
        map_accuracy_two_gaussians(1.5, 0, 1, 1, 1)


# --------------------------------------------------------------------------
# eq (44): the printed version is off the distortion ellipse
# --------------------------------------------------------------------------


def printed_eq44(d, p, eps, w0, w1):
    """GAP eq (44) exactly as printed (factors inside the square roots)."""
    a0 = d / (1 - p) * eps / (1 + eps**2)
    a1 = d / p * (1 - eps**2) / (1 + eps**2)
    return (2 * np.sqrt(a0 * (1 - w0**2) / (1 + w0**2)), np.sqrt(a1 * (1 - w1**2) / (1 + w1**2)),
            4 * np.sqrt(a0 * w0 / (1 + w0**2)), 2 * np.sqrt(a1 * w1 / (1 + w1**2)))


def test_printed_eq44_is_a_typo_and_corrected_version_lies_on_the_ellipse():
    sc = BinaryGMM(0.75, 3.0, 2.0, 1.0)
    rng = np.random.default_rng(3)
    eps, w0, w1 = rng.random((3, 2000))
    d = 4.0
    corrected = general_parameters(d, sc.prior, eps, w0, w1)
    assert np.allclose(mechanism_distortion(sc, *corrected), d, rtol=1e-12)
    assert all(np.all(x >= 0) for x in corrected)
    # printed: eps = 0.5, w = 0 gives (1 + 4 eps - eps^2)/(1 + eps^2) D = 2.2 D, infeasible
    printed = printed_eq44(d, sc.prior, 0.5, 0.0, 0.0)
    assert float(mechanism_distortion(sc, *printed)) == pytest.approx(2.2 * d, rel=1e-12)
    dev = mechanism_distortion(sc, *printed_eq44(d, sc.prior, eps, w0, w1)) / d
    assert dev.max() > 2.0 and np.mean(np.abs(dev - 1) > 0.05) > 0.9
    # endpoints of the corrected parametrisation: eps=0 -> all on class 1, eps=1 -> class 0
    b0, b1, g0, g1 = general_parameters(d, sc.prior, 0.0, 0.0, 0.0)
    assert (b0, g0, g1) == (0.0, 0.0, 0.0) and float(b1) == pytest.approx(math.sqrt(d / sc.prior))


# --------------------------------------------------------------------------
# families
# --------------------------------------------------------------------------

SCENARIOS = [
    BinaryGMM(0.5, 3.0, 1.0, 1.0),
    BinaryGMM(0.75, 3.0, 2.0, 1.0),
    BinaryGMM(0.3, 1.0, 0.5, 1.5),
    BinaryGMM(0.9, 2.0, 1.0, 1.0),
    BinaryGMM(0.6, 0.5, 1.2, 0.4),
]
BRUTE_CASES = [(sc, d) for sc in SCENARIOS for d in (0.4, 2.5, 7.0)]


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("sc, budget", BRUTE_CASES, ids=lambda v: getattr(v, "id", str(v)))
def test_family_matches_brute_force(sc, budget, family):
    opt = mixture_optimum(sc, budget, family)
    best, _ = brute_force(sc, budget, family, n_starts=6 if family != "general" else 10)
    # brute force (betas of any sign) never beats the family optimum, and finds it
    assert opt.value <= best + 1e-8
    assert opt.value >= best - 1e-6


@pytest.mark.parametrize("sc", SCENARIOS, ids=lambda s: s.id)
def test_optimum_is_feasible_exact_and_jsonable(sc):
    for family in FAMILIES:
        for budget in (0.0, 1.0, 5.0):
            opt = mixture_optimum(sc, budget, family)
            assert isinstance(opt, Optimum) and opt.bound_kind == "family" and opt.family == family
            assert isinstance(opt.method, str) and opt.method
            m = opt.mechanism
            assert set(m) == {"beta0", "beta1", "gamma0", "gamma1"}
            assert all(type(v) is float for v in m.values())
            json.dumps(m)
            assert float(mechanism_distortion(sc, **m)) <= budget * (1 + 1e-12) + 1e-15
            assert opt.value == float(mechanism_accuracy(sc, **m))
            raw = mechanism_accuracy(sc, 0, 0, 0, 0)
            if budget == 0.0:
                assert opt.value == pytest.approx(float(raw), abs=1e-14)


@pytest.mark.parametrize("sc", SCENARIOS, ids=lambda s: s.id)
def test_family_orderings_follow_containment(sc):
    """shift (gamma=0) and additive (beta0=-beta1=0, common gamma) are both inside shift-noise,
    which is inside general: general <= shift-noise <= min(shift, additive)."""
    budgets = np.linspace(0.0, 10.0, 11)
    add, shi, sn = (mixture_curve(sc, budgets, f) for f in ("additive", "shift", "shift-noise"))
    gen = mixture_curve(sc, budgets, "general")
    # the optimal additive and shift mechanisms are members of shift-noise
    for b in budgets[1:]:
        m = mixture_optimum(sc, b, "additive").mechanism
        assert m["beta0"] == m["beta1"] == 0.0 and m["gamma0"] == m["gamma1"]
        assert mixture_optimum(sc, b, "shift").mechanism["gamma0"] == 0.0
    assert np.all(sn <= shi + 1e-12) and np.all(sn <= add + 1e-12)
    assert np.all(gen <= sn + 1e-12)
    assert np.all(gen >= max(sc.prior, 1 - sc.prior) - 1e-15)


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("sc", SCENARIOS[:3], ids=lambda s: s.id)
def test_curves_non_increasing_in_budget(sc, family):
    budgets = np.linspace(0.0, 12.0, 13 if family == "general" else 400)
    v = mixture_curve(sc, budgets, family)
    assert v.shape == budgets.shape and np.all(np.isfinite(v))
    assert np.all(np.diff(v) <= 1e-12)
    assert v[-1] < v[0]


def test_curve_equals_pointwise_optimum():
    sc = BinaryGMM(0.75, 3.0, 2.0, 1.0)
    budgets = [0.5, 2.0, 6.0]
    for family in FAMILIES:
        curve = mixture_curve(sc, budgets, family)
        pts = [mixture_optimum(sc, b, family).value for b in budgets]
        assert np.allclose(curve, pts, rtol=0, atol=1e-12)


@pytest.mark.parametrize("p", [0.5, 0.75, 0.2])
def test_saturation_at_prior_once_classes_can_be_identical(p):
    sc = BinaryGMM(p, 3.0, 1.0, 1.0)
    d_id = p * (1 - p) * 36.0  # shift both means to one point
    top = max(p, 1 - p)
    budgets = np.array([d_id, d_id + 0.5, 3 * d_id])
    for family in ("shift", "shift-noise", "general"):
        assert np.allclose(mixture_curve(sc, budgets, family), top, rtol=0, atol=1e-12)
    below = mixture_curve(sc, [0.5 * d_id, 0.9 * d_id], "shift")
    assert below[0] > top + 0.05 and below[1] > top  # not yet saturated (barely, for p != 1/2)
    assert np.all(mixture_curve(sc, budgets, "additive") > top)  # noise alone never gets there
    # unequal variances: general reaches the prior once it can match variances too
    sc2 = BinaryGMM(0.4, 1.0, 0.5, 1.5)
    d_id2 = 0.24 * 4.0 + 0.6 * (1.5**2 - 0.5**2)
    assert mixture_optimum(sc2, d_id2 + 1e-9, "general").value == pytest.approx(0.6, abs=1e-12)


def test_shift_theorem3_and_overshoot():
    sc = BinaryGMM(0.75, 3.0, 1.0, 1.0)
    p = sc.prior
    eq40 = lambda d, p: (math.sqrt(p * d / (1 - p)), math.sqrt((1 - p) * d / p))  # noqa: E731
    for d in (0.5, 2.0, 6.0):  # b_max = sqrt(D / (p(1-p))) <= 2 mu = 6 up to D = 6.75
        opt = mixture_optimum(sc, d, "shift")
        assert (opt.mechanism["beta0"], opt.mechanism["beta1"]) == pytest.approx(eq40(d, p), abs=1e-12)
        assert opt.value == pytest.approx(eq37(p, 6.0 - sum(eq40(d, p))), abs=1e-12)
    for q, d in ((0.75, 12.0), (0.5, 10.0), (0.5, 16.0)):
        # beyond b_max = 2 mu, (40) over-shifts and the adversary gains back accuracy
        sc = BinaryGMM(q, 3.0, 1.0, 1.0)
        over = float(mechanism_accuracy(sc, *eq40(d, q), 0, 0))
        opt = mixture_optimum(sc, d, "shift")
        assert opt.value == pytest.approx(max(q, 1 - q), abs=1e-12) and over > opt.value + 1e-2


def test_additive_theorem2_eq39():
    sc = BinaryGMM(0.75, 3.0, 1.0, 1.0)
    for d in (0.0, 1.0, 4.0, 9.0):
        assert mixture_optimum(sc, d, "additive").value == pytest.approx(
            eq37(0.75, 6.0 / math.sqrt(1.0 + d)), abs=1e-12)


def test_bad_input_raises():
    sc = BinaryGMM(0.5, 3.0, 1.0, 1.0)
    with pytest.raises(InputError, match="family='gaussian'"):
        mixture_optimum(sc, 1.0, "gaussian")
    with pytest.raises(InputError, match="family"):
        mixture_curve(sc, [1.0], "pdd")
    for bad in (-1.0, float("nan"), float("inf")):
        with pytest.raises(InputError, match="budget"):
            mixture_optimum(sc, bad, "general")
        with pytest.raises(InputError, match="budget"):
            mixture_curve(sc, [1.0, bad], "shift")
    with pytest.raises(InputError, match="binary-gmm"):
        mixture_optimum("binary-gmm", 1.0, "shift")  # type: ignore[arg-type]


# --------------------------------------------------------------------------
# GAP Tables 2-5
# --------------------------------------------------------------------------

# (prior, sigma0) -> rows "D beta0 beta1 gamma0 gamma1 acc xent distance P_detect P_detect-theory"
# (mu = 3, sigma1 = 1); the first five numbers after D are the paper's *learned* mechanism.
GAP_TABLES = {
    (0.5, 1.0): """1 0.5214 0.5214 0.7797 0.7797 0.9742 0.0715 0.9776 0.9747 0.9693
2 0.9861 0.9861 1.0028 1.0029 0.9169 0.1974 1.9909 0.9225 0.9213
3 1.3819 1.3819 1.0405 1.0403 0.8633 0.3130 3.0013 0.8689 0.8682
4 1.5713 1.5713 1.2249 1.2249 0.8123 0.4066 4.0136 0.8169 0.8144
5 1.8199 1.8199 1.3026 1.3024 0.7545 0.4970 4.9894 0.7638 0.7602
6 1.9743 1.9745 1.436 1.4359 0.7122 0.5564 5.9698 0.7211 0.7035
7 2.5332 2.5332 0.7499 0.7500 0.6391 0.6326 7.0149 0.6456 0.6384
8 2.8284 2.8284 0.0044 0.0028 0.5727 0.6787 7.9857 0.5681 0.5681
9 2.9999 3.0000 0.0003 0.0004 0.4960 0.6938 8.9983 0.5000 0.5000""",
    (0.75, 1.0): """1 0.8094 0.2698 0.844 0.8963 0.9784 0.0591 0.9533 0.9731 0.9630
2 1.4998 0.5000 0.9676 1.1612 0.9314 0.1635 1.9098 0.9271 0.9176
3 0.9808 0.3269 1.3630 1.5762 0.911 0.2054 2.9833 0.9205 0.8647
4 2.2611 0.7536 1.1327 1.6225 0.8359 0.3519 4.0559 0.8355 0.8023
5 2.5102 0.8368 1.0724 1.8666 0.792 0.401 5.0445 0.7963 0.7503
6 2.8238 0.9412 1.2894 1.9752 0.7627 0.4559 6.0843 0.7643 0.7500
7 3.2148 1.0718 0.6938 2.1403 0.7500 0.4468 7.0131 0.7500 0.7500
8 3.3955 1.1320 1.0256 2.2789 0.7500 0.4799 8.0484 0.7500 0.7500
9 4.1639 1.3878 0.0367 2.0714 0.7500 0.4745 8.9343 0.7500 0.7500""",
    (0.5, 2.0): """1 0.8660 0.8660 0.0079 0.7074 0.9122 0.2103 1.0078 0.9107 0.9105
2 1.2781 1.2781 0.0171 0.8560 0.8595 0.3239 2.0181 0.8550 0.8539
3 1.5146 1.5146 0.0278 1.1352 0.8084 0.4211 3.0264 0.8042 0.8011
4 1.7587 1.7587 0.0330 1.2857 0.7557 0.4970 4.0274 0.7554 0.7513
5 2.0923 2.0923 0.0142 1.0028 0.7057 0.5589 5.0082 0.7113 0.7043
6 2.3079 2.2572 0.0211 1.1185 0.6650 0.5999 6.0377 0.6676 0.6600
7 2.5351 2.5351 0.0567 1.0715 0.6100 0.6509 7.0125 0.6225 0.6185
8 2.7056 2.7056 0.0358 1.1665 0.5770 0.6738 8.0088 0.5868 0.5803
9 2.8682 2.8682 0.0564 1.2435 0.5445 0.6844 9.0427 0.5601 0.5457""",
    (0.75, 2.0): """1 0.8214 0.2739 0.0401 1.0167 0.9514 0.1357 0.9909 0.9448 0.9328
2 1.4164 0.4722 0.0583 1.2959 0.9026 0.2402 2.0257 0.9033 0.8891
3 2.2354 0.7450 0.0246 1.3335 0.8665 0.3354 2.9617 0.8514 0.8481
4 2.6076 0.8693 0.0346 1.5199 0.8269 0.4034 3.9522 0.8148 0.8120
5 2.9919 0.9977 0.0143 1.6399 0.7885 0.4625 5.0034 0.7833 0.7824
6 3.3079 1.1027 0.0094 1.7707 0.7616 0.5013 6.0022 0.7606 0.7500
7 3.1458 1.0488 0.0565 2.1606 0.7496 0.4974 7.0091 0.7500 0.7500
8 3.9707 1.3237 0.0142 1.9129 0.7500 0.5470 7.9049 0.7500 0.7500
9 4.0835 1.3613 0.0625 2.1364 0.7500 0.5489 8.8932 0.7500 0.7500""",
}
ROWS = [
    (p, s0, *map(float, line.split()))
    for (p, s0), text in GAP_TABLES.items()
    for line in text.splitlines()
]
ROW_IDS = [f"prior{r[0]}-s0_{r[1]}-D{int(r[2])}" for r in ROWS]
TABLE_TOL = 5e-4  # the paper prints 4 decimals and its grid is coarser than ours

# Rows of P_detect-theory that disagree with ours beyond TABLE_TOL, with evidence.
KNOWN_PAPER_ERRORS = {
    # Table 5 (prior 0.75, N(-3, 4) vs N(3, 1)), D = 6.  The paper prints 0.7500, i.e.
    # the adversary reduced to guessing S = 1 always.  That needs (1-p) f0 <= p f1
    # everywhere, i.e. v1 > v0 and d^2 <= 2 (v1 - v0) (ln 3 - ln(v1/v0) / 2), whose
    # cheapest mechanism costs D = 6.8755 > 6: 0.75 is unreachable at D = 6.  Our
    # optimum 0.76058 (beta0=3.2855, beta1=1.0952, gamma0=0, gamma1=1.6919) is matched
    # by multi-start SLSQP over the raw parameters and by the paper's own learned
    # mechanism at this row (P_detect 0.7606, exact 0.76061 at distortion 5.9991).
    # The printed 0.7500 looks like the saturation value copied one row too early.
    (0.75, 2.0, 6): {"paper": 0.7500, "ours": 0.76058, "reason": "0.75 needs D >= 6.8755"},
}

# Paper's learned P_detect column vs the exact accuracy of its printed learned mechanism.
LEARNED_TOL = 1e-4  # rounding of the printed parameters and of the printed accuracy
KNOWN_LEARNED_COLUMN_ERRORS = {
    # Table 5, D = 7: printed 0.7500, but the printed mechanism has distortion 6.8009 <
    # 6.8755 (the least distortion at which accuracy 0.75 is possible), so its accuracy
    # must exceed 0.75; exact value 0.75046.
    (0.75, 2.0, 7): {"paper": 0.7500, "exact": 0.75046},
}


@pytest.fixture(scope="module")
def table_optima() -> dict:
    return {(p, s0, int(d)): mixture_optimum(BinaryGMM(p, 3.0, s0, 1.0), d, "general")
            for p, s0, d, *_ in ROWS}


def min_budget_for_prior_accuracy(sc: BinaryGMM, n_starts: int = 8) -> float:
    """Least distortion of any general-family mechanism with MAP accuracy exactly prior (> 1/2).

    Accuracy = prior iff (1-prior) f0 <= prior f1 a.e.; for Gaussians this is v1 > v0 and
    d^2 <= 2 (v1 - v0)(ln(prior/(1-prior)) - ln(v1/v0)/2), d the remaining mean gap.
    Minimised over (d, gamma0, gamma1) with the cheapest shift split (cost prior(1-prior) b^2).
    """
    p, lr = sc.prior, math.log(sc.prior / (1 - sc.prior))

    def cost(x):
        d, g0, g1 = x
        return p * (1 - p) * (2 * sc.mu - d) ** 2 + (1 - p) * g0**2 + p * g1**2

    def cond(x):
        d, g0, g1 = x
        v0, v1 = sc.sigma0**2 + g0**2, sc.sigma1**2 + g1**2
        return 2 * (v1 - v0) * (lr - 0.5 * math.log(v1 / v0)) - d**2

    def var_order(x):  # v1 >= v0
        return sc.sigma1**2 + x[2] ** 2 - sc.sigma0**2 - x[1] ** 2

    rng = np.random.default_rng(1)
    best = np.inf
    for _ in range(n_starts):
        x0 = rng.uniform([0, 0, sc.sigma0], [2 * sc.mu, 2, 3 * sc.sigma0 + 2])
        r = minimize(cost, x0, method="SLSQP", bounds=[(0, 2 * sc.mu), (0, 10), (0, 10)],
                     constraints=[{"type": "ineq", "fun": cond}, {"type": "ineq", "fun": var_order}],
                     options={"ftol": 1e-14, "maxiter": 1000})
        if cond(r.x) >= -1e-9:
            best = min(best, float(r.fun))
    return best


@pytest.mark.parametrize("row", ROWS, ids=ROW_IDS)
def test_gap_tables_p_detect_theory(row, table_optima):
    p, s0, d, b0, b1, g0, g1, _acc, _xent, _dist, p_learned, p_theory = row
    key = (p, s0, int(d))
    sc = BinaryGMM(p, 3.0, s0, 1.0)
    opt = table_optima[key]
    if key not in KNOWN_PAPER_ERRORS:
        assert abs(opt.value - p_theory) <= TABLE_TOL
        return
    known = KNOWN_PAPER_ERRORS[key]
    assert known["paper"] == p_theory and opt.value == pytest.approx(known["ours"], abs=1e-5)
    assert abs(opt.value - p_theory) > TABLE_TOL
    m = opt.mechanism
    assert float(mechanism_distortion(sc, **m)) <= d * (1 + 1e-12)
    sd0, sd1 = math.hypot(s0, m["gamma0"]), math.hypot(1.0, m["gamma1"])
    exact = quad_accuracy(p, -3.0 + m["beta0"], sd0, 3.0 - m["beta1"], sd1)
    assert opt.value == pytest.approx(exact, abs=1e-8)
    if opt.value < p_theory:  # paper's "optimum" beaten by a feasible mechanism
        assert exact < p_theory - TABLE_TOL
    else:  # paper claims less than any feasible mechanism can reach
        best, _ = brute_force(sc, d, "general", n_starts=20, seed=7)
        assert best >= opt.value - 1e-7 and best > p_theory + TABLE_TOL
        assert p_theory == max(p, 1 - p)
        assert min_budget_for_prior_accuracy(sc) > d + 0.5
        learned = float(mechanism_accuracy(sc, b0, b1, g0, g1))
        assert float(mechanism_distortion(sc, b0, b1, g0, g1)) <= d
        assert learned >= opt.value and abs(learned - opt.value) <= TABLE_TOL
        assert abs(p_learned - opt.value) <= TABLE_TOL


@pytest.mark.parametrize("row", ROWS, ids=ROW_IDS)
def test_gap_learned_column_and_no_learned_mechanism_beats_theory(row):
    """Our exact accuracy reproduces the paper's P_detect of its printed learned mechanisms,
    and none of them beats our optimum at the distortion it actually uses."""
    p, s0, d, b0, b1, g0, g1, _acc, _xent, _dist, p_learned, _p_theory = row
    sc = BinaryGMM(p, 3.0, s0, 1.0)
    exact = float(mechanism_accuracy(sc, b0, b1, g0, g1))
    used = float(mechanism_distortion(sc, b0, b1, g0, g1))
    key = (p, s0, int(d))
    if key in KNOWN_LEARNED_COLUMN_ERRORS:
        assert exact == pytest.approx(KNOWN_LEARNED_COLUMN_ERRORS[key]["exact"], abs=1e-5)
        assert used < min_budget_for_prior_accuracy(sc) and exact > p + 3e-4
    else:
        assert abs(exact - p_learned) <= LEARNED_TOL
    assert exact >= mixture_optimum(sc, used, "general").value - 1e-9
