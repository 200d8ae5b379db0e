"""The bench's evaluators: what a release leaks and how much it distorts (see :mod:`.dispatch`).

One evaluator family per module: finite.py (exact channel, plug-in), mixture.py,
gaussian.py (exact by mechanism type), gaussian_approx.py, ksg.py, attacker.py
(post-hoc attacker), mismatch.py (the attacker-mismatch study), labelled.py
(fresh classifiers for labelled data; classifier.py the classifier), heldout_logloss.py
(a continuous release's log-loss, bounded from above); evaluation.py holds the Evaluation record
and shared checks, headline.py the choice of the scored number, dispatch.py the
registry by scenario kind.  Code outside this package imports from here only.
"""

from .dispatch import BY_KIND, EVALUATOR_SETS, evaluate
from .evaluation import Evaluation
from .gaussian_approx import gaussian_approx_mi
from .headline import credible, headline, spread
from .ksg import ksg_mi
from .verify import CONSISTENCY, inconsistency
from .classifier import CLASSIFIER, FreshClassifier
from .heldout_logloss import heldout_logloss
from .labelled import row_distortion, utility_accuracies, utility_accuracy

__all__ = ["BY_KIND", "CLASSIFIER", "CONSISTENCY", "inconsistency", "EVALUATOR_SETS", "Evaluation", "FreshClassifier", "evaluate",
           "credible", "heldout_logloss", "gaussian_approx_mi", "headline", "spread", "ksg_mi", "row_distortion", "utility_accuracies", "utility_accuracy"]
