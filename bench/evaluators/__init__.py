"""The bench's evaluators: what a release leaks and how much it distorts.

The public path for evaluation; nothing outside this package imports its modules' internals.
"""

from privbench.bench.evaluate import Evaluation, evaluate, gaussian_approx_mi, headline, ksg_mi
from privbench.bench.evaluate_labelled import (CLASSIFIER, FreshClassifier, row_distortion, utility_accuracies,
                                               utility_accuracy)

__all__ = ["CLASSIFIER", "Evaluation", "FreshClassifier", "evaluate", "gaussian_approx_mi", "headline", "ksg_mi",
           "row_distortion", "utility_accuracies", "utility_accuracy"]
