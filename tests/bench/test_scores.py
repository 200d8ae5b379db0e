"""Scores: gap and overshoot at the achieved distortion, below-bound flags, areas, seed aggregates."""

from __future__ import annotations

import math

import numpy as np
import pytest

from privbench.bench.evaluators import Evaluation, evaluate, headline
from privbench.bench.scores import REASON_CERTIFIED, REASON_EXACT, REASON_FAMILY, aggregate, area_between, score
from privbench.datasets import BinaryGMM, GaussianScalar, InputError, SymmetricPair, task_for
from privbench.learners.mechanisms import FiniteChannel, LinearGaussian, MixtureShift
from privbench.theory import curve, optimum


def ev(metric, value, kind="exact", stderr=0.0, evaluator="x"):
    return Evaluation(metric, value, evaluator, kind, stderr)


def prop1(d):  # PPAN Prop 1 at rho = 0.85, unit variances, written out here
    return max(0.0, -0.5 * math.log(1 - 0.85**2 * (1 - min(d, 1.0))))


def test_honest_optimal_points_are_not_flagged():
    sc = SymmetricPair(6, 0.7)
    for obs in ("useful", "full"):
        opt = optimum(sc, 0.3, "mi", obs)
        mech = FiniteChannel(task_for(sc, obs, "mi"), 0.3, opt.mechanism["channel"])
        evals = evaluate(mech, sc, obs, "mi", n_eval=1000)
        out = score(headline(evals, "mi"), headline(evals, "distortion"), 0.3,
                    lambda d: float(curve(sc, [d], "mi", obs)[0]), "exact")
        assert out["below_bound"] is False and out["below_bound_reason"] is None
        assert abs(out["gap"]) < 1e-7 and out["overshoot"] == pytest.approx(0.0, abs=1e-12)
    g = GaussianScalar(0.85)
    o = optimum(g, 0.3, "mi", "useful")
    m = o.mechanism
    mech = LinearGaussian(task_for(g, "useful", "mi"), 0.3, m["A"], m["B"], m["noise_cov"])
    evals = evaluate(mech, g, "useful", "mi", n_eval=2000)
    sample = [e for e in evals if e.kind != "exact"]  # score it as if no exact evaluator existed
    out = score(headline(sample, "mi"), headline(sample, "distortion"), 0.3, prop1, "exact")
    assert out["below_bound"] is False


def test_fabricated_point_below_exact_optimum_is_flagged():
    d = 0.3
    opt = prop1(d)
    out = score(ev("mi", opt - 0.05), ev("distortion", d), 0.3, prop1, "exact")
    assert out["below_bound"] is True and out["below_bound_reason"] == REASON_EXACT
    assert out["gap"] == pytest.approx(-0.05) and out["optimum_at_distortion"] == pytest.approx(opt)
    # the same number from a noisy estimator (3 * 0.02 > 0.05) is within tolerance
    noisy = ev("mi", opt - 0.05, "estimate", 0.02)
    assert score(noisy, ev("distortion", d), 0.3, prop1, "exact")["below_bound"] is False
    # just below the optimum by less than solver tolerance: not flagged
    assert score(ev("mi", opt - 5e-7), ev("distortion", d), 0.3, prop1, "exact")["below_bound"] is False
    # a noisy distortion: the flag uses the most lenient distortion within 3 stderr
    lenient = ev("distortion", d, "estimate", 0.02)
    assert score(ev("mi", prop1(d + 0.05)), lenient, 0.3, prop1, "exact")["below_bound"] is False
    assert score(ev("mi", prop1(d + 0.07) - 1e-3), lenient, 0.3, prop1, "exact")["below_bound"] is True


def test_family_bound_reason():
    sc = BinaryGMM(0.3, 1.5, 0.7, 1.3)
    fam = lambda d: float(curve(sc, [d], "map", "useful", "additive")[0])  # noqa: E731
    out = score(ev("map", fam(1.0) - 0.02), ev("distortion", 1.0), 1.0, fam, "family")
    assert out["below_bound"] is True and out["below_bound_reason"] == REASON_FAMILY
    # an honest member of the family sits on its bound
    o = optimum(sc, 1.0, "map", "useful", "additive")
    evals = evaluate(MixtureShift(task_for(sc, "useful", "map"), 1.0, **o.mechanism), sc, "useful", "map", n_eval=1000)
    assert score(headline(evals, "map"), headline(evals, "distortion"), 1.0, fam, "family")["below_bound"] is False
    with pytest.raises(InputError, match="bound_kind"):
        score(ev("map", 0.5), ev("distortion", 1.0), 1.0, fam, "approximate")


