"""``privbench optimum --distortion logloss``: the certified privacy funnel on the command line."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy.special import entr

from privbench.bench.cli import main

SP4 = ["symmetric-pair", "--param", "m=4", "--param", "p=0.2", "--observation", "useful", "--distortion", "logloss"]


def test_table_prints_both_ends_and_the_width(capsys):
    assert main(["optimum", *SP4, "--budget", "0", "--budget", "1.5"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert "distortion=logloss" in out[0]
    assert "lower" in out[2] and "width" in out[2] and "certified" in out[2]


def test_json_rows_bracket_the_known_ends(capsys):
    assert main(["optimum", *SP4, "--budget", "0", "--budget", "1.5", "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.strip().splitlines()]
    joint = np.full((4, 4), 0.2 / 12)
    np.fill_diagonal(joint, 0.8 / 4)
    mi = entr(joint.sum(0)).sum() + entr(joint.sum(1)).sum() - entr(joint).sum()  # D = 0: I(S; U)
    assert rows[0]["lower"] - 1e-12 <= mi <= rows[0]["optimum"] + 1e-12 and rows[0]["width"] <= 1e-4
    assert rows[1]["optimum"] == pytest.approx(0.0, abs=1e-12)  # D = 1.5 > H(U) = log 4: nothing to keep
    assert all(r["distortion"] == "logloss" and r["bound_kind"] == "certified" for r in rows)


def test_distortion_without_a_provider_is_a_one_line_error(capsys):
    assert main(["optimum", "symmetric-pair", "--param", "m=4", "--param", "p=0.2", "--observation", "useful",
                 "--distortion", "mse", "--budget", "0.1"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "distortion=mse" in err
