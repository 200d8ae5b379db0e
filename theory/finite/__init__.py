"""Optimal tradeoffs for finite alphabets, one algorithm per module.

=====================  ===================================================================
module                 contents
=====================  ===================================================================
``solve.py``           :func:`solve_finite`, :func:`finite_curve`: the certified fast solvers
                       with the cvxpy programs as fallback; the provider of kind ``finite``
``program.py``         the cvxpy convex programs (the reference, :func:`solve_conic`)
``mirror.py``          first-order (Blahut-Arimoto type) solver for mi and chi2
``chi2_cone.py``       the compact chi2 cone program on a support (the full observation)
``highs_lp.py``        the map linear program through HiGHS, with its dual bound
``certificate.py``     lower bounds (duality-gap certificates) on the programs
``data.py``            sparse marginals of a program; ``leakage.py`` smooth leakages
``size.py``            memory estimates; oversize programs are refused
``symmetric_pair.py``  PPAN appendix G closed forms; the provider of ``symmetric-pair``
``binary.py``          GAP Theorem 1 (PDI MAP); the provider of ``binary``
=====================  ===================================================================

A new finite scenario with a closed form is one new module here that registers
its provider (see :mod:`privbench.theory.optimum`).
"""

from .binary import binary_pdi_map
from .program import SOLVER_TOL, finite_min_distortion, solve_conic
from .size import MEMORY_LIMIT_BYTES
from .solve import GAP_TOL, finite_curve, solve_finite
from .symmetric_pair import symmetric_pair_mechanism, symmetric_pair_mi, symmetric_pair_rate

__all__ = [
    "GAP_TOL", "MEMORY_LIMIT_BYTES", "SOLVER_TOL", "binary_pdi_map", "finite_curve", "finite_min_distortion",
    "solve_conic", "solve_finite", "symmetric_pair_mechanism", "symmetric_pair_mi", "symmetric_pair_rate",
]