def test_gap_at_achieved_distortion_and_overshoot():
    out = score(ev("mi", 0.5), ev("distortion", 0.2), 0.3, prop1, "exact")
    assert out["gap"] == pytest.approx(0.5 - prop1(0.2)) and out["overshoot"] == 0.0  # under-used budget
    out = score(ev("mi", 0.5), ev("distortion", 0.45), 0.3, prop1, "exact")
    assert out["overshoot"] == pytest.approx(0.15) and out["gap"] == pytest.approx(0.5 - prop1(0.45))
    inf = score(ev("mi", math.inf), ev("distortion", 0.0), 0.0, lambda d: math.inf, "exact")
    assert inf["gap"] == 0.0 and inf["below_bound"] is False
    finite_below_inf = score(ev("mi", 3.0), ev("distortion", 0.0), 0.0, lambda d: math.inf, "exact")
    assert finite_below_inf["below_bound"] is True
    nan = score(ev("mi", math.nan, "estimate", math.nan), ev("distortion", 0.2), 0.3, prop1, "exact")
    assert math.isnan(nan["gap"]) and nan["below_bound"] is False


def test_area_between():
    square = lambda d: np.asarray(d) ** 2  # noqa: E731  (vectorised)
    # chord of d^2 from 0 to 1 lies above it by integral (d - d^2) = 1/6
    assert area_between([1.0, 0.0], [1.0, 0.0], square) == pytest.approx(1 / 6, abs=1e-4)
    # a scalar-only optimum works too; a constant offset c over a range r gives c r
    scalar = lambda d: float(d) ** 2  # noqa: E731
    assert area_between([0.2, 0.6, 1.0], [0.04 + 0.1, 0.36 + 0.1, 1.1], scalar) > 0.08
    shifted = area_between([0.0, 0.5, 1.0], [0.25, 0.5, 0.75], lambda d: 0.5 * np.asarray(d) + 0.25)
    assert shifted == pytest.approx(0.0, abs=1e-12)
    assert area_between([0.0, 1.0], [0.35, 0.85], lambda d: 0.5 * np.asarray(d) + 0.25) == pytest.approx(0.1)
    # repeated distortions are averaged; one distinct distortion has no area
    assert area_between([0.0, 0.0, 1.0], [0.2, 0.4, 0.3], lambda d: 0 * np.asarray(d)) == pytest.approx(0.3)
    assert area_between([0.3, 0.3], [1.0, 2.0], scalar) == 0.0
    assert area_between([0.0, 1.0], [math.inf, 1.0], scalar) == math.inf
    assert math.isnan(area_between([0.0, 1.0], [math.nan, 1.0], scalar))
    with pytest.raises(InputError):
        area_between([0.0, 1.0], [1.0], scalar)


def test_aggregate_t_interval():
    mean, lo, hi = aggregate([1.0, 2.0, 3.0])
    t975_2 = 4.302652729911275  # Student t, 2 degrees of freedom, 97.5% (tables)
    assert mean == 2.0 and hi - mean == pytest.approx(t975_2 / math.sqrt(3)) and mean - lo == pytest.approx(hi - mean)
    assert aggregate([1.0, math.nan, 3.0])[0] == 2.0  # failed seeds dropped
    one = aggregate([0.7])
    assert one[0] == 0.7 and math.isnan(one[1]) and math.isnan(one[2])
    assert all(math.isnan(x) for x in aggregate([]))
    assert aggregate([1.0, math.inf])[0] == math.inf
    rng = np.random.default_rng(0)
    cover = sum(lo <= 0.0 <= hi for _, lo, hi in (aggregate(rng.standard_normal(5)) for _ in range(2000)))
    assert 0.93 < cover / 2000 < 0.97


def test_certified_bound_gap_against_achievable_end_flag_against_lower_end():
    # a synthetic sandwich: achievable end 0.80 - 0.01 d, lower end 0.79 - 0.01 d
    upper = lambda d: 0.80 - 0.01 * d  # noqa: E731
    lower = lambda d: 0.79 - 0.01 * d  # noqa: E731
    inside = score(ev("map", 0.785), ev("distortion", 1.0), 1.0, upper, "certified", lower_at=lower)
    assert inside["gap"] == pytest.approx(0.785 - 0.79) and inside["below_bound"] is False
    below = score(ev("map", 0.775), ev("distortion", 1.0), 1.0, upper, "certified", lower_at=lower)
    assert below["below_bound"] is True and below["below_bound_reason"] == REASON_CERTIFIED
    with pytest.raises(InputError, match="lower_at"):
        score(ev("map", 0.785), ev("distortion", 1.0), 1.0, upper, "certified")
