"""scripts/paper_rerun.py (one experiment of a full run refreshed) and the report stamp's commits by experiment."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from privbench.bench.reports.overview import commits_by_experiment, stamp
from privbench.datasets.errors import InputError

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "paper_rerun.py"


@pytest.fixture(scope="module")
def rerun():
    spec = importlib.util.spec_from_file_location("paper_rerun", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def fake_run(root: Path, parts: dict[str, list[str]]) -> Path:
    """A results directory whose part ``key`` holds one row per experiment named, and a mechanism folder each."""
    (root / "records").mkdir(parents=True)
    (root / "runs").mkdir()
    (root / "privbench-results.json").write_text(json.dumps({"format": "privbench-results/1"}))
    (root / "runs" / "r1.json").write_text("{}")
    for key, exps in parts.items():
        pq.write_table(pa.table({"experiment": exps}), root / "records" / f"part-{key}-r1.parquet")
        (root / "mechanisms" / f"{key}-r1").mkdir(parents=True)
        (root / "mechanisms" / f"{key}-r1" / "budget-0.pt").write_bytes(key.encode())
    return root


def test_split_keeps_every_part_but_the_selected_experiments(rerun, tmp_path):
    src = fake_run(tmp_path / "src", {"a": ["gap-fig5/p0.5"] * 2, "b": ["ppan-fig4"], "c": ["gap-fig5/p0.5"],
                                      "d": ["ppan-fig5/full"]})
    before = sorted(p.name for p in src.rglob("*"))
    kept, left = rerun.split_records(src, tmp_path / "new", {"gap-fig5/p0.5", "ppan-fig5/full"}, mechanisms="link")
    assert (kept, left) == (1, 3)
    assert sorted(p.name for p in (tmp_path / "new" / "records").iterdir()) == ["part-b-r1.parquet"]
    assert (tmp_path / "new" / "runs" / "r1.json").is_file()
    assert (tmp_path / "new" / "privbench-results.json").is_file()
    assert sorted(p.name for p in (tmp_path / "new" / "mechanisms").iterdir()) == ["b-r1"]
    assert (tmp_path / "new" / "mechanisms" / "b-r1" / "budget-0.pt").read_bytes() == b"b"
    assert sorted(p.name for p in src.rglob("*")) == before  # the source is only read


def test_split_without_mechanisms_and_into_a_non_empty_directory(rerun, tmp_path):
    src = fake_run(tmp_path / "src", {"a": ["ppan-fig4"]})
    assert rerun.split_records(src, tmp_path / "new", {"gap-tables"}) == (1, 0)
    assert not (tmp_path / "new" / "mechanisms").exists()
    with pytest.raises(InputError, match="not empty"):
        rerun.split_records(src, tmp_path / "new", {"gap-tables"})
    with pytest.raises(InputError, match="not a privbench results directory"):
        rerun.split_records(tmp_path / "new" / "records", tmp_path / "other", {"gap-tables"})


def test_only_selects_as_privbench_run_does(rerun):
    assert rerun.selected_experiments(["ppan-fig5"]) == ["ppan-fig5/full", "ppan-fig5/useful"]
    assert rerun.selected_experiments(["gap-tables"]) == ["gap-tables"]
    with pytest.raises(InputError, match="no-such-experiment"):
        rerun.selected_experiments(["no-such-experiment"])


def test_stamp_names_each_experiments_commit_only_when_they_differ():
    one = pd.DataFrame({"experiment": ["x", "y"], "git_commit": ["a" * 40, "a" * 40], "privbench_version": "0"})
    assert commits_by_experiment(one) == ""
    two = pd.DataFrame({"experiment": ["x", "y", "z", "z"], "git_commit": ["a" * 40, "b" * 40, "a" * 40, "b" * 40],
                        "privbench_version": "0"})
    assert commits_by_experiment(two) == f"; experiments by commit: `{'a' * 12}`: x, z; `{'b' * 12}`: y, z"
    assert f"`{'b' * 12}`: y, z." in stamp(two)
