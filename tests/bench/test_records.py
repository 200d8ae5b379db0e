"""The Record type (the store schema in one place) and the harness's registries."""

import math
import pickle

import pytest

from privbench.bench.backends import BACKENDS
from privbench.bench.protocols import PROTOCOLS
from privbench.bench.records import COLUMN_NAMES, Record, failure_rows
from privbench.bench.store import schema
from privbench.bench.suites import make_case
from privbench.datasets.vocabulary import PROTOCOLS as PROTOCOL_NAMES


def _case():
    return make_case("t", "e", "symmetric-pair", {"m": 3, "p": 0.2}, "useful", "mi", None, "identity", {},
                     [0.1, 0.3], 0, 100, 200)


def test_a_record_refuses_a_column_the_store_does_not_have():
    rec = Record.base(_case(), 0.1)
    with pytest.raises(KeyError, match="leakge"):
        rec["leakge"] = 0.5
    with pytest.raises(KeyError, match="gapp"):
        rec.update(gapp=1.0)
    with pytest.raises(KeyError, match="wall_time"):
        Record(wall_time=1.0)


def test_row_has_every_column_in_schema_order_and_pickles_as_a_record():
    rec = Record.base(_case(), 0.3)
    rec.update(status="ok", leakage=0.25)
    row = rec.row()
    assert list(row) == COLUMN_NAMES == schema().names
    assert row["budget"] == 0.3 and row["leakage"] == 0.25 and row["gap"] is None
    back = pickle.loads(pickle.dumps(rec))
    assert type(back) is Record and back == rec


def test_failure_rows_are_records_one_per_budget():
    rows = failure_rows(_case(), "timeout", "exceeded", wall=4.0)
    assert [type(r) for r in rows] == [Record, Record]
    assert [r["budget"] for r in rows] == [0.1, 0.3]
    assert all(r["status"] == "timeout" and math.isclose(r["wall_time_s"], 2.0) for r in rows)
    assert rows[0]["case_id"] != rows[1]["case_id"]


def test_every_protocol_a_suite_may_name_has_a_runner_and_backends_are_named():
    assert set(PROTOCOLS) == set(PROTOCOL_NAMES)
    assert set(BACKENDS) == {"local", "dask"}
