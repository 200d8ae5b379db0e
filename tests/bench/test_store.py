"""The results store: atomic parts, one table, foreign/unwritable/corrupted directories, locks."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from privbench.bench.run import failure_rows
from privbench.bench.store import COLUMN_NAMES, MARKER, ResultsDir, export_csv, read_records, schema
from privbench.bench.suites import make_case
from privbench.datasets.errors import InputError


def _case(rep=0, budgets=(0.1, 0.3)):
    return make_case("s", "e", "symmetric-pair", {"m": 4, "p": 0.3}, "full", "mi", None, "identity", {},
                     list(budgets), rep=rep)


def _rows(case, status="failed", run="r1", leakage=None):
    rows = failure_rows(case, status, "boom")
    for r in rows:
        r["run_id"] = run
        if leakage is not None:
            r.update(status="ok", error=None, leakage=leakage)
    return rows


def test_write_then_read_one_long_table(tmp_path):
    store = ResultsDir(tmp_path / "res")
    for rep in range(3):
        c = _case(rep)
        store.write(_rows(c, leakage=0.1 * rep), c.key, "r1")
    df = read_records(tmp_path / "res")
    assert list(df.columns) == COLUMN_NAMES
    assert len(df) == 6 and df["case_id"].is_unique
    assert sorted(df["leakage"].round(6).unique()) == [0.0, 0.1, 0.2]
    assert (tmp_path / "res" / MARKER).is_file()
    assert not [p for p in (tmp_path / "res" / "records").iterdir() if p.name.startswith(".")]
    # the parts also read as one parquet dataset with outside tools
    import pandas as pd

    assert len(pd.read_parquet(tmp_path / "res" / "records")) == 6


def test_csv_export(tmp_path):
    store = ResultsDir(tmp_path)
    c = _case()
    store.write(_rows(c), c.key, "r1")
    path = export_csv(tmp_path, tmp_path / "out.csv")
    lines = path.read_text().splitlines()
    assert lines[0].split(",")[:3] == COLUMN_NAMES[:3] and len(lines) == 3


def test_ok_attempt_supersedes_a_failed_one(tmp_path):
    store = ResultsDir(tmp_path)
    c = _case()
    store.write(_rows(c, "timeout", "r1"), c.key, "r1")
    store.write(_rows(c, run="r2", leakage=0.5), c.key, "r2")
    df = read_records(tmp_path)
    assert len(df) == 2 and set(df["status"]) == {"ok"}
    assert len(read_records(tmp_path, all_attempts=True)) == 4
    assert set(store.statuses().values()) == {"ok"}


def test_foreign_file_and_unwritable_directories(tmp_path):
    (tmp_path / "foreign").mkdir()
    (tmp_path / "foreign" / "thesis.tex").write_text("x")
    with pytest.raises(InputError, match="not a privbench results directory .*thesis.tex"):
        ResultsDir(tmp_path / "foreign")
    (tmp_path / "afile").write_text("x")
    with pytest.raises(InputError, match="is a file"):
        ResultsDir(tmp_path / "afile")
    with pytest.raises(InputError, match="cannot write to results directory"):
        ResultsDir(tmp_path / "afile" / "sub")
    (tmp_path / "badmarker").mkdir()
    (tmp_path / "badmarker" / MARKER).write_text("{not json")
    with pytest.raises(InputError, match="corrupted"):
        ResultsDir(tmp_path / "badmarker")
    # an empty existing directory is fine
    (tmp_path / "empty").mkdir()
    ResultsDir(tmp_path / "empty")
    assert (tmp_path / "empty" / MARKER).is_file()


def test_corrupted_part_is_named_never_dropped(tmp_path):
    store = ResultsDir(tmp_path)
    c = _case()
    good = store.write(_rows(c), c.key, "r1")
    bad = tmp_path / "records" / "part-deadbeef-r9.parquet"
    bad.write_bytes(good.read_bytes()[: len(good.read_bytes()) // 2])
    with pytest.raises(InputError, match="part-deadbeef-r9.parquet' is corrupted") as info:
        read_records(tmp_path)
    assert "\n" not in str(info.value)
    with pytest.raises(InputError, match="corrupted"):
        store.statuses()
    assert good.is_file() and bad.is_file()  # nothing deleted


def test_claims_exclude_each_other_until_released(tmp_path):
    store = ResultsDir(tmp_path)
    first = store.claim("abc")
    assert first is not None
    assert store.claim("abc") is None
    code = ("import sys; from privbench.bench.store import ResultsDir; "
            "print(ResultsDir(sys.argv[1]).claim('abc') is None)")
    other = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, check=True)
    assert other.stdout.strip() == "True"
    first.release()
    again = store.claim("abc")
    assert again is not None
    again.release()


def test_stale_temporaries_of_dead_processes_are_cleaned(tmp_path):
    store = ResultsDir(tmp_path)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale = tmp_path / "records" / f".tmp-{dead.pid}-x.parquet"
    live = tmp_path / "records" / f".tmp-{os.getpid()}-y.parquet"
    stale.write_bytes(b"half")
    live.write_bytes(b"half")
    assert store.clean_stale_temporaries() == 1
    assert not stale.exists() and live.exists()
    assert read_records(tmp_path).empty  # temporaries are never read


def test_concurrent_writers_do_not_clobber(tmp_path):
    """Four processes write 25 parts each into one directory at once: all 200 rows are there."""
    script = textwrap.dedent("""
        import sys
        from privbench.bench.store import ResultsDir
        w = int(sys.argv[2])
        store = ResultsDir(sys.argv[1])
        for i in range(25):
            rows = [{"case_id": f"{w}-{i}-{b}", "status": "ok", "budget": b, "run_id": f"w{w}",
                     "finished_at": "x"} for b in (0.1, 0.3)]
            store.write(rows, f"k{w}x{i}", f"w{w}")
    """)
    procs = [subprocess.Popen([sys.executable, "-c", script, str(tmp_path / "res"), str(w)]) for w in range(4)]
    assert [p.wait(timeout=120) for p in procs] == [0, 0, 0, 0]
    df = read_records(tmp_path / "res", all_attempts=True)
    assert len(df) == 200 and df["case_id"].is_unique
    assert sorted(df["run_id"].value_counts().tolist()) == [50, 50, 50, 50]


def test_parts_from_an_older_schema_read_with_nulls_and_foreign_parquet_is_refused(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    store = ResultsDir(tmp_path)
    # a part of the first store schema (before evaluators, protocol and mechanism_info existed)
    later = {"evaluators", "protocol", "mechanism_info", "mechanism_file", "leakage_spread", "evaluators_disagree"}
    first = {name: pa.nulls(1, schema().field(name).type) for name in COLUMN_NAMES if name not in later}
    first.update(case_id=pa.array(["a"]), status=pa.array(["ok"]), leakage=pa.array([0.5]))
    # a part of the sealed era (it has mechanism_file) without its seal: the seal was damaged
    sealed_era = {**first, "mechanism_file": pa.nulls(1, pa.string())}
    pq.write_table(pa.table(sealed_era), tmp_path / "records" / "part-old-r0.parquet")
    with pytest.raises(InputError, match="digest is missing"):
        read_records(tmp_path)
    pq.write_table(pa.table(first), tmp_path / "records" / "part-old-r0.parquet")
    df = read_records(tmp_path)
    assert list(df.columns) == COLUMN_NAMES and df.loc[0, "leakage"] == 0.5 and df["evaluators"].isna().all()
    # a part holding only case_id, status, budget is no privbench part (report and check need the rest)
    thin = tmp_path / "records" / "part-thin-r0.parquet"
    pq.write_table(pa.table({"case_id": ["b"], "status": ["ok"], "budget": [0.1]}), thin)
    with pytest.raises(InputError, match="part-thin-r0.parquet' is not a privbench part"):
        read_records(tmp_path)
    thin.unlink()
    pq.write_table(pa.table({"x": [1]}), tmp_path / "records" / "part-x-r0.parquet")
    with pytest.raises(InputError, match="part-x-r0.parquet' is not a privbench part"):
        store.statuses()
