"""Cases and suites: what the bench runs, declared as data.

A :class:`Case` is one training run: a scenario (name and parameters), the
observation model, the privacy metric, the mechanism family (``binary-gmm``
only), one or more distortion budgets (trained as one batched ``fit``), a
learner with its hyper-parameters, the repetition index, and the training and
evaluation sample sizes.  The store keeps one row per budget.

A suite is a YAML file (benchopt style: parameter grids expanded into cases)::

    description: what it is for
    reps: 1                     # repetitions (seeds) per case; --seeds overrides
    n_train: 4000               # defaults for every experiment
    n_eval: 4000
    timeout: 60                 # optional per-case timeout in seconds
    learners:                   # hyper-parameters per learner, one line each
      identity: {}
      ppan: {on: [sympair], params: {steps: 300}}   # only on the experiments named
    experiments:
      - name: sympair
        scenario: symmetric-pair
        params: {m: 4, p: 0.3}  # or a list of such mappings (a grid of scenarios)
        observation: [useful, full]   # a value or a list (grid); same for privacy,
        privacy: mi                   # family, objective, n_train and n_eval
        budgets: [0.1, 0.3]     # one batched fit per case
        learners: all           # every suite learner that serves the task (Learner.supports; the tasks
                                # a learner refuses are listed in Suite.skipped), or a list of
                                # names and {name: {hyper-parameters}}; a `budgets` key there
                                # gives that learner its own budgets (another unit: a KL budget)

An experiment may say ``distortion: logloss`` (finite scenarios): the utility is then
H(U | Z) in nats, the privacy funnel, instead of the scenario's own distortion; learners
get the logloss task, the bench's logloss evaluators measure, and the gap is scored against
theory's certified funnel bound.  The distortion enters a case's identity (key, ids,
seeds) only when it is not the scenario's own, so existing cases keep their rows.

``privacy`` is the metric a case is scored on; a learner trains for it when it
can, else for its own first metric (``objective``, recorded in the store): PPAN's
MI objective is scored by MAP accuracy on ``binary-gmm``, as in the GAP paper.

Seeds: every case derives its training seed from a SHA-256 hash of its own
parameters and repetition (:attr:`Case.seed`), so the same command gives the
same numbers on any machine.  The training samples are drawn with
:attr:`Case.train_seed` (scenario, parameters, ``n_train``, repetition) and the
evaluation samples with :attr:`Case.eval_seed`: every learner of a suite sees
the same data (common random numbers), which makes comparisons paired.

Modules: :mod:`.case` (:class:`Case`, :class:`Suite` and the hashing that names
store rows), :mod:`.make` (:func:`make_case`: one validated case), :mod:`.loading`
(YAML files -> cases), :mod:`.schema` (the file's structure as a JSON Schema, checked with
``jsonschema`` before anything is built), :mod:`.smoke` (``--only`` and ``--smoke``), :mod:`.adhoc`
(a suite from command-line options).  The shipped suites are the YAML files of
this folder (package data).
"""

from privbench.bench.suites.adhoc import adhoc_suite
from privbench.bench.suites.case import (DEFAULT_N_EVAL, DEFAULT_N_TRAIN, Case, Suite, normalize_value, seed_of,
                                         stable_hash)
from privbench.bench.suites.schema import EXPERIMENT_KEYS, SUITE_KEYS
from privbench.bench.suites.loading import (load_suite, packaged_suites,
                                            parse_suite, suite_path)
from privbench.bench.suites.make import default_n_train, make_case, resolve_case, training_objective
from privbench.bench.suites.smoke import SMOKE_N_EVAL, SMOKE_N_TRAIN, select_experiments, smoke_suite
from privbench.datasets.vocabulary import EVALUATOR_SETS, PROTOCOLS

__all__ = ["Case", "Suite", "DEFAULT_N_TRAIN", "DEFAULT_N_EVAL", "SMOKE_N_TRAIN", "SMOKE_N_EVAL", "SUITE_KEYS",
           "EXPERIMENT_KEYS", "EVALUATOR_SETS", "PROTOCOLS", "stable_hash", "seed_of", "normalize_value",
           "make_case", "resolve_case", "default_n_train", "training_objective", "packaged_suites",
           "suite_path", "load_suite", "parse_suite", "select_experiments", "smoke_suite", "adhoc_suite"]
