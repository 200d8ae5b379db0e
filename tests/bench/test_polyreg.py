"""The ``polynomial-attacker`` (bench/evaluators/polyreg.py): a held-out lower bound that reads the sparse
interaction task within 0.05 nats at a moderate n, and reads nothing where there is nothing.

Truths are computed here from the closed form of the model (Gaussian S, Y = S + N, Z an invertible map of Y:
I(S;Z) = I(S;Y) = d/2 log(1 + 1/noise^2)), never from the bench's evaluators.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from privbench.bench.evaluators import credible
from privbench.bench.evaluators.groundtruth import BY_NAME
from privbench.bench.evaluators.polyreg import hats, monomials, n_monomials, polynomial_attacker


def test_sparse_interaction_read_within_005_nats_at_n_8000_and_not_above_the_truth():
    task = BY_NAME["gauss-4-sparse"]
    assert (task.dim, task.noise, task.transform) == (4, 1.2, "sparse")
    truth = 0.5 * 4 * math.log(1 + 1 / 1.2**2)  # independent of TruthTask.mi
    s, z, log_p = task.sample(8000, np.random.default_rng(0))
    (ev,) = polynomial_attacker(z, s, log_p, seed=0)
    assert ev.evaluator == "polynomial-attacker" and ev.kind == "lower-bound" and credible(ev)
    assert ev.detail["n_test"] == 8000  # cross-fitted: every row is scored held-out
    assert truth - 0.05 < ev.value < truth + 3 * ev.stderr


def test_independent_release_reads_no_leakage():
    rng = np.random.default_rng(3)
    n = 4000
    s = rng.standard_normal((n, 2))
    z = rng.standard_t(3, size=(n, 3))  # heavy-tailed, independent of S: polynomial fits over-fit the tails
    (ev,) = polynomial_attacker(z, s, stats.norm.logpdf(s).sum(axis=1), seed=1)
    assert ev.value < 3 * ev.stderr
    assert ev.value > -0.05  # the stacked mixture keeps the low-degree fit where the high-degree ones fail


def test_bases():
    x = np.array([[2.0, 3.0]])
    assert monomials(x, 2).tolist() == [[2.0, 3.0, 4.0, 6.0, 9.0]]
    assert n_monomials(2, 2) == 5 and n_monomials(4, 5) == 125
    h = hats(np.array([0.0, 0.5, 1.0, 1.75, 9.0]), np.array([0.0, 1.0, 2.0]))
    assert np.allclose(h.sum(axis=1), 1.0)
    assert np.allclose(h[1], [0.5, 0.5, 0.0]) and np.allclose(h[3], [0.0, 0.25, 0.75]) and np.allclose(h[4], [0, 0, 1])


def test_too_few_rows_gives_no_evaluation():
    rng = np.random.default_rng(0)
    s = rng.standard_normal((100, 1))
    assert polynomial_attacker(s + rng.standard_normal((100, 1)), s, stats.norm.logpdf(s[:, 0]), seed=0) == []


def test_degenerate_s_gives_no_evaluation_not_a_crash():
    rng = np.random.default_rng(0)
    s = np.hstack([rng.standard_normal((400, 1)), np.ones((400, 1))])
    assert polynomial_attacker(s + rng.standard_normal((400, 2)), s, stats.norm.logpdf(s[:, 0]), seed=0) == []
