"""The certified table's driver: resume, parallel rows, the width filter and the checked merge.

The sandwich itself is replaced by a fake here (a real row takes minutes); what is tested is
which rows are solved, how they are written and when a merge is refused.
"""

from __future__ import annotations

import csv
import multiprocessing

import pytest

from privbench.datasets import InputError
from privbench.theory.mixture import table
from privbench.theory.mixture.stored import stored_rows


def _fake_sandwich(sc, budget, privacy, observation, **kwargs):
    lower = 0.1 / budget
    return {"lower": lower, "upper": lower + 1e-4, "width": 1e-4, "converged": True, "level": 2,
            "seconds": 0.0, "upper_distortion": budget, "far_mass": 0.0, "lower_program": observation,
            "errors": []}


@pytest.fixture
def fake(monkeypatch):
    monkeypatch.setattr(table, "certified_sandwich", _fake_sandwich)
    monkeypatch.setattr(table, "mixture_optimum", lambda sc, budget, family: type("O", (), {"value": 0.9})())


def _rows(path):
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def test_useful_rows_refine_the_achievable_end_at_the_last_level_and_the_relaxation_as_full_rows_do():
    # with the second-order coupling (theory.mixture.taylor) the useful relaxation keeps cells 0.4 and
    # halves its bins, as the full one does
    full, useful = table.TABLE_LEVELS["full"], table.TABLE_LEVELS["useful"]
    assert full[-1][:2] == (None, None)
    assert useful[-1][:2] == (0.05, 0.05)
    assert useful[:-1] == full[:-1]
    for f, u in zip(full, useful):
        assert u[2:] == f[2:]


@pytest.mark.parametrize("jobs", [1, 2])
def test_only_rows_wider_than_asked_are_solved_and_a_second_run_resumes(fake, tmp_path, jobs):
    if jobs > 1 and multiprocessing.get_start_method() != "fork":
        pytest.skip("the fake reaches the workers only when they are forked")
    out = tmp_path / "new.csv"
    # a threshold that picks some rows but not all (the trivial rows at large budgets are narrower)
    args = [str(out), "--observation", "useful", "--privacy", "mi", "--wider-than", "1e-5", "--jobs", str(jobs)]
    assert table.main(args) == 0
    wide = {k for k, r in stored_rows().items() if k[1:3] == ("useful", "mi") and float(r["width"]) > 1e-5}
    assert 0 < len(wide) < 36
    got = {(r["scenario_id"], r["observation"], r["privacy"], float(r["budget"])) for r in _rows(out)}
    assert got == wide and len(_rows(out)) == len(wide)
    assert table.main(args) == 0  # resumes: nothing left to solve, nothing written twice
    assert len(_rows(out)) == len(wide)


def _write(path, rows):
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=table.COLUMNS)
        w.writeheader()
        w.writerows({c: r.get(c, "") for c in table.COLUMNS} for r in rows)


def test_a_merge_keeps_the_better_end_of_each_row_and_refuses_bands_that_miss(tmp_path):
    committed, new = tmp_path / "table.csv", tmp_path / "new.csv"
    rows = [{**r, "scenario_id": k[0]} for k, r in list(stored_rows().items())[:3]]
    _write(committed, rows)
    lo1, up1 = float(rows[1]["lower"]), float(rows[1]["upper"])
    mid = (lo1 + up1) / 2
    # row 1: a higher lower end and a worse (higher) achievable end; row 2: only a better achievable end
    _write(new, [{**rows[1], "lower": f"{mid:.9f}", "upper": f"{up1 + 0.01:.9f}", "lower_program": "useful",
                  "upper_distortion": "9", "seconds": "1.0"},
                 {**rows[2], "lower": f"{float(rows[2]['lower']) - 0.01:.9f}", "upper": rows[2]["lower"],
                  "upper_distortion": "7", "seconds": "2.0"}])
    assert table.merge_rows(str(new), str(committed)) == 2
    after = _rows(committed)
    assert after[0] == {c: rows[0].get(c, "") for c in table.COLUMNS}
    assert (after[1]["lower"], after[1]["upper"]) == (f"{mid:.9f}", rows[1]["upper"])
    assert after[1]["lower_program"] == "useful" and after[1]["upper_distortion"] == rows[1]["upper_distortion"]
    assert float(after[1]["width"]) == pytest.approx(up1 - mid, rel=1e-3)
    assert (after[2]["lower"], after[2]["upper"], after[2]["upper_distortion"]) == (rows[2]["lower"],) * 2 + ("7",)
    assert after[2]["converged"] == "True" and after[2]["seconds"] == "2.0"
    before = committed.read_text()
    _write(new, [{**rows[0], "lower": f"{float(rows[0]['upper']) + 0.01:.9f}",
                  "upper": f"{float(rows[0]['upper']) + 0.02:.9f}"}])
    with pytest.raises(InputError, match="misses the old one"):
        table.merge_rows(str(new), str(committed))
    assert committed.read_text() == before


def test_bad_input_is_one_line_and_writes_nothing(tmp_path, capsys):
    out = tmp_path / "new.csv"
    for bad in (["--jobs", "0"], ["--max-rows", "-1"], ["--merge-into", str(tmp_path / "missing.csv")], ["--dataset", "7"]):
        with pytest.raises(SystemExit) as exc:
            table.main([str(out), *bad])
        assert exc.value.code == 2
        err = capsys.readouterr().err.strip().splitlines()[-1]
        assert bad[1] in err or repr(bad[1]) in err
        assert not out.exists()
    with pytest.raises(InputError, match="does not exist"):
        table.merge_rows(str(out), str(tmp_path / "missing.csv"))
