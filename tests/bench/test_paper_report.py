"""The paper report's sections are named in the suite YAML, and a bad suite file is an error, not a fallback."""

import pandas as pd
import pytest

from privbench.bench.reports import suite_metadata
from privbench.bench.reports.sections import SECTIONS
from privbench.datasets.errors import InputError


def _records(suite: str) -> pd.DataFrame:
    return pd.DataFrame({"suite": [suite]})


def test_the_shipped_paper_suite_names_only_known_sections():
    name, meta, order = suite_metadata(_records("paper-smoke"))
    assert name == "paper-smoke" and order and set(order) == set(meta)
    named = {s for block in meta.values() for s in block.get("sections", [])}
    assert named == set(SECTIONS)  # every section kind is used, and only those
    assert meta["gap-tables"]["sections"] == ["gap-table"]


def test_an_ad_hoc_run_has_no_paper_metadata():
    assert suite_metadata(_records("adhoc")) == ("adhoc", {}, [])


@pytest.mark.parametrize("paper, match", [
    ("{figure: x, sections: [no-such-section]}", "no-such-section"),
    ("{sections: gap-table}", "not a list"),
    ("just a string", "must be a mapping"),
])
def test_a_bad_paper_block_names_the_experiment_and_the_allowed_sections(tmp_path, paper, match):
    f = tmp_path / "mine.yaml"
    f.write_text(f"experiments:\n  - name: exp-one\n    scenario: binary\n    paper: {paper}\n")
    with pytest.raises(InputError, match=match) as err:
        suite_metadata(_records(str(f)))
    assert "exp-one" in str(err.value) and "gap-table" in str(err.value)


def test_an_unparsable_suite_file_is_an_error_not_the_generic_report(tmp_path):
    f = tmp_path / "broken.yaml"
    f.write_text("experiments: [\n  - {name: a\n")
    with pytest.raises(InputError, match="cannot be read"):
        suite_metadata(_records(str(f)))


def test_gap_table_band_comes_from_the_certified_table():
    from privbench.bench.reports.sections.gap_tables import certified_band
    from privbench.theory.mixture.stored import stored_sandwich

    sid = "binary-gmm-prior0.75-mu3-s02-s11"  # the mismatch scenario, GAP's fourth dataset
    row = stored_sandwich(sid, 3.0, "map", "full")
    assert row is not None and row["lower"] <= row["upper"]
    assert certified_band(sid, 3.0, "full") == f"[{row['lower']:.4f}, {row['upper']:.4f}]"
    assert certified_band(sid, 3.5, "full") == ""  # not in the table: left blank, never solved here
