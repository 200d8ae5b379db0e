"""Suites and cases: grid expansion, stable seeds, the shipped suites, bad suite files."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys

import pytest

from privbench.bench.suites import adhoc_suite, load_suite, make_case, normalize_value, packaged_suites, parse_suite
from privbench.datasets.errors import InputError
from privbench.datasets.scenarios import SCENARIOS
from privbench.learners import available

SYM = {"m": 4, "p": 0.3}


def _case(**kw):
    args = dict(suite="s", experiment="e", scenario="symmetric-pair", params=SYM, observation="full",
                privacy="mi", family=None, learner="randomized-response", learner_params={}, budgets=[0.1, 0.3])
    args.update(kw)
    return make_case(**args)


def test_seed_is_sha256_of_the_case_parameters_and_rep():
    c = _case(rep=2, n_train=1000, n_eval=500)
    ident = {"scenario": "symmetric-pair", "params": {"m": 4, "p": 0.3}, "observation": "full", "privacy": "mi",
             "family": None, "learner": "randomized-response", "learner_params": {}, "n_train": 1000,
             "n_eval": 500, "rep": 2}
    text = json.dumps(["fit", ident], sort_keys=True, separators=(",", ":"))
    assert c.seed == int(hashlib.sha256(text.encode()).hexdigest()[:8], 16) & 0x7FFFFFFF
    assert c.key == hashlib.sha256(json.dumps(ident, sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:16]


def test_seed_is_the_same_in_another_interpreter_with_another_hash_seed():
    c = _case(rep=1)
    code = ("from privbench.bench.suites import make_case\n"
            "c = make_case('other-suite', 'x', 'symmetric-pair', {'m': '4', 'p': '0.3'}, 'full', 'mi', None,"
            " 'randomized-response', {}, [0.3, 0.1], rep=1)\n"
            "print(c.seed, c.train_seed, c.eval_seed, c.case_id(0.1))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONHASHSEED": "12345"}).stdout.split()
    assert out == [str(c.seed), str(c.train_seed), str(c.eval_seed), c.case_id(0.1)]


def test_seeds_separate_what_differs_and_share_what_should():
    base = _case()
    assert _case(rep=1).seed != base.seed
    assert _case(learner="identity").seed != base.seed
    assert _case(params={"m": 4, "p": 0.31}).seed != base.seed
    assert _case(observation="useful").seed != base.seed
    # strings from the CLI and numbers from YAML are the same case
    assert _case(params={"m": "4", "p": "0.3"}).seed == base.seed
    # budgets, suite and experiment names are not part of the seed (one batched fit)
    assert _case(budgets=[0.2], suite="t", experiment="f").seed == base.seed
    assert base.case_id(0.1) != base.case_id(0.3)
    # every learner on the same scenario, size and rep trains and is evaluated on the same samples
    assert _case(learner="identity").train_seed == base.train_seed
    assert _case(rep=1).train_seed != base.train_seed
    assert 0 <= base.seed < 2**31


def test_numeric_strings_are_normalised():
    assert normalize_value({"lr": "1e-3", "n": "10", "name": "adam", "xs": ["1", "x"]}) == \
        {"lr": 0.001, "n": 10, "name": "adam", "xs": [1, "x"]}


def test_grid_expansion():
    data = {"reps": 2, "n_train": 100, "n_eval": 300, "learners": {"identity": {}, "constant": {},
                                                                  "gaussian-noise": {}},
            "experiments": [{"name": "a", "scenario": "symmetric-pair", "params": [SYM, {"m": 3, "p": 0.5}],
                             "observation": ["useful", "full"], "privacy": ["mi", "chi2"], "budgets": [0.1, 0.2]}]}
    suite = parse_suite(data, "g")
    # 2 scenarios x 2 observations x 2 privacies x 2 learners serving finite (not gaussian-noise) x 2 reps
    assert len(suite.cases) == 32
    assert {c.learner for c in suite.cases} == {"identity", "constant"}
    assert {c.n_train for c in suite.cases} == {100} and {c.n_eval for c in suite.cases} == {300}
    assert len({c.key for c in suite.cases}) == 32
    assert all(c.budgets == (0.1, 0.2) for c in suite.cases)


def test_quick_suite_touches_every_scenario_family_and_every_learner():
    suite = load_suite("quick")
    # the quick suite scores gaps: scenarios with no known optimum (labelled data) are out of it, and so
    # is gmm-k, whose optimum is a certified sandwich solved per budget and per achieved distortion
    # (seconds to minutes each: tests/theory/test_gmm_k_provider.py and the README's ad-hoc run cover it)
    solved_per_budget = {"gmm-k"}
    assert {c.scenario for c in suite.cases} == {n for n, cls in SCENARIOS.items()
                                                 if getattr(cls, "has_optimum", True)} - solved_per_budget
    # image learners have no scenario with an optimum: they are out of the quick suite
    ours = {n for n, cls in available().items() if cls.__module__.startswith("privbench.")
            and set(cls.declared().kinds) & {"finite", "gaussian", "mixture"}}
    assert ours <= {c.learner for c in suite.cases}, "add the new learner to bench/suites/quick.yaml"
    assert suite.timeout is not None and len(suite.cases) < 200


def test_quick_suite_has_funnel_cases_with_greedy_merge():
    suite = load_suite("quick")
    funnel = [c for c in suite.cases if c.distortion == "logloss"]
    assert {"greedy-merge", "plugin", "ppan-logloss"} <= {c.learner for c in funnel}
    assert len(funnel) == 3
    assert all(c.distortion is None for c in suite.cases if c.experiment != "funnel")


def test_shipped_suites_load():
    names = packaged_suites()
    assert {"quick", "regression", "funnel"} <= set(names)
    for name in names:
        assert load_suite(name).cases


def test_seeds_option_overrides_reps():
    assert {c.rep for c in load_suite("quick", reps=3).cases} == {0, 1, 2}


def test_learner_override_runs_only_those_that_serve():
    suite = load_suite("quick", learners={"randomized-response": {}})
    assert {c.learner for c in suite.cases} == {"randomized-response"}
    assert {c.scenario for c in suite.cases} == {"symmetric-pair", "binary", "finite", "z-channel"}


def test_adhoc_suite():
    suite = adhoc_suite("symmetric-pair", {"m": "6", "p": "0.7"}, "full", "mi", None,
                        ["identity", "randomized-response"], {}, [0.1, 0.3], reps=3, n_train=500)
    assert len(suite.cases) == 6 and suite.name == "adhoc"
    assert {c.params_json for c in suite.cases} == {json.dumps({"m": 6, "p": 0.7})}


@pytest.mark.parametrize("text,match", [
    ("experiments: [\n  {name: a,\n", "not valid YAML at line"),
    ("- 1\n- 2\n", "must hold a mapping"),
    ("experiments: []\n", "non-empty list"),
    ("bogus: 1\nexperiments: [{scenario: binary}]\n", "unknown key 'bogus'"),
    ("experiments: [{scenario: nope, budgets: [0.1]}]\n", "scenario 'nope' is unknown"),
    ("experiments: [{scenario: binary, params: {p: 0.5, z: 1}, budgets: [0.1]}]\n", "parameter 'z' is unknown"),
    ("experiments: [{scenario: binary, params: {p: 0.5, q: 0.2}, observation: useful, budgets: [0.1], "
     "learners: [nope]}]\n", "learner 'nope' is unknown"),
    ("learners: {nope: {}}\nexperiments: [{scenario: binary, budgets: [0.1]}]\n", "learner 'nope' is unknown"),
    ("experiments: [{scenario: binary, params: {p: 0.5, q: 0.2}, observation: useful, budgets: [0.1], "
     "learners: [gaussian-noise]}]\n", "does not serve"),
    ("experiments: [{scenario: binary, params: {p: 0.5, q: 0.2}, observation: useful, budgets: [0.1], "
     "learners: [{identity: {speed: 3}}]}]\n", "bad hyper-parameters"),
    ("experiments: [{scenario: binary, params: {p: 0.5, q: 0.2}, observation: useful, budgets: [-1]}]\n",
     "budget=.*-1.0.* must be a finite number >= 0"),
    ("experiments: [{scenario: binary, params: {p: 0.5, q: 0.2}, budgets: [0.1]}]\n", "observation model"),
    ("experiments: [{scenario: binary, params: {p: 0.5, q: 0.2}, observation: useful, budgets: [0.1], "
     "learners: [nope:Thing]}]\n", "cannot import module"),
])
def test_bad_suite_files(tmp_path, text, match):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(InputError, match=match) as info:
        load_suite(str(path))
    assert "\n" not in str(info.value)


def test_unknown_suites():
    with pytest.raises(InputError, match="suite 'nope' is unknown .*available: .*paper.*quick"):
        load_suite("nope")
    with pytest.raises(InputError, match="does not exist"):
        load_suite("missing/file.yaml")


def test_learners_on_named_experiments_only_and_their_objective():
    data = {"learners": {"identity": {}, "randomized-response": {"on": ["b"]},
                         "ppan": {True: ["a"], "params": {"steps": 5}}},  # YAML 1.1 reads `on:` as True
            "experiments": [
                {"name": "a", "scenario": "binary", "params": {"p": 0.5, "q": 0.25}, "observation": "full",
                 "privacy": "map", "budgets": [0.1]},
                {"name": "b", "scenario": "symmetric-pair", "params": SYM, "observation": "full",
                 "privacy": "mi", "budgets": [0.1]}]}
    suite = parse_suite(data, "on")
    got = {(c.experiment, c.learner): c for c in suite.cases}
    assert set(got) == {("a", "identity"), ("b", "identity"), ("b", "randomized-response"), ("a", "ppan")}
    # ppan trains for MI only: on a MAP experiment it trains MI and is scored by MAP
    assert got[("a", "ppan")].objective == "mi" and got[("a", "ppan")].training_privacy == "mi"
    assert got[("a", "ppan")].learner_params == {"steps": 5}
    assert got[("a", "identity")].objective is None
    assert "objective" not in got[("a", "identity")].identity()  # absent when equal: seeds unchanged
    with pytest.raises(InputError, match="'on' experiment 'zz', which does not exist"):
        parse_suite({**data, "learners": {"ppan": {"on": ["zz"]}, "identity": {}}}, "on")
    with pytest.raises(InputError, match="unexpected key 'steps'"):
        parse_suite({**data, "learners": {"ppan": {"on": ["a"], "steps": 3}}}, "on")
    with pytest.raises(InputError, match="serves none of the experiments"):
        parse_suite({**data, "learners": {"identity": {}, "gaussian-noise": {"on": ["a"]}}}, "on")


def test_the_package_keeps_every_public_name_of_the_old_module():
    import privbench.bench.suites as suites

    for name in ("Case", "Suite", "DEFAULT_N_TRAIN", "DEFAULT_N_EVAL", "SMOKE_N_TRAIN", "SMOKE_N_EVAL",
                 "SUITE_KEYS", "EXPERIMENT_KEYS", "EVALUATOR_SETS", "PROTOCOLS", "stable_hash", "normalize_value",
                 "make_case", "resolve_case", "default_n_train", "training_objective", "packaged_suites",
                 "suite_path", "load_suite", "parse_suite", "select_experiments", "smoke_suite", "adhoc_suite"):
        assert hasattr(suites, name), name
    assert set(suites.__all__) <= set(dir(suites))


def test_suite_counts_refuse_non_integers_with_where_first():
    with pytest.raises(InputError, match=r"^suite 'r' \(<suite>\): reps=0 must be an integer in \[1, 10000\]$"):
        parse_suite({"reps": 0, "experiments": [{"scenario": "binary", "budgets": [0.1]}]}, "r")
    with pytest.raises(InputError, match=r"^privbench run: --seeds=True must be an integer >= 1$"):
        adhoc_suite("binary", {"p": 0.5, "q": 0.25}, "full", "mi", None, ["identity"], {}, [0.1], reps=True)


def test_make_case_refuses_an_empty_budget_list_and_bad_sizes():
    args = ("s", "e", "binary", {"p": 0.5, "q": 0.25}, "full", "mi", None, "identity", {})
    with pytest.raises(InputError, match=r"must be a number or a non-empty 1-d list"):
        make_case(*args, [])
    with pytest.raises(InputError, match=r"^n_eval=1 must be an integer >= 2$"):
        make_case(*args, [0.1], n_eval=1)
    with pytest.raises(InputError, match=r"^rep=-1 must be an integer >= 0$"):
        make_case(*args, [0.1], rep=-1)
    with pytest.raises(InputError, match=r"^protocol='x' is unknown \(allowed: two-user\)$"):
        make_case(*args, [0.1], protocol="x")


def test_command_line_tuples_and_booleans_are_normalised():
    # --learner-param hidden=(8,8) must mean the list a suite file writes as [8, 8]
    assert normalize_value({"hidden": "(8, 8)", "h2": "[16]", "e": "()", "w": "False", "a": "true",
                            "c": "none", "d": "(x"}) == \
        {"hidden": [8, 8], "h2": [16], "e": [], "w": False, "a": True, "c": "none", "d": "(x"}
