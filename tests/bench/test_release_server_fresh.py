"""A release server is never shared between authors: a plug-in that loads the bench into the server in one
case must not let an evaluator-aware release of another module see the bench in a later case.

Two third-party modules run one after the other on one worker (``--jobs 1``): ``pb_loader``'s mechanism
module imports ``privbench.bench`` when it is imported (in the release server too, where it is imported to
load its saved file); ``pb_aware`` releases Z = U unless it finds ``privbench.bench`` among the loaded
modules or on the stack, and then the constant.  The truth is that of Z = U, I(S; U), from the model.
"""

from __future__ import annotations

import textwrap

import numpy as np

from privbench.datasets import SymmetricPair
from privbench.theory.measures import scenario_channel_measures

LOADER = textwrap.dedent('''
    import numpy as np
    import privbench.bench.evaluators  # noqa: F401 - loads the bench wherever this module is imported
    from privbench.learners import Learner
    from privbench.learners.base import mechanism_type
    from privbench.learners.mechanisms import FiniteChannel

    @mechanism_type("fresh-server-loader")
    class LoaderChannel(FiniteChannel):
        @classmethod
        def _from_state(cls, task, budget, info, config, tensors):
            return cls(task, budget, tensors["channel"].numpy(), info)

    class Loader(Learner):
        serves = ("finite",)
        def _fit(self, samples, task, budgets, seed, device):
            return [LoaderChannel(task, b, np.full((task.n_w, task.n_z), 1.0 / task.n_z)) for b in budgets]
''')

AWARE = textwrap.dedent('''
    import inspect, sys
    import numpy as np
    from privbench.learners import Learner
    from privbench.learners.base import mechanism_type
    from privbench.learners.mechanisms import FiniteChannel

    @mechanism_type("fresh-server-aware")
    class AwareChannel(FiniteChannel):
        """Claims nothing; constant where the bench is loaded or on the stack, Z = U elsewhere."""
        def channel(self):
            return None
        def release(self, w, rng):
            w = np.asarray(w, dtype=np.int64)
            seen = any(m.startswith("privbench.bench") for m in sys.modules) or any(
                "/bench/" in f.filename for f in inspect.stack())
            return np.zeros_like(w) if seen else w.copy()
        @classmethod
        def _from_state(cls, task, budget, info, config, tensors):
            return cls(task, budget, tensors["channel"].numpy(), info)

    class Aware(Learner):
        serves = ("finite",)
        def _fit(self, samples, task, budgets, seed, device):
            return [AwareChannel(task, b, np.tile(np.eye(task.n_z)[0], (task.n_w, 1))) for b in budgets]
''')

SUITE = textwrap.dedent('''
    description: a plug-in that loads the bench, then an evaluator-aware one, on one worker
    reps: 1
    n_train: 200
    n_eval: 5000
    learners:
      pb_loader:Loader: {}
      pb_aware:Aware: {}
    experiments:
      - {name: sym, scenario: symmetric-pair, params: {m: 4, p: 0.3}, observation: useful, privacy: mi,
         budgets: [0.2]}
''')


def test_a_plug_in_that_loads_the_bench_does_not_expose_it_to_a_later_case(tmp_path, run_plugin_suite):
    df = run_plugin_suite(tmp_path, {"pb_loader": LOADER, "pb_aware": AWARE}, SUITE)
    assert [lr.split(":")[0] for lr in df["learner"]] == ["pb_loader", "pb_aware"]  # the loader first
    truth = float(scenario_channel_measures(SymmetricPair(4, 0.3), np.eye(4), "useful")["mi"])  # Z = U
    aware = df[df["learner"] == "pb_aware:Aware"].iloc[0]
    assert aware["leakage"] >= truth - 0.02, (aware["leakage"], aware["leakage_evaluator"], truth)
