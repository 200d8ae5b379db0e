"""``privbench run --scenario ... --distortion logloss``: ad-hoc funnel runs, on finite models and on images."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from privbench.bench.cli import main
from privbench.bench.store import read_records


def test_help_names_the_option(capsys):
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    out = capsys.readouterr().out
    assert "--distortion" in out and "logloss" in out and "upper bound" not in out.split("--distortion")[0]


@pytest.mark.parametrize("argv, phrase", [
    (["--scenario", "hypothesis-testing", "--observation", "useful", "--learner", "ppan-logloss-image"],
     "distortion='logloss' is not available for hypothesis-testing (allowed: mse)"),
    (["--scenario", "gaussian-scalar", "--param", "rho=0.5", "--learner", "ppan-logloss"],
     "no known optimum for gaussian-scalar with distortion=logloss"),
    (["--scenario", "digits", "--observation", "useful", "--learner", "ppan-image"],
     "trains for distortions hamming, matrix, mse, xent, not logloss"),
    (["--scenario", "symmetric-pair", "--param", "m=3", "--param", "p=0.3", "--observation", "useful",
      "--learner", "ppan-logloss-image"], "serves task kinds image, not finite"),
])
def test_unsupported_distortion_is_one_line_exit_2(argv, phrase, tmp_path, capsys):
    assert main(["run", *argv, "--distortion", "logloss", "--budget", "0.3", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and phrase in err
    assert not (tmp_path / "o").exists()


def test_distortion_needs_an_adhoc_run(capsys):
    assert main(["run", "--suite", "quick", "--distortion", "logloss"]) == 2
    assert "--distortion is for ad-hoc runs" in capsys.readouterr().err


def test_image_funnel_run_stores_an_upper_bound_on_the_logloss(tmp_path, capsys):
    out = tmp_path / "o"
    assert main(["run", "--scenario", "digits", "--param", "labeling=ge5-parity", "--observation", "useful",
                 "--privacy", "map", "--distortion", "logloss", "--learner", "ppan-logloss-image",
                 "--learner-param", "epochs=2", "--learner-param", "hidden=8", "--learner-param", "adv_hidden=8",
                 "--learner-param", "post_hidden=8", "--budget", "0.3", "--n-train", "300", "--n-eval", "200",
                 "--out", str(out), "--quiet", "--jobs", "1"]) == 0
    df = pd.DataFrame(read_records(out))
    assert len(df) == 1
    row = df.iloc[0]
    assert (row["status"], row["distortion_name"], row["bound_kind"]) == ("ok", "logloss", "none")
    assert (row["distortion_evaluator"], row["distortion_kind"]) == ("fresh-logloss", "upper-bound")
    assert 0.0 < row["distortion"] < 1.0 and pd.isna(row["gap"])
    evals = json.loads(row["evaluations"])
    assert {e["evaluator"] for e in evals if e["metric"] == "distortion"} == {"fresh-logloss"}
