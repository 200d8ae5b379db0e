"""``privbench check``: regression-test a learner against stored baselines, or write them."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from privbench.bench.cli.common import DEVICES, EXIT_CHECK_FAILED, command_line, count_type, param
from privbench.datasets.errors import InputError
from privbench.datasets.limits import MAX_JOBS, MAX_THREADS


def add_check(sub: Any) -> None:
    """Add the ``check`` command to the sub-parsers ``sub``."""
    chk = sub.add_parser("check", help="regression-test a learner against stored baselines (exit 1 on regression)",
                         description="Run a suite with LEARNER in place of the suite's learners (every experiment "
                                     "it serves) and compare each point's mean strict gap with the suite's baselines "
                                     "(shipped with privbench for the shipped suites). Exit 0: all within tolerance; "
                                     "1: a regression (listed); 2: bad input.")
    chk.add_argument("--learner", metavar="NAME|module:Class", help="learner to check (registered or module:Class)")
    chk.add_argument("--learner-param", type=param, action="append", default=[], metavar="NAME=VALUE",
                     help="hyper-parameter of the checked learner (repeatable; see 'privbench list learners')")
    chk.add_argument("--suite", default="regression", help="suite to run (default: regression)")
    chk.add_argument("--baselines", metavar="FILE", help="baseline file (default: the shipped baselines of a shipped suite, found "
                                                         "from any directory; else results/baselines/SUITE.json under "
                                                         "the working directory)")
    chk.add_argument("--out", metavar="DIR", help="keep the run's results here (default: a temporary directory)")
    chk.add_argument("--resume", action="store_true", help="continue a run in --out")
    chk.add_argument("--jobs", type=count_type("--jobs", 1, MAX_JOBS), default=None, metavar="N",
                     help="parallel worker processes (default: the CPU cores available)")
    chk.add_argument("--threads", type=count_type("--threads", 1, MAX_THREADS), default=None, metavar="N",
                     help="torch threads per worker process (default 1)")
    chk.add_argument("--device", choices=DEVICES, default="cpu",
                     help="where the learner trains (default cpu, as the baselines were made)")
    chk.add_argument("--write-baselines", action="store_true",
                     help="instead of checking: run the suite's own learners and write the baseline file")
    chk.set_defaults(func=cmd_check)


def cmd_check(args: argparse.Namespace) -> int:
    """Run the suite; write baselines, or compare with them (exit 1 on a regression)."""
    from privbench.bench.check import (check_against, default_baseline_file, make_baselines, read_baselines,
                                       write_baselines)
    from privbench.bench.run import run_cases
    from privbench.bench.store import read_records
    from privbench.bench.suites.case import skip_lines

    command = command_line(sys.argv)
    suite = checked_suite(args)
    if not args.write_baselines:  # the suite's own learners skip by design (``learners: all``)
        for line in skip_lines(suite.skipped):
            print(f"skipped: {line}")
    from privbench.bench.suites import packaged_suites

    shipped = args.suite in packaged_suites()  # a name, not a path to a YAML file
    baseline_file = Path(args.baselines) if args.baselines else default_baseline_file(suite.name, shipped)
    baselines = None if args.write_baselines else read_baselines(baseline_file)
    with tempfile.TemporaryDirectory(prefix="privbench-check-") as tmp:
        out = args.out or os.path.join(tmp, "run")
        summary = run_cases(suite.cases, out, suite=suite.name, jobs=args.jobs, device=args.device,
                            timeout=suite.timeout, resume=args.resume, command=command, threads=args.threads)
        print(summary.line())
        df = read_records(out)
        ids = {i for case in suite.cases for i in case.case_ids()}
        df = df[df["case_id"].isin(ids)]  # --resume into a directory holding other learners' rows
    if args.write_baselines:
        path = write_baselines(make_baselines(df, suite.name, command), baseline_file)
        print(f"wrote {path}")
        return 0
    failures, notes, checked = check_against(df, baselines)  # type: ignore[arg-type]
    for line in notes:
        print(f"note: {line}")
    for line in failures:
        print(f"REGRESSION: {line}")
    skipped = "" if not suite.skipped else (f"; {suite.skipped_experiments()} experiment(s) skipped "
                                            f"({len(suite.skipped)} tasks the learner does not serve: not run, "
                                            "not regressions)")
    print(f"{checked} points checked against {baseline_file}: {len(failures)} regression(s){skipped}")
    if not checked and not failures:
        print(f"FAILED: no point of this run has a baseline in {baseline_file}: a check that checked nothing "
              "does not pass", file=sys.stderr)
        return EXIT_CHECK_FAILED
    return EXIT_CHECK_FAILED if failures else 0


def checked_suite(args: argparse.Namespace) -> Any:
    """The suite with its own learners (``--write-baselines``) or with ``--learner`` in their place."""
    from privbench.bench.suites import load_suite

    if args.write_baselines:
        if args.learner:
            raise InputError("--write-baselines uses the suite's own learners; drop --learner")
        suite = load_suite(args.suite)
    else:
        if not args.learner:
            raise InputError("privbench check needs --learner NAME or module:Class (or --write-baselines)")
        if ":" in args.learner and os.getcwd() not in sys.path:
            sys.path.append(os.getcwd())
        suite = load_suite(args.suite, learners={args.learner: dict(args.learner_param)})
    if not suite.cases:
        raise InputError(f"learner {args.learner!r} serves no experiment of suite {args.suite!r}")
    return suite
