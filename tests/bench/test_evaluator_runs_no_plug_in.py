"""The evaluator process never imports plug-in code, and no plug-in takes over a built-in name (issue 14).

A planted cheater, ``pb_patcher``, patches privbench's finite evaluators when its module is imported (every
privacy measure of a channel, and every plug-in estimate, becomes 0), then releases Z = U through an honest
identity channel.  Run on one worker (``--jobs 1``) before the built-in ``identity`` learner (also Z = U),
both must be scored at the true leakage of Z = U, I(S; U) = 0.4458 nats of the model, not at 0: the module may patch the
process that trains it and the release server that holds its file, never the evaluator, which lives as long
as its worker and would carry the patch into the later honest case.
"""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from privbench.datasets import SymmetricPair
from privbench.datasets.errors import InputError
from privbench.learners import Learner, available, register, resolve_learner
from privbench.learners.base import mechanism_type
from privbench.learners.mechanisms import FiniteChannel

PATCHER = textwrap.dedent('''
    import dataclasses
    import numpy as np
    import privbench.bench.evaluators.finite as fin
    from privbench.learners import Learner
    from privbench.learners.base import mechanism_type
    from privbench.learners.mechanisms import FiniteChannel

    true_measures, true_plugin = fin.scenario_channel_measures, fin.plugin_estimates

    def zero_measures(sc, ch, observation):
        return {k: (v if k == "distortion" else 0.0) for k, v in true_measures(sc, ch, observation).items()}

    def zero_plugin(task, s, z):
        return [dataclasses.replace(e, value=0.0) for e in true_plugin(task, s, z)]

    fin.scenario_channel_measures, fin.plugin_estimates = zero_measures, zero_plugin  # on import

    @mechanism_type("pb-patcher-identity")
    class Identity(FiniteChannel):
        @classmethod
        def _from_state(cls, task, budget, info, config, tensors):
            return cls(task, budget, tensors["channel"].numpy(), info)

    class Patcher(Learner):
        serves = ("finite",)
        def _fit(self, samples, task, budgets, seed, device):
            return [Identity(task, b, np.eye(task.n_z)) for b in budgets]
''')

SUITE = textwrap.dedent('''
    description: a plug-in that patches the evaluators on import, then an honest built-in, on one worker
    reps: 1
    n_train: 200
    n_eval: 5000
    learners:
      pb_patcher:Patcher: {}
      identity: {}
    experiments:
      - {name: sym, scenario: symmetric-pair, params: {m: 4, p: 0.3}, observation: useful, privacy: mi,
         budgets: [0.2]}
''')


def test_a_plug_in_that_patches_the_evaluators_is_scored_at_its_true_leakage_and_spares_later_cases(tmp_path, run_plugin_suite):
    df = run_plugin_suite(tmp_path, {"pb_patcher": PATCHER}, SUITE)
    assert list(df["learner"]) == ["pb_patcher:Patcher", "identity"]  # the patcher first, one worker
    m, p = 4, 0.3  # P(S = U) = 1 - p, else uniform over the m - 1 others: I(S; U) = log m - H(S | U)
    truth = np.log(m) + (1 - p) * np.log(1 - p) + p * np.log(p / (m - 1))  # Z = U: 0.4458 nats
    assert truth == pytest.approx(0.4458, abs=1e-4)
    joint = SymmetricPair(m, p).joint()  # the same from the model's joint pmf
    assert truth == pytest.approx(float(np.sum(joint * np.log(joint / np.outer(joint.sum(1), joint.sum(0))))))
    assert list(df["status"]) == ["ok", "ok"], list(df["error"])
    # both are Z = U through an identity channel (verified, so measured exactly): the truth in each case
    assert dict(zip(df["learner"], df["leakage"])) == pytest.approx({"pb_patcher:Patcher": truth, "identity": truth},
                                                                    abs=1e-9)
    assert list(df["leakage_evaluator"]) == ["exact-channel", "exact-channel"]


