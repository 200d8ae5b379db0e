"""The ``gaussian-approx`` evaluator (PPAN §III-B1): a lower bound on I(S;Z) for a Gaussian S."""

from __future__ import annotations

import numpy as np

from privbench.theory.gaussian import linear_gaussian_leakage

from .evaluation import Evaluation, batch_stderr, make_evaluation


def gaussian_approx_mi(s: np.ndarray, z: np.ndarray) -> Evaluation:
    """PPAN §III-B1: the MI of jointly Gaussian variables with the sample covariance of (S, Z).

    I_G = 1/2 log det C_S - 1/2 log det (C_S - C_SZ C_Z^+ C_SZ^T), sample
    covariances (centred), computed by theory's :func:`linear_gaussian_leakage`
    with the sample covariance of (S, Z) as the model and Z = U.

    Lower bound (population version, any mechanism): with L(Z) the affine MMSE
    estimate of S and E = S - L(Z),  I(S;Z) = h(S) - h(E | Z) >= h(S) - h(E)
    >= h(S) - 1/2 log det(2 pi e Cov E) = I_G.  The last step is the Gaussian
    maximum-entropy bound (for h(E)); the FIRST equality with h(S) = 1/2 log
    det(2 pi e C_S) needs S GAUSSIAN.  So I_G can only under-estimate I(S;Z) for
    a Gaussian S, whatever Z is (discrete, nonlinear, non-Gaussian noise; finite
    second moments);
    equality when (S, Z) is jointly Gaussian.  For a non-Gaussian S it is no
    bound (a binary S with Z = S gives I_G = inf > log 2); it is only run on
    Gaussian scenarios.  The sample version is biased upward by O(d_s d_z / n)
    (tests/bench/test_evaluate.py checks both directions).

    Parameters
    ----------
    s : ndarray, shape (n, d_s)
    z : ndarray, shape (n, d_z)
    """
    s = s.reshape(len(s), -1)
    z = z.reshape(len(z), -1)

    def fn(a: np.ndarray, b: np.ndarray) -> float:
        d_s, d_z = a.shape[1], b.shape[1]
        c = np.atleast_2d(np.cov(np.hstack([a, b]), rowvar=False))
        return linear_gaussian_leakage(c, np.eye(d_z), np.zeros((d_z, d_s)), np.zeros((d_z, d_z)))[0]

    return make_evaluation("mi", fn(s, z), "gaussian-approx", "lower-bound", batch_stderr(fn, len(s), s, z), n=len(s),
               note="PPAN III-B1; a lower bound on I(S;Z) for Gaussian S (up to O(d/n) sample bias)")
