"""Suite files are checked against a JSON Schema (jsonschema): one-line errors naming the key and the bad value."""

from __future__ import annotations

import pytest
import yaml

from privbench.bench.suites import load_suite, packaged_suites, parse_suite
from privbench.bench.suites.schema import EXPERIMENT_KEYS, SCHEMA, SUITE_KEYS
from privbench.datasets.errors import InputError

TINY = """\
reps: 1
n_train: 200
learners:
  identity: {}
experiments:
  - name: tiny
    scenario: symmetric-pair
    params: {m: 3, p: 0.3}
    observation: full
    privacy: mi
    budgets: [0.1]
"""


@pytest.mark.parametrize("old, new, expected", [
    ("reps: 1", "reps: 1.0", "suite 'bad' (<suite>): reps=1.0 must be an integer in [1, 10000]"),
    ("reps: 1", "reps: true", "suite 'bad' (<suite>): reps=True must be an integer in [1, 10000]"),
    ("reps: 1", "reps: 10001", "suite 'bad' (<suite>): reps=10001 must be an integer in [1, 10000]"),
    ("reps: 1", "timeout: .inf", "suite 'bad' (<suite>): timeout=inf must be a positive number of seconds"),
    ("reps: 1", "colour: red", "suite 'bad' (<suite>): unknown key 'colour' (allowed: description, experiments, "
                              "learners, n_eval, n_train, name, reps, timeout)"),
    ("n_train: 200", "n_train: null", "suite 'bad' (<suite>): n_train=None must be a sample size in [2, 10000000] "
                                      "or a non-empty list of them (leave the key out for the default)"),
    ("  identity: {}", "  identity: 3", "suite 'bad' (<suite>) learner 'identity': identity=3 must be a mapping of "
                                        "hyper-parameters"),
    ("budgets: [0.1]", "budgets: [0.1, x]", "suite 'bad' (<suite>) experiment 'tiny': budgets=[0.1, 'x'] must be a "
                                            "non-empty list of numbers"),
    ("budgets: [0.1]", "budgets: 0.1", "suite 'bad' (<suite>) experiment 'tiny': budgets=0.1 must be a non-empty "
                                       "list of numbers"),
    ("privacy: mi", "privacy: [mi, 3]", "suite 'bad' (<suite>) experiment 'tiny': privacy=['mi', 3] must be a name "
                                        "or a non-empty list of names"),
    ("privacy: mi", "privacy: mi\n    learners: every", "suite 'bad' (<suite>) experiment 'tiny': learners='every' "
                                                        "must be 'all' or a list of learner names and {name: "
                                                        "{hyper-parameters}}"),
    ("    scenario: symmetric-pair\n", "", "suite 'bad' (<suite>) experiment 'tiny': 'scenario' is missing"),
    ("  - name: tiny", "  - 7\n  - name: tiny", "suite 'bad' (<suite>): experiment 1 must be a mapping, not int"),
])
def test_schema_errors_name_the_key_and_the_value(old, new, expected):
    text = TINY.replace(old, new, 1)
    assert text != TINY
    with pytest.raises(InputError) as info:
        parse_suite(yaml.safe_load(text), "bad")
    assert str(info.value) == expected


def test_the_shallowest_problem_is_reported_first():
    data = yaml.safe_load(TINY.replace("reps: 1", "bogus: 1").replace("budgets: [0.1]", "budgets: []"))
    with pytest.raises(InputError, match="unknown key 'bogus'"):
        parse_suite(data, "bad")


def test_the_schema_lists_exactly_the_documented_keys_and_the_shipped_suites_pass_it():
    assert set(SCHEMA["properties"]) == SUITE_KEYS
    assert set(SCHEMA["properties"]["experiments"]["items"]["properties"]) == EXPERIMENT_KEYS
    for name in packaged_suites():
        assert load_suite(name).cases
