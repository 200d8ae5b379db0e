"""The privacy funnel: information as utility, exact for finite models (certified sandwich).

With the log-loss distortion H(U | Z) <= D (equivalently I(U; Z) >= R = H(U) - D),
any mechanism P(Z | W) is a split of P_W into posteriors q_z = P(W | Z = z) with
weights p(z), and

    I(S; Z) - beta I(U; Z) = H(S) - beta H(U) - sum_z p(z) g_beta(q_z),
    g_beta(q) = H(A_S q) - beta H(A_U q),

(A_S, A_U: the columns P(S | w), P(U | w)).  The best value for each beta is
H(S) - beta H(U) - (upper concave envelope of g_beta)(P_W), attained with |Z| <= |W|;
time sharing makes the achievable (I(U; Z), I(S; Z)) set convex, so the funnel
L(R) = min I(S; Z) s.t. I(U; Z) >= R is sup_beta [beta R + H(S) - beta H(U) - conc g_beta(P_W)].
Here the same is solved at fixed D as one envelope linear program over posteriors
(its budget multiplier is the beta of the sup): MAP accuracy and chi-square
information are averages of convex per-posterior costs too, so the argument and
the code carry over to them.

=====================  ===================================================================
module                 contents
=====================  ===================================================================
``split.py``           P_W, A_S, A_U of a model; per-posterior costs and their affine minorants
``triangulation.py``   adaptive triangulation of the simplex (longest-edge bisection)
``envelope.py``        the envelope LP (HiGHS) and its repaired dual
``achievable.py``      the mechanism of a split, its exact leakage and H(U | Z)
``certified.py``       :func:`funnel_sandwich`: both ends, refined to a width
``provider.py``        :func:`funnel_optimum`; the provider of (finite, ``logloss``)
=====================  ===================================================================
"""

from .achievable import conditional_entropy, mechanism_of_split, release_measures
from .certified import TOL, funnel_sandwich
from .provider import DISTORTION, funnel_optimum
from .split import Split, split_model

__all__ = [
    "DISTORTION", "TOL", "Split", "conditional_entropy", "funnel_optimum", "funnel_sandwich",
    "mechanism_of_split", "release_measures", "split_model",
]
