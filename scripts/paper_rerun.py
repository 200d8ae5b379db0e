"""Refresh one experiment (or a few) of a full paper run, keep every other experiment's records.

    python scripts/paper_rerun.py SRC NEWDIR --only EXP [--only EXP2 ...] [--jobs 2]
        [--report results/paper] [--mechanisms none|link|copy] [-- EXTRA privbench run ARGS]

1. NEWDIR (new or empty) gets SRC's marker, its run manifests (``runs/*.json``) and every
   record part (``records/part-*.parquet``) except the parts of the selected experiments
   (``--only`` selects as ``privbench run --only`` does: ``ppan-fig5`` also selects
   ``ppan-fig5/useful`` and ``ppan-fig5/full``).  Mechanism files are not needed by the
   report: ``--mechanisms none`` (default) leaves them behind, ``link`` hard-links the kept
   cases' folders of ``SRC/mechanisms`` (same file system), ``copy`` copies them.
2. ``privbench run --suite paper --only EXP ... --out NEWDIR --resume --jobs N`` computes the
   selected experiments again with this checkout's code (arguments after ``--`` are passed on,
   e.g. ``-- --seeds 1`` for a cheap try; the suite's seeds otherwise).
3. With ``--report DIR``: ``DIR/figures`` is emptied (no figure of an earlier build is left) and
   ``privbench report NEWDIR --markdown DIR/report.md --html DIR/report.html`` rebuilds it.  The
   report's first line names the commit of every experiment's records where they come from more
   than one commit; this script prints the same (experiment -> commits) at the end.

Run everything CPU-bound under ``nice -n 19`` on a shared machine.  SRC is only read.  For the
committed report put NEWDIR under ``results/runs/`` (git-ignored): the report's first line quotes the
``privbench report`` command, and a path outside the repository does not belong there, e.g.

    nice -n 19 python scripts/paper_rerun.py results/runs/paper results/runs/paper-refresh \\
        --only filter-adult --report results/paper

(SRC may lie anywhere: only NEWDIR appears in the report.)
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

MARKER = "privbench-results.json"


def selected_experiments(only: list[str], suite: str = "paper") -> list[str]:
    """The experiments of ``suite`` that ``--only`` names (InputError for a name that selects nothing)."""
    from privbench.bench.suites import load_suite
    from privbench.bench.suites.smoke import select_experiments

    sel = select_experiments(load_suite(suite), only)
    return sorted({c.experiment for c in sel.cases} | {s.experiment for s in sel.skipped})


def part_experiments(part: Path) -> set[str]:
    """The experiments whose rows a record part holds."""
    import pyarrow.parquet as pq

    return set(pq.read_table(part, columns=["experiment"]).column("experiment").to_pylist())


def split_records(src: Path, dst: Path, drop: set[str], mechanisms: str = "none") -> tuple[int, int]:
    """Copy SRC's marker, run manifests and the record parts holding none of ``drop`` into DST.

    Returns (parts kept, parts left out).  DST must be new or empty; SRC is only read.
    """
    from privbench.datasets.errors import InputError

    if not (src / MARKER).is_file() or not (src / "records").is_dir():
        raise InputError(f"{str(src)!r} is not a privbench results directory (no {MARKER} or records/)")
    if dst.exists() and any(dst.iterdir()):
        raise InputError(f"{str(dst)!r} is not empty: choose a new directory for the refreshed run")
    for sub in ("records", "runs", "claims"):
        (dst / sub).mkdir(parents=True, exist_ok=True)
    shutil.copy2(src / MARKER, dst / MARKER)
    for run in sorted((src / "runs").glob("*.json")):
        shutil.copy2(run, dst / "runs" / run.name)
    kept = left = 0
    for part in sorted((src / "records").glob("part-*.parquet")):
        if part_experiments(part) & drop:
            left += 1
            continue
        shutil.copy2(part, dst / "records" / part.name)
        kept += 1
        mech = src / "mechanisms" / part.stem.removeprefix("part-")
        if mechanisms != "none" and mech.is_dir():
            copy = os.link if mechanisms == "link" else shutil.copy2
            shutil.copytree(mech, dst / "mechanisms" / mech.name, copy_function=copy)
    return kept, left


def experiment_commits(results: Path) -> dict[str, list[str]]:
    """experiment -> the commits (12 hex digits) its stored rows were computed at."""
    from privbench.bench.store import read_records

    df = read_records(results)
    return {str(e): sorted({str(c)[:12] for c in g["git_commit"].dropna()})
            for e, g in df.groupby("experiment", sort=True)}


def rebuild_report(results: Path, report: Path) -> None:
    """Empty ``report/figures`` and write ``report/report.md`` (+ figures) and ``report/report.html``."""
    shutil.rmtree(report / "figures", ignore_errors=True)
    report.mkdir(parents=True, exist_ok=True)
    subprocess.run([privbench(), "report", str(results), "--markdown", str(report / "report.md"),
                    "--html", str(report / "report.html")], check=True)


def privbench() -> str:
    """The privbench command beside this interpreter (the checkout's virtual environment), else on PATH."""
    here = Path(sys.executable).with_name("privbench")
    return str(here) if here.exists() else "privbench"


def main(argv: list[str] | None = None) -> int:
    from privbench.datasets.errors import InputError

    argv = list(sys.argv[1:] if argv is None else argv)
    extra = argv[argv.index("--") + 1:] if "--" in argv else []
    argv = argv[:argv.index("--")] if "--" in argv else argv
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("src", type=Path, help="results directory of the full run (only read)")
    ap.add_argument("newdir", type=Path, help="new results directory: SRC's records with EXP recomputed")
    ap.add_argument("--only", action="append", required=True, metavar="EXP", help="experiment to recompute")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--report", type=Path, metavar="DIR", help="rebuild the report into DIR (e.g. results/paper)")
    ap.add_argument("--mechanisms", choices=("none", "link", "copy"), default="none")
    args = ap.parse_args(argv)
    try:
        exps = selected_experiments(args.only)
        kept, left = split_records(args.src, args.newdir, set(exps), args.mechanisms)
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"{kept} parts kept, {left} left out ({', '.join(exps)}); recomputing them", flush=True)
    cmd = [privbench(), "run", "--suite", "paper", *[a for e in args.only for a in ("--only", e)],
           "--out", str(args.newdir), "--resume", "--jobs", str(args.jobs), *extra]
    subprocess.run(cmd, check=True)
    if args.report is not None:
        rebuild_report(args.newdir, args.report)
    for exp, commits in experiment_commits(args.newdir).items():
        print(f"{exp}: {', '.join(commits)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
