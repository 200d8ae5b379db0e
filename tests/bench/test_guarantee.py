"""The guarantee_* Record columns and ``privbench optimum --guarantee``, against values worked out by hand."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from privbench.bench.cli import main
from privbench.bench.guarantee import GUARANTEE_EPS, guarantee_fields, scenario_priors
from privbench.bench.records import COLUMN_NAMES
from privbench.datasets.scenarios import make_scenario

GMM = make_scenario("binary-gmm", {"prior": 0.75, "mu": 3.0, "sigma0": 2.0, "sigma1": 1.0})
BINARY = make_scenario("binary", {"p": 0.5, "q": 0.25})
SYM3 = make_scenario("symmetric-pair", {"m": 3, "p": 0.4})
E = math.e


def test_columns_are_in_the_schema():
    assert {"guarantee_eps", "guarantee_delta", "guarantee_kind"} <= set(COLUMN_NAMES)
    assert GUARANTEE_EPS == 1.0


def test_fields_by_hand():
    assert scenario_priors(GMM) == pytest.approx([0.25, 0.75])
    f = guarantee_fields(GMM, "map", 0.8)  # TV <= 4 * 0.25 * (0.8 - 0.25) = 0.55; Theorem 1(a)
    assert f == {"guarantee_eps": 1.0, "guarantee_delta": pytest.approx(0.55 / (1 - 1 / E)),
                 "guarantee_kind": "ip-tv"}
    # an estimate below the majority prior 0.75 is stated at it: TV <= 4 * 0.25 * 0.5 = 0.5
    assert guarantee_fields(GMM, "map", 0.74)["guarantee_delta"] == pytest.approx(0.5 / (1 - 1 / E))
    f = guarantee_fields(SYM3, "chi2", 0.1)
    by_hand = (0.1 / E) / ((1 / E - 1) ** 2 + 0.1) + (E * 0.1) / ((E - 1) ** 2 + 0.1)
    assert f["guarantee_delta"] == pytest.approx(by_hand) and f["guarantee_kind"] == "ip-chi2"
    f = guarantee_fields(GMM, "mi", 0.0)
    assert f["guarantee_delta"] == 0.0 and f["guarantee_kind"] == "ip-kl"


def test_no_guarantee_gives_nan_and_null():
    for sc, privacy, value in ((SYM3, "map", 0.6), (GMM, "mi", float("nan")), (GMM, "mi", -0.01)):
        f = guarantee_fields(sc, privacy, value)
        assert math.isnan(f["guarantee_eps"]) and math.isnan(f["guarantee_delta"]) and f["guarantee_kind"] is None


def run(capsys, *argv):
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def test_cli_guarantee_json_and_table(capsys):
    args = ["optimum", "binary", "--param", "p=0.5", "--param", "q=0.25", "--privacy", "map",
            "--observation", "full", "--budget", "0.1"]
    rc, out, err = run(capsys, *args, "--guarantee", "--json")
    assert rc == 0 and err == ""
    g = json.loads(out)["guarantee"]
    # equal priors: TV = 2 * 0.65 - 1 = 0.3 (the optimum 0.65 by GAP Theorem 1), delta = 0.3 / (1 - 1/e)
    assert g["level"] == pytest.approx(0.3, abs=1e-6) and g["delta"] == pytest.approx(0.3 / (1 - 1 / E), abs=1e-6)
    assert g["exact_ip_delta"] <= g["delta"] and g["exact_dp_delta"] <= g["dp_delta"] and g["dp_eps"] == 2.0
    assert g["joint_level"] == pytest.approx(0.3, abs=1e-6)  # the optimal channel's own TV
    rc, out, err = run(capsys, *args, "--guarantee", "--eps", "0.5")
    line = out.strip().splitlines()[-1]
    assert rc == 0 and line.strip().startswith("guarantee of the exact optimum: (0.5, ") and "DP" in line
    rc, out, _ = run(capsys, *args)
    assert "guarantee" not in out


def test_cli_refuses_where_no_guarantee_applies(capsys):
    rc, out, err = run(capsys, "optimum", "symmetric-pair", "--param", "m=3", "--param", "p=0.4", "--privacy",
                       "map", "--observation", "full", "--budget", "0.1", "--guarantee")
    assert rc == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "|S| = 3" in err and "use mi or chi2" in err
    with pytest.raises(SystemExit) as exc:
        main(["optimum", "binary", "--param", "p=0.5", "--param", "q=0.25", "--observation", "full",
              "--budget", "0.1", "--guarantee", "--eps", "inf"])
    assert exc.value.code == 2 and "--eps 'inf' must be finite" in capsys.readouterr().err


def test_parts_without_guarantee_columns_load_with_nan(tmp_path):
    import pyarrow.parquet as pq

    from privbench.bench.parts import DIGEST_KEY, content_digest
    from privbench.bench.store import ResultsDir, read_records

    store = ResultsDir(tmp_path)
    store.write([{"case_id": "a", "status": "ok", "leakage": 0.5, "budget": 0.1, "guarantee_delta": 0.25,
                  "guarantee_eps": 1.0, "guarantee_kind": "ip-kl"}], "k", "w")
    (part,) = sorted((tmp_path / "records").glob("*.parquet"))
    tab = pq.read_table(part)
    old = tab.drop_columns(["guarantee_eps", "guarantee_delta", "guarantee_kind"])
    old = old.replace_schema_metadata({DIGEST_KEY: content_digest(old)})  # a sealed part of before this change
    pq.write_table(old, part)
    df = read_records(tmp_path)
    assert list(df.columns) == COLUMN_NAMES and df.loc[0, "leakage"] == 0.5
    assert np.isnan(df.loc[0, "guarantee_delta"]) and df["guarantee_kind"].isna().all()
