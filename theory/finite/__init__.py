"""Optimal tradeoffs for finite alphabets, one algorithm per module.

=====================  ===================================================================
module                 contents
=====================  ===================================================================
``program.py``         convex programs for any finite model (:func:`solve_finite`);
                       the provider of kind ``finite``
``symmetric_pair.py``  PPAN appendix G closed forms; the provider of ``symmetric-pair``
``binary.py``          GAP Theorem 1 (PDI MAP); the provider of ``binary``
=====================  ===================================================================

A new finite scenario with a closed form is one new module here that registers
its provider (see :mod:`privbench.theory.optimum`).
"""

from .binary import binary_pdi_map
from .program import SOLVER_TOL, finite_min_distortion, solve_finite
from .symmetric_pair import symmetric_pair_mechanism, symmetric_pair_mi, symmetric_pair_rate

__all__ = [
    "SOLVER_TOL", "binary_pdi_map", "finite_min_distortion", "solve_finite", "symmetric_pair_mechanism",
    "symmetric_pair_mi", "symmetric_pair_rate",
]
