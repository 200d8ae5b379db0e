"""Honest baselines: the two ends of every curve and the simplest calibrated mechanisms.

``identity``             Z = U (no privacy, no distortion): the curve's low-distortion end.
``constant``             Z = the best constant (no leakage): the curve's zero-leakage end.
``randomized-response``  finite: Z = U (or the cheapest z for u) with probability 1 - t,
                         uniform over Z's alphabet with probability t, t calibrated on the
                         empirical distribution of U to spend the budget.
``greedy-merge``         finite, logloss: the privacy funnel's agglomerative merge of U values
                         (least utility lost per unit of leakage saved), a deterministic release.
``gaussian-noise``       gaussian / mixture: Z = U + N(0, (budget / d_u) I) (the filter
                         paper's Gaussian mechanism; distortion exactly the budget).  image:
                         Z = clip(U + sigma N(0, I), 1e-3, 1 - 1e-3), sigma set by bisection so
                         that the per-pixel cross-entropy on the training images (fixed noise
                         drawn from the fit's seed) equals the budget; 0 when the budget is below
                         what the clipped identity already costs (it then overshoots).

None of them looks at S, so all serve both observation models.  The plug-in
baseline (estimate the joint, solve the optimal program on the estimate) needs
theory's solver and therefore lives in ``privbench.bench.plug_in``.
"""

from .constant import Constant
from .fixed import FixedLearner
from .gaussian_noise import GaussianNoise
from .greedy_merge import GreedyMerge
from .identity import Identity
from .randomized_response import RandomizedResponse

__all__ = ["Constant", "FixedLearner", "GaussianNoise", "GreedyMerge", "Identity", "RandomizedResponse"]