class BuiltInNamedChannel(FiniteChannel):
    """A plug-in's mechanism class (its module is not privbench's)."""


def test_a_plug_in_cannot_register_a_built_in_mechanism_type_name():
    with pytest.raises(InputError) as err:
        mechanism_type("finite-channel")(BuiltInNamedChannel)
    text = str(err.value)
    assert "\n" not in text
    assert "privbench.learners.mechanisms.finite_channel:FiniteChannel" in text  # the built-in
    assert f"{__name__}:BuiltInNamedChannel" in text  # the plug-in
    from privbench.learners.base import MECHANISM_TYPES

    assert MECHANISM_TYPES["finite-channel"] is FiniteChannel and BuiltInNamedChannel.type_name == "finite-channel"


class Impostor(Learner):
    name = "identity"
    serves = ("finite",)


def test_a_plug_in_cannot_take_a_built_in_learner_name_even_asking_to_replace_it():
    builtin = available()["identity"]
    try:
        with pytest.raises(InputError, match=rf"already registered \({builtin.__module__}:{builtin.__qualname__}\);"
                                             rf" {__name__}:Impostor cannot replace it"):
            register(Impostor, replace=True)
    finally:
        if available()["identity"] is not builtin:  # today's main replaced it: put the built-in back
            register(builtin, replace=True)
    assert available()["identity"] is builtin


def test_a_plug_in_module_registering_a_built_in_type_is_refused_in_one_line(tmp_path, monkeypatch):
    (tmp_path / "pb_typejack.py").write_text(textwrap.dedent('''
        from privbench.learners import Learner
        from privbench.learners.base import mechanism_type
        from privbench.learners.mechanisms import FiniteChannel

        @mechanism_type("linear-gaussian")
        class Jack(FiniteChannel):
            pass

        class JackLearner(Learner):
            serves = ("finite",)
    '''))
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(InputError) as err:
        resolve_learner("pb_typejack:JackLearner")
    text = str(err.value)
    assert "\n" not in text and "'linear-gaussian'" in text
    assert "privbench.learners.mechanisms.linear_gaussian:" in text and "pb_typejack:Jack " in text
    from privbench.learners.base import MECHANISM_TYPES

    assert MECHANISM_TYPES["linear-gaussian"].__module__ == "privbench.learners.mechanisms.linear_gaussian"


class Described(FiniteChannel):
    """A plug-in mechanism with parameters and info of every plain kind."""

    def params(self):
        return {"scale": np.float32(0.25), "weights": np.arange(6, dtype=np.float64).reshape(2, 3) / 7, "tag": "w"}


def test_the_evaluator_sees_a_third_party_mechanism_as_the_plain_data_the_server_reports():
    import json

    from privbench.bench.remote_release import RemoteMechanism
    from privbench.datasets import task_for
    from privbench.learners.serve import describe

    task = task_for(SymmetricPair(3, 0.2), "useful", "mi")
    ch = np.array([[0.5, 0.5, 0.0], [0.1, 0.2, 0.7], [1 / 3, 1 / 3, 1 / 3]])
    mech = Described(task, 0.2, ch, {"steps": np.int64(7), "loss": np.array([0.5, 0.25])})
    header, channel = describe(mech)
    header = json.loads(json.dumps(header))  # what crosses the pipe: a JSON line and the channel's bytes
    proxy = RemoteMechanism("pb-described", header, channel, release=None)  # type: ignore[arg-type]
    assert proxy.type_name == "pb-described" and proxy.task == task and proxy.budget == 0.2
    assert np.array_equal(proxy.channel(), ch) and proxy.channel().dtype == np.float64
    p = proxy.params()
    assert p["scale"] == 0.25 and p["tag"] == "w"
    assert np.array_equal(p["weights"], np.arange(6).reshape(2, 3) / 7) and p["weights"].dtype == np.float64
    assert proxy.info == {"steps": 7, "loss": [0.5, 0.25]}
