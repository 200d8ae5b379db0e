"""Evaluators on mechanisms of known leakage: theory's optimal mechanisms and the two curve ends.

Known values come from theory (closed forms, or exact measures of the optimal
mechanism) or from formulas written out here; sample evaluators must land
within 0.01 nats (MAP: 0.01) of them, or on the side of the truth their
documentation promises.  Sample sizes were chosen so that 0.01 is about 3
standard deviations of the estimator (measured over seeds, see the report).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, stats

from privbench.bench.evaluators import Evaluation, evaluate, gaussian_approx_mi, headline, ksg_mi
from privbench.bench.evaluators.ksg import ball_counts
from privbench.datasets import (Binary, BinaryGMM, GaussianScalar, GaussianSource, GaussianVector, InputError,
                                SymmetricPair, task_for)
from privbench.learners.base import Mechanism
from privbench.learners.mechanisms import ConstantGaussian, FiniteChannel, LinearGaussian, MixtureShift
from privbench.theory import optimum

RHO = 0.85
VEC = GaussianVector.from_rho([0.47, 0.24, 0.85, 0.07, 0.66])
SRC = GaussianSource((0.47, 0.24, 0.85, 0.07, 0.66))


def by(evals, evaluator, metric):
    hits = [e for e in evals if e.evaluator == evaluator and e.metric == metric]
    assert len(hits) == 1, (evaluator, metric, [(e.evaluator, e.metric) for e in evals])
    return hits[0]


def linear_optimal(sc, observation, budget):
    opt = optimum(sc, budget, "mi", observation)
    m = opt.mechanism
    return LinearGaussian(task_for(sc, observation, "mi"), budget, m["A"], m["B"], m["noise_cov"]), opt


class Fn(Mechanism):
    """A test mechanism known only through release(): Z = f(U) (observation useful)."""

    type_name = "test-fn"

    def __init__(self, task, f):
        super().__init__(task, 0.0)
        self.f = f

    def release(self, w, rng):
        return self.f(self.task.check_w(w))

    def _state(self):  # pragma: no cover - never saved
        return {}, {}

    @classmethod
    def _from_state(cls, *args):  # pragma: no cover
        raise NotImplementedError


# --------------------------------------------------------------------------
# finite: exact measures of the channel
# --------------------------------------------------------------------------


@pytest.mark.parametrize("observation", ["useful", "full"])
@pytest.mark.parametrize("privacy", ["mi", "map", "chi2"])
def test_finite_optimal_channel_exact(observation, privacy):
    sc = SymmetricPair(6, 0.7)
    opt = optimum(sc, 0.3, privacy, observation)
    mech = FiniteChannel(task_for(sc, observation, privacy), 0.3, opt.mechanism["channel"])
    evals = evaluate(mech, sc, observation, privacy, n_eval=2000, seed=0)
    lead = headline(evals, privacy)
    assert lead.evaluator == "exact-channel" and lead.kind == "exact" and lead.stderr == 0.0
    assert lead.value == pytest.approx(opt.value, abs=1e-9)
    dist = headline(evals, "distortion")
    assert dist.evaluator == "exact-distortion" and dist.value <= 0.3 + 1e-7
    sample = by(evals, "sample-distortion", "distortion")
    assert abs(sample.value - dist.value) < 4 * sample.stderr + 1e-12


def test_finite_identity_and_constant_ends():
    sc = Binary(0.3, 0.2)
    p = sc.joint()
    ps, pu = p.sum(1), p.sum(0)
    mi_su = float(sum(p[s, u] * math.log(p[s, u] / (ps[s] * pu[u])) for s in range(2) for u in range(2)))
    task = task_for(sc, "useful", "mi")
    ident = evaluate(FiniteChannel(task, 0.0, np.eye(2)), sc, "useful", "mi", n_eval=500)
    assert headline(ident, "mi").value == pytest.approx(mi_su, abs=1e-12)
    assert headline(ident, "map").value == pytest.approx(p.max(axis=0).sum(), abs=1e-12)
    assert headline(ident, "distortion").value == 0.0
    const = evaluate(FiniteChannel(task, 1.0, [[1.0, 0.0], [1.0, 0.0]]), sc, "useful", "mi", n_eval=500)
    assert headline(const, "mi").value == pytest.approx(0.0, abs=1e-12)
    assert headline(const, "chi2").value == pytest.approx(0.0, abs=1e-12)
    assert headline(const, "map").value == pytest.approx(ps.max(), abs=1e-12)
    assert headline(const, "distortion").value == pytest.approx(pu[1], abs=1e-12)


def test_finite_without_channel_uses_plugin():
    class Hidden(FiniteChannel):
        def channel(self):
            return None

    sc = SymmetricPair(4, 0.5)
    opt = optimum(sc, 0.2, "mi", "full")
    mech = Hidden(task_for(sc, "full", "mi"), 0.2, opt.mechanism["channel"])
    evals = evaluate(mech, sc, "full", "mi", n_eval=40000, seed=1)
    lead = headline(evals, "mi")
    assert lead.evaluator == "finite-plugin" and lead.kind == "estimate"
    bias = 9 / (2 * 40000)  # plug-in MI bias (n_s - 1)(n_z - 1) / 2n
    assert abs(lead.value - opt.value) < 0.01 and lead.value > opt.value - 3 * lead.stderr
    assert abs(lead.value - opt.value - bias) < 4 * lead.stderr + bias


# --------------------------------------------------------------------------
# Gaussian: exact for linear-Gaussian, three sample estimators for anything
# --------------------------------------------------------------------------


@pytest.mark.parametrize("sc,observation,budget", [
    (GaussianScalar(RHO), "useful", 0.3), (GaussianScalar(RHO), "full", 0.3),
    (GaussianScalar(-0.6, 2.0, 0.5), "full", 0.05), (VEC, "useful", 1.0), (SRC, None, 0.5)])
def test_gaussian_optimal_mechanism_exact(sc, observation, budget):
    mech, opt = linear_optimal(sc, observation, budget)
    evals = evaluate(mech, sc, observation, "mi", n_eval=1000, seed=0)
    lead = headline(evals, "mi")
    assert lead.evaluator == "exact-linear-gaussian"
    assert lead.value == pytest.approx(opt.value, abs=1e-9)
    assert headline(evals, "distortion").value == pytest.approx(opt.mechanism["distortion"], abs=1e-9)
    assert {e.evaluator for e in evals} >= {"gaussian-approx", "posthoc-attacker", "ksg", "sample-distortion"}


def test_gaussian_sample_estimators_within_001():
    sc = GaussianScalar(RHO)
    mech, opt = linear_optimal(sc, "full", 0.3)
    evals = evaluate(mech, sc, "full", "mi", n_eval=40000, seed=3)
    for name in ("gaussian-approx", "posthoc-attacker", "ksg"):
        e = by(evals, name, "mi")
        assert abs(e.value - opt.value) < 0.01, (name, e.value, opt.value)
        assert 0 < e.stderr < 0.005
    d = by(evals, "sample-distortion", "distortion")
    assert abs(d.value - 0.3) < 4 * d.stderr


def test_ksg_on_optimal_release_within_001():
    sc = GaussianScalar(RHO)
    mech, opt = linear_optimal(sc, "useful", 0.6)
    rng = np.random.default_rng(4)
    smp = sc.sample(60000, rng)
    e = ksg_mi(smp.s, mech.release(smp.u, rng), rng=rng)
    assert abs(e.value - opt.value) < 0.01 and e.stderr < 0.005
    assert abs(gaussian_approx_mi(smp.s, mech.release(smp.u, rng)).value - opt.value) < 0.01


def test_gaussian_vector_estimators_direction():
    """5+5 dimensions: the two bounds stay below the truth (up to 3 stderr); KSG is biased down (documented)."""
    mech, opt = linear_optimal(VEC, "useful", 1.0)
    evals = evaluate(mech, VEC, "useful", "mi", n_eval=8000, seed=0)
    ga, att, ksg = (by(evals, n, "mi") for n in ("gaussian-approx", "posthoc-attacker", "ksg"))
    for e in (ga, att):
        assert opt.value - 0.02 - 3 * e.stderr < e.value < opt.value + 3 * e.stderr, e
    assert opt.value - 0.15 < ksg.value < opt.value
    assert headline(evals, "mi").evaluator == "exact-linear-gaussian"


def test_gaussian_ends_identity_and_constant():
    sc = GaussianScalar(RHO)
    task = task_for(sc, "useful", "mi")
    ident = evaluate(LinearGaussian(task, 0.0, [[1.0]], [[0.0]], [[0.0]]), sc, "useful", "mi", n_eval=10000)
    truth = -0.5 * math.log(1 - RHO**2)
    assert headline(ident, "mi").value == pytest.approx(truth, abs=1e-12)
    assert abs(by(ident, "gaussian-approx", "mi").value - truth) < 0.02
    const = evaluate(ConstantGaussian(task, 1.0, [0.5]), sc, "useful", "mi", n_eval=10000)
    assert headline(const, "mi").value == 0.0
    assert headline(const, "distortion").value == pytest.approx(1.25, abs=1e-12)
    for name in ("gaussian-approx", "posthoc-attacker", "ksg"):
        assert abs(by(const, name, "mi").value) < 0.01, name
    # S = U = Z: infinite leakage, and no sample estimator reports a small value
    src = task_for(SRC, None, "mi")
    inf = evaluate(LinearGaussian(src, 0.0, np.eye(5), np.zeros((5, 5)), np.zeros((5, 5))), SRC, None, "mi",
                   n_eval=2000)
    assert headline(inf, "mi").value == math.inf
    assert by(inf, "gaussian-approx", "mi").value == math.inf
    assert by(inf, "posthoc-attacker", "mi").value > 20 and by(inf, "ksg", "mi").value > 5


def test_gaussian_approx_is_a_lower_bound_for_gaussian_s_only():
    """The documented conditions: any Z (nonlinear, discrete) when S is Gaussian; not for a binary S."""
    sc = GaussianScalar(RHO)
    task = task_for(sc, "useful", "mi")
    truth_cube = -0.5 * math.log(1 - RHO**2)  # Z = U^3 is invertible: I(S;Z) = I(S;U)
    cube = evaluate(Fn(task, lambda w: w**3), sc, "useful", "mi", n_eval=20000, seed=0)
    ga = by(cube, "gaussian-approx", "mi")
    assert ga.value < truth_cube - 0.2  # strictly below for a nonlinear release
    assert abs(by(cube, "posthoc-attacker", "mi").value - truth_cube) < 0.02  # normal scores undo U^3
    assert headline(cube, "mi").value > truth_cube - 0.02  # the conservative choice is the largest

    def hb(p):
        p = np.clip(p, 1e-300, 1 - 1e-16)
        return -(p * np.log(p) + (1 - p) * np.log1p(-p))

    k = RHO / math.sqrt(1 - RHO**2)  # P(U > 0 | S = s) = Phi(k s)
    truth_sign = math.log(2) - integrate.quad(lambda s: stats.norm.pdf(s) * hb(stats.norm.cdf(k * s)), -12, 12)[0]
    sign = evaluate(Fn(task, np.sign), sc, "useful", "mi", n_eval=20000, seed=0)
    ga = by(sign, "gaussian-approx", "mi")
    assert ga.value < truth_sign + 3 * ga.stderr and ga.value > truth_sign - 0.05
    # a binary S released as is: the Gaussian formula exceeds H(S) <= log 2, so it is no bound there
    rng = np.random.default_rng(0)
    s = rng.integers(0, 2, 5000).astype(float)[:, None]
    assert gaussian_approx_mi(s, s + 1e-3 * rng.standard_normal(s.shape)).value > math.log(2) + 1


def test_ksg_ball_counts_are_brute_force_max_norm_counts():
    """The marginal counts KSG uses, against a direct count, with radii that sit exactly on distances."""
    rng = np.random.default_rng(7)
    grid = rng.integers(0, 4, size=(300, 3)).astype(float)  # many exact ties at integer radii
    cont = rng.standard_normal((400, 5))
    for a, r in ((grid, rng.integers(0, 3, 300).astype(float)), (cont, rng.uniform(0.1, 1.5, 400))):
        want = (np.abs(a[:, None, :] - a[None, :, :]).max(-1) <= r[:, None]).sum(1)
        np.testing.assert_array_equal(ball_counts(a, r), want)


def test_ksg_on_independent_pair():
    rng = np.random.default_rng(5)
    e = ksg_mi(rng.standard_normal((20000, 2)), rng.standard_normal((20000, 1)), rng=rng)
    assert e.value < 0.01 and abs(e.detail["raw"]) < 3 * e.stderr + 0.005


# --------------------------------------------------------------------------
# binary Gaussian mixture
# --------------------------------------------------------------------------


@pytest.mark.parametrize("family,observation,budget", [
    ("additive", "useful", 1.0), ("shift", "full", 0.5), ("shift-noise", "full", 1.0), ("general", "full", 0.3)])
def test_mixture_family_optima_exact(family, observation, budget):
    sc = BinaryGMM(0.3, 1.5, 0.7, 1.3)
    opt = optimum(sc, budget, "map", observation, family)
    mech = MixtureShift(task_for(sc, observation, "map"), budget, **opt.mechanism)
    evals = evaluate(mech, sc, observation, "map", n_eval=1000, seed=0)
    lead = headline(evals, "map")
    assert lead.evaluator == "exact-mixture-params" and lead.value == pytest.approx(opt.value, abs=1e-9)
    assert headline(evals, "distortion").value == pytest.approx(opt.certificate["distortion"], abs=1e-9)


def test_mixture_fresh_classifier_within_001():
    sc = BinaryGMM(0.3, 1.5, 0.7, 1.3)
    opt = optimum(sc, 0.3, "map", "full", "general")
    mech = MixtureShift(task_for(sc, "full", "map"), 0.3, **opt.mechanism)
    evals = evaluate(mech, sc, "full", "map", n_eval=24000, seed=2)
    clf = by(evals, "mixture-fresh-classifier", "map")
    assert clf.kind == "lower-bound" and abs(clf.value - opt.value) < 0.01
    assert clf.stderr == pytest.approx(math.sqrt(clf.value * (1 - clf.value) / 12000))
    mi = by(evals, "posthoc-attacker", "mi")
    assert 0 < mi.value < math.log(2) and mi.kind == "lower-bound"


def test_mixture_ends():
    sc = BinaryGMM(0.5, 1.0, 1.0, 1.0)
    task = task_for(sc, "useful", "map")
    ident = evaluate(MixtureShift(task, 0.0, 0.0, 0.0, 0.0, 0.0), sc, "useful", "map", n_eval=12000, seed=0)
    bayes = stats.norm.cdf(1.0)  # equal priors and variances: Phi(mu / sigma)
    assert headline(ident, "map").value == pytest.approx(bayes, abs=1e-12)
    assert abs(by(ident, "mixture-fresh-classifier", "map").value - bayes) < 0.015
    const = evaluate(ConstantGaussian(task, 1.0, [0.0]), sc, "useful", "map", n_eval=12000, seed=0)
    assert headline(const, "map").value == 0.5 and headline(const, "mi").value == 0.0
    assert headline(const, "distortion").value == pytest.approx(2.0, abs=1e-12)  # Var(U) = 1 + mu^2
    assert abs(by(const, "mixture-fresh-classifier", "map").value - 0.5) < 0.015


# --------------------------------------------------------------------------
# headline, determinism, bad input
# --------------------------------------------------------------------------


def test_headline_rules():
    lo = Evaluation("mi", 0.2, "gaussian-approx", "lower-bound", 0.01)
    hi = Evaluation("mi", 0.3, "ksg", "estimate", 0.01)
    bad = Evaluation("mi", 0.9, "posthoc-attacker", "lower-bound", float("nan"), {"credible": False})
    ex = Evaluation("mi", 0.1, "exact-linear-gaussian", "exact")
    assert headline([lo, hi, bad], "mi") is hi
    assert headline([lo, hi, ex], "mi") is ex
    assert headline([hi, Evaluation("mi", 0.3, "x", "estimate", 0.0)], "mi") is hi
    with pytest.raises(InputError, match="no credible evaluation"):
        headline([bad], "mi")
    with pytest.raises(InputError, match="map"):
        headline([lo], "map")
    assert Evaluation.from_dict(hi.to_dict()) == hi


def test_an_estimate_within_noise_of_zero_is_no_evidence_of_leakage():
    """KSG 0.0094 +- 0.0053 beside lower bounds of at most 0.0016 (ppan-fig4, D = 2.5, an independent release)."""
    low = Evaluation("mi", 0.0016, "gaussian-approx", "lower-bound", 0.0019)
    neg = Evaluation("mi", -0.008, "posthoc-attacker", "lower-bound", 0.002)
    ksg = Evaluation("mi", 0.0094, "ksg", "estimate", 0.0053)
    assert headline([low, ksg, neg], "mi") is low
    assert headline([ksg, neg], "mi") is neg  # a lower bound always counts, however small
    assert headline([ksg], "mi") is ksg  # no lower bound: the estimate is all there is
    strong = Evaluation("mi", 0.011, "ksg", "estimate", 0.0053)  # 2.08 stderrs: evidence
    assert headline([low, strong], "mi") is strong
    # only where zero means no leakage: a MAP accuracy or a distortion estimate is never gated
    acc = [Evaluation("map", 0.5, "a", "lower-bound", 0.01), Evaluation("map", 0.51, "b", "estimate", 0.1)]
    assert headline(acc, "map") is acc[1]
    dist = [Evaluation("distortion", 0.5, "a", "lower-bound", 0.01), Evaluation("distortion", 0.51, "b", "estimate", 0.1)]
    assert headline(dist, "distortion") is dist[1]


def test_same_seed_same_numbers():
    sc = BinaryGMM(0.3, 1.5, 0.7, 1.3)
    task = task_for(sc, "full", "map")
    mech = MixtureShift(task, 0.5, 0.2, 0.3, 0.4, 0.1)
    a = evaluate(mech, sc, "full", "map", n_eval=4000, seed=7)
    b = evaluate(mech, sc, "full", "map", n_eval=4000, seed=7)
    c = evaluate(mech, sc, "full", "map", n_eval=4000, seed=8)
    assert a == b
    assert by(a, "mixture-fresh-classifier", "map").value != by(c, "mixture-fresh-classifier", "map").value
    g = GaussianScalar(RHO)
    m2 = Fn(task_for(g, "useful", "mi"), np.tanh)
    assert evaluate(m2, g, "useful", "mi", n_eval=3000, seed=1) == evaluate(m2, g, "useful", "mi", n_eval=3000, seed=1)


def test_bad_input():
    sc = GaussianScalar(RHO)
    mech, _ = linear_optimal(sc, "useful", 0.3)
    with pytest.raises(InputError, match="observation"):
        evaluate(mech, sc, "full", "mi")
    with pytest.raises(InputError, match="privacy='map'"):
        evaluate(mech, sc, "useful", "map", n_eval=500)
    with pytest.raises(InputError, match="n_eval"):
        evaluate(mech, sc, "useful", "mi", n_eval=10)
    with pytest.raises(InputError, match="different task"):
        evaluate(mech, VEC, "useful", "mi")
    with pytest.raises(InputError, match="privacy"):
        evaluate(mech, sc, "useful", "entropy")
    nan = Fn(task_for(sc, "useful", "mi"), lambda w: w * np.nan)
    with pytest.raises(InputError, match="NaN"):
        evaluate(nan, sc, "useful", "mi", n_eval=500)
